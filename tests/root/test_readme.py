"""Every snippet of README.md and of the docs (docs/*.md, docs/lab-notes/*.md, SECURITY.md, CONTRIBUTING.md)
that is code runs as written: the magic lines and cells in a real kernel, the Python blocks, and each
command line parsed by its subcommand's own parser. Docs and code cannot drift apart (a `%%fixloop
--api-base` the magic did not take was issue #30's first item); docs/options.md is the traits' own text."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from fake_model import FakeModelServer
from kernel import UserKernel
from packaging.requirements import Requirement
from traitlets.config import Config

from jupyter_fixloop import cli
from jupyter_fixloop.config import FixLoop
from jupyter_fixloop.kernel import wire
from jupyter_fixloop.notebook.magic import FixLoopMagics

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "SECURITY.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
TEXTS = {page.relative_to(ROOT).as_posix(): page.read_text(encoding="utf-8") for page in PAGES}
README = TEXTS["README.md"]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
PLACEHOLDERS = {"NAME": "max_rounds"}  # `%fixloop config NAME`: a setting's name


def fenced(lang: str, texts: tuple[str, ...] = tuple(TEXTS.values())) -> list[str]:
    return [body for text in texts for found, body in FENCE.findall(text) if found == lang]


def spans() -> list[str]:
    """Inline code spans outside fenced blocks, a span wrapped over two lines joined again."""
    found = []
    for text in TEXTS.values():
        text = FENCE.sub("", text)
        found += [" ".join(s.split()) for s in re.findall(r"`([^`\n]+(?:\n[^`\n]+)?)`", text)]
    return found


def magic_lines(prefix: str) -> list[str]:
    lines = [s for s in spans() if s == prefix or s.startswith(prefix + " ")]
    lines += [b.splitlines()[0] for b in fenced("") if b.startswith(prefix + " ") or b.strip() == prefix]
    return [line for line in dict.fromkeys(lines) if "..." not in line.split()]  # `%fixloop ...` describes


def command_lines() -> list[list[str]]:
    """Each `jupyter-fixloop ...` (or `jupyter fixloop ...`) command the docs give, as argv after the
    program; synopses with [optional] parts and elisions (`...`) are descriptions, not commands."""
    found = []
    texts = [line for block in fenced("bash") for line in block.replace("\\\n", " ").splitlines()] + spans()
    for text in texts:
        text = text.split("#")[0] if text.lstrip().startswith(("llama", "ollama", "vllm", "OPENAI", "jupyter",
                                                               "python", "pip")) else text
        for part in text.split("&&"):
            if not re.search(r"jupyter[- ]fixloop", part):
                continue  # not a command of ours (JSON, Python, another tool's line)
            words = shlex.split(part)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words.pop(0)  # VAR=value before the command
            if words[:2] == ["jupyter", "fixloop"]:
                words = ["jupyter-fixloop", *words[2:]]
            if len(words) >= 2 and words[0] == "jupyter-fixloop" and not any("[" in w or w == "..." for w in words):
                found.append(words[1:])
    return found


# ---------------------------------------------------------------- the lists are not empty by accident


def test_the_docs_have_the_snippets_this_file_runs():
    assert "%%fixloop --model openai/qwen2.5-coder-1.5b --api-base http://127.0.0.1:8080/v1" in magic_lines("%%fixloop")
    assert len(fenced("python")) >= 3
    assert ["demo"] in command_lines() and any(argv[0] == "run" for argv in command_lines())
    assert any(argv[:2] == ["bench", "--notebooks"] for argv in command_lines())


def test_the_readme_is_short_and_gives_the_set_up_commands_and_both_first_cells():
    assert len(README.splitlines()) <= 200, "README.md is for a newcomer's five minutes: move detail to docs/"
    bash = fenced("bash", (README,))
    assert "python -m pip install -e . pandas && jupyter-fixloop demo" in [b.strip() for b in bash]
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in [b.strip() for b in bash], "`.ci/run` runs exactly the README's test command"
    cells = [b.splitlines()[0] for b in fenced("", (README,)) if b.startswith("%%fixloop")]
    assert "%%fixloop" in cells and any(line.startswith("%%fixloop --expect ") for line in cells)


def test_every_relative_link_of_the_docs_leads_to_a_file():
    for name, text in TEXTS.items():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not re.match(r"[a-z]+:", target):
                assert (ROOT / name).parent.joinpath(target).exists(), f"{name} links to {target}, which is not there"


def test_docs_options_md_is_the_text_of_the_fixloop_traits():
    made = subprocess.run([sys.executable, "-m", "jupyter_fixloop.config", "--markdown"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert TEXTS["docs/options.md"] == made.stdout, (
        "docs/options.md is stale: run `python -m jupyter_fixloop.config --markdown > docs/options.md`")
    for name in FixLoop.class_trait_names(config=True):
        assert f"## `FixLoop.{name}`" in made.stdout


def test_the_architecture_page_lists_every_entry_of_the_kernel_wire():
    row = r"^\| `([\w.]+)` \| `kernel/(\w+)\.py` \| `(\w+)` \| (yes|no) \|"
    rows = re.findall(row, TEXTS["docs/architecture.md"], re.M)
    table = {entry: (module, name, encoded == "yes") for entry, module, name, encoded in rows}
    assert table == wire.ENTRIES, "docs/architecture.md's table of the kernel wire differs from wire.ENTRIES"


# ---------------------------------------------------------------- command lines


BENCHES = {"--generation": "fixloop_bench.generation", "--causes": "fixloop_bench.causes",
           "--notebooks": "fixloop_bench.corpora", "--held-out": "fixloop_bench.corpora",
           "--compare": "fixloop_bench.corpora"}


@pytest.mark.parametrize("argv", command_lines(), ids=lambda argv: " ".join(argv)[:60])
def test_each_command_line_of_the_docs_is_accepted_by_its_subcommand(argv):
    assert argv[0] in cli.commands(), f"the docs name a subcommand that does not exist: {argv[0]}"
    if len(argv) == 1 and argv[0] != "demo":
        return  # `jupyter-fixloop run` in prose names the command
    module = importlib.import_module(cli.commands()[argv[0]][0])
    if argv[0] == "bench":  # `bench --generation` / `--causes` / `--notebooks` are benches of their own
        own = next((BENCHES[a.split("=")[0]] for a in argv[1:] if a.split("=")[0] in BENCHES), None)
        module = importlib.import_module(own) if own else module
    parser = module.build_parser()
    assert isinstance(parser, argparse.ArgumentParser)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            parser.parse_args(argv[1:])
        except SystemExit:
            pytest.fail(f"`jupyter-fixloop {' '.join(argv)}` (in the docs) is refused: {stderr.getvalue().strip()}")


@pytest.mark.parametrize("name", sorted(cli.commands()))
def test_each_subcommand_answers_help(name, capsys):
    try:
        code = cli.main([name, "--help"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 0
    assert f"jupyter-fixloop {name}" in capsys.readouterr().out


def test_the_bench_commands_come_from_the_bench_distribution_and_say_how_to_get_it(monkeypatch, capsys):
    assert set(cli.commands()) - set(cli.COMMANDS) == set(cli.BENCH)  # entry points of fixloop-bench (bench/)
    monkeypatch.setattr(cli, "entry_points", lambda group: [])  # importlib.metadata without fixloop-bench
    assert cli.main(["speed", "--only", "round"]) == 2
    said = capsys.readouterr().err
    assert said.startswith("jupyter-fixloop speed: ") and "python -m pip install -e bench/" in said
    assert "bench" not in cli.usage()


# ---------------------------------------------------------------- the magic's options


NOT_LOOP_OPTIONS = {  # options of batch mode and bench that are about notebooks, cases or output, not the loop
    "-h", "--help", "-o", "--output", "--jobs", "-j", "--in-place", "--report", "--cells", "--interactive", "-i",
    "--cell-timeout", "--kernel", "--mode", "--case", "--category", "--group", "--expect-check", "--json",
    "--accept-unreviewed", "--no-plain", "--no-saved-outputs", "--notebooks",  # batch mode's own policy and checks
    "--generation", "--causes",  # the generation and causes benches: steps and notebooks, not the loop
}


def test_every_loop_option_of_batch_mode_and_bench_works_in_the_magic():
    magic = set(FixLoopMagics.fixloop.parser._option_string_actions)
    for name in ("run", "bench"):
        parser = importlib.import_module(cli.commands()[name][0]).build_parser()
        loop_options = set(parser._option_string_actions) - NOT_LOOP_OPTIONS
        assert loop_options <= magic, (
            f"`jupyter-fixloop {name}` takes {sorted(loop_options - magic)}, the magic does not"
        )


# ---------------------------------------------------------------- in a real kernel


@pytest.fixture(scope="module")
def kernel():
    k = UserKernel()
    assert k.run("%load_ext jupyter_fixloop").ok
    yield k
    k.close()


@pytest.fixture(scope="module")
def model_server():
    fib = "```python\ndef fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n```"
    with FakeModelServer([fib]) as server:
        yield server


README_STATUSES = {  # the README's words on its two cells, offline: a guess unverified, the same guess checked fixed
    "%%fixloop": "unverified",
    '%%fixloop --expect "round(total, 2) == 14.4"': "fixed",
}


def test_the_magic_cells_of_the_docs_run(kernel):
    blocks = [b for b in fenced("") if b.startswith("%%fixloop")]
    assert len(blocks) >= 3
    said = {}
    for block in blocks:
        run = kernel.run(block)
        assert run.ok, f"{block}\n{run.text}"
        assert "fixloop:" in run.text, run.text
        said[block.splitlines()[0]] = kernel.run("print(_fixloop.status)").text.strip()
    assert {line: said[line] for line in README_STATUSES} == README_STATUSES


def test_each_cell_magic_line_of_the_docs_is_taken_by_the_magic(kernel):
    """With --help the magic parses its line and stops: an option it does not take is a UsageError."""
    lines = magic_lines("%%fixloop")
    assert len(lines) >= 4
    for line in lines:
        run = kernel.run(f"{line} --help\npass\n")
        assert run.ok, f"{line}\n{run.text}"
        assert "%%fixloop [--expect EXPR]" in run.text, run.text


def test_each_line_magic_of_the_docs_runs(kernel, model_server):
    lines = [line for line in magic_lines("%fixloop") if not line.startswith("%%")]
    assert "%fixloop last" in lines and "%fixloop history" in lines
    for line in lines:
        line = " ".join(PLACEHOLDERS.get(w, w) for w in line.split())
        if line.startswith("%fixloop last --model"):  # asks a model about a cell that failed in auto mode
            kernel.run(f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n%fixloop auto\n"
                       f"%config FixLoop.api_base = {model_server.url!r}\n%config FixLoop.model = 'openai/fib'")
            assert "fixloop: the built-in rules have no repair" in kernel.run("[1, 2][5]").text
        elif line.startswith(("%fixloop last", "%fixloop history")):  # after a loop that proposed code
            assert kernel.run("%%fixloop\ncounts = {'apples': 3}\nn = counts['Apples']\n").ok
        run = kernel.run(line)
        assert run.ok, f"{line}\n{run.text}"
        assert "unknown command" not in run.text and "no setting" not in run.text, run.text
    kernel.run("%fixloop auto off\n%config FixLoop.model = ''\n%config FixLoop.api_base = ''")


def test_every_python_block_of_the_docs_is_run_here():
    """A Python block is the API's (run in a kernel below) or a config file's (`c.FixLoop`, read below)."""
    for block in fenced("python"):
        assert "from jupyter_fixloop import" in block or block.lstrip().startswith("c.FixLoop"), block


def test_the_python_api_block_runs(kernel, model_server):
    """The API block as written; its hosted model answers from a local scripted server (OPENAI_API_BASE)."""
    [block] = [b for b in fenced("python") if "from jupyter_fixloop import" in b]
    fib_cell = next(b for b in fenced("") if "def fib" in b).split("\n", 1)[1]
    setup = (f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n"
             f"os.environ['OPENAI_API_BASE'] = {model_server.url!r}\n"
             f"os.environ.pop('FIXLOOP_MODEL', None)\nsource = {fib_cell!r}\n")
    run = kernel.run(setup + block)
    assert run.ok, run.text
    assert kernel.run("print(result.status, receipt.ok)").text.split() == ["fixed", "False"]
    assert model_server.requests, "the hosted model of the README's line was not asked"


def test_the_config_blocks_name_real_settings():
    blocks = [b for b in fenced("python") if b.lstrip().startswith("c.FixLoop")]
    assert len(blocks) >= 2
    for block in blocks:
        c = Config()
        exec(block, {"c": c})
        settings = FixLoop(config=c)
        assert set(c.FixLoop) <= set(settings.trait_names(config=True)), block
        assert settings.options().api_base == c.FixLoop.get("api_base", "")


def test_the_usage_lines_up_and_speed_numbers_its_sections_in_order():
    rows = [line for line in cli.usage().splitlines() if line.startswith("  ")]
    assert len({line.index(help_) for line, (_, help_) in zip(rows, cli.commands().values())}) == 1
    speed = Path(importlib.import_module("fixloop_bench.speed").__file__).read_text()
    reports = re.findall(r"^        (?:missed \+= )?(_report_\w+)\(",
                         speed.split("def main", 1)[1].split("\ndef ", 1)[0], re.M)
    numbers = [int(re.search(r'print\(f?"\\n(\d)\. ', speed.split(f"def {name}(", 1)[1]).group(1)) for name in reports]
    default = [n for name, n in zip(reports, numbers) if name != "_report_gateway"]  # the gateway only with --gateway
    assert default == list(range(1, len(default) + 1)) and numbers[-1] == len(reports), numbers


def test_labextension_ci_keeps_the_server_log_in_a_file_and_removes_its_history_dir():
    """A static check of labextension/ci.sh and its Playwright config (running Galata is too heavy here)."""
    root = ROOT / "labextension"
    ci, config = (root / "ci.sh").read_text(), (root / "ui-tests" / "playwright.config.js").read_text()
    assert "trap 'rm -rf \"$history\"' EXIT" in ci and "mktemp -d /tmp/fixloop-ui-history-" in ci
    assert "FIXLOOP_UI_SERVER_LOG" in ci and 'cat "$FIXLOOP_UI_SERVER_LOG"' in ci
    assert "process.env.FIXLOOP_UI_SERVER_LOG" in config and '> "${serverLog}" 2>&1' in config
    assert "installs with apt-get when it is missing, so as root" in TEXTS["CONTRIBUTING.md"]


def test_litellm_is_pinned_to_a_range_that_holds_the_tested_version():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    litellm = next(Requirement(r) for r in pyproject["project"]["dependencies"] if r.startswith("litellm"))
    assert any(spec.operator in ("<", "<=", "~=", "==") for spec in litellm.specifier), "no upper bound"
    assert litellm.specifier.contains(version("litellm")), f"the tests run on litellm {version('litellm')}"


@pytest.mark.parametrize("fails", [False, True])
def test_labextension_ci_ui_step_removes_its_history_dir_and_shows_the_server_log_only_on_failure(fails, tmp_path):
    """ci.sh's "UI tests" step run by bash as written, with Playwright replaced by a stand-in that
    writes a server log line and checks the history dir exists (and exits 1 when `fails`)."""
    import subprocess

    ci = (ROOT / "labextension" / "ci.sh").read_text()
    part = ci.split('step "UI tests"\n', 1)[1].split('step "done"', 1)[0]
    assert "npx playwright test" in part
    stand_in = ('step() { :; }\n'
                'npx() { test -d "$FIXLOOP_DATA_DIR" && echo "$FIXLOOP_DATA_DIR" > "$here/dir" '
                '&& echo "a server log line" > "$FIXLOOP_UI_SERVER_LOG"; return $FAKE_STATUS; }\n'
                'node() { echo "1 $FAKE_STATUS 0"; }\n')
    (tmp_path / "ui-tests").mkdir()
    done = subprocess.run(["bash", "-c",
                           "set -euo pipefail\n" + stand_in + part + 'echo "status=$status ui_fail=$ui_fail"\n'],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path / "ui-tests",
                          env={"PATH": "/usr/bin:/bin", "here": str(tmp_path), "FAKE_STATUS": str(int(fails))})
    assert done.returncode == 0, done.stderr
    history = (tmp_path / "dir").read_text().strip()
    assert history.startswith("/tmp/fixloop-ui-history-") and not Path(history).exists()  # made, then removed at exit
    assert ("a server log line" in done.stdout) == fails, done.stdout
    assert f"status={int(fails)} ui_fail={int(fails)}" in done.stdout

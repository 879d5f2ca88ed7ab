"""`jupyter-fixloop run`: real notebooks, run in a real kernel (nbclient), repaired by the built-in engine."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from jupyter_fixloop import fix
from jupyter_fixloop.batch import cli as batch_cli
from jupyter_fixloop.batch.run import SAVED_WORDS
from jupyter_fixloop.errors import UsageError


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """One folder for every notebook here: the sandboxes of one working directory share a warm pool."""
    return tmp_path_factory.mktemp("batch")


def write_notebook(path, *cells):
    nb = new_notebook(cells=[new_markdown_cell(c[3:]) if c.startswith("md:") else new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return str(path)


def text_of(cell) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "".join(parts).strip()


def test_a_cell_past_its_time_limit_in_native_code_is_waited_for_as_plain_jupyter_does(workdir, capsys):
    """A call into native code (a model's `fit`; here a C loop) takes the interrupt at the cell's time limit
    only when it returns: fixloop's next request to the kernel waits behind it, as plain Jupyter waits for
    the cell, and the notebook goes on (before, batch mode ended there, saying the kernel could not run
    fixloop's helpers and to install jupyter-fixloop in it)."""
    src = write_notebook(workdir / "native.ipynb", "n = sum(range(10**9))", "after = 1\nprint(after)")
    out = str(workdir / "native.out.ipynb")
    batch_cli.main([src, "-o", out, "--cell-timeout", "2"])
    err = capsys.readouterr().err
    cells = nbformat.read(out, as_version=4).cells
    assert text_of(cells[1]) == "1" and "cell 2: ok" in err, err
    assert "cell 1: still running after 2 s, its interrupt not yet taken" in err
    assert "waiting for it as plain Jupyter would (Ctrl-C stops the run)" in err


def test_after_the_kernel_dies_the_cells_below_run_in_a_new_one_as_plain_jupyter_runs_them(workdir, capsys):
    """A cell that kills the notebook's kernel (ipython-in-depth's "Running Code" calls `libc.time(-1)` to
    show it): plain Jupyter's run (nbclient) goes on in a restarted kernel, so batch mode does too, rather than
    run fewer cells; the names the cells above made are gone there, as in plain Jupyter."""
    src = write_notebook(workdir / "dies.ipynb", "a = 1", "import ctypes\nctypes.string_at(0)",
                         "b = 2\nprint(b)", "print(a)")
    out, report = str(workdir / "dies.out.ipynb"), str(workdir / "dies.md")
    batch_cli.main([src, "-o", out, "--report", report])
    err = capsys.readouterr().err
    cells = nbformat.read(out, as_version=4).cells
    assert text_of(cells[2]) == "2", err
    assert text_of(cells[3]) == "NameError: name 'a' is not defined", err
    said = Path(report).read_text()
    assert "the kernel was restarted, as plain Jupyter restarts it" in said, err
    assert "it fails because the kernel died in cell 2 and was restarted: `a`, made above it, is gone" in said


def test_three_broken_cells_come_out_running_with_their_outputs(workdir, capsys):
    src = write_notebook(
        workdir / "three.ipynb",
        "md:# three cells broken by a newer pandas and a hurried edit",
        "import pandas as pd\nsales = pd.DataFrame({'Region': ['n', 's', 'n'], 'units': [1, 2, 3]})\ntotals = {}",
        "by_region = sales.groupby('region')['units'].sum()\nprint(by_region.to_dict())",
        "for region, n in by_region.iteritems():\n    totals[region] = int(n)\nprint(sorted(totals.items()))",
        "spread = np.std(sales['units'])\nprint(round(float(spread), 3))",
    )
    before = Path(src).read_bytes()
    out, report = str(workdir / "three.out.ipynb"), str(workdir / "three.md")

    code = batch_cli.main([src, "-o", out, "--report", report])

    # no check, no saved output, and each later cell fails after the original too: runs, unverified
    assert code == 3, capsys.readouterr()
    assert Path(src).read_bytes() == before  # the input is never overwritten without --in-place
    nb = nbformat.read(out, as_version=4)
    cells = nb.cells
    assert "groupby('Region')" in cells[2].source
    assert "by_region.items()" in cells[3].source
    assert cells[4].source.startswith("import numpy as np\n")
    assert text_of(cells[2]) == "{'n': 4, 's': 2}"
    assert text_of(cells[3]) == "[('n', 4), ('s', 2)]"
    assert text_of(cells[4]) == "0.816"
    assert [c.execution_count for c in cells[1:]] == [1, 2, 3, 4]
    record = cells[2].metadata["fixloop"]
    assert record["decision"] == "accepted" and record["status"] == "unverified"
    assert record["original"].startswith("by_region = sales.groupby('region')")
    assert record["patched"].startswith("by_region = sales.groupby('Region')")
    assert record["rounds"][0]["receipt"]["kind"] == "ok"
    assert "fixloop" not in cells[1].metadata
    text = Path(report).read_text()
    assert "every cell runs, but nothing checked some repairs: 1 ok, 3 unverified" in text
    assert "+for region, n in by_region.items():" in text
    assert "KeyError: 'region'" in text  # the receipt that justified the fix


def test_unfixable_cell_gives_exit_1_a_report_naming_it_and_skips_only_its_dependents(workdir, capsys):
    src = write_notebook(
        workdir / "unfixable.ipynb",
        "x = 1\nitems = [1, 2]",
        "items.append(3)\nrows = fetch_rows_from_the_warehouse()",
        "print(len(rows))",
        "%%fixloop --expect \"x == 2\"\nz = x * 10",
        "print(x + 1, len(items))",
    )
    report = str(workdir / "unfixable.html")

    code = batch_cli.main([src, "--max-rounds", "1", "--report", report])

    assert code == 1
    nb = nbformat.read(str(workdir / "unfixable.fixed.ipynb"), as_version=4)
    assert nb.cells[1].source == "items.append(3)\nrows = fetch_rows_from_the_warehouse()"
    assert "NameError" in text_of(nb.cells[1])
    assert nb.cells[1].metadata["fixloop"]["status"] == "gave_up"
    # cell 3 ran, as in plain Jupyter, and fails on `rows`: skipped (not repaired), blamed on cell 2
    assert text_of(nb.cells[2]) == "NameError: name 'rows' is not defined"
    # the unfixed cell 2 kept what it did before it raised (items has its 3, as in plain Jupyter)
    # and the independent last cell still ran
    assert text_of(nb.cells[4]) == "2 3"
    html = Path(report).read_text()
    assert "Cell 2: <span class='s-failed'>FAILED</span>" in html
    assert "fetch_rows_from_the_warehouse" in html
    assert "Cell 3: <span class='s-skipped'>skipped</span>" in html
    assert "it fails because cell 2, which was not fixed, did not define `rows`" in html
    assert "Cell 4: <span class='s-failed'>FAILED</span>" in html and "Check failed: x == 2" in html
    printed = capsys.readouterr().out
    assert "some cells could not be fixed: 2 ok, 2 failed, 1 skipped" in printed
    # cell 4 ran here (only its check failed); plain Jupyter refuses a `%%fixloop` cell (a UsageError)
    assert "3 cells run (plain Jupyter: 2)" in printed


def test_in_place_keeps_a_backup_and_keeps_the_fixloop_line(workdir):
    src = write_notebook(
        workdir / "inplace.ipynb",
        "values = [1, 2, 3]",
        "%%fixloop --expect \"total == 6\"\ntotal = sum(valuez)\nprint(total)",
    )
    before = Path(src).read_bytes()

    assert batch_cli.main([src, "--in-place"]) == 0

    assert Path(src + ".bak").read_bytes() == before
    nb = nbformat.read(src, as_version=4)
    assert nb.cells[1].source == '%%fixloop --expect "total == 6"\ntotal = sum(values)\nprint(total)'
    assert text_of(nb.cells[1]) == "6"
    assert nb.cells[1].metadata["fixloop"]["original"] == "total = sum(valuez)\nprint(total)"


def test_interactive_reject_leaves_the_cell_as_it_was(workdir, monkeypatch, capsys):
    src = write_notebook(workdir / "ask.ipynb", "counts = {'apples': 3}", "n = counts['Apples']\nprint(n)")
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("r\n"))

    code = batch_cli.main([src, "--interactive", "-o", str(workdir / "ask.out.ipynb")])

    assert code == 1
    shown = capsys.readouterr().out
    assert "+n = counts['apples']" in shown and "[a]ccept, [r]eject" in shown
    assert "what it does to your data:\n  n = 3 (new)\n[a]ccept" in shown  # printed before the question
    nb = nbformat.read(str(workdir / "ask.out.ipynb"), as_version=4)
    assert nb.cells[1].source == "n = counts['Apples']\nprint(n)"
    assert nb.cells[1].metadata["fixloop"]["decision"] == "rejected"


REAL = Path(__file__).parent.parent / "notebooks" / "pydata-book-ch08-head.ipynb"


def _plain_jupyter(path) -> int:
    """Cells that run without error when Jupyter runs the notebook top to bottom, errors allowed."""
    from nbclient import NotebookClient

    nb = nbformat.read(str(path), as_version=4)
    NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(Path(path).parent)}}).execute()
    return sum(1 for c in nb.cells if c.cell_type == "code" and c.source.strip()
               and not any(o.output_type == "error" for o in c.outputs))


def test_a_real_notebook_runs_at_least_as_many_cells_as_plain_jupyter(tmp_path, capsys):
    """Issue 26: a real notebook written for pandas 1 (pydata-book, chapter 8, its outputs saved then),
    run both ways here. An unfixed cell keeps what it did before it raised, as in Jupyter: the first
    cell's numpy and pandas imports stay even when a later import in it fails."""
    src = tmp_path / "ch08.ipynb"
    src.write_bytes(REAL.read_bytes())
    plain = _plain_jupyter(src)
    out = tmp_path / "ch08.out.ipynb"

    batch_cli.main([str(src), "-o", str(out), "--no-plain"])

    printed = capsys.readouterr().out
    ran = int(re.search(r"(\d+) cells run \(plain Jupyter: ", printed).group(1))
    nb = nbformat.read(str(out), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert ran == sum(not any(o.output_type == "error" for o in c.outputs) for c in code)
    assert ran >= plain, printed
    fixed = [c for c in code if c.metadata.get("fixloop", {}).get("decision") == "accepted"]
    assert any("groupby(level=" in c.source for c in fixed), printed  # `s.sum(level=...)`, from pandas 1


def test_malformed_or_missing_notebook_is_a_clear_error_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "broken.ipynb"
    bad.write_text('{"cells": [ this is not json')
    assert batch_cli.main([str(bad)]) == 2
    assert f"{bad} is not a notebook: the file is not JSON" in capsys.readouterr().err

    invalid = tmp_path / "invalid.ipynb"
    invalid.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                   "cells": [{"cell_type": "code"}]}))
    assert batch_cli.main([str(invalid)]) == 2
    assert "is not a valid notebook" in capsys.readouterr().err

    assert batch_cli.main([str(tmp_path / "nowhere.ipynb")]) == 2
    assert "no notebook at" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "broken.fixed.ipynb")


def test_bad_usage_exits_2_before_running_anything(workdir, capsys):
    src = write_notebook(workdir / "usage.ipynb", "x = 1")
    assert batch_cli.main([src, "--report", "report.txt"]) == 2
    assert "written as .md or .html" in capsys.readouterr().err
    assert batch_cli.main([src, "--cells", "2-9"]) == 2
    assert "the notebook has 1 cells" in capsys.readouterr().err
    assert batch_cli.main([src, "-o", src]) == 2
    assert "use --in-place" in capsys.readouterr().err
    assert batch_cli.main([src, "--max-rounds", "many"]) == 2


def test_jupyter_finds_the_fixloop_subcommand(tmp_path):
    """`jupyter fixloop run` is the same command (jupyter_core finds `jupyter-fixloop` on PATH)."""
    bad = tmp_path / "broken.ipynb"
    bad.write_text("not a notebook")
    run = subprocess.run([sys.executable, "-m", "jupyter", "fixloop", "run", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "jupyter-fixloop run:" in run.stderr and "is not a notebook" in run.stderr


def test_the_readme_demo_notebook_is_repaired_by_the_builtin_engine(tmp_path):
    """The README's batch-mode command: notebooks/cleaning.ipynb comes out fully running. A repair is
    "fixed" only when something checked its values: a check (the two `--expect` cells). The revenue
    column's repair is unverified (issue 52): the last cell reads it and failed before the fix, but checks
    no values, so it shows the fix is compatible ("later cells run now"), not right; the two repairs no cell
    reads say that the last cell, which ran before them too, is a regression check only (issue 38)."""
    src = str(Path(__file__).parent.parent.parent / "notebooks" / "cleaning.ipynb")
    out, report = str(tmp_path / "cleaning.fixed.ipynb"), str(tmp_path / "cleaning-report.md")

    assert batch_cli.main([src, "-o", out, "--report", report]) == 3

    nb = nbformat.read(out, as_version=4)
    by_text = {c.source.splitlines()[0]: text_of(c) for c in nb.cells if c.cell_type == "code"}
    assert "north   18 units" in by_text["units_by_region = orders.groupby('region')['units'].sum()"]
    assert "north    33.0" in by_text["revenue_by_region = "
                                      "orders.groupby('region')['revenue'].sum().sort_values(ascending=False)"]
    assert "unit prices vary by 28% around their mean" in by_text['%%fixloop --expect "round(price_spread, 2) == 0.28"']
    text = Path(report).read_text()
    assert "every cell runs, but nothing checked some repairs: 4 ok, 2 fixed, 3 unverified" in text
    assert "later cells run now: following cell 15 (`revenue_by_region" in text  # the revenue column's fix
    assert "- repairs run, by what verified them: 2 a check, 3 nothing" in text
    assert re.search(r"^## Cell 7: (.*)$", text, re.M).group(1) == "runs now, unverified"
    assert text.count("a regression check, not evidence") >= 2


def test_the_readme_first_command_runs_the_demo_and_says_what_was_verified(tmp_path):
    """`jupyter-fixloop demo` from any folder: every broken %%fixloop cell is repaired, the report shows
    what each fix does to the data, the last line separates checked from unchecked, and the user's
    history is not written."""
    users_history = tmp_path / "history"
    env = dict(os.environ, FIXLOOP_DATA_DIR=str(users_history))
    run = subprocess.run([sys.executable, "-m", "jupyter_fixloop.cli", "demo"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert not users_history.exists() or not any(users_history.iterdir())
    assert run.stdout.count("what it does to your data:") == 4
    assert "+revenue = sales['revenue'].sum()" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1].startswith(
        "4 of 4 broken cells repaired in a sandbox kernel (3 fixed: verified by their checks, "
        "1 unverified: it runs, nothing checked it)")


def test_cell_names_decide_what_a_failed_cell_takes_down():
    from jupyter_fixloop.batch.cells import cell_names, parse_cell

    reads, defines = cell_names("df['total'] = df['a'] + rate\ndef f(x):\n    return x * scale\nimport numpy as np")
    assert reads >= {"df", "rate", "scale"} and "x" not in reads
    assert defines >= {"df", "f", "np"}
    assert "n" in cell_names("%time n = len(rows)")[0] | cell_names("%time n = len(rows)")[1]
    plan = parse_cell("%%fixloop --expect \"total == 6\" -r 2\ntotal = sum(values)")
    assert plan.checks == ("total == 6",) and plan.max_rounds == 2 and plan.code == "total = sum(values)"
    assert plan.source_with("total = 6") == '%%fixloop --expect "total == 6" -r 2\ntotal = 6'
    assert batch_cli.parse_cells("3,5-7", 9) == {3, 5, 6, 7}


def test_cell_names_follow_the_order_of_the_cell():
    """A name the cell assigns before it reads it is not a read (issue 26: cells were skipped for
    "reads data" although they assign `data` first)."""
    from jupyter_fixloop.batch.cells import cell_names

    assert cell_names("data = pd.read_csv('other.csv')\ndata.head()") == ({"pd"}, {"data"})
    assert cell_names("con = sqlite3.connect('db')\ncur = con.cursor()")[0] == {"sqlite3"}
    assert cell_names("na_values = ['NULL']\nload(na_values)")[0] == {"load"}
    assert "x" in cell_names("x = x + 1")[0] and "n" in cell_names("n += 1")[0]  # the value is read first
    assert "t" not in cell_names("for i in range(3):\n    t = i\nprint(t, i)")[0]
    assert cell_names("[y * k for y in ys]")[0] == {"ys", "k"}
    assert "f" not in cell_names("with open(p) as f:\n    f.read()")[0]
    assert "a" in cell_names("print(a)\na = 1")[0]  # read before it is assigned: a read


def test_what_no_change_to_the_cell_fixes_is_said_plainly():
    """Issue 26: a missing package, a missing file, no network: what to do, not "a model may fix it"."""
    from jupyter_fixloop.batch import words

    assert words.missing_package("ModuleNotFoundError: No module named 'seaborn'") == (
        "`seaborn` is not installed in this notebook's environment: `pip install seaborn` (or `%pip install "
        "seaborn` in the notebook), then rerun; no change to the cell can fix this")
    assert "`pip install scikit-learn`" in words.missing_package("ModuleNotFoundError: No module named 'sklearn'")
    assert "`matplotlib` is not installed" in words.missing_package(
        'ImportError: matplotlib is required for plotting when the default backend "matplotlib" is selected.')
    assert words.missing_package("ModuleNotFoundError: No module named 'sklearn.cross_validation'") is None  # moved
    assert "`pip install tables`" in words.missing_package(  # pandas' own words for an optional dependency
        "ImportError: `Import pytables` failed.  Use pip, conda, or your preferred package management tool to install "
        "the pytables package.")
    said = words.missing_file("FileNotFoundError: [Errno 2] No such file or directory: 'examples/ex9.csv'",
                              "/home/me/book")
    assert "`examples/ex9.csv` is not there" in said and "`/home/me/book`" in said
    assert "`iris.csv` is not there" in words.missing_file("FileNotFoundError: iris.csv not found.", "/b")  # np.loadtxt
    assert words.missing_file("KeyError: 'iris.csv not found.'", "/b") is None


def test_a_file_there_in_other_letter_cases_is_named(tmp_path):
    """A notebook written where the file system ignores case reads `../data/diamonds.csv`; the folder is `Data`."""
    from jupyter_fixloop.batch import words

    (tmp_path / "Data").mkdir()
    (tmp_path / "Data" / "diamonds.csv").write_text("a\n1\n")
    (tmp_path / "ch").mkdir()
    said = words.missing_file("FileNotFoundError: [Errno 2] No such file or directory: '../data/diamonds.csv'",
                              str(tmp_path / "ch"))
    assert "`../data/diamonds.csv` is not there, but `../Data/diamonds.csv` is" in said
    assert "differ in case only" in said
    assert words.case_twin("../data/rubies.csv", str(tmp_path / "ch")) is None  # not there in any case
    assert words.case_twin("../Data/diamonds.csv", str(tmp_path / "ch")) is None  # there as written
    assert "the sandbox where fixes are tried has none" in words.network(
        ["URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"])
    assert words.network(["KeyError: 'a'"]) is None


def test_generation_and_a_wrong_aggregate_are_fixed_by_a_configured_model(workdir, fake_model):
    """An instruction cell is written by the model; a wrong value only `--expect` sees is fixed from its receipt."""
    server = fake_model(
        "```python\nrevenue = [u * p for u, p in zip(units, prices)]\n```",
        "```python\ntotal = sum(revenue)\n```",
    )
    server.repeat_last = False
    src = write_notebook(
        workdir / "generate.ipynb",
        "units, prices = [2, 3], [1.5, 2.0]",
        '%%fixloop --expect "revenue == [3.0, 6.0]"\nlist the revenue of each order, units times price',
        '%%fixloop --expect "total == 9.0"\ntotal = len(revenue)',
    )
    out = str(workdir / "generate.out.ipynb")

    assert batch_cli.main([src, "-o", out, "--model", "openai/scripted", "--api-base", server.url,
                           "--accept-unreviewed"]) == 0

    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == ('%%fixloop --expect "revenue == [3.0, 6.0]"\n'
                                  "# list the revenue of each order, units times price\n"
                                  "revenue = [u * p for u, p in zip(units, prices)]")
    assert nb.cells[2].source == '%%fixloop --expect "total == 9.0"\ntotal = sum(revenue)'
    assert "total is 2, expected 9.0" in server.prompt(1)  # the wrong aggregate, as the model saw it


def test_unreviewed_model_code_does_not_run_in_the_notebook_kernel_by_default(workdir, tmp_path, fake_model,
                                                                              monkeypatch, capsys):
    """Issue 27 B01: a candidate that behaves in the sandbox and acts only outside it is verified
    there, written to the notebook and the report, but the notebook's kernel runs the original cell."""
    marker = tmp_path / "acted-outside-the-sandbox"
    monkeypatch.setenv("REPORT_DIR_FOR_TEST", str(marker))  # inherited by the notebook kernel, not the sandbox
    sly = ("import os\ntotal = sum(values)\nif os.environ.get('REPORT_DIR_FOR_TEST'):\n"
           "    open(os.environ['REPORT_DIR_FOR_TEST'], 'w').write('token')")
    server = fake_model(f"```python\n{sly}\n```")
    src = write_notebook(workdir / "sly.ipynb", "values = [1, 2, 3]", "total = sum(valuez)", "print(values)")
    out, report = str(workdir / "sly.out.ipynb"), str(workdir / "sly.md")

    code = batch_cli.main([src, "-o", out, "--report", report, "--model", "openai/scripted", "--api-base", server.url,
                           "--no-rules"])

    assert code == 1 and not marker.exists()
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == "total = sum(valuez)" and "NameError" in text_of(nb.cells[1])  # the original ran
    record = nb.cells[1].metadata["fixloop"]
    # verified to run; the last cell reads nothing it wrote, so nothing checked it (issue 38)
    assert (
        record["status"] == "unverified" and record["decision"] == "pending"
        and "REPORT_DIR_FOR_TEST" in record["patched"]
    )
    assert text_of(nb.cells[2]) == "[1, 2, 3]"
    printed = capsys.readouterr().out
    assert "1 proposed" in printed and "model-written code nobody reviewed" in printed
    assert "+total = sum(values)" in Path(report).read_text()

    server = fake_model(f"```python\n{sly}\n```")
    assert batch_cli.main([src, "-o", out, "--model", "openai/scripted", "--api-base", server.url, "--no-rules",
                           "--accept-unreviewed"]) == 3  # it ran, unverified
    assert marker.read_text() == "token"  # what --accept-unreviewed lets through: why it is not the default


# issue 41, critical: the rules' repair of a model's code is the model's code
PAYLOAD = ("import os\nif os.environ.get('REPORT_DIR_FOR_TEST'):\n"
           "    open(os.environ['REPORT_DIR_FOR_TEST'], 'w').write('token')\ny = int(math.sqrt(4))")


@pytest.mark.parametrize("cell_model", [False, True], ids=["model-flag", "model-on-the-cell-line"])
def test_the_rules_repair_of_a_models_code_is_proposed_not_applied(workdir, tmp_path, fake_model, monkeypatch,
                                                                    capsys, cell_model):
    """The model's reply carries a payload and `y = int(math.sqrt(4))` without `import math`: it fails in
    round 1, the rules add the import in round 2 and it passes. Every line but the import is the model's,
    so the fix is proposed (exit 1) and the notebook's kernel never runs the payload; also when the
    model is named on the cell's `%%fixloop` line and the run's own model is the built-in engine."""
    marker = tmp_path / "written-by-the-models-payload"
    monkeypatch.setenv("REPORT_DIR_FOR_TEST", str(marker))  # inherited by the notebook kernel, not the sandbox
    server = fake_model(f"```python\n{PAYLOAD}\n```")
    line = "%%fixloop --model openai/scripted --expect 'y == 2'" if cell_model else "%%fixloop --expect 'y == 2'"
    src = write_notebook(workdir / f"provenance-{cell_model}.ipynb", f"{line}\ny = root_of_four", "print(y)")
    out, report = str(workdir / f"provenance-{cell_model}.out.ipynb"), str(workdir / f"provenance-{cell_model}.md")
    flags = ["--api-base", server.url] + ([] if cell_model else ["--model", "openai/scripted"])

    code = batch_cli.main([src, "-o", out, "--report", report, "--max-rounds", "3", *flags])

    printed = capsys.readouterr().out
    assert code == 1 and not marker.exists(), printed
    nb = nbformat.read(out, as_version=4)
    record = nb.cells[0].metadata["fixloop"]
    assert record["status"] == "fixed" and record["decision"] == "pending" and record["model_written"], record
    assert [r["source"] for r in record["rounds"]] == ["model", "rules"] and record["rounds"][1]["model_written"]
    assert "REPORT_DIR_FOR_TEST" in record["patched"] and "import math" in record["patched"]
    assert "the rules' repair of the model's code" in record["reason"]
    assert "built-in rules' repair" not in record["reason"] and "built-in rules' repair" not in printed
    assert "1 proposed" in printed and "model-written code nobody reviewed" in printed
    assert "NameError" in text_of(nb.cells[0])  # the original ran, as plain Jupyter would


def test_an_unknown_model_is_refused_before_any_cell_runs(workdir, capsys):
    src = write_notebook(workdir / "model.ipynb", "open('ran.txt', 'w').write('x')")
    assert batch_cli.main([src, "--model", "nosuchprovider/some-model"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nosuchprovider/some-model" in err and "openai/gpt-4o-mini" in err
    assert not (workdir / "ran.txt").exists() and not (workdir / "model.fixed.ipynb").exists()


def test_batch_mode_reads_fixloop_settings_from_jupyter_config(workdir, tmp_path, monkeypatch, capsys):
    """`c.FixLoop.*` in jupyter_config.py applies to `jupyter-fixloop run` as it does in a kernel."""
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    (config_dir / "jupyter_config.py").write_text("c.FixLoop.model = 'nosuchprovider/from-config'\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config_dir))
    src = write_notebook(workdir / "configured.ipynb", "x = 1")
    assert batch_cli.main([src]) == 2
    assert "nosuchprovider/from-config" in capsys.readouterr().err
    (config_dir / "jupyter_config.py").write_text("c.FixLoop.max_rounds = 0\n")
    broken = write_notebook(workdir / "zero.ipynb", "total = sum(undefined_prices)")
    assert batch_cli.main([broken, "-o", str(workdir / "zero.out.ipynb")]) == 2  # from the config: refused too
    assert "FixLoop.max_rounds" in capsys.readouterr().err and not (workdir / "zero.out.ipynb").exists()


def test_several_notebooks_two_at_a_time_one_report_worst_exit_wins(workdir, tmp_path, capsys):
    folder = tmp_path / "many"
    folder.mkdir()
    write_notebook(folder / "a.ipynb", "prices = [3, 4]\ntotal = sum(price)")
    write_notebook(folder / "b.ipynb", "x = 1\nprint(x)")
    write_notebook(folder / "c.ipynb", "import no_such_module_xyz")
    report = tmp_path / "all.md"
    code = batch_cli.main([str(folder), "--jobs", "2", "--report", str(report)])
    assert code == 1  # c cannot be fixed: the worst outcome decides
    fixed = nbformat.read(str(folder / "a.fixed.ipynb"), as_version=4)
    assert "sum(prices)" in fixed.cells[0].source
    assert os.path.exists(folder / "b.fixed.ipynb") and os.path.exists(folder / "c.fixed.ipynb")
    text = report.read_text()
    assert text.startswith("# fixloop report: 3 notebooks, 2 running in full")
    assert all(f"{name}.ipynb" in text for name in "abc")
    out = capsys.readouterr()
    assert out.out.count("fixloop run ") == 3
    assert batch_cli.main([str(folder / "b.ipynb"), "--jobs", "2"]) == 0


def test_several_notebooks_refuse_one_output_path(workdir, capsys):
    a = write_notebook(workdir / "one.ipynb", "x = 1")
    b = write_notebook(workdir / "two.ipynb", "y = 2")
    assert batch_cli.main([a, b, "-o", str(workdir / "out.ipynb")]) == 2
    assert "-o and --cells take one notebook" in capsys.readouterr().err
    assert batch_cli.main([a, b, "--jobs", "0"]) == 2


def test_interactive_wraps_long_diff_lines_instead_of_cutting_them(workdir, monkeypatch, capsys):
    long_tail = " + ".join(f"weight_{i}" for i in range(30))
    src = write_notebook(workdir / "wide.ipynb",
                         "counts = {'apples': 3}\n" + "".join(f"weight_{i} = 1\n" for i in range(30)),
                         f"n = counts['Apples'] + {long_tail}\nprint(n)")
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("r\n"))
    monkeypatch.setenv("COLUMNS", "80")
    assert batch_cli.main([src, "--interactive", "-o", str(workdir / "wide.out.ipynb")]) == 1
    shown = "".join(capsys.readouterr().out.split())  # wrapped lines joined again
    assert "weight_28+weight_29" in shown and "+n=counts['apples']" in shown


def test_later_cells_judge_each_candidate_and_the_report_shows_the_effect(workdir, fake_model):
    """A candidate that breaks a later cell is not accepted; the report says what the fix does to the data."""
    label = "df['label'] = df['name'] + ' #' + df['customer_id']"
    breaks_later = "df['customer_id'] = df['customer_id'].astype(str)\n" + label
    honest = "df['label'] = df['name'] + ' #' + df['customer_id'].astype(str)"
    server = fake_model(f"```python\n{breaks_later}\n```", f"```python\n{honest}\n```")
    src = write_notebook(
        workdir / "later.ipynb",
        "import pandas as pd\ndf = pd.DataFrame({'name': ['Ann', 'Bob', 'Cy'], 'customer_id': [1, 2, 3]})",
        label,
        "ids = df['customer_id'] + 1\nprint(ids.tolist())",
    )
    out, report = str(workdir / "later.out.ipynb"), str(workdir / "later.md")
    code = batch_cli.main([src, "-o", out, "--report", report, "--model", "openai/scripted", "--api-base", server.url,
                           "--no-rules", "--accept-unreviewed"])
    # the later cell judged each candidate, but ran after the original cell too and reads no 'label': a regression
    # check, not evidence, so the honest fix is unverified (issue 38)
    assert code == 3
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == honest
    assert text_of(nb.cells[2]) == "[2, 3, 4]"
    rounds = nb.cells[1].metadata["fixloop"]["rounds"]
    assert "Check failed: following cell 3 (`ids = df['customer_id'] + 1`)" in rounds[0]["receipt"]["text"]
    text = Path(report).read_text()
    assert "what it does to your data:" in text
    assert "df: 3×2 → 3×3; new column 'label' (str): 'Ann #1', 'Bob #2', 'Cy #3'" in text


def test_a_share_line_in_a_notebook_is_honoured(workdir, capsys):
    check = "--expect \"globals().get('secret_rate') == 3\""  # read by name from a string: not shared
    src = write_notebook(
        workdir / "share.ipynb",
        "secret_rate = 3\nunits = [1, 2]",
        f"%%fixloop {check} --share secret_rate\ntotal = sum(unit)",
        f"%%fixloop {check}\nother = sum(unit)",
    )
    out = str(workdir / "share.out.ipynb")
    code = batch_cli.main([src, "-o", out])
    assert code == 1, capsys.readouterr()
    cells = nbformat.read(out, as_version=4).cells
    assert cells[1].metadata["fixloop"]["status"] == "fixed" and "sum(units)" in cells[1].source
    assert cells[2].metadata["fixloop"]["status"] != "fixed"


def test_a_hosted_model_without_its_key_exits_2_naming_the_variable(workdir, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    src = write_notebook(workdir / "nokey.ipynb", "open('ran.txt', 'w').write('x')")
    assert batch_cli.main([src, "--model", "anthropic/claude-sonnet-4-5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ANTHROPIC_API_KEY" in err and "500" not in err
    assert not (workdir / "ran.txt").exists()


def test_cells_with_ipython_syntax_are_repaired_with_their_magic_lines_kept(workdir, capsys):
    """A line magic, a shell line, a help line, a `%%time` body and a `%timeit` over two lines: the rules
    read each cell as IPython transforms it, and the repaired cell keeps its IPython lines."""
    pytest.importorskip("matplotlib")
    src = write_notebook(
        workdir / "ipython.ipynb",
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.style.use('seaborn-darkgrid')\n"
        "fig, ax = plt.subplots()",
        "!pip --version\nweights = [2, 5, 3]\nweights?\nheaviest = max(wieghts)\nprint(heaviest)",
        "%%time\nordered = sroted(weights)\nprint(ordered)",
        "import numpy as np\n%timeit -n 1 -r 1 np.array(weights, dtype=np.float) \\\n    .sum()",
    )
    out = str(workdir / "ipython.out.ipynb")
    batch_cli.main([src, "-o", out])
    said = capsys.readouterr()
    cells = nbformat.read(out, as_version=4).cells
    assert cells[0].source.splitlines()[:3] == ["%matplotlib inline", "import matplotlib.pyplot as plt",
                                                "plt.style.use('seaborn-v0_8-darkgrid')"], said
    assert cells[1].source.splitlines()[:4] == ["!pip --version", "weights = [2, 5, 3]", "weights?",
                                                "heaviest = max(weights)"]
    assert text_of(cells[1]).endswith("5")
    assert cells[2].source == "%%time\nordered = sorted(weights)\nprint(ordered)"
    assert "[2, 3, 5]" in text_of(cells[2]) and "Error" not in text_of(cells[2])
    assert cells[3].source == "import numpy as np\n%timeit -n 1 -r 1 np.array(weights, dtype=float) \\\n    .sum()"
    assert all(c.metadata["fixloop"]["decision"] == "accepted" for c in cells), said
def test_a_later_cell_that_reads_nothing_of_a_fix_does_not_verify_it(workdir, capsys):
    """Issue 38: a notebook that ends in an independent cell. The cell after the first fix reads the
    column it makes, failed after the original cell and asserts its values: it verifies that fix, and the
    words name it (issue 52: without its assert it would only run now, no evidence). The
    last cell reads nothing the second fix wrote and ran after its original cell too: a regression check,
    so that fix stays unverified (exit 3), and says why."""
    src = write_notebook(
        workdir / "independent.ipynb",
        "import pandas as pd\norders = pd.DataFrame({'region': ['n', 's', 'n'], 'qty': [1, 2, 3], "
        "'price': [2.0, 3.0, 4.0]})",
        "orders['revenue'] = orders['qty'] * orders['prise']",
        "print(orders.groupby('region')['revenue'].sum().to_dict())\nassert orders['revenue'].sum() == 20",
        "for region, qty in orders.groupby('region')['qty'].sum().iteritems():\n    print(region, qty)",
        "print(orders.dtypes.to_dict())",
    )

    code = batch_cli.main([src, "-o", str(workdir / "independent.out.ipynb")])

    printed = capsys.readouterr().out
    assert code == 3, printed
    first = re.search(r"cell 2: .* -- (.*)", printed).group(1)
    assert first.startswith("fixed: after 1 round(s): its 1 check passes (following cell 3 (`print(orders.groupby("
                            "'region')['revenue'].sum().to_dict())`): it failed after the original cell and runs "
                            "now, and its asserts pass)"), first
    last = re.search(r"cell 4: .* -- (.*)", printed).group(1)
    assert last.startswith("runs now, unverified: nothing checked it"), last
    assert ("1 later cell still runs, but ran after the original cell too and reads nothing the code wrote: a "
            "regression check, not evidence") in last
    result = nbformat.read(str(workdir / "independent.out.ipynb"), as_version=4)
    assert text_of(result.cells[3]) == "n 4\ns 2"


def test_receipts_name_following_cells_by_the_notebooks_own_numbers(workdir, capsys):
    """The cells after a repaired cell are named as the report names cells, by their number in the notebook
    (markdown and empty cells counted), not by their place after the repaired cell."""
    src = write_notebook(workdir / "numbered.ipynb", "md:# Totals", "values = [1, 2, 3]", "total = sum(valuez)",
                         "md:Twice the total:", "", "print(total * 2)\nassert total == 6")
    out, report = str(workdir / "numbered.out.ipynb"), str(workdir / "numbered.md")

    assert batch_cli.main([src, "-o", out, "--report", report]) == 0

    printed = capsys.readouterr().out
    fixed = re.search(r"cell 3: .* -- (.*)", printed).group(1)
    assert ("(following cell 6 (`print(total * 2)`): it failed after the original cell and runs now, and its asserts "
            "pass)") in fixed, fixed
    text = Path(report).read_text()
    assert "following cell 6 (`print(total * 2)`) fails after the original cell, so it is not counted" in text
    assert "following cell 1" not in text
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[2].source == "total = sum(values)" and text_of(nb.cells[5]) == "12"
    assert "following cell 6 (`print(total * 2)`)" in nb.cells[2].metadata["fixloop"]["reason"]
    with pytest.raises(UsageError, match="cell_numbers: 1 number"):  # one per cell, before any kernel starts
        fix("total = 1", following=["print(total)", "print(total * 2)"], cell_numbers=[6])


def test_a_cell_that_runs_but_assigns_through_a_chain_is_repaired_when_its_saved_output_can_tell(tmp_path, capsys):
    """Issue 38: pandas 3 warns that `df['b'][mask] = v` never reaches the frame (ChainedAssignmentError),
    and the cell runs. Batch mode says it looks wrong and proposes `df.loc[mask, 'b'] = v`: applied when
    the output saved when it worked verifies it; proposed only, where nothing can."""
    from nbformat.v4 import new_output

    cells = [("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [0, 0, 0], 'c': [1, 1, 1]})", None),
             ("df['b'][df['a'] > 1] = 5\nprint(df['b'].tolist())", "[0, 5, 5]\n"),  # what pandas 1 printed
             ("print(int(df['a'].sum()))", "6\n"),
             ("df['c'][df['a'] > 2] = 0", None)]
    nb = new_notebook(cells=[new_code_cell(src, outputs=[new_output("stream", name="stdout", text=out)] if out else [])
                             for src, out in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out, report = str(tmp_path / "chained.ipynb"), str(tmp_path / "chained.out.ipynb"), str(tmp_path / "c.md")
    nbformat.write(nb, src)

    code = batch_cli.main([src, "-o", out, "--report", report])

    printed = capsys.readouterr().out
    assert code == 3, printed  # every cell runs, one looks wrong
    assert "every cell runs, but some cells look wrong: 2 ok, 1 fixed, 1 looking wrong" in printed, printed
    fixed = re.search(r"cell 2: .* -- (.*)", printed).group(1)
    assert fixed.startswith("fixed: ran, but looked wrong (pandas: ChainedAssignmentError: A value is being set on a "
                            "copy"), fixed
    assert SAVED_WORDS in fixed
    result = nbformat.read(out, as_version=4)
    assert result.cells[1].source == "df.loc[df['a'] > 1, 'b'] = 5\nprint(df['b'].tolist())"
    assert text_of(result.cells[1]) == "[0, 5, 5]"
    wrong = re.search(r"cell 4: .* -- (.*)", printed).group(1)
    assert wrong.startswith("runs, but looks wrong: pandas says an assignment never reaches the frame "
                            "(ChainedAssignmentError: "), wrong
    assert "a repair is proposed, not applied: nothing checked it" in wrong
    assert result.cells[3].source == "df['c'][df['a'] > 2] = 0"  # as written: the proposal is in its record
    assert result.cells[3].metadata["fixloop"]["decision"] == "pending"
    assert result.cells[3].metadata["fixloop"]["patched"].startswith("df.loc[df['a'] > 2, 'c'] = 0")
    assert "+df.loc[df['a'] > 2, 'c'] = 0" in Path(report).read_text()




def test_the_name_analysis_reads_a_long_cell_in_one_pass_and_hands_its_set_back():
    """Names bound earlier in a long cell are not reads, also inside loops, branches, withs and trys;
    the set of bound names a body is read with comes back as it was given (no copy per statement)."""
    import ast as ast_

    from jupyter_fixloop.batch.cells import _in_order, cell_names

    lines = ["x0 = seed"]
    for i in range(1, 3000):
        lines += [f"for k{i} in range(x{i - 1}):\n    x{i} = k{i} + x{i - 1}", f"if x{i}:\n    y{i} = x{i}\nelse:\n"
                  f"    y{i} = -x{i}", f"with open(name) as f{i}:\n    z{i} = f{i}.read() + str(y{i})",
                  f"try:\n    w{i} = z{i}\nexcept ValueError as e{i}:\n    w{i} = e{i}\nfinally:\n    v{i} = w{i}"]
    reads, defines = cell_names("\n".join(lines))
    assert reads == {"seed", "range", "open", "name", "str", "ValueError"}
    assert {"x2999", "y1", "z5", "w7", "v2999", "k3", "f9"} <= defines
    bound = {"before"}
    _in_order(ast_.parse("a = 1\nfor b in a:\n    c = b\n").body, bound)
    assert bound == {"before"}


def test_a_cell_over_the_size_cap_runs_as_written_and_says_why(workdir, capsys):
    """Over 2 MB of source, batch mode neither reads, checkpoints nor repairs a cell: it runs as
    written; one that fails is not repaired, with the reason, and the cells after it still run."""
    from jupyter_fixloop.batch.run import BIG_CELL

    literal = "x" * (BIG_CELL + 1000)
    src = write_notebook(workdir / "big.ipynb", f"blob = '{literal}'\nprint(len(blob))",
                         f"other = '{literal}'\nboom = 1 / 0", "print(len(blob) + 1)")
    out, report = str(workdir / "big.out.ipynb"), str(workdir / "big.md")
    assert batch_cli.main([src, "-o", out, "--report", report, "--no-plain"]) == 1
    said = capsys.readouterr().out
    assert "cell 1: blob = " in said and "ran as written, not read: 2.0 MB of source, over the 2 MB" in said
    assert "not repaired: 2.0 MB of source, over the 2 MB batch mode reads and repairs" in said
    cells = nbformat.read(out, as_version=4).cells
    assert text_of(cells[0]) == str(len(literal)) and text_of(cells[2]) == str(len(literal) + 1)
    assert "ZeroDivisionError" in text_of(cells[1]) and "fixloop" not in cells[1].metadata
    assert "ran as written, not read" in Path(report).read_text()


def test_checkpoint_copies_are_bounded_in_bytes_and_in_time_and_say_what_they_skipped():
    from jupyter_fixloop.kernel import checkpoint

    ns = {"rows": [{"id": i} for i in range(5000)], "small": [1, 2], "gen": (i for i in range(3))}
    answer = json.loads(checkpoint.save(ns, ["rows", "small", "gen"], cap=1000))
    assert sorted(answer["why"]) == ["gen", "rows"] and answer["bytes"] < 1000
    assert "over 1,000 bytes: more than the copies" in answer["why"]["rows"]
    assert answer["why"]["gen"] == "it cannot be copied (TypeError)"
    ns["small"].append(3)
    assert json.loads(checkpoint.restore(ns))["changed"] == ["small"] and ns["small"] == [1, 2]
    answer = json.loads(checkpoint.save(ns, ["rows", "small"], seconds=0.0))
    assert sorted(answer["why"]) == ["rows", "small"] and answer["bytes"] == 0
    assert all(why.startswith("not copied within the 0 s") for why in answer["why"].values())


def test_a_failed_cell_says_which_names_its_checkpoint_could_not_copy(workdir, capsys):
    """A generator cannot be copied: what the failed cell took from it stays taken, and the outcome says so."""
    src = write_notebook(workdir / "uncopied.ipynb", "counts = (n for n in [3, 4, 5])\nlimit = 10",
                         "first = next(counts)\ntotal = first + limt")
    batch_cli.main([src, "-o", str(workdir / "uncopied.out.ipynb"), "--no-plain"])
    said = capsys.readouterr().out
    assert "not copied before the cell, so a change it made to them could not be undone: `counts` (it cannot be " \
           "copied (TypeError))" in said, said


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_ends_a_batch_run_in_one_line_with_what_was_done_written(tmp_path, sig):
    """A real `jupyter-fixloop run` stopped while a cell runs: one line, no traceback, the notebook
    and the report written with the cells done so far; the cells not reached keep their saved outputs."""
    import signal
    import time

    nb = new_notebook(cells=[new_code_cell("print('one')"), new_code_cell("import time\ntime.sleep(300)"),
                             new_code_cell("print('three')")])
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="three\n")]
    nb.cells[2].execution_count = 7
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "long.ipynb"
    nbformat.write(nb, str(src))
    report = tmp_path / "long.md"
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_fixloop.cli", "run", str(src), "--report", str(report)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    seen = ""
    while "cell 1: ok" not in seen:
        line = proc.stderr.readline()
        assert line, f"the run ended before cell 1 was done: {seen}"
        seen += line
    time.sleep(3)  # into cell 2's sleep
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + getattr(signal, sig).value, err
    assert "Traceback" not in err and out == "", err
    (line,) = [ln for ln in err.splitlines() if "stopped" in ln]
    assert line.startswith(f"jupyter-fixloop run: {src}: stopped by {sig} after 1 of 3 code cells")
    assert len(err.splitlines()) == 1, err
    cells = nbformat.read(str(tmp_path / "long.fixed.ipynb"), as_version=4).cells
    assert text_of(cells[0]) == "one"
    assert text_of(cells[2]) == "three" and cells[2].execution_count == 7
    assert f"stopped by {sig} after 1 of 3 code cells" in report.read_text()


def test_a_notebook_kernel_that_is_gone_is_said_as_such_not_an_attribute_error(tmp_path):
    """nbclient drops its kernel client when the kernel is shut down: running a cell or a helper then
    raises KernelDied (the batch run skips the cells after it), not AttributeError on None."""
    import asyncio

    from jupyter_fixloop.batch.run import KernelDied, NotebookKernel

    nb = new_notebook(cells=[new_code_cell("x = 1")])
    kernel = NotebookKernel(nb, str(tmp_path), 30, None, str(tmp_path))
    assert kernel.client.kc is None
    for attempt in (kernel.run(0, nb.cells[0], "x = 1"), kernel.call("save", ["x"])):
        with pytest.raises(KernelDied, match="the notebook's kernel is gone"):
            asyncio.run(attempt)
    assert nb.cells[0].source == "x = 1" and not nb.cells[0].outputs


def test_an_empty_color_string_in_a_function_an_earlier_cell_defines_is_repaired_there(workdir, capsys):
    """matplotlib 3.2 said a string of one-letter colors (`''`: none) is to be an explicit list; the error is
    raised in the cell calling the function, the string is in the cell defining it: that cell is changed.
    Unverified (exit 3): the cell below runs now, but checks no values (issue 52)."""
    pytest.importorskip("matplotlib")
    src = write_notebook(
        workdir / "hollow.ipynb",
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt",
        "def outline(xs, ys):\n    return plt.scatter(xs, ys, c='', edgecolors='navy', marker='s', s=40)",
        "dots = outline([0, 1, 2], [2, 1, 0])\nfaces = len(dots.get_facecolors())\nprint(faces)")
    out = str(workdir / "hollow.out.ipynb")

    assert batch_cli.main([src, "-o", out]) == 3, capsys.readouterr()
    assert "later cells run now" in nbformat.read(out, as_version=4).cells[1].metadata["fixloop"]["reason"]
    nb = nbformat.read(out, as_version=4)
    assert "plt.scatter(xs, ys, c=[], edgecolors='navy', marker='s', s=40)" in nb.cells[1].source
    assert text_of(nb.cells[2]) == "0"  # no face colors: hollow markers, as the old matplotlib drew them


def test_a_fitted_attribute_missing_after_the_cell_that_fits_failed_is_that_cells_failure(workdir, capsys):
    """`model.coef_` after the cell that should have fitted `model` failed (its data never loaded): skipped and
    blamed on that cell, as plain Jupyter leaves it; never "fixed" into `model.score` or a parameter."""
    pytest.importorskip("sklearn")
    src = write_notebook(
        workdir / "unfitted.ipynb",
        "import pandas as pd\ndata = pd.read_csv('no_such_file_here.csv')",
        "from sklearn.linear_model import LinearRegression\nmodel = LinearRegression()\n"
        "model.fit(data[['x']], data['y'])",
        "model.coef_",
        "print('independent')",
    )
    code = batch_cli.main([src, "--max-rounds", "1"])
    assert code == 1
    nb = nbformat.read(str(workdir / "unfitted.fixed.ipynb"), as_version=4)
    assert nb.cells[2].source == "model.coef_" and "fixloop" not in nb.cells[2].metadata
    assert "AttributeError" in text_of(nb.cells[2])
    assert text_of(nb.cells[3]) == "independent"
    printed = capsys.readouterr().out
    assert "1 ok, 1 failed, 2 skipped" in printed, printed



def test_a_column_the_failed_cell_should_have_added_is_that_cells_failure_not_a_repair(workdir, capsys):
    """`elements[["judge_goe"]]` after the cell assigning `elements["judge_goe"] = ...` failed (round four's
    figure-skating notebook: that cell timed out, and the later cell was "repaired" into showing other columns,
    against its saved output): skipped and blamed on that cell, the key named; a KeyError of a key no failed
    cell assigns is still repaired."""
    src = write_notebook(
        workdir / "column.ipynb",
        "import pandas as pd\nelements = pd.DataFrame({'season': [2016, 2017], 'score': [1.0, -1.0]})",
        "elements['judge_goe'] = elements['score'] * goe_factor",
        "elements[['season', 'judge_goe']]",
        "print(elements['Score'].sum())",
    )
    report = str(workdir / "column.md")
    code = batch_cli.main([src, "--max-rounds", "1", "--report", report])
    assert code == 1
    nb = nbformat.read(str(workdir / "column.fixed.ipynb"), as_version=4)
    assert nb.cells[2].source == "elements[['season', 'judge_goe']]" and "fixloop" not in nb.cells[2].metadata
    assert "KeyError" in text_of(nb.cells[2])
    assert ("it fails because cell 2, which was not fixed, did not make `judge_goe` of `elements`"
            in Path(report).read_text())
    assert text_of(nb.cells[3]) == "0.0"  # a key no failed cell assigns: the slip is repaired
    printed = capsys.readouterr().out
    assert "1 skipped" in printed, printed

def test_a_helper_that_raises_in_the_kernel_leaves_that_cell_as_plain_jupyter_does_and_the_run_goes_on(workdir,
                                                                                                        capsys):
    """A helper raising in the notebook's kernel (here: a value whose `__class__` lookup raises, which the
    summary of the user's data reads) is not "install jupyter-fixloop": the cell it was for is left failed,
    and the cells after it run."""
    src = write_notebook(
        workdir / "helper.ipynb",
        "class Trap:\n    @property\n    def __class__(self):\n        raise RecursionError('deep')\ntrap = Trap()",
        "print(undefined_thing)",
        "print('after')",
    )
    code = batch_cli.main([src, "--max-rounds", "1"])
    printed = capsys.readouterr()
    assert code == 1 and "install jupyter-fixloop" not in printed.err + printed.out
    nb = nbformat.read(str(workdir / "helper.fixed.ipynb"), as_version=4)
    assert text_of(nb.cells[2]) == "after"
    assert "fixloop's helper raised in the notebook's kernel (RecursionError" in printed.out + printed.err, printed


def test_a_cell_the_network_fails_asks_no_model_and_says_why(workdir, fake_model):
    """A cell whose own run cannot reach the network: no change to it can make it run here, so no round is
    spent on it (no model call), and the report says what to do."""
    server = fake_model("```python\ndata = b''\n```")
    src = write_notebook(workdir / "net.ipynb", "import urllib.request",
                         "data = urllib.request.urlopen('http://data.invalid/wine.csv').read()", "print(len(data))")
    out, report = str(workdir / "net.out.ipynb"), str(workdir / "net.md")

    assert batch_cli.main([src, "-o", out, "--report", report, "--model", "openai/scripted",
                           "--api-base", server.url, "--accept-unreviewed"]) == 1

    assert server.requests == []
    with open(report) as f:
        said = f.read()
    assert "the cell needs the network, which the notebook's kernel did not reach here" in said, said
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == "data = urllib.request.urlopen('http://data.invalid/wine.csv').read()"


def test_a_following_cell_that_needs_the_network_is_not_said_of_the_failing_cell(workdir, capsys):
    """The cell's own failure says why it was not fixed: a later cell that cannot reach the network (run
    after it in the sandbox, as a check) does not make batch mode say the failing cell needs the network."""
    src = write_notebook(workdir / "later.ipynb", "import urllib.request\nrows = [3, 1, 2]",
                         "raise ValueError('the rows are not sorted')",
                         "page = urllib.request.urlopen('http://data.invalid/rows.csv').read()")
    out = str(workdir / "later.out.ipynb")

    assert batch_cli.main([src, "-o", out]) == 1

    said = capsys.readouterr().out
    cell_2 = next(line for line in said.splitlines() if line.startswith("  cell 2:"))
    assert "needs the network" not in cell_2, cell_2
    cell_3 = next(line for line in said.splitlines() if line.startswith("  cell 3:"))
    assert "needs the network" in cell_3, cell_3


def test_an_instruction_on_the_built_in_engine_runs_its_code_as_written_and_says_nothing_was_generated(
        workdir, capsys):
    """The built-in engine writes no code from an instruction: the code below it runs as written (nothing
    is said to have raised), an instruction with nothing below is skipped in those words, and plain Jupyter's
    count leaves out the cells it refused (`%%fixloop` is no magic there: a UsageError on stderr)."""
    src = write_notebook(
        workdir / "instructed.ipynb",
        "orders = [('Munich', 1), ('Munich', 1), ('Berlin', 2)]",
        "%%fixloop drop duplicate orders and count orders per city\nunique = sorted(set(orders))",
        "%%fixloop count orders per city",
        "print(len(unique))",
    )
    report = workdir / "instructed.md"
    code = batch_cli.main([src, "--report", str(report)])
    printed = capsys.readouterr().out
    text = report.read_text()
    nb = nbformat.read(str(workdir / "instructed.fixed.ipynb"), as_version=4)
    assert "2" in text_of(nb.cells[3])  # the body ran in the notebook's kernel: `unique` was there for cell 4
    assert "does not generate code from an instruction" in text and "ran as written" in text
    assert "no code below its instruction to run" in text
    assert "generation requested" not in text + printed and "before it raised" not in text
    # plain Jupyter: cell 1 (UsageError twice); cell 4 reads `unique`, which only batch mode's run made: unknown
    assert "3 cells run (plain Jupyter: 1; 1 unknown)" in printed
    assert code != 0  # the empty instruction cell was not run


def test_a_notebook_saved_with_a_kernel_not_installed_runs_in_python3_and_says_so(workdir, capsys):
    """A 2016 notebook's `python2` kernelspec: run in the default Python 3 kernel (as JupyterLab offers
    another kernel), in one line; `--max-rounds 0` is refused (it would repair nothing, silently)."""
    src = write_notebook(workdir / "old.ipynb", "prices = [3, 4]\ntotal = sum(price)", "print(total)")
    nb = nbformat.read(src, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python2", "display_name": "Python 2", "language": "python"}
    nbformat.write(nb, src)
    report = workdir / "old.md"
    assert batch_cli.main([src, "--report", str(report)]) in (0, 3)
    captured = capsys.readouterr()
    assert "the notebook's kernel `python2` is not installed here: run in `python3` instead" in captured.err
    assert "--kernel chooses" in report.read_text()
    assert "sum(prices)" in nbformat.read(str(workdir / "old.fixed.ipynb"), as_version=4).cells[0].source
    assert batch_cli.main([src, "--max-rounds", "0"]) == 2
    assert "--max-rounds" in capsys.readouterr().err


def test_the_report_lists_every_candidate_of_a_round_and_how_each_ended():
    """Issue 52: the report showed only a round's carried-on answer, not the others tried."""
    from jupyter_fixloop.batch import report
    from jupyter_fixloop.batch.run import BatchResult, CellOutcome
    from jupyter_fixloop.receipt.values import Receipt
    from jupyter_fixloop.result import LoopResult, Round, Sample

    rnd = Round(index=1, candidate="total = sum(prices)\n", receipt=Receipt(kind="ok", text="ran without error"),
                source="rules", samples=(
                    Sample(code="total = sum(price)\n", temperature=0.2, verdict="NameError: name 'price' is not "
                           "defined", kind="exception"),
                    Sample(code="total = sum(prices)\n", temperature=None, verdict="ran without error", kind="ok",
                           source="rules")))
    result = LoopResult(status="unverified", source="total = sum(price)\n", patched="total = sum(prices)\n",
                        rounds=[rnd], model="openai/scripted", max_rounds=4)
    outcome = CellOutcome(2, "unverified", "total = sum(price)", "total = sum(prices)", "NameError: x", "runs",
                          result, 1.0)
    text = report.markdown_report(BatchResult("nb.ipynb", (outcome,), 1.0, "openai/scripted"), "out.ipynb")
    assert "every candidate of this round, and how it ended:" in text
    assert "the model at T=0.2: exception: NameError: name 'price' is not defined" in text
    assert "the built-in rules (carried on): ok: ran without error" in text


def test_the_report_says_what_each_loop_rests_on_and_every_candidate_tried(workdir, fake_model):
    """Issue 52: the report renders each touched cell's account (what verified it, what the guard took out,
    what was kept, which bound stopped it) and every candidate of a round with how each ended, in Markdown
    and HTML. Real kernels; the rules beside the scripted model."""
    server = fake_model("```python\ntotal = sum(p for p in prices)\n```",  # cell 2, beside the rules' repair
                        "```python\navg = total / 3\nassert avg == 4\n```",  # cell 4: the copied check goes
                        "```python\nz = 3\n```")  # cell 5: wrong again, one round
    src = write_notebook(workdir / "account.ipynb", "prices = [3, 4, 5]", "total = sum(price)", "print(total)",
                         '%%fixloop --expect "avg == 4"\navg = total / n_items_in_basket',
                         '%%fixloop --expect "z == 5"\nz = 4')
    md, page = workdir / "account.md", workdir / "account.html"
    flags = ["--model", "openai/scripted", "--api-base", server.url, "--accept-unreviewed", "--max-rounds", "1"]
    assert batch_cli.main([src, "-o", str(workdir / "account.out.ipynb"), "--report", str(md), *flags]) == 1
    text = md.read_text()
    cell2, cell4, cell5 = (text.split(f"## Cell {n}:")[1].split("## Cell")[0] for n in (2, 4, 5))
    assert "- checked by: nothing of yours checked its values" in cell2
    assert "- runs now, checks no values (no evidence): following cell 3 (`print(total)`)" in cell2
    assert "every candidate of this round, and how it ended:" in cell2
    # the rules' candidate runs beside the model's; on a loaded machine the model's may pass before it starts
    rules = next(line for line in cell2.splitlines() if line.startswith("  - the built-in rules"))
    assert rules == "  - the built-in rules: ok: ran without error" or rules.endswith(
        "not run: another sample of this round passed first"), cell2
    assert "  - the model at T=0.2 (carried on): ok: ran without error" in cell2
    assert "- kept: round 1's candidate, by the model" in cell2
    assert "- checked by: your check (--expect)" in cell4
    assert "- the guard took out: 1 statement copied from your checks" in cell4
    assert "- kept: the cell as written (no candidate is handed over)" in cell5
    assert "- stopped by: its rounds (max rounds)" in cell5 and "stopped by" not in cell2 + cell4
    server = fake_model("```python\ntotal = sum(p for p in prices)\n```", "```python\navg = total / 3\n```",
                        "```python\nz = 3\n```")
    flags[3] = server.url
    batch_cli.main([src, "-o", str(workdir / "account.out.ipynb"), "--report", str(page), *flags])
    shown = page.read_text()
    assert "<li>checked by: your check (--expect)</li>" in shown
    assert "<li>stopped by: its rounds (max rounds)</li>" in shown
    assert "<li>the model at T=0.2 (carried on): ok: ran without error</li>" in shown


def test_data_read_from_a_git_lfs_pointer_is_said_not_there_and_never_sent_to_a_model(tmp_path, fake_model):
    """A repository cloned without its large files: `data/temps.csv` is three lines of a Git LFS pointer. The cells
    that fail on what was read from it (directly, or through names made from it) are left with what to do; no
    model is asked to make up the data's columns, and a cell on other data is still repaired as usual."""
    from jupyter_fixloop.batch.run import BatchOptions, Left, fix_notebook, read_notebook
    from jupyter_fixloop.options import LoopOptions
    from jupyter_fixloop.sandbox.runtime import run_sync

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "temps.csv").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:45c0304801\nsize 91141\n")
    path = write_notebook(
        tmp_path / "lfs.ipynb",
        "import pandas as pd\ntemps = pd.read_csv('data/temps.csv')\ntemps.head()",
        "print(temps['actual'].mean())",
        "doubled = temps * 2",
        "print(doubled['actual'].max())",
        "other = pd.DataFrame({'price': [1, 2]})\nprint(other['prise'].sum())",
        "doubled.to_csv('derived.csv')",
        "again = pd.read_csv('derived.csv')\nprint(again['actual'].sum())",  # a file written from the pointer's text
    )
    server = fake_model("```python\nother = pd.DataFrame({'price': [1, 2]})\nprint(other['price'].sum())\n```")
    nb = read_notebook(path)
    options = BatchOptions(loop=LoopOptions(model="openai/scripted", api_base=server.url), plain=False)
    by = {o.number: o for o in run_sync(fix_notebook(nb, path, options)).outcomes}
    assert [by[n].status for n in (1, 3, 6)] == ["ok", "ok", "ok"]
    for n in (2, 4, 7):
        assert by[n].status == "failed" and by[n].left is Left.NO_FILE, by[n]
        assert "`data/temps.csv` holds a Git LFS pointer, not the data" in by[n].reason
        assert "`git lfs pull`" in by[n].reason and by[n].error.startswith("KeyError")
    assert by[5].left is None and by[5].status in ("fixed", "unverified", "proposed"), by[5]
    prompts = [server.prompt(i) for i in range(len(server.requests))]
    # only the cell on other data was asked about (cell 7 shows in its prompt as a later cell that fails)
    assert prompts and all("prise" in p and "temps['actual']" not in p and "doubled['actual']" not in p
                           for p in prompts)


def test_a_cell_whose_reply_says_it_raised_counts_as_failed_in_the_plain_run(tmp_path):
    """A `%%timeit` body that raises: IPython cannot format the traceback (the timed code has no source), prints
    "Unexpected exception formatting exception" on stderr and sends no error output, but its reply is an error and
    Jupyter's Run All stops there. Counted as run, plain Jupyter's count was one over batch mode's (06-Performance of
    augspurger-pandas-head-to-tail: 37 vs 38 when the `DataFrame.append` in its `%%timeit` was not repaired)."""
    import asyncio

    from jupyter_fixloop.batch.run import plain_errors

    timed = "%%timeit\nimport pandas as pd\npd.DataFrame().append(1)"
    nb = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell(timed), new_code_cell("print(x)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    errors = asyncio.run(plain_errors(nb, str(tmp_path), 120, None, str(tmp_path)))
    assert errors[1] is None and errors[3] is None
    assert errors[2].startswith("AttributeError: 'DataFrame' object has no attribute 'append'"), errors


def test_a_kernelspec_language_python3_is_a_python_notebook(tmp_path):
    """Some Jupyter versions saved `kernelspec.language` as `python3`: still Python; an R notebook is refused."""
    from jupyter_fixloop.batch.run import NotebookError, read_notebook

    for language, refused in (("python3", False), ("Python", False), ("python", False), ("R", True)):
        nb = new_notebook(cells=[new_code_cell("x = 1")])
        nb.metadata["kernelspec"] = {"name": "k", "display_name": "K", "language": language}
        path = tmp_path / f"{language}.ipynb"
        nbformat.write(nb, str(path))
        if refused:
            with pytest.raises(NotebookError, match="fixloop repairs Python notebooks"):
                read_notebook(str(path))
        else:
            assert read_notebook(str(path)).cells[0].source == "x = 1"


def test_a_plain_run_that_ends_at_a_crash_counts_no_cell_it_did_not_reach(tmp_path):
    """ipython-in-depth's "Running Code" crashes its kernel (`libc.time(-1)`) in cell 12; nbclient's plain run ends
    there. The cells below kept their saved execution counts and outputs in the run's copy, and were counted as run
    (plain 9 of 9, batch mode 7): a cell the run does not reach is not run, and shows no saved output as its own."""
    import asyncio

    from jupyter_fixloop.batch.run import plain_errors, run_plainly

    crash = "import sys\nfrom ctypes import CDLL\nlibc = CDLL('libc.so.6')\nlibc.time(-1)"
    saved = [("a = 10", None), ("print(a)", "10\n"), (crash, None), ("print('hi, stdout')", "hi, stdout\n")]
    nb = new_notebook(cells=[new_code_cell(src, execution_count=n, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=out)] if out else [])
        for n, (src, out) in enumerate(saved, 1)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    errors = asyncio.run(plain_errors(nb, str(tmp_path), 60, None, str(tmp_path)))
    assert errors == {1: None, 2: None, 3: "DeadKernelError: the kernel died while it ran"}, errors
    ran = asyncio.run(run_plainly(nb, str(tmp_path), 60, None, str(tmp_path)))
    assert ran.cells[3].outputs == [] and ran.cells[3].execution_count is None
    assert nb.cells[3].outputs and nb.cells[3].execution_count == 4  # the notebook given is not changed


def test_a_repair_that_no_longer_raised_the_cells_error_but_another_is_said_with_both(tmp_path):
    """ipython-in-depth: `from IPython import parallel` repaired, the cell then raised for the cluster it needs, and
    the report said only "the built-in engine has no repair for this". Now: both errors, and, for a package not
    installed, what to install; the cell is left as it was."""
    from jupyter_fixloop.batch.run import BatchOptions, fix_notebook, read_notebook
    from jupyter_fixloop.sandbox.runtime import run_sync

    path = write_notebook(tmp_path / "past.ipynb",
                          "import numpy as np\nx = np.product([1, 2])\nimport no_such_module_for_fixloop_tests")
    nb = read_notebook(path)
    outcome = run_sync(fix_notebook(nb, path, BatchOptions(plain=False))).outcomes[0]
    assert outcome.status == "failed" and outcome.error.startswith("AttributeError"), outcome
    assert ("a repair (round 1) no longer raised `AttributeError: module 'numpy' has no attribute 'product'` "
            "but raised `ModuleNotFoundError: No module named 'no_such_module_for_fixloop_tests'`: "
            "not applied") in outcome.reason
    assert "`pip install no_such_module_for_fixloop_tests`" in outcome.reason, outcome.reason
    assert nb.cells[0].source == "import numpy as np\nx = np.product([1, 2])\nimport no_such_module_for_fixloop_tests"

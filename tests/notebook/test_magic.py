"""`%%fixloop` inside a real ipykernel, with the built-in engine (no key, no network)."""

import os
import signal
import threading
import time

import pytest
from kernel import UserKernel


@pytest.fixture(scope="module")
def kernel():
    k = UserKernel()
    assert k.run("%load_ext jupyter_fixloop").ok
    yield k
    k.close()


def test_name_typo_is_fixed_through_the_magic(kernel):
    kernel.run("monthly_sales = [120, 80, 100]")
    run = kernel.run("%%fixloop --expect 'total == 300'\ntotal = sum(monthly_sale)\n")
    assert run.ok
    assert "fixloop: fixed" in run.text
    assert "+total = sum(monthly_sales)" in run.text
    assert (
        kernel.run("print(_fixloop.status, _fixloop.patched.strip())").text.strip()
        == "fixed total = sum(monthly_sales)"
    )
    # the candidate ran in the sandbox only: the user's kernel has no `total`
    assert "NameError" in kernel.run("total").text


def test_missing_pandas_import_is_fixed(kernel):
    run = kernel.run("%%fixloop --expect 'len(frame) == 2'\nframe = pd.DataFrame({'a': [1, 2]})\n")
    assert "fixloop: fixed" in run.text, run.text
    assert "+import pandas as pd" in run.text


def test_dataframe_column_typo_is_fixed(kernel):
    kernel.run("import pandas as pd\nsales = pd.DataFrame({'Region': ['n', 's'], 'amount': [3, 4]})")
    run = kernel.run("%%fixloop\nby_region = sales.groupby('region')['amount'].sum()\n")
    assert "fixloop: runs now — unverified: nothing checked it" in run.text, run.text  # a near match: a guess
    assert "a guess: Replace a dict key or DataFrame column" in run.text
    assert "+by_region = sales.groupby('Region')['amount'].sum()" in run.text
    assert "near matches for 'region': 'Region' (case)" in run.text


def test_passing_cell_runs_in_user_kernel_unless_dry(kernel):
    run = kernel.run("%%fixloop --expect 'y == 6'\ny = 2 * 3\nprint('y is', y)\n")
    assert "already passes" in run.text and "y is 6" in run.text
    assert kernel.run("print(y)").text.strip() == "6"
    kernel.run("%%fixloop --dry\nz_dry = 1\n")
    assert "NameError" in kernel.run("z_dry").text


def test_fixloop_last_inserts_the_patch_as_next_cell(kernel):
    kernel.run("counts = {'apples': 3}")
    kernel.run("%%fixloop\nn = counts['Apples']\n")
    reply = kernel.run("%fixloop last").reply
    payloads = reply["content"]["payload"]
    assert payloads and payloads[0]["source"] == "set_next_input"
    assert payloads[0]["text"] == "n = counts['apples']"


def test_timeout_stops_a_hanging_cell_and_the_user_kernel_answers(kernel):
    run = kernel.run("%%fixloop --timeout 2 --max-rounds 0\nwhile True:\n    pass\n")
    assert "Timeout: the cell was still running after 2 s" in run.text
    started = time.perf_counter()
    assert kernel.run("print(40 + 2)").text.strip() == "42"
    assert time.perf_counter() - started < 5


def test_bad_arguments_give_a_usage_error_and_keep_the_cell(kernel):
    run = kernel.run("%%fixloop --max-rounds many\nx = 1\n")
    assert not run.ok
    assert "UsageError" in run.text and "--max-rounds" in run.text


def test_a_bad_number_of_samples_is_a_usage_error(kernel):
    run = kernel.run("%%fixloop --samples 9\nx = 1\n")
    assert not run.ok
    assert "UsageError" in run.text and "samples must be a whole number from 1 to 8" in run.text


def test_instruction_with_builtin_engine_says_a_model_is_needed(kernel):
    run = kernel.run("%%fixloop\nwrite a function that adds two numbers\n")
    assert "no_repair" in run.text and "No code" not in run.text
    assert "cannot write code from an instruction" in run.text


def test_a_passing_cell_with_top_level_await_is_verified_and_not_run_from_the_magic(kernel):
    run = kernel.run("%%fixloop --expect 'z == 7'\nimport asyncio\nawait asyncio.sleep(0)\nz = 7")
    assert run.ok and "fixloop: already passes" in run.text, run.text
    # IPython cannot run it from inside a magic (its loop is running): said, not a RuntimeError
    assert "top-level await" in run.text and "run it without the %%fixloop line" in run.text
    assert "RuntimeError" not in run.text


def test_interrupting_the_kernel_stops_the_loop_itself(fake_model):
    """The stop button must stop the loop, not only the wait for it: no model call after it."""
    from fake_model import Scripted

    server = fake_model(Scripted("```python\ntotal = sum(monthly_sale) + 0\n```", delay=3.0))  # slow, wrong
    k = UserKernel()  # started after fake_model set OPENAI_API_KEY
    try:
        assert k.run(f"%load_ext jupyter_fixloop\n%config FixLoop.api_base = '{server.url}'\n"
                     "monthly_sales = [120, 80, 100]").ok

        def interrupt_when_asked():
            deadline = time.monotonic() + 120
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(k.pid(), signal.SIGINT)  # what the stop button does (interrupt_mode 'signal')

        threading.Thread(target=interrupt_when_asked, daemon=True).start()
        run = k.run("%%fixloop -m openai/scripted --no-rules -r 4 -e 'total == 300'\ntotal = sum(monthly_sale)")
        assert not run.ok and run.reply["content"]["ename"] == "KeyboardInterrupt"
        traceback = [line for kind, content in run.outputs if kind == "error" for line in content["traceback"]]
        assert traceback == ["fixloop: stopped (interrupted); the cell was not changed and nothing ran in this "
                             "kernel"]  # one line, not 40 through the loop's insides
        time.sleep(8)  # the first reply arrives after 3 s: a loop still running would ask again
        assert len(server.requests) == 1
        assert k.run("print(1 + 1)").text.strip() == "2"  # the kernel is usable
    finally:
        k.close()


def test_ctrl_c_in_terminal_ipython_stops_the_loop_in_one_line_without_a_traceback(fake_model, tmp_path):
    """Issue 52: Ctrl-C during `%%fixloop` in terminal IPython printed a 40-line traceback through fixloop's
    internals. A real IPython on a pseudo-terminal (pexpect, which IPython itself depends on), SIGINT while the
    model is asked, as Ctrl-C sends it: one line, no traceback, the shell usable."""
    import sys

    import pexpect
    from fake_model import Scripted

    server = fake_model(Scripted("```python\ntotal = sum(monthly_sale) + 0\n```", delay=5.0))  # slow, wrong
    env = dict(os.environ, FIXLOOP_DATA_DIR=str(tmp_path))
    # poll, not select: in a whole-suite run the pty's descriptor can be past select's 1,024
    shell = pexpect.spawn(sys.executable, ["-m", "IPython", "--simple-prompt", "--colors=NoColor"], env=env,
                          encoding="utf-8", timeout=240, use_poll=True)
    try:
        for line in ("%load_ext jupyter_fixloop", f"%config FixLoop.api_base = '{server.url}'",
                     "monthly_sales = [120, 80, 100]"):
            shell.expect(r"In \[\d+\]: ")
            shell.sendline(line)
        shell.expect(r"In \[\d+\]: ")
        # the cell magic on one line (a simple prompt ends a cell at its first line)
        line = "-m openai/scripted --no-rules -r 4 -e 'total == 300'"
        shell.sendline(f"get_ipython().run_cell_magic('fixloop', {line!r}, 'total = sum(monthly_sale)')")
        deadline = time.monotonic() + 120
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the loop never asked the model"
        shell.kill(signal.SIGINT)  # what Ctrl-C sends
        shell.expect(r"In \[\d+\]: ")
        shown = shell.before
        assert "fixloop: stopped (interrupted); the cell was not changed and nothing ran in this kernel" in shown
        assert "Traceback" not in shown and "jupyter_fixloop" not in shown and "KeyboardInterrupt" not in shown, shown
        shell.sendline("print(1 + 1)")
        shell.expect(r"In \[\d+\]: ")
        assert "2" in shell.before.splitlines()[1:]  # the shell is usable
    finally:
        shell.close(force=True)


def test_help_prints_the_magics_help_and_does_not_run_the_cell(kernel):
    for flag in ("--help", "-h"):
        run = kernel.run(f"%%fixloop {flag}\nhelp_ran = 1\n")
        assert run.ok, run.text
        assert "--expect EXPR" in run.text and "--max-rounds" in run.text and "Example::" in run.text
        assert "NameError" in kernel.run("help_ran").text  # the cell did not run, here or in a sandbox
    listing = kernel.run("%fixloop history").text
    assert "help_ran" not in listing  # and no loop was started


def config_rows(text: str) -> dict[str, list[str]]:
    """`%fixloop config`'s rows, `FixLoop.name = value  from` -> {name: [value, from...]}."""
    return {words[0].removeprefix("FixLoop."): words[2:] for words in map(str.split, text.splitlines())
            if words and words[0].startswith("FixLoop.") and words[1:2] == ["="]}


def test_fixloop_config_is_a_table_of_values_and_where_they_came_from(kernel):
    run = kernel.run("%fixloop config")
    assert run.ok and run.text.splitlines()[0].split() == ["setting", "from"]
    rows = config_rows(run.text)
    assert rows["max_rounds"] == ["4", "default"] and rows["confinement"] == ["'auto'", "default"]
    assert "uses the built-in engine" in run.text and "%fixloop config --help" in run.text
    kernel.run("%config FixLoop.max_rounds = 2")
    try:
        assert config_rows(kernel.run("%fixloop config").text)["max_rounds"] == ["2", "%config"]
        one = kernel.run("%fixloop config max_rounds").text
        assert "Model rounds before the loop gives up." in one and "timeout" not in one
        assert "Total model tokens for one loop" in kernel.run("%fixloop config --help").text
        assert "no setting 'rounds'" in kernel.run("%fixloop config rounds").text
    finally:
        kernel.run("%config FixLoop.max_rounds = 4")


def test_fixloop_config_names_a_value_from_a_config_file(tmp_path, monkeypatch):
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text("c.FixLoop.timeout = 12.0\n")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    k = UserKernel()
    try:
        text = k.run("%load_ext jupyter_fixloop\n%fixloop config").text
        assert config_rows(text)["timeout"] == ["12.0", "config", "file"], text
    finally:
        k.close()


def test_a_line_of_code_with_a_syntax_error_is_repaired_not_taken_as_an_instruction(kernel):
    run = kernel.run("%%fixloop\nprint('the answer is', 6 * 7\n")
    assert "fixloop: runs now — unverified" in run.text, run.text  # no check: it runs, nothing checked it
    assert "+print('the answer is', 6 * 7)" in run.text and "cannot write code from an instruction" not in run.text


def test_fixloop_last_reads_the_history_even_after_the_extension_is_reloaded(kernel):
    kernel.run("stock = {'pears': 5}")
    kernel.run("%%fixloop\nleft = stock['Pears']\n")
    assert kernel.run("%reload_ext jupyter_fixloop").ok  # new magics object: nothing kept on it
    payloads = kernel.run("%fixloop last").reply["content"]["payload"]
    assert payloads and payloads[0]["text"] == "left = stock['pears']"
    assert kernel.run("print(_fixloop.patched.strip())").text.strip() == "left = stock['pears']"


def test_a_headless_run_stores_no_widget_state(tmp_path):
    """nbclient (as nbconvert and papermill) renders no widget: the notebook keeps the HTML/text result
    and the LoopSummary, small, and no widget state."""
    import nbformat
    from nbclient import NotebookClient

    cells = ["%load_ext jupyter_fixloop", "monthly_sales = [120, 80, 100]",
             "%%fixloop --expect 'total == 300'\ntotal = sum(monthly_sale)", "%%fixloop\nprint('x'"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, kernel_name="python3", timeout=240).execute()
    path = tmp_path / "ran.ipynb"
    nbformat.write(nb, str(path))
    assert "widgets" not in nb.metadata
    for cell in nb.cells[2:]:
        results = [o["data"] for o in cell.outputs if "application/vnd.jupyter.fixloop+json" in o.get("data", {})]
        words = "fixloop: fixed" if "--expect" in cell.source else "fixloop: runs now — unverified"
        assert len(results) == 1 and words in results[0]["text/plain"], cell.outputs
        assert "text/html" in results[0] and "application/vnd.jupyter.widget-view+json" not in results[0]
        assert all(
            "text/html" not in o.get("data", {}) or o is cell.outputs[-1] for o in cell.outputs
        )  # no live header left
    assert path.stat().st_size < 16_000, path.stat().st_size  # was ~64 KB a loop with the widget's state


def test_share_gives_the_sandbox_a_name_the_cell_does_not_read(kernel):
    kernel.run("hidden_alpha = 41")
    check = "--expect \"globals().get('hidden_alpha') == 41\""
    run = kernel.run(f"%%fixloop --dry --max-rounds 0 {check}\nx = 1\n")
    assert "already passes" not in run.text, run.text  # read by name from a string: not shared
    run = kernel.run(f"%%fixloop --dry --max-rounds 0 --share hidden_alpha,other {check}\nx = 1\n")
    assert "already passes" in run.text, run.text


def test_a_hosted_model_without_its_key_is_a_usage_error_naming_the_variable(kernel):
    kernel.run("import os; os.environ.pop('ANTHROPIC_API_KEY', None)")
    run = kernel.run("%%fixloop --model anthropic/claude-sonnet-4-5\nx = 1\n")
    assert not run.ok
    assert "UsageError" in run.text and "needs ANTHROPIC_API_KEY" in run.text and "500" not in run.text


def test_a_headless_result_says_the_fix_was_not_applied(kernel):
    kernel.run("prices_na = [3, 4, 5]")
    run = kernel.run("%%fixloop\ntotal_na = sum(price_na)\n")
    assert "fixloop: runs now — unverified" in run.text  # a guess, no check: it runs, nothing verified it
    assert "not applied: `%fixloop last` inserts it as the next cell" in run.text
    html = next(c["data"]["text/html"] for kind,
                c in run.outputs if kind == "display_data" and "text/html" in c["data"])
    assert "not applied: `%fixloop last` inserts it" in html
    assert "NameError" in kernel.run("total_na").text  # and indeed it was not


def test_a_gave_up_html_result_shows_the_original_receipt_open(kernel):
    run = kernel.run("%%fixloop\nratio_go = 1 / 0\n")
    assert "fixloop: gave up" in run.text, run.text
    html = next(c["data"]["text/html"] for kind,
                c in run.outputs if kind == "display_data" and "text/html" in c["data"])
    assert "ZeroDivisionError" in html.split("<details>")[0]  # before the collapsed rounds, not inside them


def test_line_magic_help_prints_the_full_usage_and_an_instruction_runs_as_a_line_magic(kernel):
    helped = kernel.run("%fixloop --help")
    assert helped.ok and "%%fixloop [--expect EXPR]" in helped.text and "--api-base" in helped.text
    assert "%fixloop last" in helped.text and "unknown command" not in helped.text
    run = kernel.run("%fixloop add a column with the total")
    assert "cannot write code from an instruction" in run.text, run.text  # the loop ran, on the built-in engine
    assert "UsageError" in kernel.run("%fixloop histroy").text  # a mistyped command is not an instruction


def test_a_plotting_cell_that_starts_with_a_line_magic_is_repaired_with_the_magic_kept(kernel):
    """`%matplotlib inline` first, then a style matplotlib renamed: the rules read the cell as Python."""
    pytest.importorskip("matplotlib")
    run = kernel.run("%%fixloop\n%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                     "plt.style.use('seaborn-darkgrid')\nfig, ax = plt.subplots()\n")
    assert run.ok, run.text
    patched = kernel.run("print(_fixloop.patched.strip())").text
    assert patched.splitlines()[:3] == ["%matplotlib inline", "import matplotlib.pyplot as plt",
                                        "plt.style.use('seaborn-v0_8-darkgrid')"], patched


def test_shell_and_help_lines_stay_and_the_typo_below_them_is_fixed(kernel):
    run = kernel.run("%%fixloop --expect 'total == 6'\n!pip --version\namounts = [1, 2, 3]\namounts?\n"
                     "total = sum(amonts)\n")
    assert "fixloop: fixed" in run.text, run.text
    patched = kernel.run("print(_fixloop.patched.strip())").text
    assert patched.splitlines() == ["!pip --version", "amounts = [1, 2, 3]", "amounts?", "total = sum(amounts)"]


def test_the_body_of_a_time_cell_magic_is_repaired_inside(kernel):
    """IPython 8's `%%time` prints an error and carries on: the sandbox runs the body itself, so the
    error is seen at its line and the repaired body keeps the magic above it."""
    run = kernel.run("%%fixloop --expect 'ys == [1, 3]'\n%%time\nxs = [3, 1]\nys = sroted(xs)\n")
    assert "fixloop: fixed" in run.text, run.text
    patched = kernel.run("print(_fixloop.patched.strip())").text
    assert patched.splitlines() == ["%%time", "xs = [3, 1]", "ys = sorted(xs)"]


def test_a_timeit_statement_continued_over_two_lines_is_repaired_inside(kernel):
    run = kernel.run("%%fixloop\nimport numpy as np\n%timeit -n 1 -r 1 np.array([1, 2], dtype=np.float) \\\n"
                     "    .sum()\n")
    assert run.ok, run.text
    assert kernel.run("print(_fixloop.patched.strip())").text.splitlines() == [
        "import numpy as np", "%timeit -n 1 -r 1 np.array([1, 2], dtype=float) \\", "    .sum()"]


def test_an_instruction_with_nothing_below_it_is_a_request_not_ipythons_empty_body_error(kernel):
    """IPython refuses a cell magic with an empty body; `%%fixloop <instruction>` alone is the whole request."""
    run = kernel.run("%%fixloop --model fixloop/builtin count the orders per city")
    assert "cell body is empty" not in run.text
    assert "cannot write code from an instruction" in run.text  # the built-in engine's answer to an instruction
    bare = kernel.run("%%fixloop")
    assert "nothing to run: the cell is empty" in bare.text

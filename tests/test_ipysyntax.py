"""Cells with IPython syntax seen as Python line for line (kernel/ipysyntax.py): the view the rules
and the guard read, the code the runner executes, and the way back from a repaired view."""

import ast

import pytest

from jupyter_fixloop.kernel.ipysyntax import ran, readable
from jupyter_fixloop.loop.guard import Guard
from jupyter_fixloop.receipt.values import Receipt
from jupyter_fixloop.rules import repairs

CELLS = {  # a cell -> the line its readable view shows where the cell's IPython line is
    "line_magic": ("%matplotlib inline\nimport math\nr = math.sqrt(4)\n", 0,
                   "get_ipython().run_line_magic('matplotlib', 'inline')"),
    "shell": ("!pip --version\nr = 1\n", 0, "get_ipython().system('pip --version')"),
    "help": ("r = 1\nr?\n", 1, "get_ipython().run_line_magic('pinfo', 'r')"),
    "shell_assigned": ("files = !ls\nn = len(files)\n", 0, "files = get_ipython().getoutput('ls')"),
    "timeit_statement": ("xs = [3, 1]\n%timeit -n 2 -r 1 sorted(xs)\n", 1, "sorted(xs)"),
    "time_indented": ("for i in range(2):\n    %time sorted([i])\n", 1, "    sorted([i])"),
    "timeit_continued": ("xs = [3, 1]\n%timeit sorted(xs) + \\\n    sorted(xs)\ny = 1\n", 1, "sorted(xs) + \\"),
    "cell_time": ("%%time\nxs = [3, 1]\nys = sorted(xs)\n", 0, ""),
    "cell_timeit_setup": ("%%timeit -n 1 -r 1 xs = [3, 1]\nsorted(xs)\n", 0, "xs = [3, 1]"),
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_a_cell_is_read_as_python_line_for_line_and_comes_back_unchanged(name):
    cell, index, seen = CELLS[name]
    view = readable(cell)
    ast.parse(view.python)
    assert len(view.python.splitlines()) == len(cell.splitlines())
    assert view.python.splitlines()[index] == seen
    assert view.back(view.python) == cell
    ran_lines = ran(cell).splitlines()
    assert len(ran_lines) == len(cell.splitlines()), ran(cell)
    ast.parse(ran(cell))


def test_a_repair_inside_a_timeit_statement_keeps_the_magic_and_its_options():
    cell = "xs = [3, 1]\n%timeit -n 2 -r 1 sorted(xz) + \\\n    sorted(xz)\n"
    view = readable(cell)
    assert view.back(view.python.replace("xz", "xs")) == cell.replace("xz", "xs")


def test_a_line_written_above_a_cell_magic_goes_below_it():
    cell = "%%time\nframe = pd.DataFrame({'a': [1]})\n"
    view = readable(cell)
    fixed = view.back("import pandas as pd\n" + view.python)
    assert fixed == "%%time\nimport pandas as pd\nframe = pd.DataFrame({'a': [1]})\n"


def test_a_repair_that_edits_or_drops_a_magic_line_cannot_come_back():
    view = readable("%matplotlib inline\nx = 1\n")
    assert view.back("get_ipython().run_line_magic('matplotlib', 'notebook')\nx = 1\n") is None
    assert view.back("x = 1\n") is None


def test_a_percent_line_inside_a_string_is_python_and_a_non_python_cell_magic_is_not_read():
    cell = "q = '''\n%s rows\n'''\n%matplotlib inline\n"
    assert readable(cell).python.splitlines()[:3] == cell.splitlines()[:3]
    assert readable("%%bash\necho hi\n") is None


def test_the_runner_keeps_line_numbers_after_a_continued_magic():
    cell = "%timeit -n 1 -r 1 sum([1]) + \\\n    sum([2])\nboom = 1 / 0\n"
    lines = ran(cell).splitlines()
    assert lines[2] == "boom = 1 / 0" and lines[1] == ""


def test_the_guard_reads_a_cell_with_magics_and_still_rejects_a_dropped_assert():
    original = "%matplotlib inline\ndef double(v):\n    return v + 1\nassert double(2) == 4\n"
    guard = Guard(original)
    last = Receipt(kind="error", text="AssertionError", ename="AssertionError", evalue="", lineno=4,
                   line="assert double(2) == 4")
    assert guard.check("%matplotlib inline\ndef double(v):\n    return v + 1\n", last).kind == "rejected"
    assert guard.check(original.replace("v + 1", "v * 2"), last) is None


def test_the_rules_repair_a_cell_with_a_magic_line_from_its_receipt():
    cell = "%matplotlib inline\n!pip --version\ndata = [1, 2]\ndata?\nm = max(dtaa)\n"
    receipt = Receipt(kind="exception", text="NameError: name 'dtaa' is not defined", ename="NameError",
                      evalue="name 'dtaa' is not defined", lineno=5, line="m = max(dtaa)",
                      context=("defined names close to 'dtaa': ['data']",))
    repair, fixed, _ = repairs.propose(cell, receipt)
    assert repair is not None and fixed == cell.replace("max(dtaa)", "max(data)")


def test_a_cell_is_parsed_once_and_its_shared_tree_is_never_changed_by_a_run():
    """Issue 52, scale: the runner, its failing-statement facts and the host's readers share one tree per text
    (the same text with or without its final newline too). A run that takes the cell's last expression for its
    value must not take it out of the shared tree: the second run of the same cell shows the value again."""
    from jupyter_fixloop.kernel import ipysyntax, runner

    cell = "x = 1\nx + 1\n"
    assert ipysyntax.parsed(cell) is ipysyntax.parsed(cell.rstrip("\n"))
    assert [runner.run(cell, [], {})["value"] for _ in range(2)] == ["2", "2"]
    assert len(ipysyntax.parsed(cell).body) == 2
    big = "\n".join(f"v{i} = {i}" for i in range(3000)).replace("v2000 = 2000", "v2000 = lenn([1])")
    error = runner.run(big, [], {})["error"]
    assert (error["lineno"], error["line"]) == (2001, "v2000 = lenn([1])")
    assert error["context"][0] == "defined names close to 'lenn': ['len']"  # the failing statement was found
    assert ipysyntax.walk(ipysyntax.parsed(big)) is ipysyntax.walk(ipysyntax.parsed(big))  # walked once

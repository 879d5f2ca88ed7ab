"""rules/said.py `keyword_only_now`: an argument by position where a parameter stood that the library's
notes say is now keyword-only, taken today by a parameter added since (matplotlib 3.4: "The *minor* parameter in
`.Axis.set_ticks` [...] is now keyword-only"; 3.5 added `labels` second, so `ax.set_xticks(ticks, 10)` raises
"labels=10 must be a sequence"). On the real error of today's matplotlib, on cells written for these tests; and a
call the same words refuse that no entry ties to a keyword-only parameter, left."""

import os
import subprocess
import sys

import pytest
import rewriting

from jupyter_fixloop.rules import repairs

pytest.importorskip("matplotlib")
MODULES = {"plt": "matplotlib.pyplot", "matplotlib": "matplotlib"}
SETUP = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"


@pytest.fixture
def ns():
    return {}


def test_a_positional_minor_is_given_as_the_keyword_its_notes_say(ns):
    cell = "ax.set_xticks(range(1, 30), 10)\n"
    first = rewriting.run(ns, cell, SETUP)
    assert not first.ok and "must be a sequence" in first.text
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is not None and repair.__name__ == "keyword_only_now", fixed
    assert fixed == "ax.set_xticks(range(1, 30), minor=10)\n"
    assert repairs.KIND[repair] == repairs.MECHANICAL
    again = rewriting.run(ns, fixed, SETUP)
    assert again.ok, again.text
    # what matplotlib before 3.5 did with it: minor ticks there, the major ones untouched
    assert list(ns["ax"].xaxis.get_minor_locator().locs) == list(range(1, 30))


def test_a_scalar_label_no_entry_ties_to_a_keyword_is_left(ns):
    cell = "ax.set_xticklabels(10)\n"
    first = rewriting.run(ns, cell, SETUP)
    assert not first.ok and "must be a sequence" in first.text
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != "keyword_only_now", fixed


def test_the_classes_are_found_where_the_kernel_is_another_process():
    """In batch mode the kernel is another process: this one has not imported pyplot, whose `Axes` the receipt's
    value names, until the rule imports the modules the notebook imported."""
    script = ("import sys\nfrom jupyter_fixloop.rules.said import keyword_only_now\n"
              "from jupyter_fixloop.rules.edits import ParsedReceipt\n"
              "assert 'matplotlib.axes' not in sys.modules\n"
              "r = ParsedReceipt('h', ename='TypeError', evalue='labels=10 must be a sequence', lineno=1,"
              " values={'ax': '<Axes: >'}, modules={'plt': 'matplotlib.pyplot'}, libraries=('matplotlib',))\n"
              "print(keyword_only_now('ax.set_xticks(range(3), 10)\\n', r), end='')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ax.set_xticks(range(3), minor=10)\n"

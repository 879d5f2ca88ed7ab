"""The cell that caused it: batch mode changes the earlier cell whose silent mistake makes a later cell
fail, from the state before that cell, and the bench over the shipped notebooks says where each
planted bug was repaired."""

import os
import shutil

import nbformat
from fixloop_bench.causes import SHIPPED, where

from jupyter_fixloop.batch.run import BatchOptions, CellOutcome, fix_notebook, read_notebook
from jupyter_fixloop.cell import suspects
from jupyter_fixloop.options import LoopOptions
from jupyter_fixloop.sandbox.runtime import run_sync


def test_suspects_are_the_cells_that_wrote_what_the_failing_cell_reads_nearest_first():
    earlier = [(1, "import pandas as pd"), (2, "df = pd.read_csv('x.csv')"), (3, "other = 1"),
               (4, "df[df['a'] > 1]['b'] = 0"), (5, "total = df['b'].sum()"), (6, "print(other)")]
    assert suspects(earlier, {"total"}) == [5, 4, 2]  # then what cell 5 read: df, written by 4 and 2


def test_the_cells_down_to_a_failure_judge_a_change_to_the_cell_that_caused_it():
    """`downstream`: the cells below must run, also after the original (none is excused)."""
    import pandas as pd

    from jupyter_fixloop import fix

    orders = pd.DataFrame({"qty": [1, 5, 1, 8], "vip": [True, False, False, False]})
    result = fix("priority = orders[orders['qty'] > 4 | orders['vip']]", namespace={"orders": orders},
                 downstream=["assert len(priority) == 3, len(priority)"])
    assert not result.first.ok and "following cell 1" in result.first.text
    assert result.status == "fixed" and "following cell 1" in result.reason
    assert result.patched.strip() == "priority = orders[(orders['qty'] > 4) | orders['vip']]"


def test_a_chained_assignment_is_repaired_in_its_cell_and_the_cells_below_run_again(tmp_path):
    path = tmp_path / "chained.ipynb"
    shutil.copy(os.path.join(SHIPPED, "chained_rows_then_column.ipynb"), path)
    nb = read_notebook(str(path))
    planted = nb.metadata["fixloop_bench"]
    result = run_sync(fix_notebook(nb, str(path), BatchOptions(loop=LoopOptions(), plain=False)))
    by = {o.number: o for o in result.outcomes}
    cause, symptom = by[planted["cause"]], by[planted["symptom"]]
    # pandas warns at the cause (ChainedAssignmentError): batch mode repairs it there as a cell that runs but
    # looks wrong, verified by the cell below it that reads the column, before the symptom is ever reached
    assert cause.status == "fixed", cause
    assert cause.patched.strip() == "scores.loc[scores['score'] >= 60, 'grade'] = 'pass'"
    assert symptom.status in ("ok", "fixed") and symptom.patched is None, symptom
    # the notebook: the cause cell changed, the cells below it ran on what it wrote
    assert nb.cells[2].source == cause.patched and nb.cells[4].source == symptom.source
    assert nb.cells[3].outputs[0]["text"] == "2 passed\n"
    assert not [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert nb.cells[2].metadata["fixloop"]["decision"] == "accepted"
    nbformat.validate(nb)


def test_the_bench_tells_a_repair_at_the_symptom_from_one_at_the_cause():
    o = CellOutcome
    assert where([o(2, "ok", "a"), o(4, "fixed", "assert x\nb", "b2")], 2, 4)[0] == "symptom (weakened)"
    assert where([o(2, "ok", "a"), o(4, "unverified", "b", "c")], 2, 4)[0] == "symptom"
    assert where([o(2, "fixed", "a", "a2"), o(4, "fixed", "b")], 2, 4)[0] == "right cell"
    assert where([o(2, "ok", "a"), o(4, "failed", "b")], 2, 4)[0] == "not repaired"
    # repaired where it ran (pandas warned at the cause): the symptom cell then runs as written
    assert where([o(2, "fixed", "a", "a2"), o(4, "ok", "b")], 2, 4)[0] == "right cell"
    assert where([o(2, "ok", "a"), o(4, "ok", "b")], 2, 4)[0] == "not repaired"  # the bug never surfaced


def test_the_sandbox_says_what_a_filter_a_merge_and_a_concat_matched():
    """Read after the run from the objects the cell used (kernel/matches.py): only when normalising matches more."""
    import ast

    import pandas as pd

    from jupyter_fixloop.kernel import matches

    ns = {"pd": pd, "users": pd.DataFrame({"status": ["active", "inactive", "active"]}),
          "left": pd.DataFrame({"k": ["a1 ", " b2", "a1"]}), "right": pd.DataFrame({"k": ["a1", "b2"]}),
          "jan": pd.DataFrame({"q": [1, 2]}), "feb": pd.DataFrame({"q": ["3", "4"]}),
          "mixed": pd.DataFrame({"q": ["3", "four"]})}

    def facts(code):
        return matches.gather(ast.parse(code), ns)

    assert facts("x = users[users['status'] == 'Active']") == [
        "values near 'Active' in users['status'] (none equal it): 'active' (case)"]
    assert facts("x = users[users['status'] == 'active']") == []  # a value rows hold: nothing to say
    assert facts("users = users[users['status'] == 'Active']") == []  # rebound: not the value the cell saw
    assert facts("users['n'] = 1\nx = users[users['status'] == 'Active']") != []  # changed above it: as seen
    assert facts("j = pd.merge(left, right, on='k')") == [
        "merge keys: left['k'] and right['k'] share 1 of 3 values; with .str.strip() on left['k'] they share 3 of 3"]
    assert facts("b = pd.concat([jan, feb])") == [
        "concat: column 'q' is int64 in jan but str in feb; feb.astype({'q': 'int64'}) converts every value"]
    assert facts("b = pd.concat([jan, mixed])") == []  # 'four' is not a number: no conversion to propose
    assert facts("x = users[users['status'].isin(['Active', 'inactive'])]") == [
        "values near 'Active' in users['status'] (none equal it): 'active' (case)"]
    assert facts("x = 1 + 2") == []


def test_the_rules_repair_a_cell_from_what_it_matched_and_take_nothing_else_from_the_facts():
    from jupyter_fixloop.rules.edits import ParsedReceipt
    from jupyter_fixloop.rules.matches import concat_dtype, filter_value, merge_keys

    def said(*facts):
        return ParsedReceipt("1 check failed", context=facts)

    assert filter_value("a = u[u['s'] == 'Active']\n", said(
        "values near 'Active' in u['s'] (none equal it): 'active' (case)")) == "a = u[u['s'] == 'active']\n"
    assert filter_value("h = t[t['p'].isin(['High', 'low', 'Urgent'])]\n", said(
        "values near 'High' in t['p'] (none equal it): 'high' (case)",
        "values near 'Urgent' in t['p'] (none equal it): 'urgent' (case)")) == (
        "h = t[t['p'].isin(['high', 'low', 'urgent'])]\n")  # every value named, in one round
    fact = "merge keys: o['c'] and c['c'] share 0 of 2 values; with .str.upper() on o['c'] they share 2 of 2"
    assert merge_keys("m = o.merge(c, on='c')\n", said(fact)) == "m = o.assign(c=o['c'].str.upper()).merge(c, on='c')\n"
    both = fact.replace("on o['c']", "on both").replace(".str.upper()", ".str.strip().str.lower()")
    assert merge_keys("m = pd.merge(o, c, on='c')\n", said(both)) == (
        "m = pd.merge(o.assign(c=o['c'].str.strip().str.lower()), "
        "c.assign(c=c['c'].str.strip().str.lower()), on='c')\n")
    assert concat_dtype("b = pd.concat([j, f])\n", said(
        "concat: column 'q' is int64 in j but str in f; f.astype(...) converts every value")) == (
        "b = pd.concat([j, f.astype({'q': 'int64'})])\n")
    # a forged fact writes nothing of its own: a normalisation or a dtype not on the list is not used
    forged = fact.replace(".str.upper()", ".str.upper().str.zfill()")
    assert merge_keys("m = o.merge(c, on='c')\n", said(forged)) is None
    assert concat_dtype("b = pd.concat([j, f])\n", said("concat: column 'q' is os in j but str in f; x")) is None

"""The cell that caused it: batch mode changes the earlier cell whose silent mistake makes a later cell
fail, from the state before that cell, and the bench over the shipped notebooks says where each
planted bug was repaired."""

import os
import shutil

import nbformat

from jupyter_fixloop.batch.run import BatchOptions, CellOutcome, fix_notebook, read_notebook
from jupyter_fixloop.batch.upstream import suspects
from jupyter_fixloop.bench.causes import SHIPPED, where
from jupyter_fixloop.options import LoopOptions
from jupyter_fixloop.runtime import run_sync


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

"""The cell that caused it: a cell that fails because an earlier cell silently did the wrong thing.

A chained assignment that never wrote, a filter that kept no rows, a merge on keys that do not
match: the earlier cell runs, and the error surfaces below it. When batch mode could not fix the
failing cell alone (or only with a repair nothing verified, which a verified change at the cause
then replaces), the loop is asked to change an earlier cell instead: the candidate is that
cell's new source; the sandbox starts from the state before it (rebuilt from the checkpoints of the
cells since, kernel/checkpoint.py), runs it, then every cell down to the failing one, each of which
must run (`fix(downstream=...)`), then the cells after it, as after any repair. The suspects are the
earlier cells that bind or change a name the failing cell reads, then those that feed them, nearest
first, at most 3 (cell.py `suspects`); the first verified change wins.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..cell import suspects
from ..errors import HelperFailed
from ..result import LoopResult
from .cells import CellPlan, cell_names, parse_cell


@dataclass(frozen=True)
class CauseFix:
    """A change to an earlier cell (`number`) that makes the cells below it run, down to `failing`."""

    number: int
    failing: int
    plan: CellPlan  # the earlier cell as it was
    result: LoopResult


def note(number: int, failing: int, error: str) -> str:
    """What every receipt of such a loop says first: which cell this is, and what failed below it."""
    return (f"This is cell {number} of the notebook. It runs, but cell {failing} below it fails ({error}): change "
            f"this cell so that the cells below it run, as written; they are the following cells that must run.")


async def find_cause(run, kernel, failing_index: int, plan: CellPlan, error: str) -> CauseFix | None:
    """The first verified change to an earlier cell that makes the failing cell run, or None.
    `run` is the BatchRun (its notebook, outcomes, options and progress)."""
    from ..loop import afix, expecting

    failing = failing_index + 1
    kept = await kernel.call("kept_from")
    ran = {o.number for o in run.outcomes if o.status in ("ok", "fixed", "unverified")}
    earlier = [(n, run.plan_of(n).code) for n in range(kept or failing, failing) if n in ran and run.plan_of(n)]
    for number in suspects(earlier, cell_names(plan.code)[0]):
        cause = run.plan_of(number)
        if cause.instruction or not cause.code.strip():
            continue
        below = [n for n in range(number + 1, failing) if n in ran and run.plan_of(n)]
        downstream = [run.plan_of(n).code for n in below]
        share = {"code": [cause.code, *downstream, plan.code, *run.later(failing)], "instruction": None,
                 "missing": [], "share": [*run.loop_options.share, *cause.share]}
        try:
            snap = await kernel.mirror(os.path.join(run.snapdir, f"cause-{number}.bin"), share, before=number)
        except HelperFailed:  # this cell's state cannot be copied out: not a cause that can be tried
            continue
        try:
            expect = expecting(following=run.later(failing), downstream=[*downstream, plan.code],
                               numbers=[*below, failing, *(n for n, _ in run.numbered_later(failing))])
            result = await afix(cause.code, namespace=snap, expect=expect, hooks=run.progress.hooks(),
                                notes=(note(number, failing, error),),
                                options=run.loop_options.with_(model=run.model_for(failing, cause.model),
                                                               max_rounds=cause.max_rounds))
        finally:
            os.unlink(snap.path)
        if result.claimed and result.patched and result.patched.strip() != cause.code.strip():
            return CauseFix(number, failing, cause, result)
    return None


def plan_or_none(source: str) -> CellPlan | None:
    try:
        return parse_cell(source)
    except Exception:  # a %%fixloop line that cannot be read: not a suspect
        return None

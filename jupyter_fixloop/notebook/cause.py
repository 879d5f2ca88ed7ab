"""The cell that caused it, in a live session: `%fixloop auto` and the Fix button look above a failure.

When the rules have no repair for the cell that raised, the failure may come from an earlier cell of
the session that silently did the wrong thing (a merge on keys that did not match, a filter on a
value no row holds). The earlier cells are the session's own, in the order they ran (IPython's input
history, by execution count); the suspects are those that wrote a name the failing cell reads, nearest
first (cell.py `suspects`, as in batch mode). A change to one is judged in a sandbox: the
changed cell, then every cell that ran after it down to the failing one, each of which must run, then
the notebook's following cells. It is judged on the state before that earlier cell ran when every
cell since kept the state it started from (auto mode keeps it for the last KEEP_CELLS cells); else it
runs on the state the failing cell started from, and the words say it was not judged on the state
before. The built-in rules look (no tokens, whatever model the failing cell's loop used). Nothing runs
in the kernel: the proposal is words and the diff of the cell it changes. Nothing runs on the user's files
either: the search is not made without a sandbox (`confinement = "none"`, no gateway), where the cells it
runs again would write them for real (UNCONFINED says so instead).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import render
from ..cell import cell_names, suspects
from ..render import visible
from ..result import LoopResult

# the cause search runs the session's cells again (the changed one, those after it, the failing one): in a
# sandbox whose working directory is a scratch copy, or on a gateway; never unconfined, where they would run
# for real, on the user's files
UNCONFINED = ("fixloop: an earlier cell may have caused this; it was not looked for, because that runs cells of the "
              "session again, and without a sandbox (FixLoop.confinement = \"none\") they would run for real, on your "
              "files. Nothing ran again.")
KEEP_CELLS = 4  # cells whose starting state is kept after they ran (the cause of a later failure)
KEEP_TOTAL = 1024**3  # bytes of copies auto mode keeps across cells (those cells and the failed ones): the oldest go
LOOK_BACK = 12  # earlier cells of the session read for a cause


@dataclass(frozen=True)
class Ran:
    """A top-level cell of the session that ran while the state was kept: the state it started from."""

    count: int  # its execution count: In[count]
    source: str
    checkpoint: object | None  # the state it started from (auto mode's Checkpoint), None when not kept
    ok: bool


@dataclass(frozen=True)
class Proposal:
    """A change to cell [count] that makes the cells after it run, down to the failing cell [failing]."""

    count: int
    failing: int | None
    result: LoopResult
    judged: bool  # on the state before cell [count] ran
    between: tuple[int, ...] = ()  # the cells run again after it, before the failing one

    def words(self) -> str:
        failing = f"cell [{self.failing}]" if self.failing else "the failing cell"
        run = ", ".join(f"[{n}]" for n in self.between)
        after = f"cells {run} and {failing}" if run else failing
        state = (f"judged in a sandbox on the state before cell [{self.count}] ran, then {after} run after it"
                 if self.judged else
                 f"NOT judged on the state before cell [{self.count}] (not kept: auto mode keeps the last "
                 f"{KEEP_CELLS} cells' states, within {KEEP_TOTAL / 1024**2:g} MiB of copies across cells); the "
                 f"sandbox ran it on the state {failing} started from, then {after}")
        status = render.status_words(self.result.status, self.result.reason, self.result.unchecked)
        return (f"fixloop: the cause is in cell [{self.count}]. No repair of {failing} itself was found; this "
                f"change to cell [{self.count}], by the built-in rules, makes {after} run ({state}): "
                f"{status}. Nothing ran here or on your files "
                f"(only in the sandbox): to apply it, change cell [{self.count}] as shown and run it and the cells "
                "below it.")

    def bundle(self) -> dict:
        words = self.words()
        diff = self.result.diff
        return {"text/plain": visible(f"{words}\n{diff}"),
                "text/html": f"<div>{render.escaped(words)}</div>"
                             + render.diff_html(self.result.source, self.result.patched or "")}


def earlier(history: list[str], ran: list[Ran], failing: int | None) -> list[tuple[int, str]]:
    """The cells that ran before cell [failing], in order: (count, source), the last LOOK_BACK. A cell run
    while the state was kept must have run without error; one from before is taken from the history."""
    if not failing:
        return []
    known = {r.count: r for r in ran}
    cells = []
    for count in range(max(1, failing - LOOK_BACK), failing):
        r = known.get(count)
        source = r.source if r is not None else (history[count] if count < len(history) else "")
        if source.strip() and (r is None or r.ok) and not source.lstrip().startswith(("%fixloop", "%%")):
            cells.append((count, source))
    return cells


def state_before(count: int, failing: int | None, ran: list[Ran], start: dict | None) -> dict | None:
    """The namespace as it was before cell [count], from `start` (the state before the failing cell) and
    each kept cell since, the latest first; None when a cell since kept nothing."""
    if start is None or not failing:
        return None
    known = {r.count: r for r in ran}
    state = start
    for n in range(failing - 1, count - 1, -1):
        r = known.get(n)
        if r is None or r.checkpoint is None:
            return None
        state = r.checkpoint.state(state)
    return state


def find(cells: list[tuple[int, str]], ran: list[Ran], failing: int | None, failing_source: str,
         start: dict | None, ns: dict, run) -> Proposal | None:
    """The first verified (or running) change to an earlier cell that makes the cells down to the failing
    one run. `start`: the state before the failing cell (None: not kept); `run(source, namespace,
    downstream, notes)` runs the loop and returns its LoopResult."""
    sources = dict(cells)
    for count in suspects(cells, cell_names(failing_source)):
        between = tuple(n for n, _ in cells if n > count)
        state = state_before(count, failing, ran, start)
        judged = state is not None
        note = (f"This is cell [{count}] of the session. It ran, but cell [{failing}] below it fails: change this "
                "cell so that the cells after it run, as written; they are the following cells that must run.")
        result = run(sources[count], state if judged else (start if start is not None else ns),
                     [sources[n] for n in between] + [failing_source], (note,))
        if result.claimed and result.patched and result.patched.strip() != sources[count].strip():
            return Proposal(count, failing, result, judged, between)
    return None

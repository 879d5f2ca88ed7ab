"""What auto mode sees in a cell that ran without error but looks wrong, read cheaply in the user's kernel
right after it ran: pandas' warning that an assignment never reached the frame (ChainedAssignmentError,
SettingWithCopyWarning), a value the cell made or showed that is numbers written as text glued end to
end (a `sum` of text: '$1,528.19$1,085.32...'), a column the cell names that is now all NaN. When one is
seen, auto mode runs the loop on the cell as for an error (notebook/auto.py): the sandbox's run judges
the same thing as a smell (receipt/smells.py, whose patterns these are), and a repair is offered under
the cell. Here, beside the verdict, so that what looks wrong is decided by the smells' own rules.
"""

from __future__ import annotations

import ast
import re
import warnings

from ..hidden import clipped
from ..receipt.smells import LOST_ASSIGNMENT, glued

MAX_NAMES = 20  # names the cell wrote that are read for a glued value or an all-NaN column


class Warned:
    """The warnings shown while one cell runs, recorded (and still shown as Python shows them)."""

    def __init__(self):
        self.lines: list[str] = []
        self._shown = None

    def start(self) -> None:
        self.lines = []
        if self._shown is None and warnings.showwarning != self._record:  # a bound method: compared by ==
            self._shown = warnings.showwarning
            warnings.showwarning = self._record

    def stop(self) -> list[str]:
        if self._shown is not None:
            if warnings.showwarning == self._record:  # else someone set theirs since: it stays
                warnings.showwarning = self._shown
            self._shown = None
        return self.lines

    def _record(self, message, category, filename, lineno, file=None, line=None):
        self.lines.append(clipped(f"{getattr(category, '__name__', category)}: {' '.join(str(message).split())}", 300))
        self._shown(message, category, filename, lineno, file, line)


def looks_wrong(source: str, result, ns: dict, warned: list[str], written: set[str]) -> str:
    """Why a cell that ran without error looks wrong, in one line ("" when nothing does): `result` is the
    value it showed, `written` the names it bound or changed, `warned` what was warned while it ran."""
    lost = next((w for w in warned if LOST_ASSIGNMENT.search(w)), None)
    if lost:
        return f"pandas warns that an assignment may not reach the frame ({clipped(lost, 160)})"
    values = [("its result", result)] + [(f"`{n}`", ns[n]) for n in sorted(written)[:MAX_NAMES] if n in ns]
    for name, value in values:
        if _glued(value):
            return f"{name} holds numbers written as text glued end to end (a sum of text concatenates)"
    labels = _labels(source)
    for name, value in values[1:]:
        column = _all_nan_column(value, labels)
        if column is not None:
            return f"{name}[{column!r}] is all NaN after the cell"
    return ""


def _glued(value) -> bool:
    if isinstance(value, str):
        return glued(repr(value[:200]))
    kind = type(value).__name__
    if kind == "Series" and str(getattr(value, "dtype", "")) in ("object", "str", "string"):
        try:
            shown = [v for v in value.iloc[:3].tolist() if isinstance(v, str)]
        except Exception:
            return False
        return bool(shown) and all(glued(repr(v[:200])) for v in shown)
    return False


def _labels(source: str) -> set[str]:
    """The text constants of the cell (the columns it names)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(re.findall(r"['\"]([^'\"]+)['\"]", source))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _all_nan_column(value, labels: set[str]):
    """A column the cell names that holds only NaN (a frame of rows), or None."""
    if type(value).__name__ != "DataFrame" or not len(value):
        return None
    for column in value.columns:
        if isinstance(column, str) and column in labels:
            try:
                if bool(value[column].isna().all()):
                    return column
            except Exception:
                continue
    return None

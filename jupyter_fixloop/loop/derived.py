"""Checks read from an instruction: where it states a testable property, the rules write the check.

"drop duplicate orders" -> no duplicate rows remain; "parse the amount column into floats" -> that column is
numeric and no value was lost beyond those already missing; "one row per city" -> the result's cities (or its
index) are unique; "assign it to `discipline`" -> the name exists. A pattern that does not match exactly one
frame or column of the user's writes no check: the rules decide what is checkable, and say nothing they
cannot test. Each check is an expression (its words say it to people), run with every candidate like the
user's checks; it may rank candidates, never make a result `fixed` (the loop strips it from the
evidence), unless the user gives it as theirs (`--expect`).

A check reads the value the code shows when that is the frame it is about, else the user's name:
`orders.drop_duplicates()` shown, `print(orders.drop_duplicates())`, `display(...)` and `orders =
orders.drop_duplicates()` all pass. The value shown is the runner's (kernel/selected.py's `SHOWN`: the last line's
value, the one value it prints or displays, else the value of the name it assigns), not IPython's `_`, which a
printed or displayed value never sets (a right `print(...)` was rejected so).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .. import kernel
from ..cell import instruction_names
from ..result import ReadCheck
from . import cleaning, selection

# name -> {column: NaN count before the loop (None: unknown)}: the user's frames, as the rules read them
Frames = dict[str, dict[str, int | None]]
_SHOWN = kernel.selected.SHOWN  # the value the run shows (None: nothing), as the runner keeps it

_DROP_DUPLICATES = re.compile(r"\b(?:drop|remove|delete|eliminate|get rid of|discard)\b[^.;]*?\bduplicat|"
                              r"\bde-?duplicat", re.I)
_SHARE = re.compile(r"\b(?:share|fraction|proportion)\s+of\b", re.I)
_PER = re.compile(r"\b(?:each|per|every|by|group\w*|percent\w*|%)", re.I)
_ONE_ROW_PER = re.compile(r"\bone\s+row\s+(?:per|for\s+each|for\s+every|a)\s+([A-Za-z_][\w]*)", re.I)


def read_checks(instruction: str | None, frames: Frames, checks: Iterable[str] = (),
                values: Mapping[str, object] | None = None) -> tuple[ReadCheck, ...]:
    """The checks the rules read from `instruction`, against the user's `frames`; none the user already gives
    (`checks`: theirs, the same expression, or the same name asked for). `values`: the user's frames themselves,
    where the loop holds them (a value the instruction names is read from them: "where the animal is a cat")."""
    if not instruction:
        return ()
    given = " ".join(checks)
    found = [ReadCheck(f"{n!r} in globals()", f"`{n}` exists") for n in instruction_names(instruction)
             if f"{n!r}" not in given]
    frame = named_frame(instruction, frames)
    found += [c for c in (_no_duplicates(instruction, frames), _one_row_per(instruction, frames),
                          _share(instruction, frame)) if c is not None]
    found += selection.read(instruction, frames, values or {}, frame)
    found += cleaning.read(instruction, frames, values or {}, frame)
    return tuple(c for c in found if c.expr not in given)


def frames_of(namespace, variables) -> Frames:
    """The user's frames and their columns (from the variables the model is told of), with each column's
    NaN count where the namespace holds the frame itself (a dict; batch mode's snapshot holds no values)."""
    out: Frames = {}
    for v in variables:
        if v.form != "frame":
            continue
        frame = namespace.get(v.name) if isinstance(namespace, dict) else None
        out[v.name] = {c.name: _nan(frame, c.name) for c in v.columns}
    return out


def _nan(frame, column: str) -> int | None:
    try:
        return int(frame[column].isna().sum()) if frame is not None else None
    except Exception:  # a column that cannot be read so (a duplicate name, a MultiIndex) gets no count
        return None


def named_frame(instruction: str, frames: Frames) -> str | None:
    """The one frame the instruction names (a word of it, or in the plural: `orders`, `order`); else the
    only frame the user has; else None."""
    words = set(re.findall(r"[A-Za-z_]\w*", instruction))
    named = [f for f in frames if f in words or f.rstrip("s") in words or f"{f}s" in words]
    if len(named) == 1:
        return named[0]
    return next(iter(frames)) if not named and len(frames) == 1 else None


def _share(instruction: str, frame: str | None) -> ReadCheck | None:
    """"What share of the loans were not returned?" -> one number between 0 and 1 is shown (not asked per group,
    nor as a percentage)."""
    if frame is None or not _SHARE.search(instruction) or _PER.search(instruction):
        return None
    return ReadCheck(selection.check_call("share", frame), "the code shows one number between 0 and 1 (a share)")


def _no_duplicates(instruction: str, frames: Frames) -> ReadCheck | None:
    if not _DROP_DUPLICATES.search(instruction):
        return None
    frame = named_frame(instruction, frames)
    if frame is None:
        return None
    return ReadCheck(f"not ({_SHOWN} if isinstance({_SHOWN}, type({frame})) else {frame}).duplicated().any()",
                     f"no duplicate rows remain in `{frame}` (or in the frame the code shows)")


def _one_row_per(instruction: str, frames: Frames) -> ReadCheck | None:
    match = _ONE_ROW_PER.search(instruction)
    if match is None:
        return None
    word = match.group(1).lower()
    forms = {word, word.rstrip("s"), re.sub(r"ies$", "y", word)}
    columns = {c for cols in frames.values() for c in cols if c.lower() in forms}
    if len(columns) != 1:
        return None
    (column,) = columns
    shown = _SHOWN
    condition = (f"hasattr({shown}, 'duplicated') and not ({shown}[{column!r}] if {column!r} in "
                 f"getattr({shown}, 'columns', ()) else {shown}.index).duplicated().any()")
    return ReadCheck(condition, f"the result the code shows has one row per `{column}` (its `{column}` values, "
                                "or its index, are unique)")

"""The effect of one run on the user's data, as a person reads it in a few lines.

The sandbox records it (kernel/effect.py) right after the cell runs: every name the cell defined or
changed, with its type, and for frames, series and arrays their shape, the dtypes and NaN counts of
new or changed columns and a few sample values. `Effect.text` reads like
`df: 3×2 → 3×3; new column 'label' (str): 'Ann #1', 'Bob #2', 'Cy #3'`.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LINES = 8
DATA = ("DataFrame", "Series", "ndarray")


@dataclass(frozen=True)
class Column:
    """A new or changed column of a frame (or the values of a Series: `name` is '')."""

    name: str
    status: str  # "new" | "changed"
    dtype: str
    dtype_before: str | None = None
    nan: int = 0
    nan_before: int | None = None
    rows: int = 0
    samples: tuple[str, ...] = ()
    whole_reprs: int = 0  # of the first values, how many print a whole Series/DataFrame
    odd_before: tuple[str, ...] = ()  # text values before the run that hold digits but are no plain number
    blank_before: int = 0  # beside them, text values that mean no value ('n/a', '-'), which may rightly become NaN
    # text dates whose day and month could swap, as they were read ("'03/05/2024' → 2024-03-05")
    read_as: tuple[str, ...] = ()

    @property
    def all_nan(self) -> bool:
        return self.rows > 0 and self.nan == self.rows

    def text(self) -> str:
        where = f"column {self.name} " if self.name else ""
        if self.status == "new":  # a new Series: its kind and dtype are in the name's head already
            head = f"new {where}({self.dtype})" if self.name else "values"
        elif self.dtype_before not in (None, self.dtype):
            head = f"{where}{self.dtype_before} → {self.dtype}"
        else:
            head = f"{where}changed ({self.dtype})" if self.name else f"values changed ({self.dtype})"
        if self.nan_before is not None and self.nan_before != self.nan:
            head += f", NaN {self.nan_before} → {self.nan}"
        elif self.nan_before is None and self.nan:
            head += f", {self.nan} NaN"
        head += ": " + ", ".join(self.samples) if self.samples else ""
        if self.read_as:  # the rows where the format's guess matters, not the first rows
            head += "; where day and month could swap, read as " + ", ".join(self.read_as)
        return head


@dataclass(frozen=True)
class Change:
    """One name the run defined, changed or deleted."""

    name: str
    status: str  # "new" | "changed" | "deleted"
    before: str = ""  # short: "DataFrame 3×2", "12", "Series 3 (int64)"
    after: str = ""
    kind_before: str = ""
    kind_after: str = ""
    rows: tuple[int | None, int] | None = None
    columns: tuple[Column, ...] = ()
    more_columns: int = 0
    dropped: tuple[str, ...] = ()
    head: tuple[str, ...] = ()  # a new or merged frame's first rows, as printed
    digest: str = ""  # its value's content digest (kernel/effect.py's `digest`; "" when none could be taken)

    def text(self) -> str:
        if self.status == "deleted":
            return f"{self.name}: deleted (was {self.before})"
        if self.status == "new":
            head = f"{self.name}: new {self.after}" if self.kind_after in DATA else f"{self.name} = {self.after} (new)"
        elif self.kind_before == self.kind_after == "DataFrame":
            head = f"{self.name}: {self.before.split(' ', 1)[1]} → {self.after.split(' ', 1)[1]}"
        else:
            head = f"{self.name}: {self.before} → {self.after}"
        parts = [head]
        if self.head:  # its shape above, its first rows below: not every column on one line
            new = [c.name for c in self.columns if c.status == "new"]
            if self.status != "new" and new:
                parts.append(f"{len(new) + self.more_columns} new column(s) " + ", ".join(new)
                             + (", ..." if self.more_columns else ""))
        else:
            parts += [c.text() for c in self.columns]
            if self.more_columns:
                parts.append(f"{self.more_columns} more column(s) new or changed")
        if self.dropped:
            parts.append("dropped column(s) " + ", ".join(self.dropped))
        text = "; ".join(parts)
        return text + "".join("\n    " + row for row in self.head) if self.head else text


@dataclass(frozen=True)
class Smell:
    """One thing that looks wrong in what a run did to the data (smells.py): `kind`, which rule found it
    ("whole_repr", "all_nan", "nan_gained", "float_text", "kind_lost", "rows_lost", "glued", "thrown_away",
    "invisible", "lost_assignment"), `text`, what it says, and `line`, the line of the code it is about when
    it is about one (a result thrown away), else 0."""

    kind: str
    text: str
    line: int = 0


@dataclass(frozen=True)
class Effect:
    """What a run did to the user's data; `smells` are what looks wrong in it (see smells.py)."""

    changes: tuple[Change, ...] = ()
    smells: tuple[Smell, ...] = ()
    error: str = ""  # why it could not be recorded, when it could not

    @property
    def text(self) -> str:
        """A few lines: one per name (the smells first when there are any)."""
        return "\n".join(self.lines())

    def lines(self, limit: int = MAX_LINES) -> list[str]:
        lines = [f"looks wrong: {s.text}" for s in self.smells]
        changes = [c.text() for c in self.changes]
        if not changes and not self.error:
            changes = ["no name defined or changed"]
        lines += [line for change in changes[:limit] for line in change.splitlines()]
        if len(changes) > limit:
            lines.append(f"... {len(changes) - limit} more name(s) changed")
        if self.error:
            lines.append(f"(effect not fully recorded: {self.error})")
        return lines

    def to_json(self) -> dict:
        """For the LoopSummary (docs/protocol.md): the text, the smells, and one item per name."""
        return {"text": self.text, "smells": [s.text for s in self.smells],
                "names": [{"name": c.name, "status": c.status, "before": c.before, "after": c.after,
                           "text": c.text()} for c in self.changes]}


def from_run(data: dict | None) -> Effect | None:
    """The Effect of the runner's JSON (`result["effect"]`); None when the run recorded none.

    What the sandbox sends is the sandbox's to forge: read with care, bounded, never trusted."""
    if not isinstance(data, dict):
        return None
    try:
        changes = tuple(_change(c) for c in list(data.get("changes") or [])[:MAX_CHANGES] if isinstance(c, dict))
        return Effect(changes=changes, error=_text(data.get("error", ""), 200))
    except (KeyError, TypeError, ValueError, AttributeError):
        return Effect(error="the sandbox's record of it could not be read")


MAX_CHANGES = 32
MAX_TEXT = 120


def _text(value, limit: int = MAX_TEXT) -> str:
    text = value if isinstance(value, str) else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _int(value, default: int | None = 0) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _change(c: dict) -> Change:
    columns = tuple(
        Column(name=_text(col.get("column", "")), status=_text(col.get("status", "changed")),
               dtype=_text(col.get("dtype", "?")),
               dtype_before=_text(col["dtype_before"]) if col.get("dtype_before") else None,
               nan=_int(col.get("nan")), nan_before=_int(col.get("nan_before"), None), rows=_int(col.get("rows")),
               samples=tuple(_text(v, 60) for v in list(col.get("samples") or [])[:3]),
               whole_reprs=_int(col.get("whole_reprs")),
               odd_before=tuple(_text(v, 60) for v in list(col.get("odd_before") or [])[:3]),
               blank_before=_int(col.get("blank_before")),
               read_as=tuple(_text(v, 60) for v in list(col.get("read_as") or [])[:3]))
        for col in list(c.get("columns") or [])[:8] if isinstance(col, dict))
    rows = c.get("rows")
    rows = (_int(rows[0], None), _int(rows[1])) if isinstance(rows, list) and len(rows) == 2 else None
    return Change(name=_text(c["name"], 80), status=_text(c["status"], 20), before=_text(c.get("before", "")),
                  after=_text(c.get("after", "")), kind_before=_text(c.get("kind_before", ""), 40),
                  kind_after=_text(c.get("kind_after", ""), 40), rows=rows, columns=columns,
                  more_columns=_int(c.get("more_columns")),
                  dropped=tuple(_text(d, 80) for d in list(c.get("dropped") or [])[:8]),
                  head=tuple(_text(r, 120) for r in list(c.get("head") or [])[:6]), digest=digest_of(c.get("digest")))


def digest_of(value) -> str:
    """A content digest the sandbox sent (kernel/effect.py's `digest`), read with care: hex of a sane length,
    else "" (none)."""
    ok = isinstance(value, str) and 0 < len(value) <= 64 and all(ch in "0123456789abcdef" for ch in value)
    return value if ok else ""

"""The user's values as a model is told of them: typed, on the host's side of the wall.

kernel/namespace.py looks at each value where it lives (the user's kernel, through the wire's
`namespace.describe`; batch mode's notebook kernel, in the snapshot it writes) and gives its fields;
they are made `Variable`s here, which the prompt renders within its token budget (model/prompt.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column of a frame (or a series): its name, dtype and first values."""

    name: str
    dtype: str
    values: str = ""


@dataclass(frozen=True)
class Variable:
    """One of the user's values as the model is told of it: `head` is the one-line essentials
    (`DataFrame 16×35, index RangeIndex`), `columns` a frame's columns, `value` a small value's repr.
    `size` (bytes, roughly) and `order` (definition order) rank it when the budget is short."""

    name: str
    kind: str
    head: str
    columns: tuple[Column, ...] = ()
    value: str = ""
    size: int = 0
    order: int = 0
    form: str = ""  # data's shape of value: "frame", "series", "array", "collection" or "value" ("" for the rest)
    module: str = ""  # a module's name (`pd` -> "pandas")

    def line(self) -> str:
        """The one-line essentials (`euro12: DataFrame 16×35`), for receipts."""
        return f"{self.name} ({self.head.split(',')[0]})"


def variables_from_json(items) -> tuple[Variable, ...]:
    """`Variable`s from their fields (kernel/namespace.py `described`, or its JSON from a notebook kernel)."""
    out = []
    for item in items or ():
        if isinstance(item, Variable):
            out.append(item)
        elif isinstance(item, dict):
            columns = tuple(Column(**c) for c in item.get("columns", ()) if isinstance(c, dict))
            out.append(Variable(**{**item, "columns": columns}))
    return tuple(out)


def names_only(variables: tuple[Variable, ...]) -> tuple[Variable, ...]:
    """The variables with no value of the user's data: names, types, shapes, columns and dtypes
    (`data_to_model="names"`)."""
    return tuple(dataclasses.replace(v, value="", columns=tuple(dataclasses.replace(c, values="") for c in v.columns))
                 for v in variables)

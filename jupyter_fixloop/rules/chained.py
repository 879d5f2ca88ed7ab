"""Repairs of pandas writes that never reach the frame: chained assignment.

Under copy-on-write (pandas 3, the default since), `df[mask]['b'] = 0` and `df['b'][mask] = 0` write
into a temporary copy, and `df['b'].fillna(0, inplace=True)` fills one: the frame is unchanged, pandas
warns (ChainedAssignmentError), and the error surfaces later, in a cell that reads the frame. The
repair is mechanical: one indexing step (`df.loc[mask, 'b'] = 0`), or the column assigned back
(`df['b'] = df['b'].fillna(0)`). It applies only when the run said so (the warning in the receipt).
"""

from __future__ import annotations

import ast
import re

from .edits import ParsedReceipt, parse, replace_node, source_of
from .registry import FIRST, MECHANICAL, repair

LOST = re.compile(r"ChainedAssignmentError|SettingWithCopyWarning|through chained assignment")


@repair(MECHANICAL, FIRST + 50)
def chained_assignment(code: str, receipt: ParsedReceipt) -> str | None:
    """`df[a][b] = v` -> `df.loc[a, b] = v` (the column the string key); `df[c].m(..., inplace=True)` ->
    `df[c] = df[c].m(...)`; only after pandas warned that a write did not reach the frame."""
    if not any(LOST.search(text) for text in (receipt.text, *receipt.smells, *receipt.failed)):
        return None
    tree = parse(code)
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            fixed = _one_step(code, node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            fixed = _assigned_back(code, node, node.value)
        else:
            continue
        if fixed is not None:
            return fixed
    return None


def _one_step(code: str, node) -> str | None:
    target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(
        node, "target", None)
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript)):
        return None
    inner = target.value
    frame = inner.value
    if isinstance(frame, ast.Attribute) and frame.attr == "loc":  # df.loc[rows][col] = v
        frame, first, second = frame.value, inner.slice, target.slice
    elif _is_label(inner.slice) and not _is_label(target.slice):  # df['col'][rows] = v
        first, second = target.slice, inner.slice
    else:  # df[rows]['col'] = v
        first, second = inner.slice, target.slice
    if isinstance(first, ast.Tuple) or isinstance(second, ast.Tuple) or isinstance(frame, ast.Subscript):
        return None
    return replace_node(code, target, f"{source_of(code, frame)}.loc[{source_of(code, first)}, "
                                      f"{source_of(code, second)}]")


def _assigned_back(code: str, stmt: ast.Expr, call: ast.Call) -> str | None:
    inplace = [k for k in call.keywords if k.arg == "inplace"]
    func = call.func
    if not (inplace and isinstance(inplace[0].value, ast.Constant) and inplace[0].value.value is True
            and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Subscript)):
        return None
    column = source_of(code, func.value)
    args = [source_of(code, a) for a in call.args] + [source_of(code, k) for k in call.keywords if k.arg != "inplace"]
    return replace_node(code, stmt, f"{column} = {column}.{func.attr}({', '.join(args)})")


def _is_label(node) -> bool:
    """A column label as written: a string, or a list of strings."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.List) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                              for e in node.elts)

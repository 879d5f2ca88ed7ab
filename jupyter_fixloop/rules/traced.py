"""Repairs that read a wrong-output receipt's values: the value trace (kernel/trace.py) and where a
failed equality's expected and actual differ (kernel/checks.py).

Nothing raised, so there is no error to read: these repairs read what the values show. A list
default that already holds the first call's items at the second call; dates in the first seconds
of 1970 made from integers (epoch seconds read as nanoseconds); the items a filter lost being
exactly the bounds of its strict comparisons.
"""

from __future__ import annotations

import ast
import re

from .edits import ParsedReceipt, add_keyword, call_name, has_keyword, replace_node, replace_nodes, source_of, tree_of
from .registry import GUESS, OUTPUTS, repair
from .tables import EMPTY, EPOCH, FROM_LINE, MISSING, SCALE


@repair(GUESS, OUTPUTS + 10)
def shared_default(code: str, receipt: ParsedReceipt) -> str | None:
    """A mutable default (`found=[]`) is made once and shared by every call: the trace shows a later
    call starting with what an earlier call left in it. Default to None, make a new one inside."""
    tree = tree_of(code)
    for traced in receipt.trace:
        if not traced.is_call:
            continue
        for run, values in traced.runs:
            for name, value in values if run >= 2 else ():
                fixed = _fresh_default(code, tree, traced.func, name, value)
                if fixed is not None:
                    return fixed
    return None


def _fresh_default(code: str, tree: ast.Module, func: str, param: str, value: str) -> str | None:
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != func:
            continue
        args = node.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for arg, default in pairs:
            if arg.arg != param or not _mutable(default):
                continue
            empty = source_of(code, default)
            if value.strip() in EMPTY or value.strip() == empty:
                return None  # it starts empty: not shared
            first = node.body[0]
            if first.lineno == node.lineno:
                return None  # a one-line def
            lines = code.splitlines(keepends=True)
            indent = " " * first.col_offset
            guard = f"{indent}if {param} is None:\n{indent}    {param} = {empty}\n"
            docstring = ast.get_docstring(node, clean=False) is not None
            at = first.end_lineno if docstring else first.lineno - 1  # after the docstring, if any
            inserted = "".join(lines[:at]) + guard + "".join(lines[at:])
            return replace_node(inserted, default, "None")  # the default is above the insertion: same offsets
    return None


def _mutable(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Dict, ast.Set)) or isinstance(node, ast.Call) and isinstance(
        node.func, ast.Name) and node.func.id in ("list", "dict", "set") and not node.args and not node.keywords


@repair(GUESS, OUTPUTS + 20)
def epoch_unit(code: str, receipt: ParsedReceipt) -> str | None:
    """Integers made into dates in the first seconds of 1970 were epoch seconds (or milliseconds)
    read as nanoseconds, `pd.to_datetime`'s default unit: say the unit."""
    if not receipt.trace:
        return None
    tree = tree_of(code)
    for traced in receipt.trace:
        said = [value for _, value in traced.steps] + [value for _, values in traced.runs for _, value in values]
        found = next(filter(None, map(EPOCH.search, said)), None)
        unit = _unit(found) if found else None
        if unit is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node, "lineno", None) == traced.lineno \
                    and call_name(node) == "to_datetime" and not has_keyword(node, "unit") and node.args:
                return add_keyword(code, node, f"unit={unit!r}")
    return None


def _unit(found: re.Match) -> str | None:
    hours, minutes, seconds, fraction = found.groups()
    nanos = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 10**9 + int((fraction or "0").ljust(9, "0")[:9])
    digits = len(str(nanos))
    return {9: "s", 10: "s", 12: "ms", 13: "ms", 15: "us", 16: "us"}.get(digits)


STRICT = {ast.Gt: ">=", ast.Lt: "<="}


@repair(GUESS, OUTPUTS + 30)
def strict_bounds(code: str, receipt: ParsedReceipt) -> str | None:
    """The items a result lacks are exactly the bounds of the cell's strict comparisons
    (`age > 18`, `age < 64` lost 18 and 64): the bounds were meant inclusive."""
    missing = set()
    for m in (m for detail in receipt.failed for m in MISSING.finditer(detail)):
        for item in m.group(1).split(", "):
            try:
                value = ast.literal_eval(item.strip())
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                missing.add(value)
    if not missing:
        return None
    tree = tree_of(code)
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in STRICT
            and isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value in missing
            and not isinstance(n.comparators[0].value, bool)]
    return replace_nodes(code, hits, lambda n: f"{source_of(code, n.left)} {STRICT[type(n.ops[0])]} "
                                               f"{source_of(code, n.comparators[0])}")


@repair(GUESS, OUTPUTS + 40)
def power_of_ten(code: str, receipt: ParsedReceipt) -> str | None:
    """The value is the expected one times a power of ten (a fraction where a percentage is meant,
    cents for euros): scale what the line that made it assigns."""
    scale = next(filter(None, map(SCALE.search, receipt.failed)), None)
    made = next(filter(None, map(FROM_LINE.search, receipt.failed)), None)
    if not (scale and made):
        return None
    tree = tree_of(code)
    try:
        ratio = float(scale.group(1))
    except ValueError:
        return None
    if ratio <= 0 or ratio == 1:
        return None
    lineno = int(made.group(1))
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and stmt.lineno == lineno and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            value = source_of(code, stmt.value)
            if not isinstance(stmt.value, (ast.Name, ast.Call, ast.Subscript, ast.Attribute, ast.Constant)):
                value = f"({value})"
            factor = f"* {round(1 / ratio):d}" if ratio < 1 else f"/ {round(ratio):d}"
            return replace_node(code, stmt.value, f"{value} {factor}")
    return None

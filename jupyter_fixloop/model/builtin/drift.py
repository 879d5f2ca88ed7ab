"""Built-in repairs for API drift: code written for an older library, repaired from the error's own
words or from what the library says it has now.

- `did_you_mean`: a string the error rejects and names the replacement of ("Invalid frequency: H.
  Did you mean h?", "'M' is no longer supported ... use 'ME' instead"), multipliers kept (`'4M'`).
- `keyword_value_hint`: "Use header=None for ..." for a keyword the failing call passes.
- `reduction_level`: `s.sum(level=0)` (removed in pandas 2) is `s.groupby(level=0).sum()`; with
  `axis=1`, `df.T.groupby(level=0).sum().T`.
- `join_axes`: `pd.concat(..., join_axes=[idx])` is `pd.concat(...).reindex(idx)`.
- `removed_method`: methods pandas removed that have a one-line equivalent (`is_lexsorted()`,
  `swapaxes`, `mad()`).
- `style_name`: a matplotlib style that was renamed: the nearest name of `style.available`.
"""

from __future__ import annotations

import ast
import difflib
import re

from .edits import ParsedReceipt, calls_on_line, on_line, parse, replace_node, source_of, span
from .names import attribute_error, import_optional

DID_YOU_MEAN = re.compile(r"Invalid (?:frequency|\w+): (\S+?)\.\s+Did you mean '?([^?'\"\s]+)'?\?")
NO_LONGER = re.compile(r"'([^'\s]+)' is (?:no longer supported|deprecated)[^.]*\.\s*(?:Please )?[Uu]se '([^'\s]+)' instead")
USE_KEYWORD = re.compile(r"\b[Uu]se (\w+)=(None|True|False|-?\d+|'[^']*')\b")
REDUCTIONS = ("sum", "mean", "median", "min", "max", "std", "var", "prod", "count", "all", "any", "sem", "skew")


def did_you_mean(code: str, receipt: ParsedReceipt) -> str | None:
    """A string the library rejects and names the replacement of: 'H' -> 'h', '4M' -> '4ME'."""
    if receipt.ename not in ("ValueError", "KeyError", "TypeError"):
        return None
    for pattern in (DID_YOU_MEAN, NO_LONGER):
        for old, new in pattern.findall(receipt.message):
            fixed = _replace_in_string(code, receipt.lineno, old, new)
            if fixed is not None:
                return fixed
    return None


def _replace_in_string(code: str, lineno: int | None, old: str, new: str) -> str | None:
    """Replace the string constant `old` (or `<n>old`, an offset with a multiplier) on the failing
    line, else where exactly one such string is in the cell."""
    tree = parse(code)
    if tree is None:
        return None
    wanted = re.compile(rf"^(-?\d*){re.escape(old)}$")
    strings = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and wanted.match(n.value)]
    here = [n for n in strings if on_line(n, lineno)] if lineno is not None else []
    targets = here or (strings if len(strings) == 1 else [])
    for node in sorted(targets, key=lambda n: span(code, n), reverse=True):
        text = source_of(code, node)
        quote = text[-1] if text[-1] in "'\"" else "'"
        code = replace_node(code, node, quote + wanted.match(node.value).group(1) + new + quote)
    return code if targets else None


def keyword_value_hint(code: str, receipt: ParsedReceipt) -> str | None:
    """"Passing a bool to header is invalid. Use header=None ...": the keyword's value the error names."""
    if receipt.ename not in ("TypeError", "ValueError"):
        return None
    tree = parse(code)
    if tree is None:
        return None
    for keyword, value in USE_KEYWORD.findall(receipt.message):
        for call in calls_on_line(tree, receipt.lineno):
            kw = next((k for k in call.keywords if k.arg == keyword), None)
            if kw is not None and source_of(code, kw.value) != value:
                return replace_node(code, kw.value, value)
    return None


def reduction_level(code: str, receipt: ParsedReceipt) -> str | None:
    """`s.sum(level=0)` was removed in pandas 2: `s.groupby(level=0).sum()`."""
    m = re.search(r"(\w+)\(\) got an unexpected keyword argument 'level'", receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not m or m.group(1) not in REDUCTIONS or tree is None:
        return None
    for call in calls_on_line(tree, receipt.lineno, m.group(1)):
        level = next((k for k in call.keywords if k.arg == "level"), None)
        if level is None or not isinstance(call.func, ast.Attribute):
            continue
        axis = next((k for k in call.keywords if k.arg == "axis"), None)
        across = axis is not None and isinstance(axis.value, ast.Constant) and axis.value.value in (1, "columns")
        if axis is not None and not across and not (isinstance(axis.value, ast.Constant) and axis.value.value in (0, "index")):
            return None
        rest = [source_of(code, a) for a in call.args] + [source_of(code, k) for k in call.keywords if k not in (level, axis)]
        owner = source_of(code, call.func.value)
        grouped = f"groupby(level={source_of(code, level.value)}).{m.group(1)}({', '.join(rest)})"
        # groupby(axis=1) went too (pandas 3): columns are grouped as the rows of the transpose
        return replace_node(code, call, f"{owner}.T.{grouped}.T" if across else f"{owner}.{grouped}")
    return None


def join_axes(code: str, receipt: ParsedReceipt) -> str | None:
    """`pd.concat(objs, axis=1, join_axes=[df.index])` (removed in pandas 1.0) is
    `pd.concat(objs, axis=1).reindex(df.index)` (`reindex(columns=...)` along the rows)."""
    tree = parse(code)
    if receipt.ename != "TypeError" or "unexpected keyword argument 'join_axes'" not in receipt.evalue or tree is None:
        return None
    for call in calls_on_line(tree, receipt.lineno, "concat"):
        kw = next((k for k in call.keywords if k.arg == "join_axes"), None)
        if kw is None or not isinstance(kw.value, (ast.List, ast.Tuple)) or len(kw.value.elts) != 1:
            continue
        axis = next((k for k in call.keywords if k.arg == "axis"), None)
        across = axis is not None and isinstance(axis.value, ast.Constant) and axis.value.value in (1, "columns")
        start, end = span(code, call)
        kw_start, kw_end = span(code, kw)
        before = code[start:kw_start].rstrip().rstrip(",")
        inner = before + code[kw_end:end]
        labels = source_of(code, kw.value.elts[0])
        return code[:start] + f"{inner}.reindex({labels if across else 'columns=' + labels})" + code[end:]
    return None


def removed_method(code: str, receipt: ParsedReceipt) -> str | None:
    """Methods pandas removed, as the one line that does the same: `idx.is_lexsorted()` ->
    `idx.is_monotonic_increasing`, `df.swapaxes(0, 1)` -> `df.T`, `s.mad()` -> `(s - s.mean()).abs().mean()`."""
    found = attribute_error(receipt)
    tree = parse(code)
    if not found or tree is None or found[1] not in ("is_lexsorted", "swapaxes", "mad"):
        return None
    attr = found[1]
    for call in calls_on_line(tree, receipt.lineno, attr):
        if not isinstance(call.func, ast.Attribute):
            continue
        owner = source_of(code, call.func.value)
        if attr == "is_lexsorted" and not call.args and not call.keywords:
            return replace_node(code, call, f"{owner}.is_monotonic_increasing")
        if attr == "mad" and not call.args and not call.keywords:
            owner = owner if isinstance(call.func.value, (ast.Name, ast.Attribute, ast.Subscript)) else f"({owner})"
            return replace_node(code, call, f"({owner} - {owner}.mean()).abs().mean()")
        if attr == "swapaxes" and len(call.args) == 2 and not call.keywords:
            axes = [_axis(a) for a in call.args]
            if None in axes:
                return None
            return replace_node(code, call, owner if axes[0] == axes[1] else f"{owner}.T")
    return None


def _axis(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant):
        return {0: 0, 1: 1, "index": 0, "rows": 0, "columns": 1}.get(node.value)
    return None


def style_name(code: str, receipt: ParsedReceipt) -> str | None:
    """A matplotlib style that is not there any more (`seaborn-whitegrid`): the nearest of `style.available`."""
    m = re.search(r"'([^']+)' is not a valid package style", receipt.message)
    if not m:
        return None
    style = import_optional("matplotlib.style")
    available = list(getattr(style, "available", []) or [])
    close = difflib.get_close_matches(m.group(1), available, n=1, cutoff=0.6)
    if not close:
        return None
    return _replace_in_string(code, receipt.lineno, m.group(1), close[0])

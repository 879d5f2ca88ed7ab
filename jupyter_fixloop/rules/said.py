"""Generic rewriters that write what a library's notes say to write instead of a removed spelling, when that is
more than a new name: an operator (`Index.contains`: "use key in index"), an indexer (`df[string]` on dates:
"use df.loc[string]"), a module moved whole (`sklearn.cross_validation`: "moved to model_selection"). Each
declares itself (registry.py) and fires only when an entry of `model/changes.json` says so.
"""

from __future__ import annotations

import ast
import re

from .changed import SKLEARN_NAMES_MOVED
from .edits import ParsedReceipt, calls_on_line, on_line, parse, replace_node, source_of
from .generic import TURN as GENERIC_TURN, class_named, entries, family, replacement_of
from .names import attribute_error, import_optional
from .registry import MECHANICAL, repair

TURN = GENERIC_TURN + 6  # after generic.py's and exported.py's rewriters (registry.py)
MEMBERSHIP = re.compile(r"^(\w+) in (\w+)$")  # "key in index"


@repair(MECHANICAL, TURN)
def said_operator(code: str, receipt: ParsedReceipt) -> str | None:
    """A method whose removal says to write an operator: `idx.contains(key)` ("use key in index", pandas 1.0)
    -> `key in idx`."""
    said, tree = attribute_error(receipt), parse(code)
    if not said or said[0].startswith("module ") or tree is None:
        return None
    owner, old = said
    for change in entries(old):
        form = MEMBERSHIP.match(change.replacement if change.replacement_is == "code"
                                else change.deprecation_replacement or "")
        cls = class_named(change.library, owner) if form else None
        if cls is None or not any(n.rpartition(".")[2] == old and family(cls, n.rpartition(".")[0])
                                  for n in change.names):
            continue
        for call in calls_on_line(tree, receipt.lineno, old):
            if isinstance(call.func, ast.Attribute) and len(call.args) == 1 and not call.keywords:
                text = f"{source_of(code, call.args[0])} in {source_of(code, call.func.value)}"
                return replace_node(code, call, text if _alone(tree, call) else f"({text})")
    return None


def _alone(tree: ast.Module, node: ast.expr) -> bool:
    """Whether `node` is a whole statement's value (`x = node`, `node`): no parentheses needed."""
    return any(isinstance(s, (ast.Expr, ast.Assign)) and s.value is node for s in ast.walk(tree))


ROW_OF_INDEX = "is a label of {name}'s index (a row), not a column"  # kernel/facts.py, read in the sandbox


@repair(MECHANICAL, TURN)
def rows_by_string(code: str, receipt: ParsedReceipt) -> str | None:
    """`df['2018-Q1']` on a frame indexed by dates: rows by a date-like string, which pandas 1.2 deprecated ("use
    df.loc[string]") and 2.0 removed -> `df.loc['2018-Q1']`, when the sandbox saw the key is a row of `df`."""
    key = receipt.evalue.strip("'\"") if receipt.ename == "KeyError" else ""
    tree = parse(code)
    if not key or tree is None or not _datelike(key):
        return None
    if not any(c.library == "pandas" and "df[string]" in c.names and replacement_of(c) == "df.loc[string]"
               for c in entries("string")):
        return None
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and on_line(n, receipt.lineno)
             and isinstance(n.slice, ast.Constant) and n.slice.value == key
             and any(ROW_OF_INDEX.format(name=source_of(code, n.value)) in f for f in receipt.context)]
    for node in sorted(found, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        code = replace_node(code, node, f"{source_of(code, node.value)}.loc[{source_of(code, node.slice)}]")
    return code if found else None


def _datelike(text: str) -> bool:
    """Whether pandas reads `text` as a date or a period ('2018-09', '2018-Q1', '2014-08-01 00:00')."""
    pd = import_optional("pandas")
    for read in (getattr(pd, "Timestamp", None), getattr(pd, "Period", None)):
        try:
            read(text)
            return True
        except (ValueError, TypeError, OverflowError):
            continue
    return False


@repair(MECHANICAL, TURN)
def moved_module(code: str, receipt: ParsedReceipt) -> str | None:
    """`from sklearn import cross_validation`, a module its library moved whole (scikit-learn 0.18: "moved to
    model_selection"), as the module it moved to under the old name, when every name the cell reads of it moved
    there with the same positional parameters (changed.SKLEARN_NAMES_MOVED; `KFold(n, n_folds)` did not)."""
    found = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", receipt.evalue)
    tree = parse(code)
    if receipt.ename != "ImportError" or not found or tree is None:
        return None
    name, package = found.groups()
    for node in ast.walk(tree):
        moved = [a for a in node.names if a.name == name] if (
            isinstance(node, ast.ImportFrom) and node.module == package and on_line(node, receipt.lineno)) else []
        if not moved:
            continue
        bound = moved[0].asname or name
        read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == bound}
        homes = {SKLEARN_NAMES_MOVED.get((f"{package}.{name}", a), (None, None)) for a in read}
        if not read or len(homes) != 1 or any(h[0] is None or h[1] not in read for h in homes):
            return None
        parent, _, last = next(iter(homes))[0].rpartition(".")
        kept = [a.name + (f" as {a.asname}" if a.asname else "") for a in node.names if a.name != name]
        lines = [f"from {package} import {', '.join(kept)}"] if kept else []
        lines.append(f"from {parent} import {last} as {bound}" if parent else f"import {last} as {bound}")
        return replace_node(code, node, "\n".join(lines))
    return None

"""Generic rewriters driven by what the libraries said changed (`model/changes.json`, harvested from their
release notes by tools/harvest_changes.py), not a function per API. Each declares itself (`@rewriter`:
its kind and its place, after the hand-written repairs); repairs.py adds them to `REPAIRS` and `KIND`.

- `ix_indexer`: `.ix`, removed in pandas 1.0; its 0.20 deprecation said "use .loc for label based indexing
  or .iloc for positional indexing". Which one, axis by axis, is what `.ix` did with that key on that axis
  (the receipt's `axes of DataFrame: index labels, columns labels`, read in the kernel at the failure): an
  integer key on an axis of labels was a position, any other key a label. All labels -> `.loc`, all
  positions -> `.iloc`, mixed -> `.loc` with the positions made labels (`df.index[0]`, `df.columns[2]`).
- `said_method`: a method the error says the object lacks, whose removal or deprecation entry names the
  method to use instead on the same class (`Styler.hide_index` -> `Styler.hide`); an old name that was the
  new one with an axis in it (`hide_index`, `hide_columns`) passes that axis (`.hide(axis='index')`).
- `said_keyword`: a keyword the error says the call does not take, whose entry names the keyword it was
  renamed to or replaced by (`read_excel(skip_footer=1)` -> `skipfooter=1`).
- `keywords_into_dtype`: keywords the entry says to pass in an object now (`astype('category',
  categories=..., ordered=True)`: "in favor of passing a CategoricalDtype") ->
  `astype(pd.CategoricalDtype(categories=..., ordered=True))`.
"""

from __future__ import annotations

import ast
import inspect
import re

from ..model.knowledge import Change, changes
from .edits import CannotTell, ParsedReceipt, calls_on_line, on_line, parse, replace_node, source_of
from .names import attribute_error, import_optional

MECHANICAL = "mechanical"
GUESS = "guess"
REWRITERS: list = []  # in the order they are tried, after the hand-written repairs
KINDS: dict = {}


def rewriter(kind: str):
    """Declare a generic rewriter where it is defined: its kind (mechanical: the one reading the library's
    words allow; guess) and its turn (the order of definition)."""

    def register(function):
        REWRITERS.append(function)
        KINDS[function] = kind
        return function

    return register


IDENT = re.compile(r"^[A-Za-z_]\w*$")
AXES = re.compile(r"axes of (\w+): index (integers|labels)(?:, columns (integers|labels))?")


def _key_kind(node: ast.expr) -> str:
    """`position` (an integer, a slice or list of them), `label` (a string, a slice or list of them),
    `mask` (a comparison), or `unknown` (a variable: only its value could say)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _key_kind(node.operand)
    if isinstance(node, ast.Constant):
        return "position" if isinstance(node.value, int) and not isinstance(node.value, bool) else "label"
    if isinstance(node, ast.Slice):
        kinds = {_key_kind(p) for p in (node.lower, node.upper) if p is not None} - {"none"}
        return kinds.pop() if len(kinds) == 1 else ("position" if not kinds else "unknown")
    if isinstance(node, ast.List) and node.elts:
        kinds = {_key_kind(e) for e in node.elts}
        return kinds.pop() if len(kinds) == 1 else "unknown"
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        return "mask"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return "mask"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
        return "mask"
    return "unknown"


@rewriter(MECHANICAL)
def ix_indexer(code: str, receipt: ParsedReceipt) -> str | None:
    """`.ix` (removed in pandas 1.0), as `.loc` or `.iloc`: what `.ix` did with each key on that axis."""
    said = attribute_error(receipt)
    axes = next((AXES.search(f) for f in receipt.context if AXES.search(f)), None)
    tree = parse(code)
    if not said or said[1] != "ix" or axes is None or tree is None:
        return None
    integers = [axes.group(2) == "integers", axes.group(3) == "integers"]
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
             and n.value.attr == "ix" and on_line(n, receipt.lineno)]
    if len({source_of(code, n.value.value) for n in found}) > 1:  # the axes said are those of the one that failed
        raise CannotTell("`.ix` on two objects on one line: the error says the axes of one of them only")
    for node in sorted(found, key=lambda n: n.col_offset, reverse=True):
        code = replace_node(code, node, _translated(code, node, integers))
    return code if found else None


def _translated(code: str, node: ast.Subscript, integers: list[bool]) -> str:
    owner = source_of(code, node.value.value)
    keys = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    kinds = []
    for axis, key in enumerate(keys[:2]):
        kind = "label" if integers[min(axis, 1)] else _key_kind(key)  # on integers `.ix` read every key as labels
        if kind == "unknown":
            raise CannotTell(f"`.ix` read `{source_of(code, key)}` as a position or a label by its value; "
                             "use .loc for labels or .iloc for positions")
        kinds.append("position" if kind == "position" else "label")
    texts = [source_of(code, k) for k in keys]
    if all(k == "position" for k in kinds):
        return f"{owner}.iloc[{', '.join(texts)}]"
    axis_names = ("index", "columns")
    made = [f"{owner}.{axis_names[i]}[{t}]" if i < len(kinds) and kinds[i] == "position" else t
            for i, t in enumerate(texts)]
    return f"{owner}.loc[{', '.join(made)}]"


def _entries(*keys: str, library: str | None = None) -> list[Change]:
    """The entries about all of these names (each the last part of one of an entry's names)."""
    return [c for c in changes() if all(k in c.keys for k in keys) and (library is None or c.library == library)]


def _replacement(change: Change) -> str | None:
    """The one replacement an entry names in code (its own, or its deprecation's), or None."""
    said = change.replacement if change.replacement_is == "code" else change.deprecation_replacement
    return said if said and " or " not in said else None


@rewriter(MECHANICAL)
def said_method(code: str, receipt: ParsedReceipt) -> str | None:
    """A method the library removed, as the one its notes said to use instead (`hide_index()` ->
    `hide(axis='index')`)."""
    said = attribute_error(receipt)
    tree = parse(code)
    if not said or said[0].startswith("module ") or tree is None:
        return None
    owner, old = said
    new = None
    for change in _entries(old):
        names = [n.lstrip(".") for n in change.names]
        replacement = _replacement(change)
        if replacement and any(n == f"{owner}.{old}" for n in names) and replacement.startswith(f"{owner}."):
            new = replacement.split(".", 1)[1].rstrip("()")
            break
    if new is None or not IDENT.match(new) or not _method_now(change.library, owner, new):
        return None
    axis = old[len(new) + 1:] if old.startswith(new + "_") and old[len(new) + 1:] in ("index", "columns") else None
    for call in calls_on_line(tree, receipt.lineno, old):
        if isinstance(call.func, ast.Attribute):
            args = [source_of(code, a) for a in call.args] + [source_of(code, k) for k in call.keywords]
            args += [f"axis={axis!r}"] if axis and not any(k.arg == "axis" for k in call.keywords) else []
            return replace_node(code, call, f"{source_of(code, call.func.value)}.{new}({', '.join(args)})")
    return None


CLASS_HOMES = {  # where a library's classes that notes name by their bare name live now
    "pandas": ("pandas", "pandas.io.formats.style", "pandas.core.groupby", "pandas.core.window"),
    "matplotlib": ("matplotlib.axes", "matplotlib.figure", "matplotlib.artist", "matplotlib.axis", "matplotlib.text"),
    "numpy": ("numpy",), "scikit-learn": (),
}


def _method_now(library: str, owner: str, name: str) -> bool:
    """Whether today's `owner` class of `library` has a method `name` (not a property: `values` is no call)."""
    for home in CLASS_HOMES.get(library, ()):
        cls = getattr(import_optional(home), owner, None)
        if isinstance(cls, type):
            return inspect.isfunction(inspect.getattr_static(cls, name, None))
    return False


UNEXPECTED = re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'")


@rewriter(MECHANICAL)
def said_keyword(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword the library renamed, as its notes said: `read_excel(skip_footer=1)` -> `skipfooter=1`."""
    found = UNEXPECTED.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
        return None
    function, keyword = found.group(1), found.group(2)
    for change in _entries(keyword, function):
        new = _replacement(change)
        if change.kind == "keyword" and new and IDENT.match(new) and new != keyword:
            for call in calls_on_line(tree, receipt.lineno, function):
                kw = next((k for k in call.keywords if k.arg == keyword), None)
                if kw is not None and not any(k.arg == new for k in call.keywords):
                    return replace_node(code, kw, f"{new}={source_of(code, kw.value)}")
    return None


@rewriter(MECHANICAL)
def keywords_into_dtype(code: str, receipt: ParsedReceipt) -> str | None:
    """Keywords pandas said to pass in a dtype now: `astype('category', categories=c, ordered=True)` ->
    `astype(pd.CategoricalDtype(categories=c, ordered=True))`."""
    found = UNEXPECTED.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
        return None
    function, keyword = found.group(1).split(".")[-1], found.group(2)
    for change in _entries(keyword, function, library="pandas"):
        dtype = _replacement(change)
        if not dtype or not re.fullmatch(r"[A-Z]\w*Dtype", dtype):
            continue
        for call in calls_on_line(tree, receipt.lineno, function):
            moved = [k for k in call.keywords if k.arg in change.keys]
            if not moved or len(call.args) > 1:
                continue
            alias = next((a for a, m in receipt.modules.items() if m == "pandas"), None) or "pd"
            inner = ", ".join(source_of(code, k) for k in moved)
            kept = [source_of(code, k) for k in call.keywords if k not in moved]
            text = f"{source_of(code, call.func)}({', '.join([f'{alias}.{dtype}({inner})', *kept])})"
            fixed = replace_node(code, call, text)
            return fixed if alias in receipt.modules else "import pandas as pd\n" + fixed
    return None

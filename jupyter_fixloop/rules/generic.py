"""Generic rewriters driven by what the libraries said changed (`model/changes.json`, harvested from their
release notes by tools/harvest_changes.py), not a function per API. Each declares itself (`@rewriter`:
its kind; their turn is `TURN`, in the order they are defined: registry.py).

- `ix_indexer`: `.ix`, removed in pandas 1.0; its 0.20 deprecation said "use .loc for label based indexing
  or .iloc for positional indexing". Which one, axis by axis, is what `.ix` did with that key on that axis
  (the receipt's `axes of DataFrame: index labels, columns labels`, read in the kernel at the failure): an
  integer key on an axis of labels was a position, any other key a label. All labels -> `.loc`, all
  positions -> `.iloc`, mixed -> `.loc` with the positions made labels (`df.index[0]`, `df.columns[2]`); on rows
  of a MultiIndex `.ix` looked its key up as their labels first, as `.loc` does: `.loc` with the same key.
- `said_method`: a method the error says the object lacks, whose removal or deprecation entry names the
  method to use instead on the same class, or on a class the object's derives from as the notes spell it
  (`Styler.hide_index` -> `Styler.hide`; `Resample.pad` -> `.ffill` on a `DatetimeIndexResampler`); an old
  name that was the new one with an axis in it (`hide_index`, `hide_columns`) passes that axis; one the notes
  write with the argument that moved (`sortlevel(level=...)` -> `sort_index(level=...)`) names it; one the notes
  say to write as an operator (`idx.contains(key)`: "use key in index") or as the method its `method` argument
  names (`r.fillna('nearest')` -> `r.nearest()`) so; an attribute read whose notes name one method for every
  class they list, called (`s.dt.weekday_name` -> `s.dt.day_name()`, pandas 0.23's "in favor of :meth:").
- `said_keyword_method`: a keyword the library said to pass to another method instead (`sort_index(by=...)`:
  "pls use .sort_values(by=...)") -> that method, the same keywords.
- `said_keywords_paired`: keywords renamed together (`pivot_table(rows=, cols=)` -> `index=, columns=`).
- said.py's `keyword_gone` renames a keyword the error says the call does not take, as its entry says
  (`read_excel(skip_footer=1)` -> `skipfooter=1`).
- exported.py and said.py declare more (a name a `*` no longer exports; an operator, an indexer or a module
  the notes say to write instead).
- `keywords_into_dtype`: keywords the entry says to pass in an object now (`astype('category',
  categories=..., ordered=True)`: "in favor of passing a CategoricalDtype") ->
  `astype(pd.CategoricalDtype(categories=..., ordered=True))`.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys

from ..model.knowledge import Change, changes
from .edits import (
    CannotTell,
    ParsedReceipt,
    call_name,
    calls_on_line,
    on_line,
    parse,
    replace_node,
    replace_nodes,
    source_of,
)
from .names import NOTED, attribute_error, import_optional
from .registry import DRIFT, MECHANICAL, repair
from .tables import MEMBERSHIP, METHOD_NAMED, UNEXPECTED_KEYWORD as UNEXPECTED

TURN = DRIFT + 270  # the rewriters' turn: after the removed and renamed APIs the tables know, in their order here


def rewriter(kind: str):
    """Declare a generic rewriter where it is defined: its kind (mechanical: the one reading the library's
    words allow; guess); tried at `TURN`, in the order they are defined."""
    return repair(kind, TURN)


IDENT = re.compile(r"^[A-Za-z_]\w*$")
AXES = re.compile(r"axes of (\w+): index (integers|labels|levels)(?:, columns (integers|labels|levels))?")


def _key_kind(node: ast.expr) -> str:
    """`position` (an integer, a slice or list of them), `label` (a string, a slice or list of them),
    `mask` (a comparison), or `unknown` (a variable: only its value could say)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _key_kind(node.operand)
    if isinstance(node, ast.Constant):
        return "position" if isinstance(node.value, int) and not isinstance(node.value, bool) else "label"
    if isinstance(node, (ast.Slice, ast.List)):  # as its bounds or items are, all of one kind; a bare `:` positions
        parts = node.elts if isinstance(node, ast.List) else [p for p in (node.lower, node.upper) if p is not None]
        kinds = {_key_kind(p) for p in parts}
        return kinds.pop() if len(kinds) == 1 else "position" if isinstance(node, ast.Slice) and not parts else (
            "unknown")
    if isinstance(node, (ast.Compare, ast.BoolOp)) or isinstance(node, ast.UnaryOp) and isinstance(
            node.op, ast.Invert) or isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
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
    levels = axes.group(2) == "levels"
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
             and n.value.attr == "ix" and on_line(n, receipt.lineno)]
    if len({source_of(code, n.value.value) for n in found}) > 1:  # the axes said are those of the one that failed
        raise CannotTell("`.ix` on two objects on one line: the error says the axes of one of them only")
    for node in sorted(found, key=lambda n: n.col_offset, reverse=True):
        code = replace_node(code, node, _on_levels(code, node) if levels else _translated(code, node, integers))
    return code if found else None


def _on_levels(code: str, node: ast.Subscript) -> str:
    """`.ix` on rows of a MultiIndex looked its key up as their labels first (a tuple as one row: `frame.ix['b',
    2]`, `ix[(2007, 'ATL', 'x')]`), as `.loc` does today: the same key, which raises where `.ix` fell back."""
    return f"{source_of(code, node.value.value)}.loc[{source_of(code, node.slice)}]"


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


def entries(*keys: str, library: str | None = None) -> list[Change]:
    """The entries about all of these names (each the last part of one of an entry's names)."""
    return [c for c in changes() if all(k in c.keys for k in keys) and (library is None or c.library == library)]


def noted(module: str, name: str) -> bool:
    """Whether an entry of `module`'s library is about `name` first (its subject): seaborn's `lvplot`."""
    return any(c.names[0].rpartition(".")[2] == name and IMPORTED_AS.get(c.library, c.library) == module.split(".")[0]
               for c in entries(name))


NOTED.append(noted)  # names.attribute_typo takes no such name for a typo


def replacement_of(change: Change) -> str | None:
    """The one replacement an entry names in code (its own, or its deprecation's), or None."""
    said = change.replacement if change.replacement_is == "code" else change.deprecation_replacement
    return said if said and " or " not in said else None


@rewriter(MECHANICAL)
def said_method(code: str, receipt: ParsedReceipt) -> str | None:
    """A method the library removed, as the one its notes said to use instead on the same class (`hide_index()`
    -> `hide(axis='index')`; `Resample.pad` -> `Resample.ffill` on a `DatetimeIndexResampler`); where the notes
    write both calls (pandas 0.17's table: "``DataFrame.sortlevel(level=...)``, Replacement
    ``DataFrame.sort_index(level=...)``", "``DataFrame.sort(columns=...)``, ``DataFrame.sort_values(by=...)``",
    "``Series.sort()``, ``Series.sort_values(inplace=True)``"), the argument that moved under its new keyword and
    the keyword written out, when today's method takes every keyword the call then passes."""
    said = attribute_error(receipt)
    tree = parse(code)
    if not said or said[0].startswith("module ") or tree is None:
        return None
    owner, old = said
    calls = [c for c in calls_on_line(tree, receipt.lineno, old) if isinstance(c.func, ast.Attribute)]
    read = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == old and on_line(n, receipt.lineno)
            and not any(c.func is n for c in calls)]
    for change in entries(old):
        for call in calls:
            text = _said_call(code, call, *_said_instead(change, owner, old)) or _said_written(
                code, tree, call, change, owner, old)
            if text is not None:
                return replace_node(code, call, text)
        new = _said_for_attribute(change, owner) if read else None
        if new is not None:
            return replace_nodes(code, read, lambda n, new=new: f"{source_of(code, n.value)}.{new}")
    return None


def _said_for_attribute(change: Change, owner: str) -> str | None:
    """What to read instead of an attribute, as the notes name it for each class they list, one name for all
    (pandas 0.23: ":attr:`Timestamp.weekday_name`, :attr:`DatetimeIndex.weekday_name`, and
    :attr:`Series.dt.weekday_name` are deprecated in favor of :meth:`Timestamp.day_name`, ..."): `day_name()`, a
    call where today's class of the object has it as a method that needs no argument, else the attribute."""
    said = change.replacement if change.replacement_is == "code" else change.deprecation_replacement or ""
    news = {m.group(2) for m in (CALLED.match(s.strip()) for s in said.split(" or ")) if m and not m.group(3)}
    cls = class_named(change.library, owner) if len(news) == 1 else None
    found = inspect.getattr_static(cls, next(iter(news)), None) if cls is not None else None
    if found is None:
        return None
    if not inspect.isroutine(found):
        return news.pop()
    params = list(inspect.signature(getattr(cls, news.pop())).parameters.values())[1:]
    needed = [p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return None if needed else f"{found.__name__}()"


def _said_written(code: str, tree: ast.Module, call: ast.Call, change: Change, owner: str, old: str) -> str | None:
    """`call` as an entry about the method `old` of `owner`'s class (or one it derives from) says to write it
    instead of a method: an operator (`idx.contains(key)`, "use key in index", pandas 1.0 -> `key in idx`), or the
    method its `method` argument named (pandas 2.1: "Deprecated the ``method`` and ``limit`` keywords on ...
    :meth:`.Resampler.fillna`, use ``obj.bfill()`` or ``obj.ffill()`` instead": `r.fillna('nearest')` ->
    `r.nearest()`, where today's class has that method); else None."""
    said = change.replacement if change.replacement_is == "code" else change.deprecation_replacement or ""
    cls = class_named(change.library, owner)
    if cls is None or not any(n.rpartition(".")[2] == old and family(cls, n.rpartition(".")[0].lstrip("."))
                              for n in change.names):
        return None
    if MEMBERSHIP.match(said) and len(call.args) == 1 and not call.keywords:
        text = f"{source_of(code, call.args[0])} in {source_of(code, call.func.value)}"
        return text if _alone(tree, call) else f"({text})"
    value = _method_value(call) if "method" in change.keys and change.replacement_is == "code" and (
        METHOD_NAMED.match(said)) else None
    if value and inspect.isfunction(inspect.getattr_static(cls, value, None)):
        rest = [source_of(code, k) for k in call.keywords if k.arg != "method"]
        return f"{source_of(code, call.func.value)}.{value}({', '.join(rest)})"
    return None


def _alone(tree: ast.Module, node: ast.expr) -> bool:
    """Whether `node` is a whole statement's value (`x = node`, `node`): no parentheses needed."""
    return any(isinstance(s, (ast.Expr, ast.Assign)) and s.value is node for s in ast.walk(tree))


def _method_value(call: ast.Call) -> str | None:
    """The method name a call passes as its first argument or as `method=`, written out (`'nearest'`)."""
    given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "method")]
    if len(given) != 1 or len(call.args) > 1 or not isinstance(given[0], ast.Constant):
        return None
    value = given[0].value
    return value if isinstance(value, str) and value.isidentifier() else None




def _said_call(code: str, call: ast.Call, new: str | None, moved: tuple[str, str] | None, added: list[str],
               takes: set[str] | None) -> str | None:
    """The call as the notes write it: `new`, the argument `moved` (old keyword, new) under the new keyword,
    `added` (`inplace=True`) written out; None when the call does not fit what the notes wrote."""
    if new is None:
        return None
    args = [source_of(code, a) for a in call.args]
    keywords = {k.arg: source_of(code, k.value) for k in call.keywords if k.arg}
    if moved is not None:
        given = keywords.pop(moved[0], None) if moved[0] in keywords else (args.pop(0) if len(args) == 1 else None)
        if given is None or args:
            return None
        keywords = {moved[1]: given, **keywords}  # where the notes write it: first
    for item in added:
        keywords.setdefault(*item.split("=", 1))
    if takes is not None and not set(keywords) <= takes or len(keywords) < len(call.keywords):
        return None
    axis = new and call.func.attr.startswith(new + "_") and call.func.attr[len(new) + 1:]
    if axis in ("index", "columns") and "axis" not in keywords:  # `hide_index()`: the axis was in the name
        keywords["axis"] = repr(axis)
    return f"{source_of(code, call.func.value)}.{new}({', '.join([*args, *(f'{k}={v}' for k, v in keywords.items())])})"


CALLED = re.compile(r"^\.?(?:([\w.]*)\.)?(\w+)(?:\((.*?)\)?)?$")  # `DataFrame.sort_index(level=...)`
ARGUMENT = re.compile(r"^(\w+)=(\.\.\.|True|False|None|'\w*'|\"\w*\"|-?\d+)$")  # `by=...`, `inplace=True`


def _said_instead(change: Change, owner: str, old: str):
    """(the method an entry says to call instead of `old` on the same class, (the old keyword, the new) of the
    argument the notes write both calls with, the keywords they write out, the keywords the method takes today
    or None) when that class is today's `owner` or one it derives from (the notes' `Resample` is `Resampler`,
    `Groupby` is `GroupBy`) and has that method now; else (None, None, [], None)."""
    nothing = (None, None, [], None)
    said = CALLED.match(replacement_of(change) or "")
    if said is None or not all(ARGUMENT.match(a.strip()) for a in (said.group(3) or "").split(",") if a.strip()):
        return nothing
    new_class, new, inside = said.groups()
    spelled = [(c.rpartition(".")[2], m, rest) for n in change.names for c, _, m in [
        n.split("(")[0].lstrip(".").rpartition(".")] for rest in [n.partition("(")[2]]]
    if not new_class and inside is not None:  # "deprecated in favor of ``tobytes()``": the same class's
        new_class = next((c for c, m, _ in spelled if m == old), "")
    cls = class_named(change.library, owner) if new_class else None
    if cls is None or not inspect.isroutine(inspect.getattr_static(cls, new, None)):
        return nothing  # a property (`values`) is no call
    olds = [rest for c, m, rest in spelled if c == new_class.rpartition(".")[2] and m == old and family(cls, c)]
    if not olds:
        return nothing
    arguments = [ARGUMENT.match(a.strip()).groups() for a in (inside or "").split(",") if a.strip()]
    carried = [k for k, v in arguments if v == "..."]
    was = ARGUMENT.match(olds[0].rstrip(")").strip())
    moved = (was.group(1), carried[0]) if was and was.group(2) == "..." and len(carried) == 1 else None
    if carried and moved is None:
        return nothing
    params = inspect.signature(getattr(cls, new)).parameters.values()
    takes = None if any(p.kind == p.VAR_KEYWORD for p in params) else {p.name for p in params}
    return new, moved, [f"{k}={v}" for k, v in arguments if v != "..."], takes


IMPORTED_AS = {"scikit-learn": "sklearn"}


def class_named(library: str, owner: str) -> type | None:
    """Today's class named `owner` of `library`, from the library's modules imported (a frame's resampler,
    `DatetimeIndexResampler`, lives in `pandas.core.resample`), or None."""
    root = IMPORTED_AS.get(library, library)
    if import_optional(root) is None:
        return None
    for name, module in list(sys.modules.items()):
        cls = getattr(module, owner, None) if name == root or name.startswith(root + ".") else None
        if isinstance(cls, type) and cls.__name__ == owner:
            return cls
    return None


def family(cls: type, said: str) -> bool:
    """Whether the class a library's notes name (`Resample`, `Groupby`, `Index`) is `cls` or one it derives from,
    as the notes spell it (`Resample` for `Resampler`, `Index` for `DatetimeIndex`)."""
    said = said.lower()
    return bool(said) and any(c.__name__.lower().startswith(said) or c.__name__.lower().endswith(said)
                              for c in cls.__mro__)


@rewriter(MECHANICAL)
def said_keyword_method(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword the library said to pass to another method of the same object instead (pandas 0.19's own
    warning: "by argument to sort_index is deprecated, pls use .sort_values(by=...)"): `df.sort_index(by='a',
    ascending=False)` -> `df.sort_values(by='a', ascending=False)`, where today's method takes every keyword
    the call passes and the call passes none by position."""
    found = UNEXPECTED.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
        return None
    owner, _, function = found.group(1).rpartition(".")
    keyword = found.group(2)
    for change in entries(keyword, function):
        said = CALLED.match(replacement_of(change) or "")
        new = said.group(2) if said and said.group(3) == f"{keyword}=..." and not said.group(1) else None
        cls = class_named(change.library, owner.rpartition(".")[2]) if new and owner else None
        try:
            takes = set(inspect.signature(getattr(cls, new)).parameters) if cls is not None else set()
        except (AttributeError, TypeError, ValueError):
            continue
        for call in calls_on_line(tree, receipt.lineno, function) if keyword in takes else []:
            if isinstance(call.func, ast.Attribute) and not call.args and {k.arg for k in call.keywords} <= takes:
                return replace_node(code, call.func, f"{source_of(code, call.func.value)}.{new}")
    return None


PAIRED = re.compile(r"((?:``\w+``(?:,\s*|\s+and\s+))+``\w+``)(?:'s)?\s+(?:keyword\s+)?arguments?\b")


@rewriter(MECHANICAL)
def said_keywords_paired(code: str, receipt: ParsedReceipt) -> str | None:
    """Keywords the library renamed together, each as the one its notes name in the same place (pandas 0.16:
    "``rows`` and ``cols`` keyword arguments were removed in favor of ``index`` and ``columns``"):
    `pivot_table(rows='b', cols='c')` -> `pivot_table(index='b', columns='c')`, every pair the call passes, where
    today's callable the notes name has the new keywords and not the old (`pivot_table` passes unknown keywords
    on to its `aggfunc`: the error is not about them)."""
    tree = parse(code)
    if not receipt.ename or tree is None:
        return None
    for call in calls_on_line(tree, receipt.lineno):
        function = call_name(call).rpartition(".")[2]
        for change in {c for k in call.keywords if k.arg for c in entries(k.arg)}:
            today = _parameters(change, function)
            pairs = {old: new for old, new in _pairs(change).items() if new in today and old not in today}
            given = {k.arg for k in call.keywords}
            renamed = [k for k in call.keywords if k.arg in pairs and pairs[k.arg] not in given]
            for kw in sorted(renamed, key=lambda k: k.value.col_offset, reverse=True):
                code = replace_node(code, kw, f"{pairs[kw.arg]}={source_of(code, kw.value)}")
            if renamed:
                return code
    return None


def _parameters(change: Change, function: str) -> set[str]:
    """The parameters today's callable an entry names as `function` (`DataFrame.pivot_table`) takes by name."""
    for name in (n for n in change.names if n.rpartition(".")[2] == function):
        try:
            params = inspect.signature(today(change, name)).parameters.values()
        except (TypeError, ValueError):
            continue
        return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return set()


def today(change: Change, said: str):
    """Today's callable of the entry's library a name is (`DataFrame.set_index`, `.Axis.set_ticks`, `concat`,
    `pandas.DataFrame.pivot_table`: its class by the last part of the name before its own)."""
    owner, _, name = said.lstrip(".").rpartition(".")
    return getattr(class_named(change.library, owner.rpartition(".")[2]) if owner else import_optional(
        IMPORTED_AS.get(change.library, change.library)), name, None)


def _pairs(change: Change) -> dict[str, str]:
    """{old keyword: new} where an entry names as many old keywords (``rows`` and ``cols`` keyword arguments) as
    replacements (``index`` and ``columns``), in that order."""
    news = change.replacement.split(" or ") if change.replacement_is == "code" else []
    for said in PAIRED.finditer(change.words):
        olds = re.findall(r"``(\w+)``", said.group(1))
        if len(olds) == len(news) > 1 and all(IDENT.match(n) for n in news):
            return dict(zip(olds, news))
    return {}


@rewriter(MECHANICAL)
def keywords_into_dtype(code: str, receipt: ParsedReceipt) -> str | None:
    """Keywords pandas said to pass in a dtype now: `astype('category', categories=c, ordered=True)` ->
    `astype(pd.CategoricalDtype(categories=c, ordered=True))`."""
    found = UNEXPECTED.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
        return None
    function, keyword = found.group(1).split(".")[-1], found.group(2)
    for change in entries(keyword, function, library="pandas"):
        dtype = replacement_of(change)
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

"""What the cell's filters, merges and concats matched: facts read after a run, in the sandbox.

A cell can run without error and still have done the wrong thing to the data: a filter on a value
no row holds as written (`df['status'] == 'Active'` where the column says 'active'), a merge on
keys that match only once their case or spaces agree, a concat of a column that is numbers in one
frame and numbers written as text in another. The error surfaces in a later cell, whose failure
says nothing about why. These facts say it, read from the objects the cell used (names the cell does
not bind or change from the statement that used them on, so their values are the ones it saw), and
only when something matched less than it would once normalized. Stdlib-only, run inside the sandbox
(runner.py), gated on the code: a cell with no such call or comparison costs one walk of its tree.

Formats the built-in engine reads (rules/matches.py), keep them stable:
`values near 'x' in df['c'] (none equal it): 'y' (case)`,
`merge keys: a['k'] and b['k'] share 0 of 3 values; with .str.upper() on a['k'] they share 3 of 3`,
`concat: column 'q' is int64 in a but str in b; b.astype({'q': 'int64'}) converts every value`,
`groupby keys: df['city'] holds 5 values that are 3 with .str.strip() (' Munich' and 'Munich')`.
"""

from __future__ import annotations

import ast
import difflib

from . import ipysyntax
from .facts import _MISSING, _clip, _is_frame, _is_plain, _is_series, _value_of, written

MAX_ROWS = 200_000  # values read per column (the first rows of a longer one)
MAX_VALUES = 5_000  # distinct values compared per column
MAX_FACTS = 4
TRANSFORMS = (  # how pandas writes each normalisation, and what it does to one value
    (".str.strip()", str.strip), (".str.lower()", str.lower), (".str.upper()", str.upper),
    (".str.title()", str.title), (".str.strip().str.lower()", lambda s: s.strip().lower()),
    (".str.strip().str.upper()", lambda s: s.strip().upper()),
    (".str.strip().str.title()", lambda s: s.strip().title()),
)


def wanted(tree: ast.AST | None) -> bool:
    """Whether the code has anything these facts are about (a comparison with a string, a merge, a concat)."""
    return tree is not None and any(_filter(n) or _call(n, "merge") or _call(n, "concat") or _call(n, "groupby")
                                    for n in ipysyntax.walk(tree))


def gather(tree: ast.Module | None, ns: dict) -> list[str]:
    """The facts for the cell `tree` that ran in `ns`; never raises (a fact that cannot be read is left out)."""
    if not wanted(tree):
        return []
    facts: list[str] = []
    for index, top in enumerate(tree.body):
        # a name bound or changed from this statement on may not hold what the call saw; one changed above it does
        bound = set().union(*(written(s) for later in tree.body[index:] for s in ast.walk(later)
                              if isinstance(s, ast.stmt)))
        facts += _facts_of(top, ns, bound)
    return list(dict.fromkeys(facts))[:MAX_FACTS]


def _facts_of(top: ast.stmt, ns: dict, bound: set[str]) -> list[str]:
    facts: list[str] = []
    for node in ast.walk(top):
        try:
            if _filter(node):
                facts += _value_facts(node, ns, bound)
            elif _call(node, "merge"):
                facts += _merge_facts(node, ns, bound)
            elif _call(node, "concat"):
                facts += _concat_facts(node, ns, bound)
            elif _call(node, "groupby"):
                facts += _groupby_facts(node, ns, bound)
        except Exception:  # noqa: BLE001 - an object that cannot be read gives no fact, never an error
            continue
    return facts


# ---------------------------------------------------------------- a filter on a value no row holds


def _filter(node: ast.AST) -> bool:
    """`col == 'x'`, `col != 'x'`, `col.isin(['x', 'y'])`."""
    if isinstance(node, ast.Call):
        return _call(node, "isin") and len(node.args) == 1 and _literals(node.args[0]) != []
    return (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            and any(_text(n) for n in (node.left, node.comparators[0])))


def _literals(node: ast.AST) -> list[str]:
    """The strings of a list, tuple or set written out in the code ([] when not only strings)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts and all(_text(e) for e in node.elts):
        return [e.value for e in node.elts]
    return []


def _text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _value_facts(node: ast.AST, ns: dict, bound: set[str]) -> list[str]:
    if isinstance(node, ast.Call):
        column, literals = node.func.value, _literals(node.args[0])
    else:
        column, literal = (node.left, node.comparators[0]) if _text(node.comparators[0]) else (
            node.comparators[0], node.left)
        literals = [literal.value]
    series = _seen(column, ns, bound)
    values = _strings(series) if _is_series(series) else set()
    facts = []
    for text in literals if values else ():
        near, how = (None, "") if text in values else _near(text, values)
        if near is not None:
            facts.append(f"values near {text!r} in {ast.unparse(column)} (none equal it): {_clip(repr(near), 200)} "
                         f"({how})")
    return facts


def _near(text: str, values: set[str]) -> tuple[str | None, str]:
    """The one value `text` was likely meant to be, and how it differs; (None, '') when not exactly one."""
    for how, norm in (("case", str.casefold), ("spaces", lambda s: " ".join(s.split())),
                      ("case and spaces", lambda s: " ".join(s.split()).casefold())):
        same = [v for v in values if norm(v) == norm(text)]
        if len(same) == 1:
            return same[0], how
        if same:
            return None, ""
    close = difflib.get_close_matches(text, sorted(values)[:MAX_VALUES], n=2, cutoff=0.8)
    return (close[0], "spelling") if len(close) == 1 else (None, "")


# ---------------------------------------------------------------- a merge on keys that do not match


def _call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name


def _merge_facts(call: ast.Call, ns: dict, bound: set[str]) -> list[str]:
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    module = _value_of(call.func.value, ns) if _is_plain(call.func.value) else _MISSING
    if type(module).__name__ == "module":  # pd.merge(left, right, ...)
        sides = [*call.args[:2], kw.get("left"), kw.get("right")]
    else:  # left.merge(right, ...)
        sides = [call.func.value, call.args[0] if call.args else kw.get("right")]
    sides = [s for s in sides if s is not None]
    if len(sides) < 2 or not (_is_plain(sides[0]) and _is_plain(sides[1])):
        return []
    left, right = sides[:2]
    on = _labels(kw.get("on"))
    pairs = list(zip(on, on)) if on else list(zip(_labels(kw.get("left_on")), _labels(kw.get("right_on"))))
    frames = _seen(left, ns, bound), _seen(right, ns, bound)
    if not all(_is_frame(f) for f in frames):
        return []
    facts = []
    for lkey, rkey in pairs:
        if lkey in frames[0].columns and rkey in frames[1].columns:
            facts += _keys_fact(f"{ast.unparse(left)}[{lkey!r}]", f"{ast.unparse(right)}[{rkey!r}]",
                                _strings(frames[0][lkey]), _strings(frames[1][rkey]))
    return facts


def _labels(node) -> list[str]:
    if node is None:
        return []
    if _text(node):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and all(_text(e) for e in node.elts):
        return [e.value for e in node.elts]
    return []


def _keys_fact(left: str, right: str, lvalues: set[str], rvalues: set[str]) -> list[str]:
    """One fact when the left keys match more of the right ones once normalised (one side, else both)."""
    if not lvalues or not rvalues:
        return []
    shared = len(lvalues & rvalues)
    best = (shared, "", "")
    for code, norm in TRANSFORMS:
        for where in (left, right, "both"):
            lnorm = norm if where in (left, "both") else str
            rv = {norm(v) for v in rvalues} if where in (right, "both") else rvalues
            count = sum(lnorm(v) in rv for v in lvalues)
            if count > best[0]:
                best = (count, code, where)
    count, code, where = best
    if not code or 2 * count < len(lvalues):
        return []
    return [f"merge keys: {left} and {right} share {shared} of {len(lvalues)} values; with {code} on {where} they "
            f"share {count} of {len(lvalues)}"]


# ---------------------------------------------------------------- groups that differ by spaces or case


def _groupby_facts(call: ast.Call, ns: dict, bound: set[str]) -> list[str]:
    """`df.groupby('city')` on keys that are fewer once stripped or cased alike (' Munich', 'Munich'): the
    groups split one place in two. The first normalisation that joins the most of them."""
    frame = _seen(call.func.value, ns, bound)
    keys = _labels(call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "by"), None))
    if not _is_frame(frame):
        return []
    facts = []
    for key in keys:
        values = _strings(frame[key]) if key in frame.columns else set()
        best = (len(values), "", ())
        for code, norm in TRANSFORMS:
            joined = {}
            for v in values:
                joined.setdefault(norm(v), []).append(v)
            if len(joined) < best[0]:
                best = (len(joined), code, min(sorted(g) for g in joined.values() if len(g) > 1))
        count, code, example = best
        if code:
            facts.append(f"groupby keys: {ast.unparse(call.func.value)}[{key!r}] holds {len(values)} values that are "
                         f"{count} with {code} ({_clip(repr(example[0]), 30)} and {_clip(repr(example[1]), 30)})")
    return facts


# ---------------------------------------------------------------- a concat that lost a column's dtype


def _concat_facts(call: ast.Call, ns: dict, bound: set[str]) -> list[str]:
    if not call.args or not isinstance(call.args[0], (ast.List, ast.Tuple)):
        return []
    parts = [(e, _seen(e, ns, bound)) for e in call.args[0].elts if _is_plain(e)]
    parts = [(e, f) for e, f in parts if _is_frame(f)]
    facts = []
    for node, frame in parts:
        for column in frame.columns:
            if str(frame[column].dtype) not in ("object", "str", "string"):
                continue
            numeric = [str(f[column].dtype) for e, f in parts if column in f.columns and _numeric(f[column].dtype)]
            if not numeric:
                continue
            try:
                frame[column].iloc[:MAX_ROWS].astype(numeric[0])
            except Exception:  # noqa: BLE001 - not every value is a number: no fact
                continue
            name = ast.unparse(node)
            other = next(ast.unparse(e) for e, f in parts if column in f.columns and _numeric(f[column].dtype))
            facts.append(f"concat: column {column!r} is {numeric[0]} in {other} but {frame[column].dtype} in {name}; "
                         f"{name}.astype({{{column!r}: {numeric[0]!r}}}) converts every value")
    return facts


def _numeric(dtype) -> bool:
    kind = getattr(dtype, "kind", "")
    return bool(kind) and kind in "iuf"


# ---------------------------------------------------------------- reading values


def _seen(node: ast.AST, ns: dict, bound: set[str]):
    """The value of a plain expression as the cell saw it: _MISSING when the cell bound its root name again."""
    root = node
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name) or root.id in bound or not _is_plain(node):
        return _MISSING
    return _value_of(node, ns)


def _strings(series) -> set[str]:
    """The distinct text values of a column (its first MAX_ROWS rows), at most MAX_VALUES; none if not text."""
    values = series.iloc[:MAX_ROWS].dropna().unique()
    found = {v for v in list(values[:MAX_VALUES]) if isinstance(v, str)}
    return found if len(found) * 2 >= min(len(values), MAX_VALUES) else set()

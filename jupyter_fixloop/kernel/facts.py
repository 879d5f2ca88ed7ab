"""Context at the failure: facts read from the live objects, answering the question the error raises.

Runs inside the sandbox kernel (runner.py calls `gather`), the only place where the objects of the
failing frame still exist. Stdlib-only: pandas and numpy objects are recognised by their
attributes, never imported. Each fact is one line (a DataFrame's rows may follow on more lines);
the most specific facts come first, so that trimming a receipt to its budget drops the least useful.

Formats the built-in engine reads (repairs.py), keep them stable:
`defined names close to 'x': [...]`, `what the names close to 'x' are: {name: 'kind: abilities'}`,
`attributes of T close to 'x': [...]`, `near matches for 'k': 'K' (case)`, `name = repr`.
"""

from __future__ import annotations

import ast
import builtins
import collections
import difflib
import linecache
import os
import re
import reprlib

from jupyter_fixloop.kernel import ipysyntax
from jupyter_fixloop.kernel.files import case_twin

MAX_REPR = 160
MAX_FACTS = 12
SHAPE_WORDS = re.compile(r"shape|length|dimension|broadcast|size \d|mismatch|aligned|same number|elements", re.I)
TYPE_WORDS = re.compile(r"dtype|type|convert|pars|numeric|str|int|float|object|operand|support|cast|merge|date", re.I)
LABEL_MESSAGE = re.compile(r"not in index|not found in axis|are in the \[|None of \[|not contained")
SELF_DESCRIBING = (str, int, float, complex, bool, type(None), list, tuple, dict, set, frozenset)


def gather(exc: BaseException, ns: dict, frame, user_names=(), outer: BaseException | None = None) -> list[str]:
    """Facts for `exc`, raised while `frame` (the innermost frame of the cell, or None) was running;
    `outer` is the error the cell saw when `exc` is its root cause (pandas on Arrow strings raises
    TypeError from an ArrowNotImplementedError)."""
    scope = dict(ns)
    if frame is not None and frame.f_code.co_name != "<module>":
        scope.update(frame.f_locals)
    stmt = statement_at(frame)
    exprs = _evaluable(stmt)
    facts: list[str] = []
    if isinstance(exc, NameError) and getattr(exc, "name", None):
        facts += _name_facts(exc.name, scope, user_names)
    elif isinstance(exc, AttributeError):
        facts += _attribute_facts(exc, exprs, scope)
    elif isinstance(exc, KeyError):
        facts += _key_facts(exc, exprs, scope)
    elif isinstance(exc, FileNotFoundError):
        facts += _file_facts(exc, stmt, scope, user_names)
    if any(
        isinstance(e, (TypeError, ValueError)) and TYPE_WORDS.search(str(e)) for e in (exc, outer) if e is not None
    ) or (isinstance(exc, AttributeError) and "accessor" in str(exc)):
        facts += _dtype_facts(exprs, stmt, scope)
    if isinstance(exc, ValueError) and DATE_WORDS.search(str(exc)):
        facts += _date_facts(exprs, scope)
    if isinstance(exc, IndexError) or (
        isinstance(exc, (ValueError, TypeError, RuntimeError)) and SHAPE_WORDS.search(str(exc))
    ):
        facts += _shape_facts(exprs, scope)
    if frame is not None:
        facts += _value_facts(frame, stmt, scope, told=facts)
    return facts[:MAX_FACTS]


# ---------------------------------------------------------------- the failing statement


def statement_at(frame) -> list[ast.AST]:
    """The expression nodes of the statement running in `frame`: the whole statement, even over several
    lines; for a compound statement, only its header (a `for` loop's iterable, an `if`'s test)."""
    if frame is None:
        return []
    lineno = frame.f_lineno
    source = "".join(linecache.getlines(frame.f_code.co_filename))  # the runner's, when the cell's
    tree = ipysyntax.parsed(source)
    if tree is None:  # IPython syntax (a `;` line, a magic): read as the runner ran it, line for line
        view = ipysyntax.readable(source)
        tree = ipysyntax.parsed(view.python) if view is not None else None
    if tree is None:
        return _parse_line(linecache.getline(frame.f_code.co_filename, lineno))
    best = None
    for node in _walk_from(tree.body, lineno):  # ast.walk's order, in the statements over the line only
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    if best is None:
        return []
    return _header(best)


def _walk_from(body: list[ast.stmt], lineno: int):
    """The nodes of the top-level statements that span `lineno`, in the order `ast.walk` of the whole tree meets
    them (breadth first): a 40,000-line cell's failing line is found without walking all of it."""
    todo = collections.deque(s for s in body if s.lineno <= lineno <= (s.end_lineno or s.lineno))
    while todo:
        node = todo.popleft()
        todo.extend(ast.iter_child_nodes(node))
        yield node


def _parse_line(line: str) -> list[ast.AST]:
    try:
        return [ast.parse(line.strip())]
    except SyntaxError:
        return []


def _header(node: ast.stmt) -> list[ast.AST]:
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target, node.iter]
    if isinstance(node, (ast.If, ast.While)):
        return [node.test]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in node.items]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return list(node.decorator_list)
    if isinstance(node, ast.Try):
        return []
    return [node]


def _evaluable(nodes: list[ast.AST]) -> list[ast.expr]:
    """Names, attribute chains and constant subscripts on the statement: safe to evaluate again (no calls)."""
    seen, found = set(), []
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.expr) and _is_plain(node):
                text = ast.unparse(node)
                if text not in seen:
                    seen.add(text)
                    found.append(node)
    return found


def _is_plain(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _is_plain(node.value)
    if isinstance(node, ast.Subscript):
        return _is_plain(node.value) and _constant(node.slice) is not _MISSING
    return False


_MISSING = object()


def _constant(node: ast.AST):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _value_of(node: ast.expr, scope: dict):
    try:
        return eval(compile(ast.Expression(node), "<context>", "eval"), {"__builtins__": builtins}, scope)
    except BaseException:
        return _MISSING


# ---------------------------------------------------------------- one function per kind of error


def _name_facts(name: str, scope: dict, user_names) -> list[str]:
    names = sorted(n for n in {*scope, *user_names, *dir(builtins)} if not n.startswith("_"))
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if name in user_names and name not in scope:  # the user has it; the loop did not share it
        return [f"`{name}` is in your namespace but not shared with the sandbox; add --share {name} "
                "(fix(share=...), c.FixLoop.share)"]
    facts = [f"defined names close to {name!r}: {_list(close) or 'none'}"]
    if len(close) > 1:  # which of them could serve where the typo stands: the engine breaks a tie with it
        kinds = {n: _kind_of(n, scope) for n in close if n in scope or hasattr(builtins, n)}
        facts.append(f"what the names close to {name!r} are: {kinds!r}")
    return facts


def _kind_of(name: str, scope: dict) -> str:
    """`list: iterable, subscriptable`, `builtin function: callable`: what a name is and what it can do."""
    builtin = name not in scope
    value = getattr(builtins, name) if builtin else scope[name]
    kind = type(value).__name__
    if builtin:
        kind = "builtin " + ("function" if kind == "builtin_function_or_method" else kind)
    cls = type(value)
    can = [word for word, able in (("callable", callable(value)), ("iterable", hasattr(cls, "__iter__")),
                                   ("subscriptable", hasattr(cls, "__getitem__"))) if able]
    return f"{kind}: {', '.join(can)}" if can else kind


def _attribute_facts(exc: AttributeError, exprs: list[ast.expr], scope: dict) -> list[str]:
    name = getattr(exc, "name", None) or _quoted_after(str(exc), "attribute")
    obj = getattr(exc, "obj", None)
    if obj is None and name:  # numpy's module __getattr__ raises without obj: find `x.name` on the line
        for node in exprs:
            if isinstance(node, ast.Attribute) and node.attr == name:
                value = _value_of(node.value, scope)
                if value is not _MISSING:
                    obj = value
                    break
    if obj is None or not name:
        return []
    attrs = [a for a in dir(obj) if not a.startswith("_")]
    close = difflib.get_close_matches(name, attrs, n=4, cutoff=0.6)
    facts = [f"attributes of {_type_name(obj)} close to {name!r}: {_list(close) or 'none'}"]
    owner = next((ast.unparse(n.value) for n in exprs if isinstance(n, ast.Attribute) and n.attr == name), "it")
    facts += _index_facts(obj, name, owner)
    if name == "ix" and hasattr(obj, "index"):  # pandas removed `.ix`: what it read each key as depends on the axis
        facts.append(_axes_fact(obj))
    columns = _keys_of(obj)
    if columns and hasattr(obj, "columns"):
        near = _near_matches(name, columns)
        if near:
            facts.append(f"columns of {_type_name(obj)} close to {name!r}: {', '.join(near)}")
    return facts


NUMERIC_INDEX = ("integer", "floating", "mixed-integer-float")  # an axis `.ix` read integer keys on as labels


def _axes_fact(obj) -> str:
    """`axes of DataFrame: index labels, columns integers`: whether each axis holds integers (`.ix` read
    an integer key on it as a label), levels (a MultiIndex: `.ix` looked a key up as its labels first) or other
    labels (`.ix` read an integer key on it as a position)."""
    axes = [("index", obj.index)] + ([("columns", obj.columns)] if hasattr(obj, "columns") else [])
    kinds = [f"{n} {_axis_kind(a)}" for n, a in axes]
    return f"axes of {_type_name(obj)}: {', '.join(kinds)}"


def _axis_kind(axis) -> str:
    if getattr(axis, "nlevels", 1) > 1:
        return "levels"
    return "integers" if getattr(axis, "inferred_type", "") in NUMERIC_INDEX else "labels"


def _key_facts(exc: KeyError, exprs: list[ast.expr], scope: dict) -> list[str]:
    """For `obj[key]` failing: the keys or columns obj really has, with near matches marked."""
    missing = _missing_labels(exc)
    if not missing:
        return []
    candidates = [n.value for n in exprs if isinstance(n, ast.Subscript)]
    candidates += [n for n in exprs if isinstance(n, (ast.Name, ast.Attribute))]  # `df.groupby('x')`: no subscript
    for node in candidates:
        container = _value_of(node, scope)
        if container is _MISSING:
            continue
        keys = _keys_of(container)
        if keys is None or all(_has(keys, k) for k in missing):
            continue
        what = "columns" if hasattr(container, "columns") else "keys"
        facts = [f"{ast.unparse(node)} {what}: {_list(keys, 30) or '[] (empty)'}"]
        for key in missing[:3]:
            facts += _index_facts(container, key, ast.unparse(node))
            near = _near_matches(key, keys)
            if near:
                facts.append(f"near matches for {key!r}: {', '.join(near)}")
        return facts
    return []


def _index_facts(container, key, name: str) -> list[str]:
    """A label read as a column that is the frame's index (its name, or one of its rows): said, with how to read
    it (a model that misses it reads `army['origin']` round after round)."""
    index = getattr(container, "index", None)
    if index is None or not hasattr(container, "columns"):
        return []
    levels = [n for n in getattr(index, "names", None) or [] if n is not None]
    if _has(levels, key):
        read = f"{name}.index" + (f".get_level_values({key!r})" if len(levels) > 1 else "")
        return [f"{key!r} is not a column of {name} but the name of its index: read it as {read}, or make it a "
                f"column again with {name}.reset_index()"]
    try:
        found = len(index) <= 1_000_000 and key in index
    except Exception:
        found = False
    return [f"{key!r} is a label of {name}'s index (a row), not a column: {name}.loc[{key!r}]"] if found else []


def _file_facts(exc: FileNotFoundError, stmt: list[ast.AST], scope: dict, user_names) -> list[str]:
    """A file the cell reads is not here, while the data is loaded already: the names of the user's that hold it
    (a model that reloads `pd.read_csv('euro2012.csv')` where `euro12` exists keeps failing)."""
    path = exc.filename if isinstance(exc.filename, str) else None
    twin = case_twin(path, os.getcwd()) if path else None
    if twin:  # the author's file system ignored case (macOS', Windows'): the cell names it another way
        return [f"the file {path!r} is not here, but {twin!r} is: the names differ in case only"]
    yours = set(user_names) | {n for n, v in scope.items() if _is_frame(v) and not n.startswith("_")}
    made = sorted({n for node in stmt if isinstance(node, ast.stmt) for n in written(node)} & yours)
    read = f" reading {path!r} again" if path else " reading it from a file again"
    if made:
        return [f"`{n}` is already yours{_described(scope, n)}, made before this cell: use it as it is instead of"
                f"{read} (that file is not here)" for n in made[:3]]
    frames = [n for n in sorted(yours) if _is_frame(scope.get(n))]
    if not frames:
        return []
    return [f"the file{f' {path!r}' if path else ''} is not here; the data is loaded already in your namespace: "
            + ", ".join(f"`{n}`{_described(scope, n)}" for n in frames[:4]) + "; use it as it is"]


def _described(scope: dict, name: str) -> str:
    """` (DataFrame 16×35)` for a frame the sandbox holds, else ""."""
    value = scope.get(name)
    if _is_frame(value):
        rows, cols = value.shape
        return f" (DataFrame {rows}×{cols})"
    return f" ({_type_name(value)})" if name in scope else ""


def _missing_labels(exc: KeyError) -> list:
    """The labels a KeyError is about: its key, or the labels quoted in a pandas message."""
    if not exc.args:
        return []
    key = exc.args[0]
    if isinstance(key, str) and LABEL_MESSAGE.search(key):
        return re.findall(r"'((?:[^'\\]|\\.)*)'", key.split(" dtype=")[0])[:5]
    return [key]


def _has(keys: list, key) -> bool:
    try:
        return key in keys
    except Exception:
        return False


def _dtype_facts(exprs: list[ast.expr], stmt: list[ast.AST], scope: dict) -> list[str]:
    """The dtypes of the pandas columns the failing statement touches (values too, when they are text)."""
    mentioned = {
        c.value for root in stmt for c in ast.walk(root) if isinstance(c, ast.Constant) and isinstance(c.value, str)
    }
    parts, seen = [], set()
    for node in exprs:
        value = _value_of(node, scope)
        if value is _MISSING:
            continue
        text = ast.unparse(node)
        if _is_series(value) and id(value) not in seen:
            seen.add(id(value))
            parts.append(f"{text} {_dtype_of(value)}")
        elif _is_frame(value):
            cols = [c for c in value.columns if c in mentioned]
            if cols:
                parts += [f"{text}[{c!r}] {_dtype_of(value[c])}" for c in cols[:4]]
            elif not isinstance(node, ast.Subscript):
                shown = ", ".join(f"{c} {value[c].dtype}" for c in list(value.columns)[:10])
                parts.append(f"{text}: {shown}")
    parts = list(dict.fromkeys(parts))
    return [f"dtypes: {'; '.join(parts[:6])}"] if parts else []


DATE_WORDS = re.compile(r"doesn't match format|time data|Unknown datetime string format|day is out of range", re.I)
NUMERIC_DATE = re.compile(r"^(\d{1,2})([/.\-])(\d{1,2})\2\d{2,4}$")
ISO_DATE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}(?:[ T].*)?$")
DATE_ROWS = 100_000  # of a text column, the values read for which way its dates are written


def _date_facts(exprs: list[ast.expr], scope: dict) -> list[str]:
    """How the text dates of the series on the failing statement are written, counted over their values:
    "dates: df['d'] (200 values): 120 ISO; 80 d/m or m/d with '/': 31 with a first field > 12 (day first,
    e.g. '25/12/2024'), 0 with a second field > 12 (month first), 49 with both <= 12 (either way, e.g.
    '03/05/2024')". The day-first rows are the data's own word, as pandas' dayfirst warning is."""
    out = []
    for node in exprs:
        value = _value_of(ast.parse(ast.unparse(node), mode="eval").body, scope)  # a target is read as a value
        if value is _MISSING or not _is_series(value):
            continue
        try:
            counted = _date_counts(value.dropna().iloc[:DATE_ROWS].tolist())
        except Exception:
            continue
        if counted is not None:
            out.append(f"dates: {ast.unparse(node)} {counted}")
    return out[:1]


def _date_counts(values: list) -> str | None:
    iso, first, second, both, seps = 0, [], [], [], set()
    for v in values:
        text = v.strip() if isinstance(v, str) else None
        if text is None:
            return None
        m = NUMERIC_DATE.match(text)
        if ISO_DATE.match(text):
            iso += 1
        elif m:
            seps.add(m.group(2))
            a, b = int(m.group(1)), int(m.group(3))
            (first if a > 12 else second if b > 12 else both).append(text)
    slashed = len(first) + len(second) + len(both)
    if not slashed:
        return None
    sep = "".join(sorted(seps))

    def eg(found: list) -> str:
        return f", e.g. {found[0]!r}" if found else ""

    return (f"({len(values)} values): {iso} ISO; {slashed} d/m or m/d with {sep!r}: {len(first)} with a first field "
            f"> 12 (day first{eg(first)}), {len(second)} with a second field > 12 (month first{eg(second)}), "
            f"{len(both)} with both <= 12 (either way{eg(both)})")


def _dtype_of(series) -> str:
    dtype = str(series.dtype)
    if dtype in ("object", "str", "string", "category") or dtype.startswith("string"):
        try:
            sample = [v for v in series.dropna().unique()[:3]]
            return f"{dtype} (e.g. {', '.join(_clip(repr(v), 30) for v in sample)})" if sample else dtype
        except Exception:
            return dtype
    if dtype.startswith("float"):  # whole numbers read as float (ZIP codes, ids beside a missing value)
        try:
            values = series.dropna()
            if len(values) and bool((values == values.round()).all()):
                return f"{dtype} (e.g. {', '.join(repr(float(v)) for v in values.unique()[:3])})"
        except Exception:
            return dtype
    return dtype


def _shape_facts(exprs: list[ast.expr], scope: dict) -> list[str]:
    """Shapes of the arrays and frames on the failing statement, lengths of the sequences."""
    parts, seen = [], set()
    for node in exprs:
        value = _value_of(node, scope)
        if value is _MISSING or callable(value) and not hasattr(value, "shape") or id(value) in seen:
            continue
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple):
            seen.add(id(value))
            parts.append(f"{ast.unparse(node)} {shape}")
        elif isinstance(value, (list, tuple, dict, set, range)):
            seen.add(id(value))
            parts.append(f"{ast.unparse(node)} len {len(value)}")
    return [f"shapes: {', '.join(parts[:8])}"] if parts else []


def _value_facts(frame, stmt: list[ast.AST], scope: dict, told: list[str] = ()) -> list[str]:
    """Types and short reprs of the names on the failing statement (a function's locals if in one).

    Only the first DataFrame shows its rows, and none whose columns or dtypes a fact above already
    gave: the rows cost more tokens than anything else in a receipt."""
    names = {n.id for root in stmt for n in ast.walk(root) if isinstance(n, ast.Name)}
    if frame.f_code.co_name != "<module>":
        names |= set(frame.f_locals)
    listed = {fact.split(" ", 1)[0] for fact in told if " columns: " in fact}
    for fact in told:  # a frame whose involved columns' dtypes (and sample values) are already given
        if fact.startswith("dtypes: "):
            listed |= set(re.findall(r"(?:^dtypes: |; )([A-Za-z_]\w*)[\[:]", fact))
    out, rows_shown = [], False
    for name in sorted(names):
        if name not in scope or name.startswith(("_", ".")):
            continue
        value = scope[name]
        if callable(value) and not hasattr(value, "shape") or type(value).__name__ == "module":
            continue
        text = short_repr(value)
        if _is_frame(value) and (rows_shown or name in listed):
            text = text.splitlines()[0]
        rows_shown = rows_shown or _is_frame(value) and "\n" in text
        out.append(f"{name} = {text}")
    return out[:6]


# ---------------------------------------------------------------- keys and near matches


def _keys_of(container):
    cols = getattr(container, "columns", None)
    if cols is not None:
        return list(cols)
    if isinstance(container, dict):
        return list(container)
    index = getattr(container, "index", None)
    if index is not None and hasattr(container, "dtype"):  # a Series: its index labels
        return list(index)[:200]
    return None


def _near_matches(key, keys: list) -> list[str]:
    if not isinstance(key, str):
        return []
    found = []
    for k in keys:
        if not isinstance(k, str) or k == key:
            continue
        if k.strip() == key.strip():
            found.append(f"{k!r} (spaces)")
        elif k.lower() == key.lower() or k.strip().lower() == key.strip().lower():
            found.append(f"{k!r} (case)")
    strs = [k for k in keys if isinstance(k, str)]
    for k in difflib.get_close_matches(key, strs, n=3, cutoff=0.6):
        if not any(f.startswith(repr(k)) for f in found):
            found.append(f"{k!r} (spelling)")
    return found[:4]


def _quoted_after(text: str, word: str) -> str | None:
    m = re.search(word + r" '([^']+)'", text)
    return m.group(1) if m else None


# ---------------------------------------------------------------- short, honest reprs

_reprlib = reprlib.Repr()
_reprlib.maxlist = _reprlib.maxtuple = _reprlib.maxset = _reprlib.maxdict = 8
_reprlib.maxstring = 120
_reprlib.maxother = 80
_reprlib.maxlevel = 3


def short_repr(value, limit: int = MAX_REPR) -> str:
    """A DataFrame as shape + columns + 3 rows, never the whole thing; a long list with its length."""
    try:
        if _is_frame(value):
            return _frame_repr(value)
        if _is_series(value):
            head = ", ".join(_clip(repr(v), 30) for v in value.head(5).tolist())
            return f"Series name={value.name!r} len={len(value)} dtype={value.dtype} head=[{head}]"
        if type(value).__name__ == "ndarray":
            flat = ", ".join(repr(v) for v in value.ravel()[:6].tolist())
            return f"ndarray shape={value.shape} dtype={value.dtype} [{flat}{', ...' if value.size > 6 else ''}]"
        if isinstance(value, (list, tuple, dict, set, frozenset)):
            text = _reprlib.repr(value)
            return _clip(text, limit) + (f" (len {len(value)})" if len(value) > 8 or len(text) > limit else "")
        text = repr(value)
    except Exception:
        text = object.__repr__(value)
    text = _clip(text, limit)
    if not isinstance(value, SELF_DESCRIBING) and type(value).__name__ not in text:
        text += f" ({_type_name(value)})"
    return text


def _frame_repr(df) -> str:
    cols = list(df.columns)
    shown = _list(cols, 20) or "[]"
    try:
        rows = df.head(3).to_string(max_colwidth=20, max_cols=8).splitlines()
    except Exception:
        rows = []
    rows = [_clip(r, 120) for r in rows]
    return "\n".join([f"DataFrame shape={df.shape} columns={shown}", *rows])


def _is_frame(value) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns")


def _is_series(value) -> bool:
    return type(value).__name__ == "Series" and hasattr(value, "dtype")


def _type_name(value) -> str:
    return type(value).__name__


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _list(items, limit: int = 10) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:limit])
    more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
    return f"[{shown}{more}]" if items else ""


def written(stmt: ast.stmt, calls: bool = True) -> set[str]:
    """Names a statement binds or changes in place (`df["x"] = ...`, `x += 1`, and with `calls` a method
    call's object, `found.append(v)`)."""
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif calls and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute):
        targets = [stmt.value.func.value]  # found.append(v), df.sort_values(..., inplace=True)
    names = set()
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
        root = t
        while isinstance(root, (ast.Subscript, ast.Attribute, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name):
            names.add(root.id)
    return names

"""Whether a later cell reads what a run wrote: a following cell that ran after the original cell
too verifies a candidate only when it reads something the candidate defines or changes.

`written` reads the code that ran (what it binds, the columns or keys it sets: `df['total'] = ...`
changes `df` only in its column 'total') and its effect (kernel/effect.py: names changed through a
call the code does not show, rows a frame lost); what the original cell's run left the same is taken
out. `read_by` says what of it a later cell reads, in words ("`total`", "`df['total']`"), or "".
Imported modules are not counted (a later cell that uses `np` reads nothing the fix computed).
Errs towards counting: a later cell that mentions a changed column reads it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..kernel import ipysyntax
from .effect import Effect

INDEXERS = {"loc", "iloc", "at", "iat"}
MUTATING = {"append", "extend", "insert", "update", "pop", "remove", "clear", "sort", "add", "discard",
            "setdefault", "popitem", "reverse"}  # methods of lists, dicts and sets that change the object
MAGIC_LINE = re.compile(r"^\s*(?:[%!]|\?)|\?\s*$")


@dataclass(frozen=True)
class Written:
    """What a run wrote: `whole`, names bound or changed as a whole; `keys`, names of which only these
    columns (or keys, attributes) were set."""

    whole: frozenset[str] = frozenset()
    keys: tuple[tuple[str, frozenset[str]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.whole or self.keys)


def written(code: str | None, effect: Effect | None = None, before: Effect | None = None) -> Written:
    """What running `code` wrote, read from the code and from its `effect`; what the original cell's run
    (`before`, its effect) changed in exactly the same way is not the candidate's doing."""
    tree = _parse(code or "")
    whole: set[str] = set()
    keys: dict[str, set[str]] = {}
    if tree is not None:
        _statements(tree.body, whole, keys)
    for change in effect.changes if effect else ():
        if change.name in whole:
            continue
        if change.name not in keys or _reshaped(change):
            whole.add(change.name)  # changed by a call the code does not show, or its rows or columns moved
            keys.pop(change.name, None)
        else:
            keys[change.name] |= {_label(c.name) for c in change.columns}
    same = {c.name for c in (before.changes if before else ()) if c in (effect.changes if effect else ())}
    return Written(frozenset(whole - same),
                   tuple(sorted((k, frozenset(v)) for k, v in keys.items() if k not in same and k not in whole)))


def read_by(source: str, wrote: Written) -> str:
    """What of `wrote` the cell `source` reads, in words ("`total`", "`df['total']`"); "" for nothing."""
    if not wrote:
        return ""
    tree = _parse(source)
    if tree is None:  # read as words
        words = set(re.findall(r"[A-Za-z_]\w*", source))
        names, strings, attributes = words, set(re.findall(r"['\"]([^'\"]*)['\"]", source)), words
    else:
        names, strings, attributes = _reads(tree)
    for name in sorted(wrote.whole & names):
        return f"`{name}`"
    for name, columns in wrote.keys:
        if name not in names:
            continue
        for key in sorted(columns):
            if key in attributes or any(key == s or _word_in(key, s) for s in strings):
                return f"`{name}[{key!r}]`"
    return ""


def _parse(source: str) -> ast.Module | None:
    """The cell as Python, its IPython lines (`%magic`, `!shell`, `name?`) left out."""
    python = "\n".join("" if MAGIC_LINE.search(line) else line for line in source.splitlines())
    return ipysyntax.parsed(python)  # shared: read, never changed


def _statements(body: list[ast.stmt], whole: set[str], keys: dict[str, set[str]]) -> None:
    """The names `body` binds (`whole`) and the columns it sets (`keys`), not inside functions or classes
    (their bodies run later; their names are bound)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            whole.add(stmt.name)
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        for node in _nodes(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                whole.add(node.id)
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                _set_into(node, whole, keys)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                _called(node, whole)


def _nodes(stmt: ast.stmt):
    """The nodes of a statement, not inside the functions, lambdas or classes it defines."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            todo.append(child)


def _set_into(target: ast.Subscript | ast.Attribute, whole: set[str], keys: dict[str, set[str]]) -> None:
    """`df['a'] = ...`, `df.loc[mask, 'a'] = ...`: the column 'a' of `df`; `df[mask] = ...`, `obj.x = ...`:
    `df` or `obj` as a whole."""
    root, labels = target, set()
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        if isinstance(root, ast.Subscript):
            found = _labels(root.slice, indexer=isinstance(root.value, ast.Attribute) and root.value.attr in INDEXERS)
            if found is None:
                labels = None
            elif labels is not None:
                labels |= found
        elif root is target or root.attr not in INDEXERS:
            labels = None
        root = root.value
    if not isinstance(root, ast.Name):
        return
    if labels:
        keys.setdefault(root.id, set()).update(labels)
    else:
        whole.add(root.id)


def _labels(index: ast.expr, indexer: bool) -> set[str] | None:
    """The text labels an index names (`'a'`, `['a', 'b']`; of `.loc[rows, cols]`, the columns), or None
    when it names rows or labels that are not text."""
    if indexer:
        if not isinstance(index, ast.Tuple) or len(index.elts) != 2:
            return None
        index = index.elts[1]
    items = index.elts if isinstance(index, (ast.List, ast.Tuple)) else [index]
    found = {n.value for n in items if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found if found and len(found) == len(items) else None


def _called(call: ast.Call, whole: set[str]) -> None:
    """`xs.append(1)`, `df.fillna(0, inplace=True)`: a method that changes the object it is called on."""
    inplace = any(k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                  for k in call.keywords)
    if not inplace and call.func.attr not in MUTATING:
        return
    root = call.func.value
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    if isinstance(root, ast.Name):
        whole.add(root.id)


def _reshaped(change) -> bool:
    """A frame whose rows or columns went, or that is new or became something else: changed as a whole."""
    if change.status != "changed" or change.kind_before != change.kind_after or change.dropped or change.more_columns:
        return True
    return change.rows is not None and change.rows[0] != change.rows[1]


def _label(text: str) -> str:
    """A column's label as the effect prints it (`'total'`), as text."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _reads(tree: ast.Module) -> tuple[set[str], set[str], set[str]]:
    """(names read, text constants, attributes) of a cell."""
    names, strings, attributes = set(), set(), set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
            names.update(re.findall(r"@([A-Za-z_]\w*)", node.value))  # df.query("x > @limit")
        elif isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names, strings, attributes


def _word_in(key: str, text: str) -> bool:
    """`key` as a word of a longer text (a query string, a formula): `'total > 3'` reads 'total'."""
    return len(text) > len(key) and re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", text) is not None


ASSERTING = re.compile(r"(?:^|\.)assert_\w+$")  # pd.testing.assert_frame_equal, np.testing.assert_allclose


def checks_values(source: str) -> bool:
    """Whether the cell checks values: an `assert` statement, or a testing helper's call
    (`pd.testing.assert_frame_equal`, `np.testing.assert_allclose`). A cell that only computes or shows
    (`df.count()`, `print(total)`) runs whatever the values are: its running is no evidence that they are right."""
    tree = _parse(source)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and ASSERTING.search(ast.unparse(node.func)):
            return True
    return False

"""Smells: what a run did to the data that is wrong whatever the user meant, caught with no check.

A run with a smell does not pass: its receipt names the smell with sample values, and the loop goes
on. Each rule reads the run's Effect (effect.py), and the cell as the user wrote it:
- a new or changed text column whose values print a whole Series or DataFrame (`str(df['id'])`);
- a column (or Series) that became all NaN;
- rows lost from a frame or Series, when the user's cell does not filter rows;
- a frame, Series or array that became a string or None (`df = df.dropna(inplace=True)`);
- a new object made and thrown away: a statement `df['c'].fillna(0)` or `name.strip()` whose result is
  not assigned (read from the code that ran; the cell's last statement is shown, so it is not thrown away).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from .effect import DATA, Change, Effect

FILTERING_CALLS = {
    "dropna", "drop", "drop_duplicates", "query", "head", "tail", "sample", "filter", "nlargest", "nsmallest",
    "truncate", "merge", "join", "groupby", "pivot", "pivot_table", "agg", "aggregate", "resample", "unique",
    "value_counts", "take", "first", "last", "loc", "iloc", "xs", "explode", "melt", "stack", "unstack",
    "reindex", "set_index", "rolling", "dedupe", "distinct", "compress", "delete", "pop", "remove", "clear",
    "describe", "mask", "where", "between", "isin", "T", "transpose", "corr", "cov", "crosstab", "apply",
    "pipe", "asfreq", "interpolate", "nunique", "squeeze", "iat", "at",
}
SAFE_CALLS = {"len", "print", "str", "repr", "int", "float", "list", "sorted", "type", "isinstance", "display"}


# methods and functions that return a new object and leave their input as it was (pandas, str)
NEW_OBJECT_METHODS = {
    "fillna", "dropna", "drop", "drop_duplicates", "sort_values", "sort_index", "rename", "astype", "reset_index",
    "set_index", "replace", "assign", "merge", "ffill", "bfill", "interpolate", "clip", "round", "abs",
    "strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "removeprefix", "removesuffix",
}
NEW_OBJECT_FUNCTIONS = {"sorted", "to_datetime", "to_numeric", "concat"}


def judged(effect: Effect | None, original: str | None, ran: str | None = None) -> Effect | None:
    """The effect with its smells; `original` is the user's cell (None: no rule needs it), `ran` the
    code that ran (the cell or a candidate)."""
    if effect is None:
        return None
    return replace(effect, smells=find(effect, original) + thrown_away(ran))


def thrown_away(code: str | None) -> tuple[str, ...]:
    """Statements that make a new object and drop it: `df['city'].fillna('Unknown')` changes nothing.
    Not the cell's last statement (a notebook shows its value), nor a call given `inplace=True`."""
    tree = _parse(code)
    if tree is None:
        return ()
    shown = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr) or node is shown or not isinstance(node.value, ast.Call):
            continue
        call = node.value
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        known = NEW_OBJECT_METHODS if isinstance(func, ast.Attribute) else set()
        if name not in known and name not in NEW_OBJECT_FUNCTIONS:
            continue
        if any(k.arg == "inplace" for k in call.keywords) or not _pure_call(call, name):
            continue
        text = ast.get_source_segment(code, call) or name
        text = text if len(text) <= 80 else text[:77] + "..."
        found.append(f"line {node.lineno}: the result of `{text}` is thrown away ({name} returns a new object "
                     "and changes nothing in place; assign it)")
    return tuple(found)


def _pure_call(call: ast.Call, name: str) -> bool:
    """Whether a `rename`, `replace` or `drop` call reads as pandas' or str's (a new object) rather than
    one that acts on the world: `os.rename(a, b)`, `path.replace(target)`, `table.drop(engine)`."""
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id in ("os", "shutil"):
        return False
    words = {k.arg for k in call.keywords}
    mapping = any(isinstance(a, (ast.Dict, ast.List)) for a in call.args)
    if name == "rename":
        return mapping or bool(words & {"columns", "index", "mapper", "axis"})
    if name == "replace":
        return mapping or len(call.args) >= 2 or bool(words & {"to_replace", "value", "regex"})
    if name == "drop":
        return mapping or bool(words & {"columns", "index", "labels", "axis"})
    return True


def find(effect: Effect, original: str | None) -> tuple[str, ...]:
    smells: list[str] = []
    tree = _parse(original)
    for change in effect.changes:
        asked = _asked_for(tree, change.name)  # what the user's cell plainly asks for is no smell
        smells += _whole_reprs(change)
        smells += [] if "missing" in asked else _all_nan(change)
        smells += [] if "constant" in asked else _kind_lost(change)
        smells += _rows_lost(change, original)
    return tuple(smells)


def _parse(source: str | None) -> ast.Module | None:
    try:
        return ast.parse(source) if source is not None else None
    except (SyntaxError, ValueError):
        return None


def _asked_for(tree: ast.Module | None, name: str) -> set[str]:
    """"constant" when the cell binds `name` to a literal (`df = None`); "missing" when it fills a
    column or the name with missing values on purpose (`df['notes'] = np.nan`)."""
    asked: set[str] = set()
    if tree is None:
        return asked
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            root = t.value if isinstance(t, ast.Subscript) else t
            if not (isinstance(root, ast.Name) and root.id == name):
                continue
            if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant):
                asked.add("constant")
            if _missing(node.value):
                asked.add("missing")
    return asked


def _missing(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.Attribute):
        return node.attr in ("nan", "NaN", "NA", "NaT")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).lower() == "nan"
    return False


def _label(change: Change, column: str) -> str:
    return f"{change.name}[{column}]" if column else change.name


def _whole_reprs(change: Change) -> list[str]:
    out = []
    for col in change.columns:
        if col.whole_reprs and col.dtype in ("str", "object"):
            sample = col.samples[0] if col.samples else ""
            out.append(f"{_label(change, col.name)} holds the printed form of a whole Series or DataFrame in each "
                       f"row, not one value per row: {sample} (str() of a column? use .astype(str))")
    return out


def _all_nan(change: Change) -> list[str]:
    out = []
    for col in change.columns:
        if col.all_nan and (col.nan_before is None or col.nan_before < col.rows):
            was = "" if col.nan_before is None else f" (it had {col.rows - col.nan_before} values)"
            out.append(f"{_label(change, col.name)} became all NaN: {col.rows} of {col.rows} rows{was}")
    return out


def _kind_lost(change: Change) -> list[str]:
    if change.status != "changed" or change.kind_before not in DATA or change.kind_after not in ("str", "None"):
        return []
    return [f"{change.name} was a {change.before} and is now {change.kind_after} {change.after}"
            + (" (an in-place method returns None)" if change.kind_after == "None" else "")]


def _rows_lost(change: Change, original: str | None) -> list[str]:
    if original is None or change.status != "changed" or change.kind_before != change.kind_after:
        return []
    if change.kind_after not in DATA or not change.rows or change.rows[0] is None:
        return []
    before, after = change.rows
    if after >= before or filters(original, change.name):
        return []
    return [f"{change.name} lost {before - after} of its {before} rows, but the cell does not filter rows"]


def filters(source: str, name: str) -> bool:
    """Whether the cell as written may drop rows of `name` on purpose: a filtering call, a boolean or
    positional selection, or `name` bound to something not derived from it. When unsure: yes."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in FILTERING_CALLS:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in SAFE_CALLS \
                and name in {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)}:
            return True  # a function of the notebook given the data may drop rows as it likes
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not _labels(node.slice):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets) and name not in _names(node.value):
                return True
    return False


def _labels(node: ast.AST) -> bool:
    """A column label or a list of labels (`df['a']`, `df[['a', 'b']]`), which select no rows."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
    return False


def _names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}

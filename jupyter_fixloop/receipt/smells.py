"""Smells: what a run did to the data that is wrong whatever the user meant, caught with no check.

A run with a smell does not pass: its receipt names the smell with sample values, and the loop goes
on. Each rule reads the run's Effect (effect.py), and the cell as the user wrote it:
- a new or changed text column whose values print a whole Series or DataFrame (`str(df['id'])`);
- a column (or Series) that became all NaN (not in a new frame of the rows the code selected by that column's
  missing values: `df[df['age'].isna()]`);
- rows lost from a frame or Series, when the user's cell does not filter rows;
- a frame, Series or array that became a string or None (`df = df.dropna(inplace=True)`);
- a new object made and thrown away: a statement `df['c'].fillna(0)` or `name.strip()` whose result is
  not assigned (read from the code that ran; the cell's last statement is shown, so it is not thrown away);
- a text column converted to numbers that gained NaN while it held numbers written another way
  ('1.2k', '4,99'): they are among the values lost (not only when all of it became NaN);
- whole numbers printed as floats in text ('2134.0'): a float column turned into text with astype(str);
- a pandas warning that an assignment may not have reached the frame (ChainedAssignmentError,
  SettingWithCopyWarning) left in a run that otherwise passes;
- a non-printing character (a BOM, a zero-width space) that the code that ran has and the cell has not;
- a sum of text: numbers written as text glued end to end ('$1,528.19$1,085.32...'), in a value or a column.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from ..hidden import clipped, is_hidden
from ..kernel import ipysyntax
from .effect import DATA, Change, Effect, Smell
from .values import Doubt

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
# of those, str's methods that no pandas frame or Series has (`replace` both have): a call passing more
# positional arguments than str's own takes is another function of that name (pyplot's `title("Sales")`)
STR_ONLY = {"strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "removeprefix", "removesuffix"}


def _positional(name: str) -> int:
    """How many positional arguments str's method `name` takes, read from its signature."""
    import inspect

    return len(inspect.signature(getattr(str, name)).parameters) - 1


def judged(effect: Effect | None, original: str | None, ran: str | None = None) -> Effect | None:
    """The effect with its smells; `original` is the user's cell (None: no rule needs it), `ran` the
    code that ran (the cell or a candidate)."""
    if effect is None:
        return None
    return replace(effect, smells=find(effect, original, ran) + thrown_away(ran, original) + invisible(original, ran))


NUMERIC = re.compile(r"^(u?int|float|Int|UInt|Float|complex|decimal)")
FLOAT_TEXT = re.compile(r"^'-?\d+\.0'$")
LOST_ASSIGNMENT = re.compile(r"ChainedAssignmentError|SettingWithCopyWarning")


def invisible_added(before: str, after: str) -> str:
    """The non-printing characters `after` has more of than `before` ('U+FEFF'), '' when none."""

    def count(text: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for ch in text:
            if ch != "\r" and is_hidden(ch):  # one definition (hidden.py); a CR is a line break here
                out[ch] = out.get(ch, 0) + 1
        return out

    was, now = count(before), count(after)
    return ", ".join(f"U+{ord(ch):04X}" for ch in now if now[ch] > was.get(ch, 0))


def invisible(original: str | None, ran: str | None) -> tuple[Smell, ...]:
    """A non-printing character the code that ran has and the user's cell has not."""
    if original is None or ran is None:
        return ()
    added = invisible_added(original, ran)
    return (Smell("invisible", f"the code holds an invisible character ({added}) the cell does not have: a name "
                  "that needs one is read wrong (a BOM: encoding='utf-8-sig')"),) if added else ()


def warned(warnings) -> tuple[Smell, ...]:
    """A pandas warning that an assignment may not have reached the frame, left in a run that passes."""
    for w in warnings:
        line = w if isinstance(w, str) else f"{w.get('category', '')}: {w.get('message', '')}"
        if LOST_ASSIGNMENT.search(line):
            return (Smell("lost_assignment", f"pandas warns the assignment may not reach the frame "
                          f"({clipped(' '.join(line.split()), 160)}): assign through .loc[rows, column] on the frame "
                          "itself, or take a .copy() first"),)
    return ()


# a library's warning about the result it just made (evidence against a run: never `fixed`, it loses ties)
DOUBTS = (
    ("dates", re.compile(r"Parsing dates in \S+ format when dayfirst=|Could not infer format|dayfirst", re.I)),
    ("coercion", re.compile(r"invalid value encountered in cast|loss of precision|los[et] precision|overflow "
                            r"encountered|incompatible dtype|Downcasting|will be truncated|lossy", re.I)),
)


def doubted(warnings) -> tuple[Doubt, ...]:
    """The warnings (the runner's dicts, or lines) in which the library says its own result may be wrong:
    pandas inferring a date format the data contradicts (dayfirst), or parsing each date on its own guess;
    values coerced, cast or rounded away. (An assignment that may not reach the frame is a smell: `warned`.)"""
    found = []
    for w in warnings:
        line = w if isinstance(w, str) else f"{w.get('category', '')}: {w.get('message', '')}"
        line = " ".join(str(line).split())
        for kind, pattern in DOUBTS:
            if pattern.search(line) and not LOST_ASSIGNMENT.search(line):
                found.append(Doubt(kind, clipped(line, 240)))
                break
    return tuple(dict.fromkeys(found))


def _dropped_from_end(code: str | None) -> dict[int, str]:
    """The top-level statements of `code` that show a value nobody keeps (a tutorial's
    `df.fillna(0)` between other lines), by position counted from the end: their source."""
    tree = _parse(code)
    body = tree.body if tree is not None else []
    return {len(body) - i: ast.dump(node) for i, node in enumerate(body) if isinstance(node, ast.Expr)}


def thrown_away(code: str | None, original: str | None = None) -> tuple[Smell, ...]:
    """Statements that make a new object and drop it: `df['city'].fillna('Unknown')` changes nothing.
    Not the cell's last statement (a notebook shows its value), nor a call given `inplace=True`, nor
    one in the place of a statement the user's cell (`original`) already dropped the value of."""
    tree = _parse(code)
    if tree is None:
        return ()
    shown = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    as_written = _dropped_from_end(original) if original is not None and original != code else set()
    kept = {node for i, node in enumerate(tree.body)
            if len(tree.body) - i in as_written and as_written[len(tree.body) - i] != ast.dump(node)}
    found = []
    for node in ipysyntax.nodes(code):
        if not isinstance(node, ast.Expr) or node is shown or node in kept or not isinstance(node.value, ast.Call):
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
        text = clipped(text, 80)
        found.append(Smell("thrown_away", f"line {node.lineno}: the result of `{text}` is thrown away ({name} "
                           "returns a new object and changes nothing in place; assign it)", node.lineno))
    return tuple(found)


def _pure_call(call: ast.Call, name: str) -> bool:
    """Whether a `rename`, `replace` or `drop` call reads as pandas' or str's (a new object) rather than
    one that acts on the world: `os.rename(a, b)`, `path.replace(target)`, `table.drop(engine)`."""
    if (
        isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id in ("os", "shutil")
    ):
        return False
    if name in STR_ONLY and len(call.args) > _positional(name):  # `plt.title("Sales")`: not str's title()
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


def find(effect: Effect, original: str | None, ran: str | None = None) -> tuple[Smell, ...]:
    smells: list[Smell] = []
    asking = _asked(original)
    selected = _missing_selected(original, ran)
    for change in effect.changes:
        asked = asking.get(change.name, set())  # what the user's cell plainly asks for is no smell
        smells += _whole_reprs(change)
        smells += [] if "missing" in asked else _all_nan(change, selected)
        smells += [] if "missing" in asked else _nan_gained(change)
        smells += _float_text(change)
        smells += [] if "constant" in asked else _kind_lost(change)
        smells += _rows_lost(change, original)
        smells += _glued(change)
    return tuple(smells)


# two or more numbers written as text glued end to end: a currency sign or a decimal part between them
GLUED = re.compile(r"^'?(?:[$€£]\s?-?\d[\d,]*(?:\.\d+)?){2,}|^'?(?:-?\d[\d,]*\.\d{2}){2,}(?!\d)")


def glued(text: str) -> bool:
    """Whether `text` (a value's repr) reads as numbers written as text and summed: concatenated."""
    return bool(GLUED.match(text.strip()))


def _glued(change: Change) -> list[Smell]:
    """A value or a text column that holds numbers written as text glued end to end: `.sum()` of text
    concatenates ('$1,528.19$1,085.32...'), it does not add."""
    if change.kind_after == "str" and glued(change.after):
        return [Smell("glued", f"{change.name} holds numbers written as text glued end to end ({change.after[:60]}): "
                      "a sum of text concatenates; convert the column to numbers first")]
    out = []
    for col in change.columns:
        shown = [v for v in col.samples if v.strip("'") not in ("nan", "<NA>", "None")]
        if col.dtype == "str" and shown and all(glued(v) for v in shown):
            out.append(Smell("glued", f"{_label(change, col.name)} holds numbers written as text glued end to end "
                             f"({shown[0][:60]}): a sum of text concatenates; convert the column to numbers first"))
    return out


def _parse(source: str | None) -> ast.Module | None:
    return ipysyntax.parsed(source) if source is not None else None


def _asked(source: str | None) -> dict[str, set[str]]:
    """By name: "constant" when the cell binds it to a literal (`df = None`); "missing" when it fills a
    column or the name with missing values on purpose (`df['notes'] = np.nan`). One walk of the cell."""
    asked: dict[str, set[str]] = {}
    for node in ipysyntax.nodes(source) if source is not None else ():
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            root = t.value if isinstance(t, ast.Subscript) else t
            if not isinstance(root, ast.Name):
                continue
            if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant):
                asked.setdefault(root.id, set()).add("constant")
            if _missing(node.value):
                asked.setdefault(root.id, set()).add("missing")
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


def _whole_reprs(change: Change) -> list[Smell]:
    out = []
    for col in change.columns:
        if col.whole_reprs and col.dtype in ("str", "object"):
            sample = col.samples[0] if col.samples else ""
            out.append(Smell("whole_repr", f"{_label(change, col.name)} holds the printed form of a whole Series or "
                             f"DataFrame in each row, not one value per row: {sample} (str() of a column? use "
                             ".astype(str))"))
    return out


def _missing_selected(*sources: str | None) -> set[str]:
    """The columns whose missing values the code selects rows by (`df[df['age'].isna()]`, `.loc[df.age.isnull()]`,
    `df[pd.isna(df['age'])]`): a new frame of those rows holds nothing else in that column."""
    columns = set()
    for source in filter(None, sources):
        for node in ipysyntax.nodes(source):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("isna", "isnull", "isnan")):
                continue
            # `df['age'].isna()`, or a function given the column: `pd.isna(df['age'])`, `np.isnan(df.age)`
            of = node.args[0] if node.args and isinstance(node.func.value, ast.Name) else node.func.value
            if isinstance(of, ast.Subscript) and isinstance(of.slice, ast.Constant):
                columns.add(repr(of.slice.value))  # as the effect names a column: its label's repr
            elif isinstance(of, ast.Attribute):
                columns.add(repr(of.attr))
    return columns


def _all_nan(change: Change, selected: set[str] = frozenset()) -> list[Smell]:
    """A column that became all NaN; in a new object, not one whose rows were selected by that column's
    missing values (what was asked)."""
    out = []
    for col in change.columns:
        if col.nan_before is None and col.name in selected:
            continue
        if col.all_nan and (col.nan_before is None or col.nan_before < col.rows):
            was = "" if col.nan_before is None else f" (it had {col.rows - col.nan_before} values)"
            out.append(Smell("all_nan", f"{_label(change, col.name)} became all NaN: {col.rows} of {col.rows} "
                             f"rows{was}"))
    return out


def _nan_gained(change: Change) -> list[Smell]:
    """Text converted to numbers with more NaN than before, where the text held numbers written another
    way: a conversion that coerced them away. (All NaN is said by _all_nan.)"""
    out = []
    for col in change.columns:
        if col.all_nan or not col.odd_before or col.dtype_before != "str" or not NUMERIC.match(col.dtype):
            continue
        gained = col.nan - (col.nan_before or 0)
        if gained > col.blank_before:  # 'n/a' and '-' made NaN are no value lost
            odd = ", ".join(col.odd_before)
            out.append(Smell("nan_gained", f"{_label(change, col.name)} became {col.dtype} with {gained} more NaN; it "
                             f"held numbers written another way ({odd}), which became NaN instead of numbers"))
    return out


def _float_text(change: Change) -> list[Smell]:
    """Whole numbers printed as floats in text ('2134.0'): astype(str) of a float column."""
    out = []
    for col in change.columns:
        if col.dtype != "str" or col.dtype_before == "str":
            continue
        shown = [v for v in col.samples if v.strip("'") not in ("nan", "<NA>", "None")]
        if shown and all(FLOAT_TEXT.match(v) for v in shown):
            out.append(Smell("float_text", f"{_label(change, col.name)} holds whole numbers printed as floats "
                             f"({', '.join(shown)}): a float column turned into text; format them as integers "
                             "(.astype('Int64').astype(str))"))
    return out


def _kind_lost(change: Change) -> list[Smell]:
    if change.status != "changed" or change.kind_before not in DATA or change.kind_after not in ("str", "None"):
        return []
    return [Smell("kind_lost", f"{change.name} was a {change.before} and is now {change.kind_after} {change.after}"
                  + (" (an in-place method returns None)" if change.kind_after == "None" else ""))]


def _rows_lost(change: Change, original: str | None) -> list[Smell]:
    if original is None or change.status != "changed" or change.kind_before != change.kind_after:
        return []
    if change.kind_after not in DATA or not change.rows or change.rows[0] is None:
        return []
    before, after = change.rows
    if after >= before or filters(original, change.name):
        return []
    return [Smell("rows_lost", f"{change.name} lost {before - after} of its {before} rows, but the cell does not "
                  "filter rows")]


def filters(source: str, name: str) -> bool:
    """Whether the cell as written may drop rows of `name` on purpose: a filtering call, a boolean or
    positional selection, or `name` bound to something not derived from it. When unsure: yes."""
    tree = _parse(source)
    if tree is None:
        return True
    for node in ipysyntax.walk(tree):
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

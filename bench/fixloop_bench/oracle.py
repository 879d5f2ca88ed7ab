"""The generation bench's oracle: what a reference solution does, and whether a candidate did the same.

`observe` runs in the bench's user-side kernel (the reference is the bench file's own code, trusted
like its setup): it runs the reference like a notebook cell and keeps what matters of it, the text
it printed, its last expression's value and the variables it created or changed, pickled into one
blob. `changed` and `shown` run in a sandbox's judge, as checks, after the candidate ran: each
compares the candidate's values, as the judge was sent them, with the blob's. The bench reaches them
with `call`, its own line into this module, not through the product's kernel wire.
`same` is the comparison: frames and series by pandas' own equality, tolerant of dtype-neutral
differences (int against float of equal values, object against string columns, names of the index),
arrays and numbers to a relative 1e-9 (NaN equal to NaN), lists, tuples, arrays and indexes item by item.

Stdlib only: pandas and numpy are used when they are already imported (the values are theirs).
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import math
import pickle
import sys
import types

MAX_DETAIL = 300
_SELF = "__import__('fixloop_bench.oracle', fromlist=['oracle'])"
_LISTS = (list, tuple)


# ---------------------------------------------------------------- the bench's line into a kernel


def call(name: str, *args) -> str:
    """The line a kernel (the bench's own, or a sandbox's judge) runs to call this module's `name` with
    the kernel's globals and `args` (Python literals)."""
    return f"{_SELF}.{name}(globals(){''.join(f', {arg!r}' for arg in args)})"


# ---------------------------------------------------------------- in the user-side kernel


def observe(ns: dict, code: str) -> str:
    """Run `code` in `ns` like a cell; what it printed, its value, the names it created or changed, as
    JSON: {"error", "stdout", "has_value", "value_text", "shows_name", "changed", "new", "unpicklable",
    "blob"}; `shows_name` is the name the code ends with when its last line is a bare name."""
    before = {name: _copy(value) for name, value in ns.items() if _data_name(name, value)}
    out = io.StringIO()
    value, has_value, error = None, False, None
    with contextlib.redirect_stdout(out):
        try:
            value, has_value = _run_cell(code, ns)
        except BaseException as exc:  # the reference failed: the step is broken, the host says so
            error = f"{type(exc).__name__}: {exc}"[:MAX_DETAIL]
    changed = sorted(name for name, after in ns.items() if _data_name(name, after)
                     and (name not in before or before[name] is _UNCOPIED or same(before[name], after)))
    kept, unpicklable = {}, []
    for name in changed:
        try:
            kept[name] = pickle.loads(pickle.dumps(ns[name]))
        except Exception:
            unpicklable.append(name)
    oracle = {"names": kept, "value": value if has_value else None, "has_value": has_value,
              "stdout": out.getvalue()}
    try:
        blob = base64.b64encode(pickle.dumps(oracle, protocol=4)).decode()
    except Exception as exc:  # the value itself cannot be pickled
        error = error or f"the reference's value cannot be kept ({type(exc).__name__}: {exc})"[:MAX_DETAIL]
        blob = ""
    return json.dumps({"error": error, "stdout": oracle["stdout"], "has_value": has_value,
                       "value_text": _texts(value) if has_value else [], "shows_name": _last_name(code),
                       "changed": sorted(kept), "new": sorted(n for n in kept if n not in before),
                       "unpicklable": unpicklable, "blob": blob})


def _last_name(code: str) -> str | None:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    return last.value.id if isinstance(last, ast.Expr) and isinstance(last.value, ast.Name) else None


_UNCOPIED = object()


def _copy(value):
    try:
        return pickle.loads(pickle.dumps(value))
    except Exception:
        return _UNCOPIED


def _data_name(name, value) -> bool:
    """A user's data variable: not a module, a function or class, IPython's history or a private name."""
    if not isinstance(name, str) or name.startswith("_") or name in ("In", "Out", "exit", "quit", "get_ipython"):
        return False
    return not (isinstance(value, (types.ModuleType, type)) or callable(value))


def _run_cell(code: str, ns: dict) -> tuple[object, bool]:
    """Statements, then the value of a trailing expression, as a notebook cell runs (magics transformed)."""
    with contextlib.suppress(Exception):
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            code = shell.transform_cell(code)
    tree = ast.parse(code, "<reference>")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<reference>", "exec"), ns)
    if last is None:
        return None, False
    value = eval(compile(last, "<reference>", "eval"), ns)
    return value, value is not None


def _texts(value) -> list[str]:
    """How the value reads when printed: str() and repr() (a candidate may print it instead of showing it)."""
    texts = []
    for render in (str, repr):
        with contextlib.suppress(Exception):
            texts.append(render(value))
    return list(dict.fromkeys(texts))


# ---------------------------------------------------------------- in a sandbox's judge


class Differs(AssertionError):
    """The candidate's result is not the reference's: the judge reports the message, not the check's code."""


def changed(ns: dict, blob: str, names: list[str]) -> bool:
    """True when every variable the reference created or changed (`names`) holds the same value in
    `ns`; else raises Differs saying what differs, for the first that does not."""
    oracle = _load(blob)
    for name in names:
        if name not in ns:
            raise Differs(f"{name} is not defined")
        differs = same(oracle["names"][name], ns[name])
        if differs:
            raise Differs(f"{name}: {differs}"[:MAX_DETAIL])
    return True


def shown(ns: dict, blob: str, value_name: str, shows: bool) -> bool:
    """True when the candidate's last value (`ns[value_name]`, as the runner leaves it) is the
    reference's (`shows`: the value matters), or else reads as what the reference printed; else raises
    Differs saying why not. A reference that shows and prints nothing asks nothing here."""
    differs = _shown(_load(blob), ns.get(value_name, _MISSING), shows)
    if differs:
        raise Differs(differs)
    return True


def _shown(oracle: dict, got, shows: bool) -> str:
    if isinstance(got, str) and got == "":  # IPython's initial `_`: no value shown
        got = _MISSING
    if shows:
        return "the code shows no value" if got is _MISSING else same(oracle["value"], got)
    printed = normalized(oracle["stdout"])
    if not printed:
        return ""
    if got is not _MISSING and any(normalized(text) == printed for text in _texts(got)):
        return ""
    return "the code shows no value that reads as the reference's output"


_MISSING = object()


def _load(blob: str) -> dict:
    return pickle.loads(base64.b64decode(blob))


def normalized(text: str) -> str:
    """Printed text compared line by line, trailing spaces and blank lines at either end left out."""
    return "\n".join(line.rstrip() for line in str(text).strip("\n").splitlines()).strip()



# ---------------------------------------------------------------- the comparison


def same(want, got) -> str:
    """'' when `got` is `want` for what a reader of the result cares about; else a short reason."""
    try:
        return _same(want, got)[:MAX_DETAIL]
    except Exception as exc:
        return f"could not be compared ({type(exc).__name__}: {exc})"[:MAX_DETAIL]


def _same(want, got) -> str:
    pd, np = sys.modules.get("pandas"), sys.modules.get("numpy")
    if pd is not None and isinstance(want, (pd.DataFrame, pd.Series)):
        return _same_pandas(pd, want, got)
    if _listlike(want, pd, np) and _listlike(got, pd, np):
        return _same_items(list(want), list(got))
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"a {_kind(got)}, expected a dict"
        if list(want) != list(got) and set(want) != set(got):
            return f"keys {list(got)[:8]}, expected {list(want)[:8]}"
        return next((f"[{k!r}]: {d}" for k in want for d in [_same(want[k], got[k])] if d), "")
    if _number(want, np) and _number(got, np):
        return "" if _close(want, got) else f"{got!r}, expected {want!r}"
    if type(want).__eq__ is object.__eq__:  # no value equality (a random Generator): the same state pickled
        kept = _pickled(want)
        equal = got is want or (type(got) is type(want) and kept is not None and kept == _pickled(got))
        return "" if equal else f"{_short(got)}, expected {_short(want)}"
    if isinstance(want, (set, frozenset, str, bytes)) or np is None or not isinstance(want, np.ndarray):
        equal = want == got
        if np is not None and isinstance(equal, np.ndarray):
            equal = equal.all()
        return "" if bool(equal) else f"{_short(got)}, expected {_short(want)}"
    return _same_items(list(want), list(got))


def _pickled(value) -> bytes | None:
    try:
        return pickle.dumps(value, protocol=4)
    except Exception:
        return None


def _same_pandas(pd, want, got) -> str:
    if not isinstance(got, type(want)):
        return f"a {_kind(got)}, expected a {_kind(want)}"
    assert_equal = pd.testing.assert_frame_equal if isinstance(want, pd.DataFrame) else pd.testing.assert_series_equal
    try:
        assert_equal(got, want, check_dtype=False, check_names=False, check_index_type=False, check_exact=False,
                     check_freq=False, check_flags=False, **({"check_column_type": False}
                                                              if isinstance(want, pd.DataFrame) else {}))
    except AssertionError as exc:
        return " ".join(str(exc).split())
    return ""


def _same_items(want: list, got: list) -> str:
    if len(want) != len(got):
        return f"{len(got)} items, expected {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        differs = _same(w, g)
        if differs:
            return f"[{i}]: {differs}"
    return ""


def _listlike(value, pd, np) -> bool:
    if isinstance(value, _LISTS):
        return True
    if np is not None and isinstance(value, np.ndarray) and value.ndim == 1:
        return True
    return pd is not None and isinstance(value, pd.Index)


def _number(value, np) -> bool:
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return False
    return isinstance(value, (int, float)) or (np is not None and isinstance(value, (np.integer, np.floating)))


def _close(want, got) -> bool:
    want, got = float(want), float(got)
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-12)


def _kind(value) -> str:
    return type(value).__name__


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

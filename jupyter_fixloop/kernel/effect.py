"""What a run did to the user's data, recorded inside the sandbox (runner.py calls it).

Before the cell runs, `picture` takes a small print of every name the cell mentions (type, shape,
dtypes, NaN counts, a hash of each column); after it runs, `compare` reads the names again and
describes what is new, changed or gone, with a few sample values of new and changed columns, as
plain JSON. The user side (jupyter_fixloop/effect.py) turns it into text and smells.
Stdlib-only like the runner: pandas and numpy objects are recognised by their attributes, and
pandas is taken from `sys.modules` (it is loaded when one of its objects exists).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import re
import reprlib
import sys

from jupyter_fixloop.kernel import ipysyntax, mapped
from jupyter_fixloop.kernel.selected import MISSING_WORDS

MAX_NAMES = 16
MAX_COLUMNS = 8  # new or changed columns described per frame
SAMPLES = 3
SAMPLE_REPR = 48
SCALAR_REPR = 60
HASH_CELLS = 2_000_000  # frames larger than this are compared by shape, dtypes and NaN counts only
REPR_HASH_ROWS = 20_000
SKIP = {"_", "__", "___", "In", "Out", "get_ipython", "exit", "quit", "_ih", "_oh", "_dh"}
WHOLE_REPR_MARKS = ("dtype: ", "Name: ", " rows x ", "Length: ")
ODD_ROWS = 500  # of a text column, the first rows read for numbers written another way ('1.2k', '4,99')
INFER_ROWS = 1000  # of an object column, the first rows that say whether it holds text


def names_of(tree: ast.AST | None) -> list[str]:
    """Names the cell may define or change: assigned names first, then every other name it reads."""
    if tree is None:
        return []
    stored, read = [], []
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, (ast.Store, ast.Del)) else read).append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.append(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            stored.extend(node.names)
    seen, out = set(), []
    for name in stored + read:
        if name not in seen and name not in SKIP and not name.startswith("__"):
            seen.add(name)
            out.append(name)
    return out


def preprint(ns: dict, names) -> None:
    """After a snapshot load (runner.preprint_request: a kernel the pool prepares while the model
    thinks, off the round's clock): the prints of the frames, series and arrays loaded, for the run's
    `picture`. Nothing runs in a sandbox kernel between its load and its one run, so they are still
    the values' prints then."""
    for name in names:
        value = ns.get(name)
        if isinstance(name, str) and _kind(value) in ("DataFrame", "Series", "ndarray"):
            _preprinted[name] = (value, _print(value), mapped.fingerprint(value))


def picture(ns: dict, names: list[str]) -> dict:
    """The print of each name's value before the run (names that do not exist yet are left out);
    a value printed at the load is not read again."""
    out = {}
    _fingerprints.clear()
    _kept.clear()
    ready = dict(_preprinted)
    _preprinted.clear()  # for the first run after the load only
    for name in names:
        if name in ns and _worth(ns[name]):
            value = ns[name]
            if name in ready and ready[name][0] is value:
                out[name], found = ready[name][1], ready[name][2]
            else:
                out[name] = _print(value)
                found = mapped.fingerprint(value) if _kind(value) in ("DataFrame", "Series", "ndarray") else None
            if found is not None:
                _fingerprints[name] = (value, found)
        if len(out) >= MAX_NAMES:
            break
    return out


_fingerprints: dict[str, tuple] = {}  # name -> (value, mapped.fingerprint) at `picture`: snapshot data
_preprinted: dict[str, tuple] = {}  # name -> (value, print, fingerprint) taken at the snapshot load
_kept: dict[str, tuple] = {}  # name -> (value, fingerprint) of what `compare` found the run left as loaded


def _unchanged(name: str, value) -> bool:
    """A snapshot frame or array the run left as it was (same object, same structure, no page of
    its data written): its print is the one taken before, without reading the data again."""
    pictured = _fingerprints.get(name)
    if pictured is None or pictured[0] is not value or mapped.fingerprint(value) != pictured[1]:
        return False
    _kept[name] = (value, pictured[1])
    return True


def kept() -> dict[str, tuple]:
    """{name: (value, fingerprint)}: the snapshot values the last `compare` found the cell left as
    they were before it ran (the judge, forked before the run, holds them too: kernel/judge.py)."""
    return dict(_kept)


def compare(before: dict, ns: dict, names: list[str]) -> dict:
    """What changed since `picture`: {"changes": [...]} (new, changed and deleted names)."""
    changes = []
    _kept.clear()
    for name in names:
        was = before.get(name)
        if name not in ns:
            if was is not None:
                changes.append({"name": name, "status": "deleted", "before": _summary(was), "after": "",
                                "kind_before": was["kind"], "kind_after": ""})
            continue
        value = ns[name]
        if not _worth(value):
            continue
        if was is not None and _unchanged(name, value):
            continue
        now = _print(value)
        if was is None:
            changes.append(dict(_new(name, value, now), digest=digest(value)))
        elif _differs(was, now):
            changes.append(dict(_changed(name, value, was, now), digest=digest(value)))
        if len(changes) >= MAX_NAMES:
            break
    return {"changes": changes}


# ---------------------------------------------------------------- prints of values


DIGEST_REPR = 200_000  # characters of a repr read for a digest (beyond them: not digested)


def digest(value) -> str | None:
    """A digest of a value's content, the same in every kernel process (no `hash()`: it is salted per
    process): for frames and series their data, index, names and dtypes; for arrays their bytes; for
    anything else its repr. Two runs whose values have one digest hold the same values. None when it
    cannot be taken (a frame too big to hash, a repr too long, an object whose repr raises). A numpy scalar is
    digested as the Python number it holds (`np.int64(20)` and `20` show the same value)."""
    if (type(value).__module__ or "").startswith("numpy") and getattr(value, "shape", None) == ():
        try:
            value = value.item()
        except Exception:
            pass
    kind = _kind(value)
    h = hashlib.blake2b(kind.encode(), digest_size=12)
    try:
        if kind in ("DataFrame", "Series"):
            if getattr(value, "size", 0) > HASH_CELLS:
                return None
            pd = sys.modules.get("pandas")
            rows = pd.util.hash_pandas_object(value, index=True).to_numpy()
            h.update(rows.data)
            frame = kind == "DataFrame"
            names = list(value.columns) if frame else [value.name]
            dtypes = list(value.dtypes) if frame else [value.dtype]
            h.update(repr((names, [str(d) for d in dtypes], list(value.index.names), value.shape)).encode())
        elif kind == "ndarray" and value.dtype.kind != "O" and value.size <= HASH_CELLS:
            h.update(repr((value.shape, str(value.dtype))).encode())
            h.update(value.tobytes())
        else:
            text = repr(value)
            if len(text) > DIGEST_REPR:
                return None
            h.update(text.encode("utf-8", "backslashreplace"))
    except Exception:
        return None
    return h.hexdigest()


def _worth(value) -> bool:
    """Data, not code: modules, functions and classes are not described."""
    if isinstance(value, type) or type(value).__name__ in ("module", "function", "builtin_function_or_method",
                                                           "method"):
        return False
    return not callable(value) or _kind(value) in ("DataFrame", "Series")


def _kind(value) -> str:
    """`DataFrame`, `Series`, `ndarray` (subclasses too: a GeoDataFrame is described as a frame),
    `None`, or the type's name."""
    for cls in type(value).__mro__:
        module = cls.__module__ or ""
        if module.startswith("pandas") and cls.__name__ in ("DataFrame", "Series"):
            return cls.__name__
        if module.startswith("numpy") and cls.__name__ == "ndarray":
            return "ndarray"
    if value is None:
        return "None"
    return type(value).__name__


def _print(value) -> dict:
    kind = _kind(value)
    try:
        if kind == "DataFrame":
            return _frame_print(value)
        if kind == "Series":
            return _odd({"kind": kind, "shape": [len(value)], "dtype": _dtype(value), "nan": _nan(value),
                         "hash": _hash(value)}, value)
        if kind == "ndarray":
            return {"kind": kind, "shape": list(value.shape), "dtype": str(value.dtype), "nan": _array_nan(value),
                    "hash": _array_hash(value)}
        if isinstance(value, (list, tuple, dict, set, frozenset)):
            text = _repr_hash(value)
            return {"kind": kind, "len": len(value), "repr": _short(value, SCALAR_REPR), "hash": text}
        return {"kind": kind, "repr": _short(value, SCALAR_REPR), "hash": _repr_hash(value)}
    except Exception as exc:  # a value that cannot be described is named, not fatal
        return {"kind": kind, "repr": f"(not described: {type(exc).__name__})", "hash": None}


def _frame_print(df) -> dict:
    columns = {}
    big = df.size > HASH_CELLS
    for i, col in enumerate(df.columns):
        if i >= 200:
            break
        s = df.iloc[:, i]
        columns[repr(col)] = _odd({"dtype": _dtype(s), "nan": _nan(s), "hash": None if big else _hash(s)}, s)
    return {"kind": "DataFrame", "shape": list(df.shape), "columns": columns}


AMBIGUOUS_DATE = re.compile(r"^(\d{1,2})([/.\-])(\d{1,2})\2\d{2,4}$")


def _ambiguous_dates(s) -> list:
    """Up to 3 (index label, text) of a text column's first rows that read as a date whose day and month
    could swap ('03/05/2024': both fields <= 12 and different): the rows where a date format's guess matters."""
    found = []
    for label, v in s.iloc[:ODD_ROWS].items():
        m = AMBIGUOUS_DATE.match(v.strip()) if isinstance(v, str) else None
        if m and int(m.group(1)) <= 12 and int(m.group(3)) <= 12 and int(m.group(1)) != int(m.group(3)) \
                and v not in (t for _, t in found):
            found.append((label, v))
            if len(found) >= SAMPLES:
                break
    return found


def _odd(p: dict, s) -> dict:
    """A text column's print gets `odd`: up to 3 of its values that hold digits but do not read as a
    plain number ('1.2k', '15 kg', '4,99'); a conversion that turns them into NaN loses them. And
    `ambiguous`: the rows whose dates read either way (`_ambiguous_dates`), for what a conversion made of them."""
    if p["dtype"] != "str":
        return p
    try:
        ambiguous = _ambiguous_dates(s)
    except Exception:
        ambiguous = []
    if ambiguous:
        p["ambiguous"] = ambiguous
    found = []
    try:
        for v in s.iloc[:ODD_ROWS].tolist():
            if isinstance(v, str) and any(c.isdigit() for c in v) and v not in found:
                try:
                    float(v)
                except ValueError:
                    found.append(v)
                    if len(found) >= SAMPLES:
                        break
    except Exception:
        return p
    if found:
        p["odd"] = [_short(v, SAMPLE_REPR) for v in found]
        with contextlib.suppress(Exception):  # text that means no value ('n/a', '-'): a conversion's NaN, rightly
            p["blank"] = int(s.map(lambda v: isinstance(v, str) and v.strip().lower() in MISSING_WORDS).sum())
    return p


def _dtype(s) -> str:
    """The dtype's name, with every kind of text column called `str` (object of strings on pandas 2,
    `str` on pandas 3, `string[pyarrow]`): the same words on every version."""
    name = str(s.dtype)
    if name in ("str", "string") or name.startswith("string"):
        return "str"
    if name == "object":
        pd = sys.modules.get("pandas")
        try:  # the first rows tell, as a person reading the column would (never a full scan of the objects)
            if pd is not None and pd.api.types.infer_dtype(s.iloc[:INFER_ROWS], skipna=True) in ("string", "empty"):
                return "str"
        except Exception:
            pass
    return name


def _nan(s) -> int:
    """Missing values, counted without a pass over the data where the dtype says it: none in integer
    and bool columns, Arrow's null count kept with the column."""
    try:
        kind = getattr(s.dtype, "kind", "")
        if kind in "iub" and type(s.dtype).__module__.startswith("numpy"):
            return 0
        arrow = getattr(s.array, "_pa_array", None)
        if arrow is not None and not _float_arrow(s.dtype):  # a float Arrow column may hold NaN besides nulls
            return int(arrow.null_count)
        return int(s.isna().sum())
    except Exception:
        return 0


def _float_arrow(dtype) -> bool:
    return "float" in str(dtype) or "double" in str(dtype)


def _hash(s):
    pd = sys.modules.get("pandas")
    try:
        rows = pd.util.hash_pandas_object(s, index=False).to_numpy()  # one uint64 a row, read in place
        return int.from_bytes(hashlib.blake2b(rows.data, digest_size=8).digest(), "little")
    except Exception:
        if len(s) <= REPR_HASH_ROWS:
            try:
                return hash(tuple(repr(v) for v in s.tolist()))
            except Exception:
                return None
        return None


def _array_nan(a) -> int:
    try:
        return int((a != a).sum()) if a.dtype.kind in "fc" else 0
    except Exception:
        return 0


def _array_hash(a):
    try:
        if a.dtype.kind != "O" and a.size <= HASH_CELLS:
            return hash((a.shape, str(a.dtype), a.tobytes()))
        return _repr_hash(a)
    except Exception:
        return None


def _repr_hash(value):
    try:
        return hash(repr(value))
    except Exception:
        return None


def _differs(was: dict, now: dict) -> bool:
    """Prints differ: kind, shape, dtypes, NaN counts, hashes or short reprs (a frame too big to
    hash counts as unchanged when all the rest is the same)."""
    return was != now


# ---------------------------------------------------------------- describing a change


def _summary(p: dict) -> str:
    """`DataFrame 3×2`, `Series 3 (int64)`, `ndarray 2×3 (float64)`, `list of 4`, or the short repr."""
    kind = p["kind"]
    if kind == "DataFrame":
        return f"DataFrame {p['shape'][0]}×{p['shape'][1]}"
    if kind == "Series":
        return f"Series {p['shape'][0]} ({p['dtype']})"
    if kind == "ndarray":
        return f"ndarray {'×'.join(str(n) for n in p['shape'])} ({p['dtype']})"
    return p.get("repr", kind)


def _new(name: str, value, now: dict) -> dict:
    change = {"name": name, "status": "new", "before": "", "after": _summary(now), "kind_before": "",
              "kind_after": now["kind"]}
    change.update(_data_details(value, None, now))
    return change


def _changed(name: str, value, was: dict, now: dict) -> dict:
    change = {"name": name, "status": "changed", "before": _summary(was), "after": _summary(now),
              "kind_before": was["kind"], "kind_after": now["kind"]}
    if was["kind"] == now["kind"]:
        change.update(_data_details(value, was, now))
    elif now["kind"] == "Series":
        change.update(_data_details(value, None, now))
    return change


def _data_details(value, was: dict | None, now: dict) -> dict:
    kind = now["kind"]
    out: dict = {}
    if kind in ("DataFrame", "Series", "ndarray"):
        out["rows"] = [was["shape"][0] if was else None, now["shape"][0] if now["shape"] else 0]
    if kind == "DataFrame":
        old_cols = (was or {}).get("columns", {})
        described, dropped = [], [c for c in old_cols if c not in now["columns"]]
        for i, (key, col) in enumerate(now["columns"].items()):
            before = old_cols.get(key)
            if before == col:
                continue
            described.append(_column(key, value.iloc[:, i], before, col))
        out["columns"] = described[:MAX_COLUMNS]
        out["more_columns"] = max(0, len(described) - MAX_COLUMNS)
        out["dropped"] = dropped[:MAX_COLUMNS]
        if was is None or len(described) > WIDE:  # a new or merged frame: its first rows say more than each column
            out["head"] = _first_rows(value)
    elif kind == "Series":
        out["columns"] = [_column("", value, was, now)]
    elif kind == "ndarray":
        out["nan"] = [was["nan"] if was else None, now["nan"]]
    return out


def _column(key: str, s, before: dict | None, now: dict) -> dict:
    samples = [_short(v, SAMPLE_REPR) for v in _head(s)]
    return {
        "column": key,
        "status": "new" if before is None else "changed",
        "dtype_before": before["dtype"] if before else None,
        "dtype": now["dtype"],
        "nan_before": before["nan"] if before else None,
        "nan": now["nan"],
        "rows": len(s),
        "samples": samples,
        "whole_reprs": _whole_reprs(s),
        "odd_before": (before or {}).get("odd", []),
        "blank_before": (before or {}).get("blank", 0),
        "read_as": _read_as(s, (before or {}).get("ambiguous") or []),
    }


def _read_as(s, ambiguous: list) -> list[str]:
    """What a column now holds in the rows whose text dates read either way ("'03/05/2024' → 2024-03-05"):
    the rows where a date format's guess matters, whatever the first rows show."""
    if not ambiguous or not str(s.dtype).startswith("datetime"):
        return []
    out = []
    try:
        for label, text in ambiguous:
            if label in s.index and s.index.is_unique:
                value = s.loc[label]
                out.append(f"{text!r} → {value.strftime('%Y-%m-%d') if hasattr(value, 'strftime') else value}")
    except Exception:
        return out
    return out


WIDE = 3  # more new or changed columns than this: the frame's first rows are shown instead


def _first_rows(df) -> list[str]:
    """The first rows of a frame as printed (at most 8 columns, values cut at 16 characters), dates as dates."""
    try:
        head = df.head(SAMPLES)
        text = head.to_string(max_cols=8, max_colwidth=16, line_width=110)
    except Exception:
        return []
    return text.splitlines()[: SAMPLES + 2]


def _head(s) -> list:
    try:
        return list(s.iloc[:SAMPLES])
    except Exception:
        return []


def _whole_reprs(s) -> int:
    """How many of the first values are the printed form of a whole Series, DataFrame or array
    (`str(df['id'])` pasted into every row), or such an object itself."""
    found = 0
    for v in _head_many(s):
        if _kind(v) in ("DataFrame", "Series", "ndarray"):
            found += 1
        elif isinstance(v, str) and "\n" in v and any(mark in v for mark in WHOLE_REPR_MARKS):
            found += 1
    return found


def _head_many(s, n: int = 20) -> list:
    try:
        return list(s.iloc[:n])
    except Exception:
        return []


_repr = reprlib.Repr()
_repr.maxstring = 200
_repr.maxother = 200


def _short(value, limit: int) -> str:
    if (type(value).__module__ or "").startswith("numpy") and callable(getattr(value, "item", None)) \
            and getattr(value, "shape", None) == ():
        try:
            value = value.item()  # 6, not np.int64(6)
        except Exception:
            pass
    if type(value).__name__ == "Timestamp" and hasattr(
        value, "normalize"
    ):  # 2024-02-03, not Timestamp('2024-02-03 00:00:00')
        try:
            text = str(value.date()) if value == value.normalize() and value.tz is None else str(value)
            return text[:limit]
        except Exception:
            pass
    try:
        text = repr(value) if isinstance(value, str) else _repr.repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split()) if not isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 3] + "..."

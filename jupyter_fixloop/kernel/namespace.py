"""What each of the user's values *is*, and a short description of it a model can read.

The wall between the user's kernel and a sandbox is drawn by what a value is, not by what its name
resembles (issue #37): frames, series, arrays, numbers, plain strings, containers of those,
dataclasses, the user's own functions and classes are data, shared as soon as code reads them;
secrets (a password-like name on a string, a string shaped like a key, a `.env` text, a container
holding one anywhere: containers are judged whole, or withheld past _WHOLE elements) and live resources
(connections, sockets, clients, sessions, open files, threads) are never shared unless the user
names them, and never described. `kind_of` decides; `describe` gives the data's `Variable`s, the
typed facts the prompt renders within its token budget (model/prompt.py): a value is looked at before
it is shown (one shaped like a key is not), a column whose name says secret shows its name and dtype
only, a function's string defaults are said by their type. What leaves the machine is scrubbed once
more as text (model/scrub.py).

Stdlib only, duck-typed (no pandas import): it also runs in batch mode's notebook kernel.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import math
import re
import types
from collections import Counter
from dataclasses import dataclass

from .sharing import is_history, shared_names

DATA, FUNCTION, CLASS, MODULE = "data", "function", "class", "module"
SECRET, RESOURCE, HISTORY, OTHER = "secret", "resource", "history", "other"
SHAREABLE = frozenset({DATA, FUNCTION, CLASS, MODULE})

# the words of a name (`db_password`, `apiKey`, `AWS_SECRET_ACCESS_KEY`) that make a string a secret
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "passcode", "secret", "secrets", "token",
                           "apikey", "credential", "credentials", "creds", "auth", "authorization", "bearer",
                           "privatekey", "cookie", "pin"})
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
                           ("client", "secret"), ("session", "id"), ("auth", "token"), ("conn", "str"),
                           ("connection", "string"), ("signing", "key"), ("master", "key"), ("encryption", "key"),
                           ("license", "key"), ("service", "key")})
# a constant's name ending in KEY (`OPENAI_KEY`, `STRIPE_KEY`) is a credential; a lower-case `sort_key` or
# `join_key`, or a column called `key`, is data
_CONSTANT_KEY = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_KEYS?$")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# strings shaped like keys whatever their name: vendors' prefixes, JWTs, PEM blocks, URLs with a password
_KEY_SHAPES = re.compile(
    r"\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bA[KS]IA[0-9A-Z]{16,}\b|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{30,}|\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----|\b[a-z][a-z0-9+.-]*://[^/\s:@]*:[^\s@]+@")
# a `.env` file's line: `NAME=value` (`export NAME=value`)
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*\S")
_HIGH_ENTROPY_MIN = 24  # characters of one unbroken token judged by its entropy
# what a live resource's type is called, or where it comes from
_RESOURCE_NAMES = re.compile(r"(Connection|Cursor|Session|Client|Engine|Socket|Pool|Channel|Transport|Lock"
                             r"|Thread|Process|Popen|Semaphore|Condition|Executor|Store|Writer|Reader)$")
_RESOURCE_MODULES = ("socket", "ssl", "sqlite3", "subprocess", "threading", "multiprocessing", "asyncio",
                     "concurrent", "requests", "urllib3", "httpx", "aiohttp", "http", "sqlalchemy", "psycopg",
                     "psycopg2", "pymongo", "redis", "boto3", "botocore", "paramiko", "smtplib", "ftplib",
                     "IPython", "ipykernel", "zmq", "tornado", "pandas.io", "h5py", "openai", "litellm")
_DATA_MODULES = ("pandas", "numpy", "pyarrow", "polars", "xarray", "scipy.sparse", "sklearn", "datetime",
                 "decimal", "fractions", "pathlib", "collections", "uuid", "ipaddress", "enum")
_SCALARS = (type(None), bool, int, float, complex, range, slice)
_WHOLE = 20_000  # elements judged for one value, all its containers together: past it, the value is withheld
_DEPTH = 3


def kind_of(name: str, value, depth: int = 0) -> str:
    """What `value` is, for sharing: data, function, class, module (shareable), or secret,
    resource, history, other (shared only when the user names them)."""
    if is_history(name) or name.startswith("_"):
        return HISTORY
    if depth == 0:
        _judged_count[0] = 0
    if isinstance(value, types.ModuleType):
        return MODULE
    kind = _kind_of_value(value, depth)
    if kind == DATA and secret_name(name) and _could_hold_secret(value):
        return SECRET
    return kind


def shareable(name: str, value) -> bool:
    return kind_of(name, value) in SHAREABLE


def secret_name(name: str) -> bool:
    """`db_password`, `OPENAI_API_KEY`, `authToken`: a name whose words say it holds a credential."""
    if _CONSTANT_KEY.match(name):
        return True
    words = [w.lower() for w in _WORD.findall(name)]
    return bool(_SECRET_WORDS.intersection(words)) or any(p in _SECRET_PAIRS for p in zip(words, words[1:]))


def key_shaped(text: str) -> bool:
    """A string shaped like a key or a credential, whatever it is called: a vendor's prefix (`sk-`,
    `AKIA`, `ghp_`), a JWT, a PEM private key, a URL with a password (`/` in it or not), a `.env` file's
    text, or a long unbroken token of high entropy (letters and digits mixed, no spaces)."""
    if len(text or "") < 8:  # nothing shorter is shaped like a key
        return False
    if len(text) > 100_000:
        return bool(_KEY_SHAPES.search(text[:100_000]))
    if _KEY_SHAPES.search(text) or env_text(text):
        return True
    return any(_high_entropy(token) for token in text.split() if len(token) >= _HIGH_ENTROPY_MIN)


def env_text(text: str) -> bool:
    """A `.env` file's text: a `NAME=value` line whose name says secret, or two or more lines that are all
    `NAME=value` (comments and blank lines aside)."""
    if "=" not in text:
        return False
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    names = [m.group(1) for m in map(_ENV_LINE.match, lines) if m]
    return any(secret_name(n) for n in names) or (len(names) >= 2 and len(names) == len(lines))


def _high_entropy(token: str) -> bool:
    if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)) or "/" in token:
        return False
    counts = Counter(token)
    entropy = -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    return entropy >= 4.0


_judged_count = [0]  # elements judged for the value `kind_of` is judging (at most _WHOLE)
_JUDGING: set[int] = set()  # the values being judged, on the way down: one met again is judged already


def _kind_of_value(value, depth: int) -> str:
    """What a value is (`kind_of`), its parts judged to a bounded depth; a value met again inside itself (functions
    whose closures hold each other, an instance holding itself) adds nothing to what is being judged."""
    if id(value) in _JUDGING:
        return DATA
    _JUDGING.add(id(value))
    try:
        return _judged(value, depth)
    finally:
        _JUDGING.discard(id(value))


def _judged(value, depth: int) -> str:
    if isinstance(value, _SCALARS):
        return DATA
    if isinstance(value, (str, bytes, bytearray)):
        text = value if isinstance(value, str) else bytes(value[:4096]).decode("latin-1")
        return SECRET if key_shaped(text) else DATA
    if isinstance(value, (io.IOBase, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        return RESOURCE
    if depth > _DEPTH:  # deeper than a container is read: functions whose closures hold each other, cycles
        return OTHER
    if isinstance(value, (types.MethodType, types.BuiltinMethodType)):  # bound: what it is bound to decides
        owner = getattr(value, "__self__", None)
        if owner is None or isinstance(owner, types.ModuleType):
            return FUNCTION
        return FUNCTION if _kind_of_value(owner, depth + 1) in (DATA, CLASS) else RESOURCE
    if isinstance(value, types.FunctionType):  # what its closure and defaults hold travels with it
        cells = [(n, c.cell_contents) for n, c in zip(value.__code__.co_freevars, value.__closure__ or ())
                 if _filled(c)]
        defaults = [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]
        held = cells + [("", d) for d in defaults]
        kind = _kind_of_fields([v for _, v in held], [n for n, _ in held], depth)
        return FUNCTION if kind == DATA else kind
    if isinstance(value, type):
        return CLASS if not _is_resource_type(value) else RESOURCE
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return _kind_of_container(value, depth)
    cls = type(value)
    if _is_resource_type(cls):
        return RESOURCE
    if dataclasses.is_dataclass(value):
        return _kind_of_fields([getattr(value, f.name, None) for f in dataclasses.fields(value)],
                               [f.name for f in dataclasses.fields(value)], depth)
    module = cls.__module__ or ""
    if any(module == m or module.startswith(m + ".") for m in _DATA_MODULES):
        return DATA
    if module == "__main__" and hasattr(value, "__dict__"):  # an instance of the user's own class
        fields = vars(value)
        return _kind_of_fields(list(fields.values()), list(fields), depth)
    return OTHER


def _filled(cell) -> bool:
    try:
        return cell.cell_contents is not cell
    except ValueError:
        return False


def _is_resource_type(cls: type) -> bool:
    module = getattr(cls, "__module__", "") or ""
    if any(module == m or module.startswith(m + ".") for m in _RESOURCE_MODULES):
        return True
    return any(_RESOURCE_NAMES.search(getattr(c, "__name__", "")) for c in getattr(cls, "__mro__", (cls,))[:-1])


def _kind_of_container(value, depth: int) -> str:
    if depth >= _DEPTH:
        return DATA if not value else OTHER
    if not isinstance(value, dict) and all(isinstance(v, _SCALARS) for v in value):
        return DATA  # numbers, bools and None: data, however many
    _judged_count[0] += len(value)
    if _judged_count[0] > _WHOLE:  # too large to be judged whole: withheld
        return OTHER
    if isinstance(value, dict):
        items = list(value.items())
        return _kind_of_fields([v for _, v in items], [k for k, _ in items], depth,
                               keys=[k for k, _ in items])
    return _kind_of_fields(list(value), (), depth)


def _kind_of_fields(values: list, names, depth: int, keys=()) -> str:
    """A container, dataclass or instance is data when all it holds is data (every item: a secret at the
    200th key of an environ copy is found); a secret or a resource inside makes the whole one."""
    kinds = {_kind_of_value(k, depth + 1) for k in keys}
    for name, value in zip(list(names) or [""] * len(values), values):
        kind = _kind_of_value(value, depth + 1)
        if kind == DATA and isinstance(name, str) and secret_name(name) and _could_hold_secret(value):
            kind = SECRET
        kinds.add(kind)
    for worst in (SECRET, RESOURCE, OTHER):
        if worst in kinds:
            return worst
    return DATA


def _could_hold_secret(value) -> bool:
    """A password-like name withholds strings and containers of them; a frame, an array or a
    number called `token_counts` or `max_tokens` is data whatever its name."""
    if isinstance(value, (str, bytes, bytearray)):
        return True
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return True
    module = type(value).__module__ or ""
    return module == "__main__" or dataclasses.is_dataclass(value)


# ---------------------------------------------------------------- what the model reads


@dataclass(frozen=True)
class Column:
    """One column of a frame (or a series): its name, dtype and first values."""

    name: str
    dtype: str
    values: str = ""


@dataclass(frozen=True)
class Variable:
    """One of the user's values as the model is told of it: `head` is the one-line essentials
    (`DataFrame 16×35, index RangeIndex`), `columns` a frame's columns, `value` a small value's repr.
    `size` (bytes, roughly) and `order` (definition order) rank it when the budget is short."""

    name: str
    kind: str
    head: str
    columns: tuple[Column, ...] = ()
    value: str = ""
    size: int = 0
    order: int = 0
    form: str = ""  # data's shape of value (FORMS): "frame", "series", "array", "collection" or "value"
    module: str = ""  # a module's name (`pd` -> "pandas")


_REPR_CHARS = 80


def describe(ns: dict, names=None) -> tuple[Variable, ...]:
    """The shareable values of `ns` (or of `names` in it) as `Variable`s, in definition order.
    Modules are described by what they are (`pd: module pandas`)."""
    out = []
    for order, (name, value) in enumerate(ns.items()):
        if not isinstance(name, str) or (names is not None and name not in names):
            continue
        try:
            kind = kind_of(name, value)
            if kind in SHAREABLE:
                out.append(_variable(name, value, kind, order))
        except Exception:  # a value whose attributes raise is left out, never the summary
            continue
    return tuple(out)


def described(ns: dict, names=None) -> list[dict]:
    """`describe`'s variables as plain fields: what the host makes its own `Variable`s of (the wire's
    `namespace.describe`; batch mode's snapshot carries them so)."""
    return [dataclasses.asdict(v) for v in describe(ns, names)]


def withheld(ns: dict) -> list[str]:
    """The names whose values are never shared for resembling a word: secrets and live resources."""
    return [n for n, v in ns.items() if isinstance(n, str) and not shareable(n, v)]


def shared(ns: dict, **share) -> frozenset[str]:
    """The names of `ns` a loop shares (sharing.shared_names, its other keywords in `share`), the
    namespace's modules and what it withholds read from it here (the wire's `namespace.shared`)."""
    modules = [n for n, v in ns.items() if isinstance(v, types.ModuleType)]
    return shared_names(ns, modules=modules, withheld=withheld(ns), **share)


FORMS = ("frame", "series", "array", "collection", "value")  # the forms of data a `Variable` says
COLLECTIONS = (list, tuple, set, frozenset, dict)


def _variable(name: str, value, kind: str, order: int) -> Variable:
    if kind == MODULE:
        return Variable(name, kind, f"module {value.__name__}", order=order, module=value.__name__)
    if kind == FUNCTION:
        return Variable(name, kind, f"function{_signature(value)}", order=order)
    if kind == CLASS:
        return Variable(name, kind, f"class{_signature(value)}", order=order)
    cls = type(value).__name__
    if _is_frame(value):
        rows, cols = value.shape
        columns = tuple(_column(value, c) for c in list(value.columns)[:60])
        return Variable(name, kind, f"{cls} {rows}×{cols}, index {_index(value.index)}", columns,
                        size=_nbytes(value), order=order, form="frame")
    if _is_series(value):
        head = f"Series len {len(value)}, dtype {value.dtype}, index {_index(value.index)}"
        column = Column(str(value.name) if value.name is not None else "", str(value.dtype),
                        "" if _secret_column(value.name, value.dtype) else _values(value))
        return Variable(name, kind, head, (column,), size=_nbytes(value), order=order, form="series")
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None and hasattr(value, "ravel"):
        dims = "×".join(str(n) for n in shape)
        return Variable(name, kind, f"{cls} shape ({dims}), dtype {dtype}", value=_shown(_short_repr(value)),
                        size=_nbytes(value), order=order, form="array")
    length = f" len {len(value)}" if isinstance(value, (*COLLECTIONS, str)) else ""
    form = "collection" if isinstance(value, COLLECTIONS) else "value"
    return Variable(name, kind, f"{cls}{length}", value=_shown(_short_repr(value)), size=_size_of(value), order=order,
                    form=form)


def _is_frame(value) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns") and hasattr(value, "shape")


def _is_series(value) -> bool:
    return type(value).__name__ == "Series" and hasattr(value, "dtype") and hasattr(value, "index")


def _unique_column(frame, column) -> bool:
    try:
        return bool(frame.columns.is_unique)
    except Exception:
        return False


def _index(index) -> str:
    kind = type(index).__name__
    if kind == "RangeIndex":
        return "RangeIndex"
    try:
        first = ", ".join(repr(v) for v in list(index[:3]))
        names = [n for n in getattr(index, "names", ()) if n is not None]
        named = f" {names[0]!r}" if len(names) == 1 else (f" {names}" if names else "")
        return f"{kind}{named} [{first}{', ...' if len(index) > 3 else ''}]"
    except Exception:
        return kind


def _column(frame, c) -> Column:
    """A frame's column: its name, dtype and first values; a column whose name says secret (`password`,
    `api_token`) and whose values could be one (not numbers, bools or dates) by name and dtype only."""
    if not _unique_column(frame, c):
        return Column(str(c), "?")
    dtype = frame[c].dtype
    return Column(str(c), str(dtype), "" if _secret_column(c, dtype) else _values(frame[c]))


def _secret_column(name, dtype) -> bool:
    return isinstance(name, str) and secret_name(name) and getattr(dtype, "kind", "O") not in "fbcmM"


def _values(series) -> str:
    """The first values, looked at before they are shown: none when one of them is shaped like a key."""
    try:
        first = list(series.iloc[:3])
        shown = [_clip(repr(v), 24) for v in first]
        if any(isinstance(v, (str, bytes)) and key_shaped(v if isinstance(v, str) else v.decode("latin-1"))
               for v in first):
            return ""
        return "[" + ", ".join(shown) + (", ...]" if len(series) > 3 else "]")
    except Exception:
        return ""


def _shown(text: str) -> str:
    """A value's short repr, or nothing when it holds text shaped like a key."""
    return "" if key_shaped(text) else text


def _short_repr(value) -> str:
    try:
        text = repr(value)
    except Exception:
        return ""
    return _clip(" ".join(text.split()), _REPR_CHARS)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _signature(fn) -> str:
    """`(host, port=5432, password=<str>)`: a default that is not a number, a bool or None is said by its type
    (a string default may be a password)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    params = [p.replace(default=_Typed(p.default))
              if p.default is not p.empty and not isinstance(p.default, _SCALARS) else p
              for p in signature.parameters.values()]
    try:
        return str(signature.replace(parameters=params))
    except (TypeError, ValueError):
        return "(...)"


class _Typed:
    """A default shown by its type alone: `<str>`."""

    def __init__(self, value):
        self.type = type(value).__name__

    def __repr__(self) -> str:
        return f"<{self.type}>"


def _nbytes(value) -> int:
    try:
        usage = value.memory_usage(index=True, deep=False)
        return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
    except Exception:
        return int(getattr(value, "nbytes", 0) or 0)


def _size_of(value) -> int:
    if isinstance(value, (list, tuple, set, frozenset, dict, str, bytes)):
        return len(value) * 8
    return 8


# ---------------------------------------------------------------- what is withheld from a model


_SECRET_TEXTS = 10_000  # texts of one value withheld by their exact text (a secret column's first values)


def secret_texts(ns: dict, names) -> tuple[str, ...]:
    """The texts of secrets among the values `names` share with a sandbox, each to be replaced wherever it
    appears in what a model reads (a candidate may print them): the strings a value judged a secret holds,
    the values of a shared frame's secret-named column, a function's secret-named string defaults."""
    found: list[str] = []
    for name in sorted(n for n in names if isinstance(n, str) and n in ns):
        value = ns[name]
        try:
            if kind_of(name, value) == SECRET:
                _strings(value, found, 0, isinstance(value, (str, bytes, bytearray)) or secret_name(name))
            elif _is_frame(value) and _unique_column(value, None):
                for c in value.columns:
                    if _secret_column(c, value[c].dtype):
                        _strings(list(value[c].iloc[:_SECRET_TEXTS]), found, 0)
            elif _is_series(value) and _secret_column(value.name, value.dtype):
                _strings(list(value.iloc[:_SECRET_TEXTS]), found, 0)
            elif isinstance(value, types.FunctionType):
                _strings(_secret_defaults(value), found, 0)
        except Exception:  # a value whose attributes raise withholds nothing more
            continue
    return tuple(dict.fromkeys(t for t in found if len(t) >= 4))


def _strings(value, found: list[str], depth: int, whole: bool = True) -> None:
    """The secrets' texts in `value`: all of a string judged secret (`whole`), else only what in it is one (a
    value under a secret-named key, one shaped like a key, a URL's password, a secret-named `.env` line's value),
    so an environ copy withholds its tokens, not every path it holds."""
    if len(found) >= _SECRET_TEXTS or depth > _DEPTH:
        return
    if isinstance(value, str):
        if whole or key_shaped(value):
            found.append(value)
        found.extend(line.split("=", 1)[1].strip().strip("'\"") for line in value.splitlines()
                     if (m := _ENV_LINE.match(line)) and secret_name(m.group(1)))
        found.extend(m.group(1) for m in _URL_PASSWORD.finditer(value))
    elif isinstance(value, (bytes, bytearray)):
        _strings(bytes(value[:4096]).decode("latin-1"), found, depth, whole)
    elif isinstance(value, dict):
        for key, item in list(value.items())[:_SECRET_TEXTS]:
            _strings(item, found, depth + 1, whole or (isinstance(key, str) and secret_name(key)))
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in list(value)[:_SECRET_TEXTS]:
            _strings(item, found, depth + 1, whole)
    elif isinstance(value, types.FunctionType):
        _strings(_secret_defaults(value), found, depth + 1)
        _strings([d for d in value.__defaults__ or () if isinstance(d, str)], found, depth + 1, False)


def _secret_defaults(fn) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.default for p in params if isinstance(p.default, str) and secret_name(p.name)]


_URL_PASSWORD = re.compile(r"://[^/\s:@]*:([^\s@]+)@")

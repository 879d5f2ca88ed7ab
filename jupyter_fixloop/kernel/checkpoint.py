"""The state a cell started from: kept before it runs, put back (or read) after it fails.

A cell that fails halfway has already changed the kernel (`df = df.drop(columns=...)` ran, the next
line raised). Judging a fix on top of that state would drop the column twice. So before a cell runs
a `Checkpoint` keeps the values the cell can reach: a reference for every name, and a copy of each
value the cell could change in place. A pandas object is copied copy-on-write where pandas does
copy-on-write (pandas 3, or 2.x with `mode.copy_on_write`): a shallow copy that costs microseconds
whatever the frame's size, because pandas copies a column only when one side writes to it. Other
mutable values are pickled (cloudpickle), up to `cap` bytes and `seconds` of copying per cell (a pickle
is written in pieces and stopped there, so one save never sits for minutes on a big data literal); a
value that cannot be copied is kept by reference, and `save` and `changes` say why, per name.

Two users: batch mode's notebook kernel (the module functions below, called through the wire: after
a failure `hold` keeps what the cell left, `restore` puts the state before it back for the sandbox,
`resume` returns to what plain Jupyter would leave), and the user's own kernel while `%fixloop auto`
or the JupyterLab extension is on (a `Checkpoint` before each cell; `state` is the namespace as it
was before the failed cell, for the sandbox, without touching the kernel; `restore` before an
accepted fix runs).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import time
import types
from dataclasses import asdict, replace

from . import namespace, snapshot
from .sharing import undefined_names

COPY_CAP = 1024**3  # bytes of copies kept per cell; beyond it values are kept by reference only
COPY_SECONDS = 10.0  # time the copies of one save may take; a value not copied by then is kept by reference
IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), frozenset, range)
MISSING = object()


class _Kept:
    """One value's copy: copy-on-write (a pandas object under CoW), a deep copy (pandas without
    CoW), or a pickle. `fresh()` makes a new object holding the kept state; `same(value)` tells
    whether `value` still holds it."""

    def __init__(self, kind: str, data, nbytes: int):
        self.kind, self.data, self.nbytes = kind, data, nbytes

    def fresh(self):
        if self.kind == "pickle":
            return pickle.loads(self.data)
        if self.kind == "array":
            return self.data.copy()
        return self.data.copy(deep=self.kind == "deep")

    def same(self, value) -> bool:
        """A pickled value that takes COPY_SECONDS to compare counts as changed (its copy is put
        back: the same data, a new object)."""
        if self.kind == "digest":
            try:
                return _Pickler(COPY_CAP, COPY_SECONDS, digest=True).of(value) == self.data
            except Exception:
                return False
        if self.kind == "array":
            return _same_array(value, self.data)
        if self.kind == "array-digest":
            return _plain_array(value) and _array_digest(value) == self.data
        if self.kind == "pickle":
            compare = _Pickler(len(self.data), COPY_SECONDS, same=self.data)
            try:
                compare.of(value)
            except Exception:
                return False
            return compare.size == len(self.data)
        return _same_pandas(value, self.data)


class Fingerprint:
    """The names a restore would overwrite, as a failed cell left them (`Checkpoint.fingerprint`)."""

    def __init__(self, objects: dict, prints: dict):
        self.objects, self.prints = objects, prints

    def moved(self, ns: dict) -> list[str]:
        """The names whose value changed since: rebound, deleted, created, or changed in place."""
        prints = self.prints
        return sorted(name for name, then in self.objects.items()
                      if ns.get(name, MISSING) is not then or (name in prints and not prints[name].same(then)))


class _Stop(Exception):
    """A bounded pickle stopped: its words say why."""


class _Pickler:
    """Where a value is pickled: stops past `room` bytes or past `deadline`, so one save never sits
    for minutes on a big value; with `same`, compares with that pickle as it goes instead of keeping."""

    def __init__(self, room: int, left: float, seconds: float = COPY_SECONDS, same: bytes | None = None,
                 digest: bool = False):
        self.parts: list[bytes] = []
        self.size, self.room, self.same = 0, room, same
        self.digest = hashlib.blake2b(digest_size=32) if digest else None
        self.seconds, self.deadline = seconds, time.monotonic() + left  # `left` of the `seconds` a save may take

    def write(self, data) -> int:
        # a buffer over 64 KiB (a numpy array's) comes as a PickleBuffer, which has no len(): its bytes
        data = data.raw() if isinstance(data, pickle.PickleBuffer) else memoryview(data).cast("B")
        n = data.nbytes
        if self.same is not None and self.same[self.size:self.size + n] != data:
            raise _Stop("changed")
        self.size += n
        if self.size > self.room:
            raise _Stop(f"over {self.room:,} bytes: more than the copies kept before a cell may take")
        if time.monotonic() > self.deadline:
            raise _Stop(_slow(self.seconds))
        if self.digest is not None:
            self.digest.update(data)
        elif self.same is None:
            self.parts.append(bytes(data))
        return n

    def of(self, value) -> bytes:
        """The pickle of `value` (with `digest`, its blake2b digest)."""
        _data_pickler()(self, protocol=5).dump(value)
        return self.digest.digest() if self.digest is not None else b"".join(self.parts)


# Pickled before a cell: objects whose pickling is the pickler's own, the standard library's, numpy's or
# pandas' code (their data). An object whose class (or a base outside those) pickles it with code of its
# own is kept by reference: a library's `__reduce_ex__` (a client that reconnects, a lazy frame that
# loads its file, a counter) never runs before every cell that names it.
DATA_MODULES = frozenset(sys.stdlib_module_names) | {"numpy", "pandas"}
_HOOKS = ("__reduce_ex__", "__reduce__", "__getstate__", "__getnewargs_ex__", "__getnewargs__", "__getattribute__")
_DATA_PICKLER = None


def own_pickling(cls: type) -> bool:
    """Whether pickling an instance of `cls` runs code of its own: a hook defined by a class outside
    DATA_MODULES."""
    for hook in _HOOKS:
        owner = next((k for k in cls.__mro__ if hook in vars(k)), object)
        if owner is not object and str(getattr(owner, "__module__", "")).split(".")[0] not in DATA_MODULES:
            return True
    return False


def _data_pickler():
    """cloudpickle's Pickler that stops at an object whose pickling is its own code (own_pickling)."""
    global _DATA_PICKLER
    if _DATA_PICKLER is None:
        import cloudpickle

        class Pickler(cloudpickle.Pickler):
            def reducer_override(self, obj):
                cls = type(obj)
                if not isinstance(obj, (type, types.FunctionType)) and own_pickling(cls):
                    raise _Stop(f"a {cls.__module__}.{cls.__qualname__}: its pickling is its library's own code, "
                                "not run before each cell")
                return super().reducer_override(obj)

        _DATA_PICKLER = Pickler
    return _DATA_PICKLER


def _slow(seconds: float) -> str:
    return f"not copied within the {seconds:g} s the copies kept before a cell may take"


def _same_pandas(value, kept) -> bool:
    """Whether a DataFrame or Series holds what `kept` holds: type, labels, dtypes and values."""
    try:
        if type(value) is not type(kept) or not value.index.equals(kept.index):
            return False
        if hasattr(kept, "columns") and not (value.columns.equals(kept.columns)
                                             and value.dtypes.equals(kept.dtypes)):
            return False
        if not hasattr(kept, "columns") and (value.dtype != kept.dtype or value.name != kept.name):
            return False
        return bool(value.equals(kept))
    except Exception:
        return False


def _plain_array(value) -> bool:
    """A numpy ndarray (not a subclass) of plain values: copied with its own copy, not pickled."""
    cls = type(value)
    return cls.__name__ == "ndarray" and cls.__module__ == "numpy" and value.dtype.kind not in "OV"


def _bytes(value):
    """An array's bytes, as a flat uint8 array (a view where it is contiguous)."""
    np = sys.modules["numpy"]
    return np.ascontiguousarray(value).reshape(-1).view(np.uint8)


def _same_array(value, kept) -> bool:
    """Whether `value` holds what the array `kept` holds, byte for byte (a NaN where it held one)."""
    if not _plain_array(value) or value.shape != kept.shape or value.dtype != kept.dtype:
        return False
    return bool(sys.modules["numpy"].array_equal(_bytes(value), _bytes(kept)))


def _array_digest(value) -> tuple:
    """An array's shape, dtype and a digest of its bytes."""
    return value.shape, value.dtype.str, hashlib.blake2b(_bytes(value).data, digest_size=32).digest()


def copy_on_write(value) -> bool:
    """Whether `value` is a pandas DataFrame or Series and pandas copies on write (so a shallow
    copy keeps its state). pandas is never imported here: a value of it means it is loaded."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(value, (pd.DataFrame, pd.Series)):
        return False
    if int(pd.__version__.split(".")[0]) >= 3:
        return True
    try:
        return pd.get_option("mode.copy_on_write") is True
    except Exception:
        return False


def _pandas(value) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, (pd.DataFrame, pd.Series))


class Checkpoint:
    """What one cell can reach, kept before it runs (see the module docstring)."""

    def __init__(self, cap: int = COPY_CAP, seconds: float = COPY_SECONDS):
        self.cap, self.seconds = cap, seconds
        self.refs: dict[str, object] = {}
        self.kept: dict[str, _Kept] = {}
        self.absent: set[str] = set()
        self.uncopied: dict[str, str] = {}  # name -> why it is kept by reference only
        self.held: dict[str, object] = {}  # the names `save` covered, as the failed cell left them

    @property
    def nbytes(self) -> int:
        """Bytes its copies take (a copy-on-write pandas copy counts none: it shares the columns)."""
        return sum(k.nbytes for k in self.kept.values())

    def save(self, ns: dict, names) -> dict:
        """Remember what the next cell can reach (`names` and what notebook functions among them use).
        Returns the names kept by reference only (`uncopied`), and for each why (`why`)."""
        self.held.clear()
        self.refs, self.kept, self.absent, self.uncopied = {}, {}, set(), {}
        total, deadline = 0, time.monotonic() + self.seconds
        for name in sorted(set(snapshot.reachable(set(names), ns)) | set(names)):
            if name in snapshot.IGNORED:
                continue
            if name not in ns:
                self.absent.add(name)
                continue
            value = self.refs[name] = ns[name]
            if not _needs_copy(value):
                continue
            kept, why = _keep(value, self.cap - total, deadline - time.monotonic(), self.seconds)
            if kept is None:
                self.uncopied[name] = why
                continue
            self.kept[name] = kept
            total += kept.nbytes
        return {"uncopied": sorted(self.uncopied), "why": dict(self.uncopied), "bytes": total,
                "copy_on_write": sorted(n for n, k in self.kept.items() if k.kind == "cow")}

    def hold(self, ns: dict) -> dict:
        """Keep what the failed cell left in the names `save` covered, before `restore` puts the state
        before the cell back; `resume` returns to it. `restore` binds fresh copies and never changes a
        held object, so the held state is the one the failed cell left."""
        self.held = {name: ns.get(name, MISSING) for name in set(self.refs) | self.absent}
        return {"held": len(self.held)}

    def resume(self, ns: dict) -> dict:
        """Put back what `hold` kept: the kernel as plain Jupyter leaves it after the cell raised."""
        for name, value in self.held.items():
            if value is MISSING:
                ns.pop(name, None)
            else:
                ns[name] = value
        held = len(self.held)
        self.held = {}
        return {"resumed": held}

    def restore(self, ns: dict) -> dict:
        """Put back what `save` remembered; the copies stay, so a restore can be repeated. A value
        the cell did not change keeps its identity (other names may share it)."""
        for name in self.absent:
            ns.pop(name, None)
        changed = []
        for name, value in self.refs.items():
            kept = self.kept.get(name)
            if kept is not None and not (ns.get(name) is value and kept.same(value)):
                ns[name] = kept.fresh()
                changed.append(name)
            else:
                ns[name] = value
        return {"changed": sorted(changed), "removed": sorted(self.absent)}

    def changes(self, ns: dict) -> dict:
        """What the failed cell changed, read right after it raised: `changed` (rebound, deleted or
        changed in place, all put back by `state` and `restore`), `created` (bound by the cell,
        dropped by them) and `uncertain` (name -> why: kept by reference only, so a change the cell
        made in place cannot be undone or even seen)."""
        changed, uncertain = [], {}
        for name, value in self.refs.items():
            now = ns.get(name, MISSING)
            if now is not value or (name in self.kept and not self.kept[name].same(value)):
                changed.append(name)
            elif name in self.uncopied:
                uncertain[name] = self.uncopied[name]
        created = sorted(n for n in self.absent if n in ns)
        return {"changed": sorted(changed), "created": created, "uncertain": uncertain}

    def fingerprint(self, ns: dict) -> Fingerprint:
        """What the names `restore` would overwrite hold now (read right after the cell failed): each
        object, and for each value `save` copied, a fingerprint of its content. `Fingerprint.moved`
        later names those changed since: work done after the failure outside any cell (a widget's
        callback, a thread) that a restore would lose."""
        deadline = time.monotonic() + self.seconds
        objects = {name: ns.get(name, MISSING) for name in set(self.refs) | self.absent}
        prints = {}
        for name in self.kept:
            value = objects[name]
            if value is MISSING:
                continue
            if copy_on_write(value):
                prints[name] = _Kept("cow", value.copy(deep=False), 0)
                continue
            if _plain_array(value):
                prints[name] = _Kept("array-digest", _array_digest(value), 0)
                continue
            try:
                prints[name] = _Kept("digest", _Pickler(self.cap, deadline - time.monotonic(), self.seconds,
                                                        digest=True).of(value), 0)
            except Exception:  # not read in time, or no longer picklable: its identity alone is compared
                continue
        return Fingerprint(objects, prints)

    def state(self, ns: dict) -> dict:
        """The namespace as it was before the cell, as a new dict (`ns` is not touched): each kept
        name as `save` saw it (its copy where one was kept), the names the cell created left out,
        every other name as `ns` holds it now."""
        before = {k: v for k, v in ns.items() if k not in self.absent}
        for name, value in self.refs.items():
            kept = self.kept.get(name)
            before[name] = value if kept is None else kept.data if kept.kind != "pickle" else kept.fresh()
        return before


def _needs_copy(value) -> bool:
    """Data that a cell can change in place. Instances of notebook classes are kept by reference:
    a pickled copy would come back as an instance of a new, different class."""
    if isinstance(value, IMMUTABLE) or callable(value) or isinstance(value, types.ModuleType):
        return False
    if isinstance(value, tuple):
        return not all(isinstance(v, IMMUTABLE) for v in value)
    return type(value).__module__ != "__main__"


def _keep(value, room: int, left: float, seconds: float) -> tuple[_Kept | None, str]:
    """A copy of `value` within `room` bytes and `left` seconds (of the `seconds` a save may take), or
    (None, why not)."""
    if left < 0:
        return None, _slow(seconds)
    if copy_on_write(value):
        return _Kept("cow", value.copy(deep=False), 0), ""
    if _plain_array(value):
        if value.nbytes > room:
            return None, f"{value.nbytes:,} bytes: more than the copies kept before a cell may take"
        return _Kept("array", value.copy(), value.nbytes), ""
    if _pandas(value):
        nbytes = int(value.memory_usage(index=True, deep=False).sum()) if hasattr(value, "columns") else int(
            value.memory_usage(index=True, deep=False))
        if nbytes > room:
            return None, f"{nbytes:,} bytes: more than the copies kept before a cell may take"
        return _Kept("deep", value.copy(deep=True), nbytes), ""
    try:
        blob = _Pickler(room, left, seconds).of(value)
    except _Stop as stop:
        return None, str(stop)
    except Exception as exc:
        return None, f"it cannot be copied ({type(exc).__name__})"
    return _Kept("pickle", blob, len(blob)), ""


# ---------------------------------------------------------------- batch mode, through the wire

KEEP_CELLS = 12  # batch mode keeps the checkpoints of this many cells: how far back a cause is looked for
_batch = Checkpoint()  # the cell running now
_cells: dict[int, Checkpoint] = {}  # cell number -> its checkpoint, the last KEEP_CELLS cells


def save(ns: dict, names: list[str], number: int | None = None, carry: bool = False,
         seconds: float = COPY_SECONDS, cap: int = COPY_CAP) -> str:
    """Remember what the next cell (`number`) can reach. Returns the names whose changes cannot be
    undone, and why (`Checkpoint.save`). `carry`: keep what the last `hold` kept, for a `resume` after
    this checkpoint's `restore` (a fix that fails in the kernel: back to what the original cell left,
    without running it again)."""
    global _batch
    held = _batch.held if carry and _batch is not None else {}
    _batch = Checkpoint(cap, seconds)
    answer = _batch.save(ns, names)
    _batch.held = dict(held)
    if number is not None:
        _cells[number] = _batch
        for old in sorted(_cells)[:-KEEP_CELLS]:
            del _cells[old]
    return json.dumps(answer)


def hold(ns: dict) -> str:
    return json.dumps(_batch.hold(ns))


def resume(ns: dict) -> str:
    return json.dumps(_batch.resume(ns))


def restore(ns: dict) -> str:
    return json.dumps(_batch.restore(ns))


def kept_from(ns: dict) -> str:
    """The first cell number whose state before it can still be rebuilt (`restore_before`), or None."""
    return json.dumps(min(_cells) if _cells else None)


def state_before(ns: dict, number: int) -> dict:
    """The namespace as it was before cell `number` ran (a new dict): each later cell's checkpoint
    applied, the latest first, then that cell's. `ns` is not touched."""
    if number not in _cells:
        raise KeyError(f"the state before cell {number} is no longer kept")
    state = dict(ns)
    for n in sorted((n for n in _cells if n >= number), reverse=True):
        state = _cells[n].state(state)
    return state


def restore_before(ns: dict, number: int) -> str:
    """Put the kernel back as it was before cell `number` (to run a fix of it and the cells after it)."""
    if number not in _cells:
        raise KeyError(f"the state before cell {number} is no longer kept")
    changed: set[str] = set()
    for n in sorted((n for n in _cells if n >= number), reverse=True):
        done = _cells[n].restore(ns)
        changed.update(done["changed"], done["removed"])
    return json.dumps({"changed": sorted(changed)})


def mirror(ns: dict, path: str, share: dict, before: int | None = None) -> str:
    """Write the names the loop shares (`share`: the keywords of sharing.shared_names but the
    namespace and `withheld`; without `missing`, the undefined names of the first `code`) as a
    snapshot for the sandbox; returns the `Snapshot` as JSON, with the user's data described for the
    model (`variables`). `share["policy"]`: "data" (the default) describes every data value, and for
    a generation (an instruction) shares them all, since the loop cannot come back here for the
    ones a candidate reads; "named" describes and shares only what the user's code names. With
    `before`, from the state before that cell."""
    secrets = namespace.secret_texts(ns, list(ns))  # never shown: what the scrub replaces; every secret so far
    if before is not None:
        ns = state_before(ns, before)
    share = dict(share)
    policy = share.pop("policy", "data")
    if share.get("missing") is None:  # the cell has not run: its NameErrors, read from the code
        share = {**share, "missing": [n for c in share.get("code", ())[:1] for n in undefined_names(c, ns)]}
    names = namespace.shared(ns, **share)
    variables = namespace.describe(ns, None if policy == "data" else names)
    if policy == "data" and share.get("instruction"):
        described = {v.name for v in variables}
        names |= {n for n in described if set(snapshot.reachable({n}, ns)) <= described}
    snap = snapshot.write_snapshot(ns, names, path)
    held = set(snap.names) | set(snap.modules) | set(snap.skipped)
    unshared = tuple(sorted(n for n in ns if isinstance(n, str) and n not in held and n not in names))
    return json.dumps(asdict(replace(snap, unshared=unshared, variables=variables, secrets=secrets)))

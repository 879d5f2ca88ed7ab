"""Runs inside the notebook kernel of batch mode: undo a failed cell, mirror the state before it,
and, when no fix is applied, return to what the failed cell left (as plain Jupyter would).

A cell that fails halfway has already changed the kernel (`df = df.drop(columns=...)` ran, the next
line raised). Rerunning a fix on top of that state would drop the column twice. So before each cell
batch mode saves the values the cell can reach (a reference for every name, a pickled copy of each
mutable value), and after a failure puts them back and removes the names the cell created. The
sandbox then starts from exactly the state the cell saw, and so does the fix when it is applied.

Called through `user_expressions` (nothing is bound in the user's namespace); answers are JSON text.
"""

from __future__ import annotations

import json
import time
import types
from dataclasses import asdict, replace

from . import snapshot
from .sharing import shared_names, undefined_names

COPY_CAP = 1024**3  # bytes of copies kept per cell; beyond it values are kept by reference only
COPY_SECONDS = 10.0  # time the copies of one save may take; a value not copied by then is kept by reference
IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), frozenset, range)

_refs: dict[str, object] = {}
_copies: dict[str, bytes] = {}
_absent: set[str] = set()
_held: dict[str, object] = {}  # the names `save` covered, as the failed cell left them (MISSING: unbound)
MISSING = object()


def save(ns: dict, names: list[str], seconds: float = COPY_SECONDS, cap: int = COPY_CAP) -> str:
    """Remember what the next cell can reach. Returns the names whose changes cannot be undone
    ("uncopied"), and for each why: "cannot be pickled", "too big" (past `cap` bytes of copies in
    all) or "slow" (the copies took `seconds`: the rest is not tried)."""
    _held.clear()
    _refs.clear()
    _copies.clear()
    _absent.clear()
    reached = set(snapshot.reachable(set(names), ns)) | set(names)
    why: dict[str, str] = {}
    total, deadline = 0, time.monotonic() + seconds
    for name in sorted(reached):
        if name in snapshot.IGNORED:
            continue
        if name not in ns:
            _absent.add(name)
            continue
        value = _refs[name] = ns[name]
        if not _needs_copy(value):
            continue
        if time.monotonic() > deadline:
            why[name] = "slow"
            continue
        try:
            _copies[name] = _Copy(cap - total, deadline).of(value)
        except _Stop as stop:
            why[name] = str(stop)
            continue
        except Exception:
            why[name] = "cannot be pickled"
            continue
        total += len(_copies[name])
    return json.dumps({"uncopied": sorted(why), "why": why, "bytes": total})


class _Stop(Exception):
    """A copy stopped: "too big" or "slow"."""


class _Copy:
    """Where a value is pickled: stops past `room` bytes or past `deadline`, so one save never sits
    for minutes on a big value; with `same`, compares with that pickle as it goes instead of keeping."""

    def __init__(self, room: int, deadline: float, same: bytes | None = None):
        self.parts: list[bytes] = []
        self.size, self.room, self.deadline, self.same = 0, room, deadline, same

    def write(self, data) -> int:
        n = len(data)
        if self.same is not None and self.same[self.size:self.size + n] != data:
            raise _Stop("changed")
        self.size += n
        if self.size > self.room:
            raise _Stop("too big")
        if time.monotonic() > self.deadline:
            raise _Stop("slow")
        if self.same is None:
            self.parts.append(bytes(data))
        return n

    def of(self, value) -> bytes:
        import cloudpickle

        cloudpickle.dump(value, self, protocol=5)
        return b"".join(self.parts)


def _needs_copy(value) -> bool:
    """Data that a cell can change in place. Instances of notebook classes are kept by reference:
    a pickled copy would come back as an instance of a new, different class."""
    if isinstance(value, IMMUTABLE) or callable(value) or isinstance(value, types.ModuleType):
        return False
    if isinstance(value, tuple):
        return not all(isinstance(v, IMMUTABLE) for v in value)
    return type(value).__module__ != "__main__"


def hold(ns: dict) -> str:
    """Keep what the failed cell left in the names `save` covered, before `restore` puts the state
    before the cell back for the sandbox; `resume` returns to it. `restore` binds fresh copies and
    never changes a held object, so the held state is the one the failed cell left."""
    _held.clear()
    for name in set(_refs) | _absent:
        _held[name] = ns.get(name, MISSING)
    return json.dumps({"held": len(_held)})


def resume(ns: dict) -> str:
    """Put back what `hold` kept: the kernel as plain Jupyter leaves it after the cell raised."""
    for name, value in _held.items():
        if value is MISSING:
            ns.pop(name, None)
        else:
            ns[name] = value
    held = len(_held)
    _held.clear()
    return json.dumps({"resumed": held})


def restore(ns: dict) -> str:
    """Put back what `save` remembered; the copies stay, so a restore can be repeated.

    A value the cell did not change keeps its identity (other names may share it)."""
    import pickle

    for name in _absent:
        ns.pop(name, None)
    changed = []
    for name, value in _refs.items():
        if name in _copies and not (ns.get(name) is value and _unchanged(value, _copies[name])):
            ns[name] = pickle.loads(_copies[name])
            changed.append(name)
        else:
            ns[name] = value
    return json.dumps({"changed": sorted(changed), "removed": sorted(_absent)})


def _unchanged(value, blob: bytes) -> bool:
    """Whether `value` still pickles to `blob`; one that takes COPY_SECONDS to tell counts as changed
    (its copy is put back: the same data, a new object)."""
    same = _Copy(len(blob), time.monotonic() + COPY_SECONDS, same=blob)
    try:
        same.of(value)
    except Exception:
        return False
    return same.size == len(blob)


def mirror(ns: dict, path: str, share: dict) -> str:
    """Write the names the loop shares (`share`: the keywords of sharing.shared_names but the
    namespace; without `missing`, the undefined names of the first `code`) as a snapshot for the
    sandbox; returns the `Snapshot` as JSON."""
    modules = [n for n, v in ns.items() if isinstance(v, types.ModuleType)]
    if share.get("missing") is None:  # the cell has not run: its NameErrors, read from the code
        share = {**share, "missing": [n for c in share.get("code", ())[:1] for n in undefined_names(c, ns)]}
    names = shared_names(ns, modules=modules, **share)
    snap = snapshot.write_snapshot(ns, names, path)
    held = set(snap.names) | set(snap.modules) | set(snap.skipped)
    unshared = tuple(sorted(n for n in ns if isinstance(n, str) and n not in held and n not in names))
    return json.dumps(asdict(replace(snap, unshared=unshared)))

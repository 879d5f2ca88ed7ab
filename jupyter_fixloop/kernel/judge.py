"""The checks' verdict, judged where the candidate cannot reach, and signed.

Design. Before any candidate code runs, the sandbox kernel forks a judge, made non-dumpable (the
candidate, the same uid, can neither ptrace it nor read its memory), whose one-time Lamport key
never leaves it. In a request of its own (`arm`, the host's payload), sent when the kernel is made
ready for a loop (after the snapshot's load, while the model thinks) or else ahead of the run's
request, it is given the host's checks, and the host takes its public key from that request's reply
and keeps it for the kernel's one run. The run's request then hands it the cell (`give_cell`, from
the host's payload) before the runner executes any of it. After the run the
kernel sends it one message: the values the checks read, as data (a data-only loader: builtins,
numpy, pandas, pyarrow data types) or, for code and the cell's own objects, as handles it calls
back into the kernel. The judge evaluates each of the host's checks once, with its own copy of the
check code and of the builtins, and signs the verdict, which the host (loop/verdict.py) verifies. It
takes no check after the host's, no second cell, nor a second message of values.

So patching the runner, the check code, `bool`, `abs`, `operator`, `sys.modules`, `pickle.dumps`
or `json.dumps`, or sending the judge checks of one's own, cannot turn a failing check into a pass.
What it cannot tell: the values are serialised in the kernel, where the candidate runs, so a
candidate that reaches fixloop's own objects there (their pipe, their pickler, a data class's
pickling) can send it values that are not the ones it left, as its functions and objects can answer
what they like (a process can always misreport itself; code that names fixloop's machinery is
rejected by tamper.touches_fixloop, a reader of names, not a barrier).
Stdlib only: imported in every sandbox.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copyreg
import ctypes
import hashlib
import importlib
import io
import itertools
import json
import operator
import os
import pickle
import re
import signal
import struct
import sys
import sysconfig
import types
import warnings

from jupyter_fixloop.kernel import checks as check_code, limits, mapped
from jupyter_fixloop.kernel.facts import short_repr

BITS = 256  # a SHA-256 digest is signed, one bit at a time
SECRET = 32  # bytes of each of the 2 * BITS secrets
MAX_DETAIL = 2000
MAX_ITEMS = 10_000  # iterating a handle materialises at most this many items
PLAIN = (str, int, float, bool, type(None), bytes, bytearray, complex, list, tuple, dict, set, frozenset, slice, range,
         pickle.PickleBuffer)
DATA_ROOTS = ("numpy", "pandas", "pyarrow")
# the functions a numpy/pandas/pyarrow pickle calls to rebuild data, by name
REBUILDERS = {
    "_reconstruct", "scalar", "_frombuffer", "_new_Index", "_new_DatetimeIndex", "_new_PeriodIndex",
    "_new_IntervalIndex", "__pyx_unpickle_NDArrayBacked", "_unpickle_block", "new_block", "_nat_unpickle",
    "_timedelta_unpickle", "_unpickle_timestamp", "_restore_array", "type_for_alias", "py_buffer",
    "chunked_array", "_reconstruct_table", "table", "schema", "field", "_mareconstruct",
}
ARROW_REBUILDERS = {"_restore_array", "type_for_alias", "py_buffer", "chunked_array", "_reconstruct_table", "table",
                    "schema", "field"}
BUILTIN_DATA = {"list", "dict", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float",
                "complex", "bool", "slice", "range", "object", "NotImplemented", "Ellipsis"}
STDLIB_DATA = {
    ("datetime", "datetime"), ("datetime", "date"), ("datetime", "time"), ("datetime", "timedelta"),
    ("datetime", "timezone"), ("decimal", "Decimal"), ("fractions", "Fraction"), ("collections", "OrderedDict"),
    ("copyreg", "_reconstructor"),
}
OPS = {"eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
       "getitem", "contains", "neg", "pos", "abs", "invert", "and_", "or_", "xor", "matmul"}

JUDGE_BUILTINS = dict(vars(builtins))  # as the kernel had them when fixloop was imported
BUILTIN_NAMES = frozenset(JUDGE_BUILTINS)
WHOLE_NAMESPACE = {"globals", "locals", "vars", "exec", "eval", "dir"}
IPYTHON_NAMES = {"In", "Out", "exit", "quit", "get_ipython"}

_link: _Link | None = None  # the kernel's end of the current judge

# What the kernel's side serialises with, bound when this module is imported (the runner's import,
# when the kernel starts, before any candidate): a candidate that wraps `pickle.dumps`, `json.dumps`,
# `io.BytesIO`, `struct.pack` or copyreg's table changes nothing of what is sent to the judge.
_Pickler, _Unpickler, _BytesIO = pickle.Pickler, pickle.Unpickler, io.BytesIO
_pack, _unpack, _fork, _pipe, _fdopen = struct.pack, struct.unpack, os.fork, os.pipe, os.fdopen
_DISPATCH = dict(copyreg.dispatch_table)


# ---------------------------------------------------------------- the kernel's side


def start(ns: dict | None = None) -> None:
    """Fork a judge for the next run (replacing an unused one). It judges nothing until `arm` gives
    it the host's checks; its key is read then (the fork does not wait for it: the judge makes it
    on the other core while the kernel goes on). `ns`: the namespace as the run will find it (a
    snapshot's load), whose frames the judge, armed ahead, rebuilds from its own copy of the map."""
    global _link
    stop()
    _install_roots()  # read here, before any candidate code: the judge names its own modules by them
    down_r, down_w = _pipe()  # kernel -> judge
    up_r, up_w = _pipe()  # judge -> kernel
    sample = _warm_value()  # made here: the judge runs only the code a verdict runs
    kernel = os.getpid()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "fork() in a multi-threaded process": the judge uses no lock of those threads
        pid = _fork()
    if pid == 0:
        code = 1
        try:
            limits.die_with(kernel)
            os.close(down_w)
            os.close(up_r)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for the run, not the judge
            sys.stdout = sys.stderr = io.StringIO()  # the kernel's streams need its threads, which a fork lacks
            _not_dumpable()
            Judge(_fdopen(down_r, "rb", buffering=0), _fdopen(up_w, "wb", buffering=0), ns).serve(sample)
            code = 0
        finally:
            os._exit(code)
    os.close(down_r)
    os.close(up_w)
    _link = _Link(pid, _fdopen(down_w, "wb", buffering=0), _fdopen(up_r, "rb", buffering=0))


def arm(checks: list[str], ahead: bool = False, ns: dict | None = None) -> str:
    """Give the judge the host's checks, before any candidate code runs (forking one if none
    waits); its public key. The judge evaluates these checks and no others, once each. `ahead`
    (a kernel made ready while the model thinks): the judge warms up first and says when it is done,
    so that its warm-up is over before the run (else it takes none: the run follows at once), and
    says which of the frames its checks read it has rebuilt already (`Judge.ready`)."""
    checks = [str(c) for c in checks]
    for attempt in range(2):
        if attempt or _link is None or _link.checks is not None:
            start(ns)
        assert _link is not None
        try:
            key = _link.public_key()
            _link.send(("checks, warm" if ahead else "checks", list(checks)))
            if ahead:
                reply = _link.receive()
                if not (isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "warm"):
                    raise RuntimeError("the judge did not warm up")
                _link.ready = set(reply[1])
        except (OSError, EOFError, RuntimeError):  # the judge forked at load is gone: a new one
            continue
        _link.checks = checks
        return key
    raise RuntimeError("the judge took no checks")


def give_cell(cell: str) -> None:
    """Hand the armed judge the cell (the host's, from the run's payload) before the runner executes
    it: a check's detail names the cell's lines that produced what it read. Once per judge; a judge
    gone by now gives no verdict, and the host says so."""
    if _link is None or _link.checks is None or _link.cell:
        return
    with contextlib.suppress(OSError):
        _link.send(("cell", str(cell)))
        _link.cell = True


def started() -> bool:
    return _link is not None


def armed() -> bool:
    return _link is not None and _link.checks is not None


def stop() -> None:
    global _link
    if _link is not None:
        _link.close()
        _link = None


def verdict(ns: dict, kept: dict | None = None) -> tuple[dict, list[BaseException]]:
    """Send the judge the values its checks read of `ns` and take its signed verdict:
    ({"text", "signature"} or {"error"}, the exceptions the cell's objects raised answering it).
    `kept`: {name: (value, fingerprint)} of the snapshot frames the run left as loaded
    (effect.kept): of those the judge has rebuilt already, only the fingerprint is sent."""
    global _link
    link, _link = _link, None  # one verdict per judge
    if link is None or link.checks is None or not link.cell:
        if link is not None:
            link.close()
        return {"error": "no judge was armed with the checks and the cell"}, []
    try:
        with mapped.one_reading():
            values = {name: link.pack_top(name, ns[name], kept or {}) for name in sorted(wanted(link.checks, ns))}
        link.send(("values", values))
        while True:
            message = link.receive()
            if message[0] == "verdict":
                return {"text": message[1], "signature": message[2]}, link.raised
            link.send(link.serve(*message[1:]))
    except BaseException as exc:  # a judge that died or was disturbed: no verdict, and the host says so
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}, link.raised
    finally:
        link.close()


def read_names(checks: list[str], depth: int = 2) -> set[str]:
    """Names the checks read: as names, as `globals().get("name")`-style strings, and inside code
    given as a string (`exec(compile("assert total == 12", ...), globals())`)."""
    names: set[str] = set()
    for check in checks:
        try:
            tree = ast.parse(check.strip())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value.isidentifier():
                    names.add(node.value)
                elif depth:
                    names |= read_names([node.value], depth - 1)
    return names


def wanted(checks: list[str], ns: dict) -> set[str]:
    """What the judge is sent: the names the checks read; with `globals()` and the like, every
    public name (a check may look any up). Never a builtin's name: the judge has its own builtins,
    a cell's `abs = lambda v: 0` does not reach them."""
    names = read_names(checks)
    if names & WHOLE_NAMESPACE:
        names |= {n for n in ns if isinstance(n, str) and not n.startswith("_") and n not in IPYTHON_NAMES}
    return {n for n in names if n in ns and n not in BUILTIN_NAMES and not n.startswith("__")}


class _Link:
    """The kernel's end of the pipes to one judge, and the objects it lent the judge as handles."""

    def __init__(self, pid: int, down, up):
        self.pid, self.down, self.up = pid, down, up
        self.key = ""
        self.checks: list[str] | None = None  # the host's, once armed
        self.cell = False  # given the cell, before it ran
        self.lent: list = []
        self.raised: list[BaseException] = []  # what the cell's objects raised answering the judge
        self.ready: set[str] = set()  # the frames the judge rebuilt while armed ahead

    def public_key(self) -> str:
        """The judge's public key, its first message (read once, when the host is to take it)."""
        if not self.key:
            kind, key = self.receive()
            if kind != "key" or not isinstance(key, str):
                raise RuntimeError("the judge gave no key")
            self.key = key
        return self.key

    def send(self, message) -> None:
        buffer = _BytesIO()
        _Pickler(buffer, protocol=5).dump(message)
        _write(self.down, buffer.getvalue())

    def receive(self):
        return _Answers(_BytesIO(_read(self.up)), self.lent).load()

    def pack(self, value) -> tuple[bytes, list]:
        """`value` as a data pickle; where that is not data as a whole, a handle to it.

        Large buffers (arrays, Arrow columns) go out of band: each as where it lies in a snapshot
        map when this kernel never wrote its pages (the judge has the same bytes: kernel/mapped.py),
        else as its bytes. Returns (pickle, [bytes or (map, offset, length), ...])."""
        buffer, buffers = _BytesIO(), []
        try:
            _DataPickler(buffer, self.lent, buffers.append).dump(value)
        except Exception:
            buffer, buffers = _BytesIO(), []
            _DataPickler(buffer, self.lent, buffers.append).dump(_Handle(self._lend(value)))
        return buffer.getvalue(), [_buffer_ref(b) for b in buffers]

    def pack_kept(self, name: str, value, kept: dict):
        """As `pack`; a frame the judge rebuilt ahead, which the run left as loaded: its fingerprint
        only, ("kept", name, pickle, places), which the judge compares with its own."""
        seen = kept.get(name)
        if name in self.ready and seen is not None and seen[0] is value:
            payload, places = seen[1]
            return ("kept", name, payload, list(places))
        return self.pack(value)

    def pack_top(self, name: str, value, kept: dict):
        """As `pack_kept`; a module or a library's function (`math`, `np`, `isclose`) goes with its
        name too, ("own", module, qualname, packed): the judge uses its own import of it, and what
        the kernel lends only where it has none (Judge.bind)."""
        packed = self.pack_kept(name, value, kept)
        where = library_name(value)
        return ("own", where[0], where[1], packed) if where is not None else packed

    def _lend(self, value) -> int:
        self.lent.append(value)
        return len(self.lent) - 1

    def serve(self, op: str, target: int, args: tuple, kwargs: dict, swapped: bool = False):
        """One question of the judge about a lent object: ("answer", ok, value or error)."""
        try:
            obj = self.lent[target]
            if op == "getattr":
                value = getattr(obj, args[0])
            elif op == "call":
                value = obj(*args, **kwargs)
            elif op == "repr":
                value = short_repr(obj)
            elif op == "truth":
                value = bool(obj)
            elif op == "len":
                value = len(obj)
            elif op == "iter":
                value = list(itertools.islice(iter(obj), MAX_ITEMS))
            elif op in OPS:
                value = getattr(operator, op)(*((args[0], obj) if swapped else (obj, *args)))
            else:
                raise TypeError(f"the judge asked for {op!r}")
            return ("answer", True, self.pack(value))
        except Exception as exc:
            self.raised.append(exc)
            return ("answer", False, (type(exc).__name__, str(exc)[:300]))

    def close(self) -> None:
        """Kill the judge; it is reaped without waiting for its exit, now or at the next judge's
        (the verdict is in hand: a run does not wait for its address space to be torn down)."""
        for f in (self.down, self.up):
            with contextlib.suppress(OSError):
                f.close()
        limits.kill_unwaited(self.pid)


def _buffer_ref(buffer: pickle.PickleBuffer):
    raw = buffer.raw()
    where = mapped.locate(raw)
    if where is not None:
        return where
    return bytes(raw) if raw.readonly else bytearray(raw)


class _Handle:
    """Stands for an object the judge may ask about but not read as data."""

    def __init__(self, index: int):
        self.index = index


class _NotData(Exception):
    pass


class _DataPickler(_Pickler):
    """Pickles data; code and objects of other classes become handles (the judge never unpickles
    them). `reducer_override`, not `persistent_id`: pickle skips it for str, int, float, list,
    dict..., so a million strings cost no Python call each. Its reduction table is its own copy,
    made at import (not copyreg's, which the candidate can change)."""

    dispatch_table = _DISPATCH  # read by the C pickler when it is made

    def __init__(self, file, lent: list, buffer_callback=None):
        super().__init__(file, protocol=5, buffer_callback=buffer_callback)
        self.lent = lent

    def reducer_override(self, obj):
        if isinstance(obj, _Handle):
            return (_handle, (obj.index,))
        kind = type(obj)
        if kind in PLAIN or obj is _handle:
            return NotImplemented
        if (getattr(kind, "__module__", None) or "").startswith("pandas."):
            reduced = mapped.arrow_reduce(obj)
            if reduced is not None:
                return reduced
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):  # pickled by name
            if allowed(getattr(obj, "__module__", None) or "", getattr(obj, "__qualname__", ""), obj):
                return NotImplemented
            if _root(getattr(obj, "__module__", None) or "") in DATA_ROOTS:
                raise _NotData  # a rebuilder the judge would refuse: the whole value goes as a handle
        elif _root(kind.__module__) in DATA_ROOTS or (kind.__module__, kind.__qualname__) in STDLIB_DATA:
            return NotImplemented
        self.lent.append(obj)
        return (_handle, (len(self.lent) - 1,))


def _handle(index: int):
    """Named in a data pickle where an object stays in the kernel; the judge's loader makes it a `Remote`."""
    raise pickle.UnpicklingError("a handle is read by the judge only")


class _Answers(_Unpickler):
    """The judge's messages, read in the kernel: handles become the objects they stand for."""

    def __init__(self, file, lent: list):
        super().__init__(file)
        self.lent = lent

    def persistent_load(self, pid):
        return self.lent[pid[1]]


# ---------------------------------------------------------------- the judge's side


class Judge:
    """The forked process: makes the key, takes the host's checks (sent before any candidate code
    ran), the cell (before the runner executed it), then one message of values; evaluates each check
    once, signs, exits. Any other message ends it without a verdict."""

    def __init__(self, down, up, ns: dict | None = None):
        self.down, self.up = down, up
        self.secret = os.urandom(2 * BITS * SECRET)
        self.ns = ns if isinstance(ns, dict) else {}  # this process's copy of the kernel's, at the fork
        self.ready: dict[str, tuple] = {}  # name -> (fingerprint, the frame rebuilt from it)

    def serve(self, sample=None) -> None:
        _write(self.up, pickle.dumps(("key", public_key(self.secret))))
        message = DataLoader(io.BytesIO(_read(self.down))).load()  # no handles: plain data only
        if not (isinstance(message, tuple) and len(message) == 2 and message[0] in ("checks", "checks, warm")):
            return
        checks = message[1]
        if not (isinstance(checks, list) and all(isinstance(c, str) for c in checks)):
            return
        if message[0] == "checks, warm":  # armed ahead, while the model thinks: warm up now, then say so
            warm(warming(sample))  # (not from the fork: a load's reply is not to share the CPU with it)
            self.ready = self.rebuild_ahead(checks)
            _write(self.up, pickle.dumps(("warm", sorted(self.ready))))
        cell = self._plain("cell")
        if not isinstance(cell, str):
            return
        message = DataLoader(io.BytesIO(_read(self.down)), self).load()
        if not (isinstance(message, tuple) and len(message) == 2 and message[0] == "values"
                and isinstance(message[1], dict)):
            return  # a second list of checks, a request of another shape: no verdict
        outcomes = self.judge(checks, cell, message[1])
        text = json.dumps({"checks": outcomes}, sort_keys=True)
        _write(self.up, pickle.dumps(("verdict", text, sign(self.secret, text.encode()))))

    def _plain(self, kind: str):
        """The next message, plain data (no handles): `(kind, value)`'s value, else None."""
        message = DataLoader(io.BytesIO(_read(self.down))).load()
        return message[1] if isinstance(message, tuple) and len(message) == 2 and message[0] == kind else None

    def judge(self, checks: list[str], cell: str, values: dict) -> list[dict]:
        ns: dict = {"__builtins__": dict(JUDGE_BUILTINS)}  # its own: the candidate's names never stand in for them
        unreadable = {}
        for name, packed in values.items():
            if not isinstance(name, str) or name in BUILTIN_NAMES or name.startswith("__"):
                continue
            try:
                ns[name] = self.bind(name, packed)
            except Exception as exc:
                unreadable[name] = f"{type(exc).__name__}: {exc}"[:200]
        outcomes = []
        for check in checks:
            missing = sorted(n for n in read_names([check]) if n in unreadable)
            if missing:
                outcomes.append({"expr": check, "passed": False,
                                 "detail": f"{missing[0]} could not be read as data: {unreadable[missing[0]]}"})
                continue
            try:
                outcome = check_code.evaluate(check, ns, cell=cell)
                passed, detail = outcome["passed"] is True, str(outcome.get("detail", ""))
                failing = str(outcome.get("failing", ""))  # a block's failing assert
                raised = {k: str(outcome[k])[:MAX_DETAIL] for k in ("raised", "message") if k in outcome}
            except BaseException as exc:
                passed, detail, failing = False, f"raised {type(exc).__name__}", ""
                raised = {"raised": type(exc).__name__}
            outcomes.append({"expr": check, "passed": passed, "detail": detail[:MAX_DETAIL]}
                            | ({"failing": failing[:MAX_DETAIL]} if failing else {}) | raised)
        return outcomes

    def bind(self, name: str, packed):
        """A check's name as the judge reads it. A module or a library's function is the judge's own
        import, never one the kernel lends (a candidate's `setattr(math, "isclose", ...)` is in the
        kernel's `math`, not in this process's): the one this process's copy of the namespace bound
        the name to before any candidate code ran, else the one the kernel names, when this process
        imported it from the Python installation before the fork. Data is data; the cell's own code
        and modules of the working directory are lent, and answer from the kernel."""
        mine = own_library(self.ns.get(name))  # this process's copy, from before any candidate code
        if isinstance(packed, tuple) and len(packed) == 4 and packed[0] == "own":
            if mine is not None:
                return mine
            found = own_object(packed[1], packed[2]) if isinstance(packed[1], str) else None
            if found is not None:
                return found
            packed = packed[3]
        value = self.unpack(packed)
        return mine if mine is not None and type(value) is Remote else value

    def rebuild_ahead(self, checks: list[str]) -> dict[str, tuple]:
        """The snapshot frames and arrays the checks read, as this process's copy of the kernel
        holds them (the fork came after the load, before any candidate code): each rebuilt as data
        from its fingerprint (mapped.fingerprint: its pickle, the places of its buffers in this
        process's copy of the map), as `unpack` would, but while the model thinks."""
        ready = {}
        for name in sorted(wanted(checks, self.ns)):
            value = self.ns[name]
            if type(value).__name__ not in ("DataFrame", "Series", "ndarray") or \
                    _root(type(value).__module__) not in ("pandas", "numpy"):
                continue
            with contextlib.suppress(Exception):
                found = mapped.fingerprint(value, pages=False)
                if found is not None:
                    ready[name] = (found, self._rebuilt(*found))
        return ready

    def _rebuilt(self, payload: bytes, places) -> object:
        buffers = [bytearray(p) if isinstance(p, bytes) else _buffer_of(p) for p in places]
        return DataLoader(io.BytesIO(payload), buffers=buffers).load()

    def unpack(self, packed):
        """A value `_Link.pack` made: its buffers are bytes, or read in this process's own copy
        of a snapshot map (as it was at the fork, before any candidate code ran). A kept frame's
        fingerprint equal to the one this judge rebuilt ahead: that frame (a fresh copy of the
        rebuild per verdict is not needed: one verdict per judge); else rebuilt from it."""
        if isinstance(packed, tuple) and len(packed) == 4 and packed[0] == "kept":
            _, name, payload, places = packed
            if not (isinstance(payload, bytes) and isinstance(places, list)):
                raise pickle.UnpicklingError("not a kept value")
            ready = self.ready.get(name)
            if ready is not None and ready[0] == (payload, tuple(places)):
                return ready[1]
            return self._rebuilt(payload, places)
        if not (isinstance(packed, tuple) and len(packed) == 2 and isinstance(packed[0], bytes)
                and isinstance(packed[1], list)):
            raise pickle.UnpicklingError("not a packed value")
        payload, refs = packed
        return DataLoader(io.BytesIO(payload), self, buffers=[_buffer_of(ref) for ref in refs]).load()

    def ask(self, op: str, target: int, args: tuple = (), kwargs: dict | None = None, swapped: bool = False):
        buffer = io.BytesIO()
        _Questions(buffer, protocol=5).dump(("ask", op, target, args, kwargs or {}, swapped))
        _write(self.up, buffer.getvalue())
        message = DataLoader(io.BytesIO(_read(self.down)), self).load()
        if not (isinstance(message, tuple) and len(message) == 3 and message[0] == "answer"):
            raise RuntimeError("the kernel gave no answer")
        _, ok, value = message
        if ok:
            return self.unpack(value)
        name, text = value if isinstance(value, tuple) and len(value) == 2 else ("Exception", "")
        kind = getattr(builtins, str(name), None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = RuntimeError
        raise kind(f"{text}")


_samples: dict = {}


def _warm_value():
    """A one-row frame of the usual dtypes when pandas is loaded (else a list), for `warm`: made
    once per kernel, in an idle one when its packages are preloaded (snapshot.preload; the first
    frame of text pulls in pandas' lazy imports, ~10 ms), not on a load's clock."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return [1]
    if "frame" not in _samples:
        try:
            _samples["frame"] = pd.DataFrame({"n": [1.5], "i": [1], "s": ["a"]})
        except Exception:
            return [1]
    return _samples["frame"]


def warming(value):
    """The steps of `warm`, one per `next`."""
    with contextlib.suppress(Exception):
        buffer, buffers = io.BytesIO(), []
        _DataPickler(buffer, [], buffers.append).dump(value)
        ns = {"__builtins__": dict(JUDGE_BUILTINS),
              "x": DataLoader(io.BytesIO(buffer.getvalue()), buffers=[b.raw() for b in buffers]).load()}
        yield
        outcomes = []
        for check in ("len(x) == 1", "assert len(x) == 2"):
            outcomes.append(check_code.evaluate(check, ns, cell="y = len(x)"))
            yield
        sign(
            os.urandom(2 * BITS * SECRET), json.dumps({"checks": outcomes}, sort_keys=True).encode()
        )  # never the judge's own key


def warm(steps) -> None:
    """In a judge armed with its checks ahead of the run (while the model thinks): take once the
    paths a verdict takes, on a value of our own (`warming`): packing and loading it, evaluating a
    check that holds and one that fails, signing with a throwaway key. The pages they write
    (reference counts, the allocator's) become the judge's own copies now, not copy-on-write faults
    during the round."""
    for _ in steps:
        pass


class _Questions(_Pickler):
    """The judge's questions: a `Remote` among the arguments goes back as the handle it is."""

    def persistent_id(self, obj):
        return ("h", object.__getattribute__(obj, "_target")) if type(obj) is Remote else None


class DataLoader(_Unpickler):
    """The data-only loader: rebuilds builtins, numpy, pandas and pyarrow data, nothing else; a
    handle becomes a `Remote` that asks the kernel (`judge` None: handles are refused)."""

    def __init__(self, file, judge: Judge | None = None, buffers=None):
        super().__init__(file, buffers=buffers)
        self.judge_ = judge

    def find_class(self, module: str, name: str):
        if (module, name) == (__name__, "_handle") and self.judge_ is not None:
            return self._remote
        obj = _resolve(module, name)
        if obj is None or not allowed(module, name, obj):
            raise pickle.UnpicklingError(f"not data: {module}.{name}")
        return obj

    def _remote(self, index) -> Remote:
        if not isinstance(index, int):
            raise pickle.UnpicklingError("a handle is a number")
        return Remote(self.judge_, index)


def library_name(obj) -> tuple[str, str] | None:
    """(module, qualname) of a module ("" for the module itself) or of a function or class of one, read
    from the object; None for data, bound methods, closures and anything else."""
    try:
        if isinstance(obj, types.ModuleType):
            name = dict.get(object.__getattribute__(obj, "__dict__"), "__name__")
            return (name, "") if isinstance(name, str) else None
        if isinstance(obj, types.MethodType) or not callable(obj):
            return None
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        owner = getattr(obj, "__self__", None)
        if not (isinstance(module, str) and isinstance(qualname, str)) or "<" in qualname:
            return None
        if owner is not None and not isinstance(owner, (types.ModuleType, type)):
            return None
        return module, qualname
    except Exception:
        return None


def own_object(module: str, qualname: str):
    """This process's own `module.qualname` (the module itself for ""): a module it imported before the
    fork from the Python installation (stdlib, site-packages, built in); None otherwise. Nothing is
    imported here: an import now could run a file the candidate wrote."""
    found = sys.modules.get(module) if _MODULE_NAME.fullmatch(module) else None
    if found is None or not _installed(found):
        return None
    for part in qualname.split(".") if qualname else ():
        if not part.isidentifier() or part.startswith("__"):
            return None
        found = getattr(found, part, None)
        if found is None:
            return None
    return found if isinstance(found, (types.ModuleType, type)) or callable(found) else None


def own_library(obj):
    """`obj` when it is a module or a library's function or class as this process imported it, else None."""
    where = library_name(obj) if obj is not None else None
    return obj if where is not None and own_object(*where) is obj else None


_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _installed(module) -> bool:
    """A module of the Python installation: built in, frozen, or a file under the standard library's or
    site-packages' directories (not the working directory, not a path the candidate can write under bwrap)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) if spec is not None else None
    if origin in ("built-in", "frozen") or (origin is None and module.__name__ in sys.builtin_module_names):
        return True
    path = getattr(module, "__file__", None) or origin
    if not isinstance(path, str):
        return False
    path = os.path.realpath(path)
    return any(path.startswith(root + os.sep) for root in _install_roots())


def _install_roots() -> tuple[str, ...]:
    if not _ROOTS:
        paths = sysconfig.get_paths()
        _ROOTS.extend(sorted({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")
                              if paths.get(k)}))
    return tuple(_ROOTS)


_ROOTS: list[str] = []


def _buffer_of(ref):
    """The judge's side of `_buffer_ref`."""
    if isinstance(ref, (bytes, bytearray)):
        return ref
    if isinstance(ref, tuple) and len(ref) == 3 and all(type(n) is int and n >= 0 for n in ref):
        index, offset, length = ref
        view = mapped.region(index)
        if view is not None and offset + length <= view.nbytes:
            return view[offset:offset + length]
    raise pickle.UnpicklingError("a buffer is bytes or a place in a snapshot map")


def _resolve(module: str, name: str):
    if module == "builtins":
        return getattr(builtins, name, None) if name in BUILTIN_DATA else None
    if (module, name) not in STDLIB_DATA and _root(module) not in DATA_ROOTS:
        return None
    if "." in name:
        return None
    try:
        found = sys.modules.get(module) or importlib.import_module(module)
        return getattr(found, name, None)
    except Exception:
        return None


def allowed(module: str, name: str, obj) -> bool:
    """Whether a pickle may name `obj` (found as module.name): a data type or a data rebuilder."""
    if module == "builtins":
        return name in BUILTIN_DATA
    if (module, name) in STDLIB_DATA:
        return True
    if _root(module) not in DATA_ROOTS or ".io." in f"{module}." or "testing" in module:
        return False
    if isinstance(obj, type):
        return _data_class(obj)
    if not callable(obj):  # a singleton such as pandas.NA
        return _data_class(type(obj))
    if name in ARROW_REBUILDERS and _root(module) != "pyarrow":
        return False
    return getattr(obj, "__name__", None) == name and name in REBUILDERS


def _data_class(cls: type) -> bool:
    """numpy arrays and scalars, pandas containers, arrays, dtypes and scalars, pyarrow data;
    never a class that opens files (numpy.memmap, readers and writers)."""
    bases = {f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__}
    if "numpy.memmap" in bases:
        return False
    return bool(bases & DATA_BASES) or any(c.__module__.startswith(DATA_MODULES) for c in cls.__mro__)


DATA_MODULES = (  # pandas' modules of data types (not its readers, writers or parsers)
    "pandas._libs.tslibs", "pandas._libs.internals", "pandas._libs.interval", "pandas._libs.missing",
    "pandas._libs.arrays", "pandas._libs.sparse", "pandas.core.dtypes", "pandas.core.arrays",
    "pandas.core.indexes", "pandas.core.internals",
)


DATA_BASES = {
    "numpy.ndarray", "numpy.generic", "numpy.dtype", "pandas.core.frame.DataFrame", "pandas.core.series.Series",
    "pandas.core.indexes.base.Index", "pandas.Index", "pandas.core.generic.NDFrame",
              "pandas.api.extensions.ExtensionArray",
    "pandas.core.arrays.base.ExtensionArray", "pandas.api.extensions.ExtensionDtype",
              "pandas.core.dtypes.base.ExtensionDtype",
    "pyarrow.lib.Array", "pyarrow.lib.ChunkedArray",
    "pyarrow.lib.DataType", "pyarrow.lib.Scalar", "pyarrow.lib.Buffer", "pyarrow.lib.Table", "pyarrow.lib.RecordBatch",
    "pyarrow.lib.Schema", "pyarrow.lib.Field",
}


class Remote:
    """An object in the kernel that the judge may ask about: each use is a question, and what
    comes back is data (or another handle)."""

    __slots__ = ("_judge", "_target")

    def __init__(self, judge: Judge, target: int):
        object.__setattr__(self, "_judge", judge)
        object.__setattr__(self, "_target", target)

    def _ask(self, op: str, *args, swapped: bool = False, **kwargs):
        return self._judge.ask(op, self._target, args, kwargs, swapped)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._ask("getattr", name)

    def __call__(self, *args, **kwargs):
        return self._ask("call", *args, **kwargs)

    def __repr__(self) -> str:
        return str(self._ask("repr"))

    def __bool__(self) -> bool:
        return self._ask("truth") is True

    def __len__(self) -> int:
        return int(self._ask("len"))

    def __iter__(self):
        return iter(self._ask("iter"))

    def __hash__(self) -> int:
        return hash(("remote", self._target))


def _forward(op: str, swapped: bool = False):
    def method(self, *args):
        return self._ask(op, *args, swapped=swapped)
    return method


for _op in OPS:
    _dunder = _op.rstrip("_")
    setattr(Remote, f"__{_dunder}__", _forward(_op))
    if _op in {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "matmul"}:
        setattr(Remote, f"__r{_dunder}__", _forward(_op, swapped=True))


# ---------------------------------------------------------------- a one-time signature (Lamport)


def _secrets(secret: bytes, bit: int, value: int) -> bytes:
    at = (2 * bit + value) * SECRET
    return secret[at: at + SECRET]


def public_key(secret: bytes) -> str:
    """The digest of the 2 * BITS hashes of the secrets: what the host checks a signature against."""
    hashes = b"".join(hashlib.sha256(secret[i: i + SECRET]).digest() for i in range(0, len(secret), SECRET))
    return hashlib.sha256(hashes).hexdigest()


def _bits(message: bytes) -> list[int]:
    digest = int.from_bytes(hashlib.sha256(message).digest(), "big")
    return [(digest >> (BITS - 1 - i)) & 1 for i in range(BITS)]


def sign(secret: bytes, message: bytes) -> str:
    """For each bit of the message's digest, that bit's secret and the hash of the other one."""
    parts = []
    for i, bit in enumerate(_bits(message)):
        parts.append(_secrets(secret, i, bit) + hashlib.sha256(_secrets(secret, i, 1 - bit)).digest())
    return b"".join(parts).hex()


# ---------------------------------------------------------------- plumbing


def _not_dumpable() -> None:
    """PR_SET_DUMPABLE 0: no ptrace, no /proc/<pid>/mem for processes of the same uid."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)


def _root(module: str) -> str:
    return module.partition(".")[0]


def _write(f, data: bytes) -> None:
    f.write(_pack(">Q", len(data)))
    view = memoryview(data)
    while view:
        view = view[f.write(view):]


def _read(f) -> bytes:
    head = _exactly(f, 8)
    return _exactly(f, _unpack(">Q", head)[0])


def _exactly(f, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = f.read(min(left, 1 << 24))
        if not chunk:
            raise EOFError("the other side of the judge's pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

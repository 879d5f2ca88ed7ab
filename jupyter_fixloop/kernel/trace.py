"""A value trace of a cell whose output is wrong: the values its lines made, line by line.

When a cell raises nothing but a check fails, the receipt can only show the failing check and its
operands; a small model then guesses. This module re-runs the cell under a line tracer and records,
for the names the failing checks read and the names the lines that made them read (a closure over
the cell's assignments, `return`s and in-place calls like `found.append(v)`), a short value after
each line that writes one of them: the first two runs of a line and its last (loops), a frame's
shape and the first values of its changed columns, a series' head and length.

Where the re-run happens, and why there (side effects): not on the state the first run left (a
cell that appends to a list, or `x += 1`, would trace different values), but in a *twin*, a fork
of the kernel taken before the cell runs, which waits holding the state the cell saw,
copy-on-write. It is forked right after the snapshot load when there was one (`prefork`, off the
run's clock, while the model thinks: a sandbox kernel runs one candidate after its load), else at
the start of the run. After a run that raised nothing and failed a check, the kernel asks the twin
to trace; otherwise it is killed. The twin is the same sandbox (same confinement and cgroups; the
run's CPU-time limit and secret-file block it sets itself), with its own time limit
(`TRACE_SECONDS`; the kernel stops waiting then and kills it). Files are shared, not copied: a run
that created or changed files in its working directory is not traced (its re-run would write them
again), and the receipt then has no trace. A cell with top-level `await` is not traced either.
Stdlib only: imported in every sandbox.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import select
import signal
import sys
import time
import warnings

from jupyter_fixloop.kernel import limits
from jupyter_fixloop.kernel.facts import short_repr, written

CELL_FILE = "<cell>"
TRACE_SECONDS = 5.0  # the traced re-run's time limit (a tracer slows Python code several times)
MAX_NAMES = 12  # names followed
MAX_LINES = 12  # lines reported (the receipt shows fewer)
MAX_VALUE = 110  # characters of one value
MAX_EVENTS = 200_000  # line events before the tracer gives up (a long loop)
MAX_BYTES = 20_000  # of the JSON sent back


class _Stop(BaseException):
    """The traced re-run is past its limits."""


# ---------------------------------------------------------------- which names to follow


def followed(check_sources: list[str], tree: ast.Module, limit: int = MAX_NAMES) -> list[str]:
    """The names the failing checks read, then the names the cell's lines that make them read
    (assignments, `x.append(...)`, `for` targets, a function's `return`s when the function is
    followed), nearest first."""
    order: list[str] = []
    for source in check_sources:
        try:
            check = ast.parse(source.strip())
        except SyntaxError:
            continue
        order += [n for n in _check_names(check) if n not in order]
    statements = _statements(tree)
    frontier = list(order)
    while frontier and len(order) < 4 * limit:
        name = frontier.pop(0)
        for writes, reads in statements:
            if name in writes:
                for read in reads:
                    if read not in order:
                        order.append(read)
                        frontier.append(read)
    return order[:limit]


def _check_names(check: ast.Module) -> list[str]:
    names: list[str] = []
    bound = set()
    for node in ast.walk(check):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    for node in ast.walk(check):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            names.append(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if ast.unparse(node.func.value) in ("globals()", "locals()", "vars()") and node.args:
                if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    names.append(node.args[0].value)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("globals()", "locals()", "vars()"):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                names.append(node.slice.value)
    seen: list[str] = []
    for n in names:
        if n not in seen and n not in ("globals", "locals", "vars", "int", "float", "str", "len", "abs", "repr",
                                       "sorted", "list", "dict", "set", "round", "sum", "min", "max"):
            seen.append(n)
    return seen


def _statements(tree: ast.Module) -> list[tuple[set[str], list[str]]]:
    """(names written, names read) of every simple statement and loop header of the cell; a
    `return` inside `def f` writes `f`."""
    found = []

    def visit(body, func: str | None):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(stmt.body, stmt.name)
                continue
            if isinstance(stmt, ast.ClassDef):
                continue
            writes = written(stmt)
            if isinstance(stmt, ast.Return) and func:
                writes.add(func)
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.Try)):
                header = [getattr(stmt, "iter", None), getattr(stmt, "test", None)]
                reads = [n for h in header if h is not None for n in _loads(h)]
                found.append((writes, reads))
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, part, []), func)
                for handler in getattr(stmt, "handlers", []):
                    visit(handler.body, func)
                continue
            found.append((writes, _loads(stmt)))

    visit(tree.body, None)
    return found


def _loads(node: ast.AST) -> list[str]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in out:
            out.append(n.id)
    return out


# ---------------------------------------------------------------- short values


def value_text(value, before: dict | None = None) -> tuple[str, dict]:
    """A short value, and what the next call needs to say what changed (a frame's columns)."""
    try:
        if type(value).__name__ == "DataFrame" and hasattr(value, "columns"):
            return _frame_text(value, before)
        if type(value).__name__ == "Series" and hasattr(value, "dtype"):
            return _series_text(value), {}
    except Exception:
        pass
    return _clip(" ".join(short_repr(value, MAX_VALUE).split()), MAX_VALUE), {}


def _frame_text(df, before: dict | None) -> tuple[str, dict]:
    heads = {}
    for column in list(df.columns)[:20]:
        try:
            heads[str(column)] = _items(df[column].head(4).tolist())
        except Exception:
            continue
    previous = (before or {}).get("columns", {})
    changed = [c for c, h in heads.items() if previous.get(c) != h]
    gone = [c for c in previous if c not in heads]
    if before is not None and not changed and not gone:
        return f"frame shape {df.shape}, unchanged", {"columns": heads}
    shown = "; ".join(f"{c}: {heads[c]}" for c in changed[:3])
    more = f" (+{len(changed) - 3} more changed)" if len(changed) > 3 else ""
    dropped = f"; dropped {gone[:3]}" if gone else ""
    return _clip(f"frame shape {df.shape}; {shown}{more}{dropped}", 2 * MAX_VALUE), {"columns": heads}


def _series_text(s) -> str:
    """Its length and values; the labels too unless they are 0..n-1 (a slice or a filter shows
    which rows it kept); a long series shows its first 3 values and its last 2."""
    index = s.index
    plain = type(index).__name__ == "RangeIndex" and getattr(index, "start", 0) == 0 and getattr(index, "step", 1) == 1
    pairs = list(s.items()) if len(s) <= 5 else list(s.head(3).items()) + [None] + list(s.tail(2).items())
    if plain:
        body = "[" + ", ".join("..." if p is None else _scalar(p[1]) for p in pairs) + "]"
    else:
        body = "{" + ", ".join("..." if p is None else f"{_scalar(p[0])}: {_scalar(p[1])}" for p in pairs) + "}"
    return _clip(f"series len {len(s)} {body}", MAX_VALUE)


def _items(values: list) -> str:
    return "[" + ", ".join(_scalar(v) for v in values) + "]"


def _scalar(v) -> str:
    if type(v).__name__ in ("Timestamp", "Timedelta", "datetime", "date", "NaTType"):
        return _clip(str(v), 32)
    return _clip(repr(v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v), 24)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- the tracer


class Tracer:
    """Records, after each line of the cell that writes a followed name, that name's short value."""

    def __init__(self, tree: ast.Module, names: list[str], source: str):
        self.names = set(names)
        self.lines = source.splitlines()
        self.writes: dict[int, list[str]] = {}
        self.funcs: dict[str, list[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)):
                hit = [n for n in sorted(written(node)) if n in self.names]
                if hit:
                    self.writes.setdefault(node.lineno, [])
                    self.writes[node.lineno] += [n for n in hit if n not in self.writes[node.lineno]]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs[node.name] = [a.arg for a in node.args.args + node.args.kwonlyargs]
        self.records: dict[tuple[str, int], dict] = {}  # (function, lineno) -> {"hits", "values": [(hit, {...})]}
        self.last: dict[int, int] = {}  # frame id -> line running in it
        self.before: dict[tuple[str, str], dict] = {}
        self.events = 0
        self.deadline = 0.0

    def run(self, tree: ast.Module, ns: dict, seconds: float = TRACE_SECONDS) -> dict:
        code = compile(tree, CELL_FILE, "exec")
        for name in self.names:  # a frame's first record says what the cell changed in it
            if type(ns.get(name)).__name__ == "DataFrame":
                self._value("<module>", name, ns[name])
        self.deadline = time.monotonic() + seconds
        error = None
        sys.settrace(self._global)
        try:
            exec(code, ns)
        except _Stop as stop:
            error = str(stop)
        except BaseException as exc:  # the re-run differs from the run (random, time): say so
            error = f"the traced re-run raised {type(exc).__name__}: {_clip(str(exc), 120)}"
        finally:
            sys.settrace(None)
        return {"lines": self.report(), "error": error}

    def _global(self, frame, event, arg):
        if frame.f_code.co_filename != CELL_FILE:
            return None
        name = frame.f_code.co_name
        if name.startswith("<") and name != "<module>":
            return None  # comprehensions: their line is the enclosing line
        if event == "call" and name in self.funcs:
            self._call(frame)
        return self._local

    def _local(self, frame, event, arg):
        self.events += 1
        if self.events > MAX_EVENTS or time.monotonic() > self.deadline:
            sys.settrace(None)
            raise _Stop("the traced re-run was stopped at its limits; values up to there")
        key = id(frame)
        if event in ("line", "return"):
            previous = self.last.get(key)
            if previous is not None:
                self._after(frame, previous)
            if event == "line":
                self.last[key] = frame.f_lineno
            else:
                self.last.pop(key, None)
        return self._local

    def _call(self, frame) -> None:
        params = [p for p in self.funcs[frame.f_code.co_name] if p in self.names]
        if not params:
            return
        values = {p: self._value(frame.f_code.co_name, p, frame.f_locals[p]) for p in params if p in frame.f_locals}
        self._record(frame.f_code.co_name, frame.f_code.co_firstlineno, values)

    def _after(self, frame, lineno: int) -> None:
        names = self.writes.get(lineno)
        if not names:
            return
        func = frame.f_code.co_name
        scope = frame.f_locals if func != "<module>" else frame.f_globals
        values = {}
        for name in names:
            if name in scope:
                value = scope[name]
            elif name in frame.f_globals:
                value = frame.f_globals[name]
            else:
                continue
            if callable(value) and not hasattr(value, "shape") or type(value).__name__ == "module":
                continue
            values[name] = self._value(func, name, value)
        if values:
            self._record(func, lineno, values)

    def _value(self, func: str, name: str, value) -> str:
        text, memo = value_text(value, self.before.get((func, name)))
        self.before[(func, name)] = memo
        return text

    def _record(self, func: str, lineno: int, values: dict) -> None:
        record = self.records.setdefault((func, lineno), {"hits": 0, "values": []})
        record["hits"] += 1
        entry = (record["hits"], values)
        if record["hits"] <= 2:
            record["values"].append(entry)
        elif len(record["values"]) == 3:
            record["values"][2] = entry  # the last run of a loop's line
        else:
            record["values"].append(entry)

    def report(self) -> list[dict]:
        out = []
        for (func, lineno), record in sorted(self.records.items(), key=lambda kv: kv[0][1]):
            line = self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""
            out.append({"lineno": lineno, "line": _clip(line, 160), "func": None if func == "<module>" else func,
                        "hits": record["hits"], "values": [{"run": hit, "values": v} for hit, v in record["values"]]})
        return out[-MAX_LINES:]


def trace(source: str, check_sources: list[str], ns: dict, seconds: float = TRACE_SECONDS) -> dict:
    """Re-run `source` (Python, already transformed) in `ns` under the tracer: {"lines", "names", "error"}.

    The top-level assignments of the names the checks read are instrumented as checks.py does a
    failing check, so one evaluation also gives the steps of a chain on that line
    (`daily["sales"].iloc[-8:-1]` before its `.sum()`), under "steps" of the line."""
    tree = ast.parse(source, CELL_FILE)
    names = followed(check_sources, tree)
    if not names:
        return {"lines": [], "names": [], "error": None}
    tracer = Tracer(tree, names, source)
    steps = _instrument(tree, names[:MAX_STEPPED], ns)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        result = tracer.run(tree, ns, seconds)
        said = {lineno: _steps(recorded) for lineno, recorded in steps.items()}
    for line in result["lines"]:
        if line["func"] is None and said.get(line["lineno"]):
            line["steps"] = said[line["lineno"]]
    result["names"] = names
    return result


MAX_STEPPED = 4  # names whose making line shows its steps
MAX_STEPS = 3


def _instrument(tree: ast.Module, names: list[str], ns: dict) -> dict:
    """Swap the value of each top-level `name = <chain>` for its recorded version; {lineno: Recorded}."""
    from jupyter_fixloop.kernel.checks import RECORDER, Recorded

    found = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign) or stmt.lineno != getattr(stmt, "end_lineno", stmt.lineno):
            continue
        if not written(stmt) & set(names) or not isinstance(
            stmt.value, (ast.Call, ast.Subscript, ast.Attribute, ast.BinOp)
        ):
            continue
        try:
            recorded = Recorded(stmt.value)
        except Exception:
            continue
        recorder = f"{RECORDER}{stmt.lineno}__"
        for node in ast.walk(recorded.tree):
            if isinstance(node, ast.Name) and node.id == RECORDER:
                node.id = recorder
        ns[recorder] = recorded._record
        stmt.value = ast.copy_location(recorded.tree.body, stmt.value)
        found[stmt.lineno] = recorded
    ast.fix_missing_locations(tree)
    return found


def _steps(recorded) -> list[list[str]]:
    """The intermediate values on the line, innermost first: a chain's receivers
    (`rev.sort_values("revenue")` before `.head(3)`), a call's arguments (`sum(prices)` inside
    `round(...)`), an operation's operands (`len(scores)` in `total // len(scores)`)."""
    order: list[int] = []

    def visit(index: int, depth: int) -> None:
        if depth > 4:
            return
        node = recorded.kinds[index]
        inner: list[ast.AST] = []
        if isinstance(node, ast.Call):
            inner = ([node.func.value] if isinstance(node.func, ast.Attribute) else []) + list(node.args)
        elif isinstance(node, (ast.Subscript, ast.Attribute)):
            inner = [node.value] + ([node.slice] if isinstance(node, ast.Subscript) else [])
        elif isinstance(node, ast.BinOp):
            inner = [node.left, node.right]
        for part in inner:
            source = ast.unparse(part)
            child = next((c for c in recorded.children[index] if recorded.sources[c] == source), None)
            if child is not None:
                visit(child, depth + 1)
                order.append(child)

    visit(recorded.top, 0)
    out = []
    for index in order:
        node = recorded.kinds[index]
        if index not in recorded.values or isinstance(node, (ast.Name, ast.Constant, ast.Slice)):
            continue
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant)
        ):
            continue  # df["col"]: the frame's column, as it was
        value = recorded.values[index]
        if type(value).__name__ not in ("DataFrame", "Series", "ndarray", "list", "tuple", "dict", "int", "float",
                                        "str", "Index", "int64", "float64", "bool"):
            continue  # a groupby, an indexer: its repr tells nothing
        out.append([_clip(recorded.sources[index], 80), value_text(value)[0]])
    return out[-MAX_STEPS:]


# ---------------------------------------------------------------- the twin


class Twin:
    """A fork of the kernel taken just before a run: it holds the state the cell saw, and on request
    re-runs the cell under the tracer there, then exits. Only the kernel's main thread forks."""

    def __init__(self, pid: int, down: int, up: int):
        self.pid, self.down, self.up = pid, down, up
        self.confirmed = False  # said it is ready (and non-dumpable): `ready`

    @classmethod
    def fork(cls, ns: dict) -> Twin | None:
        try:
            down_r, down_w = os.pipe()
            up_r, up_w = os.pipe()
            kernel = os.getpid()
            with warnings.catch_warnings():
                warnings.simplefilter(
                    "ignore"
                )  # "fork() in a multi-threaded process": the twin takes no lock of theirs
                pid = os.fork()
        except Exception:
            return None
        if pid == 0:  # the twin
            code = 1
            try:
                limits.die_with(kernel)
                os.close(down_w)
                os.close(up_r)
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for the run
                limits.make_undumpable()  # as the judge: the candidate cannot ptrace or read it
                os.write(up_w, b"r")  # ready, and non-dumpable before any candidate code runs
                sys.stdout = sys.stderr = io.StringIO()  # the kernel's streams need its threads
                _wait_and_trace(down_r, up_w, ns)
                code = 0
            finally:
                os._exit(code)
        os.close(down_r)
        os.close(up_w)
        return cls(pid, down_w, up_r)  # its "ready" is read before the run (`ready`), not waited for here

    def ready(self) -> bool:
        """Whether the twin said it is ready and non-dumpable (waiting up to 2 s the first time):
        asked before the run, so before any candidate code runs. A twin that did not is killed."""
        if not self.confirmed:
            try:
                self.confirmed = _readable(self.up, 2.0) and os.read(self.up, 1) == b"r"
            except (OSError, ValueError):
                self.confirmed = False
            if not self.confirmed:
                self.close()
        return self.confirmed

    def trace(self, source: str, checks: list[str], seconds: float = TRACE_SECONDS) -> dict | None:
        """Ask the twin to trace `source` (Python) for `checks`; None if it gives no trace within
        `seconds` (and a little more)."""
        try:
            request = {"source": source, "checks": checks, "seconds": seconds}
            _write_all(self.down, json.dumps(request).encode() + b"\n")
            os.close(self.down)
            self.down = -1
            chunks, end = [], time.monotonic() + seconds + 1.0
            while time.monotonic() < end:
                if not _readable(self.up, max(0.0, end - time.monotonic())):
                    break
                chunk = os.read(self.up, 65536)
                if not chunk:
                    return json.loads(b"".join(chunks).decode()) if chunks else None
                chunks.append(chunk)
            return None
        except Exception:
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Kill the twin; it is reaped without waiting, now or at the next run (a wait costs the run
        tens of milliseconds on a busy machine)."""
        for fd in (self.down, self.up):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.down = self.up = -1
        limits.kill_unwaited(self.pid)


def _readable(fd: int, seconds: float) -> bool:
    """Whether `fd` has something to read (or was closed) within `seconds`. poll, not select: a kernel
    holding more than 1,024 files gets pipes numbered past what select.select accepts (ValueError)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(seconds * 1000))


def reap() -> None:
    """Collect the twins and judges that have exited (no zombies left behind), without waiting."""
    limits.reap()


def _wait_and_trace(down: int, up: int, ns: dict) -> None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(down, 65536)
        if not chunk:
            return  # the kernel closed the pipe: no trace wanted
        data += chunk
    request = json.loads(data.decode())
    seconds = float(request.get("seconds", TRACE_SECONDS))
    try:
        _bounds(seconds)
        result = trace(request["source"], request["checks"], ns, seconds)
    except BaseException as exc:
        result = {"lines": [], "names": [], "error": f"no trace: {type(exc).__name__}: {_clip(str(exc), 120)}"}
    text = json.dumps(result, default=str).encode()
    if len(text) > MAX_BYTES:
        result["lines"] = result["lines"][-4:]
        text = json.dumps(result, default=str).encode()[:MAX_BYTES]
    _write_all(up, text)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _bounds(seconds: float) -> None:
    """A twin forked before the run's own limits were set takes them now: the CPU-time backstop and
    the block on secret files (kernel/limits.py); cgroups and confinement it shares with the kernel."""
    from jupyter_fixloop.kernel import limits

    limits._limit_cpu(seconds + 1.0)
    limits._block_secret_files()


# ---------------------------------------------------------------- what runner.py calls


class Pending:
    """A twin forked before a run, and the working directory's files as they were then."""

    def __init__(self, twin: Twin, files: dict, python: str):
        self.twin, self.files, self.python = twin, files, python


_ready: Twin | None = None  # forked right after a snapshot was loaded: the next run's twin, off its clock


def prefork(ns: dict) -> None:
    """After a snapshot load (runner.load_request), fork the next run's twin now, while the model
    thinks: a sandbox kernel runs one candidate after its load, so this is the state the cell will see."""
    global _ready
    discard()
    _ready = Twin.fork(ns)


def discard() -> None:
    global _ready
    if _ready is not None:
        _ready.close()
        _ready = None


def before(python: str, checks: list[str], allow_await: bool, ns: dict) -> Pending | None:
    """The twin of a run that has checks (a cell with top-level `await` is not traced): the one
    forked after the load, or a new one."""
    global _ready
    reap()
    twin, _ready = _ready, None
    if not checks or allow_await:
        if twin is not None:
            twin.close()
        return None
    files = _files(os.getcwd())
    twin = twin or Twin.fork(ns)
    return Pending(twin, files, python) if twin is not None and twin.ready() else None  # no twin: untraced


def after(pending: Pending | None, result: dict) -> dict | None:
    """The trace of a run that raised nothing and failed a check, else None; the twin ends either way."""
    if pending is None:
        return None
    try:
        failing = [c["expr"] for c in result.get("checks", []) if not c.get("passed")]
        if result.get("status") != "ok" or not failing or _files(os.getcwd()) != pending.files:
            return None
        return pending.twin.trace(pending.python, failing)
    finally:
        pending.twin.close()


def _files(path: str) -> dict:
    """The working directory's files (name: size and mtime), one level: what a re-run could write again."""
    found = {}
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                found[entry.name] = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        pass
    return found

"""The part of fixloop that runs *inside* a sandbox kernel.

The user side sends one execute request per round that calls `run_request`; this module executes
the candidate in the kernel's namespace, runs the checks, and describes what happened as plain JSON
(no ANSI, nothing invented). It gathers context at the failure while the objects are still alive,
because that is the only place they exist. Keep it stdlib-only: it is imported in every sandbox.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import io
import json
import linecache
import os
import signal
import sys
import threading
import time
import traceback
import warnings

from jupyter_fixloop.kernel import (
    checks,
    effect,
    facts,
    ipysyntax,
    judge,
    limits,
    matches,
    selected,
    trace as value_trace,
)
from jupyter_fixloop.kernel.checks import assess, evaluate as _evaluate_check
from jupyter_fixloop.kernel.facts import gather, short_repr

CELL_FILE = "<cell>"
FOLLOWING_FILE = "<following cell {}>"
CHECK_FILE = "<check>"
MAX_REPR = 160
MAX_MESSAGE = 2000  # the receipt's budget trims further; the bench checks the whole message is kept
MAX_BLOCK = 3  # recursion through up to 3 functions collapses into one block with a count
MAX_STREAM_CHARS = 200_000
SHOWN_CHARS = 20_000  # of the text Jupyter would show for the value

_last_json = "{}"
_user_names: list[str] = []  # names the user's kernel has (values may not be mirrored)


# ---------------------------------------------------------------- entry points (called by sandbox.py)


def run_request(payload_json: str) -> None:
    """Run one candidate described by `payload_json`; the result is read back with `last_json()`."""
    payload = json.loads(payload_json)
    try:
        result = run(payload["source"], payload.get("checks", []), following=payload.get("following"),
                     judged=payload.get("judged", True))
    except BaseException as exc:  # never let the runner itself fail the request
        result = _internal_error(exc)
    _store(result)


async def arun_request(payload_json: str) -> None:
    """`run_request` for a cell with top-level `await`: the request is `await ...arun_request(...)`,
    so the kernel awaits the cell on its own event loop, as a notebook does."""
    payload = json.loads(payload_json)
    try:
        result = await _run(payload["source"], payload.get("checks", []), None, allow_await=True,
                            following=payload.get("following"), judged=payload.get("judged", True))
    except BaseException as exc:
        result = _internal_error(exc)
    _store(result)


def _internal_error(exc: BaseException) -> dict:
    return {"status": "error", "internal": f"{type(exc).__name__}: {exc}"}


def _store(result: dict) -> None:
    global _last_json
    _last_json = json.dumps(result, default=str)


def judge_request(payload_json: str) -> None:
    """Give the next run's judge (kernel/judge.py) the host's checks, before any candidate runs here
    (the run's request hands it the cell); its public key is read back from this request's reply."""
    global _last_json
    payload = json.loads(payload_json)
    try:
        key = judge.arm(payload.get("checks", []), ahead=payload.get("ahead") is True, ns=_namespace())
    except Exception:
        key = None  # no judge: the host counts no check as passed, and says why
    _last_json = json.dumps({"key": key})


def preprint_request() -> None:
    """The effect's prints of the values loaded, taken in a request of their own after the load (a
    prepared kernel's, while the model thinks) rather than in the run (effect.preprint)."""
    with contextlib.suppress(Exception):
        effect.preprint(_namespace(), _loaded_names)


_loaded_names: list[str] = []  # the names the snapshot parts loaded so far


def _start_judge() -> bool:
    try:
        judge.start(_namespace())
    except Exception:
        return False  # no judge: the host counts no check as passed, and says why
    return True


def load_request(path: str) -> None:
    """Load a snapshot file into the kernel's namespace (see snapshot.py)."""
    global _last_json, _user_names
    from jupyter_fixloop.kernel.snapshot import load_into

    try:
        report = load_into(_namespace(), path)
        _user_names = report.pop("available", [])
        _loaded_names.extend(report.get("loaded", []))
        report["judge"] = _start_judge()  # while the model thinks; a later part forks a new one
        value_trace.prefork(_namespace())  # the state the run will start from (trace.py), forked now too
    except BaseException as exc:
        report = {"loaded": [], "failed": {"*": f"{type(exc).__name__}: {exc}"[:300]}}
    _last_json = json.dumps(report, default=str)


def last_json() -> str:
    return _last_json


def _namespace() -> dict:
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return shell.user_ns
    return sys.modules["__main__"].__dict__


def _transform(source: str) -> str:
    """IPython syntax (`%magic`, `!cmd`) becomes Python, keeping line numbers (ipysyntax.ran)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            return ipysyntax.ran(source, shell)
    except Exception:
        pass
    return source


# ---------------------------------------------------------------- running a candidate


def run(source: str, checks: list[str], ns: dict | None = None, following: dict | None = None,
        judged: bool = True) -> dict:
    """Run `source` in the kernel's namespace (or `ns`), then the checks, then the following cells
    (`{"cells": [source, ...], "after_error": bool}`); describe what happened and its effect. With
    `judged` and a judge started, the judge's signed verdict on the checks is in "verdict"."""
    return _drive(_run(source, checks, ns, allow_await=False, following=following, judged=judged))


def _drive(coro):
    """The value of a coroutine that never waits (`_run` without top-level await)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a cell without top-level await waited")


async def _run(source: str, checks: list[str], ns: dict | None, allow_await: bool,
               following: dict | None = None, judged: bool = True) -> dict:
    if checks and judged:
        judge.give_cell(source)  # before any of it runs
    ns = _namespace() if ns is None else ns
    linecache.cache[CELL_FILE] = (len(source), None, source.splitlines(True), CELL_FILE)
    out, err = io.StringIO(), io.StringIO()
    result: dict = {"status": "ok", "error": None, "value": None, "checks": []}
    started, wall = time.perf_counter(), time.time()
    cwd_before = _listdir_safe(os.getcwd())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            tree = None
            names, before = [], {}
            _shown[:] = [None, None, None]
            _printed[:] = ["", 0]
            ns[selected.SHOWN] = None  # what this run shows (none yet), for the checks read from an instruction
            twin = None  # a fork holding the state the cell saw, to trace a wrong output in (trace.py)
            try:
                python = _transform(source)
                tree = _tree(python)
                names, before = _effect_before(tree, ns)
                twin = value_trace.before(python, checks, allow_await, ns)
                result["value"] = await _exec_cell(tree, ns, allow_await)
                _assigned_shown(tree, ns)
                result["shown"], result["full_repr"], result["digest"] = _shown
                result["printed"] = list(_printed)
            except BaseException as exc:
                result["status"] = "error"
                result["error"] = describe_error(exc, ns, tree)
            result["effect"] = _effect_after(before, ns, names)
            if result["status"] == "ok" and checks and judged and judge.armed():
                result["verdict"], raised = judge.verdict(ns, effect.kept())
                result["checks"] = _judged_checks(result["verdict"], checks, result, ns, raised)
            elif result["status"] == "ok":
                result["checks"] = [_run_check(expr, ns, result, source) for expr in checks]
            if twin is not None:
                result["trace"] = value_trace.after(twin, result)
            result["matches"] = _matched(tree, ns)
            judge.stop()  # a judge is for one run
    following = following or {}
    if following.get("cells") and (result["status"] == "ok" or following.get("after_error")):
        result["following"] = await _run_following(following["cells"], ns, allow_await, following.get("timeout"),
                                                    following.get("budget"), following.get("required") or 0)
    result["seconds"] = time.perf_counter() - started
    result["stdout"] = out.getvalue()[-MAX_STREAM_CHARS:]
    result["stderr"] = err.getvalue()[-MAX_STREAM_CHARS:]
    result["warnings"] = _describe_warnings(caught)
    result["new_files"] = sorted(_listdir_safe(os.getcwd()) - cwd_before) + limits.written_outside(wall - 1)
    return result


async def _exec_cell(tree: ast.Module, ns: dict, allow_await: bool = False, filename: str = CELL_FILE) -> str | None:
    """Execute like a notebook cell: statements, then the value of a trailing expression; with
    `allow_await`, top-level `await` works as in IPython."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if allow_await else 0
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):  # the tree is shared (ipysyntax.parsed): not changed
        last = ast.Expression(tree.body[-1].value)
        tree = ast.Module(body=tree.body[:-1], type_ignores=tree.type_ignores)
    await _maybe_await(compile(tree, filename, "exec", flags=flags), ns)
    if last is None:
        return None
    call = _print_call(last.body) if filename == CELL_FILE else None
    if call is not None:
        return await _exec_print(call, ns, flags, filename)
    value = await _maybe_await(compile(last, filename, "eval", flags=flags), ns)
    if value is None:
        return None
    ns["_"] = value
    if filename == CELL_FILE:
        ns[selected.SHOWN] = value
        _shown[:] = [_plain_text(value), _full_repr(value), effect.digest(value)]
    return _short_repr(value, limit=2000)


def _assigned_shown(tree: ast.Module, ns: dict) -> None:
    """A cell that shows and prints no value but whose last line assigns one name (`rows = df[df.age.isna()]`):
    that name's value is the result the checks read from an instruction judge (`selected.SHOWN`), as the loop
    would show it (a REPL's `rows`); two spellings of one selection, shown or assigned, are judged alike."""
    if ns.get(selected.SHOWN) is not None or not tree.body:
        return
    last = tree.body[-1]
    targets = (last.targets if isinstance(last, ast.Assign) else [last.target]
               if isinstance(last, (ast.AnnAssign, ast.AugAssign)) else [])
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        ns[selected.SHOWN] = ns.get(targets[0].id)


_shown: list = [None, None, None]  # the text/plain Jupyter would show for the cell's value, its _full_repr, its digest
# a cell whose last line prints or displays one value (`print(df)`, `display(df)`): that value's digest, and the
# characters its print wrote at the end of the output (0 for display): the result it shows is that value
_printed: list = ["", 0]
SHOWN_BY = ("print", "display")


def _print_call(node: ast.expr) -> ast.Call | None:
    """`print(x)` or `display(x)`: one positional argument, no keywords; None for any other expression."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SHOWN_BY
            and len(node.args) == 1 and not isinstance(node.args[0], ast.Starred) and not node.keywords):
        return node
    return None


async def _exec_print(call: ast.Call, ns: dict, flags: int, filename: str) -> str | None:
    """The cell's last line `print(x)` or `display(x)`, run as written (the function, then its argument, then
    the call), keeping the digest of the value it was given: a printed frame and a shown one are one result."""
    func = await _maybe_await(compile(ast.Expression(call.func), filename, "eval", flags=flags), ns)
    arg = await _maybe_await(compile(ast.Expression(call.args[0]), filename, "eval", flags=flags), ns)
    before = _written()
    value = func(arg)
    if inspect.isawaitable(value):
        value = await value
    after = _written()
    _printed[:] = [effect.digest(arg) or "", after - before if before >= 0 and after >= before else 0]
    ns[selected.SHOWN] = arg  # the value printed, not its text
    if value is None:
        return None
    ns["_"] = value
    _shown[:] = [_plain_text(value), _full_repr(value), effect.digest(value)]
    return _short_repr(value, limit=2000)


def _written() -> int:
    """How many characters the cell's output holds so far (-1 when it cannot be told)."""
    try:
        return sys.stdout.tell()
    except Exception:
        return -1


def _plain_text(value) -> str | None:
    """What Jupyter shows as the value's text/plain (IPython's pretty printer), capped."""
    try:
        from IPython.lib.pretty import pretty

        return pretty(value, max_width=79, max_seq_length=1000)[:SHOWN_CHARS]
    except Exception:
        return None


def _full_repr(value) -> str | None:
    """A scikit-learn estimator's repr with every parameter, as scikit-learn printed it before 0.23
    (`print_changed_only=False`), to compare with a saved one; None for any other value. scikit-learn is
    not imported here: an estimator's class has loaded it already."""
    base, sklearn = sys.modules.get("sklearn.base"), sys.modules.get("sklearn")
    if base is None or sklearn is None or not isinstance(value, getattr(base, "BaseEstimator", ())):
        return None
    try:
        with sklearn.config_context(print_changed_only=False):
            return value.__repr__(N_CHAR_MAX=SHOWN_CHARS)[:SHOWN_CHARS]
    except Exception:
        return None


async def _maybe_await(code, ns: dict):
    """Evaluate `code`; a code object with top-level await evaluates to a coroutine to await."""
    value = eval(code, ns)
    if code.co_flags & inspect.CO_COROUTINE:
        value = await value
    return value


def _tree(python: str, filename: str = CELL_FILE) -> ast.Module:
    """The cell's tree, parsed once and shared by everything that reads it here (ipysyntax.parsed: read, never
    changed); a cell that is not Python raises its SyntaxError as the cell's (`filename`'s)."""
    tree = ipysyntax.parsed(python)
    return tree if tree is not None else ast.parse(python, filename)


def _matched(tree: ast.Module | None, ns: dict) -> list[str]:
    """What the cell's filters, merges and concats matched (matches.py), before a following cell changes it."""
    try:
        return matches.gather(tree, ns)
    except Exception:
        return []


def _effect_before(tree: ast.Module, ns: dict) -> tuple[list[str], dict]:
    try:
        names = effect.names_of(tree)
        return names, effect.picture(ns, names)
    except Exception:
        return [], {}


def _effect_after(before: dict, ns: dict, names: list[str]) -> dict:
    """The run's effect on the names the cell mentions; a failure to describe it is said, not raised."""
    try:
        return effect.compare(before, ns, names)
    except Exception as exc:
        return {"changes": [], "error": f"{type(exc).__name__}: {_short(exc)}"}


async def _run_following(cells: list[str], ns: dict, allow_await: bool, timeout: float | None = None,
                         budget: float | None = None, required: int = 0) -> list[dict]:
    """Run the notebook's later cells in order on the state the cell left; how each went. Each may
    run `timeout` seconds, all of them together `budget` (None: no bound) but the first `required` (a
    repair of an earlier cell must make them run: always run): the cell the budget stops and the cells
    after it have no outcome (not run to their end: neither run nor failed), nor has a cell the host
    stopped (KeyboardInterrupt: its time for them was spent). Their output and warnings are not the
    cell's, so they go elsewhere."""
    outcomes = []
    started = time.monotonic()
    for number, source in enumerate(cells, 1):
        if number == required + 1:
            started = time.monotonic()  # the budget is for the cells after the required ones
        left = None if budget is None or number <= required else budget - (time.monotonic() - started)
        if left is not None and left <= 0:
            break
        cut = left is not None and not (timeout and timeout <= left)  # the budget ends first, not the cell's time
        filename = FOLLOWING_FILE.format(number)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        with warnings.catch_warnings(record=True), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            try:
                with _deadline(left if cut else timeout):
                    await _exec_cell(_tree(_transform(source), filename), ns, allow_await, filename)
                outcomes.append({"ok": True})
            except _Deadline as exc:
                if cut:
                    break
                outcome = _following_error(exc, filename)
                outcomes.append({**outcome, "ename": "Timeout", "evalue": f"still running after {timeout:g} s"})
            except KeyboardInterrupt:
                break
            except BaseException as exc:
                outcomes.append(_following_error(exc, filename))
    return outcomes


def follow_request(payload_json: str) -> None:
    """Run the notebook's later cells (`{"cells": [...], "timeout": s, "budget": s, "required": n}`) on the
    state the run before left (`run_request` ran the cell and its checks in a request of its own, so a later cell that
    never returns cannot take the cell's result with it); read back with `last_json()`: their outcomes and
    the files they wrote."""
    _store(_drive(_follow(json.loads(payload_json), allow_await=False)))


async def afollow_request(payload_json: str) -> None:
    """`follow_request` for a notebook whose cells use top-level `await` (awaited on the kernel's loop)."""
    _store(await _follow(json.loads(payload_json), allow_await=True))


async def _follow(payload: dict, allow_await: bool) -> dict:
    wall, before = time.time(), _listdir_safe(os.getcwd())
    try:
        outcomes = await _run_following(payload.get("cells") or [], _namespace(), allow_await,
                                        payload.get("timeout"), payload.get("budget"), payload.get("required") or 0)
    except BaseException as exc:
        return _internal_error(exc)
    written = sorted(_listdir_safe(os.getcwd()) - before) + limits.written_outside(wall - 1)
    return {"following": outcomes, "new_files": written}


class _Deadline(BaseException):
    """A following cell ran past its time limit (BaseException: `except Exception` must not catch it)."""


@contextlib.contextmanager
def _deadline(seconds: float | None):
    """Interrupt the code inside after `seconds` (SIGALRM; only where the kernel runs code: its main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum, frame):
        raise _Deadline()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _following_error(exc: BaseException, filename: str) -> dict:
    lineno, line = None, None
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        lineno, line = exc.lineno, (exc.text or "").strip()
    for fs in traceback.extract_tb(exc.__traceback__):
        if fs.filename == filename:
            lineno, line = fs.lineno, (fs.line or "").strip()
    return {"ok": False, "ename": type(exc).__name__, "evalue": _short(exc, 300), "lineno": lineno, "line": line}


def _listdir_safe(path: str) -> set[str]:
    try:
        return set(os.listdir(path))
    except OSError:
        return set()


def _describe_warnings(caught) -> list[dict]:
    seen, described = set(), []
    for w in caught:
        key = (w.category.__name__, str(w.message), w.filename, w.lineno)
        if key in seen:
            continue
        seen.add(key)
        described.append(
            {
                "category": w.category.__name__,
                "base": _warning_base(w.category),
                "message": str(w.message)[:300],
                "lineno": w.lineno if w.filename == CELL_FILE else None,
                "user": w.filename == CELL_FILE,
            }
        )
    return described[:10]


def _warning_base(category) -> str:
    """The standard warning a library's own class derives from (pandas' Pandas4Warning is a DeprecationWarning)."""
    for base in (DeprecationWarning, FutureWarning, PendingDeprecationWarning, RuntimeWarning, UserWarning):
        if issubclass(category, base):
            return base.__name__
    return "Warning"


# ---------------------------------------------------------------- checks


def _run_check(expr: str, ns: dict, result: dict, cell: str = "") -> dict:
    """A check that raises inside the cell's code is reported as that exception, with its user line."""
    try:
        return evaluate_check(expr, ns, raise_errors=True, cell=cell)
    except BaseException as exc:
        if result["error"] is None:
            result["status"] = "error"
            result["error"] = describe_error(exc, ns, None)
            result["error"]["during_check"] = getattr(exc, "check_line", None) or expr
        return {"expr": expr, "passed": False, "detail": f"raised {type(exc).__name__}: {_short(exc)}"}


def _judged_checks(verdict: dict, checks: list[str], result: dict, ns: dict, raised: list) -> list[dict]:
    """The checks as the judge evaluated them (each once, there; never again here). A check that
    raised is reported as that exception, as `_run_check` does: the one the cell's code raised
    answering the judge (with its lines), else one of the builtin type the judge named."""
    try:
        outcomes = json.loads(verdict["text"])["checks"]
    except Exception:
        why = verdict.get("error") or "its verdict could not be read"
        return [{"expr": c, "passed": False, "detail": f"not judged: {why}"} for c in checks]
    out = []
    for outcome in outcomes:
        expr, detail = outcome.get("expr"), str(outcome.get("detail", ""))
        if not outcome.get("passed") and outcome.get("raised") and result["error"] is None:
            ename, evalue = str(outcome["raised"]), str(outcome.get("message", ""))  # which exception: data
            exc = next((e for e in reversed(raised) if type(e).__name__ == ename), None)
            if exc is None:
                kind = getattr(builtins, ename, None)
                exc = kind(evalue) if isinstance(kind, type) and issubclass(kind, Exception) else None
            if exc is not None:
                result["status"] = "error"
                result["error"] = describe_error(exc, ns, None)
                result["error"]["during_check"] = expr
        failing = {"failing": str(outcome["failing"])} if outcome.get("failing") else {}  # a block's failing assert
        out.append({"expr": expr, "passed": outcome.get("passed") is True, "detail": detail, **failing})
    return out


def evaluate_check(expr: str, ns: dict, raise_errors: bool = False, cell: str = "") -> dict:
    """Evaluate one check (an expression, or a block of asserts); on failure say the values that
    decided it (`fib(6) returned 13, expected 8`) and the cell lines that produced them."""
    return _evaluate_check(expr, ns, raise_errors=raise_errors, cell=cell)


# ---------------------------------------------------------------- describing an error


def describe_error(exc: BaseException, ns: dict, tree) -> dict:
    chain = _chain(exc)
    root = chain[-1]
    frames = [] if _is_cell_syntax_error(exc) else _frames(exc)
    user = [f for f in frames if f["user"]]
    info: dict = {
        "ename": type(exc).__name__,
        "evalue": _short(exc, MAX_MESSAGE),
        "frames": collapse_frames(frames),
        "chain": [_link(e) for e in chain[1:]],
        "lineno": user[-1]["lineno"] if user else None,
        "line": user[-1]["line"] if user else None,
        "context": [],
        "check": None,
    }
    if _is_cell_syntax_error(exc):
        info["lineno"], info["line"] = exc.lineno, (exc.text or "").strip()
        info["offset"] = exc.offset
        info["evalue"] = exc.msg
    if isinstance(exc, AssertionError) and tree is not None and user and user[-1]["name"] == "<module>":
        info["check"] = _failed_assert(tree, user[-1]["lineno"], ns)
    try:  # the root cause's own frame when it has one in the cell (pandas re-raises from library code)
        frame = _failing_frame(root) or _failing_frame(exc)
        info["context"] = gather(root, ns, frame, _user_names, outer=exc)
    except Exception as ctx_exc:  # context is a bonus; never let it hide the error
        info["context"] = [f"(context unavailable: {type(ctx_exc).__name__})"]
    return info


def _is_cell_syntax_error(exc: BaseException) -> bool:
    return isinstance(exc, SyntaxError) and exc.filename == CELL_FILE


def _link(exc: BaseException) -> dict:
    """One exception of a chain, with the cell line that raised it (the root cause's line matters most)."""
    user = [f for f in _frames(exc) if f["user"]]
    return {
        "ename": type(exc).__name__,
        "evalue": _short(exc, 300),
        "lineno": user[-1]["lineno"] if user else None,
        "line": user[-1]["line"] if user else None,
    }


def _chain(exc: BaseException) -> list[BaseException]:
    chain, seen = [exc], {id(exc)}
    while True:
        cur = chain[-1]
        nxt = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
        if nxt is None or id(nxt) in seen:
            return chain
        seen.add(id(nxt))
        chain.append(nxt)


def _frames(exc: BaseException) -> list[dict]:
    ours = {os.path.abspath(__file__), os.path.abspath(facts.__file__), os.path.abspath(checks.__file__)}
    frames = []
    for fs in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(fs.filename) in ours:
            continue
        frames.append(
            {
                "file": fs.filename,
                "lineno": fs.lineno,
                "name": fs.name,
                "line": (fs.line or "").strip(),
                "user": fs.filename == CELL_FILE,
            }
        )
    return frames


def collapse_frames(frames: list[dict]) -> list[dict]:
    """Recursion becomes one block with a count: `f -> f -> f` is `f` with "repeat": 3.

    A block of up to MAX_BLOCK frames (mutual recursion) repeated is kept once; its first frame
    carries "repeat" (how many times) and "block" (how many frames it has).
    """
    out, i = [], 0
    key = [(f["file"], f["lineno"], f["name"]) for f in frames]
    while i < len(frames):
        best_size, best_count = 1, 1
        for size in range(1, MAX_BLOCK + 1):
            count = 1
            while key[i : i + size] == key[i + count * size : i + (count + 1) * size]:
                count += 1
            if count > 1 and count * size > best_count * best_size:
                best_size, best_count = size, count
        block = [dict(f) for f in frames[i : i + best_size]]
        if best_count > 1:
            block[0]["repeat"], block[0]["block"] = best_count, best_size
        out += block
        i += best_size * best_count
    return out


def _failing_frame(exc: BaseException):
    """The innermost frame that belongs to the cell (its locals tell the model the most)."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CELL_FILE:
            found = tb.tb_frame
        tb = tb.tb_next
    return found


def _failed_assert(tree: ast.Module, lineno: int, ns: dict) -> dict | None:
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Assert) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            expr = ast.unparse(node.test)
            try:
                _, detail = assess(node.test, ns)
            except BaseException as exc:
                detail = f"raised {type(exc).__name__}: {_short(exc)}"
            return {"expr": expr, "passed": False, "detail": detail}
    return None


# ---------------------------------------------------------------- short, honest reprs


def _short(exc: BaseException, limit: int = MAX_REPR) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_repr(value, limit: int = MAX_REPR) -> str:
    return short_repr(value, limit)

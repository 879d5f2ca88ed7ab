"""The loop: run the cell, and while it fails, ask the model, run the candidate, read the receipt.

Every candidate runs in a fresh sandbox kernel loaded with the same snapshot, together with every
check (so a check that passed before and fails now is a regression, and counts as a failure).
The loop stops when all checks pass or at the first bound it reaches: rounds, tokens, cost, time.
"""

from __future__ import annotations

import ast
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import replace

from . import confine, engine, guard, runtime
from . import snapshot as snapshots
from .config import resolve_model
from .errors import FixloopError, ModelError, UsageError
from .receipt import DEFAULT_BUDGET, Receipt
from .result import LoopResult, Round
from .sandbox import SandboxPool, SandboxSettings
from .snapshot import Snapshot

Event = Callable[[str, dict], None]

_pools: dict[SandboxSettings, SandboxPool] = {}


def fix(source: str, **kwargs) -> LoopResult:
    """Run `source` in a sandbox kernel and repair it until its checks pass.

    Keyword arguments: checks, instruction, namespace, model, max_rounds, timeout, max_tokens,
    budget, wall_time, hint, api_base, settings, pool_size, pool_idle (seconds without a loop
    after which the idle sandbox kernels are closed; 0 keeps them), on_event, snapshot_size_cap,
    expect_output (what the cell must print), receipt_tokens (token budget of one receipt).
    Safe to call from inside a running event loop (a notebook).
    """
    return runtime.run_sync(run_loop(source, **kwargs))


async def afix(source: str, **kwargs) -> LoopResult:
    """Async twin of `fix`."""
    return await runtime.run_here(run_loop(source, **kwargs))


def pool_for(settings: SandboxSettings, size: int = 2) -> SandboxPool:
    """The warm pool for these settings (kept across loops; closed at exit). Call on the runtime loop."""
    pool = _pools.get(settings)
    if pool is None:
        pool = _pools[settings] = SandboxPool(settings, size)
        runtime.on_shutdown(pool.close)
    pool.size = size
    pool.wake()
    return pool


async def close_pools() -> None:
    pools = list(_pools.values())
    _pools.clear()
    for pool in pools:
        await pool.close()


async def run_loop(
    source: str,
    *,
    checks=(),
    instruction: str | None = None,
    namespace: dict | Snapshot | None = None,
    model: str | None = None,
    max_rounds: int = 4,
    timeout: float = 30.0,
    max_tokens: int | None = None,
    budget: float | None = None,
    wall_time: float | None = None,
    hint: str | None = None,
    api_base: str | None = None,
    settings: SandboxSettings | None = None,
    pool_size: int = 2,
    pool_idle: float = 900.0,
    on_event: Event | None = None,
    snapshot_size_cap: int = snapshots.DEFAULT_SIZE_CAP,
    expect_output: str | None = None,
    receipt_tokens: int = DEFAULT_BUDGET,
) -> LoopResult:
    checks = _validate(source, checks, instruction, max_rounds, timeout)
    model = resolve_model(model)
    started = time.perf_counter()
    emit = _emitter(on_event)
    settings = settings or SandboxSettings()
    pool = pool_for(settings, pool_size)
    workdir = tempfile.mkdtemp(prefix="fixloop-loop-")
    mirror = _Mirror(namespace, workdir, snapshot_size_cap)
    options = dict(expect_output=expect_output, budget=receipt_tokens)  # how receipts are made
    base = dict(source=source, model=model, checks=checks, instruction=instruction, max_rounds=max_rounds,
                loop_id=uuid.uuid4().hex[:12], notes=(confine.describe(settings.confinement),))
    rounds: list[Round] = []
    first: Receipt | None = None
    try:
        snap = mirror.for_code(source, checks)
        history: list[tuple[str, Receipt]] = []
        if not instruction:
            emit("running", round=0, max_rounds=max_rounds)
            first = await _run(pool, snap, source, checks, _capped(timeout, started, wall_time), options)
            emit("receipt", round=0, receipt=first)
            if first.ok:
                return _result("passed", base, None, rounds, first, started, "the cell already passes its checks")
            history.append((source, first))
        guard_ = guard.Guard(source, checks, expect_output)
        passed_before: dict[str, int] = {c.expr: 0 for c in (first.checks if first else ()) if c.passed}
        for index in range(1, max_rounds + 1):
            bound = _bound_reached(rounds, max_tokens, budget, wall_time, started)
            if bound:
                return _result("gave_up", base, None, rounds, first, started, bound)
            emit("asking", round=index, max_rounds=max_rounds)
            messages = engine.build_messages(source, instruction=instruction, checks=checks, history=history, hint=hint)
            try:
                reply = await _propose(messages, model, max(30.0, timeout), api_base, started, wall_time)
            except ModelError as exc:
                return _result("error", base, None, rounds, first, started, str(exc))
            except asyncio.TimeoutError:
                return _result("gave_up", base, None, rounds, first, started,
                               f"time bound reached ({wall_time:g} s) while waiting for the model")
            if _repeats(reply, rounds):
                return _result("gave_up", base, None, rounds, first, started,
                               "the model repeated its previous answer; a hint (--hint) or another model may help")
            tried = _tried_before(reply.code, rounds, source, first)
            if reply.code is None:
                receipt = _no_code(reply.text)
            elif tried is not None:
                label, earlier = tried
                receipt = replace(earlier, text=f"(same code as {label}, not run again)\n{earlier.text}")
            else:
                rejection = guard_.check(reply.code, history[-1][1] if history else None)
                if rejection:
                    receipt = rejection
                else:
                    emit("running", round=index, max_rounds=max_rounds)
                    run_snap = mirror.for_code(reply.code, checks)
                    receipt = await _run(pool, run_snap, reply.code, checks, _capped(timeout, started, wall_time), options)
                    receipt = _mark_regressions(receipt, passed_before, index)
            usage = replace(reply.usage, run_seconds=receipt.seconds)
            rounds.append(Round(index=index, candidate=reply.code, receipt=receipt, usage=usage, reply=reply.text))
            emit("receipt", round=index, receipt=receipt, usage=usage)
            if receipt.ok:
                return _result("fixed", base, reply.code, rounds, first, started, f"all checks pass after {index} round(s)")
            if reply.code is None and model == engine.BUILTIN:  # deterministic: asking again gets the same
                return _result("gave_up", base, None, rounds, first, started,
                               f"{reply.text.strip().rstrip('.')}; a model (--model, FixLoop.model) may fix it")
            for c in receipt.checks:
                if c.passed:
                    passed_before.setdefault(c.expr, index)
            if reply.code is not None:
                history.append((reply.code, receipt))
            elif history:  # keep the last real run in front of the model, and say what went wrong
                code, last = history[-1]
                history[-1] = (code, replace(last, text=last.text + "\nYour previous reply had no ```python block."))
        return _result("gave_up", base, None, rounds, first, started, f"max rounds ({max_rounds}) reached")
    except FixloopError as exc:
        return _result("error", base, None, rounds, first, started, str(exc))
    finally:
        pool.drop_prepared()  # its snapshot belongs to this loop
        pool.rest_after(pool_idle)
        mirror.cleanup()
        emit("done")


async def _run(pool: SandboxPool, snap: Snapshot, code: str, checks: tuple[str, ...], timeout: float,
               options: dict | None = None) -> Receipt:
    """One run in a fresh kernel; the next kernel is made ready while this result goes to the model."""
    box = await pool.acquire(snap)
    pool.prepare(snap)
    try:
        return await box.run(code, list(checks), timeout, notes=snap.notes(), **(options or {}))
    finally:
        pool.discard(box)


def _validate(source, checks, instruction, max_rounds, timeout) -> tuple[str, ...]:
    if not isinstance(source, str):
        raise UsageError(f"source must be a string of Python code, not {type(source).__name__}")
    if isinstance(checks, str):
        checks = (checks,)
    checks = tuple(c.strip() for c in checks if c and c.strip())
    for check in checks:
        try:
            ast.parse(check, mode="eval")
        except SyntaxError as exc:
            raise UsageError(f"--expect {check!r} is not a Python expression ({exc.msg}); quote it as one expression") from None
    if not source.strip() and not instruction:
        raise UsageError("nothing to run: the cell is empty; write code, or an instruction for the model")
    if max_rounds < 0:
        raise UsageError("max_rounds must be 0 or more")
    if timeout <= 0:
        raise UsageError("timeout must be a positive number of seconds")
    return checks


def _capped(limit: float, started: float, wall_time: float | None) -> float:
    """A per-call time limit that does not run past the loop's total time bound."""
    if not wall_time:
        return limit
    return max(0.5, min(limit, wall_time - (time.perf_counter() - started)))


async def _propose(messages, model, timeout, api_base, started, wall_time):
    """The model call, retries included, cut off at the loop's total time bound."""
    call = engine.propose(messages, model, timeout=timeout, api_base=api_base)
    if not wall_time:
        return await call
    return await asyncio.wait_for(call, _capped(wall_time, started, wall_time))


def _bound_reached(rounds, max_tokens, budget, wall_time, started) -> str:
    tokens = sum(r.usage.tokens for r in rounds)
    cost = sum(r.usage.cost for r in rounds)
    if max_tokens and tokens >= max_tokens:
        return f"token bound reached ({tokens} of {max_tokens})"
    if budget and cost >= budget:
        return f"budget reached (${cost:.4f} of ${budget:.4f})"
    if wall_time and time.perf_counter() - started >= wall_time:
        return f"time bound reached ({wall_time:g} s)"
    return ""


def _mark_regressions(receipt: Receipt, passed_before: dict[str, int], index: int) -> Receipt:
    regressed = [c for c in receipt.checks if not c.passed and c.expr in passed_before]
    if not regressed:
        return receipt
    lines = [f"Regression: {c.expr} passed in round {passed_before[c.expr]} and fails now" for c in regressed]
    return replace(receipt, text=receipt.text + "\n" + "\n".join(lines))


def _repeats(reply, rounds: list[Round]) -> bool:
    return bool(rounds) and reply.text.strip() == rounds[-1].reply.strip()


def _tried_before(code, rounds: list[Round], source: str, first: Receipt | None):
    """(label, receipt) of an earlier run of exactly this code: it is not run again."""
    if code is None:
        return None
    if first is not None and code.strip() == source.strip():
        return "the original cell", first
    for r in rounds:
        if r.candidate is not None and r.candidate.strip() == code.strip():
            return f"round {r.index}", r.receipt
    return None


def _no_code(text: str) -> Receipt:
    from .receipt import no_code

    return no_code(text)


def _result(status, base, patched, rounds, first, started, reason) -> LoopResult:
    return LoopResult(status=status, patched=patched, rounds=list(rounds), first=first, reason=reason,
                      seconds=time.perf_counter() - started, **base)


def _emitter(on_event: Event | None):
    def emit(kind: str, **info):
        if on_event is None:
            return
        try:
            on_event(kind, info)
        except Exception:
            pass  # a display callback must never break the loop

    return emit


class _Mirror:
    """Snapshots of the user's namespace: one for the cell, and when a candidate reads names the
    cell did not, one more part holding only those (the values already written are not written
    again). Every part is taken from the namespace as it is: the user's kernel is blocked on the
    magic for the whole loop, so all parts show the state at the moment the magic ran."""

    def __init__(self, namespace, workdir: str, size_cap: int):
        self.ns = namespace
        self.workdir = workdir
        self.size_cap = size_cap
        self.current: Snapshot = snapshots.EMPTY
        self.names: frozenset[str] = frozenset()
        self.count = 0

    def for_code(self, code: str, checks: tuple[str, ...]) -> Snapshot:
        if isinstance(self.ns, Snapshot):
            return self.ns
        if not isinstance(self.ns, dict):
            return snapshots.EMPTY
        wanted = snapshots.free_names(code)
        for check in checks:
            wanted |= snapshots.free_names(check)
        new = frozenset(n for n in wanted if n in self.ns) - self.names
        if not new and self.count:
            return self.current
        self.count += 1
        path = os.path.join(self.workdir, f"snapshot-{self.count}.bin")
        self.current = snapshots.write_snapshot(self.ns, new, path, self.size_cap, base=self.current)
        self.names |= new
        return self.current

    def cleanup(self) -> None:
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)

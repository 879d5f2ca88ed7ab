"""The warm pool: sandbox kernels started ahead of need, one pool per set of sandbox settings.

A round never waits for a kernel to start: idle kernels stay started (with the packages recent
snapshots needed already imported), and the kernel for the next candidate is loaded with the
snapshot while the model thinks. Every kernel runs one candidate and is thrown away.

On a gateway, kernels are not isolated from each other (a candidate can reach the gateway's other
kernels over its REST API and run code in them): there one kernel at a time exists. No kernel is
kept idle, and the next round's kernel starts (and loads the snapshot, while the model thinks)
only once the last round's kernel is shut down.
"""

from __future__ import annotations

import asyncio
import contextlib

from ..kernel.snapshot import Snapshot
from . import leftovers, runtime
from .gateway import GatewaySandbox
from .manager import Sandbox, SandboxSettings

_pools: dict[SandboxSettings, SandboxPool] = {}  # the most recently used last
WARM_POOLS = 2  # pools whose idle kernels stay started between loops; an older one rests at once


def pool_for(settings: SandboxSettings, size: int) -> SandboxPool:
    """The warm pool for these settings (kept across loops; closed at exit), woken for a loop that
    ends with `rest_after`. Call on the runtime loop. Settings differ by working directory, so a batch
    over many folders (or a test suite) would keep two kernels per folder for `pool_idle`: the pools
    beyond the `WARM_POOLS` most recent that no loop uses close their idle kernels now."""
    pool = _pools.pop(settings, None)
    if pool is None:
        leftovers.sweep()  # what kernels killed mid-loop left behind
        pool = SandboxPool(settings, size)
        runtime.on_shutdown(pool.close)
    _pools[settings] = pool
    pool.size = size
    pool.wake()
    for older in list(_pools.values())[:-WARM_POOLS]:
        if not older.users:
            older.rest_now()
    return pool


class SandboxPool:
    """Sandbox kernels started ahead of need, so a round never waits for a kernel to start.

    `size` kernels stay idle, with the packages recent snapshots needed already imported.
    `prepare(snapshot)` takes one of them and loads the snapshot while the model thinks; `acquire`
    hands it out (loading only the parts a later candidate added). A kernel runs one candidate and
    is discarded: a round never sees what another round did.
    """

    def __init__(self, settings: SandboxSettings, size: int):
        self.settings = settings
        self.size = max(0, size)
        self.modules: tuple[str, ...] = ()  # packages idle kernels import ahead
        self._idle: list[asyncio.Task] = []
        self._prepared: tuple[tuple[tuple[str, ...], tuple[str, ...]], asyncio.Task] | None = None
        self._tasks: set[asyncio.Task] = set()
        self._rest: asyncio.TimerHandle | None = None
        self._resting = False  # idle kernels closed for lack of use; `wake` (a new loop) ends it
        self.users = 0  # loops between `wake` and `rest_after`
        self.one_at_a_time = bool(settings.gateway_url)  # a gateway's kernels can reach each other
        self._turn = asyncio.Lock()
        self._held: Sandbox | None = None
        self._shutting: set[asyncio.Task] = set()

    def fill(self) -> None:
        if self._resting or self.one_at_a_time:  # a late refill from the last loop's work must not undo the rest
            return
        while len(self._idle) < self.size:
            self._idle.append(self._spawn(self._warm()))

    def want(self, modules) -> None:
        """Remember packages a snapshot needs; idle kernels import them now, new ones at start."""
        new = sorted(set(modules) - set(self.modules))
        if not new:
            return
        self.modules = tuple(sorted({*self.modules, *new}))
        self._idle = [self._spawn(self._then_preload(task, new)) for task in self._idle]

    async def _warm(self) -> Sandbox:
        kind = GatewaySandbox if self.settings.gateway_url else Sandbox
        box = await kind.start(self.settings)
        return await self._preloaded(box, self.modules)

    async def _then_preload(self, task: asyncio.Task, modules) -> Sandbox:
        return await self._preloaded(await task, modules)

    async def _preloaded(self, box: Sandbox, modules) -> Sandbox:
        try:
            await box.preload(modules)
        except BaseException:
            await box.close()
            raise
        return box

    async def _empty(self) -> Sandbox:
        """An idle kernel with nothing loaded (a new one if none is left or alive)."""
        while self._idle:
            task = self._idle.pop(0)
            try:
                box = await task
            except Exception:
                continue  # a kernel that failed to start is not reused; try the next / a new one
            if await box.alive():
                return box
            self.discard(box)
        return await self._warm()

    async def _ready(self, snapshot: Snapshot, checks: tuple[str, ...] = ()) -> Sandbox:
        box = await self._empty()
        self.fill()
        try:
            await box.load(snapshot)
            with contextlib.suppress(Exception):  # the run takes them itself if this did not
                await box.preprint()  # the effect's prints too, off the round's clock
            with contextlib.suppress(Exception):  # else the run sends them
                await box.arm(checks)  # the judge's checks, before any candidate runs there
        except BaseException:
            self.discard(box)
            raise
        return box

    def prepare(self, snapshot: Snapshot, checks=()) -> None:
        """Start getting a kernel ready with `snapshot` loaded (and its judge armed with `checks`, the
        loop's), for the next `acquire` (on a gateway, once the kernel in use is shut down: while a
        candidate runs, it would reach it)."""
        if not self.one_at_a_time:
            self.want(snapshot.imports)
        checks = tuple(checks)
        if self._prepared is not None and self._prepared[0] == (snapshot.files, checks):
            return
        self.drop_prepared()
        self._prepared = ((snapshot.files, checks), self._spawn(
            self._alone(snapshot, checks) if self.one_at_a_time else self._ready(snapshot, checks)))

    async def settle(self) -> None:
        """Wait until nothing is starting, loading or shutting down (what a model's thinking time
        gives a real loop; benchmarks use it so a round is not timed against background work)."""
        while any(not t.done() for t in self._tasks):
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def acquire(self, snapshot: Snapshot) -> Sandbox:
        """A kernel with `snapshot` loaded that nobody has used."""
        if not self.one_at_a_time:
            self.want(snapshot.imports)
        prepared, self._prepared = self._prepared, None
        if prepared is not None:
            (files, _), task = prepared
            if snapshot.files[:len(files)] == files:
                box = await self._take_prepared(task, snapshot)
                if box is not None:
                    return box
            else:
                self._close_when_started(task)
        return await (self._alone(snapshot) if self.one_at_a_time else self._ready(snapshot))

    async def _alone(self, snapshot: Snapshot, checks: tuple[str, ...] = ()) -> Sandbox:
        """The only kernel: started once every earlier one is shut down; it holds the turn until
        it is closed (`discard`, `_close_when_started`)."""
        await self._turn.acquire()
        try:
            await self._closing()  # the last round's kernel is gone before this one starts
            box = await self._warm()
            try:
                await box.load(snapshot)
                with contextlib.suppress(Exception):  # else the run sends the checks
                    await box.arm(checks)
            except BaseException:
                await box.close()
                raise
        except BaseException:
            self._turn.release()
            raise
        self._held = box
        return box

    async def _closing(self) -> None:
        while self._shutting:
            await asyncio.gather(*list(self._shutting), return_exceptions=True)

    def _close(self, box: Sandbox) -> None:
        """Shut `box` down in the background; on a gateway the next kernel waits for that."""
        task = self._spawn(box.close())
        self._shutting.add(task)
        task.add_done_callback(self._shutting.discard)
        if self._held is box:
            self._held = None
            self._turn.release()

    async def _take_prepared(self, task: asyncio.Task, snapshot: Snapshot) -> Sandbox | None:
        try:
            box = await task
        except Exception:
            return None
        try:
            if await box.alive():
                await box.load(snapshot)  # the parts added since it was prepared, if any
                return box
        except Exception:
            pass
        self.discard(box)
        return None

    def rest_after(self, seconds: float) -> None:
        """Close the idle kernels if no loop uses the pool for `seconds` (0: keep them): a notebook
        left open must not hold kernels and their memory for good. The next loop (`wake`) starts new ones.
        A loop ends here: with another loop still using the pool, the last one to end sets the time."""
        self.users = max(0, self.users - 1)
        self._cancel_rest()
        if seconds > 0 and not self.users:
            self._rest = asyncio.get_running_loop().call_later(seconds, self._drain)

    def rest_now(self) -> None:
        """Close the idle kernels now (a newer pool took this one's place among the warm ones)."""
        self._cancel_rest()
        if not self._resting:
            self._drain()

    def wake(self) -> None:
        """A loop starts: keep kernels warm again."""
        self.users += 1
        self._cancel_rest()
        self._resting = False
        self.fill()

    def _cancel_rest(self) -> None:
        if self._rest is not None:
            self._rest.cancel()
            self._rest = None

    def _drain(self) -> None:
        self._rest = None
        self._resting = True
        idle, self._idle = self._idle, []
        for task in idle:
            self._close_when_started(task)

    def discard(self, box: Sandbox) -> None:
        """Shut a used kernel down in the background: a used kernel is never handed out again."""
        self._close(box)

    def drop_prepared(self) -> None:
        if self._prepared is not None:
            task, self._prepared = self._prepared[1], None
            self._close_when_started(task)

    def _close_when_started(self, task: asyncio.Task) -> None:
        async def close_when_started():
            try:
                box = await task
            except BaseException:
                return
            self._close(box)

        self._spawn(close_when_started())

    def _spawn(self, coro) -> asyncio.Task:
        """A task the pool keeps a reference to until it ends (and waits for in `close`)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        """Shut every kernel down: idle, prepared, and those still closing."""
        self.size = 0
        self.drop_prepared()
        self._cancel_rest()
        self._drain()
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

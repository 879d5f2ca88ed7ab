"""One background event loop for all of fixloop's async work.

Sandbox kernels and their ZMQ sockets belong to the loop that created them. The warm pool must
outlive a single `%%fixloop` call, and the caller may already be inside a running loop (ipykernel),
so every coroutine runs on this one long-lived loop thread and sync callers wait on a future.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
_closers: list = []


def loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_loop.run_forever, name="fixloop-runtime", daemon=True)
            thread.start()
            atexit.register(_shutdown)
        return _loop


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run `coro` on the runtime loop and wait for it (safe from inside a running loop).

    An interrupt (the kernel's stop button) or a timeout cancels the work itself, not only the
    wait: a loop left running would go on calling the model and running candidates unseen."""
    future = asyncio.run_coroutine_threadsafe(coro, loop())
    try:
        return future.result(timeout)
    except BaseException:
        future.cancel()
        raise


def sync_twin(afunc):
    """A blocking twin of the coroutine function `afunc`: same signature and docstring (IPython's
    help and completion show them), same TypeError for an unknown keyword."""

    @functools.wraps(afunc)
    def twin(*args, **kwargs):
        return run_sync(afunc(*args, **kwargs))

    return twin


async def run_here(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the runtime loop from any other loop."""
    current = asyncio.get_running_loop()
    if current is loop():
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop()))


def on_shutdown(closer) -> None:
    """Register an async callable run (best effort, bounded) when the process exits."""
    _closers.append(closer)


def _shutdown() -> None:
    if _loop is None or _loop.is_closed():
        return

    async def close_all():
        for closer in reversed(_closers):
            try:
                await asyncio.wait_for(closer(), 10)
            except Exception:
                pass

    try:
        asyncio.run_coroutine_threadsafe(close_all(), _loop).result(15)
    except Exception:
        pass
    _loop.call_soon_threadsafe(_loop.stop)

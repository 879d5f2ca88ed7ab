"""A loop's progress while it runs: what its events said so far (`Progress`), and a clock that
refreshes a display every second even when no event comes (`Ticker`, the model can take a while).
Used by the live header of a `%%fixloop` cell and by the header of the widget's Retry."""

from __future__ import annotations

import contextvars
import threading
import time

from .. import render
from ..hooks import LoopEnd, LoopEvent, LoopHooks, ReceiptReady

TICK = 1.0  # seconds between refreshes of the live header's elapsed time


class Progress:
    """What the loop's hooks said so far, for a live header."""

    def __init__(self, model: str, max_rounds: int):
        self.model = model
        self.max_rounds = max_rounds
        self.started = time.perf_counter()
        self.round = 0
        self.tokens = 0
        self.cost = 0.0
        self.activity = "starting the sandbox"

    def update(self, event: LoopEvent) -> None:
        """Any of the loop's events (every hook of `LoopHooks.every(progress.update)`)."""
        self.activity = render.activity_text(event)
        if isinstance(event, LoopEnd):
            return
        self.round = max(self.round, event.round)
        self.max_rounds = event.max_rounds
        if isinstance(event, ReceiptReady) and event.usage is not None:
            self.tokens += event.usage.tokens
            self.cost += event.usage.cost

    def hooks(self, then=None) -> LoopHooks:
        """Every hook updates this progress, then calls `then()` (a redraw) unless the loop ended."""

        def on_any(event: LoopEvent) -> None:
            self.update(event)
            if then is not None and not isinstance(event, LoopEnd):
                then()

        return LoopHooks.every(on_any)

    def html(self) -> str:
        return render.header_html(status="running", rounds=self.round, max_rounds=self.max_rounds, model=self.model,
                                tokens=self.tokens, cost=self.cost, seconds=time.perf_counter() - self.started,
                                activity=self.activity)


class Ticker:
    """Calls `refresh` every TICK seconds from a thread until `stop`, so the elapsed time moves while
    the model thinks (events can be a long call apart). The thread runs in the caller's context, so
    its updates reach the caller's cell; `stop(final)` makes `final` the last update."""

    def __init__(self, refresh):
        self._refresh = refresh
        self._lock = threading.Lock()
        self._done = threading.Event()
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(self._run,), name="fixloop-ticker", daemon=True).start()

    def _run(self) -> None:
        while not self._done.wait(TICK):
            try:
                self.refresh()
            except Exception:  # the display went away (kernel shutting down): stop ticking, quietly
                return

    def refresh(self) -> None:
        with self._lock:
            if not self._done.is_set():
                self._refresh()

    def stop(self, final=None) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._done.set()
            if final is not None:
                final()

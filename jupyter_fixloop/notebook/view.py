"""How one `%%fixloop` cell shows itself, from the first event to the result, and what it records.

With a kernel, a live header (HTML, updated in place) shows the loop's progress; when the loop
ends it is emptied and the diff widget is displayed after it. Without one (plain IPython) the HTML/text display of diff.py
is shown. Either way every result is recorded in the history and announced on the comm, and its
display bundle carries the LoopSummary (`application/vnd.jupyter.fixloop+json`) so the notebook
keeps it.
"""

from __future__ import annotations

import contextvars
import html
import importlib.util
import threading
import time

from .. import diff
from .. import history as histories
from ..history import Entry
from . import comm as frontends

TICK = 1.0  # seconds between refreshes of the live header's elapsed time


class Progress:
    """What the loop's events (`on_event`) said so far, for a live header."""

    def __init__(self, model: str, max_rounds: int):
        self.model = model
        self.max_rounds = max_rounds
        self.started = time.perf_counter()
        self.round = 0
        self.tokens = 0
        self.cost = 0.0
        self.activity = "starting the sandbox"

    def update(self, kind: str, info: dict) -> None:
        self.round = max(self.round, info.get("round", 0) or 0)
        self.max_rounds = info.get("max_rounds", self.max_rounds)
        usage = info.get("usage")
        if usage is not None:
            self.tokens += usage.tokens
            self.cost += usage.cost
        self.activity = diff.activity_text(kind, info)

    def html(self) -> str:
        return diff.header_html(status="running", rounds=self.round, max_rounds=self.max_rounds, model=self.model,
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


def widgets_available(shell) -> bool:
    """Widgets need a kernel (a frontend may render them) and ipywidgets (checked without importing it)."""
    return getattr(shell, "kernel", None) is not None and importlib.util.find_spec("ipywidgets") is not None


def cell_source(shell, line: str, cell: str) -> tuple[str, str | None]:
    """The exact cell as typed and its cellId; rebuilt from line and body when the request is not this cell."""
    cell_id, code = frontends.request_cell(shell)
    if code is not None and code.startswith("%%fixloop"):
        return code, cell_id
    # called some other way (run_cell_magic from another cell): never replace that other cell
    return (f"%%fixloop {line}".rstrip() + "\n" + cell), None


def publish(entry: Entry, history, frontend) -> dict:
    """Record a finished loop and announce it on the comm; returns its LoopSummary."""
    summary = frontends.loop_summary(entry)
    history.loop(entry, summary)
    frontend.send_loop(summary)
    return summary


def bundle(entry: Entry, summary: dict) -> dict:
    """The display bundle without the widget: text, HTML and the LoopSummary."""
    return {"text/plain": diff.render_text(entry.result), "text/html": diff.render_html(entry.result),
            frontends.MIMETYPE: summary}


class LoopView:
    """One `%%fixloop` cell's display: started before the loop, finished with its result."""

    def __init__(self, shell, magics, line: str, cell: str, model: str, max_rounds: int):
        self.shell = shell
        self.magics = magics
        self.history = histories.get(shell)
        self.frontend = frontends.current()
        source, cell_id = cell_source(shell, line, cell)
        self.entry = Entry(cell_source=source, cell_id=cell_id)
        for shown in list(self.frontend.loops.values()):  # a pending loop of this cell is closed
            if cell_id and shown.entry.cell_id == cell_id:
                shown.supersede()
        self.history.start(self.entry, model)
        self.progress = Progress(model, max_rounds)
        self.handle = None
        self.ticker = None
        if widgets_available(shell):
            from IPython.display import display

            self.handle = display(self._progress_bundle(), raw=True, display_id=True)
            self.ticker = Ticker(lambda: self.handle.update(self._progress_bundle(), raw=True))

    def _progress_bundle(self) -> dict:
        text = f"fixloop: running ({self.progress.activity})"
        return {"text/plain": text, "text/html": diff.STYLE + diff.WIDGET_STYLE + '<div class="fixloop-box">'
                + self.progress.html() + "</div>"}

    def on_event(self, kind: str, info: dict) -> None:
        """The loop's `on_event`: refresh the live header (called from the loop's thread)."""
        self.progress.update(kind, info)
        if self.ticker is not None and kind != "done":
            self.ticker.refresh()

    def stopped(self, message: str) -> None:
        """The loop raised before it had a result: say so in place of the live header."""
        self.history.record("stopped", run=self.entry.run, error=message)
        if self.ticker is not None:
            self.ticker.stop(lambda: self.handle.update({
                "text/plain": f"fixloop: stopped: {message}",
                "text/html": f"<div>fixloop: stopped: {html.escape(message)}</div>"}, raw=True))

    def finish(self, result, retry=None) -> None:
        """Show the result: the widget where widgets work, else HTML and text."""
        from IPython.display import display

        self.entry.result = result
        summary = publish(self.entry, self.history, self.frontend)
        data = bundle(self.entry, summary)
        if self.handle is not None:
            from .widget import DiffWidget

            # the live header steps aside: the result is a display of its own, so the notebook saves it whole
            self.ticker.stop(lambda: self.handle.update({"text/plain": "", "text/html": ""}, raw=True))
            widget = DiffWidget(self.entry, shell=self.shell, frontend=self.frontend, history=self.history,
                                magics=self.magics, retry=retry)
            data.update(widget._repr_mimebundle_())
            data["text/plain"] = diff.render_text(result)
        display(data, raw=True)

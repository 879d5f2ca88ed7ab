"""One `%%fixloop` cell from its first event to the user's last decision: the owner of its lifecycle.

Before the loop runs, the exact cell goes to the history and a live header (HTML, updated in place)
shows the loop's progress. When the loop ends, its result is recorded in the history, announced on the
comm, and displayed with the LoopSummary (`application/vnd.jupyter.fixloop+json`) in the bundle so the
notebook keeps it: as the diff widget where a frontend can render widgets, else as HTML and text
(render.py), which is also all a headless run (nbclient, nbconvert) stores.

Then the view owns the decision. Nothing changes until Accept; Accept asks the frontend to replace
the cell (keeping the `%%fixloop` line) and runs the code in the user's kernel; Undo puts back the
exact original; Reject says that nothing changed; Retry runs the loop again; running the cell again
closes a pending loop (supersede). Without the JupyterLab extension (degraded mode) Accept shows the
code to copy and `%fixloop last` inserts it. A loop the extension's Fix button started on a plain
cell (comm.fix_request) proposes the code alone, and on Accept the frontend reruns the cell. Every
decision goes to the history and the comm. The widget's buttons and the sidebar's `decide`
(comm.py) call the same methods here; the widget only shows what it is told.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from .. import render
from ..cell import join_magic, magic_line, split_magic
from ..errors import FixloopError
from ..hooks import LoopHooks
from ..render import visible
from ..result import MIMETYPE, LoopResult
from . import comm as frontends, history as histories
from .history import Entry
from .kernelrun import AWAIT_NOTE, awaits_in_running_loop
from .progress import Progress, Ticker

Retry = Callable[[str | None, LoopHooks], LoopResult]  # (hint, hooks) -> result


def renders_widgets(shell, frontend: frontends.Frontend) -> bool:
    """Whether a frontend that can render widgets (and live displays) is attached to this cell.

    ipywidgets itself only asks whether there is a kernel, so a headless run (nbclient, nbconvert,
    papermill) would store every widget's state in the notebook for nobody. A frontend that answered
    the fixloop comm (the extension) or closed it (one without the extension: JupyterLab, Notebook)
    is a live one; while no answer has come, a request that names its cell (`cellId`, sent by
    JupyterLab and Notebook 7, never by nbclient) is from a live frontend too.
    """
    if getattr(shell, "kernel", None) is None:
        return False
    if frontend.state != "waiting":
        return True
    cell_id, _ = frontends.request_cell(shell)
    return cell_id is not None


def cell_source(shell, line: str, cell: str) -> tuple[str, str | None]:
    """The exact cell as typed and its cellId; rebuilt from line and body when the request is not this cell."""
    cell_id, code = frontends.request_cell(shell)
    if code is not None and split_magic(code)[0] is not None:
        # the Fix button's request: its `%%fixloop` line is the frontend's, the cell holds the code alone
        return (split_magic(code)[1] if frontends.fix_request(shell) else code), cell_id
    # called some other way (run_cell_magic from another cell): never replace that other cell
    return join_magic(magic_line(line), cell), None


@dataclass(frozen=True)
class PlainCell:
    """A cell without a `%%fixloop` line that raised (`%fixloop auto`, the Fix button), repaired as it ran.

    The result is displayed under the cell's traceback (auto mode) or in the Fix button's request, whose
    outputs the frontend adds to the cell (on Accept it replaces the cell and runs it, `"run": true`).
    `before_accept` puts back the state the cell started from before the accepted code runs, and
    returns what it did in words ("" for nothing); `changed_since` says what that would overwrite that
    changed after the failure outside any cell (then the first Accept asks, and only a second one does it)."""

    source: str
    cell_id: str | None
    before_accept: Callable[[], str] | None = None
    changed_since: Callable[[], str] | None = None  # what before_accept would overwrite that changed since, in words


def keep_result(ns: dict, result: LoopResult) -> None:
    """`_fixloop` holds the last loop's result, unless it holds a value of the user's own (then left alone)."""
    if isinstance(ns.get("_fixloop", result), LoopResult):
        ns["_fixloop"] = result


def bundle(result: LoopResult, summary: dict) -> dict:
    """The display bundle without the widget: text, HTML and the LoopSummary."""
    return {"text/plain": render.render_text(result), "text/html": render.render_html(result), MIMETYPE: summary}


class LoopView:
    """One `%%fixloop` cell's display and decisions: started before the loop, finished with its result."""

    def __init__(self, shell, line: str, cell: str, model: str, max_rounds: int, plain: PlainCell | None = None):
        self.shell = shell
        self.history = histories.get(shell)
        self.frontend = frontends.current()
        self.plain = plain
        source, cell_id = cell_source(shell, line, cell) if plain is None else (plain.source, plain.cell_id)
        self.entry = Entry(cell_source=source, cell_id=cell_id, plain=plain is not None)
        self.reruns = frontends.fix_request(shell)  # the Fix button's: on Accept the frontend reruns the cell
        for shown in list(self.frontend.loops.values()):  # a pending loop of this cell is closed
            if cell_id and shown.entry.cell_id == cell_id:
                shown.supersede()
        self.history.start(self.entry, model)
        self.live = renders_widgets(shell, self.frontend)
        self.progress = Progress(model, max_rounds)
        self.retry_loop: Retry | None = None
        self.busy = False
        self.overwrite = False  # the user accepted again after being told Accept would overwrite later work
        self.held = ""  # why the last Accept was held back, for the sidebar's answer
        self.state = ("pending", "")  # the state line: (state, HTML text)
        self.widget = None
        self.handle = None
        self.ticker = None
        if self.live:
            from IPython.display import display

            self.handle = display(self._progress_bundle(), raw=True, display_id=True)
            self.ticker = Ticker(lambda: self.handle.update(self._progress_bundle(), raw=True))

    @property
    def result(self) -> LoopResult | None:
        return self.entry.result

    # ------------------------------------------------------------------ while the loop runs

    def _progress_bundle(self) -> dict:
        text = f"fixloop: running ({self.progress.activity})"
        return {"text/plain": text, "text/html": render.STYLE + render.WIDGET_STYLE + '<div class="fixloop-box">'
                + self.progress.html() + "</div>"}

    def hooks(self) -> LoopHooks:
        """The loop's hooks: each refreshes the live header (called from the loop's thread)."""
        return self.progress.hooks(then=self.ticker.refresh if self.ticker is not None else None)

    def stopped(self, message: str, refused: bool = False) -> None:
        """The loop raised before it had a result: say so in place of the live header. `refused`: the
        request itself was (a bad --expect): no loop ran, and the history does not list one."""
        self.history.record("refused" if refused else "stopped", run=self.entry.run, error=message)
        if self.ticker is not None:
            self.ticker.stop(lambda: self.handle.update({
                "text/plain": visible(f"fixloop: stopped: {message}"),
                "text/html": f"<div>fixloop: stopped: {render.escaped(message)}</div>"}, raw=True))

    def finish(self, result: LoopResult, retry: Retry | None = None) -> None:
        """Record and announce the result, then show it: the widget where widgets render, else HTML and text."""
        from IPython.display import display

        self.retry_loop = retry
        self.entry.result = result
        data = bundle(result, self._publish())
        if self.live:
            from .widget import DiffWidget

            # the live header steps aside: the result is a display of its own, so the notebook saves it whole
            self.ticker.stop(lambda: self.handle.update({"text/plain": "", "text/html": ""}, raw=True))
            self.widget = DiffWidget(on_decide=self.decide, on_retry=self.retry)
            self.frontend.watchers.append(self._show_mode)
        self._show_result()
        if self.widget is not None:
            data.update(self.widget._repr_mimebundle_())
            data["text/plain"] = render.render_text(result)
        display(data, raw=True)

    def finish_brief(self, result: LoopResult, text: str) -> None:
        """A loop with nothing to decide, said in one line in place of the result (auto mode: under a
        traceback, a long "gave up" would repeat it); recorded and announced like any other."""
        from IPython.display import display

        self.entry.result = result
        summary = self._publish()
        if self.live:
            self.ticker.stop(lambda: self.handle.update({"text/plain": "", "text/html": ""}, raw=True))
        display({"text/plain": visible(text), "text/html": f"<div>{render.escaped(text)}</div>", MIMETYPE: summary},
                raw=True)

    def _publish(self) -> dict:
        """Record the finished loop in the history and announce it on the comm; returns its LoopSummary."""
        summary = self.entry.summary()
        self.history.loop(self.entry, summary)
        self.frontend.send_loop(summary)
        return summary

    # ------------------------------------------------------------------ what the widget shows

    def _show_result(self) -> None:
        """The loop shown now: the one the sidebar's `decide` reaches, drawn in the widget."""
        self.frontend.loops[self.entry.loop_id] = self
        if self.widget is None:
            return
        review = (self.entry.body, self.entry.accepted_body()) if self.result.patched is not None else None
        self.widget.show_result(self.result, review)
        self._show_mode()
        self._say("pending" if self._decidable() else "done", self._pending_text())
        self._sync_buttons()

    def _show_mode(self) -> None:
        if self.widget is None:
            return
        text = self.frontend.describe()
        if self.frontend.connected and self.reruns:
            text = text.replace("in place.", "in place and runs it.")
        if self.frontend.connected and not self.entry.cell_id:
            text = ("This cell was not run with a cell id, so it cannot be replaced in place: Accept shows the code "
                    "to copy.")
        self.widget.show_mode(text)

    def _say(self, state: str, text: str) -> None:
        self.state = (state, text)
        if self.widget is not None:
            self.widget.show_state(state, text)

    def _say_more(self, text: str) -> None:
        """A line added to the state shown now."""
        state, shown = self.state
        self._say(state, shown + text)

    def _show_code(self, code: str | None) -> None:
        if self.widget is not None:
            self.widget.show_code(code)

    def _pending_text(self) -> str:
        if self.result.status == "passed" and not self.result.unchecked:
            return "The cell already passes its checks; there is nothing to decide."
        if self.result.status == "passed":
            return "The cell already runs without error and nothing checked it; there is nothing to decide."
        if self.result.patched is None:
            return "No verified fix. Your cell is unchanged. Retry (with a hint) or edit the cell."
        return "<b>Pending</b>: nothing has changed in your cell yet. Accept, Reject or Retry."

    def _decidable(self) -> bool:
        return self.result.patched is not None and self.result.status != "passed"

    def _sync_buttons(self) -> None:
        if self.widget is None:
            return
        decision = self.entry.decision
        fixable = self._decidable() and not self.busy
        retry = not (self.busy or self.retry_loop is None or decision == "accepted" or self.result.status == "passed")
        self.widget.show_buttons(accept=fixable and decision != "accepted",
                                 reject=fixable and decision not in ("accepted", "rejected"),
                                 undo=not self.busy and decision == "accepted", retry=retry,
                                 pick=fixable and decision == "pending" and self.result.picked_rival() is not None)

    # ------------------------------------------------------------------ deciding

    def decide(self, word: str, via: str = "button") -> None:
        """Accept, reject or undo; the same path for a button and for the sidebar's `decide`."""
        action = {"accept": self.accept, "reject": self.reject, "undo": self.undo, "pick": self.pick}[word]
        before = self.entry.decision
        action(via)
        self._sync_buttons()
        held, self.held = self.held, ""
        if via == "sidebar" and self.entry.decision == before:
            # nothing done (already decided, no fix, or held back to ask): tell the sidebar where things stand
            known = before if before in ("accepted", "rejected", "undone") else "pending" if held else "unknown"
            self.frontend.send({"action": "decision", "loop_id": self.entry.loop_id, "decision": known,
                                "error": held or (None if known != "unknown" else f"cannot {word} this loop")})

    def pick(self, via: str = "button") -> None:
        """Independent answers differed: the next result is handed over instead (still unverified; nothing is
        decided yet), recorded and announced as the loop's result, and shown."""
        picked = self.result.picked_rival() if self.entry.decision == "pending" and not self.busy else None
        if picked is None:
            return
        self.entry.result = picked
        self._publish()
        self._show_result()

    def supersede(self) -> None:
        """The same cell ran again: close this loop as rejected, so no decision is left pending
        (its original and patch stay in `%fixloop history`)."""
        if self.entry.decision != "pending" or self.busy or self.result is None or self.result.status == "passed":
            return
        self._record("rejected", "rerun")
        self._say("rejected", "<b>Closed</b>: the cell ran again. This loop stays in <code>%fixloop history</code>.")
        self._sync_buttons()

    def _record(self, decision: str, via: str, **extra) -> None:
        self.entry.decision = decision
        self.history.decision(self.entry, decision, via=via, mode=self.frontend.mode, **extra)
        self.frontend.send_decision(self.entry.loop_id, decision, via)

    def accept(self, via: str = "button") -> None:
        if not self._decidable() or self.busy:
            self._say("done", "There is no verified fix to accept.")
            return
        if self.entry.decision == "accepted" or self._held_back():
            return
        code = self.result.patched
        self._record("accepted", via)
        restored = self.plain.before_accept() if self.plain is not None and self.plain.before_accept else ""
        if self.frontend.replace(self.entry.cell_id, self.entry.accepted_source(), self.entry.summary(), "accepted",
                                 self._on_replaced, expected=self.entry.cell_source, run=self.reruns):
            self._say("accepted", "<b>Accepted</b>: replacing the cell in the notebook…")
            if self.reruns:
                return  # the frontend runs the cell once it holds the code
        else:
            self._degraded_accept(code, "")
        if restored:
            self._say_more(f"<div>{render.escaped(restored)}</div>")
        self._run_accepted(code)

    def _held_back(self) -> bool:
        """Accept would put back the state the cell started from over work done since it failed outside any
        cell: this Accept only asks (nothing changes); the next one puts the state back."""
        check = self.plain.changed_since if self.plain is not None else None
        words = "" if check is None or self.overwrite else check()
        if not words:
            return False
        self.overwrite = True
        self.held = (f"Not accepted yet: {words}. Accepting puts back the state the cell started from, which would "
                     "lose that change. Accept again to put it back anyway, or Reject and run the fixed code "
                     "yourself on the kernel as it is now.")
        self._say("pending", f"<b>{render.escaped(self.held)}</b>")
        return True

    def _degraded_accept(self, code: str, why: str) -> None:
        self._say("accepted", f"<b>Accepted</b>{render.escaped(why)}. Your cell was not changed here: copy the code "
                  "below into it, or run <code>%fixloop last</code> to insert it as a new cell.")
        self._show_code(code)

    def _on_replaced(self, data: dict) -> None:
        undone = self.entry.decision == "undone"
        if data.get("ok"):
            if undone:
                self._say("undone", "<b>Undone</b>: your original cell is back, exactly as you typed it.")
            elif self.reruns:
                self._say("accepted", "<b>Accepted</b>: the cell now holds the fixed code and runs again. "
                          "Undo (in the Fixloop sidebar) puts back your original.")
            else:
                self._say("accepted", "<b>Accepted</b>: the cell now holds the fixed code and it ran (output below). "
                          "Undo puts back your original.")
            return
        why = f" (the frontend could not change the cell: {data.get('error') or 'unknown error'})"
        if undone:
            self._degraded_undo(why)
        else:
            self._degraded_accept(self.result.patched, why)

    def _run_accepted(self, code: str) -> None:
        """Run the accepted code in the user's kernel; its output goes to the widget, when there is one."""
        if awaits_in_running_loop(self.shell, code):
            self._say_more(f"<div>Not run here: {html.escape(AWAIT_NOTE)}. Run the cell to apply it.</div>")
            return
        if self.widget is not None:
            with self.widget.capture():
                outcome = self.shell.run_cell(code, store_history=False)
        else:
            outcome = self.shell.run_cell(code, store_history=False)
        if not outcome.success:
            error = outcome.error_in_exec or outcome.error_before_exec
            self._say_more(f"<div>Running it in your kernel raised {render.escaped(type(error).__name__)}: "
                           f"{render.escaped(str(error))}</div>")

    def reject(self, via: str = "button") -> None:
        if self.entry.decision == "accepted":
            self._say("accepted", "Already accepted: use Undo to put back your original cell.")
            return
        self._record("rejected", via)
        self._show_code(None)
        self._say("rejected", "<b>Rejected</b>: nothing changed; your cell is as you typed it. "
                  "The proposal stays in <code>%fixloop history</code>.")

    def undo(self, via: str = "button") -> None:
        if self.entry.decision != "accepted":
            self._say(self.entry.decision, "Undo is available after Accept.")
            return
        self._record("undone", via)
        if self.frontend.replace(self.entry.cell_id, self.entry.cell_source, self.entry.summary(), "undone",
                                 self._on_replaced, expected=self.entry.accepted_source()):
            self._say("undone", "<b>Undone</b>: restoring your original cell… (variables the accepted code "
                      "set in your kernel stay)")
        else:
            self._degraded_undo("")

    def _degraded_undo(self, why: str) -> None:
        self._say("undone", f"<b>Undone</b>{render.escaped(why)}. Your original cell is below, exactly as typed; "
                  "<code>%fixloop last</code> inserts it as a new cell.")
        self._show_code(self.entry.cell_source)

    # ------------------------------------------------------------------ retrying

    def retry(self, hint: str = "") -> None:
        """Run the loop again (the hint joins the prompt); the widget then shows the new result."""
        if self.retry_loop is None or self.busy or self.entry.decision == "accepted":
            return
        old = self.entry
        if old.decision == "pending":  # retrying closes the loop shown so far: never left in limbo
            old.decision = "rejected"
            self.history.decision(old, "rejected", via="retry", hint=hint)
            self.frontend.send_decision(old.loop_id, "rejected", "retry")
        self.frontend.loops.pop(old.loop_id, None)
        new = Entry(cell_source=old.cell_source, cell_id=old.cell_id)
        self.history.start(new, self.result.model)
        progress = Progress(self.result.model, self.result.max_rounds)
        self.busy = True
        self._sync_buttons()
        self._show_code(None)
        self._say("running", f"Retrying{' with your hint' if hint.strip() else ''}…")

        ticker = Ticker(lambda: self.widget.show_header(progress.html()))  # Retry is a widget's button
        try:
            new.result = self.retry_loop(hint.strip() or None, progress.hooks(then=ticker.refresh))
        except BaseException as exc:  # a bound, or the kernel's stop button: the widget stays usable
            why = str(exc) if isinstance(exc, FixloopError) else f"{type(exc).__name__} {exc}".strip()
            self.history.record("stopped", run=new.run, error=why)
            self.busy = False
            self._say("done", f"Retry stopped: {render.escaped(why)}")
            self._sync_buttons()
            if not isinstance(exc, (FixloopError, KeyboardInterrupt)):
                raise
            return
        finally:
            ticker.stop()  # before the result's header: no tick may overwrite it
        self.busy = False
        self.entry = new
        self._publish()
        self._show_result()

"""The diff widget: a loop's result, and the user's decision on it (Accept / Reject / Retry / Undo).

The decision belongs to the user and must be fast and safe: nothing changes until Accept; Accept
asks the frontend to replace the cell (keeping the `%%fixloop` line) and runs the code here; Undo
puts back the exact original; Reject says that nothing changed. Without the JupyterLab extension
(degraded mode) Accept shows the code to copy and `%fixloop last` inserts it. The pending state is
shown until the user decides, and every decision goes to the history. Decisions from the sidebar
(comm `decide`) call the same methods as the buttons. This is the only module that imports
ipywidgets.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from .. import diff
from ..errors import FixloopError
from ..history import Entry
from .comm import loop_summary
from .magic import AWAIT_NOTE, awaits_in_running_loop
from .view import Progress, Ticker, publish

TOOLTIPS = {
    "accept": "Replace the cell with the verified code (the %%fixloop line stays) and run it in your kernel",
    "reject": "Keep your cell as it is; the decision is recorded in %fixloop history",
    "retry": "Run the loop again; the hint, if any, is added to the model's prompt",
    "undo": "Put back your original cell, exactly as you typed it",
}


def _button(label: str, name: str, icon: str, style: str = "") -> widgets.Button:
    button = widgets.Button(description=label, tooltip=TOOLTIPS[name], icon=icon, button_style=style,
                            tabbable=True, layout=widgets.Layout(width="auto"))
    button.add_class(f"fixloop-{name}")
    return button


class DiffWidget(widgets.VBox):
    """The result of one `%%fixloop` cell with its header, diff, rounds and decision buttons."""

    def __init__(self, entry: Entry, *, shell, frontend, history, magics=None, retry=None):
        self.entry = entry
        self.shell = shell
        self.frontend = frontend
        self.history = history
        self.magics = magics
        self.retry_loop = retry  # (hint, on_event) -> LoopResult, or None when retrying is not possible
        self.busy = False
        self.header = widgets.HTML()
        self.mode = widgets.HTML()
        self.state = widgets.HTML()
        self.view = widgets.ToggleButtons(options=[("Unified", "unified"), ("Side by side", "side")], value="unified",
                                          tooltips=["One column, - removed and + added lines",
                                                    "Original left, proposed right"], description="Diff:",
                                          style={"button_width": "auto"})
        self.diff = widgets.HTML()
        self.rounds = widgets.Accordion()
        self.code = widgets.HTML()
        self.hint = widgets.Text(placeholder="optional hint for Retry, e.g. 'the column is called Region'",
                                 description="Hint:", tooltip="Added to the model's prompt when you click Retry",
                                 layout=widgets.Layout(width="60%"))
        self.hint.add_class("fixloop-hint")
        self.accept_button = _button("Accept", "accept", "check", "success")
        self.reject_button = _button("Reject", "reject", "times")
        self.retry_button = _button("Retry", "retry", "refresh")
        self.undo_button = _button("Undo", "undo", "undo", "warning")
        self.output = widgets.Output()
        self.accept_button.on_click(lambda _: self.decide("accept"))
        self.reject_button.on_click(lambda _: self.decide("reject"))
        self.retry_button.on_click(lambda _: self.retry(self.hint.value))
        self.undo_button.on_click(lambda _: self.decide("undo"))
        self.view.observe(lambda _: self._show_diff(), names="value")
        self.actions = widgets.VBox([widgets.HBox([self.hint]), widgets.HBox(
            [self.accept_button, self.reject_button, self.retry_button, self.undo_button])])
        super().__init__(children=[self.header, self.state, self.view, self.diff, self.rounds, self.code,
                                   self.actions, self.mode, self.output])
        self.add_class("fixloop-widget")
        frontend.watchers.append(self._show_mode)
        self._show_result()

    # ------------------------------------------------------------------ showing

    @property
    def result(self):
        return self.entry.result

    def _show_result(self) -> None:
        self.frontend.loops[self.entry.loop_id] = self
        self.header.value = diff.STYLE + diff.WIDGET_STYLE + diff.result_header_html(self.result)
        self._show_diff()
        self._show_rounds()
        self.code.value = ""
        self._show_mode()
        self.actions.layout.display = "none" if self.result.status == "passed" else None  # nothing to decide
        self._say("pending" if self._decidable() else "done", self._pending_text())
        self._sync_buttons()

    def _show_diff(self) -> None:
        result = self.result
        if result.patched is None or result.patched == result.source:
            self.diff.value = ""
            self.view.layout.display = "none"
            return
        self.view.layout.display = None
        render = diff.side_by_side_html if self.view.value == "side" else diff.diff_html
        self.diff.value = render(result.source, result.patched)

    def _show_rounds(self) -> None:
        """One collapsed section per round: its candidate's diff against the previous code, its receipt."""
        result, children, titles = self.result, [], []
        if result.first is not None and result.status != "passed":
            children.append(widgets.HTML(_receipt(result.first.text)))
            titles.append(f"original run: {result.first.headline}")
        previous = result.source
        for r in result.rounds:
            body = ""
            if r.candidate is not None:
                body = diff.diff_html(previous, r.candidate)
                previous = r.candidate
            children.append(widgets.HTML(body + _receipt(r.receipt.text)))
            titles.append(f"round {r.index}: {r.receipt.kind} — {r.receipt.headline[:80]}")
        self.rounds.children = children
        self.rounds.titles = tuple(titles)
        self.rounds.selected_index = None
        self.rounds.layout.display = None if children else "none"

    def _show_mode(self) -> None:
        text = self.frontend.describe()
        if self.frontend.connected and not self.entry.cell_id:
            text = "This cell was not run with a cell id, so it cannot be replaced in place: Accept shows the code to copy."
        self.mode.value = f'<div class="fixloop-mode">{html.escape(text)}</div>'

    def _say(self, state: str, text: str) -> None:
        self.state.value = (f'<div class="fixloop-state fixloop-state-{state}" role="status" aria-live="polite">'
                            f"{text}</div>")

    def _pending_text(self) -> str:
        if self.result.status == "passed":
            return "The cell already passes its checks; there is nothing to decide."
        if self.result.patched is None:
            return "No verified fix. Your cell is unchanged. Retry (with a hint) or edit the cell."
        return "<b>Pending</b>: nothing has changed in your cell yet. Accept, Reject or Retry."

    def _decidable(self) -> bool:
        return self.result.patched is not None and self.result.status != "passed"

    def _sync_buttons(self) -> None:
        decision = self.entry.decision
        fixable = self._decidable() and not self.busy
        self.accept_button.disabled = not fixable or decision == "accepted"
        self.reject_button.disabled = not fixable or decision in ("accepted", "rejected")
        self.undo_button.disabled = self.busy or decision != "accepted"
        self.retry_button.disabled = self.busy or self.retry_loop is None or decision == "accepted" \
            or self.result.status == "passed"
        self.hint.disabled = self.retry_button.disabled

    # ------------------------------------------------------------------ deciding

    def decide(self, word: str, via: str = "button") -> None:
        """Accept, reject or undo; the same path for a button and for the sidebar's `decide`."""
        action = {"accept": self.accept, "reject": self.reject, "undo": self.undo}[word]
        before = self.entry.decision
        action(via)
        self._sync_buttons()
        if via == "sidebar" and self.entry.decision == before:
            # nothing to do (already decided, or no fix): tell the sidebar where things stand
            known = before if before in ("accepted", "rejected", "undone") else "unknown"
            self.frontend.send({"action": "decision", "loop_id": self.entry.loop_id, "decision": known,
                                "error": None if known != "unknown" else f"cannot {word} this loop"})

    def supersede(self) -> None:
        """The same cell ran again: close this loop as rejected, so no decision is left pending
        (its original and patch stay in `%fixloop history`)."""
        if self.entry.decision != "pending" or self.busy or self.result.status == "passed":
            return
        self._record("rejected", "rerun")
        self._say("rejected", "<b>Closed</b>: the cell ran again. This loop stays in <code>%fixloop history</code>.")
        self._sync_buttons()

    def _record(self, decision: str, via: str) -> None:
        self.entry.decision = decision
        self.history.decision(self.entry, decision, via=via, mode=self.frontend.mode)
        self.frontend.send_decision(self.entry.loop_id, decision)

    def _summary(self) -> dict:
        return loop_summary(self.entry)

    def accept(self, via: str = "button") -> None:
        if not self._decidable() or self.busy:
            self._say("done", "There is no verified fix to accept.")
            return
        if self.entry.decision == "accepted":
            return
        code = self.result.patched
        self._record("accepted", via)
        self._remember_code(code)
        if self.frontend.replace(self.entry.cell_id, self.entry.accepted_source(), self._summary(), "accepted",
                                 self._on_replaced, expected=self.entry.cell_source):
            self._say("accepted", "<b>Accepted</b>: replacing the cell in the notebook…")
        else:
            self._degraded_accept(code, "")
        self._run_accepted(code)

    def _degraded_accept(self, code: str, why: str) -> None:
        self._say("accepted", f"<b>Accepted</b>{html.escape(why)}. Your cell was not changed here: copy the code "
                  "below into it, or run <code>%fixloop last</code> to insert it as a new cell.")
        self.code.value = _code_block(code)

    def _on_replaced(self, data: dict) -> None:
        undone = self.entry.decision == "undone"
        if data.get("ok"):
            if undone:
                self._say("undone", "<b>Undone</b>: your original cell is back, exactly as you typed it.")
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
        """Run the accepted code in the user's kernel; its output goes to the widget."""
        self.output.clear_output()
        if awaits_in_running_loop(self.shell, code):
            self._say("accepted", self.state.value + f"<div>Not run here: {html.escape(AWAIT_NOTE)}. "
                      "Run the cell to apply it.</div>")
            return
        with self.output:
            outcome = self.shell.run_cell(code, store_history=False)
        if not outcome.success:
            error = outcome.error_in_exec or outcome.error_before_exec
            self._say("accepted", self.state.value + f"<div>Running it in your kernel raised "
                      f"{html.escape(type(error).__name__)}: {html.escape(str(error))}</div>")

    def _remember_code(self, code: str) -> None:
        """What `%fixloop last` inserts from now on."""
        if self.magics is not None:
            self.magics.last = self.result
            self.magics.last_code = code

    def reject(self, via: str = "button") -> None:
        if self.entry.decision == "accepted":
            self._say("accepted", "Already accepted: use Undo to put back your original cell.")
            return
        self._record("rejected", via)
        self.code.value = ""
        self._say("rejected", "<b>Rejected</b>: nothing changed; your cell is as you typed it. "
                  "The proposal stays in <code>%fixloop history</code>.")

    def undo(self, via: str = "button") -> None:
        if self.entry.decision != "accepted":
            self._say(self.entry.decision, "Undo is available after Accept.")
            return
        self._record("undone", via)
        self._remember_code(self.entry.cell_source)
        if self.frontend.replace(self.entry.cell_id, self.entry.cell_source, self._summary(), "undone",
                                 self._on_replaced, expected=self.entry.accepted_source()):
            self._say("undone", "<b>Undone</b>: restoring your original cell… (variables the accepted code "
                      "set in your kernel stay)")
        else:
            self._degraded_undo("")

    def _degraded_undo(self, why: str) -> None:
        self._say("undone", f"<b>Undone</b>{html.escape(why)}. Your original cell is below, exactly as typed; "
                  "<code>%fixloop last</code> inserts it as a new cell.")
        self.code.value = _code_block(self.entry.cell_source)

    # ------------------------------------------------------------------ retrying

    def retry(self, hint: str = "") -> None:
        """Run the loop again (the hint joins the prompt); the widget then shows the new result."""
        if self.retry_loop is None or self.busy or self.entry.decision == "accepted":
            return
        old = self.entry
        if old.decision == "pending":  # retrying closes the loop shown so far: never left in limbo
            self.entry.decision = "rejected"
            self.history.decision(old, "rejected", via="retry", hint=hint)
            self.frontend.send_decision(old.loop_id, "rejected")
        self.frontend.loops.pop(old.loop_id, None)
        new = Entry(cell_source=old.cell_source, cell_id=old.cell_id)
        self.history.start(new, self.result.model)
        progress = Progress(self.result.model, self.result.max_rounds)
        self.busy = True
        self._sync_buttons()
        self.code.value = ""
        self._say("running", f"Retrying{' with your hint' if hint.strip() else ''}…")

        def show_progress():
            self.header.value = diff.STYLE + diff.WIDGET_STYLE + progress.html()

        def on_event(kind, info):
            progress.update(kind, info)
            ticker.refresh()

        ticker = Ticker(show_progress)
        try:
            new.result = self.retry_loop(hint.strip() or None, on_event)
        except BaseException as exc:  # a bound, or the kernel's stop button: the widget stays usable
            why = str(exc) if isinstance(exc, FixloopError) else f"{type(exc).__name__} {exc}".strip()
            self.history.record("stopped", run=new.run, error=why)
            self.busy = False
            self._say("done", f"Retry stopped: {html.escape(why)}")
            self._sync_buttons()
            if not isinstance(exc, (FixloopError, KeyboardInterrupt)):
                raise
            return
        finally:
            ticker.stop()  # before the result's header: no tick may overwrite it
        self.busy = False
        self.entry = new
        publish(new, self.history, self.frontend)
        if self.magics is not None:
            self.magics.last = new.result
            self.magics.last_code = None
        self._show_result()


def _receipt(text: str) -> str:
    return f'<pre class="fixloop-receipt">{html.escape(text)}</pre>'


def _code_block(code: str) -> str:
    return (f'<div class="fixloop-copy"><div>Code to copy:</div>'
            f'<pre class="fixloop-code" tabindex="0" title="select all and copy">{html.escape(code)}</pre></div>')

"""The diff widget: shows one loop's result and the Accept / Reject / Retry / Undo buttons.

A view and nothing more: it renders what the cell's LoopView tells it (the result, the state line,
the code to copy, the mode, which buttons are enabled, the header of a running Retry) and calls back
on a click (`on_decide("accept" | "reject" | "undo")`, `on_retry(hint)`). What a decision does (the
history, the frontend, running code in the kernel) is the view's business (view.py). This is the only
module that imports ipywidgets.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable

import ipywidgets as widgets

from .. import render
from ..result import LoopResult

TOOLTIPS = {
    "accept": "Replace the cell with the verified code (the %%fixloop line stays) and run it in your kernel",
    "reject": "Keep your cell as it is; the decision is recorded in %fixloop history",
    "retry": "Run the loop again; the hint, if any, is added to the model's prompt",
    "undo": "Put back your original cell, exactly as you typed it",
}
BUTTONS = ("accept", "reject", "retry", "undo")


def _button(label: str, name: str, icon: str, style: str = "") -> widgets.Button:
    button = widgets.Button(description=label, tooltip=TOOLTIPS[name], icon=icon, button_style=style,
                            tabbable=True, layout=widgets.Layout(width="auto"))
    button.add_class(f"fixloop-{name}")
    return button


class DiffWidget(widgets.VBox):
    """The result of one `%%fixloop` cell with its header, diff, rounds and decision buttons."""

    def __init__(self, *, on_decide: Callable[[str], None], on_retry: Callable[[str], None] | None = None):
        self.result: LoopResult | None = None
        self.review: tuple[str, str] | None = None
        self.header = widgets.HTML()
        self.mode = widgets.HTML()
        self.state = widgets.HTML()
        self.view = widgets.ToggleButtons(options=[("Unified", "unified"), ("Side by side", "side")], value="unified",
                                          tooltips=["One column, - removed and + added lines",
                                                    "Original left, proposed right"], description="Diff:",
                                          style={"button_width": "auto"})
        self.diff = widgets.HTML()
        self.effect = widgets.HTML()  # "what it does to your data", under the diff
        self.rounds = widgets.Accordion()
        self.code = widgets.HTML()
        self.hint = widgets.Text(placeholder="optional hint for Retry, e.g. 'the column is called Region'",
                                 description="Hint:", tooltip="Added to the model's prompt when you click Retry",
                                 layout=widgets.Layout(width="60%"))
        self.hint.add_class("fixloop-hint")
        self.buttons = {"accept": _button("Accept", "accept", "check", "success"),
                        "reject": _button("Reject", "reject", "times"),
                        "retry": _button("Retry", "retry", "refresh"),
                        "undo": _button("Undo", "undo", "undo", "warning")}
        self.output = widgets.Output()
        for word in ("accept", "reject", "undo"):
            self.buttons[word].on_click(lambda _, word=word: on_decide(word))
        if on_retry is not None:
            self.buttons["retry"].on_click(lambda _: on_retry(self.hint.value))
        self.view.observe(lambda _: self._show_diff(), names="value")
        self.actions = widgets.VBox([widgets.HBox([self.hint]), widgets.HBox([self.buttons[b] for b in BUTTONS])])
        super().__init__(children=[self.header, self.state, self.view, self.diff, self.effect, self.rounds, self.code,
                                   self.actions, self.mode, self.output])
        self.add_class("fixloop-widget")

    # ------------------------------------------------------------------ what the view tells it

    def show_result(self, result: LoopResult, review: tuple[str, str] | None = None) -> None:
        """A loop's result: its header, diff and rounds; no code to copy yet. A passing cell has nothing to decide.
        `review`: (the cell as it ran, what Accept writes into it and runs), the texts the diff is drawn from."""
        self.result = result
        self.review = review
        self.header.value = render.widget_header_html(result)
        self._show_diff()
        self.effect.value = render.widget_effect_html(result)
        self._show_rounds()
        self.show_code(None)
        self.actions.layout.display = "none" if result.status == "passed" else None

    def show_header(self, header_html: str) -> None:
        """The header of a loop still running (a Retry), refreshed by the view."""
        self.header.value = render.STYLE + render.WIDGET_STYLE + header_html

    def show_state(self, state: str, text: str) -> None:
        """The state line (`text` is HTML): pending, accepted, rejected, undone, running, done."""
        self.state.value = (f'<div class="fixloop-state fixloop-state-{state}" role="status" aria-live="polite">'
                            f"{text}</div>")

    def show_code(self, code: str | None) -> None:
        """Code for the user to copy (degraded mode), or none."""
        self.code.value = "" if code is None else _code_block(code)

    def show_mode(self, text: str) -> None:
        self.mode.value = f'<div class="fixloop-mode">{html.escape(text)}</div>'

    def show_buttons(self, **enabled: bool) -> None:
        """Which of accept, reject, retry and undo may be clicked; the hint goes with retry."""
        for name, button in self.buttons.items():
            button.disabled = not enabled.get(name, False)
        self.hint.disabled = self.buttons["retry"].disabled

    @contextlib.contextmanager
    def capture(self):
        """Output printed inside goes to the widget (the accepted code's run), replacing the last one."""
        self.output.clear_output()
        with self.output:
            yield

    # ------------------------------------------------------------------ drawing

    def _show_diff(self) -> None:
        """The cell as it ran against what Accept writes and runs (what you review is what runs)."""
        if self.result is None or self.review is None or self.review[0].rstrip("\n") == self.review[1]:
            self.diff.value = ""
            self.view.layout.display = "none"
            return
        self.view.layout.display = None
        show = render.side_by_side_html if self.view.value == "side" else render.diff_html
        self.diff.value = show(*self.review)

    def _show_rounds(self) -> None:
        """One collapsed section per round: its candidate's diff against the previous code, its receipt."""
        result, children, titles = self.result, [], []
        if result.first is not None and result.status != "passed":
            children.append(widgets.HTML(render.receipt_block(result.first)))
            titles.append(render.original_section_title(result.first))
        previous = result.source
        for r in result.rounds:
            body = ""
            if r.candidate is not None:
                body = render.diff_html(previous, r.candidate)
                previous = r.candidate
            children.append(widgets.HTML(body + render.receipt_block(r.receipt)))
            titles.append(render.round_section_title(r))
        self.rounds.children = children
        self.rounds.titles = tuple(titles)
        self.rounds.selected_index = None
        self.rounds.layout.display = None if children else "none"


def _code_block(code: str) -> str:
    return (f'<div class="fixloop-copy"><div>Code to copy:</div>'
            f'<pre class="fixloop-code" tabindex="0" title="select all and copy">{html.escape(code)}</pre></div>')

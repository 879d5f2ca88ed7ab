"""Batch mode in a terminal: the progress display (cell and round) and the interactive review.

On a terminal the progress is a rich bar naming the current cell and round; elsewhere (CI logs, a
pipe) it is one plain line per finished cell, so logs stay readable. Loop events arrive from
fixloop's runtime thread (the loop's hooks, `hooks()`); rich's Progress is thread-safe and the plain
printer writes whole lines.
"""

from __future__ import annotations

import sys

from ..hidden import clipped, visible
from ..hooks import LoopHooks, ReceiptReady, RoundStart, RunStart
from ..receipt import text as receipt_text
from ..render import tokens_text
from ..result import LoopResult

ROUND_TEXT = {RunStart: "running in a sandbox", RoundStart: "asking the model", ReceiptReady: "reading the receipt"}


class QuietProgress:
    """Shows nothing (the library default)."""

    def start(self, total: int) -> None:
        pass

    def cell(self, number: int, done: int) -> None:
        pass

    def hooks(self) -> LoopHooks:
        """The loop's hooks for the current cell."""
        return LoopHooks()

    def done(self, outcome) -> None:
        pass

    def waiting(self, seconds: float) -> None:
        """The notebook's kernel still runs the current cell `seconds` after its time limit's interrupt."""

    def close(self) -> None:
        pass

    def pause(self):
        import contextlib

        return contextlib.nullcontext()


class PlainProgress(QuietProgress):
    """One line per cell on stderr, and one per repair round (prefixed by `label`: the notebook,
    when several run at once)."""

    def __init__(self, stream=None, label: str = ""):
        self.stream = stream or sys.stderr
        self.total = 0
        self.number = 0
        self.label = f"{label}: " if label else ""

    def start(self, total: int) -> None:
        self.total = total

    def cell(self, number: int, done: int) -> None:
        self.number = number

    def hooks(self) -> LoopHooks:
        return LoopHooks(on_receipt=self._receipt)

    def _receipt(self, event: ReceiptReady) -> None:
        if event.round:
            receipt = event.receipt
            said = visible(clipped(receipt_text.headline(receipt), 100))
            self._line(f"  cell {self.number}, round {event.round}: {receipt.kind}: {said}")

    def done(self, outcome) -> None:
        text = f"cell {outcome.number}: {outcome.status}"
        if outcome.status != "ok" or outcome.reason:
            text += f" ({visible(clipped(outcome.reason or outcome.error, 120))})"
        self._line(text)

    def waiting(self, seconds: float) -> None:
        self._line(waiting_words(self.number, seconds))

    def _line(self, text: str) -> None:
        print(self.label + text, file=self.stream, flush=True)


def waiting_words(number: int, seconds: float) -> str:
    return (f"cell {number}: still running after {seconds:g} s, its interrupt not yet taken (a call into native "
            "code takes it when it returns): waiting for it as plain Jupyter would (Ctrl-C stops the run)")


def rich_bar():
    """One rich display for the bars of every notebook of a run."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True)


class RichProgress(QuietProgress):
    """A bar over the code cells, described by the current cell and loop round; several notebooks
    share one display (`bar`), each bar named by its `label`."""

    def __init__(self, bar=None, label: str = ""):
        self.shared = bar is not None
        self.bar = bar if bar is not None else rich_bar()
        self.console = self.bar.console
        self.label = f"{label}: " if label else ""
        self.task = None
        self.number = 0
        self.max_rounds = "?"

    def start(self, total: int) -> None:
        self.task = self.bar.add_task(f"{self.label}starting the kernel", total=total)
        self.bar.start()

    def cell(self, number: int, done: int) -> None:
        self.number = number
        self.bar.update(self.task, description=f"{self.label}cell {number}: running")

    def hooks(self) -> LoopHooks:
        return LoopHooks(on_run_start=self._round, on_round_start=self._round, on_receipt=self._round)

    def _round(self, event: RunStart | RoundStart | ReceiptReady) -> None:
        self.max_rounds = event.max_rounds
        where = "original cell" if event.round == 0 else f"round {event.round}/{self.max_rounds}"
        self.bar.update(self.task, description=f"{self.label}cell {self.number}: repairing, {where}, "
                        f"{ROUND_TEXT[type(event)]}")

    def done(self, outcome) -> None:
        from rich.markup import escape

        if outcome.status != "ok" or outcome.reason:
            colour = {"ok": "green", "fixed": "green", "unverified": "yellow", "looks_wrong": "yellow",
                      "example": "blue"}.get(outcome.status, "red")
            self.bar.console.print(f"{self.label}cell {outcome.number}: [{colour}]{outcome.status}[/{colour}] "
                                   f"{escape(visible(clipped(outcome.reason or outcome.error, 120)))}", markup=True,
                                   highlight=False)
        self.bar.advance(self.task)

    def waiting(self, seconds: float) -> None:
        self.bar.update(self.task, description=f"{self.label}{waiting_words(self.number, seconds)}")

    def close(self) -> None:
        if self.shared:
            self.bar.update(self.task, description=f"{self.label}done")
        else:
            self.bar.stop()

    def pause(self):
        import contextlib

        @contextlib.contextmanager
        def paused():
            self.bar.stop()
            try:
                yield
            finally:
                self.bar.start()

        return paused()


def make_progress(bar=None, label: str = ""):
    """A rich bar on a terminal (in `bar`, shared by several notebooks), plain lines elsewhere."""
    return RichProgress(bar, label) if sys.stderr.isatty() else PlainProgress(label=label)


def make_asker(progress, stdin=None, stdout=None):
    """The `--interactive` decision: show the verified fix as a coloured diff, then ask. Every text shown
    (the diff, the reason, the effect, all written or reported by the sandbox) has its hidden characters
    as escapes (hidden.py): an ESC sequence, a CR or a bidi override in a candidate cannot hide its lines."""

    def ask(outcome, result: LoopResult) -> tuple[str, str]:
        from rich.console import Console
        from rich.markup import escape
        from rich.syntax import Syntax

        from .report import _cell_diff

        console = Console(file=stdout or sys.stdout, highlight=False)
        with progress.pause():
            console.rule(escape(visible(f"{outcome.title} failed: {clipped(outcome.error, 100)}")))
            # long lines wrap: a diff cut at the terminal's width hides the change it asks about
            console.print(Syntax(_cell_diff(outcome.source, outcome.patched), "diff", theme="ansi_dark",
                                 word_wrap=True))
            console.print(visible(f"verified in a sandbox: {result.reason}; {len(result.rounds)} round(s), "
                                  f"{tokens_text(result.tokens)}, model {result.model}"), markup=False)
            if outcome.rerun:  # a change at the cause: every cell that runs again, in full, before the question
                console.print(visible(f"accepting runs cell {outcome.number} as changed, then these cells again, "
                                      "in the notebook's kernel:"), markup=False)
                for number, code in outcome.rerun:
                    console.print(f"--- cell {number} ---", markup=False)
                    console.print(visible(code), markup=False)
            if result.effect is not None and result.effect.lines():  # what "read what it does to your data" means
                console.print(visible("what it does to your data:\n" + "\n".join(
                    "  " + line for line in result.effect.lines())), markup=False)
            while True:
                console.print("[a]ccept, [r]eject, or [h]int to retry with guidance? ", end="", markup=False)
                answer = _read(stdin, console).strip().lower()
                if answer in ("a", "accept", "y", "yes"):
                    return "accept", ""
                if answer in ("r", "reject", "n", "no"):
                    return "reject", ""
                if answer in ("h", "hint", "e", "edit"):
                    console.print("hint for the model: ", end="")
                    return "hint", _read(stdin, console).strip()

    return ask


def _read(stdin, console) -> str:
    stream = stdin or sys.stdin
    line = stream.readline() or "r\n"  # end of input: reject, never apply a fix nobody saw
    if not stream.isatty():
        console.print(line.rstrip("\n"), markup=False)  # piped answers are not echoed by a terminal
    return line

"""A loop's progress as named hooks, each called with a frozen value (as nbclient's `on_cell_start`,
`on_cell_executed`): `fix(..., hooks=LoopHooks(on_receipt=...))`.

In the order a loop calls them: `on_checks_read` (a generation: the checks read from the instruction,
before any candidate runs; not called when there are none), `on_run_start` (the original cell, round 0,
or a candidate starts in a sandbox), `on_round_start` (a round asks the model), `on_model_writing` (the
reply streams: tokens so far; a model is streamed only when this hook is set), `on_receipt` (a run's
receipt, as the model will read it) and `on_end` (always last, once). Hooks run on the loop's thread; one that raises is
logged at debug level and ignored, so a display that went away never stops a loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .receipt.values import Receipt
from .result import LoopResult, ReadCheck, Usage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunStart:
    """The cell (round 0) or a candidate of round `round` starts running in a sandbox."""

    round: int
    max_rounds: int


@dataclass(frozen=True)
class RoundStart:
    """Round `round` (from 1) asks the model."""

    round: int
    max_rounds: int


@dataclass(frozen=True)
class ModelWriting:
    """The model's reply streams: `tokens` written so far, at `rate` tokens a second (0.0 unknown)."""

    round: int
    max_rounds: int
    tokens: int
    rate: float


@dataclass(frozen=True)
class ReceiptReady:
    """A run's receipt: the original cell's (round 0, `usage` None) or the round's carried-on candidate's
    (`usage`: every model call of the round)."""

    round: int
    max_rounds: int
    receipt: Receipt
    usage: Usage | None = None


@dataclass(frozen=True)
class ChecksRead:
    """Before any candidate runs: the checks the rules read from the instruction (loop/derived.py), shown
    before they are used; each `ReadCheck.text` says it ("checked: ... (read from your instruction)")."""

    round: int
    max_rounds: int
    checks: tuple[ReadCheck, ...]


@dataclass(frozen=True)
class LoopEnd:
    """The loop ended: its result, or None when it raised (the error reaches the caller of `fix`)."""

    result: LoopResult | None


LoopEvent = RunStart | RoundStart | ModelWriting | ReceiptReady | ChecksRead | LoopEnd
E = TypeVar("E", RunStart, RoundStart, ModelWriting, ReceiptReady, ChecksRead, LoopEnd)


@dataclass(frozen=True)
class LoopHooks:
    """The callables a loop reports its progress to; each is optional."""

    on_run_start: Callable[[RunStart], object] | None = None
    on_round_start: Callable[[RoundStart], object] | None = None
    on_model_writing: Callable[[ModelWriting], object] | None = None
    on_receipt: Callable[[ReceiptReady], object] | None = None
    on_end: Callable[[LoopEnd], object] | None = None
    on_checks_read: Callable[[ChecksRead], object] | None = None

    @classmethod
    def every(cls, hook: Callable[[LoopEvent], object]) -> LoopHooks:
        """The same callable for every hook (a live header redrawn whatever happened)."""
        return cls(hook, hook, hook, hook, hook, hook)


def call(hook: Callable[[E], object] | None, event: E) -> None:
    """The one place a hook is called: a hook that raises must not break the loop."""
    if hook is None:
        return
    try:
        hook(event)
    except Exception:
        log.debug("a fixloop hook raised on %r; ignored", event, exc_info=True)

"""The values a loop hands back: what each round cost, what it ran, and how it ended."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from .receipt.effect import Effect
from .receipt.values import Receipt


@dataclass(frozen=True)
class Usage:
    """What one model call cost. `seconds` is model time; `run_seconds` is sandbox time."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    run_seconds: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Sample:
    """One of a round's model calls (`--samples K`), or the built-in rules' candidate: its code, how
    its run went, what it cost."""

    code: str | None
    temperature: float | None
    verdict: str  # the receipt's headline: how its run went ("not run": cancelled once another passed)
    kind: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # model time of this call
    source: str = "model"  # "model", or "rules": the built-in engine's rule repair (no tokens)
    effect: str = ""  # what its run did to the user's data, in words ("" when it did not run)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Round:
    """One model call (or K with `samples`, and the built-in rules' candidate when `rules` is on),
    the candidate carried on, and the receipt of its run.

    `usage` counts every call of the round; `candidate`, `receipt`, `reply`, `source` are the best sample's."""

    index: int
    candidate: str | None
    receipt: Receipt
    usage: Usage = field(default_factory=Usage)
    reply: str = ""
    temperature: float | None = None  # the sampling temperature it was asked at (higher after a repeat)
    samples: tuple[
        Sample, ...
    ] = ()  # with --samples K or the rules: every candidate of the round; the round is the best one's
    source: str = "model"  # who wrote the candidate carried on: "model", or "rules" (the built-in engine's rule repair)
    model_error: str = ""  # the round's model call failed (one line); the rules' candidate ran on without it

    @property
    def effect(self) -> Effect | None:
        """What running this candidate did to the user's data (None when it did not run)."""
        return self.receipt.effect


@dataclass(frozen=True)
class LoopResult:
    """How a loop ended.

    `status` is "passed" (the original already passes), "fixed" (a candidate passed something the
    user owns: a check, an assert in the code, the expected output, a following cell), "unverified"
    (a candidate runs without error and nothing checked it: a claim, not evidence), "gave_up" or
    "error"; `reason` says which bound or error ended it. `rounds` holds the model rounds only;
    `first` is the receipt of the original cell's own run (None in generation mode).
    """

    status: str
    source: str
    patched: str | None
    rounds: list[Round]
    first: Receipt | None = None
    reason: str = ""
    model: str = ""
    checks: tuple[str, ...] = ()
    instruction: str | None = None
    seconds: float = 0.0
    max_rounds: int = 0
    loop_id: str = ""
    notes: tuple[str, ...] = ()

    @property
    def diff(self) -> str:
        """Unified diff of the original cell against the proposed one ('' when nothing changed)."""
        if self.patched is None:
            return ""
        return unified_diff(self.source, self.patched)

    @property
    def tokens(self) -> int:
        return sum(r.usage.tokens for r in self.rounds)

    @property
    def cost(self) -> float:
        return sum(r.usage.cost for r in self.rounds)

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "fixed", "unverified")

    @property
    def claimed(self) -> bool:
        """A candidate is proposed as a repair: verified ("fixed") or not ("unverified")."""
        return self.status in CLAIMS

    @property
    def alternatives(self) -> tuple[Sample, ...]:
        """When the repair is unverified: the other candidates of its round that also ran without
        error, with different code (the rules' and the model's, say): nothing tells which is right."""
        if self.status != "unverified" or not self.rounds:
            return ()
        carried = (self.patched or "").strip()
        seen, out = {carried}, []
        for s in self.rounds[-1].samples:
            if s.kind == "ok" and s.code is not None and s.code.strip() not in seen:
                seen.add(s.code.strip())
                out.append(s)
        return tuple(out)

    @property
    def last_receipt(self) -> Receipt | None:
        return self.rounds[-1].receipt if self.rounds else self.first

    @property
    def effect(self) -> Effect | None:
        """What the proposed code (or the original, when it passed or nothing better ran) does to
        the user's data: the effect of the last run that ran the code."""
        if self.status in CLAIMS and self.rounds:
            return self.rounds[-1].receipt.effect
        for r in reversed(self.rounds):
            if r.receipt.effect is not None:
                return r.receipt.effect
        return self.first.effect if self.first is not None else None


CLAIMS = ("fixed", "unverified")  # statuses that propose code as a repair


def unified_diff(before: str, after: str, before_name: str = "original", after_name: str = "proposed") -> str:
    """A unified diff that ignores a missing final newline (cells rarely end with one)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name, lineterm="")
    return "".join(line + "\n" for line in lines)

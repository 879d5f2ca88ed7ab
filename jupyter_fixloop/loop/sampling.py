"""Execution-guided sampling: several candidates per round, each run, the best one carried on.

A small model's likeliest answer is often wrong where a slightly hotter one is right; running them
all tells which. A round makes K model calls (K requests: one request of n choices has one temperature; at
temperatures spread from the round's own up to `resample_temperature`, each after the first with a seed
of its own: one seed at several temperatures draws the same random numbers, and its answers share one
bias), one after another, or up to `slots` at once for a server that answers side by side (llama-server's
`--parallel`); each reply runs in a kernel of the warm pool as soon as it arrives, beside the next call,
and a candidate that passes every check cancels the calls under way. Code that a sample of the same round
already proposed is not run again (the loop already skips code an earlier round ran).

A round's K agreement answers on a server with two slots or more (`model_slots`) start with one request instead
(`OneRequest`: `n` = one a slot, K at most; llama-server's `n_cmpl`): the prompt is read once and its state copied to
the other slots, where separate requests side by side each read it in a slot of its own. One request has one
temperature (the round's K spread ones' mean) and one seed; the server samples each choice on its own (llama-server:
choice i with the seed plus i, the seeds K separate calls are sent). The answers arrive together: each is then
settled as if its call had just answered, so stopping once they agree saves runs, not model time. Where the request
asked fewer than K (fewer slots), the rest are asked one by one (the prompt then read from the server's cache), each
at its own spread temperature, and only where the first do not already agree by a majority of the K whose runs pass
every check (`agreement.py`: two of three; the rest could not change the result handed over).

With a litellm model, a round starts with the built-in engine's rule repair (`RULES`) when it has one:
it answers in milliseconds for no tokens, and its run gets a head start of `RULES_GRACE` seconds
before the first model call. One that passes in that time means no call at all (no tokens paid for a
prompt nobody reads, no CPU taken from the sandbox on a local model); a slower run goes on beside the
call, and cancels it if it passes. That holds only when something checked it (`decisive`): a rule's
candidate that merely runs without error is a guess, so the model is asked too, and both are shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ..errors import ModelError
from ..model.models import Reply
from ..receipt.text import annotated, headline
from ..receipt.values import Receipt, rejected
from ..result import Sample, Usage
from .verdict import rank

NOT_RUN = rejected("not run: another sample of this round passed first")
RULES = "rules"  # a step of a round that asks the built-in engine's rules, not the model
RULES_GRACE = 2.0  # seconds the rules' run may take before the model is asked beside it
RESAMPLE_SPREAD = 0.4  # after a repeat, the round's K calls go from resample_temperature this much higher
FRESH_SEEDS = 1000  # a fresh answer of round i is sent the seed plus i times this: a draw no other call makes


class Fresh(float):
    """A step of a round that asks the model the first round's prompt again, with no earlier run in it, at this
    temperature and a seed of its own (`FRESH_SEEDS`): an independent answer beside the repair, asked after a round
    in which no answer ran to its end. A small model shown its failing code tends to write it again (the file it
    reloads, the index it reads as a column); a new draw of the instruction alone often does not."""


@dataclass(frozen=True)
class Candidate:
    """One sample of a round: the reply (its code cleaned by the guard), the receipt of its run,
    and what it repeats of an earlier round ("" when it is new)."""

    order: int
    reply: Reply
    receipt: Receipt
    temperature: float | None
    repeated: str = ""
    source: str = "model"  # "model", or "rules": the built-in engine's rule repair
    authors: tuple[str, ...] = ()  # who wrote each line of its code (result.authored)

    @property
    def rank(self) -> tuple:
        """Lower is better (see verdict.rank)."""
        return rank(self.receipt, bool(self.repeated), self.source == RULES, self.order, bool(self.reply.guess))

    def sample(self) -> Sample:
        u = self.reply.usage
        return Sample(self.reply.code, self.temperature, headline(self.receipt), self.receipt.kind,
                      u.prompt_tokens, u.completion_tokens, u.seconds, self.source,
                      self.receipt.effect.text if self.receipt.effect is not None else "", self.authors,
                      self.reply.choice)


def best_of(candidates: Sequence[Candidate]) -> Candidate:
    """The candidate to carry on (see `Candidate.rank`)."""
    if not candidates:
        raise ValueError("best_of needs at least one candidate")
    return min(candidates, key=lambda c: c.rank)


def temperatures(low: float, high: float, k: int) -> tuple[float, ...]:
    """K temperatures from `low` up to `high` (all `low` when high <= low): the first call is the
    likeliest answer, the others spread out from it."""
    if k <= 1 or high <= low:
        return (low,) * max(k, 1)
    step = (high - low) / (k - 1)
    return tuple(round(low + i * step, 3) for i in range(k))


def total_usage(candidates: Sequence[Candidate], best: Candidate) -> Usage:
    """What the round cost: every call's tokens (those read from the server's cache too), cost and model
    seconds; the sandbox seconds of the run carried on (the others ran beside it)."""
    us = [c.reply.usage for c in candidates]
    return Usage(sum(u.prompt_tokens for u in us), sum(u.completion_tokens for u in us), sum(u.cost for u in us),
                 sum(u.seconds for u in us), best.receipt.seconds, sum(u.cached_tokens for u in us),
                 sum(u.prompt_seconds for u in us), sum(u.reply_seconds for u in us))


class OneRequest:
    """A round's first `k` model answers as one request: the first answer asked starts it, every answer waits on it
    and takes its own choice. Where the server returned fewer choices than asked, or refused the request (a
    `ModelError`: llama-server refuses an `n` above its slots), an answer without a choice is asked on its own
    (`separate`); so is every answer after the first `k` (those asked where the leading results tie)."""

    def __init__(self, k: int):
        self.k = k
        self.task: asyncio.Future | None = None
        self.refused: BaseException | None = None  # the request's error, when it failed

    async def reply(self, nth: int, request: Callable[[], Awaitable[Sequence[Reply]]],
                    separate: Callable[[], Awaitable[Reply]]) -> Reply:
        """The round's `nth` answer (from 0): its choice of the one request (`request`, made once), else `separate`."""
        if nth >= self.k:
            return await separate()
        if self.task is None:
            self.task = asyncio.ensure_future(request())
        try:
            replies = await asyncio.shield(self.task)
        except ModelError as exc:
            self.refused, replies = exc, ()
        if nth < len(replies):
            return replies[nth]
        return await separate()

    @property
    def choices(self) -> int:
        """The choices the request returned (0 before it answered, or when it failed)."""
        if self.task is None or not self.task.done() or self.task.cancelled() or self.task.exception() is not None:
            return 0
        return len(self.task.result())

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()


# (a temperature, or RULES; the how-many-th model call of the round it is, from 0) -> (reply, what it repeats, who
# wrote each line of its code); None when the step has nothing new to run
Ask = Callable[[float | str, int], Awaitable[tuple[Reply, str, tuple[str, ...]] | None]]
Trial = Callable[[Reply], Awaitable[Receipt]]
# (step, reply, receipt of a passing run) -> whether that pass ends the round
Decisive = Callable[[float | str, Reply, Receipt], bool]
# the candidates settled so far -> whether they are enough: no more calls are made (the runs under way finish)
Enough = Callable[[Sequence["Candidate"]], bool]


async def gather(
    temps: Sequence[float | str], ask: Ask, trial: Trial, decisive: Decisive | None = None,
    failed: Callable[[BaseException], None] | None = None, budget=None, slots: int = 1,
    enough: Enough | None = None, start: tuple[int, int] = (0, 0),
) -> list[Candidate]:
    """Ask at each temperature (or RULES) in turn, and run each reply as soon as it arrives (beside
    the next call); the first candidate that passes ends the round: the call under way is cancelled (no
    reply, so no tokens to count) and runs still going are stopped (their replies are kept, "not
    run", and their tokens counted). A call that fails ends the asking; the round goes on with the
    replies it has (`failed` is told the error), and raises that error when it has none. `decisive`
    (default: every pass) says which passes end the round; the others are kept, and the asking goes on.
    `budget` (receipt/text.py's): what a receipt's text is fitted in when a line is added to it. `slots`: model
    calls made at once (1: one after another). `enough`: told the candidates each time one settles; when it says
    they are enough (independent answers that already agree), no more calls are made and the calls under way are
    cancelled, but the runs under way finish and count. `start`: (the first candidate's order, the first model
    call's nth), for calls that continue a round's."""
    return await _Round(ask, trial, decisive, budget, slots, enough, start).gather(temps, failed)


class _Round:
    """The state of one `gather`: the runs by code, the replies being settled, whether one passed."""

    def __init__(self, ask: Ask, trial: Trial, decisive: Decisive | None, budget=None, slots: int = 1,
                 enough: Enough | None = None, start: tuple[int, int] = (0, 0)):
        self.ask, self.trial, self.decisive, self.enough = ask, trial, decisive, enough
        self.start = start
        self.settled: list[Candidate] = []
        self.answering: list[asyncio.Task] = []  # the model's answers being settled (not the rules' repair)
        self.slots = max(1, slots)
        self.budget = budget  # what a receipt's text is fitted in (receipt/text.py's), when a line is added to it
        self.runs: dict[str, tuple[int, asyncio.Future]] = {}
        self.settling: list[asyncio.Task] = []
        self.stopped: list[asyncio.Future] = []  # runs this round stopped itself (not a cancellation from outside)
        self.passed = False
        self.asking: asyncio.Future | None = None

    async def gather(self, temps: Sequence[float | str], failed=None) -> list[Candidate]:
        self.asking = asyncio.ensure_future(self._ask_in_turn(temps))
        try:
            error = await self._asked()
            outcomes = await asyncio.gather(*self.settling, return_exceptions=True)
        finally:
            self._cancel_all()
        candidates = [o for o in outcomes if isinstance(o, Candidate)]
        if candidates:
            if error is not None and failed is not None:
                failed(error)
            return candidates
        errors = [
            o for o in (error, *outcomes) if isinstance(o, BaseException) and not isinstance(o, asyncio.CancelledError)
        ]
        if errors:
            raise errors[0]
        raise asyncio.CancelledError()

    async def _ask_in_turn(self, temps: Sequence[float | str]) -> None:
        # one call at a time unless the server has slots: a one-slot server (llama-server) would queue the
        # others, and their time in the queue would count against the model timeout
        first, nth0 = self.start
        steps = [(order, step) for order, step in enumerate(temps, first) if step != RULES]
        for order, step in enumerate(temps, first):
            if step == RULES and not self.passed:
                await self._ask_one(order, step, nth0)
        if self.slots > 1 and len(steps) > 1:
            await self._ask_side_by_side(steps)
            return
        for nth, (order, step) in enumerate(steps, nth0):
            if self.enough is not None and self.answering:  # the answers so far may be enough: then no call more
                await asyncio.wait(self.answering)
            if self.passed:
                return
            await self._ask_one(order, step, nth)

    async def _ask_one(self, order: int, step: float | str, nth: int) -> None:
        asked = await self.ask(step, nth)
        if asked is None:
            return
        self.settling.append(asyncio.ensure_future(self._settle(order, step, *asked)))
        if step != RULES:
            self.answering.append(self.settling[-1])
        if step == RULES:  # a head start: most rule repairs run in well under a second
            await asyncio.wait([self.settling[-1]], timeout=RULES_GRACE)

    async def _ask_side_by_side(self, steps: Sequence[tuple[int, float | str]]) -> None:
        """Up to `slots` calls at once; a call that fails ends the asking once the others have answered."""
        gate = asyncio.Semaphore(self.slots)

        async def one(order: int, step: float | str, nth: int) -> None:
            async with gate:
                if not self.passed:
                    await self._ask_one(order, step, nth)

        calls = [asyncio.ensure_future(one(order, step, nth)) for nth, (order, step) in enumerate(steps, self.start[1])]
        try:
            outcomes = await asyncio.gather(*calls, return_exceptions=True)
        finally:
            for call in calls:
                call.cancel()
        errors = [o for o in outcomes if isinstance(o, Exception)]
        if errors:
            raise errors[0]

    async def _asked(self) -> BaseException | None:
        """Wait for the asking to end: the error of a call that failed, None otherwise (also when a
        pass cancelled it)."""
        try:
            await self.asking
        except asyncio.CancelledError:
            if not self.passed:
                raise
        except Exception as exc:
            return exc
        return None

    async def _settle(self, order: int, step: float | str, reply: Reply, repeated: str,
                      authors: tuple[str, ...]) -> Candidate:
        run, same = self._run_of(order, reply)
        receipt = await self._receipt(run)
        if same is not None:
            receipt = annotated(receipt, self.budget, same_as=f"sample {same + 1}")
        if receipt.ok and not self.passed and (self.decisive is None or self.decisive(step, reply, receipt)):
            self._stop_the_others()
        if step == RULES:
            candidate = Candidate(order, reply, receipt, None, repeated, RULES, authors)
        else:
            candidate = Candidate(order, reply, receipt, step, repeated, authors=authors)
        self.settled.append(candidate)
        if not self.passed and self.enough is not None and self.enough(tuple(self.settled)):
            self._stop_asking()
        return candidate

    def _run_of(self, order: int, reply: Reply) -> tuple[asyncio.Future, int | None]:
        """The run of a reply's code, and the order of the sample of this round that proposed the
        same code first (None when this one is the first: its run starts now)."""
        key = (reply.code or "").strip()
        same = self.runs.get(key) if reply.code is not None else None
        if same is not None:
            return same[1], same[0]
        run = asyncio.ensure_future(self.trial(reply))
        if reply.code is not None:
            self.runs[key] = (order, run)
        return run, None

    async def _receipt(self, run: asyncio.Future) -> Receipt:
        try:
            return await asyncio.shield(run)
        except asyncio.CancelledError:
            if not (run.cancelled() and run in self.stopped):
                raise
            return NOT_RUN

    def _stop_asking(self) -> None:
        """Enough answers: the calls under way are cancelled and no more are made; the runs under way finish."""
        self.passed = True
        self.asking.cancel()

    def _stop_the_others(self) -> None:
        """A decisive pass: the call under way is cancelled, the runs still going are stopped."""
        self.passed = True
        self.asking.cancel()
        for _, other in self.runs.values():
            if not other.done():
                self.stopped.append(other)
                other.cancel()

    def _cancel_all(self) -> None:
        self.asking.cancel()
        for task in self.settling:
            task.cancel()
        for _, run in self.runs.values():
            run.cancel()

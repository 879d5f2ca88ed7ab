"""The loop: run the cell, and while it fails, ask the model, run the candidate, read the receipt.

Every candidate runs in a fresh sandbox kernel loaded with the same snapshot, together with every
check (so a check that passed before and fails now is a regression, and counts as a failure).
The loop stops when all checks pass or at the first bound it reaches: rounds, tokens, cost, time.
"""

from __future__ import annotations

import ast
import asyncio
import os
import time
import uuid
from collections.abc import Iterable
from dataclasses import replace

from .. import cell, hooks as events
from ..cell import missing_names
from ..errors import FixloopError, ModelError, UsageError
from ..hooks import LoopHooks
from ..kernel.snapshot import Snapshot
from ..model import models as model, prompt
from ..model.variables import Variable, names_only
from ..options import LoopOptions, knob_signature
from ..receipt.text import Budget, annotated, for_people, without_data
from ..receipt.values import Account, Baseline, Guarded, Receipt, rejected
from ..result import MODEL, RULES, USER, Agreement, LoopResult, ReadCheck, Round, Usage, authored
from ..sandbox import confine, runtime
from ..sandbox.manager import Sandbox, SandboxSettings
from ..sandbox.pool import SandboxPool, pool_for
from . import agreement as agreeing, derived, guard, mirror as mirrors, sampling
from .verdict import (
    NOTHING,
    UNVERIFIED,
    Expectations,
    PassedBefore,
    account,
    decisive,
    doubted,
    evidence,
    expecting,
    judge,
    ran,
    runs_now,
    still_run,
    verified,
)


async def afix(
    source: str,
    *,
    checks: Iterable[str] = (),
    instruction: str | None = None,
    namespace: dict | Snapshot | None = None,
    expect_output: str | None = None,
    following: Iterable[str] = (),
    hooks: LoopHooks | None = None,
    options: LoopOptions | None = None,
    notes: Iterable[str] = (),
    downstream: Iterable[str] = (),
    cell_numbers: Iterable[int] = (),
    expect: Expectations | None = None,
    **knobs,
) -> LoopResult:
    """Run `source` in a sandbox kernel and repair it until its checks pass.

    `checks`: expressions that must be true after the cell runs; `expect_output`: what it must
    print; `instruction`: write or change the code (generation); `namespace`: the user's variables
    (a dict, of which the names the cell, checks and following cells read are mirrored, see
    sharing.py and `share`; or a Snapshot); `following`: the notebook's later cells, run in
    order after each candidate as regression checks (a cell that also fails after the original
    cell is not counted); `hooks`: progress, a `LoopHooks` of named callables (hooks.py); `notes`:
    lines every receipt carries, what the caller knows of the state the sandbox starts from (e.g. the
    names a failed run changed that could not be put back); `downstream`: for a repair of the cause of
    a failure further down (an earlier cell), the cells from this one down to the cell that failed,
    that one last: they run after each candidate, before `following`, and each must run without
    error (none is excused for failing after the original too); `expect`: these made once by a face
    (verdict.expecting), instead of `expect_output`, `following`, `downstream` and
    `cell_numbers`; `cell_numbers`: the notebook's number of each `downstream` and `following` cell, in
    that order (batch mode), which names it in the receipts ("following cell 7" is the notebook's cell 7;
    without them, the 7th after this one). The other keywords are
    the fields of
    `LoopOptions` (model, max_rounds, timeout, model_timeout, wall_time, ...): each overrides
    `options` (default `LoopOptions()`); an unknown one is a TypeError.
    """
    if "on_event" in knobs:
        raise TypeError("fix(on_event=...) is gone: pass hooks=LoopHooks(on_receipt=..., ...) (jupyter_fixloop.hooks)")
    options = (options or LoopOptions()).with_(**knobs).resolved()
    expect = _expectations(expect, expect_output, following, downstream, cell_numbers)
    run = LoopRun(source, _checks(checks), instruction, namespace, expect, options, hooks, notes=tuple(notes))
    return await runtime.run_here(run.run())


afix.__signature__ = knob_signature(afix)
fix = runtime.sync_twin(afix)


async def averify(source: str, *, checks: Iterable[str] = (), namespace: dict | Snapshot | None = None,
                  expect_output: str | None = None, options: LoopOptions | None = None,
                  following: Iterable[str] = (), expect: Expectations | None = None) -> Receipt:
    """Run `source` once in a fresh sandbox with its checks, no model: the receipt of that run."""
    options = replace(options or LoopOptions(), max_rounds=0).resolved()
    run = LoopRun(source, _checks(checks), None, namespace, _expectations(expect, expect_output, following), options,
                  None)
    result = await runtime.run_here(run.run())
    if result.first is None:
        raise FixloopError(result.reason)
    return result.first


verify = runtime.sync_twin(averify)


def first_messages(source: str, *, instruction: str | None = None, namespace: dict | Snapshot | None = None,
                   checks: Iterable[str] = (), options: LoopOptions | None = None,
                   history: list[tuple[str, Receipt]] = ()) -> list[dict]:
    """The messages round 1 of this loop sends the model (with `history`, the original run and its
    receipt, for a repair): what a one-shot baseline must be given to be compared with the loop."""
    options = (options or LoopOptions()).resolved()
    run = LoopRun(source, _checks(checks), instruction, namespace, NOTHING, options, None)
    run.variables = mirrors.variables(namespace, options.share_policy, run._shared())
    return run._messages(list(history), "", "")



UNCHANGED = "the model returned your cell unchanged; nothing was generated"

class LoopRun:
    """One loop: the original run, then rounds of model → guard → sandbox run → receipt, until
    all checks pass or a bound is reached. `run()` returns the LoopResult; each exit says why."""

    def __init__(self, source: str, checks: tuple[str, ...], instruction: str | None, namespace,
                 expect: Expectations, options: LoopOptions, hooks: LoopHooks | None, notes: tuple[str, ...] = ()):
        if not isinstance(source, str):
            raise UsageError(f"source must be a string of Python code, not {type(source).__name__}")
        if not source.strip() and not instruction:
            raise UsageError("nothing to run: the cell is empty; write code, or an instruction for the model")
        self.source, self.checks, self.instruction = source, checks, instruction
        # what the instruction says the code must define or do, checked by the judge beside the user's checks
        # (loop/derived.py; read when the loop runs, from the user's frames): not evidence of a right answer, a
        # run that passes only these stays unverified
        self.read: tuple[ReadCheck, ...] = ()
        self.facts: tuple[str, ...] = ()
        stated = cell.stated_output(instruction)  # the output the instruction states: a check of every run
        # an instruction that asks for something to see, met by code that shows nothing, is asked once more
        self.asks_to_see = cell.asks_to_see(instruction) or stated is not None
        # the first code that ran and missed only what the instruction says of what it shows (it showed
        # nothing, or not the values it states): returned, said as such, if nothing better runs
        self._kept: tuple[int, sampling.Candidate, Receipt] | None = None
        self._kept_agreement: Agreement | None = None  # how the kept code's round agreed, said with it
        self._shown: dict[str, str] = {}  # code -> the name its last line shows, added by the loop (_with_result_shown)
        # what every run of this loop is judged against, made once by the face (per run the loop adds the cell
        # its smells compare with, and the baseline)
        self.expect = replace(expect, stated=stated or expect.stated, facts=self.facts)
        self.following = tuple(c for _, c in expect.following)
        # how the following cells went after the original cell, and what it wrote (set by its run; with an
        # instruction there is none, and a later cell that runs verifies only by reading what the code wrote)
        self.baseline = Baseline(ran=frozenset(n for n, _ in expect.following))
        self.required = expect.required  # the first `required` following cells must run: never excused
        self.reached = len(expect.following)  # the later cells a candidate runs: those the original run reached
        self.notes = notes
        self.options = options
        if hooks is not None and not isinstance(hooks, LoopHooks):
            raise UsageError(f"hooks must be a LoopHooks (jupyter_fixloop.hooks), not {type(hooks).__name__}")
        self.hooks = hooks or LoopHooks()
        self.settings = sandbox_settings(options)
        self.model = model.get_model(options.model)
        # with nothing of the user's to check a run, K independent answers are grouped by result (agreement.py)
        self.agreeing = (options.agreement_samples > 1 and not checks and expect.output is None
                         and not self.model.deterministic)
        self.agreement: Agreement | None = None  # of the round whose code is handed over
        self.budget = Budget(options.receipt_tokens, self.model.token_counter())
        self.namespace = namespace
        self.variables: tuple[Variable, ...] = ()  # described when the loop runs (on_end sees a failure)
        self.withheld: tuple[str, ...] | None = None  # the user's secrets' texts, found at the first model call
        self.loop_id = uuid.uuid4().hex[:12]
        self.rounds: list[Round] = []
        self._removed: dict[str, int] = {}  # candidate code -> statements copied from the checks, removed
        self._examples: dict[str, tuple[str, ...]] = {}  # code -> the names its example copy rebound
        self._made_up: dict[str, tuple[str, ...]] = {}  # code -> the names its own written-out values rebound
        self.one_refused = False  # the server refused a round's answers as one request (n): asked one by one since
        self.model_errors: dict[int, str] = {}  # round -> its model call's failure, when the rules' candidate ran on
        self.first: Receipt | None = None
        self.started = time.perf_counter()

    async def run(self) -> LoopResult:
        self.started = time.perf_counter()
        if not self.settings.gateway_url and confine.resolve(self.settings.confinement) == "refused":
            refused = self._end("error", confine.REFUSAL)  # before any kernel starts
            events.call(self.hooks.on_end, events.LoopEnd(refused))
            return refused
        # K samples run side by side: keep K warm (pool_size 0, no warm kernels, stays 0 for one sample)
        k = max(self.options.samples, self.options.agreement_samples if self.agreeing else 1)
        size = max(self.options.pool_size, k if k > 1 else 0)
        pool = mirror = result = None
        try:  # on_end is called once, last, whatever raises (the pool's start and the mirror's set-up too)
            self.variables = mirrors.variables(self.namespace, self.options.share_policy, self._shared())
            self._read_checks()
            pool = pool_for(self.settings, size)
            mirror = mirrors.Mirror(self.namespace, self.options.snapshot_size_cap, self._shared(),
                                    mirrors.readable(self.namespace, self.variables, self.options.share_policy))
            try:
                result = await self._rounds(pool, mirror)
            except FixloopError as exc:
                result = self._end("error", str(exc))
            except _TimeBound as exc:
                result = self._end("gave_up", str(exc), bound="time")
            return result
        finally:
            if pool is not None:
                pool.drop_prepared()  # its snapshot belongs to this loop
                pool.rest_after(self.options.pool_idle)
            if mirror is not None:
                mirror.cleanup()
            events.call(self.hooks.on_end, events.LoopEnd(result))

    async def _rounds(self, pool: SandboxPool, mirror: mirrors.Mirror) -> LoopResult:
        opts = self.options
        history: list[tuple[str, Receipt]] = []
        if not self.instruction:
            await self._original(pool, mirror)
            if self.first.ok:
                return self._already_passes()
            history.append((self.source, self.first))
        guard_ = guard.Guard(self.source, self.checks, self.expect.output, mirrors.namespace_names(self.namespace),
                             cell.example_assignments(self.instruction), self.instruction,
                             mirrors.module_names(self.namespace), mirrors.collections(self.variables))
        passed_before = PassedBefore(self.first, self.budget)
        note, repeated_before, stuck = "", "", False
        for index in range(1, opts.max_rounds + 1):
            bound, words = self._bound_reached()
            if bound:
                return self._gave_up(words, bound)
            events.call(self.hooks.on_round_start, events.RoundStart(index, opts.max_rounds))
            messages = self._messages(history, note, repeated_before)
            try:
                candidates = await self._sample(index, messages, self._temperatures(repeated_before, stuck), guard_,
                                                history, passed_before, pool, mirror)
            except ModelError as exc:
                return self._end("error", str(exc))
            except asyncio.TimeoutError:
                return self._end("gave_up", f"time bound reached ({opts.wall_time:g} s) while waiting for the model",
                                 bound="time")
            best = sampling.best_of(candidates)
            self.agreement = None
            if self.agreeing and not self._owned_evidence(best.receipt, best.reply.code):
                planned = self._k() + len(self._fresh(stuck))  # a fresh answer is one of the round's own
                best, self.agreement = agreeing.choose(candidates, best, self._asked_for, planned)
            best = await self._with_result_shown(best, candidates, guard_, history, pool, mirror)
            asked = [c for c in candidates if c.source != sampling.RULES]  # the rules run only new code
            repeated = asked[0].repeated if asked and all(c.repeated for c in asked) else ""
            if repeated and self.model.deterministic:  # asking again gets the same
                return self._gave_up(f"the model repeated {repeated}; a hint (--hint) or another model may help",
                                     "repeated")
            receipt = self._record(index, candidates, best)
            ended = self._ended(index, best, receipt, repeated if repeated_before else "")
            if ended is not None:
                return ended
            passed_before.record(receipt, index)
            note, repeated_before = self._carry_on(best, receipt, history), repeated
            stuck = not any(ran(c.receipt) for c in candidates)  # no answer ran to its end: a fresh one beside the next
            if self._kept and self._kept[0] == index and self._shows_nothing(self._kept[2]):
                note = prompt.SHOWS_NOTHING
        if not opts.max_rounds:  # nothing was tried: not "reached"
            return self._gave_up("no model round asked (max rounds 0): the cell's run is shown as it is", "rounds")
        return self._gave_up(f"max rounds ({opts.max_rounds}) reached", "rounds")

    def _read_checks(self) -> None:
        """The checks read from the instruction (derived.py), shown before any candidate runs."""
        frames = derived.frames_of(self.namespace, self.variables)
        values = {n: self.namespace.get(n) for n in frames} if isinstance(self.namespace, dict) else {}
        self.read = derived.read_checks(self.instruction, frames, self.checks, values)
        self.facts = tuple(c.expr for c in self.read)
        # each run's checks say which are facts, and a failing one read from the instruction is said in its words
        self.expect = replace(self.expect, facts=self.facts, said=tuple((c.expr, c.words) for c in self.read
                                                                         if not c.expr.endswith(" in globals()")))
        if self.read:
            events.call(self.hooks.on_checks_read, events.ChecksRead(0, self.options.max_rounds, self.read))

    def _owned_evidence(self, receipt: Receipt, code: str | None) -> int:
        """`evidence` without the checks read from the instruction: what the user owns that verified a run."""
        return evidence(replace(receipt, checks=tuple(c for c in receipt.checks if c.expr not in self.facts)), code,
                        self.source)

    def _gave_up(self, reason: str, bound: str = "") -> LoopResult:
        """Gave up (`bound`: which of receipt/values.py's BOUNDS ended it, "" none); but generated code that ran
        and missed only what the instruction says of what it shows, or only looks wrong (a smell), with nothing
        better after it, is returned: that code, said as such (`_passed`). When every round's answer was the
        cell itself, that is what is said first."""
        if self._kept:
            self.agreement = self._kept_agreement  # the kept code's round's, not the last round's
            return self._passed(*self._kept)
        if self.rounds and all(r.candidate is not None and self._unchanged(r.candidate) for r in self.rounds):
            reason = f"{UNCHANGED} ({reason})"
        return self._end("gave_up", reason, bound=bound)

    def _unchanged(self, code: str) -> bool:
        """Code for an instruction that is the cell's own code, as it was: nothing was generated."""
        return bool(self.instruction and self.source.strip() and code.strip() == self.source.strip())

    async def _original(self, pool: SandboxPool, mirror: mirrors.Mirror) -> None:
        """Round 0: the cell as the user wrote it (its receipt is the first thing the model reads)."""
        events.call(self.hooks.on_run_start, events.RunStart(0, self.options.max_rounds))
        self.first = first = await self._run(pool, mirror, self.source, original_run=True)
        # a typo the cell made (`dff`) shares its close match (`df`); then the set is fixed
        mirror.share(self._shared(missing_names(first.ename, first.evalue)))
        baseline = Baseline.of(first)  # the first `required` following cells are never excused
        self.baseline = replace(baseline, failed=frozenset(n for n in baseline.failed if n > self.required))
        self.reached = len(first.following)  # the later cells it ran to their end in their time
        events.call(self.hooks.on_receipt, events.ReceiptReady(0, self.options.max_rounds, first))

    def _already_passes(self) -> LoopResult:
        said = account(self.first, self.source, self.source)
        words = verified(self.first, self.source, self.source, self.checks, candidate=False)
        return self._end("passed", f"the cell already passes: {words}" if said.checked else f"the cell already {words}",
                         said=said)

    def _messages(self, history: list[tuple[str, Receipt]], note: str, repeated_before: str) -> list[dict]:
        if repeated_before:
            note = (f"Your last answer was identical to {repeated_before}, which already failed as shown above. "
                    "Write a different fix that addresses what happened.")
        variables = self.variables
        if self.options.data_to_model == "names":  # no value of the user's data: names, types and shapes
            variables = names_only(variables)
            history = [(code, without_data(r, self.budget)) for code, r in history]
        return prompt.build_messages(self.source, instruction=self.instruction, checks=self.checks, history=history,
                                     hint=self.options.hint or None, note=note or None,
                                     latest=self._author(history[-1][0]) if history else None,
                                     limit=replace(self.budget, tokens=prompt.PROMPT_TOKENS), variables=variables,
                                     receipts=self.budget, changes=self.options.library_changes_in_prompt)

    def _temperatures(self, repeated_before: str, stuck: bool = False) -> tuple[float | str, ...]:
        """The round's steps: one temperature per model call, after the rules' repair when they run beside
        a model. Stuck on an answer that failed: several hotter ones, the best carried on. After a round in which
        no answer ran to its end (`stuck`), a fresh answer beside them (`_fresh`)."""
        opts = self.options
        if repeated_before:
            hot = opts.resample_temperature
            temps = sampling.temperatures(hot, min(2.0, hot + sampling.RESAMPLE_SPREAD),
                                          max(opts.samples, opts.resamples, self._k()))
        else:
            temps = sampling.temperatures(opts.temperature, max(opts.temperature, opts.resample_temperature),
                                          max(opts.samples, self._k()))
        if self._one_request():  # one request, one temperature: the K answers' spread ones' mean; the answers asked
            k, one = self._k(), self._in_one()  # after it, one by one, keep their own, the hottest first (another draw)
            temps = (round(sum(temps[:k]) / k, 3),) * one + tuple(sorted(temps[one:k], reverse=True)) + temps[k:]
        if opts.rules and self.model.rules_beside:
            temps = (sampling.RULES, *temps)
        return temps + self._fresh(stuck)

    def _fresh(self, stuck: bool) -> tuple[float, ...]:
        """A fresh answer (`sampling.Fresh`: the first round's prompt, at `resample_temperature`, a seed of its own)
        beside a round's K agreement answers, for an instruction whose last round had no answer that ran to its end:
        one more independent answer, grouped with them. Not with one answer a round (on the dev puzzles a hot fresh
        answer that ran ended the loop where the repair was right a round later: docs/benchmarks.md, session
        twenty-two), nor with the built-in engine (asking it again gets the same)."""
        if not (stuck and self.agreeing and self._k() > 1 and self.instruction and not self.model.deterministic):
            return ()
        return (sampling.Fresh(self.options.resample_temperature),)

    def _one_request(self) -> bool:
        """Whether a round's first agreement answers are asked as one request (`sampling.OneRequest`): a server with
        two slots or more (`model_slots`), unless it refused such a request earlier in this loop. It asks a choice
        for each of the K answers it has a slot for (`_in_one`); the others only where those do not agree."""
        return self.agreeing and self._k() > 1 and self.options.model_slots >= 2 and not self.one_refused

    def _in_one(self) -> int:
        """The answers the round's one request asks for: one a slot, at most K (0: no one request)."""
        return min(self._k(), self.options.model_slots) if self._one_request() else 0

    def _asked_for(self, name: str) -> bool:
        """Whether the instruction asks for a new name to be made (`cell.asks_to_make`): it is part of the result."""
        return cell.asks_to_make(self.instruction, name)

    def _k(self) -> int:
        """Answers a round asks for agreement (1: none)."""
        return self.options.agreement_samples if self.agreeing else 1

    def _record(self, index: int, candidates: list[sampling.Candidate], best: sampling.Candidate) -> Receipt:
        """The round, kept (its call cost tokens and time whatever comes next); its receipt as the model reads it."""
        reply, receipt = best.reply, best.receipt
        removed, examples = self._removed.get(reply.code or "", 0), self._examples.get(reply.code or "", ())
        made_up = self._made_up.get(reply.code or "", ())
        if removed or examples or made_up:
            receipt = annotated(receipt, self.budget, copied_checks_removed=removed, example_removed=examples,
                                made_up_removed=made_up)
        usage = sampling.total_usage(candidates, best)
        several = len(candidates) > 1 or max(self.options.samples, self._k()) > 1
        samples = tuple(c.sample() for c in sorted(candidates, key=lambda c: c.order)) if several else ()
        self.rounds.append(Round(index=index, candidate=reply.code, receipt=receipt, usage=usage, reply=reply.text,
                                 temperature=best.temperature, samples=samples, source=best.source,
                                 authors=best.authors, model_error=self.model_errors.get(index, "")))
        events.call(self.hooks.on_receipt, events.ReceiptReady(index, self.options.max_rounds, receipt, usage))
        return receipt

    def _ended(self, index: int, best: sampling.Candidate, receipt: Receipt, repeated_twice: str) -> LoopResult | None:
        """The loop's result when this round ends it: it passed, or asking again cannot help; None to go on."""
        reply = best.reply
        if receipt.ok and self._shows_nothing(receipt) and not self._kept and index < self.options.max_rounds:
            self._kept, self._kept_agreement = (index, best, receipt), self.agreement  # asked once more to show it;
            # kept if nothing better runs
            return None
        if receipt.ok:
            return self._passed(index, best, receipt)
        if (self._misses_stated(receipt) or self._looks_wrong(receipt) or self._misses_read(receipt)) \
                and not self._kept:
            self._kept, self._kept_agreement = (index, best, receipt), self.agreement  # the model reads what it
            # showed; kept if nothing better runs
        if repeated_twice and best.repeated:
            return self._gave_up(f"the model repeated {repeated_twice}, also when asked again at a higher "
                                 "temperature; a hint (--hint) or another model may help", "repeated")
        if reply.code is None and self.model.deterministic:  # asking again gets the same
            said = for_people(receipt).rstrip(".")  # the engine's reply, as given
            return self._end("gave_up", f"{said}; a model (--model, FixLoop.model) may fix it")
        return None

    async def _with_result_shown(self, best: sampling.Candidate, candidates: list[sampling.Candidate],
                                 guard_: guard.Guard, history, pool, mirror) -> sampling.Candidate:
        """Generated code that ran and showed nothing, for an instruction that asks for something to see or
        whose last line makes a new name (`dti = pd.date_range(...)`: the result it was asked to make, as a
        REPL shows it), run again with the name its last line assigns shown (a line of the rules, no model
        call): that run instead when it shows something and passes whatever the first passed. For an instruction
        that asks for something to see, the name may be the one an earlier line assigns, where the lines after
        it assign nothing (`rows = df[...]` then `rows.reset_index(drop=True, inplace=True)`): a right selection
        is not handed back showing nothing. The name is said in the result (`_passed`). Not with the rules off."""
        ran = best.receipt.ok or self._misses_stated(best.receipt) or self._misses_read(best.receipt)
        if not (self.options.rules and self.instruction and ran and best.reply.code and self._silent(best.receipt)):
            return best
        shown = cell.result_shown(best.reply.code, earlier=self.asks_to_see)
        if shown is None:
            return best
        code, name = shown
        if not (self.asks_to_see or self._new_name(name)):
            return best
        receipt = await self._trial(code, best.reply.text, guard_, history, pool, mirror)
        if not (receipt.ok or self._misses_stated(receipt) or self._misses_read(receipt)) or self._silent(receipt) \
                or (best.receipt.ok and not receipt.ok):
            return best
        self._shown[code] = name
        if best.reply.code in self._examples:
            self._examples[code] = self._examples[best.reply.code]
        if best.reply.code in self._made_up:
            self._made_up[code] = self._made_up[best.reply.code]
        authors = authored(best.reply.code, best.authors, code, RULES)
        # no model call of its own: the round's usage counts the model's reply once (it is `best`'s)
        candidate = replace(best, order=len(candidates), reply=replace(best.reply, code=code, usage=Usage()),
                            receipt=receipt, repeated="", source=sampling.RULES, authors=authors)
        candidates.append(candidate)
        return candidate

    def _shows_nothing(self, receipt: Receipt) -> bool:
        """Code written for an instruction that asks for something to see, which printed nothing and
        whose last line has no value: a fact about the run, said as such (never evidence of a right answer)."""
        return self.asks_to_see and self._silent(receipt)

    def _silent(self, receipt: Receipt) -> bool:
        """A run with no check of the user's, that printed nothing and whose last line has no value."""
        return bool(not self.checks and not receipt.stdout.strip() and not receipt.value)

    def _new_name(self, name: str) -> bool:
        """A bare name none of the user's variables has: what the code made, not the user's data changed."""
        return name.isidentifier() and name not in mirrors.namespace_names(self.namespace)

    @staticmethod
    def _misses_stated(receipt: Receipt) -> bool:
        """Code that ran without error, every check passing but the output the instruction states."""
        return (receipt.kind == "check_failed" and receipt.ename is None
                and any(c.source == "stated" and not c.passed for c in receipt.checks)
                and all(c.passed or c.source == "stated" for c in receipt.checks))

    def _looks_wrong(self, receipt: Receipt) -> bool:
        """Generated code that ran without error and failed nothing but what looks wrong in what it did to the data
        (a smell: receipt/smells.py): kept, said with its smell, if no later round does better."""
        return bool(self.instruction and receipt.kind == "check_failed" and receipt.ename is None
                    and any(c.source == "smell" and not c.passed for c in receipt.checks)
                    and all(c.passed or c.source == "smell" for c in receipt.checks))

    def _misses_read(self, receipt: Receipt) -> bool:
        """Generated code that ran without error and failed nothing but a property the rules read from the
        instruction (not a name it asks for): their reading of the words ranks candidates, it never vetoes one,
        so the code is kept, said with what does not hold, if no later round does better."""
        soft = {c.expr for c in self.read if not c.expr.endswith(" in globals()")}
        return bool(receipt.kind == "check_failed" and receipt.ename is None
                    and any(c.expr in soft and not c.passed for c in receipt.checks)
                    and all(c.passed or c.expr in soft for c in receipt.checks))

    def _read_missed(self, receipt: Receipt) -> str:
        """The clause of a result whose code fails a check read from the instruction ("" when none fails)."""
        missed = [c.words for c in self.read if any(o.expr == c.expr and not o.passed for o in receipt.checks)]
        return f"; a check read from your instruction does not hold: {missed[0]}" if missed else ""

    def _passed(self, index: int, best: sampling.Candidate, receipt: Receipt) -> LoopResult:
        """A candidate passed: fixed when something the user owns checked it, unverified otherwise."""
        reply = best.reply
        by = f", {_repair_words(best.authors)}" if best.source == sampling.RULES else ""
        stated = self._read_missed(receipt)
        if self.facts:  # held, as the judge signed; not evidence that the answer is right
            receipt = replace(receipt, checks=tuple(c for c in receipt.checks
                                                    if c.source != "fact" and c.expr not in self.facts))
            named = [n for n in cell.instruction_names(self.instruction) if f"{n!r} in globals()" in self.facts]
            stated += f"; it defines {', '.join(f'`{n}`' for n in named)}, as the instruction asks" if named else ""
        if any(c.source == "stated" and c.passed for c in receipt.checks):
            stated += "; its output shows the values the instruction states, in order"
        examples = self._examples.get(reply.code or "", ())
        if examples:
            names = ", ".join(f"`{n}`" for n in examples)
            stated += f"; the model's copy of the instruction's example {names} was left out: it uses your {names}"
        made_up = self._made_up.get(reply.code or "", ())
        if made_up:
            names = ", ".join(f"`{n}`" for n in made_up)
            stated += (f"; the model's own values for {names} (written out over yours, not asked for) were left out: "
                       f"it uses your {names}")
        smells = [c.detail for c in receipt.checks if c.source == "smell" and not c.passed]
        said = account(receipt, reply.code, self.source)
        if said.verified and not self._misses_stated(receipt) and not smells:
            words = verified(receipt, reply.code, self.source, self.checks)
            return self._end("fixed", f"after {index} round(s){by}: {words}{stated}", reply.code, said)
        others = len(LoopResult("unverified", "", reply.code, self.rounds, agreement=self.agreement).alternatives)
        guess = f", a guess: {reply.guess}" if reply.guess else ""
        if self._shows_nothing(receipt):
            stated += "; it shows nothing, though the instruction asks for something to see"
        elif self._misses_stated(receipt):
            stated += "; its output does not show the values the instruction states"
        elif smells:
            stated += f"; it looks wrong: {smells[0]}"
        elif reply.code in self._shown:
            why = ("since the instruction asks for something to see" if self.asks_to_see
                   else "the value the code makes last, which nothing showed")
            stated += f"; its last line shows `{self._shown[reply.code]}`, added by the rules: {why}"
        also = (f"; {others} other candidate{'s' if others > 1 else ''} also run{'' if others > 1 else 's'}, "
                "differently: compare them below") if others else ""
        if said.checked and said.doubts:  # checked, but the library warns about the result: said first
            words = verified(receipt, reply.code, self.source, self.checks)
            return self._end("unverified", f"not verified, though {words}{doubted(receipt)} (after {index} "
                             f"round(s){by}{guess}){stated}", reply.code, said)
        if self.agreement is not None:  # a fact about the samples, said as one
            asking = f" ({self.agreement.asking})" if self.agreement.asking else ""
            also = f"; {self.agreement.text}{asking}" + (f"; the next result ({self.agreement.groups[1]} of "
                                                  f"{self.agreement.answers}) is shown beside it: pick one"
                                                  if others else "")
        return self._end("unverified",
                         f"{UNVERIFIED}{also} (after {index} round(s){by}{guess}){stated}{doubted(receipt)}"
                         f"{runs_now(receipt)}{still_run(receipt)}", reply.code, said)

    @staticmethod
    def _carry_on(best: sampling.Candidate, receipt: Receipt, history: list[tuple[str, Receipt]]) -> str:
        """What the next round shows the model: this round's code and receipt joins `history`; the note
        for the next prompt ("" for none)."""
        if best.repeated:
            return ""  # the code already ran and is in front of the model: the note says so
        if best.reply.code is not None:
            history.append((best.reply.code, receipt))
        elif history:  # keep the last real run in front of the model, and say what went wrong
            return "Your previous reply had no ```python block."
        return ""

    async def _sample(self, index: int, messages, temps, guard_: guard.Guard, history, passed_before, pool,
                      mirror) -> list[sampling.Candidate]:
        """The round's candidates: one model call per temperature (the agreement answers as one request, where
        `_one_request`), each reply cleaned by the guard and run."""
        one = sampling.OneRequest(self._in_one()) if self._one_request() else None

        async def ask(step: float | str, nth: int) -> tuple[model.Reply, str, tuple[str, ...]] | None:
            last = model.LastRun(history[-1][0] if history else None, history[-1][1] if history else None,
                                 mirror.modules())  # typed, never re-read from the prompt
            if step == sampling.RULES:  # the rules repair the code that last ran, whoever wrote it
                reply = await self._rules(messages, last)
                if reply is None:
                    return None
                base, writer = last.code or self.source, RULES
            else:  # a model writes from the cell (what it keeps of it is the user's)
                reply = await self._answer(one, messages, step, last, nth)
                base, writer = self.source, self.model.author
            if reply.code is not None:
                code, removed = guard_.without_copied_checks(reply.code)
                code, examples = guard_.without_example_data(code) if code is not None else (code, ())
                code, made_up = guard_.without_made_up_data(code) if code is not None else (code, ())
                if code is not None:  # the cell's lines as it wrote them, trailing spaces too: a diff shows changes
                    code = cell.with_line_ends_of(self.source, code)
                reply = replace(reply, code=code)
                if removed:  # said in the receipt of the round that carries it on
                    self._removed[code] = removed
                if examples:  # said there too, and in the result
                    self._examples[code] = examples
                if made_up:
                    self._made_up[code] = made_up
            authors = authored(base, self._authors_of(base), reply.code or "", writer)
            return reply, self._repeated(reply), authors

        async def trial(reply: model.Reply) -> Receipt:
            receipt = await self._trial(reply.code, reply.text, guard_, history, pool, mirror, reply.cut)
            return passed_before.marked(receipt)

        def ends_round(step, reply: model.Reply, receipt: Receipt) -> bool:
            if self.agreeing and not self._owned_evidence(receipt, reply.code):
                return False  # every answer runs: they are grouped by result
            return decisive(step == sampling.RULES, receipt, reply.code, self.source)

        def failed(exc: BaseException) -> None:
            self.model_errors.setdefault(index, str(exc) or type(exc).__name__)

        try:
            return await self._gather(temps, ask, trial, ends_round, failed)
        finally:
            if one is not None:
                one.cancel()
                self.one_refused = self.one_refused or one.refused is not None

    async def _answer(self, one: sampling.OneRequest | None, messages, step: float, last: model.LastRun,
                      nth: int) -> model.Reply:
        """The round's `nth` model answer: its own call, or its choice of the round's one request; a fresh one
        (`sampling.Fresh`) is asked the first round's prompt, on its own, with a seed no other call is sent."""
        if isinstance(step, sampling.Fresh):
            fresh = self._messages([], "", "")
            return await self._propose(fresh, float(step), last, nth + sampling.FRESH_SEEDS * (len(self.rounds) + 1))
        if one is None:
            return await self._propose(messages, step, last, nth)
        return await one.reply(nth, lambda: self._propose_n(messages, step, last, one.k),
                               lambda: self._propose(messages, step, last, nth))

    async def _gather(self, temps, ask, trial, ends_round, failed) -> list[sampling.Candidate]:
        """The round's candidates (`sampling.gather`). With agreement, asking stops once the first answers agree by
        a majority of the K (`_agreed`: the rest could not outvote them); where the two leading results tie, up to
        `agreement_more` more answers are asked, at the round's top temperature, until one result leads."""
        candidates = await self._first_answers(temps, ask, trial, ends_round, failed)
        more = self.options.agreement_more if self.agreeing else 0
        if not (more and self._tied(candidates)) or any(self._owned_evidence(c.receipt, c.reply.code)
                                                        for c in candidates if c.receipt.ok):
            return candidates
        top = max((t for t in temps if t != sampling.RULES), default=self.options.temperature)
        start = (max(c.order for c in candidates) + 1, sum(1 for c in candidates if c.source != sampling.RULES))

        def settled(new) -> bool:
            return not self._tied([*candidates, *new])

        try:
            extra = await sampling.gather((top,) * more, ask, trial, ends_round, failed, self.budget,
                                          self.options.model_slots, enough=settled, start=start)
        except Exception as exc:  # the answers already run are kept; the failure is said as a model error
            failed(exc)
            extra = []
        return [*candidates, *extra]

    async def _first_answers(self, temps, ask, trial, ends_round, failed) -> list[sampling.Candidate]:
        """The round's candidates at `temps`. Where the round's one request asks fewer answers than K (a server with
        fewer slots), its answers run first, side by side; the rest are asked one after another, only while the
        answers so far do not agree by a majority of the K, nor pass a check of the user's."""
        asked = [n for n, t in enumerate(temps) if t != sampling.RULES]
        planned = len(asked)  # the round's K, with the fresh answer a stuck round adds

        def agreed(settled) -> bool:
            return self._agreed(settled, planned)

        slots, enough, in_one = self.options.model_slots, (agreed if self.agreeing else None), self._in_one()
        if not in_one or in_one >= len(asked):
            return await sampling.gather(temps, ask, trial, ends_round, failed, self.budget, slots, enough=enough)
        cut = asked[in_one]
        candidates = await sampling.gather(temps[:cut], ask, trial, ends_round, failed, self.budget, in_one,
                                           enough=enough)
        if agreed(candidates) or any(self._owned_evidence(c.receipt, c.reply.code)
                                     for c in candidates if c.receipt.ok):
            return candidates
        start = (max(c.order for c in candidates) + 1, in_one)
        try:
            rest = await sampling.gather(temps[cut:], ask, trial, ends_round, failed, self.budget, 1,
                                         enough=lambda new: agreed([*candidates, *new]), start=start)
        except Exception as exc:  # the answers already run are kept; the failure is said as a model error
            failed(exc)
            rest = []
        return [*candidates, *rest]

    def _agreed(self, settled, planned: int) -> bool:
        """The answers settled so far hold a group that a majority of the round's `planned` answers give (two of
        three, three of five; three of four where a stuck round asks a fresh answer beside its K) and whose runs all
        pass every check, the ones read from the instruction too: asking the rest cannot
        change which result is handed over (they could not outvote it, and a group that passes leads one that does
        not), so they are not asked. The result then says how many were asked and agree, as they are ("2 of 2
        independent answers give this result", with "the same code each time" where they are one code): never
        "K of K" (`Agreement.unanimous`: three answers at least)."""
        found = agreeing.groups(settled, self._asked_for)
        return bool(found) and len(found[0]) >= 2 and len(found[0]) > planned // 2 and \
            all(c.receipt.ok for c in found[0])

    def _tied(self, candidates) -> bool:
        """The two leading results of the answers are given by as many answers each (and both pass or both fail
        the checks read from the instruction): no result leads."""
        found = agreeing.groups(candidates, self._asked_for)
        return len(found) >= 2 and len(found[0]) == len(found[1]) and \
            all(c.receipt.ok for c in found[0]) == all(c.receipt.ok for c in found[1])

    async def _trial(self, code: str | None, text: str, guard_: guard.Guard, history, pool, mirror,
                     cut: int = 0) -> Receipt:
        """The receipt of a candidate: not run when it has no code, repeats an earlier run, or cheats."""
        if code is None:
            return self.model.without_code(text, cut)
        if self._unchanged(code):  # asked for code, it gave the cell back: running it generates nothing
            return rejected(UNCHANGED)
        tried = _tried_before(code, self.rounds, self.source, self.first)
        if tried is not None:
            label, earlier = tried
            return annotated(earlier, self.budget, same_as=label)
        rejection = guard_.check(code, history[-1][1] if history else None)
        if rejection:
            return rejection
        events.call(self.hooks.on_run_start, events.RunStart(len(self.rounds) + 1, self.options.max_rounds))
        return await self._run(pool, mirror, code)

    async def _run(self, pool: SandboxPool, mirror: mirrors.Mirror, code: str, original_run: bool = False) -> Receipt:
        """One run in a fresh kernel; the next kernel is made ready while this result goes to the model.

        The following cells run after it, each within the same time limit and all of them within
        `following_time`; after the original cell they run even when it fails, to learn which of them fail
        anyway: those are not counted after a candidate, but still run (a later cell may need what they did
        before they raised). After a candidate only the cells the original's run reached run: a cell beyond
        has nothing to be compared with."""
        reads = mirror.share_read(code, self.checks) if not original_run else ()
        snap = mirror.snapshot()
        box = await self._acquire(pool, snap)
        judged = (*self.checks, *self.facts)
        pool.prepare(snap, judged)  # its judge armed with the checks, while the model thinks
        # every later cell runs again, as Jupyter would run them: one that fails after the original too
        # is not counted, but what it does before it raises is what the cells after it see
        cells = self.expect.following if original_run else self.expect.following[:max(self.reached, self.required)]
        timeout = self._capped(self.options.timeout)
        budget = self._capped(self.options.timeout + self.options.following_time) - timeout
        later = {"cells": [c for _, c in cells], "after_error": original_run, "timeout": self.options.timeout,
                 "budget": budget, "required": self.required} if cells and (budget > 0 or self.required) else None
        try:
            raw = await box.run(code, list(judged), timeout, following=later)
            expect = replace(self.expect, original=self.source if not self.instruction else code,
                             baseline=self._baseline(cells, original_run))
            notes = reads + self.notes + snap.notes() + mirror.unshared_notes(code, self.checks)
            return judge(raw, expect, notes=notes, budget=self.budget)
        finally:
            pool.discard(box)

    def _shared(self, missing: tuple[str, ...] = ()) -> frozenset[str]:
        """The user's variables this loop shares with its sandboxes (sharing.py): never a candidate's choice."""
        return mirrors.shared(self.namespace, code=(self.source, *self.checks, *self.following),
                              instruction=self.instruction, missing=missing, share=self.options.share)

    def _baseline(self, cells: tuple[tuple[int, str], ...], original_run: bool) -> Baseline | None:
        """What the following cells are judged against: after a candidate, the original run; after the
        original run none is counted, but the first `required` (the cells down to a failure an earlier
        cell caused: the cause's own run is the first that fails there)."""
        if not original_run:
            return self.baseline
        if not self.required:
            return None
        return Baseline(ran=frozenset(n for n, _ in cells), failed=frozenset(n for n, _ in cells if n > self.required))

    async def _acquire(self, pool: SandboxPool, snap: Snapshot) -> Sandbox:
        """A kernel for a run, within the loop's time bound: a gateway's kernel, started and sent the
        snapshot over the network, can take longer than the whole loop may."""
        wall = self.options.wall_time
        if not wall:
            return await pool.acquire(snap)
        task = asyncio.ensure_future(pool.acquire(snap))
        done, _ = await asyncio.wait({task}, timeout=self._capped(wall))
        if task in done:
            return task.result()
        task.cancel()  # not waited for: shutting the kernel down is the pool's, in the background
        task.add_done_callback(lambda t: None if t.cancelled() or t.exception() else pool.discard(t.result()))
        raise _TimeBound(f"time bound reached ({wall:g} s) while a sandbox kernel was made ready")

    def _capped(self, limit: float) -> float:
        """A per-call time limit that does not run past the loop's total time bound."""
        wall = self.options.wall_time
        if not wall:
            return limit
        return max(0.5, min(limit, wall - (time.perf_counter() - self.started)))

    def _repeated(self, reply: model.Reply) -> str:
        """What an answer repeats: code that already ran (the cell, an earlier candidate), or the
        previous reply word for word; "" when it is new.

        A small model often answers with code that already failed. That is not the end: the next
        round tells it so and asks at `resample_temperature`; only a repeat after that ends the loop.
        The built-in engine is deterministic: only its previous reply, word for word, counts."""
        if self.model.deterministic:
            same = bool(self.rounds) and reply.text.strip() == self.rounds[-1].reply.strip()
            return "its previous answer" if same else ""
        if reply.code is not None:
            tried = _tried_before(reply.code, self.rounds, self.source, self.first)
            if tried is not None:
                return tried[0] if tried[0] == "the original cell" else self._author(reply.code)
        if self.rounds and reply.text.strip() == self.rounds[-1].reply.strip():
            return "your previous answer"
        return ""

    def _authors_of(self, code: str) -> tuple[str, ...]:
        """Who wrote each line of code that ran: the cell is the user's; a round's candidate carries its own."""
        if code.strip() == self.source.strip():
            return (USER,) * len(code.splitlines())
        for r in reversed(self.rounds):
            if r.candidate is not None and r.candidate.strip() == code.strip():
                return r.authors
        return ()  # unknown: `authored` takes it as the least trusted

    def _author(self, code: str) -> str:
        """Who wrote code that ran in a round, as the model is told: "your answer in round 2", or
        "the built-in rules' repair in round 1"."""
        for r in self.rounds:
            if r.candidate is not None and r.candidate.strip() == code.strip():
                who = "your answer"
                if r.source == sampling.RULES:
                    who = "the built-in rules' repair of your code" if r.model_written else "the built-in rules' repair"
                return f"{who} in round {r.index}"
        return "the code that was run"

    async def _rules(self, messages, last: model.LastRun) -> model.Reply | None:
        """The built-in engine's rule repair for this round (in-process, milliseconds, no tokens), or
        None when it has no repair or only code that already ran. It repairs `last` (the code that
        last ran, its receipt), never code read out of the prompt's receipt text."""
        reply = await model.BUILTIN_MODEL.propose(messages, last)
        if reply.code is None or _tried_before(reply.code, self.rounds, self.source, self.first) is not None:
            return None
        return replace(reply, usage=Usage(seconds=reply.usage.seconds))

    async def _propose(self, messages, temperature: float | None = None,
                       last: model.LastRun | None = None, nth: int = 0) -> model.Reply:
        """The model call, retries included, cut off at the loop's total time bound. The round's `nth` call
        (from 0) is sent the seed plus `nth`: independent samples, not one random stream at several
        temperatures."""
        opts = self.options
        index = len(self.rounds) + 1
        writing = None
        if self.hooks.on_model_writing is not None:  # the reply streams, and the live header shows the model writing

            def writing(tokens: int, rate: float):
                events.call(self.hooks.on_model_writing, events.ModelWriting(index, opts.max_rounds, tokens, rate))

        call = self.model.propose(messages, last, on_progress=writing, **self._call(temperature, nth))
        if not opts.wall_time:
            return await call
        return await asyncio.wait_for(call, self._capped(opts.wall_time))

    async def _propose_n(self, messages, temperature: float, last: model.LastRun, n: int) -> tuple[model.Reply, ...]:
        """A round's n answers as one request (`Model.propose_n`), sent the seed of its first call (a server gives
        each further choice a seed of its own), cut off at the loop's total time bound; not streamed."""
        call = self.model.propose_n(messages, n, last, **self._call(temperature, 0))
        if not self.options.wall_time:
            return await call
        return await asyncio.wait_for(call, self._capped(self.options.wall_time))

    def _call(self, temperature: float | None, nth: int) -> dict:
        """The keywords of a model call: the round's `nth` call is sent the seed plus `nth`."""
        opts = self.options
        return dict(timeout=opts.model_timeout, api_base=opts.api_base or None, max_tokens=opts.reply_cap(self.source),
                    temperature=temperature, seed=opts.seed + nth if opts.seed >= 0 else opts.seed, stop=prompt.STOP,
                    withhold=self._withheld())

    def _withheld(self) -> tuple[str, ...]:
        """The texts of the user's secrets (`_withheld`), found once per loop, at its first model call."""
        if self.withheld is None:
            self.withheld = mirrors.secrets(self.namespace)
        return self.withheld

    def _bound_reached(self) -> tuple[str, str]:
        """(the bound, its words) of the first of the loop's bounds it reached, ("", "") for none."""
        opts = self.options
        tokens = sum(r.usage.tokens for r in self.rounds)
        cost = sum(r.usage.cost for r in self.rounds)
        if opts.max_tokens and tokens >= opts.max_tokens:
            return "tokens", f"token bound reached ({tokens} of {opts.max_tokens})"
        if opts.budget and cost >= opts.budget:
            return "budget", f"budget reached (${cost:.4f} of ${opts.budget:.4f})"
        if opts.wall_time and time.perf_counter() - self.started >= opts.wall_time:
            return "time", f"time bound reached ({opts.wall_time:g} s)"
        return "", ""

    def _account(self, said: Account | None, patched: str | None, bound: str) -> Account:
        """The result's account: what checked the code handed over (`said`), what the guard took out of it,
        and which bound ended the loop."""
        guarded = Guarded() if patched is None else Guarded(
            self._removed.get(patched, 0), self._examples.get(patched, ()), self._made_up.get(patched, ()))
        return replace(said or Account(), guarded=guarded, bound=bound)

    def _end(self, status: str, reason: str, patched: str | None = None, said: Account | None = None,
             bound: str = "") -> LoopResult:
        if self.model_errors:  # the rules' candidate was kept: the model's failure is said all the same
            index, error = min(self.model_errors.items())
            more = len(self.model_errors) - 1
            reason += f"; a model call failed in round {index}{f' (and in {more} more)' if more else ''}: {error}"
        return LoopResult(status=status, source=self.source, patched=patched, rounds=list(self.rounds),
                          first=self.first, reason=reason, model=self.options.model, checks=self.checks,
                          instruction=self.instruction, seconds=time.perf_counter() - self.started,
                          max_rounds=self.options.max_rounds, loop_id=self.loop_id,
                          notes=(describe_sandbox(self.settings),), account=self._account(said, patched, bound),
                          agreement=self.agreement if status in ("fixed", "unverified") else None,
                          read_checks=self._read_outcomes(patched))

    def _read_outcomes(self, patched: str | None) -> tuple[ReadCheck, ...]:
        """The checks read from the instruction, each with how the code handed over did on it."""
        ran = [r.receipt for r in reversed(self.rounds) if patched is not None and r.candidate == patched]
        if not ran:
            return self.read
        outcomes = {o.expr: o.passed for o in ran[0].checks}
        return tuple(replace(c, passed=outcomes.get(c.expr)) for c in self.read)


class _TimeBound(Exception):
    """The loop's time bound (`wall_time`) ran out while a sandbox kernel was made ready."""


def _repair_words(authors: tuple[str, ...]) -> str:
    """A rules' candidate in a result's words: a repair of the model's code is said to be one."""
    return "the rules' repair of the model's code" if MODEL in authors else "the built-in rules' repair"


def warm_up(options: LoopOptions) -> None:
    """Start the sandboxes, and import litellm if a litellm model is used, in the background (batch mode
    calls it while the first cells run, so the first repair waits less)."""

    async def warm():
        pool_for(sandbox_settings(options), options.pool_size).rest_after(options.pool_idle)  # no loop yet
        await asyncio.sleep(0.5)  # let the sandbox start before an import holds this loop
        model.get_model(options.model).warm_up()  # on the runtime loop, where loops call it: no import from two threads

    asyncio.run_coroutine_threadsafe(warm(), runtime.loop())


def sandbox_settings(options: LoopOptions) -> SandboxSettings:
    """How this loop's sandboxes start (the pool's key: loops with the same settings share it)."""
    return SandboxSettings(cwd=options.cwd or os.getcwd(), confinement=options.confinement,
                           memory_limit=options.memory_limit or None, gateway_url=options.gateway_url,
                           gateway_kernel=options.gateway_kernel, gateway_token=options.gateway_token,
                           gateway_headers=options.gateway_headers, gateway_upload_cap=options.gateway_upload_cap,
                           python=options.sandbox_python or None)


def describe_sandbox(settings: SandboxSettings) -> str:
    """One line for the result: where and how the candidates ran."""
    if settings.gateway_url:
        return (f"sandbox: gateway ({settings.gateway_url}): candidates ran in kernels the gateway started; "
                "what they could reach is what the gateway's deployment allows")
    return confine.describe(settings.confinement)


def _checks(checks: Iterable[str] | str) -> tuple[str, ...]:
    """The checks: expressions, or blocks of statements (`assert` lines) that run after the cell;
    one that does not parse is the caller's mistake, said at once."""
    if isinstance(checks, str):
        checks = (checks,)
    checks = tuple(c.strip() for c in checks if c and c.strip())
    for check in checks:
        try:
            ast.parse(check, mode="eval")
        except SyntaxError as exc:
            if "\n" in check or check.startswith("assert "):
                try:
                    ast.parse(check, mode="exec")
                    continue
                except SyntaxError:
                    pass
            raise UsageError(
                f"--expect {check!r} is not a Python expression ({exc.msg}); quote it as one expression"
            ) from None
    return checks


def _expectations(expect: Expectations | None, output: str | None, following: Iterable[str] | str = (),
                  downstream: Iterable[str] | str = (), numbers: Iterable[int] = ()) -> Expectations:
    """What every run is judged against: the face's `expect`, or one made of fix()'s own keywords (not both)."""
    if expect is None:
        return expecting(output, following, downstream, numbers)
    if not isinstance(expect, Expectations):
        raise UsageError(f"expect must be an Expectations (jupyter_fixloop.loop.expecting), not "
                         f"{type(expect).__name__}")
    if output is not None or _given(following) or _given(downstream) or tuple(numbers):
        raise TypeError("fix(): give expect=, or expect_output/following/downstream/cell_numbers, not both")
    return expect


def _given(cells) -> bool:
    return bool(cells) if not isinstance(cells, str) else bool(cells.strip())


def _tried_before(code, rounds: list[Round], source: str, first: Receipt | None):
    """(label, receipt) of an earlier run of exactly this code: it is not run again."""
    if first is not None and code.strip() == source.strip():
        return "the original cell", first
    for r in rounds:
        if r.candidate is not None and r.candidate.strip() == code.strip():
            return f"round {r.index}", r.receipt
    return None

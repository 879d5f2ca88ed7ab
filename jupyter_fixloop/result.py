"""The values a loop hands back: what each round cost, what it ran, and how it ended; and the LoopSummary
of docs/protocol.md, the form of one loop the frontend, the notebook's metadata and the history keep
(`loop_summary`; mirrors labextension/src/summary.ts, which parses it). The magic's display bundle
carries it under MIMETYPE, the comm sends it, and batch mode stores it in `cell.metadata[METADATA_KEY]`.
`original` and `patched` are cell bodies, without the `%%fixloop` line."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from .hidden import code_lines
from .receipt.effect import Effect
from .receipt.text import for_people, for_the_file
from .receipt.values import Account, Receipt


@dataclass(frozen=True)
class Usage:
    """What one model call cost. `seconds` is model time; `run_seconds` is sandbox time. Where the server says
    (llama-server, OpenAI): `cached_tokens`, the prompt tokens it read from its prompt cache rather than computed,
    `prompt_seconds`, its time reading the prompt, and `reply_seconds`, its time writing the reply (llama-server's
    `timings`), the rest of `seconds` being the way there and back and the wait for a slot; 0 where it does not
    say."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    run_seconds: float = 0.0
    cached_tokens: int = 0
    prompt_seconds: float = 0.0
    reply_seconds: float = 0.0

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
    authors: tuple[str, ...] = ()  # who wrote each line of `code` (see `authored`)
    choice: int = 0  # its place among one request's choices: 0 made the call (its tokens, seconds: the request's)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def writer(self) -> str:
        """Who wrote it, in words: "the model", "the built-in rules", "the rules' repair of the model's code"."""
        return writer_words(self.source, self.authors)


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
    source: str = "model"  # what answered the step carried on: "model", or "rules" (the built-in engine's rule repair)
    model_error: str = ""  # the round's model call failed (one line); the rules' candidate ran on without it
    authors: tuple[str, ...] = ()  # who wrote each line of `candidate`: "user", "rules", "model" (see `authored`)

    @property
    def model_written(self) -> bool:
        """Some line of its candidate is a model's (a rules' repair of a model's code included)."""
        return MODEL in self.authors

    @property
    def writer(self) -> str:
        """Who wrote the candidate, in words (`writer_words`)."""
        return writer_words(self.source, self.authors)

    @property
    def effect(self) -> Effect | None:
        """What running this candidate did to the user's data (None when it did not run)."""
        return self.receipt.effect


UNANIMOUS_AT = 3  # answers a round needs before "K of K agree" is said: two that agree are a majority, not a consensus


@dataclass(frozen=True)
class Agreement:
    """How many of a round's independent answers give the result handed over: its code's group, the answers
    grouped by what their runs show and the data they change (loop/agreement.py), never by their text.
    A fact about the samples, not evidence that the result is right: it never makes a result `fixed`."""

    agreeing: int  # answers in the group handed over
    answers: int  # the round's independent answers (model samples that gave code), run or not
    groups: tuple[int, ...] = ()  # the size of each group of answers that ran without error, the handed-over one first
    rival: str | None = None  # the simplest code of the next group (the two leading results differ), else None
    rival_receipt: Receipt | None = field(default=None, compare=False, repr=False)  # the receipt of its run
    planned: int = 0  # the answers the round was to ask (fewer asked: the first agreed; more: the leaders tied)
    spellings: int = 0  # the different codes among the agreeing answers (comments and layout aside; 0: not known)
    # a check read from the instruction does not hold on this result (loop/derived.py): "K of K" is not said of it
    read_failed: bool = False
    # another check does not hold on a run of the group (what looks wrong in the data it leaves, the output the
    # instruction states, a check of yours): "K of K" is not said of it either
    doubted: bool = False

    @property
    def unanimous(self) -> bool:
        """"K of K agree", said only where it is worth something: every answer, three or more, gives this result,
        they are not one code written K times (two codes at least: one reading of the instruction repeated by
        the model's seeds is not K readings), and every check passes on every run of them: none read from the
        instruction rejects the result (answers that agree on rows the instruction's words rule out agree on a
        misreading), and none other (a smell, the output the instruction states, the user's)."""
        return (self.answers >= UNANIMOUS_AT and self.agreeing == self.answers and self.spellings >= 2
                and not self.read_failed and not self.doubted)

    @property
    def same_code(self) -> bool:
        """The agreeing answers, two or more, are one code (comments and layout aside)."""
        return self.agreeing > 1 and self.spellings == 1

    @property
    def text(self) -> str:
        """`3 of 4 independent answers give this result` (`, the same code each time` where they are one code)."""
        same = ", the same code each time" if self.same_code else ""
        rejected = (", though a check read from your instruction does not hold on it" if self.read_failed
                    else ", though a check does not hold on it" if self.doubted else "")
        return f"{self.agreeing} of {self.answers} independent answers give this result{same}{rejected}"

    @property
    def asking(self) -> str:
        """Why the round asked fewer or more answers than it was to ("" when it asked as many)."""
        if not self.planned or self.answers == self.planned:
            return ""
        if self.answers < self.planned:
            left = self.planned - self.answers
            return (f"{left} more not asked: {self.agreeing} of the first {self.answers} already agree, a majority "
                    f"of the {self.planned} to ask")
        more = self.answers - self.planned
        return f"{more} more asked: the two leading results of the first {self.planned} tied"

    def to_json(self) -> dict:
        return {"agreeing": self.agreeing, "answers": self.answers, "groups": list(self.groups),
                "unanimous": self.unanimous, "text": self.text, "planned": self.planned,
                "asking": self.asking, "spellings": self.spellings, "read_failed": self.read_failed,
                "doubted": self.doubted}


@dataclass(frozen=True)
class ReadCheck:
    """A check the rules read from the instruction (loop/derived.py): `expr` runs with every candidate, `words`
    say it. Not the user's: it may rank candidates but is no evidence, unless the user gives `expr` as theirs
    (`--expect`), which makes it a check of theirs like any other. `passed`: how the code handed over did on it."""

    expr: str
    words: str
    passed: bool | None = None

    @property
    def text(self) -> str:
        """`checked: no duplicate rows remain in `orders` (read from your instruction)`."""
        how = "" if self.passed is None else (": it holds" if self.passed else ": it does NOT hold")
        return f"checked: {self.words} (read from your instruction){how}"


BOUNDS = ("rounds", "tokens", "budget", "time", "repeated")  # what stops a loop that gives up ("repeated": the
# model gave an answer that already failed, and asking again cannot help)


@dataclass(frozen=True)
class LoopResult:
    """How a loop ended.

    `status` is "passed" (the original already passes), "fixed" (a candidate passed something of the
    user's that checks values: a check, an assert in the code, the expected or saved output, a following
    cell that asserts, and the library warned nothing about its result), "unverified" (a candidate runs
    without error and nothing checked its values: a claim, not evidence; later cells that run now are a
    fact of it), "gave_up" or
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
    account: Account | None = None  # what its status rests on, as data (receipt/values.py): checks, guard, bound
    agreement: Agreement | None = None  # how many independent answers give the result handed over (None: not asked)
    read_checks: tuple[ReadCheck, ...] = ()  # checks read from the instruction, run with every candidate

    @property
    def diff(self) -> str:
        """Unified diff of the original cell against the proposed one ('' when nothing changed)."""
        if self.patched is None:
            return ""
        return unified_diff(self.source, self.patched)

    @property
    def bound(self) -> str:
        """For "gave_up": the bound that stopped it, one of BOUNDS ("" when none did), as its account holds it."""
        return self.account.bound if self.account is not None else ""

    @property
    def unchecked(self) -> bool:
        """A cell that already passes with nothing of the user's to check its values (its account says so):
        it "already runs", it does not "pass" anything."""
        return self.status == "passed" and self.account is not None and not self.account.checked

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
        if self.agreement is not None:  # the leading other result, not every spelling of this one
            rival = (self.agreement.rival or "").strip()
            return tuple(s for s in self.rounds[-1].samples if rival and (s.code or "").strip() == rival)[:1]
        carried = (self.patched or "").strip()
        seen, out = {carried}, []
        for s in self.rounds[-1].samples:
            if s.kind == "ok" and s.code is not None and s.code.strip() not in seen:
                seen.add(s.code.strip())
                out.append(s)
        return tuple(out)

    def picked_rival(self) -> LoopResult | None:
        """The result with the next group's answer handed over instead (the user picked it: the two leading
        results differed); None when there is no such answer. Its run's receipt is the round's; still unverified."""
        a = self.agreement
        if self.status != "unverified" or a is None or a.rival is None or a.rival_receipt is None or not self.rounds:
            return None
        last = self.rounds[-1]
        swapped = Agreement(a.groups[1], a.answers, (a.groups[1], a.groups[0], *a.groups[2:]), self.patched,
                            last.receipt, a.planned)
        rounds = [*self.rounds[:-1], replace(last, candidate=a.rival, receipt=a.rival_receipt)]
        reason = (f"nothing checked it; read what it does to your data; you picked the next result over the one "
                  f"handed over: {swapped.text}")
        return replace(self, patched=a.rival, rounds=rounds, agreement=swapped, reason=reason)

    @property
    def authors(self) -> frozenset[str]:
        """Who wrote the lines of the proposed code ("user", "rules", "model"); empty when none is proposed.

        Data, not a label: a rules' repair of code a model wrote holds the model's lines, so "model" is here."""
        if self.patched is None:
            return frozenset()
        for r in reversed(self.rounds):
            if r.candidate is not None and r.candidate.strip() == self.patched.strip():
                return frozenset(r.authors) if r.authors else frozenset({MODEL})  # unknown: the least trusted
        return frozenset({MODEL})

    @property
    def model_written(self) -> bool:
        """Some line of the proposed code is a model's: a person reviews it before it runs outside a sandbox."""
        return MODEL in self.authors

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

USER, RULES, MODEL = "user", "rules", "model"  # who wrote a line, least trusted last
_TRUST = {USER: 0, RULES: 1, MODEL: 2}


def authored(base: str, base_authors: tuple[str, ...], code: str, writer: str) -> tuple[str, ...]:
    """Who wrote each line of `code`, which `writer` ("rules" or "model") made from `base` (whose lines
    `base_authors` holds). A line kept as it was keeps its author; a line added or changed is the
    writer's, or the least trusted author of `base` when that is less trusted: the rules' repair of
    code a model wrote is the model's code (its names, its calls, what the rule templated from it).

    Deleting is writing too: a candidate that only drops lines of the cell (the filter of a loop that
    removes files) holds no line of its writer's, yet it is the writer's change. The line that now stands
    where lines were dropped (the next one kept, else the one before it) is taken as the writer's, so a
    candidate that differs from the cell in any way is the model's unless every change is the rules'.
    A candidate of no lines made from a cell of some is the writer's change all through: one entry."""
    old, new = base.splitlines(), code.splitlines()
    if len(base_authors) != len(old):
        base_authors = (MODEL,) * len(old)  # unknown: the least trusted
    who = max((writer, *base_authors), key=_TRUST.__getitem__)
    out: list[str] = []
    dropped = False  # lines were deleted just before the next line of `code`
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "delete":
            dropped = True
            continue
        kept = list(base_authors[i1:i2] if tag == "equal" else (who,) * (j2 - j1))
        if dropped and kept:
            kept[0] = max(kept[0], who, key=_TRUST.__getitem__)
            dropped = False
        out.extend(kept)
    if dropped and out:
        out[-1] = max(out[-1], who, key=_TRUST.__getitem__)
    elif dropped:  # every line dropped: nothing left to carry the change but the writer's mark itself
        return (who,)
    return tuple(out)


def writer_words(source: str, authors: tuple[str, ...]) -> str:
    """Who wrote a candidate, in words, from the data: what answered the step (`source`) and the lines' authors."""
    if source != RULES:
        return "the model"
    return "the rules' repair of the model's code" if MODEL in authors else "the built-in rules"


def unified_diff(before: str, after: str, before_name: str = "original", after_name: str = "proposed") -> str:
    """A unified diff for a person to read, of the lines as Python reads them, every hidden character
    (ESC, CR, bidi overrides, zero-width: hidden.py) written as its escape, so what it shows is what
    runs; it ignores a missing final newline (cells rarely end with one)."""
    lines = difflib.unified_diff(code_lines(before), code_lines(after), before_name, after_name, lineterm="")
    return "".join(line + "\n" for line in lines)


def written_aside(source: str, model_written: bool) -> str:
    """A round's title's aside on who wrote its candidate when not the model alone: " (built-in rules)",
    or " (the rules' repair of the model's code)"; "" for the model's."""
    if source != RULES:
        return ""
    return " (the rules' repair of the model's code)" if model_written else " (built-in rules)"


# ---------------------------------------------------------------- the LoopSummary (docs/protocol.md)

MIMETYPE = "application/vnd.jupyter.fixloop+json"
METADATA_KEY = "fixloop"


def now() -> str:
    """The protocol's timestamps: ISO-8601, UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def loop_summary(result: LoopResult, *, cell_id: str | None = None, original: str | None = None,
                 created: str | None = None, decision: str = "pending", plain: bool = False) -> dict:
    """The LoopSummary (JSON-ready) of a LoopResult; `original` defaults to the code the loop started from.
    `plain`: the cell has no `%%fixloop` line (`%fixloop auto`, the Fix button), so Accept writes `patched` alone."""
    return {
        "loop_id": result.loop_id,
        "cell_id": cell_id,
        "status": result.status,
        "reason": result.reason,
        "model": result.model,
        "original": result.source if original is None else original,
        "patched": result.patched,
        "diff": result.diff,
        "max_rounds": result.max_rounds,
        "tokens": result.tokens,
        "cost": result.cost,
        "seconds": round(result.seconds, 3),
        "created": created or now(),
        "decision": decision,
        "plain": plain,
        "effect": result.effect.to_json() if result.effect is not None else None,
        "alternatives": [{"source": a.source, "code": a.code or "", "effect": a.effect,
                          "model_written": "model" in a.authors} for a in result.alternatives],
        "model_written": result.model_written,
        "agreement": result.agreement.to_json() if result.agreement is not None else None,
        "account": result.account.to_json() if result.account is not None else None,
        "read_checks": [{"expr": c.expr, "words": c.words, "passed": c.passed, "text": c.text}
                        for c in result.read_checks],
        "rounds": round_summaries(result),
    }


def round_summaries(result: LoopResult, printed: bool = True) -> list[dict]:
    """The LoopSummary's `rounds`; without `printed`, each receipt's text leaves out what its run printed
    (the history file's)."""
    text = for_people if printed else for_the_file
    return [
        {
            "index": r.index,
            "candidate": r.candidate or "",
            "receipt": {"kind": r.receipt.kind, "text": text(r.receipt)},
            "tokens": r.usage.tokens,
            "cost": r.usage.cost,
            "seconds": round(r.usage.seconds + r.usage.run_seconds, 3),
            "effect": r.effect.text if r.effect is not None else None,
            "source": r.source,
            "model_written": r.model_written,
        }
        for r in result.rounds
    ]

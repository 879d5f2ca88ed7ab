"""Receipts: what one sandbox run produced, typed; plain frozen values, no text rendering here.

The verdict (loop/verdict.py and its loop/judged.py) makes a receipt from a run and decides its `kind`;
receipt/text.py renders what a model reads (`for_model`, within a token budget) and what people read
(`for_people`). A receipt keeps the model's text it was made with (`text`, rendered once by the verdict)
and the facts it was rendered from (`facts`), so that what the loop adds later about the run (the same
code as an earlier one, checks copied into it, regressions: `same_as`, `copied_checks_removed`,
`regressions`) is rendered with it again (text.py's `annotated`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..hidden import clipped
from . import saved
from .effect import Effect

Kind = Literal["ok", "exception", "check_failed", "timeout", "crash", "no_code", "no_repair", "rejected"]

MAX_LINE = 200
OUTPUT_CHECK = "stdout matches --expect-output"
SMELL_CHECK = "what the cell does to the data looks right"
# checks read from what the sandbox reports, never signed by the judge
UNSIGNED = (OUTPUT_CHECK, saved.SAVED_CHECK, saved.STATED_CHECK)
SYNTAX = ("SyntaxError", "IndentationError", "TabError")


Source = Literal["user", "assert", "output", "saved", "stated", "smell", "fact", "following"]
# the sources whose pass is evidence that the values are right (a smell only fails; a fact, what the
# instruction says the code must define, holds or not, and says nothing of the values)
EVIDENCE: tuple[str, ...] = ("user", "assert", "output", "saved", "stated", "following")


@dataclass(frozen=True)
class CheckOutcome:
    """One check and how it went. `source`: what it is, as data (never read back from `expr`): "user" (an
    `--expect` expression, judged and signed), "assert" (an assert of the cell), "output" (`--expect-output`),
    "saved" (the output the notebook's author saved), "stated" (the output an instruction states), "smell"
    (what the run did to the data looks wrong), "fact" (a name the instruction says the code defines),
    "following" (a later cell that checks values: it asserts, and failed before or reads what the run wrote).
    `failing`: for a block of statements that failed, its failing assert (`assert n == 4`; `detail` says why);
    `smell`: for a smell, which one (receipt/smells.py's `Smell.kind`, `detail` is its text)."""

    expr: str
    passed: bool
    detail: str = ""
    source: Source = "user"
    failing: str = ""
    smell: str = ""
    words: str = ""  # a check read from the instruction (loop/derived.py): what it says, shown for its code

    @property
    def evidence(self) -> bool:
        """A pass that says the values are right (not a fact, not a smell)."""
        return self.passed and self.source in EVIDENCE


@dataclass(frozen=True)
class FollowingOutcome:
    """How one later cell of the notebook went after the run. `counted`: its failure fails the run (a
    cell that fails after the original cell too is not counted). `verifies`: why its running verifies the
    run ("it failed after the original cell", "it reads `total`"); "" when it only shows that later cells
    still run (it ran after the original cell too and reads nothing the run wrote): a regression check,
    no evidence."""

    number: int
    source: str
    ok: bool
    ename: str = ""
    evalue: str = ""
    lineno: int | None = None
    line: str = ""
    counted: bool = True
    verifies: str = ""
    cell: int | None = None  # its number in the notebook, when the caller knows it (batch mode): it names the cell
    checks_values: bool = False  # it asserts something (receipt/reads.py `checks_values`): only then is it evidence

    @property
    def evidence(self) -> bool:
        """It runs, discriminates (`verifies`) and checks values: evidence that the run's values are right.
        One that runs and discriminates but checks nothing shows that the fix is compatible ("later cells run
        now"), not that its values are right."""
        return self.ok and bool(self.verifies) and self.checks_values

    @property
    def runs_now(self) -> bool:
        """It runs, and discriminates, but checks no values: a fact about the run, not evidence."""
        return self.ok and bool(self.verifies) and not self.checks_values

    @property
    def label(self) -> str:
        """"following cell 7 (`print(total)`)": the notebook's cell 7 in batch mode; else the 7th after the cell."""
        first = next((line.strip() for line in self.source.splitlines() if line.strip()), "")
        return f"following cell {self.number if self.cell is None else self.cell} (`{clip(first, 60)}`)"

    @property
    def error(self) -> str:
        where = f" at line {self.lineno}: {self.line}" if self.lineno is not None else ""
        return f"{self.ename}: {clip(self.evalue, 200)}{where}"


@dataclass(frozen=True)
class Doubt:
    """A library's warning about the run's own result (pandas guessing a date format against the data, an
    assignment that may not reach the frame, values coerced or rounded away): evidence against the run.
    `kind`: "dates", "assignment", "coercion"; `said`: the warning, one line."""

    kind: str
    said: str


@dataclass(frozen=True)
class Guarded:
    """What the guard (loop/guard.py) took out of the code handed over: `checks`, statements copied from the
    user's checks; `examples`, the names an example copy of the data rebound; `made_up`, the names rebound
    to values the code wrote out itself."""

    checks: int = 0
    examples: tuple[str, ...] = ()
    made_up: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.checks or self.examples or self.made_up)

    def to_json(self) -> dict:
        return {"checks": self.checks, "examples": list(self.examples), "made_up": list(self.made_up)}


# which bound ended a loop that gave up (Account.bound): its rounds, tokens, cost or time, or the model
# answering the same again
BOUNDS = ("rounds", "tokens", "budget", "time", "repeated")


@dataclass(frozen=True)
class Account:
    """Why a loop's result is what it is, as data (the words are rendered from it): `checked`, the source of
    each pass that verified it (CheckOutcome.source; empty: nothing checked its values); `runs_now`, the
    later cells that run now but check no values (a fact, not evidence); `doubts`, the library's warnings
    about its result (a run with one is never `fixed`); `guarded`, what the guard took out of the code
    handed over; `bound`, which of BOUNDS ended a loop that gave up ("" when none did)."""

    checked: tuple[str, ...] = ()
    runs_now: tuple[str, ...] = ()
    doubts: tuple[Doubt, ...] = ()
    guarded: Guarded = Guarded()
    bound: str = ""

    @property
    def verified(self) -> bool:
        return bool(self.checked) and not self.doubts

    def to_json(self) -> dict:
        """The LoopSummary's `account` (docs/protocol.md)."""
        return {"checked": list(self.checked), "verified": self.verified, "runs_now": list(self.runs_now),
                "doubts": [{"kind": d.kind, "said": d.said} for d in self.doubts],
                "guarded": self.guarded.to_json(), "bound": self.bound or None}


@dataclass(frozen=True)
class TracedLine:
    """One line of a wrong-output run's value trace (kernel/trace.py): the values of the followed
    names after it ran, for its first runs and its last (`runs`: (run number, ((name, value), ...)));
    a line of `def` holds the followed arguments of each call (`func` is the function's name)."""

    lineno: int
    line: str
    func: str | None
    hits: int
    runs: tuple[tuple[int, tuple[tuple[str, str], ...]], ...]
    rank: int = 0  # how near its names are to what the check reads (0: the check reads it)
    steps: tuple[tuple[str, str], ...] = ()  # a chain's intermediate values on this line

    @property
    def is_call(self) -> bool:
        return self.func is not None and self.line.startswith(("def ", "async def "))


@dataclass(frozen=True)
class Facts:
    """What a receipt's text is rendered from besides its typed fields (receipt/text.py reads it).

    `form` "run": a run that ended (`error`: the runner's description of what it raised, read with care;
    `diff`: a wrong output's diff with the expected one; `trace_note`, `matches`: the value trace's note and
    what the cell's filters matched). "timeout": `result` is what the stopped run wrote (None: nothing
    readable). "crash": the receipt's `evalue` and `stderr` say it all. "given": `said` is the text, shown
    as is and never cut (a rejected candidate, a reply without code)."""

    form: Literal["run", "timeout", "crash", "given"] = "given"
    error: dict | None = None
    diff: tuple[str, ...] = ()
    trace_note: str = ""
    matches: tuple[str, ...] = ()
    result: dict | None = None
    said: str = ""


@dataclass(frozen=True)
class Receipt:
    """The outcome of running one candidate. `text` is exactly what the model is shown (rendered by
    receipt/text.py's `for_model` when the receipt was made, and again by `annotated`); its one-line headline
    and what people read are rendered from the fields when read (text.py's `headline`, `for_people`)."""

    kind: Kind
    text: str
    ename: str | None = None
    evalue: str | None = None
    lineno: int | None = None
    line: str | None = None
    checks: tuple[CheckOutcome, ...] = ()
    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    context: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    doubts: tuple[Doubt, ...] = field(default=(), compare=False)  # the library's warnings about the result
    notes: tuple[str, ...] = field(default=(), compare=False)
    effect: Effect | None = field(default=None, compare=False)
    digest: str = field(default="", compare=False)  # the content digest of the value the cell shows last ("": none)
    # a last line `print(x)` or `display(x)`: the digest of x, and the characters its print wrote at the end of stdout
    printed_digest: str = field(default="", compare=False)
    printed_chars: int = field(default=0, compare=False)
    following: tuple[FollowingOutcome, ...] = field(default=(), compare=False)
    trace: tuple[TracedLine, ...] = field(default=(), compare=False)
    column: int | None = field(default=None, compare=False)  # where on the failing line a SyntaxError points
    # what the loop says about the run, rendered into `text` with it by text.py's `annotated`, within the budget:
    same_as: str | None = field(default=None, compare=False)  # not run again: the same code as this run
    copied_checks_removed: int = field(default=0, compare=False)  # statements copied from the checks, removed
    # the user's names whose assignment copied from the instruction's example was removed (`Guard.without_example_data`)
    example_removed: tuple[str, ...] = field(default=(), compare=False)
    # the user's names whose assignment of values the model wrote out itself was removed (`Guard.without_made_up_data`)
    made_up_removed: tuple[str, ...] = field(default=(), compare=False)
    regressions: tuple[tuple[str, int], ...] = field(default=(), compare=False)  # (check, round it passed in)
    facts: Facts | None = field(default=None, compare=False, repr=False)  # what `text` was rendered from; None: given

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


@dataclass(frozen=True)
class Baseline:
    """What a candidate's run is compared with: how the following cells went after the original cell
    (`ran`: without error; `failed`: raised, so not counted against a candidate) and what it wrote."""

    ran: frozenset[int] = frozenset()
    failed: frozenset[int] = frozenset()
    effect: Effect | None = None

    @classmethod
    def of(cls, original: Receipt) -> Baseline:
        return cls(frozenset(f.number for f in original.following if f.ok),
                   frozenset(f.number for f in original.following if not f.ok), original.effect)


NO_REPAIR = "the built-in engine has no repair for this"


def no_repair(reply: str) -> Receipt:
    """The built-in engine answered without code: not a model's reply (no call was made), so not `no_code`."""
    reply = " ".join(reply.split())
    if not reply or reply.startswith("The built-in engine has no repair for"):
        return Receipt(kind="no_repair", text=NO_REPAIR)
    return Receipt(kind="no_repair", text=reply[0].lower() + reply[1:])


def no_code(reply: str, cut: int = 0) -> Receipt:
    """A model's reply with no code; `cut`: it was stopped at that many tokens (`reply_tokens`) first."""
    shown = reply.strip().replace("\n", " ")
    shown = clipped(shown, 160)
    why = (f"the reply was cut at {cut} tokens (reply_tokens) before a complete ```python block" if cut
           else "the reply had no ```python block with the complete cell")
    text = f"No code: {why}" + (f" (it said: {shown!r})" if shown else " (it was empty)")
    return Receipt(kind="no_code", text=text)


def rejected(reason: str) -> Receipt:
    """The candidate was not run, or not accepted, because it cheats (see guard.py)."""
    return Receipt(kind="rejected", text=f"Rejected: {reason}")


def clip(line: str, limit: int = MAX_LINE) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."

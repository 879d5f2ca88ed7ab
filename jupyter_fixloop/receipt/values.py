"""Receipts: what one sandbox run produced, typed, and trimmed into the text the model reads.

A receipt reports only what the run produced. Its `text` is deliberately short: the failing user
line with its number, the error, the facts gathered at the failure, and head/tail of the output.
It fits a token budget (counted by the counter the loop passes in, the model's own tokenizer
for a litellm model): when the full text is too long, it is
rendered again at a lower level of detail, dropping the least useful parts first; the headline and
the failing line are never dropped.

In the loop the built-in engine reads the typed fields (edits.ParsedReceipt.of); it reads the text back
only from a prompt (engine.answer, the bench's cases), so keep these stable: the headline
`Ename: evalue`, `  at line N of the cell: ...`, a `Context:` section of lines indented by two
spaces (continuation lines of one fact by four), the failed checks' items under the headline
(`  FAILED: check -- detail`, `  smell: ...`, ...) and the value trace's lines. What the loop adds
about a run (the same code as an earlier one, checks copied into it, regressions) are fields too,
rendered into the text with the run's lines within the budget (`Receipt.annotated`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from . import effect as effects, reads, saved, smells as smell_rules
from .effect import Effect

Kind = Literal["ok", "exception", "check_failed", "timeout", "crash", "no_code", "no_repair", "rejected"]

DEFAULT_TOKENS = 600
MIN_BUDGET = 50
HEAD_LINES = 8
TAIL_LINES = 8
MAX_LINE = 200
OUTPUT_CHECK = "stdout matches --expect-output"
SMELL_CHECK = "what the cell does to the data looks right"
UNSIGNED = (OUTPUT_CHECK, saved.SAVED_CHECK)  # checks read from what the sandbox reports, never signed by the judge
_SYNTAX = ("SyntaxError", "IndentationError", "TabError")


@dataclass(frozen=True)
class CheckOutcome:
    """One check (an `--expect` expression or an `assert` of the cell) and how it went."""

    expr: str
    passed: bool
    detail: str = ""


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

    @property
    def label(self) -> str:
        first = next((line.strip() for line in self.source.splitlines() if line.strip()), "")
        return f"following cell {self.number} (`{_clip(first, 60)}`)"

    @property
    def error(self) -> str:
        where = f" at line {self.lineno}: {self.line}" if self.lineno is not None else ""
        return f"{self.ename}: {_clip(self.evalue, 200)}{where}"


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
class Receipt:
    """The outcome of running one candidate. `text` is exactly what the model is shown."""

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
    notes: tuple[str, ...] = field(default=(), compare=False)
    effect: Effect | None = field(default=None, compare=False)
    following: tuple[FollowingOutcome, ...] = field(default=(), compare=False)
    trace: tuple[TracedLine, ...] = field(default=(), compare=False)
    column: int | None = field(default=None, compare=False)  # where on the failing line a SyntaxError points
    # what the loop says about the run, rendered into `text` with it by `annotated`, within the budget:
    same_as: str | None = field(default=None, compare=False)  # not run again: the same code as this run
    copied_checks_removed: int = field(default=0, compare=False)  # statements copied from the checks, removed
    regressions: tuple[tuple[str, int], ...] = field(default=(), compare=False)  # (check, round it passed in)
    body: Body | None = field(default=None, compare=False, repr=False)  # how `text` was rendered; None: as given

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @property
    def headline(self) -> str:
        """One line for tables and progress bars."""
        return self.text.splitlines()[0] if self.text else self.kind

    @property
    def run_headline(self) -> str:
        """The first line of what the run produced (the error), after the line saying it was not run again."""
        lines = self.text.splitlines()[1 if self.same_as else 0:]
        return lines[0] if lines else self.kind

    def annotated(self, **fields) -> Receipt:
        """This receipt with what the loop says about the run set (`same_as`, `copied_checks_removed`,
        `regressions`) and its text rendered again with it, within its budget (`_said`)."""
        body = self.body or Body(lambda detail, text=self.text: text.splitlines(), None)
        said = replace(self, body=body, **fields)
        return replace(said, text=_said(said, body))


def estimate_tokens(text: str) -> int:
    """Tokens of `text` without a tokenizer: about 4 bytes a token, the usual figure for English and
    code)."""
    return (len(text.encode("utf-8")) + 3) // 4


@dataclass(frozen=True)
class Budget:
    """How many tokens a receipt may take, and how they are counted (the model's tokenizer when the
    loop knows one; an estimate otherwise, which needs no import)."""

    tokens: int = DEFAULT_TOKENS
    count: Callable[[str], int] = estimate_tokens

    def fits(self, text: str) -> bool:
        """A text of no more bytes than the budget fits whatever the tokenizer (a token is at least a byte)."""
        return len(text.encode("utf-8")) <= self.tokens or self.count(text) <= self.tokens


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class Body:
    """How a receipt's text was rendered: `render(detail)` gives its lines at one level of detail, fitted
    into `budget`; kept so that what the loop adds later (`Receipt.annotated`) is fitted with it."""

    render: Callable[[Detail], list[str]]
    budget: Budget | None = DEFAULT_BUDGET  # None: a text given as is, never cut


@dataclass(frozen=True)
class Detail:
    """How much of each part a receipt shows; `LEVELS` go from everything to the bare error."""

    output_lines: int = HEAD_LINES  # head and tail each
    context_items: int = 12
    context_rows: bool = True  # a DataFrame's 3 rows under its shape and columns
    callers: int = 4
    warnings: int = 10
    passed_checks: bool = True
    diff_lines: int = 24
    message_chars: int = 2000
    effect_lines: int = 6  # what the run did to the data, when its output is wrong
    trace_lines: int = 6  # lines of the value trace, when the output is wrong
    trace_runs: int = 3  # runs of one traced line (first two and last)


LEVELS = (
    Detail(),
    Detail(output_lines=3, warnings=5, diff_lines=12, effect_lines=4, trace_lines=5),
    Detail(output_lines=3, context_rows=False, callers=2, warnings=3, diff_lines=8, effect_lines=3, trace_lines=4),
    Detail(output_lines=1, context_items=4, context_rows=False, callers=1, warnings=2, passed_checks=False,
           diff_lines=6, message_chars=600, effect_lines=2, trace_lines=3, trace_runs=2),
    Detail(output_lines=0, context_items=2, context_rows=False, callers=0, warnings=1, passed_checks=False,
           diff_lines=4, message_chars=300, effect_lines=1, trace_lines=2, trace_runs=1),
)


# ---------------------------------------------------------------- building receipts


def from_run(
    result: dict,
    checks_expected: int = 0,
    notes: tuple[str, ...] = (),
    budget: Budget = DEFAULT_BUDGET,
    expect_output: str | None = None,
    original: str | None = None,
    following_cells: tuple[tuple[int, str], ...] = (),
    baseline: Baseline | None = None,
    ran: str | None = None,
) -> Receipt:
    """Turn the runner's JSON description of a run into a typed receipt of at most `budget` tokens.

    `expect_output`: what the cell should print; compared with its stdout when it ran without error.
    `original`: the user's cell; when given, the run's effect is judged for smells (smells.py), and
    a smell fails the run. `following_cells`: (number, source) of the later cells that ran after it, in
    order; `baseline`: how they went after the original cell (None: this is the original cell's run, and
    they do not judge it); `ran`: the code that ran, read for smells in the code itself (a result thrown
    away) and for what it wrote (a later cell that reads it verifies the run).
    """
    if result.get("internal"):
        return crash(f"the sandbox runner failed: {result['internal']}")
    effect = _judged_effect(result, original, ran)
    wrote = reads.written(ran, effect, baseline.effect if baseline else None)
    later = _following(result.get("following") or [], following_cells, baseline, wrote)
    context = (result.get("error") or {}).get("context") or ()
    said = {c for c in context if isinstance(c, str)}  # a note the error's context holds is said once, there
    notes = tuple(n for n in notes if n not in said) + tuple(
        f"{f.label} fails after the original cell, so it is not counted: {f.error}" for f in later
        if not f.ok and not f.counted)
    warnings = tuple(_warning_line(w) for w in result.get("warnings", []))
    error = result.get("error")
    checks, diff = _outcomes(result, effect, later, expect_output)
    common = dict(
        stdout=result.get("stdout", ""),
        stderr=result.get("stderr", ""),
        value=result.get("value"),
        warnings=warnings,
        seconds=result.get("seconds", 0.0),
        notes=tuple(notes),
        effect=effect,
        following=later,
    )
    trace, trace_note = _trace(result.get("trace")) if error is None else ((), "")
    parts = _Parts(result=result, error=error, checks=checks, warnings=warnings, notes=tuple(notes), diff=diff,
                   effect=effect, trace=trace, trace_note=trace_note, matches=_matches(result.get("matches")))
    if error is not None:
        return _raised(error, parts, budget, common)
    failed = [c for c in checks if not c.passed]
    kind = "check_failed" if failed else "ok"
    return Receipt(kind=kind, text=fit(parts.render, budget), checks=checks, trace=trace if failed else (),
                   context=parts.matches if failed else (), body=Body(parts.render, budget), **common)


def _matches(raw) -> tuple[str, ...]:
    """What the cell's filters, merges and concats matched (kernel/matches.py), read with care: the
    sandbox's to forge, so only short strings are kept."""
    if not isinstance(raw, list):
        return ()
    return tuple(_clip(m, 600) for m in raw if isinstance(m, str))[:4]


def _judged_effect(result: dict, original: str | None, ran: str | None) -> Effect | None:
    """What the run did to the data; with the user's cell (`original`), its smells too (a warning that
    says data was lost counts as one when the cell ran without error)."""
    effect = effects.from_run(result.get("effect"))
    if original is None:
        return effect
    effect = smell_rules.judged(effect, original, ran)
    lost = smell_rules.warned(result.get("warnings") or []) if result.get("error") is None else ()
    if lost:
        effect = replace(effect or Effect(), smells=(effect.smells if effect else ()) + lost)
    return effect


def _outcomes(result: dict, effect: Effect | None, later: tuple[FollowingOutcome, ...],
              expect_output: str | None) -> tuple[tuple[CheckOutcome, ...], list[str]]:
    """The run's checks in order (the judge's; when the cell ran without error, then the expected output,
    the counted following cells and the smells), and the diff of a wrong output."""
    checks = tuple(CheckOutcome(c["expr"], bool(c["passed"]), c.get("detail", "")) for c in result.get("checks", []))
    if result.get("error") is not None:
        return checks, []
    diff: list[str] = []
    if expect_output is not None:
        if isinstance(expect_output, saved.SavedOutput):  # the output a notebook's author saved
            passed, detail, diff = saved.saved_check(result.get("stdout", ""), result.get("shown"), expect_output)
            outcome = CheckOutcome(saved.SAVED_CHECK, passed, detail)
        else:
            outcome, diff = output_check(result.get("stdout", ""), expect_output)
        checks += (outcome,)
    # a later cell that still runs is evidence only when it discriminates (FollowingOutcome.verifies)
    checks += tuple(CheckOutcome(f.label, f.ok, f.verifies if f.ok else f.error) for f in later
                    if f.verifies or (f.counted and not f.ok))
    checks += tuple(CheckOutcome(SMELL_CHECK, False, s) for s in (effect.smells if effect else ()))
    return checks, diff


def _raised(error: dict, parts: _Parts, budget: Budget, common: dict) -> Receipt:
    """The receipt of a run that raised: in the cell, or in a check (the failing check is the last one)."""
    check = error.get("check")
    if check:
        parts = replace(parts, checks=parts.checks + (CheckOutcome(check["expr"], False, check.get("detail", "")),))
    return Receipt(
        kind="check_failed" if check else "exception",
        text=fit(parts.render, budget),
        ename=error["ename"],
        evalue=error["evalue"],
        lineno=error.get("lineno"),
        line=error.get("line"),
        checks=parts.checks,
        context=tuple(error.get("context", [])) + parts.matches,
        column=_column(error),
        body=Body(parts.render, budget),
        **common,
    )


def _column(error: dict) -> int | None:
    """The column a SyntaxError points at (the text says it as `  (column N)`)."""
    offset = error.get("offset")
    return offset if isinstance(offset, int) and offset and error["ename"] in _SYNTAX else None


def _trace(raw) -> tuple[tuple[TracedLine, ...], str]:
    """The value trace the sandbox sent (kernel/trace.py), read with care: it is the sandbox's to
    forge, so a bad shape is dropped, strings are clipped, and nothing here can raise."""
    if not isinstance(raw, dict) or not isinstance(raw.get("lines"), list):
        return (), ""
    names = [n for n in raw.get("names") or [] if isinstance(n, str)] if isinstance(raw.get("names"), list) else []
    found = []
    for item in raw["lines"][:50]:
        try:
            runs = []
            for run in item["values"][:3]:
                values = tuple((_clip(str(k), 40), _clip(str(v), 240)) for k, v in list(run["values"].items())[:6])
                runs.append((int(run["run"]), values))
            shown = {k for _, values in runs for k, _ in values}
            rank = min((names.index(n) for n in shown if n in names), default=len(names))
            func = item.get("func")
            steps = tuple((_clip(str(a), 80), _clip(str(b), 240)) for a, b in (item.get("steps") or [])[:3])
            found.append(TracedLine(int(item["lineno"]), _clip(str(item.get("line") or ""), MAX_LINE),
                                    _clip(str(func), 60) if func else None, int(item["hits"]), tuple(runs), rank,
                                    steps))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    note = raw.get("error")
    return tuple(found), _clip(str(note), 200) if note else ""


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


def _following(outcomes, cells: tuple[tuple[int, str], ...], baseline: Baseline | None,
               wrote: reads.Written) -> tuple[FollowingOutcome, ...]:
    """How the following cells went, read with care (what the sandbox sends is the sandbox's to forge),
    and which of them verify the run: one that failed (or did not run) after the original cell and runs
    now, or one that reads what the run wrote."""
    found = []
    for o, (number, source) in zip(outcomes if isinstance(outcomes, list) else [], cells):
        o = o if isinstance(o, dict) else {"ok": False, "ename": "?"}
        ok = o.get("ok") is True
        lineno = o.get("lineno") if isinstance(o.get("lineno"), int) else None
        counted = baseline is not None and number not in baseline.failed
        found.append(FollowingOutcome(number, source, ok, _clip(str(o.get("ename") or ""), 80),
                                      _clip(str(o.get("evalue") or ""), 300), lineno,
                                      _clip(str(o.get("line") or ""), MAX_LINE),
                                      counted=counted or ok, verifies=_verifies(ok, number, source, baseline, wrote)))
    return tuple(found)


def _verifies(ok: bool, number: int, source: str, baseline: Baseline | None, wrote: reads.Written) -> str:
    """Why a following cell that runs verifies the run, in words; "" when it does not."""
    if not ok:
        return ""
    if baseline is not None and number not in baseline.ran:
        return ("it failed after the original cell and runs now" if number in baseline.failed else
                "it did not run after the original cell and runs now")
    read = reads.read_by(source, wrote)
    return f"it reads {read}, which the code wrote" if read else ""


def timeout(seconds: float, result: dict | None = None, budget: Budget = DEFAULT_BUDGET) -> Receipt:
    """A run stopped at its time limit; if the interrupt landed, say on which line it was."""
    error = (result or {}).get("error") or {}
    lineno, line = error.get("lineno"), error.get("line")

    later = [o for o in (result or {}).get("following") or [] if o.get("ename") == "KeyboardInterrupt"]

    def render(detail: Detail) -> list[str]:
        if later and lineno is None:
            where = f": line {later[0]['lineno']}: {later[0].get('line') or ''}" if later[0].get("lineno") else ""
            return [f"Timeout: the cell ran, then its following cells were still running after {seconds:g} s "
                    f"and were stopped{where}".rstrip()]
        lines = [f"Timeout: the cell was still running after {seconds:g} s and was stopped"]
        if lineno is not None:
            lines.append(f"  stopped at line {lineno}: {line}")
            lines += _frame_trail(error, detail)
        if result:
            lines += _output_lines(result, detail)
        return lines

    return Receipt(kind="timeout", text=fit(render, budget), ename="Timeout", lineno=lineno, line=line, seconds=seconds,
                   body=Body(render, budget))


def crash(message: str, stderr_tail: str = "", budget: Budget = DEFAULT_BUDGET) -> Receipt:
    """The kernel process died (segfault, os._exit, out of memory): it is replaced, not trusted."""

    def render(detail: Detail) -> list[str]:
        lines = [f"Crash: {message}"]
        if stderr_tail.strip() and detail.output_lines:
            lines.append("kernel stderr (tail):")
            lines += _indent(_head_tail(stderr_tail, detail.output_lines, detail.output_lines))
        return lines

    return Receipt(kind="crash", text=fit(render, budget), ename="Crash", evalue=message, stderr=stderr_tail,
                   body=Body(render, budget))


NO_REPAIR = "the built-in engine has no repair for this"


def no_repair(reply: str) -> Receipt:
    """The built-in engine answered without code: not a model's reply (no call was made), so not `no_code`."""
    reply = " ".join(reply.split())
    if not reply or reply.startswith("The built-in engine has no repair for"):
        return Receipt(kind="no_repair", text=NO_REPAIR)
    return Receipt(kind="no_repair", text=reply[0].lower() + reply[1:])


def no_code(reply: str) -> Receipt:
    shown = reply.strip().replace("\n", " ")
    shown = shown[:160] + ("..." if len(shown) > 160 else "")
    text = (
        "No code: the reply had no ```python block with the complete cell"
        + (f" (it said: {shown!r})" if shown else " (it was empty)")
    )
    return Receipt(kind="no_code", text=text)


def rejected(reason: str) -> Receipt:
    """The candidate was not run, or not accepted, because it cheats (see guard.py)."""
    return Receipt(kind="rejected", text=f"Rejected: {reason}")


# ---------------------------------------------------------------- what the loop says about a run
#
# A run's receipt is made from the run alone (`from_run`). The loop then knows more: the candidate is
# the same code as an earlier run and was not run again (`same_as`), statements copied from the checks
# were removed from it (`copied_checks_removed`), checks that passed in an earlier round fail now
# (`regressions`). `Receipt.annotated` sets those fields and renders the text again, here: the line of
# `same_as` first, the run's own lines, then a line for each regression and the note on copied checks;
# when all of it does not fit the budget, the run's lines are rendered at a lower level of detail.


def _said(receipt: Receipt, body: Body) -> str:
    """The text of `receipt`: its run's lines (`body`) between the loop's, in the body's budget."""
    head = [f"(same code as {receipt.same_as}, not run again)"] if receipt.same_as else []
    tail = [f"Regression: {check} passed in round {index} and fails now" for check, index in receipt.regressions]
    if receipt.copied_checks_removed:
        tail.append(f"Note: {receipt.copied_checks_removed} statement(s) copied from the checks were removed from "
                    "your answer; the checks run on their own after the cell.")
    if body.budget is None:
        return "\n".join([*head, *body.render(LEVELS[0]), *tail])
    budget = replace(body.budget, tokens=max(MIN_BUDGET, int(body.budget.tokens)))
    for detail in LEVELS:
        text = "\n".join([*head, *body.render(detail), *tail])
        if budget.fits(text):
            return text
    # cut to fit: the run's lines keep their headline and failing line, in what the loop's lines leave
    room = replace(budget, tokens=max(MIN_BUDGET, budget.tokens - budget.count("\n".join([*head, *tail])) - 1))
    return cut("\n".join([*head, fit(body.render, room), *tail]), budget)


# ---------------------------------------------------------------- expected output


def output_check(stdout: str, expected: str) -> tuple[CheckOutcome, list[str]]:
    """Compare the cell's stdout with the expected text (trailing spaces and blank lines ignored).

    Returns the check and a compact diff: `-` lines were expected, `+` lines were printed.
    """
    want, got = _normalized(expected), _normalized(stdout)
    if want == got:
        return CheckOutcome(OUTPUT_CHECK, True), []
    diff = [
        line for line in difflib.unified_diff(want, got, "expected", "actual", n=1, lineterm="")
        if not line.startswith(("---", "+++"))
    ]
    differing = sum(1 for line in diff if line[:1] in "+-")
    detail = f"{len(got)} line(s) printed, {len(want)} expected; {differing} line(s) differ"
    return CheckOutcome(OUTPUT_CHECK, False, detail), diff


def _normalized(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


# ---------------------------------------------------------------- fitting the budget


def fit(render, budget: Budget = DEFAULT_BUDGET) -> str:
    """The most detailed rendering of `render(detail)` within `budget` tokens; at worst a hard cut
    that keeps the first lines (the error and where it happened)."""
    budget = replace(budget, tokens=max(MIN_BUDGET, int(budget.tokens)))
    text = ""
    for detail in LEVELS:
        text = "\n".join(render(detail))
        if budget.fits(text):
            return text
    return _hard_cut(text.splitlines(), budget)


def cut(text: str, budget: Budget) -> str:
    """`text` as is when it fits `budget`, else its first lines (the error and where it happened first)
    and a line saying it was cut."""
    return text if budget.fits(text) else _hard_cut(text.splitlines(), budget)


def _hard_cut(lines: list[str], budget: Budget) -> str:
    """The headline (its message shortened if need be) and the failing line, then what else fits."""
    marker = f"... (receipt cut to fit {budget.tokens} tokens)"
    at = [line for line in lines[1:] if line.lstrip().startswith(("at line", "stopped at line"))][:1]
    rest = [line for line in lines[1:] if line not in at]
    at = [_clip(line, 600) for line in at]
    head = lines[0] if lines else ""
    for limit in (400, 200, 120, 60, 30):
        head = _clip(lines[0], limit)
        if budget.fits("\n".join([head, *at, marker])):
            break
    kept = [head, *at]
    for line in rest:
        if not budget.fits("\n".join(kept + [line, marker])):
            break
        kept.append(line)
    return "\n".join(kept + [marker])


# ---------------------------------------------------------------- the parts of a receipt


@dataclass(frozen=True)
class _Parts:
    result: dict
    error: dict | None
    checks: tuple[CheckOutcome, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    diff: list[str]
    effect: Effect | None = None
    trace: tuple[TracedLine, ...] = ()
    trace_note: str = ""
    matches: tuple[str, ...] = ()  # what the cell's filters, merges and concats matched

    def render(self, detail: Detail) -> list[str]:
        if self.error is not None:
            lines = _error_lines(self.error, detail)
            lines += _check_lines(self.checks, detail, self.error)
            lines += _context_lines([*self.error.get("context", []), *self.matches], detail)
        else:
            failed = [c for c in self.checks if not c.passed]
            smelly = [c for c in failed if c.expr == SMELL_CHECK]
            if smelly and len(smelly) == len(failed):
                lines = [f"Smell: {smelly[0].detail}" if len(smelly) == 1
                         else f"{len(smelly)} smells in what the cell does to the data"]
            elif len(failed) == 1:
                lines = [f"Check failed: {check_label(failed[0])}"]
            elif failed:
                lines = [f"{len(failed)} checks failed"]
            else:
                lines = [f"ran without error; {len(self.checks)} check(s) passed" if self.checks
                         else "ran without error"]
            alone = len(smelly) == len(failed) == 1  # the headline says it all
            checks = _without_where(self.checks) if self.trace else self.checks  # the trace shows the values
            lines += _check_lines(checks, detail, None) if failed and not alone else []
            lines += _trace_lines(self.trace, self.trace_note, detail) if failed else []
            lines += _effect_lines(self.effect, detail, self.trace) if failed else []
            lines += _context_lines(list(self.matches), detail) if failed else []
            lines += _diff_lines(self.diff, detail)
        if not self.diff:
            lines += _output_lines(self.result, detail)
        lines += _warning_lines(self.warnings, detail)
        return lines + list(self.notes)


def _error_lines(error: dict, detail: Detail) -> list[str]:
    evalue = _clip(error["evalue"], detail.message_chars)
    lines = [f"{error['ename']}: {evalue}".rstrip(": ")]
    if error.get("lineno") is not None:
        lines.append(f"  at line {error['lineno']} of the cell: {error.get('line') or ''}".rstrip())
        if error.get("offset") and error["ename"] in _SYNTAX:
            lines.append(f"  (column {error['offset']})")
    lines += _frame_trail(error, detail)
    if error.get("during_check"):
        lines.append(f"  while evaluating the check: {error['during_check']}")
    for link in error.get("chain", [])[-1:]:
        if (link["ename"], link["evalue"]) == (error["ename"], error["evalue"]):
            continue  # pandas re-raises the same KeyError from its own
        where = f" (at line {link['lineno']}: {link['line']})" if link.get("lineno") is not None else ""
        lines.append(f"  caused by {link['ename']}: {_clip(link['evalue'], detail.message_chars)}{where}")
    return lines


def _frame_trail(error: dict, detail: Detail) -> list[str]:
    """User frames (innermost last, recursion collapsed) and the last library frame; other library
    frames are dropped, and so are callers on the failing line itself (a comprehension, a lambda)."""
    frames = error.get("frames", [])
    user = [f for f in frames if f["user"]]
    callers = [f for f in user[:-1] if f.get("repeat") or f["lineno"] != error.get("lineno")]
    lines = _callers(callers, detail.callers)
    if user and user[-1].get("repeat"):
        lines.append(f"  {_repeat(user[-1])}")
    if frames and not frames[-1]["user"]:
        last = frames[-1]
        where = _short_path(last["file"])
        lines.append(f"  raised in {where}:{last['lineno']} ({last['name']}): {_clip(last['line'], 120)}".rstrip())
    return lines


def _callers(callers: list[dict], limit: int) -> list[str]:
    """The outermost caller and the innermost ones, `limit` lines at most."""
    if limit <= 0 or not callers:
        return []
    if len(callers) <= limit:
        return [_caller_line(f) for f in callers]
    if limit == 1:
        return [_caller_line(callers[-1])]
    inner = callers[-(limit - 1):]
    hidden = len(callers) - len(inner) - 1
    return [_caller_line(callers[0]), f"  ... {hidden} more call(s) ..."] + [_caller_line(f) for f in inner]


def _caller_line(f: dict) -> str:
    line = f"  called from line {f['lineno']} ({f['name']}): {_clip(f['line'], 160)}"
    return line + (f" -- {_repeat(f)}" if f.get("repeat") else "")


def _repeat(f: dict) -> str:
    if f.get("block", 1) > 1:
        return (f"recursion: a cycle of {f['block']} calls from line {f['lineno']} ({f['name']}) repeated "
                f"{f['repeat']} times")
    return f"recursion: line {f['lineno']} ({f['name']}) repeated {f['repeat']} times"


def _short_path(path: str) -> str:
    marker = "site-packages/"
    if marker in path:
        return path.split(marker, 1)[1]
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def _check_lines(checks: tuple[CheckOutcome, ...], detail: Detail, error: dict | None) -> list[str]:
    lines = []
    for c in checks:
        if c.passed:
            if detail.passed_checks:
                unsigned = " (compared with the output the sandbox reports: unsigned)" if c.expr in UNSIGNED else ""
                lines.append(f"  passed: {check_label(c)}{unsigned}")
            continue
        if error is not None and error.get("check") and c.expr == error["check"]["expr"] and c.detail:
            lines += _item(f"assert failed: {c.detail}", detail.context_rows)  # the assert is the line above
            continue
        if c.expr == SMELL_CHECK:
            lines += _item(f"smell: {c.detail}", detail.context_rows)
            continue
        if _is_block(c.expr) and c.detail.startswith("assert ") and " failed: " in c.detail:
            failing, why = c.detail.split(" failed: ", 1)  # the block's failing assert, then why
            shown = why.splitlines() if detail.context_rows else why.splitlines()[:1]
            lines += ["  " + _clip(f"AssertionError: {failing}", 400)] + ["    " + _clip(line, 400) for line in shown]
            continue
        lines += _item(f"FAILED: {check_label(c)}" + (f" -- {c.detail}" if c.detail else ""), detail.context_rows)
    return lines


def check_label(c: CheckOutcome) -> str:
    """A check in one line: the expression; for a block of statements, its failing assert (or its first line)."""
    if not _is_block(c.expr):
        return c.expr
    if not c.passed and c.detail.startswith("assert ") and " failed: " in c.detail:
        return c.detail.split(" failed: ", 1)[0]
    first = c.expr.strip().splitlines()[0]
    return f"{first} ... ({len(c.expr.strip().splitlines())} lines)"


def _is_block(expr: str) -> bool:
    return "\n" in expr.strip() or expr.lstrip().startswith("assert ")


def _effect_lines(effect: Effect | None, detail: Detail, trace: tuple[TracedLine, ...] = ()) -> list[str]:
    """What the run did to the data (smells are already among the failed checks)."""
    if effect is None or not detail.effect_lines:
        return []
    traced = {name for t in trace for _, values in t.runs for name, _ in values}  # the trace says them already
    changes = [c.text() for c in effect.changes if c.name not in traced]
    if not changes:
        return []
    shown = [_clip(line, MAX_LINE) for line in changes[: detail.effect_lines]]
    if len(changes) > detail.effect_lines:
        shown.append(f"... {len(changes) - detail.effect_lines} more name(s) changed")
    return ["Effect on the data:"] + _indent(shown)


def _without_where(checks: tuple[CheckOutcome, ...]) -> tuple[CheckOutcome, ...]:
    """Failed checks without their `; where name = value` parts, which the value trace says better."""
    return tuple(replace(c, detail="\n".join(line.split("; where ", 1)[0] for line in c.detail.splitlines()))
                 if not c.passed else c for c in checks)


TRACE_HEADING = "Values after each line (the cell re-run under a tracer):"


def _trace_lines(trace: tuple[TracedLine, ...], note: str, detail: Detail) -> list[str]:
    """The few lines where the checked values were made, each with its values: those nearest to
    what the check reads, shown in the cell's order."""
    if not trace or not detail.trace_lines:
        return []
    # a loop's header (`for v in values:`) says least: it goes first when lines must go
    chosen = sorted(trace, key=lambda t: (t.line.startswith(("for ", "async for ")), t.rank, -t.lineno))
    chosen = chosen[: detail.trace_lines]
    lines = [TRACE_HEADING]
    for t in sorted(chosen, key=lambda t: t.lineno):
        runs = list(t.runs)
        if len(runs) > detail.trace_runs:
            runs = runs[: detail.trace_runs - 1] + runs[-1:] if detail.trace_runs > 1 else runs[-1:]
        if t.is_call:
            lines.append(f"  line {t.lineno}, {t.func} called {t.hits} time(s): {t.line}")
        elif t.hits > 1:
            lines.append(f"  line {t.lineno} (ran {t.hits} times): {t.line}")
        else:
            lines.append(f"  line {t.lineno}: {t.line}")
        lines += [_clip(f"    {source} -> {value}", 2 * MAX_LINE) for source, value in t.steps[-detail.trace_runs:]]
        said_runs = ["; ".join(f"{k} = {v}" for k, v in values) for _, values in runs]
        if not t.is_call and t.hits > 1 and sum(len(x) for x in said_runs) <= 90:  # short: on one line
            lines.append("    " + "; ".join(f"run {hit}: {x}" for (hit, _), x in zip(runs, said_runs)))
            continue
        for hit, values in runs:
            said = "; ".join(f"{k} = {v}" for k, v in values)
            if t.is_call:
                lines.append(_clip(f"    call {hit}: {said}", 2 * MAX_LINE))
            elif t.hits > 1:
                lines.append(_clip(f"    run {hit}: {said}", 2 * MAX_LINE))
            else:
                lines.append(_clip(f"    {said}", 2 * MAX_LINE))
    if note:
        lines.append(f"  ({note})")
    return lines


def _diff_lines(diff: list[str], detail: Detail) -> list[str]:
    if not diff:
        return []
    shown = [_clip(line, MAX_LINE) for line in diff[: detail.diff_lines]]
    if len(diff) > detail.diff_lines:
        shown.append(f"... {len(diff) - detail.diff_lines} more diff line(s)")
    return ["Output diff (- expected, + printed):"] + _indent(shown)


def _context_lines(context: list[str], detail: Detail) -> list[str]:
    if not context:
        return []
    lines = ["Context:"]
    for fact in context[: detail.context_items]:
        lines += _item(fact, detail.context_rows)
    return lines


def _item(text: str, rows: bool) -> list[str]:
    """One fact: its first line indented by two spaces, the rest (a DataFrame's rows) by four."""
    first, *rest = text.splitlines() or [""]
    return ["  " + _clip(first, 400)] + (["    " + _clip(r, MAX_LINE) for r in rest] if rows else [])


def _output_lines(result: dict, detail: Detail) -> list[str]:
    lines = []
    for name in ("stdout", "stderr"):
        text = result.get(name) or ""
        if not text.strip():
            continue
        if not detail.output_lines:
            lines.append(f"{name}: {len(text.splitlines())} line(s), not shown")
            continue
        lines.append(f"{name}:")
        lines += _indent(_head_tail(text, detail.output_lines, detail.output_lines))
    return lines


def _warning_line(w: dict) -> str:
    where = f" (line {w['lineno']})" if w.get("lineno") else ""
    base = w.get("base")
    kind = f"{w['category']} (a {base})" if base and base not in (w["category"], "Warning") else w["category"]
    return f"{kind}{where}: {' '.join(str(w['message']).split())}"


def _warning_lines(warnings: tuple[str, ...], detail: Detail) -> list[str]:
    if not warnings:
        return []
    shown = [_clip(w, 300) for w in warnings[: detail.warnings]]
    if len(warnings) > detail.warnings:
        shown.append(f"... {len(warnings) - detail.warnings} more warning(s)")
    return ["Warnings:"] + _indent(shown)


def _head_tail(text: str, head: int = HEAD_LINES, tail: int = TAIL_LINES) -> list[str]:
    """Keep the first and last lines of a long output, with an 'N lines elided' marker."""
    lines = [_clip(line, MAX_LINE) for line in text.rstrip("\n").splitlines()]
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [f"... {len(lines) - head - tail} lines elided ..."] + lines[-tail:]


def _clip(line: str, limit: int = MAX_LINE) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]

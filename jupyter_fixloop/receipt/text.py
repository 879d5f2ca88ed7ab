"""A receipt's text: what a model reads (`for_model`, within a token budget) and what people read
(`for_people`, every detail); rendered from the receipt's data (receipt/values.py), never parsed back here.

The model's text is deliberately short: the failing user line with its number, the error, the facts
gathered at the failure, and head/tail of the output. It fits a token budget (counted by the counter the
loop passes in, the model's own tokenizer for a litellm model): when the full text is too long, it is
rendered again at a lower level of detail, dropping the least useful parts first; the headline and the
failing line are never dropped.

The built-in engine reads the typed fields (edits.ParsedReceipt.of), never this text. What the loop
adds about a run (the same code as an earlier one, checks copied into it, regressions) are fields too,
rendered into the text with the run's lines within the budget (`annotated`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from .effect import Effect
from .values import MAX_LINE, SYNTAX, UNSIGNED, CheckOutcome, Facts, Receipt, TracedLine, clip

DEFAULT_TOKENS = 600
MIN_BUDGET = 50
HEAD_LINES = 8
TAIL_LINES = 8


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


# ---------------------------------------------------------------- the model's text and people's


def for_model(receipt: Receipt, budget: Budget | None = None) -> str:
    """What a model reads of `receipt`: its run's lines at the most detail that fits `budget` tokens (a hard
    cut at worst, keeping the headline and the failing line), with what the loop says about the run around
    them. A text given as is (a rejected candidate, a reply without code) is never cut."""
    facts = receipt.facts or Facts(said=receipt.text)
    render = partial(_lines, receipt, facts)
    fitted = None if facts.form == "given" else budget or DEFAULT_BUDGET
    if not (receipt.same_as or receipt.regressions or receipt.copied_checks_removed or receipt.example_removed
            or receipt.made_up_removed):
        return facts.said if fitted is None else fit(render, fitted)
    return _said(receipt, render, fitted)


def for_people(receipt: Receipt) -> str:
    """What people read of `receipt`: every detail, with no token budget (what the loop says about the run too)."""
    facts = receipt.facts or Facts(said=receipt.text)
    return "\n".join(_once(receipt, [*_head(receipt), *_lines(receipt, facts, LEVELS[0]), *_tail(receipt)]))


def _once(receipt: Receipt, lines: list[str]) -> list[str]:
    """`lines` with each of the receipt's notes said once (a note already in the text it was given is not
    said again after it); the run's own lines (its output) are kept as they came, repeats and all."""
    notes, seen, out = {n.strip() for n in receipt.notes}, set(), []
    for line in lines:
        key = line.strip()
        if key in notes and key in seen:
            continue
        seen.add(key)
        out.append(line)
    return out


ON_FILE = replace(LEVELS[0], output_lines=0)  # what a run printed: counted in lines, not shown


def for_the_file(receipt: Receipt) -> str:
    """`for_people` without what the run printed (stdout and stderr counted in lines, not shown): the
    history file keeps what you typed, the code proposed and your decisions, not what candidates printed."""
    facts = receipt.facts or Facts(said=receipt.text)
    return "\n".join([*_head(receipt), *_lines(receipt, facts, ON_FILE), *_tail(receipt)])


def headline(receipt: Receipt, budget: Budget | None = None) -> str:
    """One line for tables, progress bars and a prompt's earlier rounds, rendered from the receipt's data: the
    line saying the run was not run again, else the first line of what the run produced (`run_headline`).
    With `budget`, the first line of what the model reads within it (`for_model`: a long message shortened
    as the budget shortens it)."""
    if budget is not None:
        said = for_model(receipt, budget)
        return said.splitlines()[0] if said else receipt.kind
    return _head(receipt)[0] if receipt.same_as else run_headline(receipt)


def run_headline(receipt: Receipt) -> str:
    """The first line of what the run produced (the error, the failed check, the smell), at full detail;
    its kind when it produced no text."""
    said = "\n".join(_lines(receipt, receipt.facts or Facts(said=receipt.text), LEVELS[0]))
    return said.splitlines()[0] if said else receipt.kind


def annotated(receipt: Receipt, budget: Budget | None = None, **fields) -> Receipt:
    """`receipt` with what the loop says about the run set (`same_as`, `copied_checks_removed`,
    `example_removed`, `made_up_removed`, `regressions`) and its text rendered again with it, within `budget`."""
    said = replace(receipt, facts=receipt.facts or Facts(said=receipt.text), **fields)
    return replace(said, text=for_model(said, budget))


WITHHELD = "(what it printed and the values it made are not sent: data_to_model is 'names')"


def without_data(receipt: Receipt, budget: Budget | None = None) -> Receipt:
    """`receipt` as a model reads it under `data_to_model="names"`: no printed output, no value, no effect on
    the data, no value trace, no context read from the data and no check's detail (the error, its line and
    which checks failed stay); its text rendered again."""
    facts = receipt.facts
    if facts is None or facts.form != "run":
        return receipt
    error = {**facts.error, "context": []} if facts.error else facts.error
    bare = replace(receipt, stdout="", stderr="", value=None, effect=None, trace=(),
                   checks=tuple(replace(c, detail="") for c in receipt.checks), notes=(*receipt.notes, WITHHELD),
                   facts=replace(facts, error=error, diff=(), trace_note="", matches=(), result=None))
    return replace(bare, text=for_model(bare, budget))


def _lines(receipt: Receipt, facts: Facts, detail: Detail) -> list[str]:
    """The run's own lines at one level of detail."""
    if facts.form == "given":
        return facts.said.splitlines()
    if facts.form == "timeout":
        return _timeout_lines(receipt.seconds, facts.result, detail)
    if facts.form == "crash":
        return _crash_lines(receipt.evalue or "", receipt.stderr, detail)
    return _Parts(result={"stdout": receipt.stdout, "stderr": receipt.stderr}, error=facts.error,
                  checks=receipt.checks, warnings=receipt.warnings, notes=receipt.notes, diff=list(facts.diff),
                  effect=receipt.effect, trace=receipt.trace, trace_note=facts.trace_note,
                  matches=facts.matches).render(detail)


def _timeout_lines(seconds: float, result: dict | None, detail: Detail) -> list[str]:
    """A run stopped at its time limit; if the interrupt landed, on which line it was."""
    error = (result or {}).get("error") or {}
    lineno, line = error.get("lineno"), error.get("line")
    lines = [f"Timeout: the cell was still running after {seconds:g} s and was stopped"]
    if lineno is not None:
        lines.append(f"  stopped at line {lineno}: {line}")
        lines += _frame_trail(error, detail)
    if result:
        lines += _output_lines(result, detail)
    return lines


def _crash_lines(message: str, stderr_tail: str, detail: Detail) -> list[str]:
    """The kernel process died (segfault, os._exit, out of memory): it is replaced, not trusted."""
    lines = [f"Crash: {message}"]
    if stderr_tail.strip() and detail.output_lines:
        lines.append("kernel stderr (tail):")
        lines += _indent(_head_tail(stderr_tail, detail.output_lines, detail.output_lines))
    return lines


# ---------------------------------------------------------------- what the loop says about a run
#
# A run's receipt is made from the run alone (loop/judged.py). The loop then knows more: the candidate is
# the same code as an earlier run and was not run again (`same_as`), statements copied from the checks
# were removed from it (`copied_checks_removed`), its copy of the instruction's example data was
# (`example_removed`), so were values it wrote out itself over the user's names (`made_up_removed`),
# checks that passed in an earlier round fail now
# (`regressions`). `annotated` sets those fields and renders the text again, here: the line of
# `same_as` first, the run's own lines, then a line for each regression and the note on copied checks;
# when all of it does not fit the budget, the run's lines are rendered at a lower level of detail.


def _head(receipt: Receipt) -> list[str]:
    return [f"(same code as {receipt.same_as}, not run again)"] if receipt.same_as else []


def _tail(receipt: Receipt) -> list[str]:
    tail = [f"Regression: {check} passed in round {index} and fails now" for check, index in receipt.regressions]
    if receipt.copied_checks_removed:
        tail.append(f"Note: {receipt.copied_checks_removed} statement(s) copied from the checks were removed from "
                    "your answer; the checks run on their own after the cell.")
    if receipt.example_removed:
        names = ", ".join(f"`{n}`" for n in receipt.example_removed)
        tail.append(f"Note: your assignment of {names} copied from the instruction's example was removed: it would "
                    "replace the user's data; the code uses the user's values.")
    if receipt.made_up_removed:
        names = ", ".join(f"`{n}`" for n in receipt.made_up_removed)
        tail.append(f"Note: your assignment of {names} was removed: it wrote out values of your own over the user's "
                    f"{names}, which the instruction does not ask to make; the code uses the user's values.")
    return tail


def _said(receipt: Receipt, render: Callable[[Detail], list[str]], budget: Budget | None) -> str:
    """The text of `receipt`: its run's lines (`render`) between the loop's, in `budget` (None: never cut)."""
    head, tail = _head(receipt), _tail(receipt)
    if budget is None:
        return "\n".join([*head, *render(LEVELS[0]), *tail])
    budget = replace(budget, tokens=max(MIN_BUDGET, int(budget.tokens)))
    for detail in LEVELS:
        text = "\n".join([*head, *render(detail), *tail])
        if budget.fits(text):
            return text
    # cut to fit: the run's lines keep their headline and failing line, in what the loop's lines leave
    room = replace(budget, tokens=max(MIN_BUDGET, budget.tokens - budget.count("\n".join([*head, *tail])) - 1))
    return cut("\n".join([*head, fit(render, room), *tail]), budget)

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
    at = [clip(line, 600) for line in at]
    head = lines[0] if lines else ""
    for limit in (400, 200, 120, 60, 30):
        head = clip(lines[0], limit)
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
            smelly = [c for c in failed if c.source == "smell"]
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
    evalue = clip(error["evalue"], detail.message_chars)
    lines = [f"{error['ename']}: {evalue}".rstrip(": ")]
    if error.get("lineno") is not None:
        lines.append(f"  at line {error['lineno']} of the cell: {error.get('line') or ''}".rstrip())
        if error.get("offset") and error["ename"] in SYNTAX:
            lines.append(f"  (column {error['offset']})")
    lines += _frame_trail(error, detail)
    if error.get("during_check"):
        lines.append(f"  while evaluating the check: {error['during_check']}")
    for link in error.get("chain", [])[-1:]:
        if (link["ename"], link["evalue"]) == (error["ename"], error["evalue"]):
            continue  # pandas re-raises the same KeyError from its own
        where = f" (at line {link['lineno']}: {link['line']})" if link.get("lineno") is not None else ""
        lines.append(f"  caused by {link['ename']}: {clip(link['evalue'], detail.message_chars)}{where}")
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
        lines.append(f"  raised in {where}:{last['lineno']} ({last['name']}): {clip(last['line'], 120)}".rstrip())
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
    line = f"  called from line {f['lineno']} ({f['name']}): {clip(f['line'], 160)}"
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
        if c.source == "smell":
            lines += _item(f"smell: {c.detail}", detail.context_rows)
            continue
        if c.words:  # a check read from the instruction: the rules' code, said in its words
            lines += _item(f"FAILED: read from the instruction: {c.words}", detail.context_rows)
            continue
        if c.failing:  # a block's failing assert, then why
            shown = c.detail.splitlines() if detail.context_rows else c.detail.splitlines()[:1]
            lines += ["  " + clip(f"AssertionError: {c.failing}", 400)] + ["    " + clip(line, 400) for line in shown]
            continue
        lines += _item(f"FAILED: {check_label(c)}" + (f" -- {c.detail}" if c.detail else ""), detail.context_rows)
    return lines


def check_label(c: CheckOutcome) -> str:
    """A check in one line: the expression; for a block of statements, its failing assert (or its first line);
    for a failing one read from the instruction, its words."""
    if c.words:
        return f"read from the instruction: {c.words}"
    if not _is_block(c.expr):
        return c.expr
    if not c.passed and c.failing:
        return c.failing
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
    shown = [clip(line, MAX_LINE) for line in changes[: detail.effect_lines]]
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
        lines += [clip(f"    {source} -> {value}", 2 * MAX_LINE) for source, value in t.steps[-detail.trace_runs:]]
        said_runs = ["; ".join(f"{k} = {v}" for k, v in values) for _, values in runs]
        if not t.is_call and t.hits > 1 and sum(len(x) for x in said_runs) <= 90:  # short: on one line
            lines.append("    " + "; ".join(f"run {hit}: {x}" for (hit, _), x in zip(runs, said_runs)))
            continue
        for hit, values in runs:
            said = "; ".join(f"{k} = {v}" for k, v in values)
            if t.is_call:
                lines.append(clip(f"    call {hit}: {said}", 2 * MAX_LINE))
            elif t.hits > 1:
                lines.append(clip(f"    run {hit}: {said}", 2 * MAX_LINE))
            else:
                lines.append(clip(f"    {said}", 2 * MAX_LINE))
    if note:
        lines.append(f"  ({note})")
    return lines


def _diff_lines(diff: list[str], detail: Detail) -> list[str]:
    if not diff:
        return []
    shown = [clip(line, MAX_LINE) for line in diff[: detail.diff_lines]]
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
    return ["  " + clip(first, 400)] + (["    " + clip(r, MAX_LINE) for r in rest] if rows else [])


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


def _warning_lines(warnings: tuple[str, ...], detail: Detail) -> list[str]:
    if not warnings:
        return []
    shown = [clip(w, 300) for w in warnings[: detail.warnings]]
    if len(warnings) > detail.warnings:
        shown.append(f"... {len(warnings) - detail.warnings} more warning(s)")
    return ["Warnings:"] + _indent(shown)


def _head_tail(text: str, head: int = HEAD_LINES, tail: int = TAIL_LINES) -> list[str]:
    """Keep the first and last lines of a long output, with an 'N lines elided' marker."""
    lines = [clip(line, MAX_LINE) for line in text.rstrip("\n").splitlines()]
    if len(lines) <= head + tail:
        return lines
    return lines[:head] + [f"... {len(lines) - head - tail} lines elided ..."] + lines[-tail:]


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]

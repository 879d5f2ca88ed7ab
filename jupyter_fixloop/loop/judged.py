"""The verdict's judgement of one run (loop/verdict.py's, and only its): what the run is judged against
(`Expectations`), and the receipt it comes to, with the one decision of its `kind`.

A run passes when it ran to its end and every check passed: the judge's (signed, merged by the verdict),
then, when the cell ran without error, the expected output (`--expect-output`, or the output the notebook's
author saved), the following cells that count, and the smells of what it did to the data (with the user's
cell to compare). What the sandbox sends is read with care: it is the sandbox's to forge. The receipt's text
is rendered once here by receipt/text.py's `for_model`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..errors import UsageError
from ..receipt import effect as effects, reads, saved, smells as smell_rules
from ..receipt.effect import Effect
from ..receipt.text import for_model
from ..receipt.values import (
    MAX_LINE,
    OUTPUT_CHECK,
    SMELL_CHECK,
    SYNTAX,
    Baseline,
    CheckOutcome,
    Facts,
    FollowingOutcome,
    Receipt,
    TracedLine,
    clip,
)


@dataclass(frozen=True)
class Expectations:
    """What a run is judged against, made once by a face or the loop.

    `output`: what the cell should print (`--expect-output`), or the output the notebook's author saved
    (a `saved.SavedOutput`); compared with its stdout when it ran without error. `original`: the user's
    cell; when given, the run's effect is judged for smells (smells.py), and a smell fails the run.
    `following`: (number, source) of the later cells that run after it, in order; the first `required` of
    them must run (the cells down to a failure an earlier cell caused): never excused for failing after the
    original cell too; `baseline`: how they went after the original cell (None: this is the original cell's
    run, and they do not judge it). `numbers`: the notebook's number of each following cell (batch mode),
    which names it in the receipts (empty: named by its place). `stated`: the output an instruction states
    (cell.py's `stated_output`); a run that ran without error must show its values, in order
    (receipt/saved.py's `stated_check`). `facts`: those of the judge's checks that are facts (a name the
    instruction says the code defines): held or not, never evidence of the values; `said`: (expr, words) of
    those read from the instruction, whose failure a receipt says in words (their code is the rules', not the
    model's to read)."""

    output: str | saved.SavedOutput | None = None
    original: str | None = None
    stated: str | None = None
    following: tuple[tuple[int, str], ...] = ()
    baseline: Baseline | None = None
    numbers: tuple[int, ...] = ()
    required: int = 0
    facts: tuple[str, ...] = ()
    said: tuple[tuple[str, str], ...] = ()


NOTHING = Expectations()


def expecting(output: str | None = None, following: Iterable[str] | str = (),
              downstream: Iterable[str] | str = (), numbers: Iterable[int] = ()) -> Expectations:
    """What a face expects of every run of a cell, made once: the output it must print (`--expect-output`
    text, or a `saved.SavedOutput`), the cells from `downstream` (each must run) then `following`, numbered
    from 1 in that order (empty ones dropped), and `numbers`: the notebook's number of each of those cells
    as given (batch mode; a dropped cell's number goes with it), which names them in the receipts."""
    down, later = _given(downstream), _given(following)
    numbers = tuple(numbers)
    if numbers and len(numbers) != len(down) + len(later):
        raise UsageError(f"cell_numbers: {len(numbers)} number(s) for {len(down) + len(later)} downstream and "
                         "following cell(s); give one for each, in that order")
    cells = (*down, *later)
    kept = [i for i, c in enumerate(cells) if isinstance(c, str) and c.strip()]
    return Expectations(output=output, following=tuple(enumerate((cells[i] for i in kept), 1)),
                        required=sum(i < len(down) for i in kept),
                        numbers=tuple(numbers[i] for i in kept) if numbers else ())


def _given(cells: Iterable[str] | str) -> tuple:
    return (cells,) if isinstance(cells, str) else tuple(cells)


def judge_result(result: dict, expect: Expectations = NOTHING, notes: tuple[str, ...] = (), budget=None,
                 ran: str | None = None) -> Receipt:
    """The receipt of the runner's JSON description of a run, judged against `expect`, its text within
    `budget` (a receipt/text.py budget; None: the default). `ran`: the code that ran, read for smells in
    the code itself (a result thrown away) and for what it wrote (a later cell that reads it verifies the run).
    """
    if result.get("internal"):
        return crash(f"the sandbox runner failed: {result['internal']}")
    effect = _judged_effect(result, expect.original, ran)
    wrote = reads.written(ran, effect, expect.baseline.effect if expect.baseline else None)
    later = _following(result.get("following") or [], expect.following, expect.baseline, wrote, expect.numbers)
    context = (result.get("error") or {}).get("context") or ()
    said = {c for c in context if isinstance(c, str)}  # a note the error's context holds is said once, there
    notes = tuple(n for n in notes if n not in said) + tuple(
        f"{f.label} fails after the original cell, so it is not counted: {f.error}" for f in later
        if not f.ok and not f.counted)
    warnings = tuple(_warning_line(w) for w in result.get("warnings", []))
    error = result.get("error")
    doubts = smell_rules.doubted(result.get("warnings") or []) if error is None else ()
    codes = tuple(c for c in (expect.original, ran) if c is not None)
    checks, diff, undecided = _outcomes(result, effect, later, expect, ran, codes)
    notes += (undecided,) if undecided else ()
    common = dict(
        stdout=result.get("stdout", ""),
        stderr=result.get("stderr", ""),
        value=result.get("value"),
        digest=effects.digest_of(result.get("digest")),
        **_printed(result.get("printed")),
        warnings=warnings,
        seconds=result.get("seconds", 0.0),
        notes=tuple(dict.fromkeys(notes)),  # each said once
        effect=effect,
        following=later,
    )
    trace, trace_note = _trace(result.get("trace")) if error is None else ((), "")
    facts = Facts("run", error=error, diff=tuple(diff), trace_note=trace_note, matches=_matches(result.get("matches")))
    if error is not None:
        return _raised(error, facts, checks, budget, common)
    failed = [c for c in checks if not c.passed]
    kind = "check_failed" if failed else "ok"
    return _rendered(Receipt(kind=kind, text="", checks=checks, trace=trace if failed else (),
                             context=facts.matches if failed else (), facts=facts, doubts=doubts, **common), budget)


def _rendered(receipt: Receipt, budget) -> Receipt:
    """`receipt` with the text a model reads of it."""
    return replace(receipt, text=for_model(receipt, budget))


def _matches(raw) -> tuple[str, ...]:
    """What the cell's filters, merges and concats matched (kernel/matches.py), read with care: the
    sandbox's to forge, so only short strings are kept."""
    if not isinstance(raw, list):
        return ()
    return tuple(clip(m, 600) for m in raw if isinstance(m, str))[:4]


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
              expect: Expectations, ran: str | None,
              codes: tuple[str, ...] = ()) -> tuple[tuple[CheckOutcome, ...], list[str], str]:
    """The run's checks in order (the judge's; when the cell ran without error, then the expected output,
    the output the instruction states, the counted following cells and the smells), the diff of a wrong
    output, and the note saying why a saved output was no check either way ("" when it was one, or there
    was none). `codes`: the user's cell and the code that ran, for a saved estimator repr (the keywords
    they pass)."""
    words = dict(expect.said)
    checks = tuple(CheckOutcome(c["expr"], bool(c["passed"]), c.get("detail", ""),
                                "fact" if c["expr"] in expect.facts else "user", failing=c.get("failing", ""),
                                words=words.get(c["expr"], "") if c["expr"] in expect.facts else "")
                   for c in result.get("checks", []))
    if result.get("error") is not None:
        return checks, [], ""
    diff: list[str] = []
    undecided = ""
    shown = result.get("shown") if isinstance(result.get("shown"), str) else None  # the sandbox's to forge
    if expect.output is not None:
        outcome, diff, undecided = printed(result.get("stdout", ""), expect, shown, result.get("full_repr"), codes)
        checks += (outcome,) if outcome is not None else ()
    if expect.stated is not None:
        passed, detail = saved.stated_check(str(result.get("stdout", "")), shown, expect.stated, ran)
        checks += (CheckOutcome(saved.STATED_CHECK, passed, detail, "stated"),)
    # a later cell that still runs is evidence only when it discriminates and checks values
    # (FollowingOutcome.evidence); one that only runs now is a fact (`runs_now`), and its failure a failure
    checks += tuple(CheckOutcome(f.label, f.ok, f.verifies if f.ok else f.error, "following") for f in later
                    if f.evidence or (f.counted and not f.ok))
    checks += tuple(CheckOutcome(SMELL_CHECK, False, s.text, "smell", smell=s.kind)
                    for s in (effect.smells if effect else ()))
    return checks, diff, undecided


def _raised(error: dict, facts: Facts, checks: tuple[CheckOutcome, ...], budget, common: dict) -> Receipt:
    """The receipt of a run that raised: in the cell, or in a check (the failing check is the last one)."""
    check = error.get("check")
    if check:
        checks += (CheckOutcome(check["expr"], False, check.get("detail", "")),)  # a judged check: "user"
    return _rendered(Receipt(
        kind="check_failed" if check else "exception",
        text="",
        ename=error["ename"],
        evalue=error["evalue"],
        lineno=error.get("lineno"),
        line=error.get("line"),
        checks=checks,
        context=tuple(error.get("context", [])) + facts.matches,
        column=_column(error),
        facts=facts,
        **common,
    ), budget)


def _column(error: dict) -> int | None:
    """The column a SyntaxError points at (the text says it as `  (column N)`)."""
    offset = error.get("offset")
    return offset if isinstance(offset, int) and offset and error["ename"] in SYNTAX else None


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
                values = tuple((clip(str(k), 40), clip(str(v), 240)) for k, v in list(run["values"].items())[:6])
                runs.append((int(run["run"]), values))
            shown = {k for _, values in runs for k, _ in values}
            rank = min((names.index(n) for n in shown if n in names), default=len(names))
            func = item.get("func")
            steps = tuple((clip(str(a), 80), clip(str(b), 240)) for a, b in (item.get("steps") or [])[:3])
            found.append(TracedLine(int(item["lineno"]), clip(str(item.get("line") or ""), MAX_LINE),
                                    clip(str(func), 60) if func else None, int(item["hits"]), tuple(runs), rank,
                                    steps))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    note = raw.get("error")
    return tuple(found), clip(str(note), 200) if note else ""


def _following(outcomes, cells: tuple[tuple[int, str], ...], baseline: Baseline | None,
               wrote: reads.Written, numbers: tuple[int, ...] = ()) -> tuple[FollowingOutcome, ...]:
    """How the following cells went, read with care (what the sandbox sends is the sandbox's to forge),
    and which of them discriminate: one that failed (or did not run) after the original cell and runs
    now, or one that reads what the run wrote; of those, only one that checks values (an assert) is
    evidence (`FollowingOutcome.evidence`)."""
    found = []
    for o, (number, source) in zip(outcomes if isinstance(outcomes, list) else [], cells):
        o = o if isinstance(o, dict) else {"ok": False, "ename": "?"}
        ok = o.get("ok") is True
        lineno = o.get("lineno") if isinstance(o.get("lineno"), int) else None
        counted = baseline is not None and number not in baseline.failed
        found.append(FollowingOutcome(number, source, ok, clip(str(o.get("ename") or ""), 80),
                                      clip(str(o.get("evalue") or ""), 300), lineno,
                                      clip(str(o.get("line") or ""), MAX_LINE),
                                      counted=counted or ok, verifies=_verifies(ok, number, source, baseline, wrote),
                                      cell=numbers[number - 1] if len(numbers) >= number else None,
                                      checks_values=reads.checks_values(source)))
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


# ---------------------------------------------------------------- expected output


def printed(stdout: str, expect: Expectations, shown=None, full_repr=None,
            codes: tuple[str, ...] = ()) -> tuple[CheckOutcome | None, list[str], str]:
    """The check of what a run printed against `expect.output` (it must be given), the diff of a wrong
    output, and why it is no check ("" when it is one): the `--expect-output` text, or the output the
    notebook's author saved (compared with what the run showed too: `shown`; a saved scikit-learn < 0.23
    estimator repr with the run's `full_repr`, `codes` saying which keywords were passed). (None, [], why)
    when a saved estimator repr cannot be compared: not evidence either way."""
    if isinstance(expect.output, saved.SavedOutput):
        passed, detail, diff = saved.saved_check(stdout, shown, expect.output, full_repr, codes)
        if passed is None:
            return None, [], f"the saved output is no check here, neither way: {detail}"
        return CheckOutcome(saved.SAVED_CHECK, passed, detail, "saved"), diff, ""
    outcome, diff = output_check(stdout, expect.output)
    return outcome, diff, ""


def output_check(stdout: str, expected: str) -> tuple[CheckOutcome, list[str]]:
    """Compare the cell's stdout with the expected text (trailing spaces and blank lines ignored).

    Returns the check and a compact diff: `-` lines were expected, `+` lines were printed.
    """
    want, got = normalized(expected), normalized(stdout)
    if want == got:
        return CheckOutcome(OUTPUT_CHECK, True, source="output"), []
    diff = [
        line for line in difflib.unified_diff(want, got, "expected", "actual", n=1, lineterm="")
        if not line.startswith(("---", "+++"))
    ]
    differing = sum(1 for line in diff if line[:1] in "+-")
    detail = f"{len(got)} line(s) printed, {len(want)} expected; {differing} line(s) differ"
    return CheckOutcome(OUTPUT_CHECK, False, detail, "output"), diff


def normalized(text: str) -> list[str]:
    """`text` as lines compared: without trailing spaces and blank lines at either end, `\\r\\n` read as `\\n`."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def _warning_line(w: dict) -> str:
    where = f" (line {w['lineno']})" if w.get("lineno") else ""
    base = w.get("base")
    kind = f"{w['category']} (a {base})" if base and base not in (w["category"], "Warning") else w["category"]
    return f"{kind}{where}: {' '.join(str(w['message']).split())}"


def timeout(seconds: float, result: dict | None = None, budget=None) -> Receipt:
    """A run stopped at its time limit; if the interrupt landed, the text says on which line it was."""
    error = (result or {}).get("error") or {}
    return _rendered(Receipt(kind="timeout", text="", ename="Timeout", lineno=error.get("lineno"),
                             line=error.get("line"), seconds=seconds, facts=Facts("timeout", result=result)), budget)


def crash(message: str, stderr_tail: str = "", budget=None) -> Receipt:
    """The kernel process died (segfault, os._exit, out of memory): it is replaced, not trusted."""
    return _rendered(Receipt(kind="crash", text="", ename="Crash", evalue=message, stderr=stderr_tail,
                             facts=Facts("crash")), budget)


def _printed(printed) -> dict:
    """The receipt's fields of a last line `print(x)` / `display(x)` (kernel/runner.py's `_printed`), read with care."""
    if not (isinstance(printed, list) and len(printed) == 2 and isinstance(printed[1], int)
            and not isinstance(printed[1], bool)):
        return {}
    digest = effects.digest_of(printed[0])
    return {"printed_digest": digest, "printed_chars": max(0, printed[1])} if digest else {}

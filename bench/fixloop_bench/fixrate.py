"""`jupyter-fixloop bench CASES.jsonl`: how often fixloop repairs a broken cell, with numbers.

Each case (`id`, `category`, `group`, `setup`, `cell`, `check`) is run the way a user meets it:
`setup` builds the state in a real user-side kernel, that kernel writes a snapshot of its globals
(exactly what a notebook session mirrors), and the loop repairs `cell` against that snapshot.
`check` is the hidden acceptance test: the loop and the model never see it. The final code is
verified with the check in a fresh sandbox, so a case counts as fixed only if the code really works.

`--mode one-shot` is the no-feedback baseline: one model call with the cell and its first error,
no rerun; its answer is verified the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from jupyter_fixloop.errors import FixloopError
from jupyter_fixloop.model import LastRun, get_model
from jupyter_fixloop.receipt import text as receipt_text

from .harness import UserKernel, add_loop_arguments, run_each

MODES = ("loop", "one-shot")
CLAIMS = ("fixed", "unverified", "answered")  # statuses that propose code as a repair (answered: one-shot, not run)
DEV_CASES = os.path.join(os.path.dirname(__file__), "cases.jsonl")


@dataclass(frozen=True)
class Case:
    """One broken cell of a benchmark file (its `note` is never read: it is the answer)."""

    id: str
    category: str
    group: str
    setup: str
    cell: str
    check: str
    fails_with: str = ""

    @property
    def failure(self) -> str:
        """How the cell fails: "crash" (the cell raises), "check" (wrong output), "timeout", or "?"."""
        kind = self.fails_with.split(":", 1)[0]
        return {"cell": "crash", "check": "check", "timeout": "timeout"}.get(kind, "?")


@dataclass(frozen=True)
class CaseResult:
    """What happened to one case: the loop's own outcome, then the hidden check's verdict."""

    id: str
    category: str
    group: str
    fixed: bool
    status: str
    reason: str = ""
    rounds: int = 0
    tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    final_code: str | None = None
    last_receipt: str = ""
    verify_receipt: str = ""
    failure: str = "?"
    fixed_in_round: int | None = None  # the model round whose candidate was verified (1 for one-shot)
    fixed_by: str | None = None  # who wrote the candidate the loop ended with: "model" or "rules"
    bound: str = ""  # the bound that stopped a loop that gave up (LoopResult.bound: "rounds", "repeated", ...)
    effect: str = ""  # what the final candidate does to the data, as the user is shown it (loop mode)
    evidence: tuple = ()  # for status "fixed": the source of each pass that checked its values (LoopResult.account)
    per_round: list = field(
        default_factory=list
    )  # {round, temperature, prompt_tokens, completion_tokens, model_s, run_s, kind}


@dataclass
class Summary:
    """Figures for a set of case results (a category, a group, or all of them)."""

    cases: int = 0
    fixed: int = 0
    claimed: int = 0  # the loop proposed code as a repair: status "fixed" or "unverified"
    claims_verified: int = 0  # ... and the hidden check passed on it
    status_fixed: int = 0  # status "fixed": something the loop was given verified it
    status_fixed_verified: int = 0
    evidence: Counter = field(default_factory=Counter)  # fixed cases by each source of evidence they had
    runs_only: int = 0  # fixed cases with no evidence (at most later cells that run now): must be 0
    rounds: int = 0
    tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    names: list = field(default_factory=list)

    def add(self, r: CaseResult) -> None:
        self.cases += 1
        self.fixed += r.fixed
        if r.status in CLAIMS:
            self.claimed += 1
            self.claims_verified += r.fixed
        if r.status == "fixed":
            self.status_fixed += 1
            self.status_fixed_verified += r.fixed
            self.evidence.update(set(r.evidence))
            self.runs_only += not r.evidence
        self.rounds += r.rounds
        self.tokens += r.tokens
        self.cost += r.cost
        self.seconds += r.seconds

    def figures(self) -> dict:
        n = max(self.cases, 1)
        return {
            "cases": self.cases,
            "fixed": self.fixed,
            "fix_rate": self.fixed / n,
            "claimed": self.claimed,
            "claims_verified": self.claims_verified,
            "claim_precision": self.claims_verified / self.claimed if self.claimed else None,
            "status_fixed": self.status_fixed,
            "status_fixed_verified": self.status_fixed_verified,
            "unverified": self.claimed - self.status_fixed,
            "unverified_verified": self.claims_verified - self.status_fixed_verified,
            "fixed_wrong": self.status_fixed - self.status_fixed_verified,
            "evidence": dict(sorted(self.evidence.items())),
            "runs_only": self.runs_only,
            "mean_rounds": self.rounds / n,
            "tokens": self.tokens,
            "cost": self.cost,
            "seconds": self.seconds,
            "seconds_per_case": self.seconds / n,
        }


# ---------------------------------------------------------------- reading cases


def read_cases(path: str) -> list[Case]:
    """Cases from a JSON-lines file; a malformed line is a one-line error naming it."""
    cases = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                cases.append(Case(raw["id"], raw.get("category", "?"), raw.get("group", "?"),
                                  raw.get("setup", ""), raw["cell"], raw.get("check", ""), raw.get("fails_with", "")))
            except (ValueError, KeyError, TypeError) as exc:
                raise FixloopError(f"{path}:{number}: not a benchmark case ({type(exc).__name__}: {exc})") from None
    return cases


# ---------------------------------------------------------------- running one case


def acceptance(check: str) -> str:
    """The hidden check as one expression the runner can evaluate in the cell's namespace."""
    return f"exec(compile({check!r}, '<acceptance test>', 'exec'), globals()) is None"


def run_case(case: Case, kernel: UserKernel, workdir: str, opts) -> CaseResult:
    """Build the state, repair the cell (loop or one-shot), verify with the hidden check."""
    started = time.perf_counter()
    path = os.path.join(workdir, "snapshot.bin")
    try:
        kernel.reset(opts.timeout * 4)
        kernel.run(case.setup, opts.timeout * 4)
        snap = kernel.snapshot(path, opts.timeout * 4, [case.cell, case.check])
    except FixloopError as exc:
        return _result(case, False, "error", f"setup failed: {exc}", started)
    try:
        if opts.mode == "one-shot":
            outcome = _one_shot(case, snap, opts)
        else:
            outcome = _loop(case, snap, opts)
        code = outcome.pop("final_code")
        fixed, verify_text = _verify(code, case, snap, opts)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    if not fixed:
        outcome["fixed_in_round"] = None
    return _result(case, fixed, started=started, final_code=code, verify_receipt=verify_text, **outcome)


def _checks(case: Case, opts) -> list[str]:
    """What the loop and the one-shot baseline are told must pass: with --expect-check, the hidden
    check as the block of statements it is (the model reads `assert ...`, not a wrapper around it)."""
    return [case.check.strip()] if opts.expect_check and case.check.strip() else []


def _loop(case: Case, snap, opts) -> dict:
    from jupyter_fixloop.loop import fix

    result = fix(case.cell, checks=_checks(case, opts), namespace=snap, options=opts.options)
    final = result.patched if result.claimed else (case.cell if result.status == "passed" else None)
    per_round = [{"round": r.index, "temperature": r.temperature, "prompt_tokens": r.usage.prompt_tokens,
                  "completion_tokens": r.usage.completion_tokens, "model_s": round(r.usage.seconds, 2),
                  "run_s": round(r.usage.run_seconds, 2), "kind": r.receipt.kind, "source": r.source,
                  "calls": _calls(r)}
                 for r in result.rounds]
    return {"status": result.status, "reason": result.reason, "bound": result.bound, "rounds": len(result.rounds),
            "tokens": result.tokens,
            "cost": result.cost, "final_code": final, "last_receipt": _last_run(result), "per_round": per_round,
            "fixed_in_round": len(result.rounds) if result.claimed else 0 if result.status == "passed" else None,
            "fixed_by": result.rounds[-1].source if result.claimed else None,
            "effect": result.effect.text if result.claimed and result.effect is not None else "",
            "evidence": tuple(result.account.checked) if result.status == "fixed" and result.account else ()}


def _calls(r) -> list[dict]:
    """Each model call of a round (several with --samples, and the rules' candidate): temperature,
    tokens, seconds, how its run went, and its source ("model" or "rules")."""
    if not r.samples:
        return [{"temperature": r.temperature, "prompt_tokens": r.usage.prompt_tokens, "source": r.source,
                 "completion_tokens": r.usage.completion_tokens, "model_s": round(r.usage.seconds, 2),
                 "kind": r.receipt.kind}]
    return [{"temperature": s.temperature, "prompt_tokens": s.prompt_tokens, "completion_tokens": s.completion_tokens,
             "model_s": round(s.seconds, 2), "kind": s.kind, "source": s.source} for s in r.samples]


def _last_run(result) -> str:
    """The receipt of the last code that actually ran (a reply without code did not run)."""
    runs = [r.receipt for r in result.rounds if r.receipt.kind not in ("no_code", "no_repair", "rejected")]
    last = runs[-1] if runs else result.first
    text = last.text if last else ""
    if result.rounds and result.rounds[-1].receipt is not last:
        text += f"\nthen: {receipt_text.headline(result.rounds[-1].receipt)}"
    return text


def _one_shot(case: Case, snap, opts) -> dict:
    """Exactly round 1 of the loop (the same checks, the same receipt, the same prompt), then no
    rerun and no retry: the answer goes straight to verification."""
    from jupyter_fixloop.errors import ModelError
    from jupyter_fixloop.loop import verify
    from jupyter_fixloop.model import STOP, build_messages
    from jupyter_fixloop.sandbox import runtime

    checks = _checks(case, opts)
    first = verify(case.cell, checks=checks, namespace=snap, options=opts.options)
    if first.ok:
        return {"status": "passed", "reason": "the cell already passes", "final_code": case.cell,
                "last_receipt": first.text,
                "fixed_in_round": 0}
    messages = build_messages(case.cell, checks=tuple(checks), history=[(case.cell, first)])
    try:
        reply = runtime.run_sync(get_model(opts.options.model).propose(
            messages, LastRun(case.cell, first), timeout=opts.options.model_timeout,
            api_base=opts.options.api_base or None, max_tokens=opts.options.reply_cap(case.cell),
            temperature=opts.options.temperature, seed=opts.options.seed, stop=STOP))
    except ModelError as exc:
        return {"status": "error", "reason": str(exc), "rounds": 1, "final_code": None, "last_receipt": first.text}
    status = "answered" if reply.code else "no_code"
    per_round = [{"round": 1, "temperature": opts.options.temperature, "prompt_tokens": reply.usage.prompt_tokens,
                  "completion_tokens": reply.usage.completion_tokens, "model_s": round(reply.usage.seconds, 2),
                  "run_s": 0.0, "kind": status}]
    per_round[0]["calls"] = [dict(per_round[0])]
    return {"status": status, "reason": "one model call, not rerun", "rounds": 1, "tokens": reply.usage.tokens,
            "cost": reply.usage.cost, "final_code": reply.code, "last_receipt": first.text, "per_round": per_round,
            "fixed_in_round": 1}


def _verify(code: str | None, case: Case, snap, opts) -> tuple[bool, str]:
    """Run the final code and the hidden check in a fresh sandbox loaded with the same state."""
    if code is None:
        return False, "no code to verify"
    from jupyter_fixloop.loop import verify

    checks = [acceptance(case.check)] if case.check.strip() else []
    receipt = verify(code, checks=checks, namespace=snap, options=opts.options)
    text = receipt.text
    for check in checks:  # say "the hidden check", not its whole source twice
        text = text.replace(check, "<hidden check>")
    return receipt.ok, text


def _result(case: Case, fixed: bool, status: str = "", reason: str = "", started: float = 0.0, **kw) -> CaseResult:
    return CaseResult(case.id, case.category, case.group, fixed, status, reason,
                      seconds=time.perf_counter() - started, failure=case.failure, **kw)


# ---------------------------------------------------------------- the whole run


def run_bench(cases: list[Case], opts, on_case=None) -> list[CaseResult]:
    """Run every case with one user-side kernel (reset between cases); `on_case(case, result)` after each."""
    return run_each(cases, opts, lambda case, kernel, workdir: run_case(case, kernel, workdir, opts), on_case)


def summarize(results: list[CaseResult]) -> dict:
    """Every figure: overall, per kind of failure (crash, check, timeout), per category, per group,
    and per round (which round fixed each case; prompt tokens and model seconds, round 1 vs later)."""
    overall, by_failure, by_category, by_group = Summary(), {}, {}, {}
    for r in results:
        overall.add(r)
        by_failure.setdefault(r.failure, Summary()).add(r)
        by_category.setdefault(r.category, Summary()).add(r)
        by_group.setdefault(r.group, Summary()).add(r)
    return {
        "rounds": round_figures(results),
        "overall": overall.figures(),
        "by_failure": {k: v.figures() for k, v in sorted(by_failure.items())},
        "by_category": {k: v.figures() for k, v in sorted(by_category.items())},
        "by_group": {k: v.figures() for k, v in sorted(by_group.items())},
    }


def round_figures(results: list[CaseResult]) -> dict:
    """Which round fixed each case, and what a round costs: the median prompt tokens and model seconds
    per model call, round 1 against rounds 2 and later (a round that asked twice counts its calls)."""
    import statistics

    fixed_in: dict[str, int] = {}
    fixed_by: dict[str, int] = {}
    for r in results:
        if r.fixed and r.fixed_in_round is not None:
            fixed_in[str(r.fixed_in_round)] = fixed_in.get(str(r.fixed_in_round), 0) + 1
        if r.fixed and r.fixed_by:
            fixed_by[r.fixed_by] = fixed_by.get(r.fixed_by, 0) + 1

    def medians(rows: list[dict]) -> dict:
        return {"calls": len(rows),
                "median_prompt_tokens": round(statistics.median(row["prompt_tokens"] for row in rows)) if rows else 0,
                "median_model_seconds": round(statistics.median(row["model_s"] for row in rows), 1) if rows else 0.0}

    rows = [dict(call, round=row["round"]) for r in results for row in r.per_round for call in row.get("calls") or [row]
            if call.get("source") != "rules"]  # model calls only: the rules' candidate costs no tokens
    first = [row for row in rows if row["round"] == 1]
    later = [row for row in rows if row["round"] > 1]
    return {
        "fixed_in_round": dict(sorted(fixed_in.items())), "fixed_by": dict(sorted(fixed_by.items())),
        "all": medians(rows), "round_1": medians(first), "round_2_plus": medians(later),
        "asked_again": sum(1 for r in results for a, b in zip(r.per_round, r.per_round[1:]) if _low(b) > _low(a)),
        "fixed_after_asked_again": sum(1 for r in results if r.fixed and len(r.per_round) > 1
                                       and _low(r.per_round[-1]) > _low(r.per_round[-2])),
        "ended_by_repeat": sum(1 for r in results if r.bound == "repeated"),
        "calls": len(rows),
        "median_completion_tokens": round(statistics.median(row["completion_tokens"] for row in rows)) if rows else 0,
    }


def _low(row: dict) -> float:
    """A round's coolest call: higher than the round before's when it was asked again after a repeat
    (with --samples, the round carried on may be a hotter sample without any repeat)."""
    return min([(c["temperature"] or 0) for c in row.get("calls") or [row] if c.get("source") != "rules"] or [0])


# ---------------------------------------------------------------- the command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="?", default=DEV_CASES,
                        help="JSON-lines file of cases (id, category, group, setup, cell, check); "
                        "default: the 28 dev cases shipped with the package")
    parser.add_argument("--notebooks", metavar="DIR", nargs="+",
                        help="instead of cases: run each notebook of each corpus DIR plainly and in batch "
                        "mode (`jupyter-fixloop bench --notebooks DIR --help`)")
    parser.add_argument("--generation", metavar="FILE", nargs="?",
                        help="instead of cases: steps of an instruction, a setup and a reference solution, one-shot "
                        "and loop (`jupyter-fixloop bench --generation FILE --help`)")
    parser.add_argument("--causes", nargs="?", metavar="DIR",
                        help="instead of cases: notebooks whose error surfaces below the cell that caused it (the "
                        "shipped set without DIR): where batch mode repairs them (`bench --causes --help`)")
    parser.add_argument("--mode", choices=MODES, default="loop", help="loop (default) or one-shot (one call, no rerun)")
    add_loop_arguments(parser, "case")
    parser.add_argument("--case", action="append", default=[], metavar="ID", help="only this case (repeatable)")
    parser.add_argument("--category", action="append", default=[], help="only cases of this category (repeatable)")
    parser.add_argument("--group", action="append", default=[], help="only cases of this group (repeatable)")
    parser.add_argument("--expect-check", action="store_true",
                        help="also give each case's check to the loop as an --expect (shown to the model, like a "
                             "user's own expectation); by default it stays hidden and only verifies the result")
    parser.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                        help="write every figure and case to OUT (and each case, as it finishes, to OUT.cases.jsonl)")
    return parser


def parse_args(argv: list[str]):
    from jupyter_fixloop.options import resolve_model

    opts = build_parser().parse_args(argv)
    opts.model = resolve_model(opts.model)
    return opts


def main(argv: list[str]) -> int:
    if any(a.split("=")[0] in ("--notebooks", "--held-out", "--compare") for a in argv):
        from . import corpora  # real notebooks by corpus, plainly and in batch mode: a bench of its own

        return corpora.main(argv)
    if any(a == "--generation" or a.startswith("--generation=") for a in argv):
        from . import generation  # instructions in a namespace, one-shot and loop: a bench of its own

        return generation.main(argv)
    if any(a == "--causes" or a.startswith("--causes=") for a in argv):
        from . import causes  # errors that surface below their cause: where batch mode repairs them

        return causes.main(argv)
    opts = parse_args(argv)
    try:
        cases = read_cases(opts.cases)
    except (OSError, FixloopError) as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    unknown = sorted(set(opts.case) - {c.id for c in cases})
    if unknown:
        print(f"jupyter-fixloop bench: no case {unknown[0]!r} in {opts.cases}", file=sys.stderr)
        return 2
    cases = [c for c in cases if (not opts.category or c.category in opts.category)
             and (not opts.group or c.group in opts.group) and (not opts.case or c.id in opts.case)]
    if not cases:
        print("jupyter-fixloop bench: no cases to run", file=sys.stderr)
        return 2
    from rich.console import Console

    from jupyter_fixloop.model import check_model

    try:
        check_model(opts.model, opts.api_base)  # one line, before any case runs
    except FixloopError as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        results = _run_with_progress(cases, opts)
    except FixloopError as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 1
    figures = summarize(results)
    figures["wall_seconds"] = time.perf_counter() - started
    console = Console()
    print_report(console, results, figures, opts)
    if opts.json_out:
        write_json(opts.json_out, results, figures, opts)
        console.print(f"figures written to {opts.json_out}")
    return 0


def _run_with_progress(cases: list[Case], opts) -> list[CaseResult]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("fixed {task.fields[fixed]}"))
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(f"{opts.mode} {opts.model}", total=len(cases), fixed=0)
        fixed = 0

        def on_case(case, result):
            nonlocal fixed
            if result is None:
                progress.update(task, description=f"{opts.mode} {opts.model}: {case.id}")
                return
            fixed += result.fixed
            progress.update(task, advance=1, fixed=fixed)
            if opts.json_out:  # a long run stopped early keeps the cases it finished
                with open(opts.json_out + ".cases.jsonl", "a", encoding="utf-8") as f:
                    f.write(json.dumps(asdict(result)) + "\n")

        return run_bench(cases, opts, on_case)


def print_report(console, results: list[CaseResult], figures: dict, opts) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=f"fix rate and claim precision, {opts.mode}, {opts.model}"
                  f"{', checks given' if opts.expect_check else ', hidden check'}", box=box.SIMPLE_HEAD,
                  caption="fixed: the hidden check passes on the final code; claimed: the loop proposed a repair "
                  "(status fixed or unverified); verified: claims the hidden check passes; precision: verified / "
                  "claimed; rounds: model rounds per case (mean); s/case: wall time per case")
    table.add_column("", justify="left", no_wrap=True)
    for name in ("n", "fixed", "rate", "claimed", "verified", "precision", "rounds", "tokens", "$", "s/case"):
        table.add_column(name, justify="right", no_wrap=True, min_width=len(name))

    def row(label, f, style=None):
        precision = "-" if f["claim_precision"] is None else f"{f['claim_precision']:.0%}"
        table.add_row(label, str(f["cases"]), str(f["fixed"]), f"{f['fix_rate']:.0%}", str(f["claimed"]),
                      str(f["claims_verified"]), precision, f"{f['mean_rounds']:.2f}",
                      str(f["tokens"]), f"{f['cost']:.3f}", f"{f['seconds_per_case']:.1f}", style=style)

    for name, f in figures["by_failure"].items():
        row(f"fails by {name}", f)
    table.add_section()
    for name, f in figures["by_group"].items():
        row(f"{name} (group)", f)
    table.add_section()
    for name, f in figures["by_category"].items():
        row(name, f)
    table.add_section()
    row("overall", figures["overall"], style="bold")
    console.print(table)
    console.print(rounds_table(results, figures["rounds"]))
    failed = [r for r in results if not r.fixed]
    for r in failed:
        console.rule(f"not fixed: {r.id} ({r.category}) - {r.status}: {r.reason}", style="red")
        console.print(r.last_receipt or "(no receipt)", markup=False, highlight=False)
        if r.status in ("passed", "answered", *CLAIMS):
            console.print("hidden check on the final code:", style="bold")
            console.print(r.verify_receipt, markup=False, highlight=False)
    unverified = [r for r in results if r.status == "unverified"]
    for r in unverified:
        verdict = "hidden check passes" if r.fixed else "hidden check FAILS"
        console.rule(f"unverified, {verdict}: {r.id} ({r.category})", style="yellow")
        console.print(f"what it does to the data: {r.effect or '(no effect recorded)'}", markup=False, highlight=False)
    console.print(claims_line(figures["overall"]), markup=False, highlight=False)
    console.print(evidence_line(figures["overall"]), markup=False, highlight=False)
    console.print(f"{figures['overall']['fixed']} of {figures['overall']['cases']} fixed "
                  f"in {figures['wall_seconds']:.0f} s")


def claims_line(f: dict) -> str:
    """The claims in one line: how many the loop made, of each status, and how many the hidden check verified."""
    precision = "-" if f["claim_precision"] is None else f"{f['claim_precision']:.0%}"
    return (f"claimed {f['claimed']} (fixed {f['status_fixed']}, unverified {f['unverified']}); claims verified by the "
            f"hidden check {f['claims_verified']} (fixed {f['status_fixed_verified']} of {f['status_fixed']}, "
            f"unverified {f['unverified_verified']} of {f['unverified']}); claim precision {precision}")


def evidence_line(f: dict) -> str:
    """What verified the fixed cases, in one line: the cases with each source of evidence, those whose only
    evidence is a later cell that runs (0 by the rule), and those the hidden check calls wrong."""
    by = ", ".join(f"{source} {n}" for source, n in f["evidence"].items()) or "none"
    return (f"fixed {f['status_fixed']}, by evidence (a case per source it had): {by}; fixed whose only evidence is "
            f"a later cell that runs: {f['runs_only']}; fixed the hidden check calls wrong: {f['fixed_wrong']}")


def rounds_table(results: list[CaseResult], rounds: dict):
    """Per case: the round that fixed it, then each round's receipt kind, prompt tokens and seconds."""
    from rich import box
    from rich.table import Table

    table = Table(title="per case: fixed in round; each round as kind/prompt tokens/model s, all its calls together "
                  "(T: asked again hotter)",
                  box=box.SIMPLE_HEAD)
    table.add_column("case", no_wrap=True)
    table.add_column("fixed in", justify="right")
    table.add_column("rounds")
    for r in results:
        where = "-" if not r.fixed else ("passed" if r.fixed_in_round == 0 else str(r.fixed_in_round or "?"))
        steps = "  ".join(
            f"{row['kind']}/{row['prompt_tokens']}/{row['model_s']:.0f}s"
            + (f" ({len(row['calls'])} calls)" if len(row.get("calls") or ()) > 1 else "")
            + (" T" if i and _low(row) > _low(r.per_round[i - 1]) else "")
            for i, row in enumerate(r.per_round)
        )
        table.add_row(r.id, where, steps)
    r1, r2 = rounds["round_1"], rounds["round_2_plus"]
    by = f" (by {rounds['fixed_by']})" if rounds.get("fixed_by", {}).get("rules") else ""
    table.caption = (f"fixed in round: {rounds['fixed_in_round']}{by}; median prompt tokens per model call: round 1 "
                     f"{r1['median_prompt_tokens']}, rounds 2+ {r2['median_prompt_tokens']} ({rounds['calls']} calls); "
                     "median model s per call: "
                     f"round 1 {r1['median_model_seconds']}, rounds 2+ {r2['median_model_seconds']}; asked again "
                     f"{rounds['asked_again']} (then fixed {rounds['fixed_after_asked_again']}); ended by a repeat "
                     f"{rounds['ended_by_repeat']}")
    return table


def write_json(path: str, results: list[CaseResult], figures: dict, opts) -> None:
    data = {
        "model": opts.model,
        "mode": opts.mode,
        "max_rounds": opts.max_rounds,
        "samples": getattr(opts, "samples", 1),
        "resamples": opts.options.resamples,
        "seed": opts.options.seed,
        "rules": opts.options.rules if opts.mode == "loop" and get_model(opts.options.model).rules_beside else False,
        "timeout": opts.timeout,
        "api_base": opts.api_base,
        "expect_check": opts.expect_check,
        **figures,
        "cases": [asdict(r) for r in results],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)

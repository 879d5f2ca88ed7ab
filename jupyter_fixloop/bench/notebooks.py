"""`jupyter-fixloop bench --notebooks DIR`: real notebooks, run plainly and in batch mode.

For each notebook under DIR, and for each corpus (DIR's top folders): the cells plain Jupyter runs
(nbclient, errors allowed) against the cells batch mode runs; the fixes, by what verified them (the
output saved in the notebook, a following cell that discriminates, a check, or nothing); the cells
kept as their author's examples (they raised when saved too) and those that run but look wrong;
the API-drift cells (cells whose saved outputs show they ran when the notebook was saved,
and that fail here when run plainly, not for a missing package, theirs or that of the cell they fail
after) and how many batch mode runs (repaired, or running once a cell above it was); and what was left,
and why. Each run works on its own copy of DIR (notebooks write files).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from ..errors import FixloopError

FIXED = ("fixed", "unverified")  # a repair that runs: verified by something, or by nothing
VERIFIED_BY = ("saved output", "following cell", "check", "")  # batch's CellOutcome.verified_by; "": unverified


@dataclass
class NotebookFigures:
    name: str
    cells: int = 0
    plain: int = 0
    batch: int = 0
    fixed: Counter = field(default_factory=Counter)  # by what verified them: VERIFIED_BY
    examples: int = 0  # cells that raise as they did when saved: the author's examples, kept
    looks_wrong: int = 0  # cells that run, but pandas says an assignment in them did nothing
    proposed: int = 0
    drift: int = 0
    drift_fixed: int = 0
    drift_unchecked: int = 0  # drift fixes nothing verified (no usable saved output, following cell or check)
    left: list = field(default_factory=list)  # (cell number, status, why)
    drift_left: list = field(default_factory=list)  # (cell number, the error) of drift cells not fixed
    seconds: float = 0.0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop bench --notebooks",
                                     description="Run each notebook under DIR plainly and in batch "
                                                 "mode; print the figures.")
    parser.add_argument("--notebooks", required=True, metavar="DIR",
                        help="a folder of .ipynb files (searched recursively)")
    parser.add_argument("--model", "-m", default=None,
                        help="litellm model (default: $FIXLOOP_MODEL or fixloop/builtin)")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--max-rounds", "-r", type=int, default=None)
    parser.add_argument("--cell-timeout", type=float, default=120.0, help="seconds a cell may run (default 120)")
    parser.add_argument("--accept-unreviewed", action="store_true", help="as `run --accept-unreviewed`")
    parser.add_argument("--no-saved-outputs", dest="saved_outputs", action="store_false")
    return parser


def find_notebooks(folder: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.relpath(os.path.join(root, f), folder) for f in sorted(files)
                  if f.endswith(".ipynb") and not f.endswith(".fixed.ipynb")]
    return found


async def measure(folder: str, rel: str, options, scratch: str) -> NotebookFigures:
    """One notebook, plainly and in batch mode, each in a fresh copy of `folder`."""
    import time

    from ..batch import words
    from ..batch.run import fix_notebook, plain_errors, read_notebook
    from ..receipt import saved_output

    started = time.perf_counter()
    plain_dir, batch_dir = (shutil.copytree(folder, os.path.join(scratch, f"{kind}-{len(os.listdir(scratch))}"))
                            for kind in ("plain", "batch"))
    nb = read_notebook(os.path.join(plain_dir, rel))
    workdir = tempfile.mkdtemp(prefix="nbbench-", dir=scratch)
    plain = await plain_errors(nb, os.path.dirname(os.path.join(plain_dir, rel)), options.cell_timeout,
                               options.kernel_name, workdir)
    path = os.path.join(batch_dir, rel)
    nb = read_notebook(path)
    saved = {i + 1: saved_output(c.get("outputs", [])) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    result = await fix_notebook(nb, path, options)
    figures = NotebookFigures(rel, len(result.outcomes), sum(e is None for e in plain.values()), result.cells_run)
    for o in result.outcomes:
        if o.status in FIXED:  # "unverified": repaired and runs, but nothing checked it
            figures.fixed[o.verified_by if o.status == "fixed" else ""] += 1
        figures.proposed += o.status == "proposed"
        figures.examples += o.status == "example"
        figures.looks_wrong += o.status == "looks_wrong"
        # a drift cell ran when the notebook was saved and fails here plainly, not for a missing package
        # (its own, or that of the unfixed cell it fails after); batch mode fixes it by repairing it or a
        # cell above it
        error = plain.get(o.number)
        cause = plain.get(o.blamed_cell) if o.status == "skipped" else error
        drift = (error is not None and saved.get(o.number) is not None and not words.missing_package(error)
                 and not (o.status == "skipped" and (cause is None or words.missing_package(cause))))
        figures.drift += drift
        figures.drift_fixed += drift and o.status in ("ok", *FIXED, "proposed")
        figures.drift_unchecked += drift and o.status in FIXED and not o.verified_by
        if drift and o.status not in ("ok", *FIXED, "proposed"):
            figures.drift_left.append((o.number, (o.error or error)[:120]))
        if o.status not in ("ok", *FIXED):
            figures.left.append((o.number, o.status, why_left(o)))
    figures.seconds = time.perf_counter() - started
    return figures


def why_left(outcome) -> str:
    """A short category for what was left: the first words of the reason."""
    from ..batch import words

    reason = outcome.reason or outcome.error
    if words.missing_package(outcome.error):
        return "package not installed"
    if "is not there: the notebook runs in" in reason:
        return "file not there"
    if "needs the network" in reason:
        return "network"
    if outcome.status == "skipped":
        return "an earlier cell was not fixed"
    if outcome.status == "proposed":
        return "model fix proposed, not run (unreviewed)"
    if outcome.status == "example":
        return "raised when saved too (the author's example), kept"
    if outcome.status == "looks_wrong":
        return "runs, but looks wrong" + (" (a repair proposed)" if outcome.patched else "")
    if "output matches the one saved" in reason:
        return "no candidate matched the saved output"
    return "no repair: " + (outcome.error.split(":", 1)[0] or "?")


HEADER = ["| notebook | code cells | run plain | run batch | fixed (saved output / following cell / check / "
          "unverified) | proposed | examples kept | look wrong | drift cells fixed |",
          "|---|---|---|---|---|---|---|---|---|"]


def _row(f: NotebookFigures, name: str) -> str:
    fixed = " / ".join(str(f.fixed[by]) for by in VERIFIED_BY)
    return (f"| {name} | {f.cells} | {f.plain} | {f.batch} | {fixed} | {f.proposed} | {f.examples} | "
            f"{f.looks_wrong} | {f.drift_fixed}/{f.drift} |")


def _sum(name: str, figures: list[NotebookFigures]) -> NotebookFigures:
    total = NotebookFigures(name)
    for f in figures:
        for attr in ("cells", "plain", "batch", "proposed", "examples", "looks_wrong", "drift", "drift_fixed",
                     "drift_unchecked"):
            setattr(total, attr, getattr(total, attr) + getattr(f, attr))
        total.fixed.update(f.fixed)
        total.left += f.left
    return total


def corpus(name: str) -> str:
    """The corpus a notebook belongs to: the first folder of its path under DIR ("" at DIR's top)."""
    return name.split("/", 1)[0] if "/" in name else ""


def report(all_figures: list[NotebookFigures]) -> str:
    lines = list(HEADER)
    corpora = sorted({corpus(f.name) for f in all_figures})
    for c in corpora:
        mine = [f for f in all_figures if corpus(f.name) == c]
        lines += [_row(f, f.name) for f in mine]
        if len(corpora) > 1:
            lines.append(_row(_sum(c, mine), f"*{c or '.'} (corpus)*"))
    t = _sum("total", all_figures)
    lines.append(_row(t, "**total**"))
    lines += ["", "fixes by what verified them, per corpus (saved output / a following cell that failed before the "
              "fix or reads what it wrote / a check / nothing):"]
    for c in corpora:
        s = _sum(c, [f for f in all_figures if corpus(f.name) == c])
        lines.append(f"- {c or '.'}: " + " / ".join(f"{s.fixed[by]} {by or 'unverified'}" for by in VERIFIED_BY))
    lines += ["",
              f"drift cells fixed that nothing verified (no saved output, following cell or check): "
              f"{t.drift_unchecked} of {t.drift_fixed}"]
    worse = [f.name for f in all_figures if f.batch < f.plain]
    lines += ["", "batch runs fewer cells than plain Jupyter in: " + (", ".join(worse) if worse else "none"),
              "", "left, and why:"]
    for why, n in Counter(w for _, _, w in t.left).most_common():
        lines.append(f"- {n} {why}")
    lines += ["", "drift cells not fixed:"]
    lines += [f"- {f.name} cell {n}: {error}" for f in all_figures for n, error in f.drift_left]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from ..batch.run import BatchOptions
    from ..config import load_config
    from ..model import check_model

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not os.path.isdir(args.notebooks) or not find_notebooks(args.notebooks):
        print(f"jupyter-fixloop bench: {args.notebooks}: no notebooks in this folder", file=sys.stderr)
        return 2
    loop = load_config().options().with_(model=args.model, max_rounds=args.max_rounds,
                                         api_base=args.api_base).resolved()
    try:
        check_model(loop.model, loop.api_base)
    except FixloopError as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    options = BatchOptions(loop=loop, cell_timeout=args.cell_timeout, accept_unreviewed=args.accept_unreviewed,
                           plain=False, saved_outputs=args.saved_outputs)
    folder = os.path.abspath(args.notebooks)
    figures = []
    with tempfile.TemporaryDirectory(prefix="fixloop-nbbench-") as scratch:
        for rel in find_notebooks(folder):
            try:
                f = asyncio.run(measure(folder, rel, options, scratch))
            except FixloopError as exc:
                print(f"jupyter-fixloop bench: {rel}: {exc}", file=sys.stderr)
                continue
            print(f"{rel}: {f.batch} cells run (plain Jupyter: {f.plain}), {sum(f.fixed.values())} fixed, "
                  f"{f.drift_fixed}/{f.drift} drift cells fixed, {f.seconds:.0f} s", file=sys.stderr, flush=True)
            figures.append(f)
    print(report(figures))
    return 0 if all(f.batch >= f.plain for f in figures) else 1

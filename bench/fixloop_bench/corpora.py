"""`jupyter-fixloop bench --notebooks DIR [DIR ...] [--held-out DIR ...]`: real notebooks, by corpus.

Each DIR is a corpus: a folder of notebooks (searched recursively) with the files they read. Every
notebook is run plainly and in batch mode (see notebooks.py); printed per corpus, its notebooks'
figures, then one table of the corpora, the corpora developed on (`--notebooks`) beside the corpora
held out (`--held-out`: notebooks nobody tuned the rules to) with the gap between them, and each
corpus left out in turn against all the others. Plotting cells run with matplotlib's non-interactive
Agg backend (`MPLBACKEND=Agg`, unless set), so their drift counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter

from jupyter_fixloop.errors import FixloopError, Stopped

from .notebooks import (
    RAN,
    STOP_AFTER,
    VERDICTS,
    VERIFIED_BY,
    NotebookFigures,
    accepted_line,
    by_evidence,
    by_verdict,
    by_verifier,
    measure,
    report,
    unfinished_words,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop bench --notebooks",
                                     description="Run each notebook of each corpus plainly and in batch mode; print "
                                                 "the figures per corpus, and the corpora developed on beside those "
                                                 "held out.")
    parser.add_argument("--notebooks", nargs="*", default=[], metavar="DIR",
                        help="corpora developed on: folders of .ipynb files (searched recursively)")
    parser.add_argument("--held-out", nargs="+", default=[], metavar="DIR",
                        help="corpora held out: notebooks the rules were not developed on")
    parser.add_argument("--model", "-m", default=None,
                        help="litellm model (default: $FIXLOOP_MODEL or fixloop/builtin)")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--max-rounds", "-r", type=int, default=None)
    parser.add_argument("--cell-timeout", type=float, default=120.0, help="seconds a cell may run (default 120)")
    parser.add_argument("--kernel", default=None, help="kernel name (default: each notebook's own, or python3)")
    parser.add_argument("--era-kernel", action="append", default=[], metavar="[CORPUS=]NAME",
                        help="a kernel with the libraries of the notebooks' time (old enough for the removed "
                             "spelling, new enough for its replacement), for every corpus or for CORPUS (its "
                             "folder's name; repeatable): a drift fix shown wrong here is run there too, and "
                             "counted right when it shows the saved output there; a drift fix nothing here "
                             "verified (random draws, no saved output that is a check) is decided by the same "
                             "random draws: the notebook as saved run there, the fixed one here, both from one "
                             "seed")
    parser.add_argument("--seed", type=int, default=None, metavar="N",
                        help="sent with each model call (FixLoop.seed), so that a run can be repeated where the "
                             "server honours it")
    parser.add_argument("--model-timeout", type=float, default=None, metavar="S",
                        help="seconds one model call may take (FixLoop.model_timeout; a local model on a shared "
                             "core needs more than the default)")
    parser.add_argument("--model-cells", choices=("all", "drift"), default="all",
                        help="the failing cells whose repair may call --model: all (default), or only the drift "
                             "cells the figures count (they ran without error when saved and fail here plainly, "
                             "not for a missing package, file or network, nor hidden state or Python 2 code); "
                             "every other failing cell gets the built-in engine alone, as the JSON and the "
                             "printed header say")
    parser.add_argument("--no-library-changes", dest="library_changes", action="store_false",
                        help="leave out of the model's prompt what the libraries said they changed "
                             "(FixLoop.library_changes_in_prompt False): the model with and without it")
    parser.add_argument("--accept-unreviewed", action="store_true", help="as `run --accept-unreviewed`")
    parser.add_argument("--no-saved-outputs", dest="saved_outputs", action="store_false")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="only the notebooks whose path holds TEXT (repeatable)")
    parser.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                        help="write each notebook's figures to OUT as it finishes")
    parser.add_argument("--resume", action="store_true",
                        help="with --json: take the notebooks already in OUT from it instead of running them again")
    parser.add_argument("--against", default=None, metavar="BASELINE",
                        help="the --json OUT of another run (the built-in engine alone, beside this run's --model): "
                             "each notebook both measured, its drift cells fixed there and here, and each side's total")
    parser.add_argument("--stop-after", type=float, default=None, metavar="MINUTES",
                        help="a wall-clock budget for the whole run: when it is spent, the run stops where it is "
                             "(as on SIGTERM) and writes what it measured: the notebook under way is kept, marked "
                             "unfinished, with the cells batch mode decided so far; the notebooks after it are not run")
    parser.add_argument("--compare", nargs=2, default=None, metavar=("A", "B"),
                        help="run nothing: print two runs' --json OUT side by side on the cells both decided (each "
                             "notebook both measured, finished or not): the drift cells among them and how each run "
                             "left them")
    parser.add_argument("--keep-notebooks", default=None, metavar="DIR",
                        help="save the notebooks batch mode wrote (fixes and outputs) under DIR/<corpus>/, for review")
    return parser


def find_notebooks(folder: str, only: list[str] = ()) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.relpath(os.path.join(root, f), folder) for f in sorted(files)
                  if f.endswith(".ipynb") and not f.endswith(".fixed.ipynb")]
    return [rel for rel in found if not only or any(text in rel for text in only)]


def rate(fixed: int, of: int) -> str:
    return f"{fixed}/{of} ({100 * fixed / of:.0f}%)" if of else "0/0 (-)"


def summary(corpora: dict[str, list[NotebookFigures]], held_out: set[str]) -> str:
    """The corpora side by side: each one, the developed-on and held-out totals and their gap, and
    each corpus left out in turn against the others."""
    totals = {}
    for name, figures in corpora.items():
        totals[name] = NotebookFigures(name)
        for f in figures:
            totals[name].add(f)
    lines = ["| corpus | side | notebooks | code cells | run plain | run batch | fixed (saved output / following "
             "cell / check / unverified) | drift cells fixed | drift fixes right / wrong / unverified | "
             "s per notebook | notebooks batch < plain | hidden state (not drift) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, t in totals.items():
        worse = sum(f.batch < f.plain for f in corpora[name])
        n = len(corpora[name])
        lines.append(f"| {name} | {'held out' if name in held_out else 'dev'} | {n} | {t.cells} | {t.plain} | "
                     f"{t.batch} | {by_verifier(t)} | {rate(t.drift_fixed, t.drift)} | {by_verdict(t)} | "
                     f"{t.seconds / max(n, 1):.0f} | {worse} | {len(t.hidden)} |")
    sides = {"dev": NotebookFigures("dev"), "held out": NotebookFigures("held out")}
    for name, t in totals.items():
        sides["held out" if name in held_out else "dev"].add(t)
    dev, out = sides["dev"], sides["held out"]
    lines += ["", "| figure | dev | held out | gap (dev - held out) |", "|---|---|---|---|",
              f"| corpora | {len(totals) - len(held_out & set(totals))} | {len(held_out & set(totals))} | |",
              f"| cells run plain / batch | {dev.plain} / {dev.batch} | {out.plain} / {out.batch} | |",
              f"| fixes verified by saved output / following cell / check / nothing | {by_verifier(dev)} | "
              f"{by_verifier(out)} | |",
              f"| drift cells fixed | {rate(dev.drift_fixed, dev.drift)} | {rate(out.drift_fixed, out.drift)} | "
              f"{_gap(dev, out, 'fixed')} |",
              f"| drift cells fixed right | {rate(dev.verdicts['right'], dev.drift)} | "
              f"{rate(out.verdicts['right'], out.drift)} | {_gap(dev, out, 'right')} |",
              f"| drift fixes wrong | {dev.verdicts['wrong']} | {out.verdicts['wrong']} | |",
              *([f"| drift fixes right only in the era kernel (counted right) | {len(dev.era)} | {len(out.era)} | |"]
                if dev.era or out.era else []),
              f"| drift fixes unverified | {dev.verdicts['unverified']} | {out.verdicts['unverified']} | |",
              *([f"| drift cells left that run once the proposed module repairs are accepted (not counted fixed) | "
                 f"{accepted_line(dev)} | {accepted_line(out)} | |"]
                if dev.accepted_files or out.accepted_files else []),
              f"| hidden state (a NameError naming a name no cell defines or imports; not drift) | {len(dev.hidden)} | "
              f"{len(out.hidden)} | |"]
    lines += ["", "| corpus | fixed | by evidence (a cell per source it had) | fixed whose only evidence is a later "
              "cell that runs | fixed a saved output calls wrong |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {sum(t.fixed[by] for by in VERIFIED_BY if by)} | {by_evidence(t)} | {len(t.runs_only)} | "
              f"{len(t.fixed_wrong)} |" for name, t in totals.items()]
    if len(totals) > 1:
        lines += ["", "Each corpus left out in turn (drift cells fixed):", "",
                  "| left out | its drift cells fixed | the other corpora's | gap (others - it) |", "|---|---|---|---|"]
        for name, t in totals.items():
            rest = NotebookFigures("rest")
            for other, o in totals.items():
                if other != name:
                    rest.add(o)
            lines.append(f"| {name} | {rate(t.drift_fixed, t.drift)} | {rate(rest.drift_fixed, rest.drift)} | "
                         f"{_points(rest.drift_fixed, rest.drift, t.drift_fixed, t.drift)} |")
    return "\n".join(lines)


def against(every: list[NotebookFigures], baseline: dict[str, dict], held_out: set[str]) -> str:
    """Each notebook of this run that `baseline` (another run's --json, by "corpus/name") measured too: its drift
    cells fixed there and here, right / wrong / unverified, and the seconds each took; then each side's total."""
    lines = ["| notebook | side | drift cells | baseline: fixed (right / wrong / unverified), s | this run: fixed "
             "(right / wrong / unverified), s |", "|---|---|---|---|---|"]
    sides = {side: (NotebookFigures("baseline"), NotebookFigures("this run")) for side in ("dev", "held out")}
    for f in every:
        if f"{f.corpus}/{f.name}" not in baseline:
            continue
        b = NotebookFigures.from_json(baseline[f"{f.corpus}/{f.name}"])
        side = "held out" if f.corpus in held_out else "dev"
        sides[side][0].add(b)
        sides[side][1].add(f)
        lines.append(f"| {f.corpus}/{f.name} | {side} | {f.drift} | {b.drift_fixed} ({by_verdict(b)}), "
                     f"{b.seconds:.0f} | {f.drift_fixed} ({by_verdict(f)}), {f.seconds:.0f} |")
    for side, (b, f) in sides.items():
        if f.drift or f.seconds:
            lines.append(f"| **{side}** | | {f.drift} | {rate(b.drift_fixed, b.drift)} ({by_verdict(b)}), "
                         f"{b.seconds:.0f} | {rate(f.drift_fixed, f.drift)} ({by_verdict(f)}), {f.seconds:.0f} |")
    return "\n".join(lines)


def on_cells_both_decided(a: dict[str, dict], b: dict[str, dict], names: tuple[str, str] = ("A", "B")) -> str:
    """Two runs' --json OUT (by "corpus/name") side by side on the cells both decided: for each notebook both
    measured (finished or not), the drift cells among those cells (a drift cell in both runs) and how each run
    left them, fixed right / wrong / unverified or left; the cells batch mode ran; then the total of each run."""
    lines = [f"| notebook | cells both decided | drift cells among them | {names[0]}: fixed (right / wrong / "
             f"unverified) | {names[1]}: fixed (right / wrong / unverified) | cells run in batch mode, "
             f"{names[0]} / {names[1]} |", "|---|---|---|---|---|---|"]
    totals = [Counter(), Counter()]
    apart = []
    for key in (k for k in a if k in b):
        sides = [{n: (status, drift) for n, status, drift in run[key].get("decided", [])} for run in (a, b)]
        both = sorted(sides[0].keys() & sides[1].keys())
        drift = [n for n in both if sides[0][n][1] and sides[1][n][1]]
        apart += [f"{key} cell {n}" for n in both if bool(sides[0][n][1]) != bool(sides[1][n][1])]
        counts = [Counter(side[n][1] for n in drift) for side in sides]
        ran = [sum(side[n][0] in RAN for n in both) for side in sides]
        for total, count, cells in zip(totals, counts, ran):
            total.update(count + Counter(cells=cells, drift=len(drift), decided=len(both)))
        lines.append(f"| {key} | {len(both)} | {len(drift)} | {_fixed(counts[0], len(drift))} | "
                     f"{_fixed(counts[1], len(drift))} | {ran[0]} / {ran[1]} |")
    d = totals[0]["drift"]
    lines.append(f"| **total** | {totals[0]['decided']} | {d} | {_fixed(totals[0], d)} | {_fixed(totals[1], d)} | "
                 f"{totals[0]['cells']} / {totals[1]['cells']} |")
    lines += ["", "a drift cell in one run only (its plain run differed; not compared): "
              + (", ".join(apart) or "none")]
    return "\n".join(lines)


def _fixed(count: Counter, of: int) -> str:
    fixed = sum(count[v] for v in VERDICTS)
    return f"{rate(fixed, of)} ({' / '.join(str(count[v]) for v in VERDICTS)})"


def compare_main(first: str, second: str) -> int:
    """`bench --compare A B`: the two runs on the cells both decided, or a one-line error."""
    runs = []
    for path in (first, second):
        try:
            runs.append(_load(path) if os.path.exists(path) else None)
        except (OSError, ValueError, KeyError) as exc:
            print(f"jupyter-fixloop bench: --compare {path}: not a --json OUT of `bench --notebooks` ({exc})",
                  file=sys.stderr)
            return 2
        if runs[-1] is None:
            print(f"jupyter-fixloop bench: --compare {path}: no such file", file=sys.stderr)
            return 2
    names = tuple(os.path.basename(p) for p in (first, second))
    print(f"{names[0]} beside {names[1]}, on the cells both decided:\n\n{on_cells_both_decided(*runs, names)}")
    return 0


def _gap(dev: NotebookFigures, out: NotebookFigures, what: str) -> str:
    pick = (lambda f: f.drift_fixed) if what == "fixed" else (lambda f: f.verdicts[what])
    return _points(pick(dev), dev.drift, pick(out), out.drift)


def _points(a: int, of_a: int, b: int, of_b: int) -> str:
    if not of_a or not of_b:
        return "-"
    return f"{100 * a / of_a - 100 * b / of_b:+.0f} points"


def _load(path: str | None) -> dict[str, dict]:
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {f"{d['corpus']}/{d['name']}": d for d in json.load(f)["notebooks"]}


def _save(path: str, figures: list[NotebookFigures], model_cells: str = "all") -> None:
    with open(path + ".tmp", "w") as f:
        json.dump({"model_cells": model_cells, "notebooks": [x.as_json() for x in figures]}, f, indent=1)
    os.replace(path + ".tmp", path)


def _options(args):
    """The batch options of the run, or a one-line error."""
    from jupyter_fixloop.batch.run import BatchOptions, refuse_no_rounds
    from jupyter_fixloop.config import load_config
    from jupyter_fixloop.model import check_model

    loop = load_config().options().with_(model=args.model, max_rounds=args.max_rounds, api_base=args.api_base,
                                         seed=args.seed, model_timeout=args.model_timeout,
                                         library_changes_in_prompt=None if args.library_changes else False).resolved()
    refuse_no_rounds(loop)
    check_model(loop.model, loop.api_base)
    return BatchOptions(loop=loop, cell_timeout=args.cell_timeout, kernel_name=args.kernel,
                        accept_unreviewed=args.accept_unreviewed, plain=False, saved_outputs=args.saved_outputs)


def _measure_all(folders, names, args, options, eras) -> tuple[list[NotebookFigures], str]:
    """Every notebook's figures (those finished in --json OUT taken from it with --resume), each written to OUT as
    it finishes; and what stopped the run (a signal's name, or --stop-after), or "". A stopped notebook is kept,
    marked unfinished, with the cells batch mode decided so far; the notebooks after it are not run."""
    done = _load(args.json_out) if args.resume else {}
    deadline = time.monotonic() + 60 * args.stop_after if args.stop_after is not None else None
    every: list[NotebookFigures] = []
    with tempfile.TemporaryDirectory(prefix="fixloop-nbbench-") as scratch:
        for folder, rel in ((f, rel) for f in folders for rel in find_notebooks(f, args.only)):
            corpus = names[folder]
            keep = os.path.join(args.keep_notebooks, corpus) if args.keep_notebooks else None
            if f"{corpus}/{rel}" in done and not done[f"{corpus}/{rel}"].get("unfinished"):
                f = NotebookFigures.from_json(done[f"{corpus}/{rel}"])
            elif deadline is not None and time.monotonic() >= deadline:
                _said_stopped(STOP_AFTER, f"before {corpus}/{rel}", "", args)
                return every, STOP_AFTER
            else:
                try:
                    f = asyncio.run(measure(folder, rel, options, scratch, keep, eras.get(corpus, eras.get("")),
                                            deadline, args.model_cells == "drift"))
                except Stopped as exc:  # a stop that came outside a notebook's run
                    _said_stopped(str(exc), f"in {corpus}/{rel}", "it and ", args)
                    return every, str(exc)
                except FixloopError as exc:
                    print(f"jupyter-fixloop bench: {corpus}/{rel}: {exc}", file=sys.stderr)
                    continue
                except (Exception, asyncio.CancelledError) as exc:  # a kernel lost mid-run: measure the rest
                    print(f"jupyter-fixloop bench: {corpus}/{rel}: not measured ({type(exc).__name__}: {exc})",
                          file=sys.stderr)
                    continue
                print(f"{corpus}/{rel}{unfinished_words(f)}: {f.batch} cells run (plain Jupyter: {f.plain}), "
                      f"{sum(f.fixed.values())} fixed, {f.drift_fixed}/{f.drift} drift cells fixed "
                      f"({f.verdicts['wrong']} wrong), {f.seconds:.0f} s", file=sys.stderr, flush=True)
            f.corpus = corpus  # resumed or measured: the corpus it was measured in
            every.append(f)
            if args.json_out:
                _save(args.json_out, every, args.model_cells)
            if f.unfinished:
                _said_stopped(f.unfinished, f"in {corpus}/{rel}", "", args)
                return every, f.unfinished
    return every, ""


def header(model: str, model_cells: str) -> str:
    """The line that says which engine repaired which failing cells."""
    from jupyter_fixloop.options import BUILTIN

    if model == BUILTIN:
        return "Repairs: the built-in engine, on every failing cell."
    if model_cells == "drift":
        return (f"Repairs: {model} beside the rules on the drift cells only (those the figures count as drift); "
                "every other failing cell: the built-in engine alone (--model-cells drift).")
    return f"Repairs: {model} beside the rules, on every failing cell."


def _said_stopped(why: str, where: str, which: str, args) -> None:
    print(f"jupyter-fixloop bench: stopped by {why} {where}: {which}the notebooks after it are not measured"
          f"{'; --resume takes the rest' if args.json_out else ''}", file=sys.stderr)


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.compare:
        return compare_main(*args.compare)
    if args.stop_after is not None and args.stop_after <= 0:
        print("jupyter-fixloop bench: --stop-after takes a number of minutes above 0", file=sys.stderr)
        return 2
    folders = {os.path.abspath(d): d in args.held_out for d in [*args.notebooks, *args.held_out]}
    names = {folder: os.path.basename(folder.rstrip(os.sep)) for folder in folders}
    if not folders:
        print("jupyter-fixloop bench: no corpus: give --notebooks DIR (and --held-out DIR)", file=sys.stderr)
        return 2
    for folder in folders:
        if not os.path.isdir(folder) or not find_notebooks(folder, args.only):
            why = " that --only picks" if args.only and os.path.isdir(folder) else ""
            print(f"jupyter-fixloop bench: {folder}: no notebooks{why} in this folder", file=sys.stderr)
            return 2
    eras = {corpus: kernel for corpus, _, kernel in (era.rpartition("=") for era in args.era_kernel)}
    unknown = sorted(set(eras) - {"", *names.values()})
    if unknown:
        print(f"jupyter-fixloop bench: --era-kernel {unknown[0]}=...: no corpus of that name (the corpora: "
              f"{', '.join(sorted(names.values()))})", file=sys.stderr)
        return 2
    try:
        options = _options(args)
    except FixloopError as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    os.environ.setdefault("MPLBACKEND", "Agg")  # kernels inherit it: plots draw off-screen, their drift counts
    corpora: dict[str, list[NotebookFigures]] = {names[f]: [] for f in folders}
    every, stopped = _measure_all(folders, names, args, options, eras)
    for f in every:
        corpora[f.corpus].append(f)
    held_out = {names[f] for f, out in folders.items() if out}
    print(header(options.loop.model, args.model_cells) + "\n")
    for corpus, figures in corpora.items():
        print(f"## {corpus} ({'held out' if corpus in held_out else 'dev'})\n\n{report(figures)}\n")
    print(summary(corpora, held_out))
    if args.against:
        print(f"\nAgainst {args.against}, the notebooks both runs measured:\n\n"
              f"{against(every, _load(args.against), held_out)}")
    if stopped in signal.Signals.__members__:
        return 128 + signal.Signals[stopped].value
    return 0 if all(f.batch >= f.plain for f in every) else 1

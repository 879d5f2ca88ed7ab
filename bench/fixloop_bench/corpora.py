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

from jupyter_fixloop.errors import FixloopError, Stopped

from .notebooks import (
    VERIFIED_BY,
    NotebookFigures,
    accepted_line,
    by_evidence,
    by_verdict,
    by_verifier,
    measure,
    report,
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
                             "counted right when it shows the saved output there")
    parser.add_argument("--seed", type=int, default=None, metavar="N",
                        help="sent with each model call (FixLoop.seed), so that a run can be repeated where the "
                             "server honours it")
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


def _save(path: str, figures: list[NotebookFigures]) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump({"notebooks": [x.as_json() for x in figures]}, f, indent=1)
    os.replace(path + ".tmp", path)


def _options(args):
    """The batch options of the run, or a one-line error."""
    from jupyter_fixloop.batch.run import BatchOptions, refuse_no_rounds
    from jupyter_fixloop.config import load_config
    from jupyter_fixloop.model import check_model

    loop = load_config().options().with_(model=args.model, max_rounds=args.max_rounds, api_base=args.api_base,
                                         seed=args.seed,
                                         library_changes_in_prompt=None if args.library_changes else False).resolved()
    refuse_no_rounds(loop)
    check_model(loop.model, loop.api_base)
    return BatchOptions(loop=loop, cell_timeout=args.cell_timeout, kernel_name=args.kernel,
                        accept_unreviewed=args.accept_unreviewed, plain=False, saved_outputs=args.saved_outputs)


def _measure_all(folders, names, args, options, eras) -> tuple[list[NotebookFigures], str]:
    """Every notebook's figures (those in --json OUT taken from it with --resume), each written to OUT as it
    finishes; and the signal that stopped the run, or ""."""
    done = _load(args.json_out) if args.resume else {}
    every: list[NotebookFigures] = []
    with tempfile.TemporaryDirectory(prefix="fixloop-nbbench-") as scratch:
        for folder, rel in ((f, rel) for f in folders for rel in find_notebooks(f, args.only)):
            corpus = names[folder]
            keep = os.path.join(args.keep_notebooks, corpus) if args.keep_notebooks else None
            if f"{corpus}/{rel}" in done:
                f = NotebookFigures.from_json(done[f"{corpus}/{rel}"])
            else:
                try:
                    f = asyncio.run(measure(folder, rel, options, scratch, keep, eras.get(corpus, eras.get(""))))
                except Stopped as exc:  # the notebooks measured so far are kept (and in --json OUT)
                    print(f"jupyter-fixloop bench: stopped by {exc} in {corpus}/{rel}: it and the notebooks after "
                          f"it are not measured{'; --resume takes the rest' if args.json_out else ''}",
                          file=sys.stderr)
                    return every, str(exc)
                except FixloopError as exc:
                    print(f"jupyter-fixloop bench: {corpus}/{rel}: {exc}", file=sys.stderr)
                    continue
                except (Exception, asyncio.CancelledError) as exc:  # a kernel lost mid-run: measure the rest
                    print(f"jupyter-fixloop bench: {corpus}/{rel}: not measured ({type(exc).__name__}: {exc})",
                          file=sys.stderr)
                    continue
                print(f"{corpus}/{rel}: {f.batch} cells run (plain Jupyter: {f.plain}), {sum(f.fixed.values())} "
                      f"fixed, {f.drift_fixed}/{f.drift} drift cells fixed ({f.verdicts['wrong']} wrong), "
                      f"{f.seconds:.0f} s", file=sys.stderr, flush=True)
            f.corpus = corpus  # resumed or measured: the corpus it was measured in
            every.append(f)
            if args.json_out:
                _save(args.json_out, every)
    return every, ""


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
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
    for corpus, figures in corpora.items():
        print(f"## {corpus} ({'held out' if corpus in held_out else 'dev'})\n\n{report(figures)}\n")
    print(summary(corpora, held_out))
    if args.against:
        print(f"\nAgainst {args.against}, the notebooks both runs measured:\n\n"
              f"{against(every, _load(args.against), held_out)}")
    if stopped:
        return 128 + signal.Signals[stopped].value
    return 0 if all(f.batch >= f.plain for f in every) else 1

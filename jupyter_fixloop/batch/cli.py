"""The command line of batch mode: `jupyter-fixloop run NOTEBOOK [options]`.

Everything that can be wrong with the request (a bad option, a missing or invalid notebook, an
output that would overwrite the input) is found before a kernel starts, and exits with code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import sys
from dataclasses import dataclass

from ..config import flag_arguments, load_config, with_flags
from ..errors import FixloopError, UsageError
from ..hidden import visible
from ..model import check_model
from ..sandbox import confine
from .modules import diff_path
from .run import REPORT_FORMATS, BatchOptions, Stop, accept_all, fix_notebook, read_notebook, refuse_no_rounds

SEVERITY = (0, 3, 1, 2)  # exit codes, least to most severe: with several notebooks the worst wins


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter-fixloop run",
        description="Run a notebook top to bottom in its kernel and repair the cells that fail. "
        "Writes the patched copy (NOTEBOOK.fixed.ipynb unless -o or --in-place) and, with --report, "
        "a Markdown or HTML report. Exit code 0: every cell runs (each repair verified); 3: every cell runs, "
        "nothing checked some repairs; 1: some could not be fixed; 2: bad usage.",
    )
    parser.add_argument("notebooks", nargs="+", metavar="NOTEBOOK",
                        help="the .ipynb files to run and repair, or folders of them")
    parser.add_argument("-o", "--output", help="where to write the patched notebook (one notebook only)")
    parser.add_argument("--jobs", "-j", type=int, default=1,
                        help="notebooks repaired at a time, each in its own kernel (default 1)")
    parser.add_argument("--in-place", action="store_true", help="overwrite NOTEBOOK (a .bak copy is written first)")
    parser.add_argument("--report", help="write a report: REPORT.md (Markdown) or REPORT.html")
    parser.add_argument("--cells", help="repair only these cells, by position counting every cell from 1: 3,5-7")
    parser.add_argument("--interactive", "-i", action="store_true",
                        help="show each fix and ask: accept, reject, or hint")
    parser.add_argument("--accept-unreviewed", action="store_true",
                        help="run a litellm model's verified fixes in the notebook's kernel without review (by default "
                        "they are written to the notebook and the report, and the kernel runs the original cell)")
    parser.add_argument("--no-saved-outputs", dest="saved_outputs", action="store_false",
                        help="do not check fixes against the outputs saved in the notebook")
    parser.add_argument("--no-plain", dest="plain", action="store_false",
                        help="do not count the cells plain Jupyter runs (counted from this run: no cell runs twice)")
    parser.add_argument("--hint", help="extra guidance for the model, for every failing cell")
    parser.add_argument("--cell-timeout", type=float, default=600.0,
                        help="seconds a cell may run in the notebook's kernel (default 600)")
    parser.add_argument("--kernel", help="kernel name (default: the notebook's own, or python3)")
    settings = parser.add_argument_group("settings", "each overrides the FixLoop setting of its name "
                                         "(jupyter_fixloop_config.py; docs/options.md)")
    for flags, keywords in flag_arguments():
        settings.add_argument(*flags, **keywords)
    return parser


def parse_cells(text: str, count: int) -> frozenset[int]:
    """`3,5-7` -> {3, 5, 6, 7}; numbers are positions counting every cell from 1."""
    numbers: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise UsageError(f"--cells: {part!r} is not a number or a range like 5-7")
        low, high = int(m.group(1)), int(m.group(2) or m.group(1))
        if low < 1 or high < low:
            raise UsageError(f"--cells: {part!r} is not a range of cell numbers from 1")
        if high > count:
            raise UsageError(f"--cells: the notebook has {count} cells, there is no cell {high}")
        numbers.update(range(low, high + 1))
    return frozenset(numbers)


@dataclass(frozen=True)
class Paths:
    notebook: str
    output: str
    backup: str | None
    report: str | None


def plan_paths(args, src: str) -> Paths:
    """Where everything is written; the input is only overwritten with --in-place (after a backup)."""
    if args.in_place and args.output:
        raise UsageError("use either -o OUTPUT or --in-place, not both")
    if args.report and os.path.splitext(args.report)[1].lower() not in REPORT_FORMATS:
        raise UsageError(f"--report {args.report}: the report is written as .md or .html")
    if args.in_place:
        return Paths(src, src, _free_name(src + ".bak"), args.report)
    output = args.output or os.path.splitext(src)[0] + ".fixed.ipynb"
    if os.path.exists(output) and os.path.samefile(output, src):
        raise UsageError(f"-o {output} is the input notebook; use --in-place to overwrite it (a backup is kept)")
    return Paths(src, output, None, args.report)


def _free_name(path: str) -> str:
    candidate, n = path, 1
    while os.path.exists(candidate):
        candidate, n = f"{path}.{n}", n + 1
    return candidate


def notebook_files(names: list[str]) -> list[str]:
    """The notebooks named, a folder standing for the notebooks in it (not their patched copies)."""
    found = []
    for name in names:
        if os.path.isdir(name):
            inside = sorted(os.path.join(name, f) for f in os.listdir(name)
                            if f.endswith(".ipynb") and not f.endswith(".fixed.ipynb"))
            if not inside:
                raise UsageError(f"{name}: no notebooks in this folder")
            found += inside
        else:
            found.append(name)
    return list(dict.fromkeys(found))


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage or the help
        return int(exc.code or 0)
    try:
        sources = notebook_files(args.notebooks)
        several = len(sources) > 1
        if several and (args.output or args.cells):
            raise UsageError("-o and --cells take one notebook; with several, each is written beside its input "
                             "(NAME.fixed.ipynb, or --in-place)")
        if args.jobs < 1 or (args.interactive and args.jobs > 1):
            raise UsageError("--jobs must be 1 or more, and 1 with --interactive (one question at a time)")
        if args.cell_timeout <= 0:
            raise UsageError("--cell-timeout must be a positive number of seconds")
        work = [(read_notebook(src), plan_paths(args, src)) for src in sources]
        loop = with_flags(load_config().options(), args).resolved()
        refuse_no_rounds(loop)
        check_model(loop.model, loop.api_base)  # before any cell runs
        if not loop.gateway_url and confine.resolve(loop.confinement) == "refused":
            raise UsageError(confine.REFUSAL)
        options = BatchOptions(loop=loop, cell_timeout=args.cell_timeout, kernel_name=args.kernel,
                               accept_unreviewed=args.accept_unreviewed, plain=args.plain,
                               saved_outputs=args.saved_outputs,
                               cells=parse_cells(args.cells, len(work[0][0].cells)) if args.cells else None)
    except UsageError as exc:
        print(f"jupyter-fixloop run: {exc}", file=sys.stderr)
        return 2
    return _run(work, args, options)


def _run(work: list, args, options: BatchOptions) -> int:
    """Repair every notebook, `--jobs` at a time; the worst exit code wins."""
    from . import terminal

    several = len(work) > 1
    bar = terminal.rich_bar() if several and sys.stderr.isatty() else None
    progresses = [terminal.make_progress(bar, os.path.basename(paths.notebook) if several else "")
                  for _, paths in work]
    decide = terminal.make_asker(progresses[0]) if args.interactive else accept_all

    async def all_of():
        slots = asyncio.Semaphore(args.jobs)
        stop = Stop()
        stop.listen()

        async def one(item, progress):
            async with slots:
                nb, paths = item
                return await fix_notebook(nb, paths.notebook, options, progress, decide, stop)

        return await asyncio.gather(*(one(item, p) for item, p in zip(work, progresses)), return_exceptions=True)

    try:
        results = asyncio.run(all_of())
    finally:
        if bar is not None:
            bar.stop()
    return _write(work, results, args)


def _write(work: list, results: list, args) -> int:
    import nbformat

    from . import report

    codes, done, stopped = [], [], 0
    for (nb, paths), result in zip(work, results):
        if isinstance(result, FixloopError):
            print(visible(f"jupyter-fixloop run: {paths.notebook}: {result}"), file=sys.stderr)
            codes.append(2)
            continue
        if isinstance(result, BaseException):
            raise result
        if result.kernel_note:
            print(f"jupyter-fixloop run: {paths.notebook}: {result.kernel_note}", file=sys.stderr)
        if paths.backup:
            shutil.copy2(paths.notebook, paths.backup)
        nbformat.write(nb, paths.output)
        for o in result.outcomes:  # a module of the notebook's folder: its repair beside the output, never over it
            if o.module_diff:
                with open(diff_path(paths.output, o.module_file), "w", encoding="utf-8") as f:
                    f.write(o.module_diff)
        done.append((result, paths.output))
        codes.append(0 if result.ok and result.verified else 3 if result.ok else 1)
        single_report = paths.report if len(work) == 1 else None
        if single_report:
            report.write_report(result, single_report, paths.output)
        if result.stopped:
            print(report.stopped_line(result, paths.output, single_report), file=sys.stderr)
            stopped = 128 + signal.Signals[result.stopped].value
        else:
            print(report.summary_text(result, paths.output, single_report, paths.backup))
    if len(work) > 1 and args.report and done:
        report.combined_report(done, args.report)
        print(f"report: {args.report}")
    return stopped or max(codes, key=SEVERITY.index)

"""`jupyter-fixloop demo [NOTEBOOK]`: execute a demo notebook headless and print each loop's outcome.

The demo shows the `%%fixloop` magic at work inside a notebook (notebooks/demo.ipynb). To repair a
whole notebook instead, see `jupyter-fixloop run` (batch.py) and notebooks/cleaning.ipynb.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from .cell import split_magic


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop demo", description=__doc__)
    parser.add_argument("notebook", nargs="?", default=os.path.join("notebooks", "demo.ipynb"))
    parser.add_argument("--timeout", type=float, default=300, help="seconds per cell")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if not os.path.exists(args.notebook):
        print(f"jupyter-fixloop demo: no notebook at {args.notebook}; run from the repository root or pass a path",
              file=sys.stderr)
        return 2
    from .batch.run import CellFailed, execute_notebook, read_notebook
    from .errors import UsageError

    try:
        nb = read_notebook(args.notebook)
    except UsageError as exc:
        print(f"jupyter-fixloop demo: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        execute_notebook(nb, os.path.dirname(os.path.abspath(args.notebook)), args.timeout)
    except CellFailed as exc:
        print(f"jupyter-fixloop demo: a cell failed outside fixloop:\n{exc}", file=sys.stderr)
        return 1
    fixed = unchecked = 0
    loops = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or split_magic(cell.source)[0] is None:
            continue
        loops += 1
        print("=" * 78)
        print(cell.source)
        print("-" * 78)
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            print(text.rstrip("\n"))
            fixed += "fixloop: fixed" in text
            unchecked += "fixloop: fixed" in text and "no checks were given" in text
    print("=" * 78)
    checked = f"{fixed - unchecked} of them verified by their checks" + (
        f", {unchecked} only ran without error (no check given)" if unchecked else "")
    print(f"{fixed} of {loops} broken cells fixed in a sandbox kernel ({checked}), "
          f"{time.perf_counter() - started:.1f} s in all (built-in engine, no network)")
    return 0 if fixed == loops else 1

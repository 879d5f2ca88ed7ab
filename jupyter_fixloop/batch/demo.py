"""`jupyter-fixloop demo [NOTEBOOK]`: execute a demo notebook headless and print each loop's outcome.

It lives beside batch mode, whose executor runs the notebook (run.py's `execute_notebook`).
The demo shows the `%%fixloop` magic at work inside a notebook: by default the one shipped with the
package (notebooks/demo.ipynb in the repository), from any folder. Its loops go to a history of their
own, not yours. To repair a whole notebook instead, see `jupyter-fixloop run` (the repository has
notebooks/cleaning.ipynb to try it on).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from ..cell import split_magic
from ..result import MIMETYPE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop demo", description=__doc__)
    parser.add_argument("notebook", nargs="?", default=None,
                        help="the notebook to run (default: the demo notebook shipped with the package)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per cell")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    args.notebook = args.notebook or demo_notebook()
    if not os.path.exists(args.notebook):
        print(f"jupyter-fixloop demo: no notebook at {args.notebook}", file=sys.stderr)
        return 2
    from ..errors import UsageError
    from .run import CellFailed, execute_notebook, read_notebook

    try:
        nb = read_notebook(args.notebook)
    except UsageError as exc:
        print(f"jupyter-fixloop demo: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fixloop-demo-history-") as history:
        os.environ["FIXLOOP_DATA_DIR"] = history  # the demo's loops are not the user's: its kernel writes here
        try:
            execute_notebook(nb, os.path.dirname(os.path.abspath(args.notebook)), args.timeout)
        except CellFailed as exc:
            print(f"jupyter-fixloop demo: a cell failed outside fixloop:\n{exc}", file=sys.stderr)
            return 1
    fixed = unverified = 0
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
            status = (out.get("data", {}).get(MIMETYPE) or {}).get("status")  # the loop's summary, as data
            fixed += status == "fixed"
            unverified += status == "unverified"
    print("=" * 78)
    how = f"{fixed} fixed: verified by {'its' if fixed == 1 else 'their'} checks" + (
        f", {unverified} unverified: {'it runs' if unverified == 1 else 'they run'}, nothing checked "
        f"{'it' if unverified == 1 else 'them'}" if unverified else "")
    print(f"{fixed + unverified} of {loops} broken cells repaired in a sandbox kernel ({how}), "
          f"{time.perf_counter() - started:.1f} s in all (built-in engine, no network)")
    return 0 if fixed + unverified == loops else 1


def demo_notebook() -> str:
    """The demo notebook: shipped in the wheel at the package's top (jupyter_fixloop/demo.ipynb), or in an
    editable install the repository's notebooks/demo.ipynb (pyproject's force-include copies the one into the
    other)."""
    here = Path(__file__).resolve().parent.parent
    shipped = here / "demo.ipynb"
    return str(shipped if shipped.exists() else here.parent / "notebooks" / "demo.ipynb")

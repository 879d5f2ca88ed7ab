"""`jupyter-fixloop bench --causes [DIR]`: notebooks whose error surfaces below the cell that caused it.

Each notebook (the set shipped in `bench/upstream/`, written for this bench, by default) holds one
planted bug in an earlier cell (a chained assignment that never wrote, `|` without parentheses, a
merge on keys that do not match, a wrong filter, a dtype lost in a concat, a result thrown away),
named in its metadata with the cell that causes (`cause`) and the cell where the error surfaces
(`symptom`). Batch mode runs each (on a copy) and the bench says where it was repaired: at the right
cell (the cause changed, the symptom cell runs as written), at the symptom (the failing cell itself
changed; "weakened" when the change has fewer asserts than the cell), elsewhere, or not at all. A cause
repaired where it ran (pandas warned there), the symptom cell then running as written, is at the right
cell. A model's changes are run as `--accept-unreviewed` would (the notebooks are copies).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass

from jupyter_fixloop.errors import FixloopError

SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "upstream")
FIXED = ("fixed", "unverified")


@dataclass(frozen=True)
class Where:
    name: str
    bug: str
    verdict: str  # "right cell", "symptom", "symptom (weakened)", "elsewhere", "not repaired"
    detail: str
    seconds: float


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop bench --causes",
                                     description="Where batch mode repairs errors that surface below their cause.")
    parser.add_argument("--causes", nargs="?", const=SHIPPED, required=True, metavar="DIR",
                        help="a folder of notebooks with `fixloop_bench` metadata (default: the shipped set)")
    parser.add_argument("--model", "-m", default=None,
                        help="litellm model (default: $FIXLOOP_MODEL or fixloop/builtin)")
    parser.add_argument("--api-base", default=None)
    parser.add_argument("--max-rounds", "-r", type=int, default=None)
    parser.add_argument("--cell-timeout", type=float, default=120.0, help="seconds a cell may run (default 120)")
    return parser


def where(outcomes, cause: int, symptom: int) -> tuple[str, str]:
    """(verdict, detail) of one batch run: which cell was changed to make the symptom cell run."""
    by = {o.number: o for o in outcomes}
    hit = by.get(symptom)
    changed = [o for o in outcomes if o.status in FIXED and o.patched and o.patched != o.source]
    at_cause = any(o.number == cause for o in changed)
    if hit is not None and hit.status == "ok" and at_cause:  # repaired at the cause before the error surfaced
        return "right cell", f"cell {cause} changed (cell {symptom} then ran as written): {by[cause].patched.strip()!r}"
    if hit is None or hit.status not in FIXED:
        return "not repaired", f"cell {symptom}: {hit.status if hit else 'did not run'}: {(hit.reason if hit else '')}"
    if at_cause:
        return "right cell", f"cell {cause} changed: {by[cause].patched.strip()!r}"
    if hit.patched and hit.patched != hit.source:
        weakened = hit.patched.count("assert") < hit.source.count("assert")
        return ("symptom (weakened)" if weakened else "symptom"), f"cell {symptom} changed: {hit.patched.strip()!r}"
    return "elsewhere", ", ".join(f"cell {o.number} changed" for o in changed) or hit.reason


async def measure(path: str, options, scratch: str) -> Where:
    import nbformat

    from jupyter_fixloop.batch.run import fix_notebook, read_notebook

    copy = os.path.join(scratch, os.path.basename(path))
    shutil.copy(path, copy)
    nb = read_notebook(copy)
    planted = nb.metadata.get("fixloop_bench") or {}
    if not {"cause", "symptom"} <= set(planted):
        raise FixloopError("no `fixloop_bench` metadata with `cause` and `symptom`")
    result = await fix_notebook(nb, copy, options)
    nbformat.write(nb, copy)
    verdict, detail = where(result.outcomes, planted["cause"], planted["symptom"])
    return Where(os.path.basename(path), planted.get("bug", ""), verdict, detail, result.seconds)


def report(found: list[Where], model: str) -> str:
    lines = [f"errors that surface below their cause: {len(found)} notebooks, model {model}", "",
             "| notebook | planted bug | repaired | what changed | time |", "|---|---|---|---|---|"]
    for w in found:
        lines.append(f"| {w.name} | {w.bug} | {w.verdict} | {w.detail.replace('|', '/')[:100]} | {w.seconds:.0f} s |")
    counts = {v: sum(w.verdict == v for w in found) for v in
              ("right cell", "symptom", "symptom (weakened)", "elsewhere", "not repaired")}
    lines += ["", "; ".join(f"{k}: {n}/{len(found)}" for k, n in counts.items())]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from jupyter_fixloop.batch.run import BatchOptions, refuse_no_rounds
    from jupyter_fixloop.config import load_config
    from jupyter_fixloop.model import check_model

    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    paths = sorted(os.path.join(args.causes, n) for n in os.listdir(args.causes) if n.endswith(".ipynb")) if (
        os.path.isdir(args.causes)) else []
    if not paths:
        print(f"jupyter-fixloop bench: {args.causes}: no notebooks in this folder", file=sys.stderr)
        return 2
    loop = load_config().options().with_(model=args.model, max_rounds=args.max_rounds,
                                         api_base=args.api_base).resolved()
    try:
        refuse_no_rounds(loop)
        check_model(loop.model, loop.api_base)
    except FixloopError as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    options = BatchOptions(loop=loop, cell_timeout=args.cell_timeout, accept_unreviewed=True, plain=False,
                           saved_outputs=False)
    found = []
    with tempfile.TemporaryDirectory(prefix="fixloop-causes-") as scratch:
        for path in paths:
            try:
                w = asyncio.run(measure(path, options, scratch))
            except FixloopError as exc:
                print(f"jupyter-fixloop bench: {path}: {exc}", file=sys.stderr)
                continue
            print(f"{w.name}: {w.verdict} ({w.seconds:.0f} s)", file=sys.stderr, flush=True)
            found.append(w)
    print(report(found, loop.model))
    return 0

"""Which of the built-in engine's repairs another one already does: each case of the rules' tests
(tests/rules/test_repairs.py's CASES and LIBRARY_CASES, the rewriter tests' CASES) is run in this process, repaired,
then repaired again with the repair that answered taken out of the order; printed: the repair expected, the one
that answered, the one that answers without it, whether that one's code is the same, and whether it runs and
passes the case's check. The issue #55 way of finding per-API code the knowledge base's rewriters cover.

    PYTHONPATH=$PWD:$PWD/bench python tools/repair_overlap.py [REPAIR ...]   # only the cases of these repairs
"""

import importlib
import pathlib
import sys
import textwrap
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from jupyter_fixloop.kernel import runner  # noqa: E402
from jupyter_fixloop.loop.verdict import judge_result  # noqa: E402
from jupyter_fixloop.rules import repairs  # noqa: E402

REWRITER_TESTS = ("test_said_rewriters", "test_told_rewriters", "test_moved_said", "test_sorting_said")


def run(ns: dict, setup: str, cell: str):
    ns.clear()
    exec(textwrap.dedent(setup), ns)
    return judge_result(runner.run(textwrap.dedent(cell), [], ns=ns))


def cases():
    """(name, setup, cell, the repair expected, check, the namespace's modules or None)."""
    tests = importlib.import_module("rules.test_repairs")
    found = [(k, s, c, e, chk, None) for k, (s, c, e, chk) in tests.CASES.items()]
    found += [(k, s, c, e, chk, None) for k, (_, s, c, e, chk) in tests.LIBRARY_CASES.items()]
    for name in REWRITER_TESTS:
        module = importlib.import_module("rules." + name)
        found += [(k, module.SETUP, c, e, chk, module.MODULES) for k, (c, e, _, chk) in module.CASES.items()]
    return found


def without(repair, cell: str, receipt, modules):
    every = list(repairs.REPAIRS)
    repairs.REPAIRS[:] = [r for r in every if r is not repair]
    try:
        return repairs.propose(cell, receipt, modules)
    finally:
        repairs.REPAIRS[:] = every


def main(only: list[str]) -> None:
    warnings.simplefilter("ignore")
    for name, setup, cell, expected, check, modules in cases():
        if only and expected not in only:
            continue
        ns, cell = {}, textwrap.dedent(cell)
        receipt = run(ns, setup, cell)
        repair, fixed, _ = repairs.propose(cell, receipt, modules)
        other, again, _ = without(repair, cell, receipt, modules)
        passes = None
        if again:
            rerun = run(ns, setup, again)
            try:
                passes = rerun.ok and bool(eval(check, ns))
            except Exception:  # noqa: BLE001 - a check that cannot run on the other repair's code fails
                passes = False
        print(f"{expected:24} {getattr(repair, '__name__', None)!s:24} -> {getattr(other, '__name__', None)!s:24} "
              f"same={again == fixed} passes={passes} {name}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

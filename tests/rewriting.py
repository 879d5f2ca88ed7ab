"""What the rules' rewriter tests share (tests/rules/test_*_said.py): a cell run on a setup in this process as a
sandbox kernel runs it, a case the rules must repair as the library said, and tools/harvest_changes.py loaded."""

import importlib.util
import pathlib
import textwrap

from jupyter_fixloop.kernel import runner
from jupyter_fixloop.loop.verdict import judge_result
from jupyter_fixloop.rules import repairs

HARVESTER = pathlib.Path(__file__).resolve().parents[1] / "tools" / "harvest_changes.py"


def run(ns: dict, cell: str, setup: str):
    ns.clear()
    exec(setup, ns)
    return judge_result(runner.run(textwrap.dedent(cell), [], ns=ns))


def assert_repaired(ns: dict, setup: str, case: tuple, modules: dict) -> None:
    """`case` is (cell, the rewriter, the repaired cell, a check on its run): the cell fails, that rewriter
    proposes exactly the repaired cell as a mechanical repair, and the repaired cell runs and passes the check."""
    cell, expected, repaired, check = case
    first = run(ns, cell, setup)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, modules)
    assert repair is not None and repair.__name__ == expected, fixed
    assert fixed == repaired
    assert repairs.KIND[repair] == repairs.MECHANICAL
    again = run(ns, fixed, setup)
    assert again.ok, again.text
    assert eval(check, ns)


def harvester():
    spec = importlib.util.spec_from_file_location("harvest_changes", HARVESTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""The value trace of a wrong-output run (kernel/trace.py): the cell re-run under a line tracer in a
fork of the kernel taken before the run, and its lines and values in the receipt.

The first tests run the sandbox runner in this process (it forks this process as a kernel forks);
the last goes through a real sandbox kernel with the loop.
"""

import os

import pandas as pd
import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.kernel import limits, runner, trace as value_trace
from jupyter_fixloop.loop.verdict import Expectations, judge_result
from jupyter_fixloop.receipt import values as receipts
from jupyter_fixloop.receipt.text import TRACE_HEADING

MUTABLE_DEFAULT = """\
def find_outliers(values, threshold=100, found=[]):
    for v in values:
        if v > threshold:
            found.append(v)
    return found

outliers_a = find_outliers(batch_a)
outliers_b = find_outliers(batch_b)
"""
OUTLIER_CHECK = "assert outliers_a == [300]\nassert outliers_b == [950]"


def receipt_of(cell: str, checks: list[str], ns: dict) -> receipts.Receipt:
    return judge_result(runner.run(cell, checks, ns=ns, judged=False), Expectations(original=cell), ran=cell)


def test_a_wrong_output_shows_the_values_line_by_line_and_each_call():
    r = receipt_of(MUTABLE_DEFAULT, [OUTLIER_CHECK], {"batch_a": [12, 15, 300, 14], "batch_b": [7, 950, 9, 8]})
    assert r.kind == "check_failed"
    text = r.text
    assert TRACE_HEADING in text
    assert "line 1, find_outliers called 2 time(s): def find_outliers(values, threshold=100, found=[]):" in text
    assert "call 2: values = [7, 950, 9, 8]; found = [300]" in text  # the default list remembers the first call
    assert "line 4 (ran 2 times): found.append(v)" in text and "run 2: found = [300, 950]" in text
    assert "line 8: outliers_b = find_outliers(batch_b)\n    outliers_b = [300, 950]" in text
    assert [t.lineno for t in r.trace][-2:] == [7, 8]


def test_a_loop_shows_its_first_two_runs_and_its_last():
    cell = "total = 0\nfor x in xs:\n    total += x // 2\n"
    r = receipt_of(cell, ["total == 21"], {"xs": list(range(1, 9))})
    assert "line 3 (ran 8 times): total += x // 2" in r.text
    runs = [t for t in r.trace if t.lineno == 3][0].runs
    assert [(hit, dict(values)["total"]) for hit, values in runs] == [(1, "0"), (2, "1"), (8, "16")]


def test_a_chain_on_one_line_shows_its_steps_and_a_frame_its_changed_columns():
    daily = pd.DataFrame({"sales": [5, 8, 6, 9, 4, 7, 10, 3, 6, 8]})
    r = receipt_of("last_week = daily['sales'].iloc[-8:-1].sum()\n", ["last_week == 47"], {"daily": daily})
    assert "daily['sales'].iloc[-8:-1] -> series len 7 {2: 6, 3: 9, 4: 4, ..., 7: 3, 8: 6}" in r.text  # not row 9
    stores = pd.DataFrame({"store": [1, 2], "city": ["Lyon", None]})
    cell = "stores['city'].fillna('Unknown')\nstores['n'] = stores['store'] * 2\n"
    r = receipt_of(cell, ["int(stores['city'].isna().sum()) == 0"], {"stores": stores})
    assert "stores = frame shape (2, 2), unchanged" in r.text  # fillna changed nothing
    assert "stores = frame shape (2, 3); n: [2, 4]" in r.text  # only the changed column
    assert "returned 1, expected 0" in r.text and "; where" not in r.text  # the trace shows the values instead


def test_the_rerun_starts_from_the_state_the_cell_saw_and_leaves_the_kernel_alone():
    log = []
    ns = {"log": log}
    cell = "log.append(len(log))\ncount = len(log)\n"
    r = receipt_of(cell, ["count == 5"], ns)
    assert log == [0] and ns["count"] == 1  # the traced re-run ran in the fork, not here
    assert "log = [0]" in r.text and "count = 1" in r.text  # the fork's log was as before the run: [] then [0]


def test_no_trace_when_the_checks_pass_the_cell_raises_or_it_writes_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert runner.run("x = 1\n", ["x == 1"], ns={}, judged=False)["trace"] is None
    assert runner.run("x = 1 / 0\n", ["x == 1"], ns={}, judged=False)["trace"] is None
    cell = "with open('out.txt', 'a') as f:\n    f.write('row\\n')\nx = 2\n"
    result = runner.run(cell, ["x == 1"], ns={}, judged=False)
    assert result["trace"] is None  # a re-run would append the row again
    assert (tmp_path / "out.txt").read_text() == "row\n"


def test_the_followed_names_go_from_the_check_back_through_the_lines_that_made_them():
    import ast

    tree = ast.parse("a = raw * 2\nb = a + offset\nunrelated = 3\nc = b\n")
    assert value_trace.followed(["assert c == 1"], tree) == ["c", "b", "a", "offset", "raw"]
    assert value_trace.followed(['assert globals().get("b") == 1'], tree) == ["b", "a", "offset", "raw"]


def test_a_trace_the_sandbox_forged_is_read_with_care():
    result = {"status": "ok", "error": None, "checks": [{"expr": "x == 1", "passed": False, "detail": ""}],
              "trace": {"lines": [{"lineno": "x"}, "junk", {"lineno": 1, "line": "y" * 900, "func": None, "hits": 1,
                                                              "values": [{"run": 1, "values": {"x": "z" * 5000}}]}],
                        "names": ["x"], "error": None}}
    r = judge_result(result)
    assert len(r.trace) == 1 and len(r.text) < 2000
    assert judge_result({**result, "trace": "nonsense"}).trace == ()


def test_a_kernel_holding_more_than_1024_files_still_gets_the_trace():
    """The twin's pipes get numbers past 1,024 there, which select.select refuses (the trace was lost in CI
    once the test process held that many descriptors)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard if hard != resource.RLIM_INFINITY else 4096) < 1200:
        pytest.skip("this machine allows fewer than 1,200 open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        r = receipt_of(MUTABLE_DEFAULT, [OUTLIER_CHECK], {"batch_a": [12, 15, 300, 14], "batch_b": [7, 950, 9, 8]})
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert r.kind == "check_failed" and TRACE_HEADING in r.text


def test_the_twin_forked_after_a_load_is_the_runs_and_is_gone_after_it():
    import time

    ns = {"xs": [1]}
    value_trace.prefork(ns)  # as runner.load_request does
    forked = value_trace._ready.pid
    ns["xs"].append(2)  # the kernel's state changes after the fork: the twin keeps the state it saw
    result = runner.run("total = sum(xs)\n", ["total == 5"], ns=ns, judged=False)
    assert value_trace._ready is None  # taken by the run
    assert "total = 1" in judge_result(result).text  # traced in the twin: xs was [1] there
    time.sleep(0.2)
    value_trace.reap()
    assert forked not in limits._unreaped
    try:
        os.kill(forked, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive


def test_through_a_sandbox_kernel_the_first_receipt_has_the_trace():
    cell = "ordered = sorted(times)\nmedian = ordered[len(ordered) // 2]\n"
    result = fix(cell, namespace={"times": [12, 3, 8, 20, 5, 9]}, checks=["median == 8.5"], max_rounds=0)
    text = result.first.text
    assert "line 1: ordered = sorted(times)\n    ordered = [3, 5, 8, 9, 12, 20]" in text, text
    assert "line 2: median = ordered[len(ordered) // 2]" in text and "median = 9" in text


# ---------------------------------------------------------------- the built-in engine reads the values


def repaired(cell: str, checks: list[str], ns: dict) -> tuple[str, str]:
    from jupyter_fixloop.rules.repairs import propose

    before = {k: v.copy() if hasattr(v, "copy") else v for k, v in ns.items()}
    receipt = receipt_of(cell, checks, ns)
    repair, fixed, _ = propose(cell, receipt)
    assert repair is not None
    assert all(c["passed"] for c in runner.run(fixed, checks, ns=before, judged=False)["checks"]), fixed
    return repair.__name__, fixed


def test_the_engine_reads_the_trace_failed_checks_and_smells_from_the_typed_receipt():
    from jupyter_fixloop.rules.edits import ParsedReceipt

    stores = pd.DataFrame({"store": [1, 2], "city": ["Lyon", None]})
    shared = receipt_of(MUTABLE_DEFAULT, [OUTLIER_CHECK], {"batch_a": [12, 15, 300, 14], "batch_b": [7, 950, 9, 8]})
    dropped = receipt_of("stores['city'].fillna('Unknown')\nstores['n'] = stores['store'] * 2\n",
                         ["int(stores['city'].isna().sum()) == 0"], {"stores": stores})
    calls = [t for t in ParsedReceipt.of(shared).trace if t.is_call]
    assert [(t.func, t.runs[1]) for t in calls] == [("find_outliers", (2, (("values", "[7, 950, 9, 8]"),
                                                                              ("found", "[300]"))))]
    assert dict(ParsedReceipt.of(dropped).trace[1].runs[0][1]) == {"stores": "frame shape (2, 3); n: [2, 4]"}
    assert "is thrown away" in ParsedReceipt.of(dropped).smells[0]
    assert ParsedReceipt.of(shared).failed[0].startswith("outliers_a is [300, ")
    assert [c.failing for c in shared.checks] == ["assert outliers_a == [300]"]  # which assert: data, not words
    assert ParsedReceipt.of(dropped).smelled == ("thrown_away",)
    assert ParsedReceipt.of(dropped).dropped == (1,)  # which line, as data (Smell.line), not read from its words


def test_the_rules_fix_a_shared_default_from_the_calls_in_the_trace():
    name, fixed = repaired(MUTABLE_DEFAULT, [OUTLIER_CHECK], {"batch_a": [12, 15, 300, 14], "batch_b": [7, 950, 9, 8]})
    assert name == "shared_default"
    assert "found=None" in fixed and "    if found is None:\n        found = []\n    for v in values:" in fixed


def test_the_rules_fix_epoch_seconds_read_as_nanoseconds_and_strict_bounds_that_lost_items():
    frame = pd.DataFrame({"sent": [1700000000000, 1700003600000]})
    name, fixed = repaired("frame['at'] = pd.to_datetime(frame['sent'])\nhours = frame['at'].dt.hour.tolist()\n",
                           ["hours == [22, 23]"], {"frame": frame, "pd": pd})
    assert name == "epoch_unit" and "pd.to_datetime(frame['sent'], unit='ms')" in fixed
    cell = "scores = [40, 50, 75, 90, 99]\npassed = [s for s in scores if s > 50 and s < 90]\n"
    name, fixed = repaired(cell, ["passed == [50, 75, 90]"], {})
    assert name == "strict_bounds" and "s >= 50 and s <= 90" in fixed


def test_the_rules_scale_a_value_that_is_the_expected_one_times_a_power_of_ten():
    cell = "answered = [a for a in answers if a != '?']\nshare_yes = answered.count('yes') / len(answered)\n"
    name, fixed = repaired(cell, ["abs(share_yes - 75.0) < 1e-9"], {"answers": ["yes", "no", "?", "yes", "yes"]})
    assert name == "power_of_ten"
    assert "share_yes = (answered.count('yes') / len(answered)) * 100" in fixed

"""loop/verdict.py: a raw run made a receipt, and the loop's pass/fail decisions on typed receipts (no kernel
needed; tests/test_judge.py signs real verdicts)."""

from jupyter_fixloop.loop.verdict import FORGED, PassedBefore, decisive, evidence, rank, receipt_of, verified
from jupyter_fixloop.receipt.values import CheckOutcome, Receipt
from jupyter_fixloop.sandbox.raw import RawRun

RAN = {"status": "ok", "error": None, "checks": [{"expr": "x == 1", "passed": True, "detail": ""}],
       "stdout": "", "stderr": "", "warnings": [], "new_files": []}


def _receipt(kind: str, *checks: tuple[str, bool]) -> Receipt:
    return Receipt(kind=kind, text=kind, checks=tuple(CheckOutcome(e, p) for e, p in checks))


def test_a_check_that_passed_before_and_fails_now_is_marked_as_a_regression():
    before = PassedBefore(_receipt("check_failed", ("a == 1", True), ("b == 2", False)))
    before.record(_receipt("check_failed", ("a == 1", True), ("b == 2", True)), 1)
    now = before.marked(_receipt("check_failed", ("a == 1", False), ("b == 2", False)))
    assert now.text.splitlines()[1:] == ["Regression: a == 1 passed in round 0 and fails now",
                                         "Regression: b == 2 passed in round 1 and fails now"]
    same = _receipt("check_failed", ("a == 1", True), ("c", False))
    assert before.marked(same) is same


def test_only_the_users_own_asserts_and_passed_checks_are_evidence():
    ran = _receipt("ok")
    assert evidence(ran, "x = 1\nassert x == 1\n", "x = 0\nassert x == 1\n") == 1
    assert evidence(ran, "x = 1\nassert x == 1\n", "x = 0\n") == 0  # the candidate's own assert
    assert verified(ran, "x = 1\n", "x = 0\n").startswith("runs without error; no checks")
    assert verified(_receipt("ok", ("x == 1", True)), "x = 1\n", "x = 0\n", ["x == 1"]) == "its 1 check passes"
    assert not decisive(True, ran, "x = 1\n", "x = 0\n")  # a rule's unchecked candidate is a guess
    assert decisive(False, ran, "x = 1\n", "x = 0\n")


def test_rank_puts_passing_then_fewer_failing_checks_then_ran_then_raised_then_no_code():
    order = [rank(_receipt("ok"), False, False, 3), rank(_receipt("check_failed", ("a", False)), False, False, 0),
             rank(_receipt("check_failed", ("a", False), ("b", False)), False, False, 0),
             rank(_receipt("exception"), False, False, 0), rank(_receipt("no_code"), False, False, 0)]
    assert order == sorted(order)
    assert rank(_receipt("ok"), False, True, 0) > rank(_receipt("ok"), False, False, 1)  # the model over the rules


def test_a_raw_run_becomes_its_receipt_with_the_callers_notes_before_the_sandboxs():
    raw = RawRun("x = 1\n", ("x == 1",), False, "result", result=RAN, notes=("wrote a.csv: discarded",), seconds=0.25)
    receipt = receipt_of(raw, notes=("not shared: big",))
    assert (receipt.kind, receipt.notes, receipt.seconds) == ("ok", ("not shared: big", "wrote a.csv: discarded"), 0.25)
    assert receipt_of(RawRun("x = 1\n", ("x == 1",), False, "result", result={**RAN, "seconds": 2.0})).seconds == 2.0


def test_a_judged_run_passes_a_check_only_with_the_judges_signature():
    unsigned = receipt_of(RawRun("x = 1\n", ("x == 1",), True, "result", result=RAN, key="00"))
    assert unsigned.kind == "check_failed" and [c.expr for c in unsigned.checks] == [FORGED]


def test_a_crash_a_timeout_and_an_unreadable_result_are_receipts_not_errors():
    crash = receipt_of(RawRun("x", (), False, "crash", message="the kernel died", report="Fatal Python error"))
    assert (crash.kind, crash.evalue, crash.stderr) == ("crash", "the kernel died", "Fatal Python error")
    stopped = receipt_of(RawRun("x", (), False, "timeout", limit=3, result={"error": "not an object"}))
    assert stopped.kind == "timeout" and stopped.text == "Timeout: the cell was still running after 3 s and was stopped"
    forged = receipt_of(RawRun("x", (), False, "result", result={**RAN, "warnings": ["not an object"]}))
    assert (forged.kind, forged.evalue) == ("crash", "the sandbox's result could not be read (AttributeError)")

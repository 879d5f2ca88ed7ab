"""loop/verdict.py: the loop's pass/fail decisions on typed receipts (no kernel needed)."""

from jupyter_fixloop.loop.verdict import PassedBefore, decisive, evidence, rank, verified
from jupyter_fixloop.receipt.values import CheckOutcome, Receipt


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

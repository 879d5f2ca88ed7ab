"""loop/verdict.py: a raw run made a receipt, and the loop's pass/fail decisions on typed receipts (no kernel
needed; tests/kernel/test_judge.py signs real verdicts)."""

from dataclasses import replace

import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.errors import UsageError
from jupyter_fixloop.loop import expecting, judge_result, printed
from jupyter_fixloop.loop.verdict import (
    FORGED,
    Expectations,
    PassedBefore,
    account,
    decisive,
    evidence,
    judge,
    rank,
    verified,
)
from jupyter_fixloop.receipt.effect import Change, Column, Effect
from jupyter_fixloop.receipt.reads import read_by, written
from jupyter_fixloop.receipt.saved import SAVED_CHECK, SavedOutput
from jupyter_fixloop.receipt.values import OUTPUT_CHECK, Baseline, CheckOutcome, FollowingOutcome, Receipt
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
    assert rank(_receipt("ok"), False, True, 0) > rank(_receipt("ok"), False, False, 1)  # the model over a rule's guess
    # a rule's repair that is no guess (what the library says the old spelling did) over the model's, all else equal;
    # never over a candidate that passes more checks
    told = rank(_receipt("ok"), False, True, 1, rule_guessed=False)
    assert told < rank(_receipt("ok"), False, False, 0)
    assert rank(_receipt("check_failed", ("a", False)), False, True, 0, rule_guessed=False) > rank(
        _receipt("ok"), False, False, 1)


def test_a_raw_run_becomes_its_receipt_with_the_callers_notes_before_the_sandboxs():
    raw = RawRun("x = 1\n", ("x == 1",), False, "result", result=RAN, notes=("wrote a.csv: discarded",), seconds=0.25)
    receipt = judge(raw, notes=("not shared: big",))
    assert (receipt.kind, receipt.notes, receipt.seconds) == ("ok", ("not shared: big", "wrote a.csv: discarded"), 0.25)
    assert judge(RawRun("x = 1\n", ("x == 1",), False, "result", result={**RAN, "seconds": 2.0})).seconds == 2.0


def test_a_judged_run_passes_a_check_only_with_the_judges_signature():
    unsigned = judge(RawRun("x = 1\n", ("x == 1",), True, "result", result=RAN, key="00"))
    assert unsigned.kind == "check_failed" and [c.expr for c in unsigned.checks] == [FORGED]


def test_a_crash_a_timeout_and_an_unreadable_result_are_receipts_not_errors():
    crash = judge(RawRun("x", (), False, "crash", message="the kernel died", report="Fatal Python error"))
    assert (crash.kind, crash.evalue, crash.stderr) == ("crash", "the kernel died", "Fatal Python error")
    stopped = judge(RawRun("x", (), False, "timeout", limit=3, result={"error": "not an object"}))
    assert stopped.kind == "timeout" and stopped.text == "Timeout: the cell was still running after 3 s and was stopped"
    forged = judge(RawRun("x", (), False, "result", result={**RAN, "warnings": ["not an object"]}))
    assert (forged.kind, forged.evalue) == ("crash", "the sandbox's result could not be read (AttributeError)")


# ---------------------------------------------------------------- following cells: evidence or regression check

LATER = ((1, "by_region = orders.groupby('region')['revenue'].sum()\n"),  # reads the column the fix makes
         (2, "print(orders.dtypes)\n"),  # reads `orders`, not the column: ran after the original cell too
         (3, "print(len(orders))\n"))


def _run(code: str, following: list[dict], baseline: Baseline | None, effect: dict | None = None):
    result = {**RAN, "checks": [], "following": following}
    if effect is not None:
        result["effect"] = effect
    return judge(RawRun(code, (), False, "result", result=result), Expectations(following=LATER, baseline=baseline))


def test_a_later_cell_that_ran_after_the_original_too_and_reads_nothing_the_fix_wrote_is_no_evidence():
    fix = "orders['revenue'] = orders['units'] * orders['price']\n"
    after_original = Baseline(ran=frozenset({2, 3}), failed=frozenset({1}))
    receipt = _run(fix, [{"ok": True}] * 3, after_original)
    assert [(f.number, f.verifies) for f in receipt.following] == [
        (1, "it failed after the original cell and runs now"), (2, ""), (3, "")]
    # cell 1 failed before and runs now, but checks no values: a fact ("later cells run now"), not evidence
    assert evidence(receipt, fix, "orders['revenue'] = orders['units'] * orders['prise']\n") == 0
    assert [f.runs_now for f in receipt.following] == [True, False, False]
    said = account(receipt, fix, "")
    assert (said.checked, said.verified) == ((), False) and said.runs_now[0].startswith("following cell 1")
    words = verified(receipt, fix, "")
    assert words.startswith("runs without error; no checks were given — read what it does to your data; later "
                            "cells run now: following cell 1 (`by_region = orders.groupby('region')['revenue']"
                            ".sum()`) (it failed after the original cell and runs now); it checks no values (no "
                            "assert), so the fix is compatible, not verified"), words
    assert words.endswith("; 2 later cells still run, but ran after the original cell too and read nothing the code "
                          "wrote: a regression check, not evidence"), words


def test_a_later_cell_that_checks_values_and_discriminates_is_evidence():
    fix = "orders['revenue'] = orders['units'] * orders['price']\n"
    later = ((1, "assert orders['revenue'].sum() == 54.5\n"), (2, "print(len(orders))\n"))
    raw = RawRun(fix, (), False, "result", result={**RAN, "checks": [], "following": [{"ok": True}] * 2})
    receipt = judge(raw, Expectations(following=later, baseline=Baseline(ran=frozenset({2}), failed=frozenset({1}))))
    assert [(f.evidence, f.checks_values) for f in receipt.following] == [(True, True), (False, False)]
    assert [c.source for c in receipt.checks] == ["following"]
    assert evidence(receipt, fix, "") == 1 and account(receipt, fix, "").checked == ("following",)
    assert verified(receipt, fix, "").startswith("its 1 check passes (following cell 1 (`assert orders['revenue']"
                                                 ".sum() == 54.5`): it failed after the original cell and runs now, "
                                                 "and its asserts pass)")

    # only the cells that ran after the original cell too and do not read 'revenue': nothing verified it
    raw = RawRun(fix, (), False, "result", result={**RAN, "checks": [], "following": [{"ok": True}] * 2})
    independent = judge(raw, Expectations(following=LATER[1:], baseline=Baseline(ran=frozenset({2, 3}))))
    assert evidence(independent, fix, "") == 0 and not [c for c in independent.checks if c.passed]
    assert verified(independent, fix, "").startswith("runs without error; no checks were given")
    assert [f.ok for f in independent.following] == [True, True]  # still listed: regression checks


def test_a_later_cell_that_ran_before_the_fix_verifies_it_only_by_reading_what_it_wrote():
    fix = "total = sum(prices)\n"
    later = ((1, "print(total * 2)\n"), (2, "print(prices)\n"))
    raw = RawRun(fix, (), False, "result", result={**RAN, "checks": [], "following": [{"ok": True}, {"ok": True}]})
    receipt = judge(raw, Expectations(following=later, baseline=Baseline(ran=frozenset({1, 2}))))
    assert [f.verifies for f in receipt.following] == ["it reads `total`, which the code wrote", ""]
    # a later cell that breaks still fails the run, whether it verifies or not
    broken = judge(RawRun(fix, (), False, "result", result={
        **RAN, "checks": [], "following": [{"ok": True}, {"ok": False, "ename": "TypeError", "evalue": "x"}]}),
        Expectations(following=later, baseline=Baseline(ran=frozenset({1, 2}))))
    assert broken.kind == "check_failed" and "following cell 2 (`print(prices)`)" in broken.text


def test_what_a_run_wrote_is_read_from_its_code_and_effect_not_what_the_original_did_the_same():
    wrote = written("orders['product'] = orders['Product '].str.strip()\nimport numpy as np\nn = np.std(x)\n")
    assert wrote.whole == {"n"} and dict(wrote.keys) == {"orders": {"product"}}  # a module is no evidence
    assert read_by("orders.groupby('region')['revenue'].sum()", wrote) == ""
    assert read_by("orders['product'].value_counts()", wrote) == "`orders['product']`"
    assert read_by("orders.query('product == \"pear\"')", wrote) == "`orders['product']`"
    assert read_by("%matplotlib inline\nprint(n)", wrote) == "`n`"
    assert written("df.loc[df.a > 1, 'b'] = 2").keys == (("df", frozenset({"b"})),)
    assert written("df[df.a > 1] = 0\nxs.append(1)\ndf2.fillna(0, inplace=True)").whole == {"df", "xs", "df2"}
    # a frame that lost rows changed as a whole, whatever column the code names
    rows = Change("df", "changed", "DataFrame 3×2", "DataFrame 2×2", "DataFrame", "DataFrame", rows=(3, 2),
                  columns=(Column("'b'", "changed", "int64"),))
    assert written("df['b'] = f(df)", Effect((rows,))).whole == {"df"}
    # the loop's first line defined `by_region` before it raised: the fix did not change it
    same = Change("by_region", "new", "", "Series 2 (int64)", "", "Series")
    assert written("by_region = s.sum()\nfor k, v in by_region.items():\n    print(k)\n", Effect((same,)),
                   Effect((same,))).whole == {"k", "v"}


def test_the_following_cells_that_ran_in_an_earlier_round_are_regression_checks():
    first = Receipt(kind="ok", text="ok", following=(FollowingOutcome(1, "print(x)\n", True),))
    before = PassedBefore(first)
    now = Receipt(kind="check_failed", text="failed", checks=(CheckOutcome("following cell 1 (`print(x)`)", False),))
    assert "following cell 1 (`print(x)`) passed in round 0 and fails now" in before.marked(now).text


def test_a_faces_expectations_are_made_once_with_the_cells_that_must_run_first():
    expect = expecting("6\n", following=["print(total)", "  "], downstream="total = x * 2")
    assert expect.following == ((1, "total = x * 2"), (2, "print(total)")) and expect.required == 1
    assert expect.output == "6\n" and expecting() == Expectations()


def test_what_a_run_printed_is_judged_in_one_place_expected_or_saved():
    """`--expect-output` text and an output the notebook's author saved go through the same verdict: batch
    mode's run in the notebook's own kernel asks it too."""
    right, diff, why = printed("6  \n\n", expecting("6"))
    assert (right.passed, right.expr, diff, why) == (True, OUTPUT_CHECK, [], "")
    wrong, diff, _ = printed("7\n", expecting("6"))
    assert not wrong.passed and wrong.detail == "1 line(s) printed, 1 expected; 2 line(s) differ" and "-6" in diff
    saved = printed("0.3333\n", expecting(SavedOutput("0.333333\n")))[0]  # printed numbers are rounded
    assert (saved.passed, saved.expr) == (True, SAVED_CHECK)
    receipt = judge_result({**RAN, "stdout": "7\n"}, expecting(SavedOutput("6\n")))
    assert receipt.kind == "check_failed" and receipt.checks[-1].expr == SAVED_CHECK


def test_fix_takes_a_faces_expectations_or_its_own_keywords_not_both():
    with pytest.raises(TypeError, match="not both"):
        fix("x = 1\n", expect=expecting("1"), expect_output="1")
    with pytest.raises(UsageError, match="expect must be an Expectations"):
        fix("x = 1\n", expect="1")


DAYFIRST = {"category": "UserWarning", "base": "UserWarning", "lineno": 1,
            "message": "Parsing dates in %d/%m/%Y format when dayfirst=False (the default) was specified. Pass "
                       "`dayfirst=True` or specify a format to silence this warning."}


def test_the_librarys_warning_about_its_own_result_is_evidence_against_a_run():
    """pandas' dayfirst inference warning: the run passes its check, but it is never verified, and a
    candidate without the warning wins the tie."""
    code = "df['d'] = pd.to_datetime(df['d'], format='mixed')\n"
    warned = judge(RawRun(code, (), False, "result", result={**RAN, "warnings": [DAYFIRST]}))
    assert warned.kind == "ok" and [d.kind for d in warned.doubts] == ["dates"]
    assert "Parsing dates in %d/%m/%Y format" in warned.doubts[0].said
    said = account(warned, code, code)
    assert not said.verified and said.doubts == warned.doubts
    clean = judge(RawRun(code, (), False, "result", result=RAN))
    assert rank(clean, False, True, 1) < rank(warned, False, True, 0)  # the warned one loses the tie
    assert not decisive(True, replace(warned, checks=(CheckOutcome("x == 1", True),)), code, code)
    coerced = judge(RawRun(code, (), False, "result", result={**RAN, "warnings": [
        {"category": "RuntimeWarning", "message": "invalid value encountered in cast"}]}))
    assert [d.kind for d in coerced.doubts] == ["coercion"]
    # a run that raised has no doubts to weigh (it failed anyway)
    raised = judge(RawRun(code, (), False, "result", result={**RAN, "status": "error", "warnings": [DAYFIRST],
                                                            "error": {"ename": "ValueError", "evalue": "x"}}))
    assert raised.doubts == ()

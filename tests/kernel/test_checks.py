"""Checks judged inside the sandbox (kernel/checks.py): blocks of statements, and the values that
decide a failing check, as pytest's assertion rewriting shows them. Plain functions: no kernel."""

import pytest

from jupyter_fixloop.kernel import checks

AREA_CELL = "import math\ndef area(r):\n    return 3.14 * r\nsmall = area(1)\n"


def ns_of(cell: str) -> dict:
    ns: dict = {}
    exec(cell, ns)
    return ns


def test_failing_expression_shows_the_values_inside_it():
    out = checks.evaluate("abs(area(3) - 28.274) < 0.01", ns_of(AREA_CELL), cell=AREA_CELL)
    assert not out["passed"]
    first, *rest = out["detail"].splitlines()
    assert first.startswith("abs(area(3) - 28.274) returned 18.854, which is not < 0.01")
    assert "area(3) = 9.42" in first
    assert rest == ["from line 3 of the cell: return 3.14 * r"]  # the line that produced area(3)


def test_a_name_used_as_a_key_is_not_produced_by_the_line_that_writes_through_it():
    cell = "key = 'total'\nrow = {}\nrow[key] = 5\n"
    out = checks.evaluate("key == 'sum'", ns_of(cell), cell=cell)
    # `row[key] = 5` changes row, not key: key came from line 1
    assert "from line 1 of the cell: key = 'total'" in out["detail"], out["detail"]
    assert "from line 3" not in out["detail"], out["detail"]


def test_the_check_is_evaluated_once():
    calls = []
    ns = {"f": lambda: calls.append(1) or 5}
    out = checks.evaluate("f() + 1 == 7", ns)
    assert out["detail"] == "f() + 1 is 6, expected 7 (actual - expected = -1); where f() = 5"
    assert calls == [1]
    assert "__fixloop_value__" not in ns  # the recorder leaves no trace in the namespace


def test_existing_wording_is_kept():
    assert (
        checks.evaluate("fib(6) == 8", {"fib": lambda n: 13})["detail"]
        == "fib(6) returned 13, expected 8 (actual - expected = 5)"
    )
    assert checks.evaluate("x > 3", {"x": 2})["detail"] == "x is 2, which is not > 3"
    assert checks.evaluate("fib(6) == 13", {"fib": lambda n: 13}) == {"expr": "fib(6) == 13", "passed": True,
                                                                      "detail": ""}


def test_a_block_of_asserts_runs_as_statements_and_names_the_failing_one():
    cell = "ages = [a for a in raw]\nmean_age = 1\n"
    ns = {"ages": ["34", "27"], "mean_age": 30.5}
    block = ('a = globals().get("ages")\nassert a == [34, 27] and all(type(x) is int for x in a), repr(a)\n'
             'assert mean_age == 30.5')
    out = checks.evaluate(block, ns, cell=cell)
    assert not out["passed"]
    lines = out["detail"].splitlines()
    assert out["failing"] == "assert a == [34, 27] and all((type(x) is int for x in a))"  # which assert, as data
    assert lines[0] == "a is ['34', '27'], expected [34, 27] (2 of 2 positions differ: [0] '34' vs 34, [1] '27' vs 27)"
    assert lines[1] == "from line 1 of the cell: ages = [a for a in raw]"  # through `a = globals().get("ages")`
    ns["ages"] = [34, 27]
    assert checks.evaluate(block, ns, cell=cell)["passed"]


def test_later_failing_asserts_of_a_block_are_said_too():
    ns = {"working": [25, 40], "n": 2}
    out = checks.evaluate("assert n == 4, repr(n)\nassert working == [18, 25, 40, 64]", ns)
    assert out["failing"] == "assert n == 4"
    assert out["detail"].splitlines() == [
        "n is 2, expected 4 (actual - expected = -2)",
        "also failing: assert working == [18, 25, 40, 64] failed: working is [25, 40], expected [18, 25, 40, 64] (2 "
        "items, expected 4; missing 18, 64)",
    ]


def test_an_assert_message_is_kept_when_it_says_something_new():
    out = checks.evaluate("assert total == 3, 'total should be the sum of the prices'", {"total": 2})
    assert out["failing"] == "assert total == 3"
    assert out["detail"] == ("total is 2, expected 3 (actual - expected = -1) (its message: total should be the sum "
                             "of the prices)")


def test_an_error_inside_a_block_carries_its_statement():
    with pytest.raises(KeyError) as caught:
        checks.evaluate("row = data['b']\nassert row == 1", {"data": {"a": 1}}, raise_errors=True)
    assert caught.value.check_line == "row = data['b']"
    out = checks.evaluate("row = data['b']\nassert row == 1", {"data": {"a": 1}})
    assert out == {"expr": "row = data['b']\nassert row == 1", "passed": False, "detail": "raised KeyError: 'b'",
                   "raised": "KeyError", "message": "'b'"}


def test_dataframe_values_stay_on_one_line():
    pd = pytest.importorskip("pandas")
    ns = {"df": pd.DataFrame({"a": [1, 2], "b": [3, 4]})}
    out = checks.evaluate("df['a'].tolist() == [1, 3]", ns)
    assert out["detail"].startswith("df['a'].tolist() returned [1, 2], expected [1, 3] (1 of 2 positions differ: [1] 2 "
                                    "vs 3); where df['a'] = Series")
    assert "\n" not in out["detail"]


def test_namespaces_and_functions_are_not_shown_as_values():
    out = checks.evaluate("globals().get('total') == 84.12", {"total": 84.1})
    assert out["detail"] == "globals().get('total') returned 84.1, expected 84.12 (actual - expected = -0.02)"


# ---------------------------------------------------------------- expected vs actual, as data


def test_a_failed_equality_says_where_lists_and_dicts_differ_and_by_how_much():
    def detail(expr, **ns):
        return checks.evaluate(expr, ns)["detail"]

    assert detail("working == [18, 25, 40, 64]", working=[25, 40]) == (
        "working is [25, 40], expected [18, 25, 40, 64] (2 items, expected 4; missing 18, 64)")
    assert detail("top3 == ['b', 'e', 'd']", top3=["c", "a", "d"]).endswith(
        "(2 of 3 positions differ: [0] 'c' vs 'b', [1] 'a' vs 'e')")
    assert detail("x == [1, 2, 3]", x=[3, 2, 1]).endswith("(the same items in another order)")
    assert detail("rev == {'north': 325, 'south': 450, 'east': 1}", rev={"north": 3, "south": 450, "west": 2}).endswith(
        "(keys with other values: 'north': 3 vs 325 (-322); missing keys 'east'; unexpected keys 'west')")
    assert detail("m == 8.5", m=9) == "m is 9, expected 8.5 (actual - expected = 0.5)"
    assert detail("pct == 66.5", pct=0.665).endswith("; actual = expected x 0.01)")
    assert detail("name == 'south'", name="north") == "name is 'north', expected 'south'"  # short: the reprs say it


def test_frames_and_series_differ_by_rows_columns_and_labels():
    import pandas as pd

    got = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})
    want = pd.DataFrame({"a": [1, 2, 4], "c": [0, 0, 0]})
    assert checks.difference(got, want) == ("missing columns 'c'; unexpected columns 'b'; "
                                            "column 'a' differs in 1 row(s): row 2: 3 vs 4")
    assert (
        checks.difference(pd.Series({"x": 1, "y": 2}), pd.Series({"x": 1, "y": 3}))
        == "labels with other values: 'y': 2 vs 3 (-1)"
    )
    assert checks.difference(object(), [1]) == ""


def test_a_failed_closeness_check_says_how_far_and_a_power_of_ten():
    out = checks.evaluate("abs(pct_yes - 75.0) < 1e-9", {"pct_yes": 0.75})
    assert "(pct_yes is 0.75, expected 75.0: actual - expected = -74.25; actual = expected x 0.01)" in out["detail"]

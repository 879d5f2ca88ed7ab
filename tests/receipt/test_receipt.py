"""Receipts on real pandas/numpy errors: the context each kind of error needs, the budget, the format.

Most tests run the sandbox runner in this process on a namespace of their own (the same code a
sandbox kernel runs, with real pandas/numpy errors, without starting a kernel); the last ones go
through real sandbox kernels and the magic.
"""

import re

import numpy as np
import pandas as pd
import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.kernel import runner as runner
from jupyter_fixloop.loop.verdict import Expectations, judge_result
from jupyter_fixloop.model.models import count_tokens
from jupyter_fixloop.model.prompt import build_messages
from jupyter_fixloop.receipt import text, values as receipts
from jupyter_fixloop.rules.edits import ParsedReceipt


def receipt_of(code: str, budget: int = text.DEFAULT_TOKENS, checks=(), expect_output=None, **names):
    ns = {"pd": pd, "np": np, **names}
    result = runner.run(code, list(checks), ns=ns)
    return judge_result(result, Expectations(output=expect_output), budget=text.Budget(budget, tokens))


def tokens(said: str) -> int:
    return count_tokens(said)


def loop_says(receipt, **fields):
    """`receipt` with what the loop says about its run, fitted in the budget `receipt_of` made it with."""
    return text.annotated(receipt, text.Budget(text.DEFAULT_TOKENS, tokens), **fields)


# ---------------------------------------------------------------- context, one kind of error at a time


def test_keyerror_on_a_dataframe_lists_columns_with_near_matches():
    orders = pd.DataFrame({"Customer ": ["a", "b"], "Total": [3, 4], "day": [1, 2]})
    r = receipt_of("per_customer = orders.groupby('customer')['Total'].sum()\n", orders=orders)
    assert r.kind == "exception" and r.ename == "KeyError"
    assert "orders columns: ['Customer ', 'Total', 'day']" in r.text
    assert "near matches for 'customer': 'Customer ' (case)" in r.text
    assert "  at line 1 of the cell: per_customer = orders.groupby('customer')['Total'].sum()" in r.text


def test_keyerror_from_a_list_of_columns_names_each_missing_one():
    items = pd.DataFrame({"price": [1.0, 2.0], "Qty": [1, 2]})
    r = receipt_of("sub = items[['price', 'qty']]\n", items=items)
    assert r.ename == "KeyError"
    assert "near matches for 'qty': 'Qty' (case)" in r.text


def test_attribute_error_lists_close_names_of_the_object():
    frame = pd.DataFrame({"v": [1, 2, 3]})
    r = receipt_of("m = frame['v'].rolling(2).means()\n", frame=frame)
    assert r.ename == "AttributeError"
    line = next(c for c in r.context if c.startswith("attributes of Rolling close to 'means'"))
    assert "'mean'" in line


def test_attribute_error_of_a_numpy_alias_finds_the_module_on_the_line():
    r = receipt_of("x = np.array([1, 2], dtype=np.float)\n")
    assert r.ename == "AttributeError"
    assert "np.float64" in r.text  # numpy's own advice, kept whole
    line = next(c for c in r.context if c.startswith("attributes of module close to 'float'"))
    assert "'float64'" in line


def test_name_error_lists_close_defined_names():
    r = receipt_of("total = monthly_sale.sum()\n", monthly_sales=pd.Series([1, 2]))
    assert "defined names close to 'monthly_sale': ['monthly_sales']" in r.text


def test_dtype_error_shows_the_dtype_and_sample_values_of_the_column():
    log = pd.DataFrame({"year": ["2020", "2021"], "n": [1, 2]})
    r = receipt_of("log['age'] = 2024 - log['year']\n", log=log)
    assert r.ename == "TypeError"
    assert re.search(r"dtypes: log\['year'\] (str|object) \(e\.g\. '2020', '2021'\)", r.text), r.text


def test_merge_dtype_error_shows_the_key_dtype_on_both_sides():
    left = pd.DataFrame({"id": ["1", "2"], "x": [1, 2]})
    right = pd.DataFrame({"id": [1, 2], "y": [3, 4]})
    r = receipt_of("joined = left.merge(right, on='id')\n", left=left, right=right)
    assert r.ename == "ValueError"
    facts = next(c for c in r.context if c.startswith("dtypes:"))
    assert "right['id'] int64" in facts and re.search(r"left\['id'\] (str|object)", facts)


def test_broadcast_error_shows_the_shapes():
    r = receipt_of("c = a + b\n", a=np.arange(6).reshape(2, 3), b=np.arange(2))
    assert r.ename == "ValueError"
    assert "shapes: a (2, 3), b (2,)" in r.text


def test_length_mismatch_shows_frame_shape_and_list_length():
    people = pd.DataFrame({"name": list("abcd")})
    r = receipt_of("people['score'] = scores\n", people=people, scores=[1, 2, 3])
    assert "Length of values (3) does not match length of index (4)" in r.text
    facts = next(c for c in r.context if c.startswith("shapes:"))
    assert "people (4, 1)" in facts and "scores len 3" in facts


def test_failing_function_locals_are_typed_short_and_a_dataframe_is_never_whole():
    big = pd.DataFrame({"a": range(1000), "b": ["x"] * 1000, "c": [0.5] * 1000})
    code = (
        "class Box:\n"
        "    pass\n"
        "def summarize(frame, label):\n"
        "    box = Box()\n"
        "    ids = list(range(50))\n"
        "    return frame['a'].sum() / len(label) + undefined_thing\n"
        "summarize(big, 'abc')\n"
    )
    r = receipt_of(code, big=big)
    assert "  at line 6 of the cell:" in r.text and "called from line 7 (<module>): summarize(big, 'abc')" in r.text
    assert "frame = DataFrame shape=(1000, 3) columns=['a', 'b', 'c']" in r.text
    assert "label = 'abc'" in r.text
    assert re.search(r"box = <.*Box object at 0x[0-9a-f]+>", r.text)
    assert "ids = [0, 1, 2, 3, 4, 5, 6, 7, ...] (len 50)" in r.text
    rows = [line.strip() for line in r.text.splitlines() if re.match(r"^\s+\d+\s+\d+\s+x\s+0\.5$", line)]
    assert [row.split()[0] for row in rows] == ["0", "1", "2"]  # three rows, never the whole frame


def test_warnings_are_listed_with_their_line():
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    code = (
        "stacked = np.row_stack([[1], [2]])\n"
        "flag = pd.api.types.is_categorical_dtype(df['a'])\n"
        "df['a'][0] = 10\n"
        "raise ValueError('stop here')\n"
    )
    r = receipt_of(code, df=df)
    section = r.text.split("Warnings:\n", 1)[1]
    assert re.search(r"DeprecationWarning \(line 1\): `row_stack` alias is deprecated", section), section
    assert re.search(r"(DeprecationWarning|Pandas4Warning \(a DeprecationWarning\)) \(line 2\): is_categorical_dtype",
                     section)
    # pandas 3 raises ChainedAssignmentError as its own warning; pandas 2.2 as a FutureWarning's message
    assert re.search(r"(ChainedAssignmentError|SettingWithCopyWarning|FutureWarning) \(line 3\)", section), section


def test_chained_exception_keeps_the_root_cause_and_its_line():
    code = (
        "def port_of(cfg):\n"
        "    try:\n"
        "        return int(cfg['port'])\n"
        "    except ValueError as exc:\n"
        "        raise RuntimeError('bad port in config') from exc\n"
        "port = port_of(config)\n"
    )
    r = receipt_of(code, config={"port": "eighty"})
    assert text.headline(r) == "RuntimeError: bad port in config"
    assert ("caused by ValueError: invalid literal for int() with base 10: 'eighty' "
            "(at line 3: return int(cfg['port']))") in r.text
    assert "cfg = {'port': 'eighty'}" in r.text


def test_syntax_error_shows_the_line_and_column_without_parser_frames():
    r = receipt_of("stats = tx.groupby('shop')['amount'].agg(['sum', 'mean']\n")
    assert r.text.splitlines()[:3] == [
        "SyntaxError: '(' was never closed",
        "  at line 1 of the cell: stats = tx.groupby('shop')['amount'].agg(['sum', 'mean']",
        "  (column 41)",
    ]
    assert "raised in" not in r.text


# ---------------------------------------------------------------- wrong output and checks


def test_expected_output_mismatch_gives_a_compact_diff():
    code = "for name, n in [('a', 1), ('b', 2), ('c', 3)]:\n    print(f'{name}: {n * 10}')\n"
    r = receipt_of(code, expect_output="a: 10\nb: 21\nc: 30\n")
    assert r.kind == "check_failed"
    assert text.headline(r) == f"Check failed: {receipts.OUTPUT_CHECK}"
    diff = r.text.split("Output diff (- expected, + printed):\n", 1)[1].splitlines()
    assert diff == ["  @@ -1,3 +1,3 @@", "   a: 10", "  -b: 21", "  +b: 20", "   c: 30"]
    same = receipt_of(code, expect_output="a: 10\nb: 20\nc: 30   \n\n")  # trailing blanks do not count
    assert same.ok and same.checks[-1].passed


def test_an_output_comparison_is_said_to_read_what_the_sandbox_reports():
    """The stdout compared with --expect-output is the sandbox's report, not signed by the judge: its
    passed line says so; a signed check's line does not."""
    r = receipt_of("x = 1\nprint('ok')\n", checks=["x == 1", "x == 2"], expect_output="ok\n")
    assert r.kind == "check_failed", r.text
    assert f"passed: {receipts.OUTPUT_CHECK} (compared with the output the sandbox reports: unsigned)" in r.text
    assert "passed: x == 1\n" in r.text + "\n" and "x == 1 (compared" not in r.text, r.text


def test_expect_check_failure_shows_each_operand():
    r = receipt_of("share = part / whole\n", checks=["share == round(1 / 3, 2)"], part=1, whole=3)
    assert "share is 0.3333333333333333, expected round(1 / 3, 2) = 0.33" in r.text


# ---------------------------------------------------------------- the budget


def test_recursion_500_deep_collapses_into_one_line_and_names_the_failing_line():
    code = (
        "def walk(n, seen):\n"
        "    if n == 0:\n"
        "        return seen['end']\n"
        "    return walk(n - 1, seen)\n"
        "\n"
        "walk(500, {})\n"
    )
    for budget in (text.DEFAULT_TOKENS, 120):
        r = receipt_of(code, budget=budget)
        assert tokens(r.text) <= budget
        assert r.text.splitlines()[:2] == ["KeyError: 'end'", "  at line 3 of the cell: return seen['end']"]
    full = receipt_of(code)
    assert (
        "called from line 4 (walk): return walk(n - 1, seen) -- recursion: line 4 (walk) repeated 500 times"
        in full.text
    )
    assert full.text.count("return walk(n - 1, seen)") == 1


def test_endless_recursion_fits_the_budget_and_names_the_line():
    r = receipt_of("def down(n):\n    return down(n + 1)\n\ndown(0)\n", budget=200)
    assert r.ename == "RecursionError"
    assert "  at line 2 of the cell: return down(n + 1)" in r.text
    assert re.search(r"recursion: line 2 \(down\) repeated \d{3,} times", r.text)
    assert tokens(r.text) <= 200


def test_long_output_many_warnings_and_a_long_message_are_trimmed_to_budget():
    code = (
        "import warnings\n"
        "for i in range(400):\n"
        "    print('row', i, 'x' * 150)\n"
        "for i in range(30):\n"
        "    warnings.warn(f'deprecated thing number {i} ' + 'y' * 100, DeprecationWarning)\n"
        "raise ValueError('bad value: ' + 'z' * 3000)\n"
    )
    wide = receipt_of(code, budget=5000)
    assert "row 0" in wide.text and "row 399" in wide.text and "lines elided" in wide.text  # head and tail
    for budget in (600, 150):
        r = receipt_of(code, budget=budget)
        assert tokens(r.text) <= budget, (budget, tokens(r.text))
        assert r.text.startswith("ValueError: bad value: zzz")
        assert "  at line 6 of the cell: raise ValueError('bad value: ' + 'z' * 3000)" in r.text


def test_the_engine_reads_the_typed_receipt_not_its_text():
    orders = pd.DataFrame({"Customer": ["a", "b"], "total": [3, 4]})
    r = receipt_of("key = 'customer'\nper = orders.groupby(key)['total'].sum()\n", orders=orders)
    slip = receipt_of("x = 1\ny = [1, 2,, 3]\n")
    parsed = ParsedReceipt.of(r)
    assert (parsed.ename, parsed.lineno) == ("KeyError", 2)
    assert "near matches for 'customer': 'Customer' (case)" in parsed.context
    assert parsed.values["key"] == "'customer'"  # the value lines after a DataFrame's rows are still context
    assert (ParsedReceipt.of(slip).ename, ParsedReceipt.of(slip).column) == ("SyntaxError", slip.column) != ("", None)
    again = ParsedReceipt.of(loop_says(r, same_as="round 1", copied_checks_removed=1))
    assert (again.headline, again.ename, again.message) == (parsed.headline, "KeyError", parsed.message)


def test_people_read_every_detail_of_what_the_model_reads_within_its_budget():
    code = "for i in range(40):\n    print('row', i, 'x' * 50)\nraise ValueError('bad value: ' + 'z' * 300)\n"
    short, full = receipt_of(code, budget=120), receipt_of(code, budget=5000)
    assert "row 7 " not in short.text and "row 7 " in full.text  # the model's text was trimmed
    assert text.for_people(short) == full.text == text.for_model(short, text.Budget(5000, tokens))
    assert text.for_model(short, text.Budget(120, tokens)) == short.text  # what the verdict rendered, again
    said = loop_says(short, same_as="round 1")
    assert text.for_people(said) == "(same code as round 1, not run again)\n" + full.text
    given = receipts.rejected("it copies a check")
    assert text.for_people(given) == given.text == text.for_model(given, text.Budget(50, tokens))


# ---------------------------------------------------------------- what the loop adds, within the budget


NOTE = ("Note: 2 statement(s) copied from the checks were removed from your answer; the checks run on their own "
        "after the cell.")


def test_a_copied_checks_note_is_fitted_into_the_budget_with_the_run():
    code = "for i in range(40):\n    print('row', i, 'x' * 50)\nraise ValueError('bad value: ' + 'z' * 300)\n"
    budget = tokens(receipt_of(code, budget=5000).text) + 5  # all of the run's lines just fit
    r = receipt_of(code, budget=budget)
    assert "row 7 " in r.text and tokens(r.text) <= budget < tokens(r.text + "\n" + NOTE)  # added after, too long
    noted = text.annotated(r, text.Budget(budget, tokens), copied_checks_removed=2)
    assert tokens(noted.text) <= budget and noted.copied_checks_removed == 2
    assert noted.text.endswith("\n" + NOTE) and noted.text.startswith("ValueError: bad value: zzz")
    assert "  at line 3 of the cell: raise ValueError('bad value: ' + 'z' * 300)" in noted.text
    assert "row 7 " not in noted.text and "row 39 " in noted.text  # fewer output lines, to make room


def test_the_loops_lines_are_said_once_around_the_run_in_a_fixed_order():
    r = receipt_of("x = 1\ny = x + 'a'\n", checks=("x == 2",))
    said = loop_says(loop_says(loop_says(r, copied_checks_removed=2), regressions=(("x == 2", 0),)), same_as="round 1")
    assert said.text == "\n".join(["(same code as round 1, not run again)", r.text,
                                    "Regression: x == 2 passed in round 0 and fails now", NOTE])
    assert loop_says(said, same_as="sample 2").text.count(NOTE) == 1
    assert loop_says(said, same_as=None, copied_checks_removed=0, regressions=()).text == r.text
    given = receipts.rejected("it copies a check")  # a text given as is keeps it
    assert (
        loop_says(given, same_as="round 2").text == "(same code as round 2, not run again)\nRejected: it copies a check"
    )


# ---------------------------------------------------------------- through real sandbox kernels


def test_expect_output_through_the_loop_with_a_scripted_model(fake_model):
    cell = "total = sum(prices)\nprint('total:', total)\n"
    honest = "total = sum(prices) * 2\nprint('total:', total)\n"
    server = fake_model(f"```python\n{honest}```")
    result = fix(cell, namespace={"prices": [1, 2, 3]}, expect_output="total: 12\n", model="openai/scripted",
                 api_base=server.url, max_rounds=2)
    assert result.first.kind == "check_failed"
    assert "-total: 12" in result.first.text and "+total: 6" in result.first.text
    assert "+total: 6" in server.prompt(0)
    assert result.status == "fixed" and result.patched == honest


def test_magic_expect_output_and_receipt_budget_trait():
    from kernel import UserKernel

    k = UserKernel()
    try:
        assert k.run("%load_ext jupyter_fixloop").ok
        k.run("%config FixLoop.receipt_tokens = 80")
        assert k.run("%fixloop config").text.count("FixLoop.receipt_tokens = 80") == 1
        run = k.run("%%fixloop --expect-output 'n: 3' --max-rounds 0\nprint('n:', 2)\n")
        assert "Output diff" in run.text and "-n: 3" in run.text and "+n: 2" in run.text, run.text
        k.run("%config FixLoop.receipt_tokens = 60")
        run = k.run("%%fixloop --max-rounds 0\nfor i in range(300):\n    print('line', i, '-' * 80)\n1 / 0\n")
        assert "ZeroDivisionError: division by zero" in run.text
        assert "lines elided" in run.text
        assert "line 1 -" in run.text  # people read every detail; the model reads what fits its budget:
        model = k.run("print(_fixloop.first.text)").text
        assert "ZeroDivisionError: division by zero" in model and "lines elided" in model
        assert "line 1 -" not in model  # at 60 tokens only the first and last line of the output are left
    finally:
        k.close()


@pytest.mark.parametrize("value", ["a\\nb", "plain"])
def test_expected_output_argument_reads_text_or_a_file(tmp_path, value):
    from jupyter_fixloop.notebook.magic import expected_output

    assert expected_output(value) == value.replace("\\n", "\n")
    path = tmp_path / "expected.txt"
    path.write_text("from a file\n")
    assert expected_output(str(path)) == "from a file\n"
    assert expected_output(None) is None


def test_receipt_bench_measures_ratio_and_what_is_kept(tmp_path, capsys):
    import json

    from jupyter_fixloop.cli import main

    cases = [
        {"id": "groupby_typo", "setup": "import pandas as pd\nt = pd.DataFrame({'Shop': ['a', 'b'], 'n': [1, 2]})\n",
         "cell": "per = t.groupby('shop')['n'].sum()\n"},
        {"id": "wrong_total", "setup": "xs = [1, 2, 3]\n", "cell": "total = sum(xs[1:])\n",
         "check": "assert globals().get('total') == 6, repr(globals().get('total'))\n"},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    out = tmp_path / "figures.json"
    assert main(["receipts", "--cases", str(path), "--no-extra", "--json", str(out)]) == 0
    report = capsys.readouterr().out
    assert "kept type, message, line number and text: 2/2" in report
    figures = {f["id"]: f for f in json.loads(out.read_text())}
    assert figures["groupby_typo"]["ratio"] > 2  # a pandas traceback is many library frames
    assert all(all(f["kept"].values()) for f in figures.values())


def test_a_prompts_earlier_round_is_the_first_line_the_model_read_of_it():
    """The headline is rendered from the receipt's data: for people, the whole first line; in a prompt's
    earlier rounds, within the loop's receipt budget, exactly the first line of what the model read."""
    error = {"ename": "ValueError", "evalue": "bad value " * 250, "lineno": 1, "line": "f()", "frames": []}
    budget = text.Budget(200)
    long = judge_result({"status": "error", "error": error, "stdout": "", "stderr": "", "checks": []}, budget=budget)
    read = long.text.splitlines()[0]
    assert text.headline(long, budget) == read and len(read) < len(text.headline(long)) <= 2012
    content = build_messages("f()\n", history=[("f()\n", long), ("g()\n", long)], receipts=budget)[1]["content"]
    assert f"- round 0: {read}\n" in content


def test_a_note_is_said_once_in_what_people_read_whatever_text_the_receipt_was_given():
    """Issue 52: seven "not counted" lines printed twice in one receipt."""
    note = "following cell 3 (`print(n)`) fails after the original cell, so it is not counted: NameError: n"
    given = receipts.Receipt(kind="ok", text=f"ran without error\n{note}\nsame\nsame\n{note}", notes=(note, note))
    shown = text.for_people(given)
    assert shown.count(note) == 1 and shown.count("same") == 2  # the run's own repeated lines stay

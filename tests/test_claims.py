"""Issue #28: the smells of the traps where the obvious repair makes the error vanish and the data
wrong. Each on real frames, run in-process through the real runner (the sandbox's own code), judged
by the real rules; and the honest versions of the same cells do not smell."""

import textwrap

import pandas as pd
import pytest

from jupyter_fixloop.kernel import runner
from jupyter_fixloop.loop.verdict import Expectations, judge_result
from jupyter_fixloop.receipt.effect import from_run
from jupyter_fixloop.receipt.smells import judged


def smells_of(code: str, ns: dict, original: str | None = None) -> tuple[str, ...]:
    effect = from_run(runner.run(textwrap.dedent(code), [], ns)["effect"])
    return tuple(s.text for s in judged(effect, textwrap.dedent(original or code), textwrap.dedent(code)).smells)


def accounts():
    return {"pd": pd, "df": pd.DataFrame({"account": list("abcd"), "revenue": ["900", "1.2k", "15k", "2.3M"]})}


def test_nan_rising_in_a_converted_column_smells_when_it_held_numbers_written_another_way():
    (smell,) = smells_of("df['revenue'] = pd.to_numeric(df['revenue'], errors='coerce')\n", accounts())
    assert smell.startswith("df['revenue'] became float64 with 3 more NaN") and "'1.2k', '15k', '2.3M'" in smell


def test_nan_from_placeholders_or_a_right_conversion_does_not_smell():
    ns = {"pd": pd, "df": pd.DataFrame({"v": ["1", "n/a", "-", "4"]})}
    assert smells_of("df['v'] = pd.to_numeric(df['v'], errors='coerce')\n", ns) == ()
    right = ("mult = {'k': 1e3, 'M': 1e6}\n"
             "df['revenue'] = df['revenue'].map(lambda v: float(v[:-1]) * mult[v[-1]] if v[-1] in "
             "mult else float(v))\n")
    assert smells_of(right, accounts()) == ()


def zips():
    return {"df": pd.DataFrame({"zip": [2134.0, 90210.0, None]})}


def test_whole_numbers_printed_as_floats_in_text_smell():
    (smell,) = smells_of("df['zip5'] = df['zip'].astype(str).str.zfill(5)\n", zips())
    assert smell.startswith("df['zip5'] holds whole numbers printed as floats ('2134.0', '90210.0')")


def test_zips_formatted_as_integers_and_prices_as_text_do_not_smell():
    assert smells_of("df['zip5'] = df['zip'].astype('Int64').astype(str).str.zfill(5)\n", zips()) == ()
    prices = {"df": pd.DataFrame({"p": [4.99, 12.5]})}
    assert smells_of("df['label'] = df['p'].astype(str) + ' EUR'\n", prices) == ()


def test_rows_lost_by_a_candidate_when_the_cell_does_not_filter_smell():
    ns = {"df": pd.DataFrame({"a": [1.0, None, 3.0], "b": [1, 2, 3]})}
    (smell,) = smells_of("df = df.dropna()\ndf['c'] = df['a'] * 2\n", ns, original="df['c'] = df['a'] * 2\n")
    assert smell == "df lost 1 of its 3 rows, but the cell does not filter rows"


def test_a_chained_assignment_warning_fails_a_run_that_otherwise_passes():
    ns = {"df": pd.DataFrame({"a": [1, 2, 3], "b": [0, 0, 0]})}
    cell = "df[df['a'] > 1]['b'] = 9\n"
    receipt = judge_result(runner.run(cell, [], ns), Expectations(original=cell), ran=cell)
    assert receipt.kind == "check_failed", receipt.text
    assert "pandas warns the assignment may not reach the frame" in receipt.text
    assert ns["df"]["b"].tolist() == [0, 0, 0]  # indeed: nothing was assigned
    right = "df.loc[df['a'] > 1, 'b'] = 9\n"
    ns = {"df": pd.DataFrame({"a": [1, 2, 3], "b": [0, 0, 0]})}
    assert judge_result(runner.run(right, [], ns), Expectations(original=cell), ran=right).ok


def test_an_invisible_character_a_patch_adds_smells_one_the_cell_had_does_not():
    ns = {"df": pd.DataFrame({"\ufeffid": [7]})}
    (smell,) = smells_of("first = df['\ufeffid'].iloc[0]\n", ns, original="first = df['id'].iloc[0]\n")
    assert "invisible character (U+FEFF)" in smell
    ns = {"df": pd.DataFrame({"\ufeffid": [7]})}
    assert smells_of("first = df['\ufeffid'].iloc[0]\n", ns) == ()  # the user wrote it: theirs to keep


@pytest.mark.parametrize("code", ["s = 'a\u200bb'\n", "df.columns = df.columns.str.replace('\\ufeff', '')\n"])
def test_escapes_and_a_cell_s_own_characters_are_not_invisible_additions(code):
    ns = {"df": pd.DataFrame({"\ufeffid": [7]})}
    assert smells_of(code, ns) == ()


def test_the_widget_and_the_batch_report_say_unverified_and_offer_accept_as_for_a_fix():
    from jupyter_fixloop.batch import report
    from jupyter_fixloop.batch.run import BatchResult, CellOutcome
    from jupyter_fixloop.notebook.widget import DiffWidget
    from jupyter_fixloop.receipt.values import Receipt
    from jupyter_fixloop.result import LoopResult, Round

    result = LoopResult("unverified", "n = len(df", "n = len(df)", [Round(1, "n = len(df)",
                                                                          Receipt("ok", "ran without error"))],
                        reason="nothing checked it; read what it does to your data (after 1 round(s))",
                        model="fixloop/builtin", max_rounds=4)
    widget = DiffWidget(on_decide=lambda word: None)
    widget.show_result(result)
    assert (
        "fixloop: runs now — unverified</span>: nothing checked it; read what it does to your data"
        in widget.header.value
    )
    assert widget.actions.layout.display is None  # Accept and Reject are there, as for a fix
    assert result.ok and result.claimed
    outcome = CellOutcome(1, "unverified", "n = len(df", "n = len(df)", result=result)
    batch = BatchResult("a.ipynb", (outcome,), 1.0, "fixloop/builtin")
    assert batch.ok and not batch.verified
    assert report.headline(batch).startswith("every cell runs, but nothing checked some repairs: 1 unverified")
    assert "cell 1: n = len(df -- runs now, unverified" in report.summary_text(batch, "out.ipynb", None, None)

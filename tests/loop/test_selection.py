"""Checks read from what an instruction says of the rows it asks for (loop/selection.py, kernel/selected.py):
read by rules, evaluated on the value the code shows or prints (never its text), ranking answers and withholding
"K of K agree", never evidence. Real sandbox kernels and the scripted server."""

import numpy as np
import pandas as pd

from jupyter_fixloop import fix
from jupyter_fixloop.kernel import selected
from jupyter_fixloop.kernel.namespace import describe
from jupyter_fixloop.loop.derived import frames_of, read_checks
from jupyter_fixloop.render import render_text

MISSING = "Select the rows where the age is missing, i.e. it is `NaN`."


def block(code: str) -> str:
    return f"```python\n{code}\n```"


def _pets():
    return {"pd": pd, "np": np,
            "df": pd.DataFrame({"animal": ["cat", "dog", "cat", "dog", "cat"], "age": [2.5, np.nan, 1.0, np.nan, 4.0],
                                "visits": [1, 3, 2, 4, 1]}, index=list("abcde"))}


def _read(instruction, ns=None):
    ns = ns or _pets()
    frames = frames_of(ns, describe(ns))
    return read_checks(instruction, frames, values={n: ns[n] for n in frames})


def _generate(server, instruction, ns, **knobs):
    knobs = {"model": "openai/scripted", "api_base": server.url, "rules": False, **knobs}
    return fix("", instruction=instruction, namespace=ns, **knobs)


def _three_agree(fake_model, answers, instruction=MISSING, ns=None, k=3):
    """Three answers asked in one round, which agree as three codes: the result and its agreement. Of K=3, three are
    asked only where the first two fail a check (two that agree and pass are a majority: no third is asked); `k=4`
    asks three that pass."""
    server = fake_model(*(block(c) for c in answers))
    result = _generate(server, instruction, ns or _pets(), agreement_samples=k, max_rounds=1)
    a = result.agreement
    assert a is not None and a.groups == (3,) and a.spellings == 3, result.reason
    return result, a


def test_the_properties_of_the_rows_an_instruction_asks_for_are_read_by_rules():
    (missing,) = _read(MISSING)
    assert missing.words == "every row the code shows (or leaves in `df`) has `age` missing, one at least"
    (present,) = _read("Show the rows where the age is not missing")
    assert "`age` not missing" in present.words
    (more,) = _read("Select only the rows where the number of visits is greater than 3.")
    assert "`visits` > 3, one at least" in more.words
    (both,) = _read("Select the rows where the animal is a cat *and* the age is less than 3.")
    assert "`animal` equal to 'cat' and `age` < 3" in both.words  # the value is one the column holds
    (between,) = _read("Select the rows the age is between 2 and 4 (inclusive).")
    assert "`age` between 2 and 4" in between.words
    (order,) = _read("Sort `df` first by the values in the 'age' in *decending* order, then by the value in the "
                     "'visits' column in *ascending* order.")
    assert "sorted by `age` descending, then `visits` ascending" in order.words
    (unique,) = _read("Return the unique values of the animal column")
    assert "none twice" in unique.words
    # what the rules cannot read whole, or rows that are not the ones to show, write no check
    (dropped,) = _read("Drop the rows where the age is missing")  # not rows to show: the rows left (cleaning.py)
    assert dropped.words.startswith("no row of `df` (or of the frame the code shows) misses `age`")
    assert _read("Count the rows where the age is missing") == ()
    assert _read("Select the rows where the age is missing or the animal is a cat") == ()
    assert _read("Select the rows where the animal is a horse") == ()  # no such value: nothing read
    assert _read("Select the rows where the colour is red") == ()  # no such column
    assert _read("For each animal, sort by age and sum the visits") == ()


def test_the_rules_tests_read_values_and_never_raise():
    df = _pets()["df"]
    conditions = [("age", "missing", None)]
    assert selected.rows_hold(df[df["age"].isna()], df, conditions, some=True)
    assert not selected.rows_hold(df[df["age"].notna()], df, conditions, some=True)
    assert not selected.rows_hold(df.iloc[:0], df, conditions, some=True)  # none shown where some exist
    assert selected.rows_hold(None, df[df["age"].isna()], conditions, some=True)  # nothing shown: the frame left
    assert selected.rows_hold(df[df["age"].isna()][["animal"]], df, conditions)  # the rows read at their labels
    assert not selected.rows_hold("text", 3, conditions) and not selected.rows_hold(df, df, [("nope", ">", 1)])
    assert selected.rows_hold(df[df["animal"] == "cat"], df, [("animal", "==", "cat")])
    assert selected.rows_hold(df[df["age"].between(2, 4)], df, [("age", "between", (2.0, 4.0))])
    ordered = df.sort_values(["age", "visits"], ascending=[False, True])
    assert selected.sorted_by(ordered, df, ["age", "visits"], [False, True])
    assert not selected.sorted_by(df, df, ["age", "visits"], [False, True])
    assert selected.distinct(df["animal"].unique(), df, "animal")
    assert not selected.distinct(list(df["animal"]), df, "animal") and not selected.distinct(None, df, "animal")


def test_opposite_rows_printed_fail_the_check_read_from_the_instruction_and_the_right_ones_stay_unverified(
        fake_model):
    # round 1 prints the rows where the age is NOT missing: the check reads the frame printed, not its text
    server = fake_model(block("print(df[~pd.isna(df['age'])])"), block("df[pd.isna(df['age'])]"))
    result = _generate(server, MISSING, _pets(), max_rounds=2)
    first = result.rounds[0].receipt
    assert first.kind == "check_failed", first.text
    assert "read from the instruction: every row the code shows (or leaves in `df`) has `age` missing" in \
        server.prompt(1)  # said to the model in words, not as the rules' code
    assert "rows_hold" not in server.prompt(1)
    assert result.patched.strip() == "df[pd.isna(df['age'])]"
    assert result.status == "unverified", result.reason  # the rules' reading, never the user's evidence
    assert result.read_checks[0].passed is True
    assert "(read from your instruction): it holds" in render_text(result)


def test_a_selection_assigned_back_is_read_from_the_users_frame(fake_model):
    server = fake_model(block("df = df[df['age'].isna()]"))
    result = _generate(server, MISSING, _pets(), max_rounds=1)
    assert result.rounds[0].receipt.kind == "ok" and result.status == "unverified", result.reason


def test_answers_that_agree_on_rows_the_instruction_rules_out_are_not_k_of_k_and_rank_last(fake_model):
    flips = ["df[~df['age'].isna()]", "df[df['age'].notna()]", "df.dropna(subset=['age'])"]
    result, a = _three_agree(fake_model, flips)
    assert a.read_failed and not a.unanimous  # three codes agree, on the rows the instruction's words rule out
    assert "though a check read from your instruction does not hold on it" in a.text
    assert result.status == "unverified"
    # a smaller group that meets the instruction's words is handed over before a larger one that does not
    server = fake_model(block(flips[0]), block("df[df['age'].isna()]"), block(flips[1]))
    result = _generate(server, MISSING, _pets(), agreement_samples=3, max_rounds=1)
    assert result.patched.strip() == "df[df['age'].isna()]", result.reason
    assert (result.agreement.agreeing, result.agreement.groups) == (1, (1, 2))
    assert not result.agreement.read_failed and not result.agreement.unanimous


def test_the_code_kept_when_nothing_better_runs_is_said_with_its_own_rounds_agreement(fake_model):
    flips = ["df[~df['age'].isna()]", "df[df['age'].notna()]", "df.dropna(subset=['age'])"]
    broken = ["df['nope']", "df.nope", "df.loc['zz']"]  # round 2: each raises
    server = fake_model(*(block(c) for c in flips + broken))
    result = _generate(server, MISSING, _pets(), agreement_samples=3, max_rounds=2)
    assert len(result.rounds) == 2 and result.rounds[1].receipt.ename is not None, result.reason
    assert result.status == "unverified" and result.patched.strip() in flips, result.reason
    a = result.agreement  # round 1's, not round 2's (where no answer ran)
    assert a is not None and a.groups == (3,) and a.read_failed and not a.unanimous
    assert "a check read from your instruction does not hold" in result.reason


def _orders():
    return {"pd": pd, "orders": pd.DataFrame({"id": [1, 2, 2, 3, 4], "city": ["Oslo", "Rome", "Rome", "Oslo", "Lima"],
                                              "amount": ["$10.5", "$3", "$3", None, "$7.25"]})}


def test_a_right_answer_printed_displayed_or_assigned_meets_the_checks_read_from_the_instruction():
    # the checks read the value the run shows (kernel/selected.py's SHOWN), not IPython's `_`, which a printed or
    # displayed value never sets: `print(orders.drop_duplicates())` was rejected so
    from jupyter_fixloop import verify

    def outcomes(instruction, ns, codes):
        checks = [c.expr for c in _read(instruction, ns)]
        assert checks, instruction
        return {code: [c.passed for c in verify(code, checks=checks, namespace=ns).checks] for code in codes}

    dedup = ["print(orders.drop_duplicates())", "display(orders.drop_duplicates())",
             "clean = orders.drop_duplicates()", "orders.drop_duplicates()", "orders = orders.drop_duplicates()"]
    assert outcomes("Drop duplicate orders", _orders(), dedup) == {code: [True] for code in dedup}
    assert outcomes("Drop duplicate orders", _orders(), ["print(orders)"]) == {"print(orders)": [False]}
    total = "orders.assign(a=orders['amount'].str.lstrip('$').astype(float)).groupby('city')['a'].sum()"
    per_city = [total, f"print({total})", f"t = {total}"]
    assert outcomes("Give one row per city with its total amount", _orders(), per_city) == \
        {code: [True] for code in per_city}
    rows = ["rows = df[df['age'].isna()]", "print(df[df['age'].isna()])", "df[df['age'].isna()]"]
    assert outcomes(MISSING, _pets(), rows) == {code: [True] for code in rows}
    assert outcomes(MISSING, _pets(), ["rows = df[df['age'].notna()]"]) == {"rows = df[df['age'].notna()]": [False]}


def test_agreeing_answers_a_check_not_read_from_the_instruction_fails_on_are_not_k_of_k(fake_model):
    # three codes give one total, numbers written as text glued end to end: what looks wrong withholds "K of K"
    ns = {"pd": pd, "orders": pd.DataFrame({"amount": ["$5.00", "$7.50"]})}
    sums = ["total = orders['amount'].sum()", "total = orders.amount.sum()", "total = orders['amount'].agg('sum')"]
    _, a = _three_agree(fake_model, sums, "Store the sum of the amount column in `total`", ns)
    assert a.doubted and not a.read_failed and not a.unanimous
    assert a.text == "3 of 3 independent answers give this result, though a check does not hold on it"
    assert a.to_json()["doubted"] is True


def test_three_right_selections_one_assigned_and_one_by_pd_isna_are_k_of_k_and_shown(fake_model):
    # the dev set's puzzle-10 and 09: an answer that assigns the rows to a name of its own and shows nothing was
    # judged on the user's frame (the check failed: "K of K" withheld from three right answers), and one that
    # selects by `pd.isna(...)` into a new name was said to look wrong (its `age` all NaN: what was asked)
    answers = ["missing = df[pd.isna(df['age'])]", "df[df['age'].isna()]", "print(df.loc[df.age.isnull()])"]
    result, a = _three_agree(fake_model, answers, k=4)
    assert not a.read_failed and not a.doubted and a.unanimous, result.reason
    assert result.patched.strip() == "df[df['age'].isna()]" and result.status == "unverified"


def _shipments():
    return {"pd": pd, "ships": pd.DataFrame({
        "ref": [1, 2, 3, 4, 5],
        "order_date": pd.to_datetime(["2022-12-30", "2023-03-01", "2023-11-20", "2023-12-29", "2024-02-02"]),
        "ship_date": pd.to_datetime(["2023-01-04", "2023-03-03", "2023-11-22", "2024-01-03", "2024-02-05"])})}


def test_the_year_an_instruction_keeps_is_read_of_the_date_column_it_names_or_the_one_it_splits():
    ns = _shipments()
    (ordered,) = _read("Keep only the ships ordered in 2023", ns)
    assert ordered.words == "every row the code shows (or leaves in `ships`) has a date in 2023 in `order_date`, " \
                            "one at least"
    (shipped,) = _read("show the ships shipped in 2024", ns)  # the nearest word before the year names the column
    assert "a date in 2024 in `ship_date`" in shipped.words
    (since,) = _read("Select the ships shipped since 2024", ns)
    assert "a date in 2024 or later in `ship_date`" in since.words
    (span,) = _read("keep the ships ordered from 2022 to 2023", ns)
    assert "a date in 2022 or later in `order_date` and a date in 2023 or earlier in `order_date`" in span.words
    # no column named, two date columns the year splits: nothing read; one it splits: that one
    assert _read("keep the rows from 2023", ns) == ()
    one = {"pd": pd, "ships": ns["ships"].assign(ship_date=pd.to_datetime(["2024-01-01"] * 5))}
    (split,) = _read("keep the rows from 2023", one)
    assert "`order_date`" in split.words
    # counting, dropping, "or": not the rows to show
    assert _read("Count the ships ordered in 2023", ns) == ()
    assert _read("Drop the ships ordered in 2023", ns) == ()
    assert _read("Keep the ships ordered in 2022 or 2024", ns) == ()


def test_a_year_check_reads_the_dates_of_the_rows_shown():
    ships = _shipments()["ships"]
    in_2023 = [("order_date", "year==", 2023)]
    assert selected.rows_hold(ships[ships["order_date"].dt.year == 2023], ships, in_2023, some=True)
    assert not selected.rows_hold(ships[ships["ship_date"].dt.year == 2023], ships, in_2023, some=True)
    assert not selected.rows_hold(ships, ships, in_2023, some=True)
    as_text = ships.assign(order_date=ships["order_date"].dt.strftime("%Y-%m-%d"))  # dates kept as text
    assert selected.rows_hold(as_text.iloc[1:4], as_text, in_2023)
    aware = ships.assign(order_date=ships["order_date"].dt.tz_localize("UTC"))
    assert selected.rows_hold(aware.iloc[1:4], aware, in_2023)
    assert not selected.rows_hold(ships, ships, [("order_date", "year<", 2023)])
    assert selected.rows_hold(ships.iloc[:1], ships, [("order_date", "year<", 2023)])


def test_a_right_year_selection_meets_the_check_and_one_of_the_other_date_column_fails_it():
    from jupyter_fixloop import verify
    ns = _shipments()
    checks = [c.expr for c in _read("Keep only the ships ordered in 2023", ns)]
    outcomes = {code: verify(code, checks=checks, namespace=ns).checks[0].passed for code in (
        "ships[ships['order_date'].dt.year == 2023]",
        "ships = ships[ships.order_date.between('2023-01-01', '2023-12-31')]",
        "print(ships.query('order_date.dt.year == 2023'))", "ships[ships['ship_date'].dt.year == 2023]")}
    assert list(outcomes.values()) == [True, True, True, False], outcomes


def test_the_frames_own_name_reads_as_its_rows_and_a_column_is_named_with_spaces_when_sorting():
    ns = _shipments()
    (above,) = _read("show the ships with a ref above 2", ns)
    assert above.words == "every row the code shows (or leaves in `ships`) has `ref` > 2, one at least"
    (newest,) = _read("sort the ships by ship date, newest first", ns)
    assert newest.words == "the rows the code shows (or `ships`) are sorted by `ship_date` descending"
    (oldest,) = _read("sort the ships by order date, oldest first", ns)
    assert "sorted by `order_date` ascending" in oldest.words
    assert _read("drop the ships with a ref above 2", ns) == ()  # not the rows to show
    assert _read("count the ships with a ref above 2", ns) == ()


def test_the_columns_an_instruction_asks_to_show_are_read_and_a_shown_frame_with_others_fails():
    (two,) = _read("Show only the animal and visits columns")
    assert two.words == "the frame the code shows (or `df`) has the columns `animal`, `visits` and no other"
    (listed,) = _read("Select the data in rows `[0, 2]` and in columns `['age', 'visits']`.")
    assert "`age`, `visits` and no other" in listed.words
    # columns made, changed, dropped, read of their values or named in a condition on the rows: not columns shown
    for other in ("Add a column called score", "Return the unique values of the animal column",
                  "Select the rows where the age column is missing", "Drop the age column",
                  "For each animal show the visits column", "Show the type of the age column"):
        assert not any("and no other" in c.words for c in _read(other)), other
    df = _pets()["df"]
    assert selected.columns_shown(df[["visits", "animal"]], df, ["animal", "visits"])
    assert selected.columns_shown(df["visits"], df, ["visits"]) and selected.columns_shown(None, df[["age"]], ["age"])
    assert not selected.columns_shown(df, df, ["animal", "visits"])
    assert not selected.columns_shown(df["age"], df, ["visits"]) and not selected.columns_shown("x", 3, ["age"])
    from jupyter_fixloop import verify
    checks = [two.expr]
    outcomes = {code: verify(code, checks=checks, namespace=_pets()).checks[0].passed for code in (
        "df[['animal', 'visits']]", "print(df.loc[:, ['animal', 'visits']])", "df")}
    assert list(outcomes.values()) == [True, True, False], outcomes


def test_the_first_rows_and_the_largest_values_an_instruction_asks_for_are_read():
    (first,) = _read("Return the first 3 rows of the DataFrame `df`.")
    assert first.words == "the rows the code shows are the first 3 of `df`, in its order"
    (last,) = _read("show the last two rows")
    assert "the last 2 of `df`" in last.words
    (top,) = _read("Show the top 2 rows by age")
    assert top.words == "the code shows 2 rows holding the 2 largest values of `df`'s `age`"
    (bottom,) = _read("show the 3 lowest visits")
    assert "3 smallest values of `df`'s `visits`" in bottom.words
    # an order not said, counted, or a column that holds no numbers: nothing read
    for other in ("show the first 3 animals sorted by age", "Count the 3 largest visits", "show the top 2 animals",
                  "For each animal show the top 2 by age"):
        assert _read(other) == (), other
    df = _pets()["df"]
    assert selected.ends(df.head(3), df, 3, False) and selected.ends(df.iloc[-2:, :1], df, 2, True)
    assert not selected.ends(df.iloc[1:4], df, 3, False) and not selected.ends(df.head(2), df, 3, False)
    assert selected.extremes(df.nlargest(2, "age"), df, "age", 2, True)
    assert selected.extremes(df["age"].nlargest(2), df, "age", 2, True)
    assert selected.extremes(df.sort_values("age", ascending=False).head(2)[["animal"]], df, "age", 2, True)
    assert not selected.extremes(df.nsmallest(2, "age"), df, "age", 2, True)
    assert not selected.extremes(df.nlargest(3, "age"), df, "age", 2, True)
    assert not selected.extremes(None, df, "age", 1, True)
    assert selected.extremes(df.nsmallest(3, "visits"), df, "visits", 3, False)  # ties: any of the tied rows


def test_a_share_asked_for_is_one_number_between_0_and_1():
    (share,) = _read("What share of the animals in df have more than 2 visits?")
    assert share.words == "the code shows one number between 0 and 1 (a share)"
    for other in ("What share of the visits does each animal have?", "What percentage of the animals are cats?",
                  "How many animals are cats?"):
        assert not any("(a share)" in c.words for c in _read(other)), other
    df = _pets()["df"]
    assert selected.share((df["visits"] > 2).mean(), df) and selected.share(pd.Series([0.4]), df)
    assert selected.share(0, df) and selected.share(np.float32(1.0), df)
    assert selected.share("0.4", df) and selected.share("Not returned: 27.3%\n", df)  # printed: its one number
    for wrong in (2, (df["visits"] > 2).sum(), True, df["visits"] / 10, None, float("nan"), 40.0, "3 of 11 (27%)",
                  "2 visits"):
        assert not selected.share(wrong, df), wrong

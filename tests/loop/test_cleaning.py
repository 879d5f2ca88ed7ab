"""Checks read from what an instruction says of a column it cleans (loop/cleaning.py, kernel/selected.py): read by
rules, evaluated on the frame the code shows or on the user's frame (never on text), each accepting a right answer
(printed, shown, assigned, in place) and rejecting a wrong one, said before use and to the model when it fails,
never evidence. Real sandbox kernels and the scripted server."""

import numpy as np
import pandas as pd

from jupyter_fixloop import fix, verify
from jupyter_fixloop.kernel import selected
from jupyter_fixloop.kernel.namespace import describe
from jupyter_fixloop.loop.derived import frames_of, read_checks
from jupyter_fixloop.render import render_text


def block(code: str) -> str:
    return f"```python\n{code}\n```"


def _loans():
    return {"pd": pd, "np": np, "loans": pd.DataFrame({
        "member": ["  alice martin", "Bob OKAFOR ", None, "carla diaz"],
        "branch": ["North", "north ", " SOUTH", "east"],
        "genre": ["scifi", None, "drama", None],
        "fee": ["$1.50", "n/a", "$2", "-"],
        "loan_date": ["2024-01-03", "2024-01-05", "2024-02-01", "2024-03-02"],
        "ret": ["yes", "Y", "no", "n"],
        "isbn": ["1", "2", "3", "4"]}, index=[10, 11, 12, 13])}


def _read(instruction, ns=None):
    ns = ns or _loans()
    frames = frames_of(ns, describe(ns))
    return read_checks(instruction, frames, values={n: ns[n] for n in frames})


def test_the_cleaning_an_instruction_states_is_read_by_rules_and_only_where_one_column_is_meant():
    said = {i: [c.words for c in _read(i)] for i in (
        "strip the spaces around the member names", "Put the member names in title case.",
        "clean up branch: trim whitespace and make it lowercase", "convert fee to floats",
        "parse loan_date as dates", "fill the missing genres with 'unknown'", "rename the column ret to returned",
        "we don't need the isbn column, drop it", "remove the loans that have no member",
        "add a column days with the days since the loan", "turn ret into True/False")}
    assert said["strip the spaces around the member names"] == [
        "every value of `member` in `loans` (or in the frame the code shows) has no spaces around it, and no value "
        "changed otherwise"]
    assert said["Put the member names in title case."][0].endswith("is in title case, and no value changed otherwise")
    assert len(said["clean up branch: trim whitespace and make it lowercase"]) == 2
    assert said["convert fee to floats"] == [
        "column `fee` of `loans` (or of the frame the code shows) is numeric, and as many values are missing as "
        "before, 2 (text such as 'n/a' counted): none lost, none made up"]  # "n/a" and "-" are no value
    assert "dates (datetime)" in said["parse loan_date as dates"][0]
    assert said["fill the missing genres with 'unknown'"] == [
        "no value of `genre` in `loans` (or in the frame the code shows) is missing, the missing ones are now "
        "'unknown', and the others are unchanged"]
    assert said["rename the column ret to returned"] == [
        "`loans` (or the frame the code shows) has a column `returned` and no column `ret`"]
    assert said["we don't need the isbn column, drop it"] == [
        "`loans` (or the frame the code shows) has no column `isbn`, and its other columns"]
    assert said["remove the loans that have no member"] == [
        "no row of `loans` (or of the frame the code shows) misses `member`, and the 3 rows that have one are kept"]
    assert said["add a column days with the days since the loan"][0].startswith("`loans` (or the frame the code "
                                                                                "shows) has a new column `days`")
    assert "booleans" in said["turn ret into True/False"][0]
    # nothing testable, no one column, two cases at once, or a new variable to make: nothing is read
    for nothing in ("clean up the names", "strip the spaces in member and count them per branch",
                    "make member upper case and branch lower case", "strip the member names and call it `clean`",
                    "How many loans does each branch have?"):
        assert [c for c in _read(nothing) if "in globals()" not in c.expr] == [], nothing
    # rows to show are selection.py's: a fee above 2 is no column cleaned
    assert [c.words for c in _read("show the loans with a fee above 2") if "in globals()" not in c.expr] == [
        "every row the code shows (or leaves in `loans`) has `fee` > 2"]


def test_a_spacing_or_case_asked_of_no_column_named_is_read_of_the_one_column_it_would_change():
    ns = _loans()
    ns["loans"]["member"] = ["alice  martin", "Bob Okafor", None, "carla diaz"]  # one column with a double space
    collapse = [c.words for c in _read("some names have double spaces inside, collapse them to one", ns)]
    assert collapse == ["every value of `member` in `loans` (or in the frame the code shows) has no double spaces nor "
                        "any around it, and no value changed otherwise"]
    assert [c.words for c in _read("trim the whitespace", ns)][0].startswith("every value of `branch` in `loans`")
    ns["loans"]["branch"] = ["North", "north  east", "South", "East"]  # two columns with one: which is not read
    assert [c for c in _read("collapse the double spaces", ns) if "in globals()" not in c.expr] == []
    # both member and branch have spaces around values in _loans(): none is read; nor two hows at once
    for nothing in ("trim the whitespace", "strip the spaces and make it lowercase"):
        assert [c for c in _read(nothing) if "in globals()" not in c.expr] == [], nothing


def test_a_case_asked_of_the_columns_names_reads_no_check_of_a_columns_values():
    ns = {"pd": pd, "appts": pd.DataFrame({"Appt ID": ["A1", "B2"], "Patient": ["Ann", "bob"]})}
    for headers in ("Rename the columns to lower case with underscores, so 'Appt ID' becomes appt_id.",
                    "Make the column names lower case (Appt ID -> appt_id)", "snake_case the headers, Appt ID too",
                    "lower case every column header: 'Appt ID' and 'Patient'"):
        assert [c for c in _read(headers, ns) if "in globals()" not in c.expr] == [], headers
    assert [c.words for c in _read("put the values of 'Patient' in lower case", ns)] == [
        "every value of `Patient` in `appts` (or in the frame the code shows) is in lower case, and no value changed "
        "otherwise"]


def test_the_tests_read_values_and_never_raise():
    df = _loans()["loans"]
    stripped = df.assign(member=df["member"].str.strip())
    before = list(df["member"])
    assert selected.cleaned(None, stripped, "member", "stripped", before, list(df.index))
    assert not selected.cleaned(None, df, "member", "stripped", before, list(df.index))  # the old form kept
    other = stripped.assign(member=["Alice", "Bob Okafor", None, "carla diaz"])
    assert not selected.cleaned(None, other, "member", "stripped", before, list(df.index))  # a value changed
    assert selected.cleaned(None, stripped.iloc[[3, 0]], "member", "stripped", before, list(df.index))  # by label
    assert not selected.cleaned(None, stripped, "nope", "stripped", before, None)
    assert not selected.cleaned("text", 42, "member", "lower", before, None)
    assert selected.typed(None, df.assign(fee=[1.5, np.nan, 2.0, np.nan]), ["fee"], "numeric", 2)
    assert not selected.typed(None, df.assign(fee=[1.5, np.nan, np.nan, np.nan]), ["fee"], "numeric", 2)  # lost
    assert not selected.typed(None, df.assign(fee=[1.5, 0.0, 2.0, 0.0]), ["fee"], "numeric", 2)  # made up
    assert not selected.typed(None, df, ["fee"], "numeric", 2) and not selected.typed(None, None, ["fee"], "x", 0)
    assert selected.columns_are(None, df.drop(columns="isbn"), [], ["isbn"], ["member"])
    assert not selected.columns_are(None, df[["isbn"]], [], ["member"], ["fee"])  # the others dropped too
    assert selected.rows_kept(None, df.dropna(subset=["member"]), "member", 3)
    assert not selected.rows_kept(None, df.dropna(), "member", 3)  # rows that had a member dropped too


def _outcomes(instruction, codes, ns_of=_loans):
    checks = [c.expr for c in _read(instruction, ns_of()) if "in globals()" not in c.expr]
    assert checks, instruction
    return {code: all(c.passed for c in verify(code, checks=checks, namespace=ns_of()).checks) for code in codes}


def test_a_right_cleaning_printed_shown_assigned_or_in_place_meets_its_check_and_a_wrong_one_does_not():
    strip = "loans.assign(member=loans['member'].str.strip())"
    right = ["loans['member'] = loans['member'].str.strip()", f"print({strip})", f"display({strip})", strip,
             f"clean = {strip}", f"loans = {strip}"]
    wrong = ["loans['member'] = loans['member'].str.lstrip()",  # the spaces after kept
             "loans['member'].str.strip()",  # a Series shown, the user's frame left as it was
             "loans['member'] = loans['member'].str.strip().str.title()",  # changed otherwise (case is the
             # strip check's to tolerate: it is still right there) ...
             "loans['member'] = loans['member'].str.strip().str.replace('alice', 'alicia')"]  # ... a value changed
    got = _outcomes("strip the spaces around the member names", right + wrong)
    assert [got[c] for c in right] == [True] * len(right), got
    assert [got[c] for c in wrong] == [False, False, True, False], got
    fee = "pd.to_numeric(loans['fee'].str.replace('$', '', regex=False), errors='coerce')"
    got = _outcomes("convert fee to floats", [f"loans['fee'] = {fee}", f"print(loans.assign(fee={fee}))",
                                              "loans['fee'] = pd.to_numeric(loans['fee'], errors='coerce')",
                                              "loans['fee'] = loans['fee'].str.replace('$', '').str.replace('n/a', "
                                              "'0').str.replace('-', '0').astype(float)"])
    assert list(got.values()) == [True, True, False, False], got  # "$1.50" lost; "n/a" made up as 0
    got = _outcomes("fill the missing genres with 'unknown'", ["loans['genre'] = loans['genre'].fillna('unknown')",
                                                                "loans['genre'] = loans['genre'].fillna('Unknown')",
                                                                "loans = loans.dropna(subset=['genre'])"])
    assert list(got.values()) == [True, False, False], got
    got = _outcomes("rename the column ret to returned", ["loans = loans.rename(columns={'ret': 'returned'})",
                                                         "loans['returned'] = loans['ret']"])
    assert list(got.values()) == [True, False], got
    got = _outcomes("remove the loans that have no member", ["loans = loans.dropna(subset=['member'])",
                                                            "loans.dropna()", "loans = loans.dropna()"])
    assert list(got.values()) == [True, False, False], got


def test_a_wrong_cleaning_is_said_to_the_model_and_the_right_one_stays_unverified(fake_model):
    # round 1 title-cases a copy and shows it as a Series: the user's frame is left as it was
    server = fake_model(block("loans['member'].str.title()"),
                        block("loans['member'] = loans['member'].str.title()"))
    result = fix("", instruction="Put the member names in title case.", namespace=_loans(), model="openai/scripted",
                 api_base=server.url, rules=False, max_rounds=2)
    assert result.rounds[0].receipt.kind == "check_failed", result.reason
    assert "read from the instruction: every value of `member` in `loans`" in server.prompt(1)
    assert "selected.cleaned" not in server.prompt(1)  # in the check's words, not the rules' code
    assert result.patched.strip() == "loans['member'] = loans['member'].str.title()"
    assert result.status == "unverified", result.reason  # the rules' reading: never `fixed` by itself
    assert result.read_checks[0].passed is True
    assert "is in title case, and no value changed otherwise (read from your instruction): it holds" in \
        render_text(result)

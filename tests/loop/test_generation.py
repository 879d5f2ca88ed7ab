"""Generation (`%%fixloop <instruction>`, `fix("", instruction=...)`): what it shows and what it checks,
with real sandbox kernels and real litellm calls to a scripted server (issue #37)."""

import numpy as np
import pandas as pd

from jupyter_fixloop import fix
from jupyter_fixloop.cell import instruction_names
from jupyter_fixloop.render import render_html, render_text


def _namespace():
    return {"pd": pd, "euro12": pd.DataFrame({"Team": ["Croatia", "Denmark", "Spain"], "Goals": [4, 4, 12]})}


def test_an_instructions_stated_names_are_read_and_nothing_else():
    assert instruction_names("Assign the Goals column to a variable called goals.") == ("goals",)
    assert instruction_names("Filter the teams that scored more than 6 goals and call it big") == ("big",)
    assert instruction_names("store the result in 'top3'") == ("top3",)
    assert instruction_names("Add a column called total") == ()  # a column is not a variable
    assert instruction_names("How many teams scored more than 6 goals?") == ()


def test_a_stated_name_is_checked_and_said_but_is_not_evidence(fake_model):
    server = fake_model("```python\neuro12.Goals\n```", "```python\ngoals = euro12.Goals\n```")
    result = fix("", instruction="Assign the Goals column to a variable called goals.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2)
    first = result.rounds[0].receipt
    assert first.kind == "check_failed" and "'goals' in globals()" in first.text
    assert "'goals' in globals()" in server.prompt(1)  # the model is told what is missing
    assert result.patched == "goals = euro12.Goals\n"
    assert result.status == "unverified"  # the name exists: that says nothing of its value
    assert "it defines `goals`, as the instruction asks" in result.reason


def test_a_generation_shows_what_it_printed_and_returned(fake_model):
    code = "big = euro12[euro12.Goals > 6]\nprint(len(big), 'team')\nbig.Team.tolist()\n"
    server = fake_model(f"```python\n{code}```")
    result = fix("", instruction="Which teams scored more than 6 goals?", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False)
    assert result.status == "unverified"
    text = render_text(result)
    assert "it printed:\n  1 team" in text
    assert "its value:\n  " in text and "Spain" in text.split("its value:")[1].splitlines()[1]
    assert "<b>it printed:</b>" in render_html(result)


def test_an_instruction_that_asks_to_see_is_asked_once_more_when_the_code_shows_nothing(fake_model):
    from jupyter_fixloop.cell import asks_to_see

    assert asks_to_see("How many teams scored more than 6 goals?") and asks_to_see("Select only the Goal column.")
    assert asks_to_see("For each calendar month in `s`, find the mean.") and asks_to_see("Check the index is sorted.")
    assert not asks_to_see("Change the age in row 'f' to 1.5.") and not asks_to_see("Create a frame `df`.")
    assert not asks_to_see("Sort df by age, descending.")
    server = fake_model("```python\nn = (euro12.Goals > 6).sum()\n```", "```python\n(euro12.Goals > 6).sum()\n```")
    result = fix("", instruction="How many teams scored more than 6 goals?", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=3)
    assert "It ran, but showed nothing" in server.prompt(1)
    assert result.patched == "(euro12.Goals > 6).sum()\n" and len(result.rounds) == 2
    assert result.status == "unverified" and "shows nothing" not in result.reason
    assert "its value:\n  np.int64(1)" in render_text(result) or "its value:\n  1" in render_text(result)


def test_code_that_still_shows_nothing_is_kept_and_said_so(fake_model):
    server = fake_model("```python\nn = (euro12.Goals > 6).sum()\n```",
                        "```python\nn = int(euro12.Goals.gt(6).sum())\n```")
    result = fix("", instruction="How many teams scored more than 6 goals?", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2)
    assert result.status == "unverified" and result.patched == "n = int(euro12.Goals.gt(6).sum())\n"
    assert "it shows nothing, though the instruction asks for something to see" in result.reason
    server = fake_model("```python\nn = (euro12.Goals > 6).sum()\n```")  # an instruction that asks nothing to see
    result = fix("", instruction="Put the number of teams with more than 6 goals in n.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2)
    assert len(result.rounds) == 1 and result.status == "unverified"


def test_code_that_assigns_what_the_instruction_asks_to_see_has_it_shown_by_the_rules(fake_model):
    from jupyter_fixloop.cell import result_shown

    assert result_shown("top = df.head()\n") == ("top = df.head()\ntop\n", "top")
    assert result_shown("n: int = 3") == ("n: int = 3\nn\n", "n") and result_shown("a, b = 1, 2") is None
    assert result_shown("df.sort_values('x', inplace=True)") is None and result_shown("%time x = 1") is None
    server = fake_model("```python\nbig = euro12[euro12.Goals > 6]\n```")
    result = fix("", instruction="Select the teams that scored more than 6 goals.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, max_rounds=2)
    assert result.patched == "big = euro12[euro12.Goals > 6]\nbig\n" and len(server.requests) == 1  # no model call
    one_call = sum(len(m["content"]) for m in server.requests[0]["messages"]) // 4  # the server's count
    assert result.rounds[0].usage.prompt_tokens == one_call  # that call counted once, not twice
    assert result.status == "unverified"  # shown is not checked
    assert "its last line shows `big`, added by the rules: since the instruction asks for something to see" \
        in result.reason
    assert "Spain" in render_text(result).split("its value:")[1]
    # the name an earlier line assigns, where the lines after it assign nothing: shown too, no model call
    assert result_shown("big = df\nbig.reset_index(drop=True, inplace=True)", earlier=True)[1] == "big"
    assert result_shown("big = df\nbig.reset_index(drop=True, inplace=True)") is None  # not asked for earlier
    assert result_shown("rows = []\nfor r in df.itertuples():\n    rows.append(r)", earlier=True)[1] == "rows"
    assert result_shown("def f():\n    return 1", earlier=True) is None
    server = fake_model("```python\nbig = euro12[euro12.Goals > 6]\nbig.reset_index(drop=True, inplace=True)\n```")
    result = fix("", instruction="Select the teams that scored more than 6 goals.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, max_rounds=2)
    assert result.patched.endswith("inplace=True)\nbig\n") and len(server.requests) == 1, result.reason
    assert "its last line shows `big`, added by the rules" in result.reason
    server = fake_model("```python\ndef big():\n    return euro12[euro12.Goals > 6]\n```",
                        "```python\neuro12[euro12.Goals > 6]\n```")  # nothing the rules can show: asked again
    result = fix("", instruction="Select the teams that scored more than 6 goals.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, max_rounds=2)
    assert "It ran, but showed nothing" in server.prompt(1) and result.patched == "euro12[euro12.Goals > 6]\n"


def test_a_new_name_the_code_makes_last_is_shown_and_the_users_data_changed_is_not(fake_model):
    # "Create a ...": no word asks to see, but the value made last is the result, shown as a REPL shows it
    server = fake_model("```python\nthursdays = pd.date_range('2015-01-01', '2016-12-31', freq='WOM-3THU')\n```")
    result = fix("", instruction="Create a DatetimeIndex of the third Thursday of each month in 2015 and 2016.",
                 namespace=_namespace(), model="openai/scripted", api_base=server.url, max_rounds=2)
    assert result.patched.endswith("\nthursdays\n") and len(server.requests) == 1
    assert "its last line shows `thursdays`, added by the rules: the value the code makes last" in result.reason
    assert "2015-01-15" in render_text(result).split("its value:")[1]
    server = fake_model("```python\neuro12 = euro12.sort_values('Goals')\n```")  # the user's own data, changed
    result = fix("", instruction="Order euro12 by its goals.", namespace=_namespace(), model="openai/scripted",
                 api_base=server.url, max_rounds=2)
    assert result.patched == "euro12 = euro12.sort_values('Goals')\n" and "its last line shows" not in result.reason
    server = fake_model("```python\nthursdays = pd.date_range('2015-01-01', periods=3, freq='W-THU')\n```")
    result = fix("", instruction="Create a DatetimeIndex of three Thursdays.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, max_rounds=2, rules=False)
    assert result.patched == "thursdays = pd.date_range('2015-01-01', periods=3, freq='W-THU')\n"  # rules off


STATES = ("Count the goals of each team, largest first. You should end up with the answer as follows:\n"
          "```\nTeam\nSpain      12\nCroatia     4\n```")


def test_the_output_an_instruction_states_is_read_and_a_code_example_is_not():
    from jupyter_fixloop.cell import stated_output

    assert stated_output(STATES) == "Team\nSpain      12\nCroatia     4"
    assert stated_output("These values should therefore be\n\n```\n[1, 2, 0]\n```\n\nMake this a column 'Y'.") \
        == "[1, 2, 0]"
    assert stated_output("For example:\n```python\ndf = pd.DataFrame({'A': [1, 2]})\n```\nDrop repeats.") is None
    assert stated_output("The answer should look like:\n```\n>>> df.head()\n```") is None  # a session: an example
    assert stated_output("Select the Goals column.") is None and stated_output(None) is None
    assert stated_output("The answer should be:\n```\n...\n```") is None  # nothing to check: never a pass


def test_a_run_shows_the_stated_values_in_order_as_a_series_a_list_or_a_column():
    from jupyter_fixloop.receipt.saved import stated_check

    series = "Team\nSpain      12\nCroatia     4\nName: Goals, dtype: int64\n"
    assert stated_check("", series, "Team\nSpain      12\nCroatia     4") == (True, "")
    assert stated_check("", "      Goals\nTeam\nSpain 12.0\nCroatia 4.0", "Spain 12\nCroatia 4")[0]  # a frame
    assert not stated_check("", "Team\nCroatia 4\nSpain 12\n", "Spain 12\nCroatia 4")[0]  # another order
    assert stated_check("0    1.666667\n", None, "0  1.666667")[0]  # a stated number is a rounded one
    assert stated_check("[1.6666666666666667]\n", None, "1.666667")[0]
    assert not stated_check("[1.67]\n", None, "1.666667")[0]
    assert stated_check("   A\n0  1\n1  2\n3  3\n", None, "1, 2, 3")[0]  # a one-line list may be a column
    passed, detail = stated_check("", None, "1, 2, 3")
    assert not passed and detail == "the code shows nothing; the instruction states 1 2 3"
    passed, detail = stated_check("[1, 2, 3]\n", None, "1, 2, 3", code="print([1, 2, 3])")
    assert not passed and "the code writes the stated values itself" in detail


def test_code_whose_output_shows_the_stated_values_is_verified_by_them(fake_model):
    wrong = "```python\neuro12.groupby('Team').Goals.sum().sum()\n```"
    right = "```python\neuro12.groupby('Team').Goals.sum().sort_values(ascending=False)\n```"
    server = fake_model(wrong, right)
    result = fix("", instruction=STATES, namespace=_namespace(), model="openai/scripted", api_base=server.url,
                 rules=False, max_rounds=3)
    first = result.rounds[0].receipt
    assert first.kind == "check_failed" and "its output shows the values the instruction states" in first.text
    assert "the output does not show these values in this order" in server.prompt(1)
    assert "showed nothing" not in server.prompt(1)  # it showed a value: not the one stated
    assert result.status == "fixed" and result.patched == right.split("\n", 1)[1].rsplit("```", 1)[0]
    assert "its output shows the values the instruction states, in order" in result.reason


def test_code_that_ran_but_never_shows_the_stated_values_is_kept_and_said_so(fake_model):
    wrong = "```python\neuro12.Goals.sum()\n```"
    server = fake_model(wrong, "```python\neuro12.Goals.max()\n```")
    result = fix("", instruction=STATES, namespace=_namespace(), model="openai/scripted", api_base=server.url,
                 rules=False, max_rounds=2)
    assert result.status == "unverified" and result.patched == "euro12.Goals.sum()\n"  # the first that ran
    assert "its output does not show the values the instruction states" in result.reason


def test_the_models_copy_of_the_instructions_example_data_is_left_out_and_the_users_data_used(fake_model):
    from jupyter_fixloop.cell import example_assignments

    instruction = ("You have a DataFrame `df` with a column 'A' of integers. For example:\n```python\n"
                   "df = pd.DataFrame({'A': [1, 2, 2, 3]})\n```\nHow many distinct values does 'A' hold?")
    session = ">>> df = pd.DataFrame({'A': [1,\n                       2, 2, 3]})\n>>> df\n   A\n0  1\n"
    assert example_assignments(instruction) == example_assignments(f"For example:\n```\n{session}```") == {
        "df = pd.DataFrame({'A': [1, 2, 2, 3]})"}
    copied = "import pandas as pd\ndf = pd.DataFrame({'A': [1, 2, 2, 3]})\nprint(df['A'].nunique())\n"
    server = fake_model(f"```python\n{copied}```")
    user = {"pd": pd, "df": pd.DataFrame({"A": [5, 6, 7, 8, 9]})}
    result = fix("", instruction=instruction, namespace=user, model="openai/scripted", api_base=server.url,
                 rules=False, max_rounds=1)
    assert result.patched == "import pandas as pd\nprint(df['A'].nunique())\n"  # the user's df: 5 values, not 3
    assert result.rounds[0].receipt.stdout.strip() == "5"
    assert "the model's copy of the instruction's example `df` was left out: it uses your `df`" in result.reason
    assert "copied from the instruction's example was removed" in result.rounds[0].receipt.text


def test_an_example_assignment_is_kept_where_it_is_not_a_copy_over_the_users_data():
    from jupyter_fixloop.loop.guard import Guard

    examples = frozenset({"df = pd.DataFrame({'A': [1, 2]})", "df = df.dropna()", "n = 3"})
    guard = Guard("", namespace=frozenset({"pd", "df"}), examples=examples)
    code = "df = pd.DataFrame({'A': [1, 2]})\ndf = df.dropna()\nn = 3\nprint(len(df))\n"
    # the copy over the user's df goes; one that reads df, or makes a name the user has not, stays
    assert guard.without_example_data(code) == ("df = df.dropna()\nn = 3\nprint(len(df))\n", ("df",))
    assert Guard("", namespace=frozenset({"pd"}), examples=examples).without_example_data(code) == (code, ())
    mine = Guard("df = pd.DataFrame({'A': [1, 2]})\nprint(df)", namespace=frozenset({"pd", "df"}), examples=examples)
    assert mine.without_example_data(code) == (code, ())  # the cell makes it itself: a repair keeps it


def test_the_models_own_values_over_the_users_data_are_left_out_and_the_users_data_used(fake_model):
    """Issue 37: a small model re-creates the user's variables before using them ("Given variables: s =
    pd.Series(np.random.rand(30), ...)"), from nothing the instruction shows: the code would answer about data
    it made up. The loop leaves such assignments out, says so to the model and in the result, and the code
    runs on the user's values."""
    made_up = ("import pandas as pd\nimport numpy as np\n# Given variables\n"
               "s = pd.Series(np.random.rand(4), index=pd.MultiIndex.from_tuples([('A', 0), ('A', 1), ('B', 0), "
               "('B', 1)]))\nletters = ['A', 'B']\nprint(s.groupby(level=1).sum().tolist())\n")
    server = fake_model(f"```python\n{made_up}```")
    index = pd.MultiIndex.from_tuples([("A", 0), ("A", 1), ("B", 0), ("B", 1)])
    user = {"pd": pd, "np": np, "s": pd.Series([1.0, 2.0, 3.0, 4.0], index=index), "letters": ["A", "B"]}
    result = fix("", instruction="Sum the values of s for each value of its second index level.", namespace=user,
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=1)
    assert result.patched == ("import pandas as pd\nimport numpy as np\n# Given variables\n"
                              "print(s.groupby(level=1).sum().tolist())\n")
    assert result.rounds[0].receipt.stdout.strip() == "[4.0, 6.0]"  # the user's s, not random numbers
    assert ("the model's own values for `s`, `letters` (written out over yours, not asked for) were left out: it "
            "uses your `s`, `letters`") in result.reason
    assert "which the instruction does not ask to make" in result.rounds[0].receipt.text


def test_an_assignment_over_the_users_name_is_kept_where_it_reads_their_data_a_file_or_is_asked_for():
    from jupyter_fixloop.cell import asks_to_make
    from jupyter_fixloop.loop.guard import Guard

    names, modules = frozenset({"pd", "np", "df", "s", "numbers", "dti", "threshold"}), frozenset({"pd", "np"})
    collections = frozenset({"df", "s", "numbers", "dti"})  # `threshold` is one number: an instruction may set it
    ask = "Select the rows of df where 'a' is over 1."

    def guard(original="", instruction=ask):
        return Guard(original, namespace=names, instruction=instruction, modules=modules, collections=collections)

    code = ("df = pd.DataFrame({'a': [1, 2, 3]})\ns = pd.Series(np.random.rand(30))\nnumbers = list(range(10))\n"
            "dti = pd.date_range('2015-01-01', periods=5)\nthreshold = 1\ntemp = pd.DataFrame({'b': [1]})\n"
            "print(df[df.a > threshold], s.size, numbers, dti, temp)\n")
    assert guard().without_made_up_data(code) == (
        "threshold = 1\ntemp = pd.DataFrame({'b': [1]})\nprint(df[df.a > threshold], s.size, numbers, dti, temp)\n",
        ("df", "s", "numbers", "dti"))
    kept = ("df = df.dropna()\ns = s * 2\nnumbers = pd.read_csv('numbers.csv')\ndti = pd.DatetimeIndex([])\n"
            "print(df, s, numbers, dti)\n")
    assert guard().without_made_up_data(kept) == (kept, ())  # reads the user's data or a file, or writes nothing out
    assert guard(instruction=None).without_made_up_data(code) == (code, ())  # a repair
    mine = guard("df = pd.DataFrame({'a': [1]})")  # the cell makes df itself
    assert mine.without_made_up_data(code)[1] == ("s", "numbers", "dti")
    asked = guard(instruction="Create a DataFrame df from this dictionary.")  # the instruction asks for df
    assert asked.without_made_up_data(code)[1] == ("s", "numbers", "dti")
    assert asks_to_make("Reset `numbers` to the first ten integers.", "numbers")
    assert asks_to_make("Store the result in a variable called s.", "s")
    assert not asks_to_make("How many rows of df have a missing age?", "df")


def test_rows_selected_by_a_missing_value_are_what_was_asked_not_a_column_gone_nan(fake_model):
    """A new frame of the rows where `age` is missing holds only NaN in `age`: that is the selection, no smell;
    a new column all NaN that nothing selected is still one."""
    ns = {"pd": pd, "df": pd.DataFrame({"animal": ["cat", "dog", "cat"], "age": [2.5, np.nan, np.nan]})}
    server = fake_model("```python\nmissing = df[df['age'].isna()]\nmissing\n```")
    result = fix("", instruction="Select the rows where the age is missing.", namespace=ns,
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2)
    assert result.status == "unverified" and len(result.rounds) == 1, result.rounds[0].receipt.text
    assert "became all NaN" not in result.rounds[0].receipt.text
    smelly = "scored = df.assign(age=pd.to_numeric(df['animal'], errors='coerce'))\n"
    server = fake_model(f"```python\n{smelly}```", "```python\nscored = df.assign(age=undefined_name)\n```")
    result = fix("", instruction="Make the animal column numeric as age.", namespace=ns,
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2)
    assert "scored['age'] became all NaN" in result.rounds[0].receipt.text
    # nothing better came after it: the code that ran is handed over, with what looks wrong in it said
    assert result.status == "unverified" and result.patched == smelly, result.reason
    assert "it looks wrong: scored['age'] became all NaN" in result.reason
    server = fake_model(f"```python\n{smelly}```")  # a repair, not a generation: nothing handed over
    repaired = fix("scored = df.assign(age=pd.to_numeric(df['animal']))\n", namespace=ns, model="openai/scripted",
                   api_base=server.url, rules=False, max_rounds=1)
    assert repaired.status == "gave_up" and repaired.patched is None


def test_the_cell_returned_unchanged_for_an_instruction_is_said_as_nothing_generated(fake_model):
    """Issue 52: the local model gave back the cell's body for "drop duplicate orders and count orders per
    city"; that is not "runs now — unverified": it was not run as an answer, and the result says so."""
    body = "orders = euro12.copy()\n"
    server = fake_model(f"```python\n{body}```")
    result = fix(body, instruction="drop duplicate orders and count orders per city", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2)
    assert result.status == "gave_up" and result.patched is None
    assert result.reason.startswith("the model returned your cell unchanged; nothing was generated")
    assert all(r.receipt.kind == "rejected" for r in result.rounds)
    assert "runs now" not in render_text(result)



def test_after_a_round_where_no_answer_ran_a_fresh_answer_to_the_instruction_is_asked_beside_the_answers(fake_model):
    reload = "```python\neuro12 = pd.read_csv('euro2012.csv')\n(euro12.Goals > 6).sum()\n```"
    again = "```python\neuro12 = pd.read_csv('data/euro2012.csv')\n(euro12.Goals > 6).sum()\n```"
    index = "```python\n(euro12.loc['Goals'] > 6).sum()\n```"
    server = fake_model(reload, index, again, index, "```python\n(euro12.Goals > 6).sum()\n```")
    result = fix("", instruction="How many teams scored more than 6 goals?", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2, seed=0, agreement_samples=2)
    assert len(server.requests) == 5 and len(result.rounds) == 2  # round 1's two answers raised: round 2 asks three
    first, fresh = server.requests[0], server.requests[4]
    assert "euro2012.csv" in server.prompt(2)  # the repairs are shown the run that raised
    assert fresh["messages"] == first["messages"]  # the fresh answer: the instruction alone, as round 1 asked it
    assert fresh["seed"] not in [r["seed"] for r in server.requests[:4]]
    assert fresh["temperature"] > first["temperature"]
    assert result.patched == "(euro12.Goals > 6).sum()\n" and result.status == "unverified"
    assert result.agreement.answers == result.agreement.planned == 3  # the fresh answer is one the round planned
    # one answer a round (no agreement): no fresh answer, as before
    server = fake_model(reload, again, "```python\n(euro12.Goals > 6).sum()\n```")
    result = fix("", instruction="How many teams scored more than 6 goals?", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, rules=False, max_rounds=2, seed=0)
    assert len(server.requests) == 2 and result.status == "gave_up"

"""Generation (`%%fixloop <instruction>`, `fix("", instruction=...)`): what it shows and what it checks,
with real sandbox kernels and real litellm calls to a scripted server (issue #37)."""

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
    assert not asks_to_see("Change the age in row 'f' to 1.5.") and not asks_to_see("Create a frame `df`.")
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
    assert result.status == "unverified"  # shown is not checked
    assert "its last line shows `big`, added by the rules since the instruction asks for something to see" \
        in result.reason
    assert "Spain" in render_text(result).split("its value:")[1]
    server = fake_model("```python\nbig = euro12[euro12.Goals > 6]\nbig.reset_index(drop=True, inplace=True)\n```",
                        "```python\neuro12[euro12.Goals > 6]\n```")  # nothing to show: the model is asked again
    result = fix("", instruction="Select the teams that scored more than 6 goals.", namespace=_namespace(),
                 model="openai/scripted", api_base=server.url, max_rounds=2)
    assert "It ran, but showed nothing" in server.prompt(1) and result.patched == "euro12[euro12.Goals > 6]\n"

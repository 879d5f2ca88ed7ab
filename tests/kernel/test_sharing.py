"""Which user variables a loop shares with its sandboxes (sharing.py): decided by the user's code, not a candidate's."""

from jupyter_fixloop.cell import missing_names
from jupyter_fixloop.kernel.sharing import is_history, shared_names
from jupyter_fixloop.options import LoopOptions, parse_share

USER = ["df", "sales", "db_password", "pd", "_i1", "_i", "_3", "Out", "In", "helper", "threshold"]


def test_the_cell_and_checks_free_names_are_shared_and_nothing_else():
    got = shared_names(USER, code=["total = df['x'].sum()", "total > threshold"])
    assert got == {"df", "threshold"}
    assert "total" not in got  # only assigned


def test_a_typo_of_the_original_run_shares_its_close_match():
    missing = missing_names("NameError", "name 'dff' is not defined")
    assert missing == ("dff",)
    assert shared_names(USER, code=["x = dff.a"], missing=missing) == {"df"}
    assert missing_names("KeyError", "name 'dff' is not defined") == ()


def test_instruction_words_share_close_names_only():
    got = shared_names(USER, instruction="plot the sales per region above the threshhold")
    assert got == {"sales", "threshold"}


def test_history_names_are_shared_only_when_named():
    assert {"_i1", "_i", "_3", "Out", "In"} <= {n for n in USER if is_history(n)}
    assert not is_history("db_password") and not is_history("_private")
    # close matches never pick the history, even for a typo right next to it
    assert shared_names(USER, code=["print(_i2)"], missing=["_i2"]) == set()
    assert shared_names(USER, code=["print(_i1)"]) == {"_i1"}
    assert shared_names(USER, share=["_i1", "db_password"]) == {"_i1", "db_password"}


def test_modules_and_share_are_added():
    assert shared_names(USER, modules=["pd"], share=parse_share("helper, nothere")) == {"pd", "helper"}


def test_share_is_one_option_value_from_any_spelling():
    assert parse_share("a,b c") == ("a", "b", "c")
    assert LoopOptions(share=["x,y", "x"]).resolved().share == ("x", "y")


# ---------------------------------------------------------------- share by what a value is (issue #37), real kernels

def _user_namespace():
    import sqlite3

    import pandas as pd

    euro12 = pd.DataFrame({"Team": ["Croatia", "Czech Republic", "Denmark"], "Goals": [4, 4, 4]})
    return {"pd": pd, "euro12": euro12, "db_password": "hunter2-not-for-models",
            "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "conn": sqlite3.connect(":memory:")}


def test_a_frame_the_instruction_does_not_name_is_summarised_and_shared_when_read(fake_model):
    from jupyter_fixloop import fix

    server = fake_model("```python\ngoals = euro12.Goals\nprint(goals.sum())\n```")
    ns = _user_namespace()
    result = fix("", instruction="Select only the Goal column.", namespace=ns, model="openai/scripted",
                 api_base=server.url, rules=False)
    prompt = server.prompt(0)
    assert "- euro12: DataFrame 3×2" in prompt and "'Goals' int64 [4, 4, 4]" in prompt
    assert "no longer fails" not in prompt and "does what the instruction asks" in prompt
    assert result.status == "unverified"  # nothing checked it: it ran, said as such
    receipt = result.rounds[0].receipt
    assert receipt.ok and receipt.stdout.strip() == "12"
    assert "euro12 (DataFrame 3×2) shared: the candidate reads it" in receipt.text
    ns["conn"].close()


def test_a_secret_a_key_shaped_string_and_a_connection_are_never_mirrored_or_shown(fake_model):
    from jupyter_fixloop import fix

    reads = "print(len(db_password), len(stripe), conn)\n"
    server = fake_model(f"```python\n{reads}```", f"```python\n{reads}```")
    ns = _user_namespace()
    result = fix("", instruction="Show the connection and the passwords.", namespace=ns, model="openai/scripted",
                 api_base=server.url, rules=False, max_rounds=1)
    for request in server.requests:
        text = "\n".join(m["content"] for m in request["messages"])
        assert "hunter2" not in text and ns["stripe"] not in text
    assert "- db_password" not in server.prompt(0) and "- conn" not in server.prompt(0)
    receipt = result.rounds[0].receipt
    assert receipt.ename == "NameError" and result.status == "gave_up"
    for name in ("db_password", "stripe", "conn"):  # said once: the error's context and the loop's note agree
        assert receipt.text.count(f"`{name}` is in your namespace but not shared with the sandbox") == 1
    ns["conn"].close()


def test_the_named_policy_shares_only_what_the_users_code_reads(fake_model):
    from jupyter_fixloop import fix

    server = fake_model("```python\ngoals = euro12.Goals\n```")
    ns = _user_namespace()
    result = fix("", instruction="Select only the Goal column.", namespace=ns, model="openai/scripted",
                 api_base=server.url, rules=False, max_rounds=1, share_policy="named")
    assert "euro12" not in server.prompt(0)
    assert result.rounds[0].receipt.ename == "NameError"
    ns["conn"].close()

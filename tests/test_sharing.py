"""Which user variables a loop shares with its sandboxes (sharing.py): decided by the user's code, not a candidate's."""

from jupyter_fixloop.kernel.sharing import is_history, missing_names, shared_names
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

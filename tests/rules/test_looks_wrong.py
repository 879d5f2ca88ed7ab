"""Issue 38: a cell that runs but that pandas says assigns nothing (`df['b'][mask] = v`, pandas 3's
ChainedAssignmentError). The built-in engine's mechanical rewrite puts it in one step on the frame,
`df.loc[mask, 'b'] = v`; the loop runs it in a real sandbox like any repair."""

import pandas as pd
import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.receipt.smells import warned
from jupyter_fixloop.rules.data import chained_assignment
from jupyter_fixloop.rules.edits import ParsedReceipt

WARNED = ParsedReceipt("check failed", smells=tuple(
    s.text for s in warned(["ChainedAssignmentError: A value is being set on a copy"])), smelled=tuple(
    s.kind for s in warned(["ChainedAssignmentError: A value is being set on a copy"])))

REWRITES = [
    ("df['b'][df['a'] > 1] = 5\nprint(df)\n", "df.loc[df['a'] > 1, 'b'] = 5\nprint(df)\n"),
    ("df.b[df.a > 1] = 5\n", "df.loc[df.a > 1, 'b'] = 5\n"),
    ("df[df.a > 1]['b'] = 5\n", "df.loc[df.a > 1, 'b'] = 5\n"),
    ("df.loc[df.a > 1]['b'] += 1\n", "df.loc[df.a > 1, 'b'] += 1\n"),
    ("df[['b', 'c']][m] = 0\nx = 1\ndf['c'][m] = 2\n", "df.loc[m, ['b', 'c']] = 0\nx = 1\ndf.loc[m, 'c'] = 2\n"),
    ("df['b'].fillna(0, inplace=True)\n", "df['b'] = df['b'].fillna(0)\n"),  # pandas' own advice
    ("df['b'].replace('x', 'y', inplace=True, regex=False)\n", "df['b'] = df['b'].replace('x', 'y', regex=False)\n"),
]
LEFT_ALONE = [
    "df['b'][1:3] = 0\n",  # `s[1:3]` counts positions, `.loc[1:3]` labels: not the same rows
    "df[col][mask] = 0\n",  # a name: a column or a row mask, the code does not say
    "df.values[0] = 1\n",
    "df['b'] = 0\n",
    "df.fillna(0, inplace=True)\n",  # on the frame itself: it works
    "df['b'].fillna(0, inplace=False)\n",
]


@pytest.mark.parametrize("chained,one_step", REWRITES)
def test_a_chained_assignment_is_rewritten_in_one_step_on_the_frame(chained, one_step):
    assert chained_assignment(chained, WARNED) == one_step


@pytest.mark.parametrize("code", LEFT_ALONE)
def test_what_is_not_a_plain_chained_assignment_is_left_alone(code):
    assert chained_assignment(code, WARNED) is None


def test_without_pandas_warning_no_rewrite():
    assert chained_assignment(REWRITES[0][0], ParsedReceipt("ok")) is None


def test_the_loop_repairs_a_cell_that_runs_but_assigns_nothing():
    """The original runs without error; pandas' warning is a smell that fails it; the rewrite runs in a
    fresh sandbox, and the check (the values pandas 1 gave) verifies it."""
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [0, 0, 0]})
    result = fix("df['b'][df['a'] > 1] = 5\n", checks=["df['b'].tolist() == [0, 5, 5]"], namespace={"df": frame})
    assert result.status == "fixed", result.reason
    assert result.patched == "df.loc[df['a'] > 1, 'b'] = 5\n"
    assert "ChainedAssignmentError" in result.first.text
    assert frame["b"].tolist() == [0, 0, 0]  # the user's frame is the user's: the sandbox had a copy


def test_the_loop_assigns_back_a_result_the_cell_threw_away():
    """`df['city'].fillna('Unknown')` on a line of its own changes nothing: the smell says which line (as data,
    `Smell.line`), the rule assigns the result back there, and the check verifies it in the sandbox."""
    frame = pd.DataFrame({"city": ["Lyon", None], "n": [1, 2]})
    result = fix("df['city'].fillna('Unknown')\ndf['n'] = df['n'] * 2\n",
                 checks=["df['city'].tolist() == ['Lyon', 'Unknown']"], namespace={"df": frame})
    assert result.status == "fixed", result.reason
    assert result.patched == "df['city'] = df['city'].fillna('Unknown')\ndf['n'] = df['n'] * 2\n"
    assert frame["city"].isna().tolist() == [False, True]  # the user's frame is the user's

"""rules/data.py `reduction_on_text` on the two ways pandas 3 refuses a reduction over a frame with text columns
that pandas before 2.0 left out silently ("Enforced deprecation ``numeric_only=None`` (the default) in DataFrame
reductions that would silently drop columns that raised; ``numeric_only`` now defaults to ``False``", its 2.0
notes): pyarrow's "Function 'quantile' has no kernel matching input types (large_string)", and a grouped frame's
`agg(np.mean)`, pandas' own `mean` for NumPy's. Each on the real error of today's libraries, on cells written for
these tests; and what it leaves: an `agg` given a list, a frame whose only column is text."""

import pytest
import rewriting

from jupyter_fixloop.rules import repairs

pd = pytest.importorskip("pandas")
MODULES = {"pd": "pandas", "np": "numpy"}
SETUP = ("import numpy as np\nimport pandas as pd\n"
         "frame = pd.DataFrame({'team': list('abab'), 'who': list('wxyz'), 'hours': [1.0, 2.0, 3.0, 5.0],"
         " 'n': [1, 2, 3, 4]})\n")
TEXT_ONLY = int(pd.__version__.split(".")[0]) >= 3  # the string dtype these errors are of


@pytest.fixture
def ns():
    return {}


# (cell, the repaired cell, a check on its run: the numeric columns alone, as pandas before 2.0 gave them)
CASES = {
    "a_quantile_over_text_columns": (
        "top = frame.quantile(0.5)\n", "top = frame.quantile(0.5, numeric_only=True)\n",
        "list(top.index) == ['hours', 'n'] and top['hours'] == 2.5"),
    "a_grouped_agg_of_numpy_mean": (
        "means = frame.groupby('team').agg(np.mean)\n",
        "means = frame.groupby('team').agg('mean', numeric_only=True)\n",
        "list(means.columns) == ['hours', 'n'] and list(means['hours']) == [2.0, 3.5]"),
}


@pytest.mark.skipif(not TEXT_ONLY, reason="pandas before 3 has no string dtype raising these")
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_reduction_over_text_columns_leaves_them_out(name, ns):
    cell, repaired, check = CASES[name]
    first = rewriting.run(ns, cell, SETUP)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is not None and repair.__name__ == "reduction_on_text", fixed
    assert fixed == repaired
    again = rewriting.run(ns, fixed, SETUP)
    assert again.ok, again.text
    assert eval(check, ns)


LEFT_ALONE = {
    # a list of functions: which of them dropped which column is not one keyword's to say
    "an_agg_of_a_list": "stats = frame.groupby('team').agg([np.mean, np.std])\n",
    # a lambda pandas does not map to its own reduction
    "an_agg_of_a_lambda": "firsts = frame.groupby('team').agg(lambda x: np.mean(x))\n",
}


@pytest.mark.skipif(not TEXT_ONLY, reason="pandas before 3 has no string dtype raising these")
@pytest.mark.parametrize("name", sorted(LEFT_ALONE))
def test_an_agg_not_of_the_one_reduction_is_left(name, ns):
    cell = LEFT_ALONE[name]
    first = rewriting.run(ns, cell, SETUP)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != "reduction_on_text", fixed

"""The rewriters of rules/told.py (what the raised error itself says to do), the seaborn keyword its notes renamed
on a class, each on the real error of today's libraries in a real run, on cells written for these tests; and the
misfires they replaced: a `method=` that meant another thing, a typo guessed where the name is another word."""


import pytest
import rewriting

from jupyter_fixloop.kernel import runner as runner
from jupyter_fixloop.rules import repairs as repairs
from jupyter_fixloop.rules.edits import ParsedReceipt
from jupyter_fixloop.rules.ties import a_slip, slips

MODULES = {"pd": "pandas", "np": "numpy", "sns": "seaborn"}
SETUP = ("import matplotlib\nmatplotlib.use('Agg')\nimport numpy as np\nimport pandas as pd\n"
         "frame = pd.DataFrame({'a': [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 'k': list('xyxyxyxy')})\n"
         "X = frame[['a']].values\nlabels = frame['k'].values\n")


@pytest.fixture
def ns():
    return {}


def run(ns: dict, cell: str):
    return rewriting.run(ns, cell, SETUP)


# (cell, the rewriter, the repaired cell, a check on its run)
CASES = {
    "names_removed_from_a_module_imported_as_it_says": (
        "from numpy import NaN, NAN, nan\nmissing = [NaN, NAN, nan]\n", "removed_import",
        "from numpy import nan as NaN, nan as NAN, nan\nmissing = [NaN, NAN, nan]\n",
        "all(m != m for m in missing)"),
    # numpy 1.24's own words: "`np.float` was a deprecated alias for the builtin `float`. ..., use `float` by itself"
    "an_alias_of_a_builtin_left_out_of_the_import": (
        "from numpy import random, float\nx = float(random.RandomState(0).randint(1, 2))\n", "removed_import",
        "from numpy import random\nx = float(random.RandomState(0).randint(1, 2))\n",
        "x == 1.0 and type(x) is float"),
    "a_value_the_message_says_to_try": (
        "np.set_printoptions(threshold=np.nan)\nshown = np.get_printoptions()['threshold']\n", "message_try",
        "import sys\nnp.set_printoptions(threshold=sys.maxsize)\nshown = np.get_printoptions()['threshold']\n",
        "shown == __import__('sys').maxsize"),
    "a_pandas_string_array_handed_to_scikit_learn": (
        "from sklearn.model_selection import train_test_split\n"
        "parts = train_test_split(X, labels, test_size=0.25, random_state=1)\n", "extension_array_argument",
        "from sklearn.model_selection import train_test_split\n"
        "parts = train_test_split(X, labels.to_numpy(), test_size=0.25, random_state=1)\n",
        "len(parts[3]) == 2 and set(parts[3]) <= {'x', 'y'}"),
    "a_keyword_a_class_renamed_as_its_notes_say": (
        "import seaborn as sns\ngrid = sns.FacetGrid(frame, col='k', size=2)\n", "keyword_gone",
        "import seaborn as sns\ngrid = sns.FacetGrid(frame, col='k', height=2)\n",
        "grid.figure.get_size_inches()[1] == 2"),
    # numpy 1.19: "``numpy.ndarray.tostring()`` is deprecated in favor of ``tobytes()``" (a method of the same class)
    "a_method_its_deprecation_named_on_the_same_class": (
        "raw = np.arange(3, dtype=np.uint8).tostring()\n", "said_method",
        "raw = np.arange(3, dtype=np.uint8).tobytes()\n", "raw == bytes([0, 1, 2])"),
    # scikit-learn 0.21: "sklearn.externals.six is deprecated ... use six directly" (changed.SKLEARN_MODULES_MOVED)
    "a_module_of_sklearn_externals_imported_from": (
        "from sklearn.externals.six import StringIO\nbuf = StringIO('x')\n", "moved_import",
        "from six import StringIO\nbuf = StringIO('x')\n", "buf.read() == 'x'"),
    # pandas 3: "Slicing a positional slice with .loc is not allowed, Use .loc with labels or .iloc with positions"
    "a_positional_slice_given_to_loc_setting_a_new_row": (
        "table = pd.DataFrame({'a': [1.0], 'b': [2.0], 'c': [3.0]}, index=['x'])\n"
        "table.loc['total', :2] = [9.0, 8.0]\n",
        "positional_loc_slice",
        "table = pd.DataFrame({'a': [1.0], 'b': [2.0], 'c': [3.0]}, index=['x'])\n"
        "table.loc['total', table.columns[:2]] = [9.0, 8.0]\n",
        "list(table.loc['total', ['a', 'b']]) == [9.0, 8.0] and table.loc['total', 'c'] != table.loc['total', 'c']"),
    "a_function_the_message_says_to_call_instead": (
        "x = np.arange(4)\nback = np.fromstring(x.tobytes(), dtype=x.dtype)\n", "message_use",
        "x = np.arange(4)\nback = np.frombuffer(x.tobytes(), dtype=x.dtype)\n", "list(back) == [0, 1, 2, 3]"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rewriter_does_what_the_error_said(name, ns):
    cell = CASES[name][0]
    pytest.importorskip("six" if "six" in cell else "sklearn" if "sklearn" in cell else
                        "seaborn" if "seaborn" in cell else "numpy")
    rewriting.assert_repaired(ns, SETUP, CASES[name], MODULES)


# (cell, the repair that must not claim it)
LEFT_ALONE = {
    # `replace([0], method='pad')` filled the replaced values from the previous row: `ffill()` would fill every
    # missing value and drop the values to replace
    "a_replace_with_a_fill_method": ("s = pd.Series([1.0, 0.0, 2.0]).replace([0.0], method='pad')\n", "bad_keyword"),
    # an ndarray's own failure inside scikit-learn is not a pandas array's
    "a_numpy_array_is_left_to_other_repairs": (
        "from sklearn.model_selection import train_test_split\nparts = train_test_split(X, X[:3])\n",
        "extension_array_argument"),
}


@pytest.mark.parametrize("name", sorted(LEFT_ALONE))
def test_a_repair_leaves_what_the_error_does_not_say(name, ns):
    cell, left = LEFT_ALONE[name]
    if "sklearn" in cell:
        pytest.importorskip("sklearn")
    first = run(ns, cell)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != left, fixed


def test_a_typo_is_guessed_only_a_slip_of_the_keys_away(ns):
    """`fb.first('1W')` (a method pandas 3 removed) was once guessed `fb.hist('1W')`: another word, no typo."""
    removed, slipped = run(ns, "top = frame.first('2D')\n"), run(ns, "shown = frame.hsit()\n")
    assert repairs.names.attribute_typo("top = frame.first('2D')\n", ParsedReceipt.of(removed, MODULES)) is None
    assert repairs.names.attribute_typo("shown = frame.hsit()\n", ParsedReceipt.of(slipped, MODULES)) == (
        "shown = frame.hist()\n")


def test_a_slip_of_the_keys_is_a_typo_and_another_word_is_not():
    assert slips("sotr", "sort") == 1 and slips("first", "hist") == 2
    assert a_slip("lenght", "length") and a_slip("coef", "coef_") and a_slip("valuecounts", "value_counts")
    assert not a_slip("first", "hist") and not a_slip("mean", "max")


def test_a_date_format_raised_below_is_repaired_in_the_cell_that_defines_the_call(ns):
    """The cause loop (batch/upstream.py): the cell defining the function runs, the later cell calling it raises
    pandas' "doesn't match format" (here its real message); the cell's one `to_datetime` given no format is
    repaired (a guess: the saved output then tells day-first from month-first), and two such calls are left."""
    cell = "def make(raw):\n    return pd.to_datetime(raw)\n"
    ns.update(pd=__import__("pandas"))
    exec(cell, ns)
    with pytest.raises(ValueError) as raised:
        ns["make"](["05-01-2016", "13-01-2016"])
    below = ParsedReceipt("ok", below=("ValueError", str(raised.value).split("\n", 1)[0]))
    fixed = repairs.data.date_format(cell, below)
    assert fixed == "def make(raw):\n    return pd.to_datetime(raw, dayfirst=True)\n"
    exec(fixed, ns)
    assert [d.month for d in ns["make"](["05-01-2016", "13-01-2016"])] == [1, 1]
    assert repairs.data.date_format(cell + "other = pd.to_datetime(['2016-01-05'])\n", below) is None
    assert repairs.KIND[repairs.data.date_format] == repairs.GUESS


def test_a_reduction_on_text_raised_below_is_repaired_in_the_cell_that_defines_it(ns):
    """The cause loop again: a function the cell defines averages a grouped frame with a text column, and the later
    cell calling it raises pandas 3's "does not support operation 'mean'": the cell's one `mean` passes
    numeric_only=True (groupby dropped such columns before pandas 2.0); two `mean` calls are left."""
    cell = "def per_team(frame, key):\n    return frame.groupby(key).mean()\n"
    pd = __import__("pandas")
    staff = pd.DataFrame({"team": ["a", "b", "a"], "who": ["x", "y", "z"], "hours": [2, 4, 6]})
    exec(cell, ns)
    with pytest.raises(TypeError) as raised:
        ns["per_team"](staff, "team")
    below = ParsedReceipt("ok", below=("TypeError", str(raised.value).split("\n", 1)[0]))
    fixed = repairs.data.reduction_on_text(cell, below)
    assert fixed == "def per_team(frame, key):\n    return frame.groupby(key).mean(numeric_only=True)\n"
    exec(fixed, ns)
    assert ns["per_team"](staff, "team").to_dict() == {"hours": {"a": 4.0, "b": 4.0}}
    assert repairs.data.reduction_on_text(cell + "other = staff.mean()\n", below) is None


def test_a_series_read_by_position_raised_below_is_repaired_in_the_cell_that_defines_it(ns):
    """The cause loop again: a function the cell defines reads statsmodels-like coefficients (a Series labelled by
    names) by position, and the later cell calling it raises pandas 3's `KeyError: 0`: each integer key of that name
    is read with `.iloc`; two names read with that key are left (which one raised, nothing says)."""
    pd = __import__("pandas")
    cell = "coef = params\ndef y(coef, a, b):\n    return coef[0] * a + coef[1] * b\n"
    ns.update(params=pd.Series([0.5, 2.0], index=["Age", "Salary"]), pairs=[(1, 2)])
    exec(cell, ns)
    with pytest.raises(KeyError) as raised:
        ns["y"](ns["coef"], 1, 2)
    below = ParsedReceipt("ok", below=("KeyError", str(raised.value)))
    fixed = repairs.data.position_below(cell, below)
    assert fixed == "coef = params\ndef y(coef, a, b):\n    return coef.iloc[0] * a + coef.iloc[1] * b\n"
    exec(fixed, ns)
    assert ns["y"](ns["coef"], 1, 2) == 4.5
    assert repairs.data.position_below(cell.replace("coef[1] * b", "coef[1] * b[0]"), below) is None
    assert repairs.KIND[repairs.data.position_below] == repairs.GUESS


def test_a_cell_with_ipython_syntax_shows_the_values_on_its_failing_line(tmp_path):
    """A cell ending in a bare `;` (IPython's way to hide a plot's repr) is no Python: the facts of its failing
    line are read from the cell as the runner ran it, so the sandbox's receipt shows the pandas array, and the
    rewriter repairs it (it did not, before: rhiever's notebook)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    from sklearn.model_selection import train_test_split

    from jupyter_fixloop import fix

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], "k": list("xyxyxyxy")})
    cell = ("for seed in range(2):\n    (train_X, test_X,\n"
            "     train_y, test_y) = train_test_split(X, labels, test_size=0.25, random_state=seed)\n"
            "shown = len(test_y) + 2\n;\n")
    result = fix(cell, namespace={"X": frame[["a"]].values, "labels": frame["k"].values,
                                  "train_test_split": train_test_split}, checks=["shown == 4"])
    assert "labels = <ArrowStringArray>" in result.first.text, result.first.text
    assert result.status == "fixed" and "labels.to_numpy()" in result.patched, result.reason

"""Repairs written as data (rules/patterns.json, read by rules/patterns.py): each entry's templates, matched on the
failing line's AST, on the real error of today's libraries in a real run; what a template leaves alone; and the
data itself (each entry says whose words it follows, and each template parses)."""

import ast

import pytest
import rewriting

from jupyter_fixloop.rules import patterns, repairs

MODULES = {"pd": "pandas", "np": "numpy"}
SETUP = ("import numpy as np\nimport pandas as pd\n"
         "df = pd.DataFrame({'a': [1.0, 2.0, 4.0], 'b': [3.0, 5.0, 9.0]},\n"
         "                  index=pd.MultiIndex.from_tuples([('x', 1), ('x', 2), ('y', 1)]))\n"
         "s = pd.Series([1.0, 2.0, 3.0, 6.0])\n"
         "s1 = pd.Series([0, 1], index=['a', 'b'])\ns4 = pd.Series([4, 5], index=['c', 'e'])\n"
         "ts = pd.Series(range(4), index=pd.date_range('2021-01-01', periods=4, freq='D'))\n"
         "d = {'a': 1}\n"
         "import io\nraw = 'a,b\\n1,2\\n3,4,5\\n6,7\\n'\n")


@pytest.fixture
def ns():
    return {}


# (cell, the repair, the repaired cell, a check on its run)
CASES = {
    "arguments_and_keywords_left_go_with_the_call": (
        "totals = df.mean(axis='index', level=0, skipna=False)\n", "reduction_level",
        "totals = df.groupby(level=0).mean(skipna=False)\n", "totals.loc['x', 'a'] == 1.5"),
    "across_the_columns_through_the_transpose": (
        "totals = df.T.sum(level=1, axis=1)\n", "reduction_level",
        "totals = df.T.T.groupby(level=1).sum().T\n", "totals.loc['a', 1] == 5.0"),
    "an_operation_written_into_another_keeps_its_parentheses": (
        "m = (s * 2).mad()\n", "removed_method", "m = ((s * 2) - (s * 2).mean()).abs().mean()\n", "m == 3.0"),
    "a_tuple_where_the_template_writes_a_list": (
        "both = pd.concat([s1, s4], join_axes=(['a', 'c'],), axis='columns')\n", "join_axes",
        "both = pd.concat([s1, s4], axis='columns').reindex(['a', 'c'])\n", "both.shape == (2, 2)"),
    "the_aggregation_keeps_its_own_arguments": (
        "out = ts.resample('2D', loffset='1h').agg('sum')\n", "resample_keyword",
        "out = ts.resample('2D').agg('sum').shift(freq='1h')\n", "out.index[0].hour == 1 and out.iloc[0] == 1"),
    "a_bad_line_dropped_with_its_warning_as_on_bad_lines_says": (
        "t = pd.read_csv(io.StringIO(raw), error_bad_lines=False)\n", "bad_lines",
        "t = pd.read_csv(io.StringIO(raw), on_bad_lines='warn')\n", "len(t) == 2"),
    "a_bad_line_dropped_silently": (
        "t = pd.read_csv(io.StringIO(raw), error_bad_lines=False, warn_bad_lines=False)\n", "bad_lines",
        "t = pd.read_csv(io.StringIO(raw), on_bad_lines='skip')\n", "list(t['a']) == [1, 6]"),
    "python_2s_has_key_as_the_in_operator": (
        "ok = d.has_key('a')\n", "renamed_method", "ok = 'a' in d\n", "ok is True"),
    "a_tuple_of_any_length_as_the_list_it_meant": (  # `*REST` among a tuple's items
        "t = df.groupby(level=0)['a', 'b', 'a'].sum()\n", "tuple_columns",
        "t = df.groupby(level=0)[['a', 'b', 'a']].sum()\n", "t.shape == (2, 3)"),
    "json_literals_wherever_they_stand": (  # `anywhere` and `every`: the one named, and JSON's three beside it
        "flags = [true, false]\nnone_left = null is None\n", "name_literal",
        "flags = [True, False]\nnone_left = None is None\n", "none_left and flags == [True, False]"),
    "a_keyword_the_error_names_given_the_value_it_names": (  # `KEY=VALUE` from the message's groups
        "t = pd.read_csv(io.StringIO(raw), header=False, nrows=1)\n", "keyword_value_hint",
        "t = pd.read_csv(io.StringIO(raw), header=None, nrows=1)\n", "t.shape == (1, 2)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_template_repairs_the_real_error_as_written(name, ns):
    rewriting.assert_repaired(ns, SETUP, CASES[name], MODULES)


LIBRARIES = {**MODULES, "sns": "seaborn", "nx": "networkx"}
LIBRARY_SETUP = ("import numpy as np\nimport pandas as pd\nimport seaborn as sns\nimport networkx as nx\n"
                 "from sklearn.model_selection import GridSearchCV, RandomizedSearchCV\n"
                 "from sklearn.linear_model import LinearRegression\nfrom sklearn.svm import SVC\n"
                 "X = np.arange(40.).reshape(20, 2) % 7\ny = (X[:, 0] > 3).astype(int)\n"
                 "a = pd.Series([4, 3]); b = pd.Series([0, 1])\nG = nx.path_graph(3)\n"
                 "t = pd.DataFrame({'u': [1.0, 2.0, 3.0, 4.0], 'v': [2.0, 3.0, 1.0, 5.0]})\n"
                 "i = pd.date_range('2000-01-01', periods=2); j = pd.date_range('2000-01-02', periods=2)\n")
# (cell, the repair, the repaired cell, a check on its run), on the real error of today's scikit-learn, networkx,
# pandas and seaborn: each the library's own words (patterns.json)
LIBRARY_CASES = {
    "iid_false_was_the_default_the_search_has_now": (
        "s = GridSearchCV(SVC(), {'C': [1, 10]}, iid=False, cv=2).fit(X, y)\n", "search_iid",
        "s = GridSearchCV(SVC(), {'C': [1, 10]}, cv=2).fit(X, y)\n", "s.best_params_ in ({'C': 1}, {'C': 10})"),
    "to_numpy_matrix_as_networkx_said_the_same_matrix": (
        "m = nx.to_numpy_matrix(G)\n", "matrix_as_array",
        "import numpy as np\nm = np.asmatrix(nx.to_numpy_array(G))\n",
        "type(m).__name__ == 'matrix' and m.tolist() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]"),
    "a_union_of_dates_by_its_name": (
        "u = i | j\n", "index_set_operator", "u = i.union(j)\n", "len(u) == 3"),
    "an_intersection_of_dates_by_its_name": (
        "u = i & j\n", "index_set_operator", "u = i.intersection(j)\n", "len(u) == 1"),
    "keys_moot_beside_ignore_index_dropped": (
        "c = pd.concat([a, b], axis=1, ignore_index=True, keys=['A', 'B'])\n", "concat_moot_keys",
        "c = pd.concat([a, b], axis=1, ignore_index=True)\n", "list(c.columns) == [0, 1]"),
}


@pytest.mark.parametrize("name", sorted(LIBRARY_CASES))
def test_a_template_repairs_a_librarys_removal_as_it_said(name, ns):
    rewriting.assert_repaired(ns, LIBRARY_SETUP, LIBRARY_CASES[name], LIBRARIES)


@pytest.mark.parametrize("cell, expected, repaired, check", [
    ("s = RandomizedSearchCV(SVC(), {'C': [1, 10]}, n_iter=2, iid=True, cv=2).fit(X, y)\n", "search_iid_weighted",
     "s = RandomizedSearchCV(SVC(), {'C': [1, 10]}, n_iter=2, cv=2).fit(X, y)\n", "s.n_splits_ == 2"),
    ("m = LinearRegression(normalize=True).fit(X, y)\n", "linear_normalize",
     "from sklearn.pipeline import make_pipeline\nfrom sklearn.preprocessing import StandardScaler\n"
     "m = make_pipeline(StandardScaler(with_mean=False), LinearRegression()).fit(X, y)\n",
     "abs(m.predict(X) - LinearRegression().fit(X, y).predict(X)).max() < 1e-9"),
    ("v = pd.to_numeric(pd.Series(['1', 'n/a']), downcast='float')\n", "to_numeric_coerce",  # a placeholder made
     "v = pd.to_numeric(pd.Series(['1', 'n/a']), downcast='float', errors='coerce')\n",  # missing, keywords kept
     "int(v.isna().sum()) == 1"),
])
def test_a_template_whose_words_say_the_results_may_differ_is_a_guess(cell, expected, repaired, check, ns):
    receipt = rewriting.run(ns, cell, LIBRARY_SETUP)
    assert not receipt.ok
    repair, fixed, _ = repairs.propose(cell, receipt, LIBRARIES)
    assert repair.__name__ == expected and repairs.KIND[repair] == repairs.GUESS
    assert fixed == repaired
    assert rewriting.run(ns, fixed, LIBRARY_SETUP).ok and eval(check, ns)


@pytest.mark.parametrize("cell", [
    "totals = df.mean(axis=k, level=0)\n",  # an axis no template names: which one it is, only its value says
    "t = df.swapaxes(k, 1)\n",
    "p = pd.PeriodIndex(year=[2000], quarter=[1], dtype='period[Q]')\n",  # a keyword from_fields does not take
    "from sklearn.model_selection import GridSearchCV\ns = GridSearchCV(None, {}, iid=k)\n",  # iid=True or False
    "s1.loc[['a', 'f']] = 0\n",  # never code that does not compile: `s1.reindex(['a', 'f']) = 0`
])
def test_a_template_leaves_what_it_does_not_name(cell, ns):
    receipt = rewriting.run(ns, "k = 0\n" + cell, SETUP)
    assert not receipt.ok
    repair, fixed, _ = repairs.propose("k = 0\n" + cell, receipt, MODULES)
    assert getattr(repair, "__module__", "") != patterns.__name__, fixed


def test_every_entry_says_whose_words_it_follows_and_its_templates_parse():
    for name, entry in patterns.ENTRIES.items():
        assert entry["library"] and entry["version"] and entry["said"], name
        assert entry["errors"] and entry["message"] and entry["templates"], name
        for template in entry["templates"]:
            ast.parse(template["old"], mode="eval")
            ast.parse(template["new"], mode="eval")
        if "turn" in entry:  # a repair of its own: declared as the data says
            declared = next(f for f in repairs.REPAIRS if f.__name__ == name)
            assert repairs.KIND[declared] == entry["kind"]

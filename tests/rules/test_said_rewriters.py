"""The generic rewriters of rules/exported.py and rules/said.py, and what generic.py's learnt (a method renamed on
a base class the notes name, a keyword that took a function and now takes a value), each on the real error of
today's libraries in a real run, on cells written for these tests; and the cells each must leave alone."""


import pytest
import rewriting

from jupyter_fixloop.kernel import runner as runner
from jupyter_fixloop.rules import repairs as repairs

MODULES = {"pd": "pandas", "np": "numpy", "io": "io"}
SETUP = ("import io\nimport numpy as np\nimport pandas as pd\n"
         "days = pd.DataFrame({'v': np.arange(400.0)}, index=pd.date_range('2019-01-01', periods=400, freq='D'))\n"
         "plain = pd.DataFrame({'v': [1.0, 2.0]})\n"
         "TEXT = 'when,v\\n2021-03-04 07-15,1\\n2021-03-04 07-45,2\\n'\n")
SNS = ("import matplotlib.pyplot as plt\nimport seaborn as sns\n"
       "q = pd.DataFrame({'v': [1.0, 2.0, 3.0], 'w': [3.0, 1.0, 2.0], 'k': ['p', 'r', 'p']})\n")


@pytest.fixture
def ns():
    return {}


def run(ns: dict, cell: str):
    return rewriting.run(ns, cell, SETUP)


# (cell, the rewriter, the repaired cell, a check on its run)
CASES = {
    "star_import_no_longer_exports_it": (
        "from pandas.tseries.holiday import *\ncal = USFederalHolidayCalendar()\n"
        "july = cal.holidays('2021-07-01', '2021-07-31')\n",
        "exported_name",
        "from pandas.tseries.holiday import *\nfrom pandas.tseries.holiday import USFederalHolidayCalendar\n"
        "cal = USFederalHolidayCalendar()\njuly = cal.holidays('2021-07-01', '2021-07-31')\n",
        "july[0].day == 5"),  # the 4th was a Sunday
    "a_class_the_imported_library_defines": (
        "stamp = Timestamp('2020-02-29') + pd.Timedelta(days=1)\n", "library_name",
        "from pandas import Timestamp\nstamp = Timestamp('2020-02-29') + pd.Timedelta(days=1)\n",
        "stamp.month == 3"),
    "a_class_of_a_library_module_already_imported": (
        "due = pd.Timestamp('2021-12-24') + CustomBusinessDay(holidays=['2021-12-27'])\n", "library_name",
        "from pandas.tseries.offsets import CustomBusinessDay\n"
        "due = pd.Timestamp('2021-12-24') + CustomBusinessDay(holidays=['2021-12-27'])\n",
        "due.day == 28"),
    "a_keyword_that_took_a_function_takes_its_format": (
        "t = pd.read_csv(io.StringIO(TEXT), index_col='when', parse_dates=True,\n"
        "                date_parser=lambda s: pd.to_datetime(s, format='%Y-%m-%d %H-%M'))\n",
        "keyword_gone",
        "t = pd.read_csv(io.StringIO(TEXT), index_col='when', parse_dates=True,\n"
        "                date_format='%Y-%m-%d %H-%M')\n",
        "t.index[1].minute == 45"),
    "a_method_renamed_on_the_base_class_the_notes_name": (
        "up = days.iloc[:2].resample('12h').pad()\n", "said_method", "up = days.iloc[:2].resample('12h').ffill()\n",
        "up['v'].tolist() == [0.0, 0.0, 1.0]"),
    "a_method_that_is_an_operator_now": (
        "there = days.index.contains('2019-02-03')\n", "said_method", "there = '2019-02-03' in days.index\n",
        "there is True"),
    "a_method_that_is_an_operator_inside_an_expression": (
        "both = days.index.contains('2019-02-03') and True\n", "said_method",
        "both = ('2019-02-03' in days.index) and True\n", "both is True"),
    # pandas 0.23: ":attr:`Series.dt.weekday_name` ... deprecated in favor of :meth:`Series.dt.day_name`"; gone in 1.0
    "an_attribute_the_notes_name_a_method_for": (
        "names = days.index.to_series().dt.weekday_name.iloc[:2].tolist()\n", "said_method",
        "names = days.index.to_series().dt.day_name().iloc[:2].tolist()\n", "names == ['Tuesday', 'Wednesday']"),
    "an_attribute_of_a_timestamp_the_notes_name_a_method_for": (
        "first = days.index[0].weekday_name\n", "said_method", "first = days.index[0].day_name()\n",
        "first == 'Tuesday'"),
    # pandas 2.0: "Deprecated argument ``infer_datetime_format`` in :func:`to_datetime` and :func:`read_csv`, as a
    # strict version of it is now the default"; gone from both in 3.0
    "a_keyword_whose_behaviour_the_notes_say_is_the_default_now": (
        "when = pd.to_datetime(pd.Series(['2017-05-31', '2017-06-30']), infer_datetime_format=True)\n", "keyword_gone",
        "when = pd.to_datetime(pd.Series(['2017-05-31', '2017-06-30']))\n", "when.dt.month.tolist() == [5, 6]"),
    "rows_by_a_date_string": (
        "march = days['2019-03']\nlast = march.index[-1].day\n", "rows_by_string",
        "march = days.loc['2019-03']\nlast = march.index[-1].day\n", "last == 31"),
    # pandas 2.0: "Disallow partial slicing on an non-monotonic DatetimeIndex with keys which are not in Index";
    # pandas 1.x kept the rows between the bounds, in their order
    "dates_not_in_order_sliced_by_strings": (
        "odd = days.iloc[[40, 3, 399, 10]]\nlate = odd.loc['2019-02':'2020']\n", "unordered_slice",
        "odd = days.iloc[[40, 3, 399, 10]]\n"
        "late = odd.loc[(odd.index >= pd.Period('2019-02').start_time) & (odd.index <= pd.Period('2020').end_time)]\n",
        "late['v'].tolist() == [40.0, 399.0]"),
    "a_module_moved_whole": (
        "from sklearn import cross_validation\nfrom sklearn.tree import DecisionTreeClassifier\n"
        "X, y = np.arange(20.0).reshape(-1, 1), np.arange(20) % 2\n"
        "scores = cross_validation.cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=4)\n",
        "moved_module",
        "from sklearn import model_selection as cross_validation\nfrom sklearn.tree import DecisionTreeClassifier\n"
        "X, y = np.arange(20.0).reshape(-1, 1), np.arange(20) % 2\n"
        "scores = cross_validation.cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=4)\n",
        "len(scores) == 4"),
    # scikit-learn 0.22 made sklearn.tree.export private: "The corresponding classes / functions should instead be
    # imported from sklearn.tree"; the table read from its source lists export_graphviz there, not export_text
    "a_name_of_a_module_made_private": (
        "from sklearn.tree.export import export_text\nfrom sklearn.tree import DecisionTreeClassifier\n"
        "rules = export_text(DecisionTreeClassifier(max_depth=1).fit([[0], [1]], [0, 1]))\n", "moved_import",
        "from sklearn.tree import export_text\nfrom sklearn.tree import DecisionTreeClassifier\n"
        "rules = export_text(DecisionTreeClassifier(max_depth=1).fit([[0], [1]], [0, 1]))\n",
        "'feature_0 <= 0.50' in rules"),
    # pandas 2.0: "Disallow passing non-keyword arguments to :meth:`StringMethods.split` and
    # :meth:`StringMethods.rsplit` except for ``pat``" (no table of old signatures holds them)
    "arguments_made_keyword_only": (
        "parts = pd.Series(['a,b,c', 'd']).str.split(',', 1)\n", "keyword_only_now",
        "parts = pd.Series(['a,b,c', 'd']).str.split(',', n=1)\n", "parts[0] == ['a', 'b,c']"),
    "arguments_made_keyword_only_two_named": (
        "parts = pd.Series(['a,b,c', 'd,e']).str.rsplit(',', 1, True)\n", "keyword_only_now",
        "parts = pd.Series(['a,b,c', 'd,e']).str.rsplit(',', n=1, expand=True)\n",
        "parts.values.tolist() == [['a,b', 'c'], ['d', 'e']]"),
    # pandas 2.1: "Deprecated :meth:`DataFrame.first`; create a mask and filter using ``.loc`` instead" (3.0 removed
    # it): the mask pandas' own method made, here the days up to the Sunday that ends the first week
    "a_removed_method_as_the_mask_it_made": (
        "head = days.first('1W')\n", "said_mask",
        "head = days.loc[:pd.tseries.frequencies.to_offset('1W').rollforward(days.index[0])]\n",
        "len(head) == 6 and head.index[-1].day_name() == 'Sunday'"),
    "a_removed_method_as_the_mask_it_made_inside_a_function": (
        "spans = days['v'].resample('MS').apply(lambda x: x.last('2D').sum())\n", "said_mask",
        "spans = days['v'].resample('MS').apply(lambda x: x.loc[x.index > x.index[-1] - "
        "pd.tseries.frequencies.to_offset('2D')].sum())\n",
        "spans.iloc[0] == 29.0 + 30.0"),
    # pandas 2.1: "Deprecated the ``method`` ... keywords on ... :meth:`.Resampler.fillna`, use ``obj.bfill()`` or
    # ``obj.ffill()`` instead" (3.0 removed Resampler.fillna): the method its argument named
    "a_method_named_by_its_argument": (
        "up = days.iloc[:2].resample('12h').fillna('nearest')\n", "said_method",
        "up = days.iloc[:2].resample('12h').nearest()\n", "up['v'].tolist()[::2] == [0.0, 1.0]"),
    "a_method_named_by_its_keyword": (
        "up = days.iloc[:2].resample('12h').fillna(method='bfill', limit=1)\n", "said_method",
        "up = days.iloc[:2].resample('12h').bfill(limit=1)\n", "up['v'].tolist() == [0.0, 1.0, 1.0]"),
    # pandas 1.5: setting a whole column with loc or iloc will write in place; "use DataFrame.__setitem__" for
    # the old behaviour (pandas 3 refuses another dtype in place)
    "a_whole_column_set_through_loc": (
        "frame = pd.DataFrame({'when': ['2018-10-01', '2018-10-02'], 'n': [1, 2]})\n"
        "frame.loc[:, 'when'] = pd.to_datetime(frame.when)\n", "whole_column_set",
        "frame = pd.DataFrame({'when': ['2018-10-01', '2018-10-02'], 'n': [1, 2]})\n"
        "frame['when'] = pd.to_datetime(frame.when)\n", "frame['when'].dt.day.tolist() == [1, 2]"),
    "a_whole_column_set_through_iloc": (
        "frame = pd.DataFrame({'n': [1, 2]})\nframe.iloc[:, 0] = frame.n * 1.5\n", "whole_column_set",
        "frame = pd.DataFrame({'n': [1, 2]})\nframe[frame.columns[0]] = frame.n * 1.5\n",
        "frame['n'].tolist() == [1.5, 3.0]"),
    # pandas 0.21: "The idiomatic way to achieve selecting potentially not-found elements is via ``.reindex()``"
    # (1.0 removed the NaN rows `.loc` gave a missing label)
    "labels_the_index_lacks": (
        "picked = plain.loc[[0, 5]]\n", "missing_labels", "picked = plain.reindex([0, 5])\n",
        "picked['v'].iloc[0] == 1.0 and picked['v'].isna().iloc[1]"),
    # pandas 2.0: "Enforced disallowing passing ``True`` and ``False`` into ``inclusive`` in :meth:`Series.between` in
    # favor of ``"both"`` and ``"neither"`` respectively"
    "values_replaced_one_for_one": (
        "inside = plain['v'].between(1.0, 2.0, inclusive=False)\n", "old_value",
        "inside = plain['v'].between(1.0, 2.0, inclusive='neither')\n", "inside.tolist() == [False, False]"),
    # pandas 1.4: "Users should squeeze the :class:`DataFrame` afterwards with ``.squeeze("columns")`` instead"
    "a_keyword_that_is_a_call_on_the_result_now": (
        "one = pd.read_csv(io.StringIO('v\\n1\\n2\\n'), squeeze=True)\n", "keyword_gone",
        "one = pd.read_csv(io.StringIO('v\\n1\\n2\\n')).squeeze(\"columns\")\n",
        "isinstance(one, pd.Series) and one.tolist() == [1, 2]"),
    # seaborn 0.9: "Renamed the ``size`` parameter to ``height`` in multi-plot grid objects (...) along with
    # functions that use them (``factorplot``, :func:`lmplot`, ...)"; today's lmplot refuses `size`
    "a_keyword_renamed_in_functions_the_entry_names_late": (
        "import seaborn as sns\ng = sns.lmplot(x='v', y='v', data=plain, size=3)\n", "keyword_gone",
        "import seaborn as sns\ng = sns.lmplot(x='v', y='v', data=plain, height=3)\n",
        "list(g.figure.get_size_inches()) == [3.0, 3.0]"),
    # seaborn 0.12: "`data` is the first and only positional argument" (x and y were, 0.11 said, the positional
    # variables): a call passing them by position is named
    "variables_named_now_that_data_is_the_only_positional": (
        "import seaborn as sns\ngrid = sns.lmplot('v', 'v', data=plain, fit_reg=False)\n",
        "keyword_only_now",
        "import seaborn as sns\ngrid = sns.lmplot(x='v', y='v', data=plain, fit_reg=False)\n",
        "grid.ax.get_xlabel() == 'v'"),
    "two_variables_by_position_named": (
        "import seaborn as sns\nax = sns.kdeplot(days['v'].iloc[:9], days['v'].iloc[:9] % 4)\n",
        "keyword_only_now",
        "import seaborn as sns\nax = sns.kdeplot(x=days['v'].iloc[:9], y=days['v'].iloc[:9] % 4)\n",
        "ax.get_ylabel() == 'v'"),
    # seaborn 0.9.1's signature (changed.KEYWORD_ONLY_NOW, tools/drift_tables.py): `scatterplot(x, y, hue, style, size,
    # data, ...)`; 0.12's words name `x` and `y` only: a third by position is named by the old order
    "a_third_variable_by_position_named_as_the_old_signature_took_it": (
        SNS + "ax = sns.scatterplot('v', 'w', 'k', data=q, ax=plt.figure().add_subplot())\nplt.close('all')\n",
        "keyword_only_now",
        SNS + "ax = sns.scatterplot(x='v', y='w', hue='k', data=q, ax=plt.figure().add_subplot())\nplt.close('all')\n",
        "ax.get_ylabel() == 'w' and [t.get_text() for t in ax.get_legend().texts] == ['p', 'r']"),
    # `boxplot(x, y, hue, data, ...)`: the data fourth; an `ax=` given too ("but 4 positional arguments (and 1
    # keyword-only argument) were given")
    "the_data_by_position_where_the_old_signature_took_it": (
        SNS + "ax = sns.boxplot('k', 'v', None, q, ax=plt.figure().add_subplot())\nplt.close('all')\n",
        "keyword_only_now",
        SNS + "ax = sns.boxplot(x='k', y='v', hue=None, data=q, ax=plt.figure().add_subplot())\nplt.close('all')\n",
        "[t.get_text() for t in ax.get_xticklabels()] == ['p', 'r'] and ax.get_ylabel() == 'v'"),
    # `jointplot(x, y, data, ...)`: the data third (patterns.json's `seaborn_data_third` was this, by hand)
    "the_data_third_where_the_old_signature_took_it": (
        SNS + "g = sns.jointplot('v', 'w', q[q['v'] > 1])\nplt.close('all')\n", "keyword_only_now",
        SNS + "g = sns.jointplot(x='v', y='w', data=q[q['v'] > 1])\nplt.close('all')\n", "len(g.x) == 2"),
    "the_data_third_of_a_function_imported_from_seaborn": (
        SNS + "from seaborn import jointplot\ng = jointplot('v', 'w', q)\nplt.close('all')\n", "keyword_only_now",
        SNS + "from seaborn import jointplot\ng = jointplot(x='v', y='w', data=q)\nplt.close('all')\n",
        "len(g.x) == 3"),
    # seaborn 0.9-0.11 kept `factorplot(*args, **kwargs)` only to warn and run `catplot` with `kind='point'` unless
    # given and `size` as `height` (changed.FORWARDED, read from its source): called as it ran, catplot's default
    # kind ('strip') would draw another plot
    "a_removed_function_called_as_its_old_version_ran_it": (
        SNS + "g = sns.factorplot(x='k', y='v', data=q,\n                   size=2)\nplt.close('all')\n", "forwarded",
        SNS + "g = sns.catplot(x='k', y='v', data=q,\n                   height=2, kind='point')\nplt.close('all')\n",
        "g.figure.get_size_inches()[1] == 2 and len(g.ax.lines) > 0 and not g.ax.patches"),
    "a_kind_given_is_kept": (
        SNS + "g = sns.factorplot(x='k', y='v', data=q, kind='bar')\nplt.close('all')\n", "forwarded",
        SNS + "g = sns.catplot(x='k', y='v', data=q, kind='bar')\nplt.close('all')\n", "len(g.ax.patches) == 2"),
    "a_removed_function_imported_from_its_package": (
        SNS + "from seaborn import factorplot\ng = factorplot(x='k', y='v', data=q)\nplt.close('all')\n", "forwarded",
        SNS + "from seaborn import catplot\ng = catplot(x='k', y='v', data=q, kind='point')\nplt.close('all')\n",
        "len(g.ax.lines) > 0"),
    "a_removed_function_that_only_warned": (
        SNS + "ax = sns.lvplot(x='k', y='v', data=q)\nplt.close('all')\n", "forwarded",
        SNS + "ax = sns.boxenplot(x='k', y='v', data=q)\nplt.close('all')\n", "ax.get_ylabel() == 'v'"),
    # pandas 1.0: "Series.plot no longer accepts positional arguments"; its error writes the call with its keywords
    # ("Use `Series.plot(kind='barh')` instead of `Series.plot('barh',)`"), in the order 0.25.3's Series.plot took them
    "arguments_named_as_the_error_writes_the_call": (
        "import matplotlib\nmatplotlib.use('Agg')\nax = plain['v'].plot('barh', None, (3, 2))\n",
        "keyword_only_now",
        "import matplotlib\nmatplotlib.use('Agg')\nax = plain['v'].plot(kind='barh', ax=None, figsize=(3, 2))\n",
        "len(ax.patches) == 2 and list(ax.figure.get_size_inches()) == [3.0, 2.0]"),
    # pandas also removed fillna's `method` (second by position then): today's order is the old one as a guess
    "an_argument_made_keyword_only_where_a_keyword_was_removed_too": (
        "f = plain.fillna(0, None)\n", "keyword_only_guess", "f = plain.fillna(0, axis=None)\n",
        "f['v'].tolist() == [1.0, 2.0]"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rewriter_repairs_the_real_error_as_the_library_said(name, ns):
    cell, expected, repaired, check = CASES[name]
    if "sklearn" in cell:
        pytest.importorskip("sklearn")
    first = run(ns, cell)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is not None and repair.__name__ == expected, fixed
    assert fixed == repaired
    again = run(ns, fixed)
    assert again.ok, again.text
    assert eval(check, ns)


# (cell, the rewriter that must not claim it, the start of the doubt said when the rewriter cannot tell, or None)
LEFT_ALONE = {
    # numpy and pandas both define `array`: which the notebook meant, its code does not say
    "a_name_two_libraries_define": ("a = array([1, 2])\n", "library_name", "`array` is defined by numpy and by pandas"),
    "a_name_no_library_defines": ("n = totals_by_day + 1\n", "library_name", None),
    # a function passes more than the format on: what it does decides the new value
    "a_function_the_value_cannot_say": (
        "t = pd.read_csv(io.StringIO(TEXT), parse_dates=['when'], date_parser=lambda s: pd.to_datetime(s))\n",
        "keyword_gone", "`date_parser` took a function and `date_format` takes a value"),
    "a_string_key_on_a_frame_not_indexed_by_dates": ("x = plain['2019']\n", "rows_by_string", None),
    "an_attribute_a_class_of_ones_own_lacks": ("class Box:\n    pass\nname = Box().weekday_name\n", "said_method",
                                              None),
    "a_method_a_class_of_ones_own_lacks": ("class Box:\n    pass\nBox().contains(1)\n", "said_method", None),
    # scikit-learn 0.18's KFold(n, n_folds) is not model_selection's KFold(n_splits): not moved as is
    "a_module_whose_class_changed_its_parameters": ("from sklearn import cross_validation\n"
                                                    "folds = cross_validation.KFold(10, n_folds=3)\n",
                                                    "moved_module", None),
    "a_keyword_only_function_of_ones_own": ("def f(a, *, b=1):\n    return a\nf(1, 2)\n", "keyword_only_guess", None),
    # moved to model_selection, not to its own package, and KFold(n, n_folds) is not KFold(n_splits): not moved whole
    "a_module_moved_elsewhere_is_not_moved_whole": ("from sklearn.cross_validation import KFold\n", "moved_import",
                                                    None),
    # a few rows, not the whole column: pandas' words are about setting an entire column
    "some_rows_of_a_column_set_through_loc": ("frame = pd.DataFrame({'n': [1, 2]})\nframe.loc[:0, 'n'] = 'x'\n",
                                              "whole_column_set", None),
    # no label found: pandas 0.21 raised a KeyError then too
    "no_label_the_index_has": ("picked = plain.loc[[5, 6]]\n", "missing_labels", None),
    # a value no entry says replaced one for one
    "a_value_no_entry_maps": ("inside = plain['v'].between(1.0, 2.0, inclusive='all')\n", "old_value", None),
    "two_arguments_where_a_keyword_was_removed": ("f = plain.fillna(0, None, 0)\n", "keyword_only_guess", None),
    # the error writes a value holding `, ylabel=`: its keywords cannot be told from its values
    "a_value_the_error_writes_with_a_keyword_in_it": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfig, axes = plt.subplots()\n"
        "axes.set(xlabel='a', ylabel='b')\nax = plain['v'].plot(axes)\n", "keyword_only_now", None),
    # a function of the user's named as seaborn's: only a call on the module the entry is of is named
    "a_function_of_the_users_named_as_seaborns": ("def lmplot(data):\n    return data\ng = lmplot('v', 'v', plain)\n",
                                                  "keyword_only_now", None),
    # seaborn 0.9: "The ``lvplot`` function has been renamed to :func:`boxenplot`": a name the library's notes are
    # about is no typo of another of its functions (`lmplot`, one letter away): it is called as the old version ran it
    "a_function_the_library_renamed_is_no_typo": (
        SNS + "g = sns.lvplot(x='k', y='v', data=q)\n", "attribute_typo",
        "seaborn 0.11.0 deprecated `lvplot`; seaborn 0.9.0 had said: \"The ``lvplot`` function has been renamed"),
    # seaborn 0.12 "Removed the previously-deprecated `factorplot`" naming nothing; 0.9 had named `catplot`; keywords
    # given through `**` may hold `kind`: not called as the old version ran it (`forwarded`), the rename is said
    "a_removal_naming_nothing_after_a_rename_that_named_one": (
        SNS + "opts = {'kind': 'bar'}\ng = sns.factorplot(x='k', y='v', data=q, **opts)\n", "forwarded",
        "seaborn 0.12.0 removed `factorplot`; seaborn 0.9.0 had said: \"The ``factorplot`` function has been "
        "renamed to :func:`catplot`."),
    # seaborn 0.9's kdeplot took `data2` second, a parameter no longer: its old order names nothing
    "a_positional_the_old_signature_named_and_today_has_not": (
        "import seaborn as sns\nq = pd.DataFrame({'v': [1.0, 2.0]})\nax = sns.kdeplot(q['v'], q['v'], q['v'])\n",
        "keyword_only_now", None),
}


@pytest.mark.parametrize("name", sorted(LEFT_ALONE))
def test_a_rewriter_leaves_what_the_libraries_did_not_say(name, ns):
    cell, rewriter, doubt = LEFT_ALONE[name]
    if "sklearn" in cell:
        pytest.importorskip("sklearn")
    first = run(ns, cell)
    assert not first.ok
    repair, fixed, said = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != rewriter, fixed
    if doubt:
        assert said.startswith(doubt) or repair is not None, said


def test_a_star_import_of_the_users_own_module_is_never_imported_here(ns, tmp_path, monkeypatch):
    """Looking a name up in the user's module would run their code outside the sandbox: only the libraries' are
    looked in. (The cell's NameError, as the kernel would show it after the user's import ran there.)"""
    (tmp_path / "helpers_of_mine.py").write_text(f"import pathlib\npathlib.Path({str(tmp_path)!r}, 'ran').touch()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    failed = run(ns, "x = Missing()\n")
    repair, fixed, _ = repairs.propose("from helpers_of_mine import *\nx = Missing()\n", failed, MODULES)
    assert repair is None or repair.__name__ != "exported_name", fixed
    assert not (tmp_path / "ran").exists()


def test_every_new_rewriter_says_its_kind():
    """A name used bare may be the notebook's own: that rewriter is a guess; the others do what a note said."""
    kinds = {r.__name__: repairs.KIND[r] for r in repairs.REPAIRS}
    assert kinds["library_name"] == repairs.GUESS
    assert all(kinds[n] == repairs.MECHANICAL for n in ("exported_name", "rows_by_string", "unordered_slice",
                                                        "moved_module", "said_method",
                                                        "keyword_only_now", "said_mask",
                                                        "whole_column_set",
                                                        "missing_labels", "old_value", "keyword_gone"))
    assert kinds["keyword_only_guess"] == repairs.GUESS

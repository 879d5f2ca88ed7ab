"""tools/drift_tables.py reads what an old version's source says without installing it: a small source tree
written here, shaped as scikit-learn 0.19's and matplotlib 2.2's (a warning in a base class's method, the code
that hands the old value on, a decorator), read with `ast`, and the tables it yields against the installed
libraries."""

import importlib.util
import json
import pathlib
import textwrap

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "drift_tables.py"


@pytest.fixture(scope="module")
def tables():
    spec = importlib.util.spec_from_file_location("drift_tables", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root: pathlib.Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text))


SGD = '''
    import warnings
    import six
    from abc import ABCMeta


    class BaseSGD(six.with_metaclass(ABCMeta, object)):
        def _validate_params(self):
            self._tol = self.tol
            if self.n_iter is not None:
                warnings.warn("n_iter parameter is deprecated in 0.19 and will be"
                              " removed in 0.21. Use max_iter and tol instead.", DeprecationWarning)
                max_iter = self.n_iter
                self._tol = None
            if self.min_impurity_split is not None:
                warnings.warn("The min_impurity_split parameter is deprecated. Use the min_impurity_decrease "
                              "parameter instead.", DeprecationWarning)
                min_impurity_split = self.min_impurity_split
            if self.presort != "deprecated":
                warnings.warn("The parameter 'presort' is deprecated and has no effect.", FutureWarning)


    class Perceptron(BaseSGD):
        def __init__(self, penalty=None, alpha=0.0001, n_iter=None):
            self.n_iter = n_iter
'''


def test_a_warning_in_a_base_class_speaks_for_its_subclasses_and_a_rename_needs_the_code_to_hand_the_value_on(
        tables, tmp_path):
    write(tmp_path, "sklearn/linear_model/stochastic_gradient.py", SGD)
    said = tables.source("sklearn", str(tmp_path))
    renamed = said["sklearn source renamed"]
    assert renamed["sklearn.linear_model.stochastic_gradient.Perceptron"] == {"n_iter": ["max_iter", {"tol": "None"}]}
    # "Use the min_impurity_decrease parameter instead", but the old code kept the old value as it was: no rename
    assert all("min_impurity_split" not in pairs for pairs in renamed.values())
    assert said["sklearn no effect"]["sklearn.linear_model.stochastic_gradient.Perceptron"] == {
        "presort": "parameter 'presort' is deprecated and has no effect."}


def test_renames_and_extras_are_kept_only_where_the_installed_class_takes_them(tables):
    pytest.importorskip("sklearn")
    said = {"sklearn.linear_model.perceptron.Perceptron": {"n_iter": ["max_iter", {"tol": "None"}],
                                                           "eta0": ["learning_rate", {}]}}
    assert tables.source_renamed(said) == {("Perceptron.__init__", "n_iter"): "max_iter"}  # eta0 is still there
    assert tables.source_extras(said) == {("Perceptron.__init__", "n_iter"): (("tol", "None"),)}


def test_a_moved_module_keeps_only_the_names_whose_positional_parameters_agree(tables, tmp_path):
    pytest.importorskip("sklearn")
    write(tmp_path, "sklearn/cross_validation.py", '''
        import warnings
        warnings.warn("This module was deprecated in version 0.18 in favor of the model_selection module into "
                      "which all the refactored classes and functions are moved.", DeprecationWarning)


        class KFold(object):
            def __init__(self, n, n_folds=3, shuffle=False, random_state=None):
                pass


        def train_test_split(*arrays, **options):
            pass


        def cross_val_score(estimator, X, y=None, scoring=None, cv=None):
            pass
    ''')
    said = tables.source("sklearn", str(tmp_path))
    assert said["sklearn modules renamed"] == {"sklearn.cross_validation": "sklearn.model_selection"}
    moved = tables.names_moved([said])
    assert moved == {("sklearn.cross_validation", "cross_val_score"): ("sklearn.model_selection", "cross_val_score"),
                     ("sklearn.cross_validation", "train_test_split"): ("sklearn.model_selection", "train_test_split")}


def test_matplotlib_renamed_keywords_are_keyed_by_the_called_name(tables, tmp_path):
    pytest.importorskip("matplotlib")
    write(tmp_path, "lib/matplotlib/axes/_axes.py", '''
        import warnings
        from matplotlib import cbook


        class Axes(object):
            def hist(self, x, bins=None, normed=None, density=None):
                if normed is not None:
                    warnings.warn("The 'normed' kwarg is deprecated, and has been "
                                  "replaced by the 'density' kwarg.")

            @cbook._rename_parameter("3.3", "s", "text")
            def annotate(self, text, xy, *args, **kwargs):
                pass

            @cbook.deprecated("2.0", alternative="set_facecolor")
            def set_axis_bgcolor(self, color):
                pass
    ''')
    said = tables.source("matplotlib", str(tmp_path))
    assert tables.renamed_calls(said["matplotlib renamed calls"]) == {("annotate", "s"): "text",
                                                                        ("hist", "normed"): "density"}
    said = {"matplotlib.axes.Axes": said["matplotlib method alternatives"]["matplotlib.axes._axes.Axes"]}
    new, owner, types = tables.methods_renamed(said)["set_axis_bgcolor"]
    assert (new, owner) == ("set_facecolor", "Axes") and "Axes" in types


def test_a_string_of_one_letter_colors_is_read_from_a_deprecation_said_with_message(tables, tmp_path):
    """matplotlib 3.2 said it by `warn_deprecated("3.2", message=...)`: the text is a keyword's; a function
    that warns of something else, or where today's function still takes such a string, gives no entry."""
    pytest.importorskip("matplotlib")
    write(tmp_path, "lib/matplotlib/colors.py", '''
        from matplotlib import cbook


        def to_rgba_array(c, alpha=None):
            if isinstance(c, str):
                result = [c]
                cbook.warn_deprecated(
                    "3.2", message="Using a string of single character colors as "
                    "a color sequence is deprecated since %(since)s and will be "
                    "removed %(removal)s. Use an explicit list instead.")
                return result


        def to_rgba(c, alpha=None):
            cbook.warn_deprecated("3.2", message="Something else is deprecated. Use an explicit list instead.")
    ''')
    said = tables.source("matplotlib", str(tmp_path))["matplotlib string as list"]
    assert said == {"matplotlib.colors.to_rgba_array": "Using a string of single character colors as a color sequence "
                                                       "is deprecated since 3.2. Use an explicit list instead."}
    letters, text = tables.strings_as_lists(said)["to_rgba_array"]
    assert set("rgbk") <= set(letters) and "Use an explicit list instead." in text
    # `is_color_like('bc')` answers today without raising: an entry for it would say what it does not do
    assert tables.strings_as_lists({"matplotlib.colors.is_color_like": text}) == {}
    assert tables.strings_as_lists({"matplotlib.colors.gone_now": text}) == {}


FOREST = '''
    import warnings


    class BaseDecisionTree:
        """A tree.

        criterion : {"squared_error", "mse"}, default="squared_error"

            .. deprecated:: 1.0
                Criterion "mse" was deprecated in v1.0 and will be removed in
                version 1.2. Use `criterion="squared_error"` which is equivalent.
        """


    class DecisionTreeRegressor(BaseDecisionTree):
        def fit(self, X, y):
            if self.loss == "absolute_loss":
                warnings.warn("The loss 'absolute_loss' was deprecated in v1.0 and will be removed in version 1.2. "
                              "Use `loss='absolute_error'` which is equivalent.", FutureWarning)


    class DecisionTreeClassifier(BaseDecisionTree):
        pass
'''


def test_a_value_the_old_version_says_is_equivalent_is_kept_where_todays_class_refuses_the_old_one(tables, tmp_path):
    write(tmp_path, "sklearn/tree/_classes.py", FOREST)
    said = tables.source("sklearn", str(tmp_path))["sklearn equivalent values"]
    # the docstring's note and a method's warning; a base class's note speaks for its subclasses
    assert said["sklearn.tree._classes.DecisionTreeRegressor"] == {"criterion": {"mse": "squared_error"},
                                                                   "loss": {"absolute_loss": "absolute_error"}}
    assert said["sklearn.tree._classes.DecisionTreeClassifier"] == {"criterion": {"mse": "squared_error"}}
    pytest.importorskip("sklearn")
    # today's regressor takes 'squared_error' and refuses 'mse'; the classifier's criterion never took either, and
    # neither has a `loss`: only the one entry is kept
    assert tables.equivalent_values(said) == {("DecisionTreeRegressor", "criterion", "mse"): "squared_error"}


VECTORIZER = '''
    from ..utils import deprecated


    class DictVectorizer:
        @deprecated(
            "get_feature_names is deprecated in 1.0 and will be removed "
            "in 1.2. Please use get_feature_names_out instead."
        )
        def get_feature_names(self):
            """Return a list of feature names.

            Returns
            -------
            feature_names_ : list of length (n_features,)
               List containing the feature names.
            """
            return self.feature_names_

        @deprecated("Attribute `n_features_` was deprecated in version 1.0. Use `n_features_in_` instead.")
        @property
        def n_features_(self):
            return self.n_features_in_
'''

ENCODER = '''
    from ..utils import deprecated


    class OneHotEncoder:
        @deprecated("get_feature_names is deprecated in 1.0 and will be removed in 1.2. Please use "
                    "get_feature_names_out instead.")
        def get_feature_names(self, input_features=None):
            """Return feature names for output features.

            Returns
            -------
            output_feature_names : ndarray of shape (n_output_features,)
                Array of feature names.
            """
'''


def test_a_method_scikit_learn_said_to_replace_is_wrapped_in_a_list_where_it_returned_one(tables, tmp_path):
    """scikit-learn 1.0's `@deprecated("... Please use get_feature_names_out instead.")` on a method, with the
    type its docstring says it returns; a property's deprecation is an attribute's, not a method's: left out."""
    write(tmp_path, "sklearn/feature_extraction/_dict_vectorizer.py", VECTORIZER)
    write(tmp_path, "sklearn/preprocessing/_encoders.py", ENCODER)
    said = tables.source("sklearn", str(tmp_path))["sklearn method alternatives"]
    assert said == {
        "sklearn.feature_extraction._dict_vectorizer.DictVectorizer": {
            "get_feature_names": ["get_feature_names_out", [], "list of length (n_features,)"]},
        "sklearn.preprocessing._encoders.OneHotEncoder": {"get_feature_names": [
            "get_feature_names_out", ["input_features"], "ndarray of shape (n_output_features,)"]}}
    pytest.importorskip("sklearn")
    table = tables.sklearn_methods_renamed(said)
    assert table == {("DictVectorizer", "get_feature_names"): ("get_feature_names_out", "list"),
                     ("OneHotEncoder", "get_feature_names"): ("get_feature_names_out", "")}
    # a method still there today, or an alternative that is not: no entry
    assert tables.sklearn_methods_renamed({"sklearn.feature_extraction._dict_vectorizer.DictVectorizer": {
        "fit": ["fit_transform", ["X", "y"], "self"], "get_feature_names": ["gone_now", [], "list"]}}) == {}


LOGISTIC = '''
    import warnings


    def _check_solver(solver, penalty, dual):
        if solver == 'warn':
            solver = 'liblinear'
            warnings.warn("Default solver will be changed to 'lbfgs' in 0.22. "
                          "Specify a solver to silence this warning.", FutureWarning)
        return solver


    class LogisticRegression:
        """Logistic Regression.

        Parameters
        ----------
        penalty : str, 'l1' or 'l2', default: 'l2'
            Used to specify the norm.

        solver : str, {'newton-cg', 'lbfgs', 'liblinear', 'sag', 'saga'}, \\
                 default: 'liblinear'.
            Algorithm to use in the optimization problem.

        Attributes
        ----------
        coef_ : array
        """

        def __init__(self, penalty='l2', C=1.0, solver='warn', max_iter=100):
            self.solver = solver
'''

SVM_BASE = '''
    import warnings


    class BaseLibSVM:
        def fit(self, X, y):
            if self.gamma in ('scale', 'auto_deprecated'):
                if self.gamma == 'auto_deprecated':
                    warnings.warn("The default value of gamma will change from 'auto' to 'scale' in version 0.22.",
                                  FutureWarning)
'''

SVM_CLASSES = '''
    from .base import BaseLibSVM


    class SVC(BaseLibSVM):
        """C-Support Vector Classification.

        Parameters
        ----------
        gamma : float, optional (default='auto')
            Kernel coefficient. 'auto_deprecated', a deprecated version of 'auto', is the default.
        """

        def __init__(self, C=1.0, kernel='rbf', degree=3, gamma='auto_deprecated'):
            self.gamma = gamma


    class RandomForestClassifier:
        """A forest whose sentinel the code never warns about: not read as its docstring's default.

        Parameters
        ----------
        n_estimators : integer, optional (default=10)
        """

        def __init__(self, n_estimators='warn'):
            self.n_estimators = n_estimators
'''


def test_a_default_a_sentinel_stood_for_is_read_where_the_old_code_warned_about_it(tables, tmp_path):
    """scikit-learn 0.20's `solver='warn'`: the old code warns under `if solver == 'warn'` (in a function of the
    module, or another module's base class), so the default it ran with is the one its docstring names."""
    write(tmp_path, "sklearn/linear_model/logistic.py", LOGISTIC)
    write(tmp_path, "sklearn/svm/base.py", SVM_BASE)
    write(tmp_path, "sklearn/svm/classes.py", SVM_CLASSES)
    said = tables.source("sklearn", str(tmp_path))
    ran = said["sklearn defaults"]
    assert ran["sklearn.linear_model.logistic.LogisticRegression"] == {
        "penalty": "l2", "C": 1.0, "solver": "liblinear", "max_iter": 100}
    assert ran["sklearn.svm.classes.SVC"]["gamma"] == "auto"
    assert ran["sklearn.svm.classes.RandomForestClassifier"] == {"n_estimators": "warn"}  # its signature's, as written
    pytest.importorskip("sklearn")
    # today's docstrings say the solver, gamma and n_estimators changed; the forest's 'warn' is not the 10 they name
    assert tables.changed_defaults([said]) == {("LogisticRegression", "solver"): ("liblinear", "lbfgs"),
                                               ("SVC", "gamma"): ("auto", "scale")}


def test_a_default_change_is_read_from_the_note_under_its_parameter(tables):
    doc = ("Parameters\n----------\nsolver : str, default='lbfgs'\n    Algorithm.\n\n    .. versionchanged:: 0.22\n"
           "       The default solver changed from 'liblinear' to 'lbfgs' in 0.22.\n"
           "cv : int, default=None\n    .. versionchanged:: 0.22\n"
           "        ``cv`` default value if None changed from 3-fold to 5-fold.\n"
           "tol : float, default=1e-4\n    .. versionchanged:: 1.2\n"
           "       Default value changed from 1e-3 to 1e-4 for consistency with other linear models.\n"
           "copy : bool\n    .. versionchanged:: 1.10\n       The default value for `copy` will change from "
           "`False` to `True` in version 1.10.\n"
           "alpha : float\n    .. versionchanged:: 1.0\n       The default of `beta` changed from 1 to 2.\n\n"
           "Attributes\n----------\nn_iter_ : int\n    .. versionchanged:: 0.2\n       Default changed from 1 to 2.\n")
    assert tables.default_notes(doc) == {"solver": ("liblinear", "lbfgs"), "tol": (1e-3, 1e-4)}


CATEGORICAL = '''
    import warnings


    def pointish(*args, **kwargs):
        """Deprecated; please use `catplot` instead."""
        warnings.warn("The `pointish` function has been renamed to `catplot`.")
        if "size" in kwargs:
            kwargs["height"] = kwargs.pop("size")
            warnings.warn("The `size` parameter has been renamed to `height`; please update your code.")
        kwargs.setdefault("kind", "point")
        return catplot(*args, **kwargs)


    def lvish(*args, **kwargs):
        warnings.warn("The `lvish` function has been renamed to `boxenplot`.")
        return boxenplot(*args, **kwargs)


    def quiet(*args, **kwargs):
        return catplot(*args, **kwargs)


    def catplot(x=None, y=None, data=None, kind="strip", height=5):
        if kind == "old":
            warnings.warn("kind='old' is deprecated")
        return kind
'''


def test_a_function_kept_only_to_warn_and_hand_its_arguments_on_is_read_with_what_it_changed(tables, tmp_path):
    """seaborn 0.9's `factorplot` warned, renamed `size` to `height`, set `kind='point'` and called `catplot`: read
    from the source as that; a function that warns nothing, or does more than hand its arguments on, is not one.
    Kept where today's package lacks the old name and has the one it called (made-up names are not seaborn's)."""
    write(tmp_path, "seaborn/categorical.py", CATEGORICAL)
    said = tables.source("seaborn", str(tmp_path))["forwards"]
    assert said == {"seaborn.categorical.pointish": ["catplot", {"size": "height"}, {"kind": "'point'"}],
                    "seaborn.categorical.lvish": ["boxenplot", {}, {}]}
    pytest.importorskip("seaborn")
    assert tables.forwarded({**said, "seaborn.categorical.gone": ["no_such_plot", {}, {}],
                             "seaborn.categorical.boxplot": ["catplot", {}, {}]}) == {
        ("seaborn", "pointish"): ("catplot", {"size": "height"}, {"kind": "'point'"}),
        ("seaborn", "lvish"): ("boxenplot", {}, {})}


# ---------------------------------------------------------------- the tables as the package stores them

STORED = TOOL.parent.parent / "jupyter_fixloop" / "rules" / "changed.json"


def test_the_stored_tables_are_what_the_tool_writes_and_say_so(tables):
    """rules/changed.json is the tool's output as is: written again from what it holds, it is the same
    text (an entry edited by hand in another shape, or out of order, fails); it says what generated it."""
    from jupyter_fixloop.rules import changed

    stored = json.loads(STORED.read_text(encoding="utf-8"))
    assert stored["generated"] == tables.GENERATED and "do not edit" in stored["generated"]
    assert "against today's (pandas " in stored["from"]
    assert tables.tables_json(changed.tables(), stored["from"]) == STORED.read_text(encoding="utf-8")


def test_the_tool_writes_each_table_sorted_one_entry_a_line_tuples_as_arrays(tables):
    written = tables.tables_json({"B": {("b", "x"): ("y", None), ("a", "x"): (1.5, 2)}, "A": {}}, "old 1.0")
    assert written.splitlines()[4:] == ['    "B": [', '      [["a", "x"], [1.5, 2]],',
                                        '      [["b", "x"], ["y", null]]', "    ],", '    "A": []', "  }", "}"]
    assert json.loads(written)["from"] == "old 1.0"


def test_the_tables_are_read_on_first_use_once_as_tuples():
    spec = importlib.util.spec_from_file_location("changed_copy", STORED.with_suffix(".py"))
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    assert copy.tables.cache_info().currsize == 0  # importing reads nothing
    assert copy.CHANGED_DEFAULTS[("LogisticRegression", "solver")] == ("liblinear", "lbfgs")
    assert copy.SKLEARN_NAMES_MOVED[("sklearn.cross_validation", "train_test_split")] == (
        "sklearn.model_selection", "train_test_split")
    assert copy.tables.cache_info().currsize == 1 and copy.NUMPY_REMOVED is copy.NUMPY_REMOVED
    with pytest.raises(AttributeError, match="NO_SUCH_TABLE"):
        copy.NO_SUCH_TABLE  # noqa: B018


def test_seaborns_reordered_signatures_are_named_from_the_first_that_differs_keyed_by_module(tables):
    """seaborn 0.12 put `data` first and the variables behind it keyword-only: an old order (made up here in
    0.9's shape) is named from the first argument that differs, as far as each name is a parameter today; its
    functions keyed by their module, where another library's `boxplot` is not theirs; a reordering elsewhere
    (pandas'), where `axis` is keyword-only now, is left out."""
    pytest.importorskip("seaborn")
    found = tables.compare({"seaborn.boxplot": ["x", "y", "hue", "data", "order", "gone_today"],
                            "seaborn.kdeplot": ["data", "data2", "shade"],
                            "seaborn.heatmap": ["data", "vmin", "vmax"],
                            "pandas.concat": ["axis", "objs"]})
    assert found == {"seaborn.boxplot": ("x", "y", "hue", "data", "order"), "seaborn.heatmap": ("vmin", "vmax")}
    assert tables.STILL_POSITIONAL["seaborn.boxplot"] == 0 and tables.STILL_POSITIONAL["seaborn.heatmap"] == 1


def test_compare_onto_stored_tables_keeps_their_entries_and_adds_the_new(tables):
    stored = {"from": "old 1.0", "tables": {"A": [["k", ["a", "b"]]], "B": []}}
    out = tables.onto(stored, {"A": {"k": ("z",), "n": ("c",)}, "C": {"m": 1}})
    assert out == {"A": {"k": ("a", "b"), "n": ("c",)}, "B": {}, "C": {"m": 1}}

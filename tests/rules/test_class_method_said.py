"""`said_class_method`: a function its library removed, called as the class method its words name instead, the one
that takes the arguments the cell passes (scikit-learn 1.0's notes: "`metrics.plot_confusion_matrix` is deprecated in
favor of these two class methods", the two `ConfusionMatrixDisplay` exposes; 1.0's decorator of `plot_roc_curve`:
"Use one of the class methods: `RocCurveDisplay.from_predictions` or `RocCurveDisplay.from_estimator`"), each on the
real error of today's scikit-learn in a real run; and what it leaves."""

import pytest
import rewriting

from jupyter_fixloop.model import knowledge
from jupyter_fixloop.rules import repairs as repairs

pytest.importorskip("sklearn")

MODULES = {"np": "numpy"}
SETUP = ("import matplotlib\nmatplotlib.use('Agg')\nimport numpy as np\n"
         "from sklearn.linear_model import LogisticRegression\n"
         "X = np.arange(40.).reshape(20, 2) % 7\ny = (X[:, 0] > 3).astype(int)\n"
         "clf = LogisticRegression().fit(X, y)\n")


@pytest.fixture
def ns():
    return {}


# (cell, the rewriter, the repaired cell, a check on its run)
CASES = {
    "an_estimator_plotted_as_the_class_method_that_takes_one": (
        "from sklearn.metrics import accuracy_score, plot_confusion_matrix\n"
        "d = plot_confusion_matrix(clf, X, y, values_format='d')\n", "said_class_method",
        "from sklearn.metrics import accuracy_score, ConfusionMatrixDisplay\n"
        "d = ConfusionMatrixDisplay.from_estimator(clf, X, y, values_format='d')\n",
        "type(d).__name__ == 'ConfusionMatrixDisplay' and d.confusion_matrix.sum() == 20"),
    "a_roc_curve_through_its_module": (  # plot_roc_curve: named in no release notes, in its decorator's words
        "import sklearn.metrics as metrics\nr = metrics.plot_roc_curve(clf, X, y)\n", "said_class_method",
        "import sklearn.metrics as metrics\nr = metrics.RocCurveDisplay.from_estimator(clf, X, y)\n",
        "type(r).__name__ == 'RocCurveDisplay' and 0 <= r.roc_auc <= 1"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_removed_function_is_the_class_method_its_words_name(name, ns):
    rewriting.assert_repaired(ns, SETUP, CASES[name], MODULES)


def test_the_entries_name_the_class_methods_the_words_introduced():
    said = {c.names[-1].rpartition(".")[2]: c.replacement for c in knowledge.changes()
            if c.library == "scikit-learn" and c.replacement_is == "code" and c.names[-1].endswith(
                ("plot_confusion_matrix", "plot_roc_curve"))}
    assert "ConfusionMatrixDisplay.from_estimator" in said["plot_confusion_matrix"]
    assert "RocCurveDisplay.from_estimator" in said["plot_roc_curve"]


@pytest.mark.parametrize("cell", [
    # a keyword neither class method takes: no replacement the words name fits the call
    "from sklearn.metrics import plot_confusion_matrix\nd = plot_confusion_matrix(clf, X, y, normalise=True)\n",
    # `**kwargs`: what they hold decides
    "from sklearn.metrics import plot_confusion_matrix\nkw = {}\nd = plot_confusion_matrix(clf, X, y, **kw)\n",
    # imported, never called here: which class method, no call says
    "from sklearn.metrics import plot_roc_curve\n",
])
def test_a_call_that_does_not_say_which_class_method_is_left(cell, ns):
    first = rewriting.run(ns, cell, SETUP)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert getattr(repair, "__name__", "") != "said_class_method", fixed

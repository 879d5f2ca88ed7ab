"""A saved scikit-learn estimator repr from before 0.23 (every parameter) as a check of a fix (issue 40):
compared parameter by parameter with today's repr printed with print_changed_only=False, a rename the
repair made and parameters added since do not fail it, a parameter the code sets to another value does,
and what cannot be decided is no evidence either way. The saved reprs are written here in scikit-learn
0.18's style for cells of our own; today's come from the scikit-learn installed."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_fixloop.batch import cli as batch_cli
from jupyter_fixloop.batch.run import SAVED_WORDS
from jupyter_fixloop.receipt.estimators import parse, passed_keywords
from jupyter_fixloop.receipt.saved import saved_check

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import SGDClassifier  # noqa: E402


def saved_repr(loss: str = "hinge", n_iter: int = 20) -> str:
    """SGDClassifier as scikit-learn 0.18 printed it: every parameter, `n_iter` (max_iter since 0.19)."""
    return (f"SGDClassifier(alpha=0.0001, average=False, class_weight=None, epsilon=0.1,\n"
            f"       eta0=0.0, fit_intercept=True, l1_ratio=0.15,\n"
            f"       learning_rate='optimal', loss='{loss}', n_iter={n_iter}, n_jobs=1,\n"
            f"       penalty='l2', power_t=0.5, random_state=1, shuffle=True, verbose=0,\n"
            f"       warm_start=False)\n")


ORIGINAL = "clf = SGDClassifier(loss='hinge', n_iter=20, random_state=1)\nclf"
REPAIRED = "clf = SGDClassifier(loss='hinge', max_iter=20, tol=None, random_state=1)\nclf"


def shown(**params) -> tuple[str, str]:
    """(the repr today's scikit-learn shows, the one it prints with print_changed_only=False)."""
    clf = SGDClassifier(**params)
    with sklearn.config_context(print_changed_only=True):
        now = repr(clf)
    with sklearn.config_context(print_changed_only=False):
        return now, clf.__repr__(N_CHAR_MAX=20_000)


def test_a_repaired_estimator_matches_its_old_full_repr_and_the_words_say_what_was_compared():
    now, full = shown(loss="hinge", max_iter=20, tol=None, random_state=1)
    assert saved_check("", now, saved_repr())[0] is None  # without the full repr: undecided, not a rejection

    passed, detail, diff = saved_check("", now, saved_repr(), full, (ORIGINAL, REPAIRED))

    assert passed is True and diff == []
    assert "print_changed_only=False" in detail
    assert "n_iter saved = max_iter now (20)" in detail  # the rename the repair made
    assert "n_jobs (1 saved, None now)" in detail  # scikit-learn's default changed; no code passes n_jobs
    assert "added since): tol" in detail


def test_a_parameter_the_code_sets_to_another_value_than_saved_rejects_the_fix():
    """`loss='hinge'` is today's default, so the short repr hides it: the code says it was set."""
    now, full = shown(loss="hinge", max_iter=20, tol=None, random_state=1)

    passed, detail, diff = saved_check("", now, saved_repr(loss="log"), full, (ORIGINAL, REPAIRED))

    assert passed is False
    assert "differ: loss ('log' saved, 'hinge' now)" in detail
    assert any(line.startswith("-") for line in diff)
    # a fix that drops the keyword instead: the user's cell still passes it, so it is not a default that changed
    dropped = "clf = SGDClassifier(max_iter=20, tol=None, random_state=1)\nclf"
    assert saved_check("", now, saved_repr(loss="log"), full, ("clf = SGDClassifier(loss='log', n_iter=20)",
                                                                dropped))[0] is False


def test_what_cannot_be_decided_is_no_evidence_either_way():
    now, full = shown(loss="hinge", max_iter=20, tol=None, random_state=1)
    # a saved parameter gone with nothing in its place (n_iter=30, the run sets max_iter=20)
    passed, detail, _ = saved_check("", now, saved_repr(n_iter=30), full, (ORIGINAL, REPAIRED))
    assert passed is None and "not comparable" in detail and "n_iter" in detail
    # no full repr (a notebook's saved output read as text): the defaults cannot be seen
    assert saved_check(now + "\n", None, saved_repr())[0] is None
    # a default that differs, and nothing says whether a code passed it
    assert saved_check("", now, saved_repr(), full)[0] is None


def test_only_an_estimator_repr_of_the_same_class_is_compared_so():
    now, full = shown(max_iter=20)
    assert saved_check("", now, saved_repr().replace("SGDClassifier(", "Perceptron("), full)[0] is False
    assert saved_check("", "f(a=1) + g(b=2)", "f(a=1, b=2) + g(b=2)")[0] is False
    assert parse("SGDClassifier(a=[1, (2, 3)], b='x,y')").params == (("a", "[1, (2, 3)]"), ("b", "'x,y'"))
    assert parse("print(x)") is None
    assert passed_keywords(["m = SGDClassifier(**kw)"], "SGDClassifier") is None
    assert passed_keywords(["m = linear_model.SGDClassifier(alpha=1)"], "SGDClassifier") == {"alpha"}


def _notebook(path, saved: str) -> str:
    setup = ("import numpy as np\nfrom sklearn.linear_model import SGDClassifier\n"
             "X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.], [2., 2.], [2., 0.]])\n"
             "y = np.array([0, 1, 1, 0, 1, 0])")
    cells = [new_code_cell(setup, execution_count=1),
             new_code_cell("clf = SGDClassifier(loss='hinge', n_iter=20, random_state=1)\nclf.fit(X, y)",
                           execution_count=2,
                           outputs=[new_output("execute_result", data={"text/plain": saved}, execution_count=2)])]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return str(path)


def test_batch_mode_verifies_a_renamed_keyword_by_the_old_saved_repr_and_rejects_a_different_one(tmp_path, capsys):
    """The built-in engine renames `n_iter` (scikit-learn 0.19's deprecation); the sandbox's run reports the
    full repr, and the saved one checks the fix. A saved repr whose `loss` the cell does not have rejects it."""
    right = _notebook(tmp_path / "right.ipynb", saved_repr())
    assert batch_cli.main([right, "-o", str(tmp_path / "right.out.ipynb")]) == 0
    printed = capsys.readouterr().out
    assert f"fixed: {SAVED_WORDS} (SGDClassifier's parameters compared one by one" in printed, printed
    assert "fixed: fixed" not in printed and "fixed (fixed" not in printed  # the status said once
    assert "max_iter=20" in nbformat.read(str(tmp_path / "right.out.ipynb"), as_version=4).cells[1].source

    wrong = _notebook(tmp_path / "wrong.ipynb", saved_repr(loss="log"))
    assert batch_cli.main([wrong, "-o", str(tmp_path / "wrong.out.ipynb")]) != 0
    assert SAVED_WORDS not in capsys.readouterr().out
    cell = nbformat.read(str(tmp_path / "wrong.out.ipynb"), as_version=4).cells[1]
    assert "n_iter=20" in cell.source  # left as written
    receipt = cell.metadata["fixloop"]["rounds"][0]["receipt"]["text"]
    assert "FAILED: output matches the one saved" in receipt and "differ: loss ('log' saved" in receipt, receipt


# printed by scikit-learn 0.19.2 itself (a side venv) for `Perceptron(n_iter=40, eta0=0.1, random_state=0)`: the
# deprecated n_iter beside the max_iter that replaced it, at None
SAVED_0_19 = """Perceptron(alpha=0.0001, class_weight=None, eta0=0.1, fit_intercept=True,
      max_iter=None, n_iter=40, n_jobs=1, penalty=None, random_state=0,
      shuffle=True, tol=None, verbose=0, warm_start=False)"""


def test_a_repr_that_shows_the_old_and_the_new_name_takes_the_rename_not_the_old_default():
    from sklearn.linear_model import Perceptron

    ppn = Perceptron(max_iter=40, tol=None, eta0=0.1, random_state=0)
    with sklearn.config_context(print_changed_only=True):
        now = repr(ppn)
    with sklearn.config_context(print_changed_only=False):
        full = repr(ppn)
    codes = ("ppn = Perceptron(n_iter=40, eta0=0.1, random_state=0)\nppn",
             "ppn = Perceptron(max_iter=40, tol=None, eta0=0.1, random_state=0)\nppn")

    passed, detail, _ = saved_check("", now, SAVED_0_19, full, codes)

    assert passed is True, detail
    assert "n_iter saved = max_iter now (40)" in detail and "differ" not in detail

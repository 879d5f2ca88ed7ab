"""Packages and functions whose libraries said where they went (IPython 4.0's shims, matplotlib 3.6's colormap
functions) and names they removed naming nothing instead, repaired or refused by the generic rewriters of
rules/said.py; each on the real error of today's libraries in a real run, on cells written for these tests; and
the harvester reading those words from an old release's code."""

import pytest
import rewriting

from jupyter_fixloop.rules import repairs as repairs

MODULES = {"np": "numpy", "plt": "matplotlib.pyplot", "matplotlib": "matplotlib"}
SETUP = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nimport numpy as np\n"


@pytest.fixture
def ns():
    return {}


def run(ns: dict, cell: str):
    return rewriting.run(ns, cell, SETUP)


# (cell, the rewriter, the repaired cell, a check on its run)
CASES = {
    # matplotlib 3.6: "The `matplotlib.pyplot.get_cmap` function will stay available for backward compatibility"
    "a_function_its_library_kept_in_another_module": (
        "cmap = plt.cm.get_cmap('RdYlBu', 3)\n", "said_kept_elsewhere", "cmap = plt.get_cmap('RdYlBu', 3)\n",
        "cmap.N == 3 and cmap.name == 'RdYlBu'"),
    # the same, called with the name alone (the one-argument call drift.moved_call once rewrote by hand)
    "a_function_of_one_argument_its_library_kept_in_another_module": (
        "greys = plt.cm.get_cmap('Greys')\nmid = greys(0.5)\n", "said_kept_elsewhere",
        "greys = plt.get_cmap('Greys')\nmid = greys(0.5)\n", "greys.name == 'Greys' and len(mid) == 4"),
    # IPython 5.10's IPython/html.py: "`IPython.html.widgets` has moved to `ipywidgets`"
    "a_package_its_shim_said_moved": (
        "from IPython.html.widgets import interact, IntSlider\n", "said_package",
        "from ipywidgets import interact, IntSlider\n", "callable(interact) and IntSlider(3).value == 3"),
    # pandas 0.20: "The ``pandas.tools.plotting`` module has been deprecated, moved to ``pandas.plotting``" (once a
    # hand table's entry, tables.MOVED_MODULES)
    "a_module_its_notes_said_moved": (
        "from pandas.tools.plotting import scatter_matrix\n", "said_package",
        "from pandas.plotting import scatter_matrix\n", "callable(scatter_matrix)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rewriter_repairs_as_the_library_said(name, ns):
    cell, _, repaired, _ = CASES[name]
    if "ipywidgets" in repaired:
        pytest.importorskip("ipywidgets")
    before = {"np": "numpy"} if cell.startswith("import matplotlib.pyplot") else MODULES  # the cell imports it
    rewriting.assert_repaired(ns, SETUP, CASES[name], before)


def test_a_package_moved_whole_without_a_name_imported_is_left(ns):
    """`ipywidgets` has no `NoSuchThing`: the shim's move does not say where that went."""
    cell = "from IPython.html.widgets import NoSuchThing\n"
    first = run(ns, cell)
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != "said_package", fixed


@pytest.fixture(scope="module")
def harvest():
    return rewriting.harvester()


# IPython 5.10.0's IPython/html.py, as released (its header left out)
HTML_SHIM = '''
import sys
from warnings import warn

from IPython.utils.shimmodule import ShimModule, ShimWarning

warn("The `IPython.html` package has been deprecated since IPython 4.0. "
     "You should import from `notebook` instead. "
     "`IPython.html.widgets` has moved to `ipywidgets`.", ShimWarning)

_widgets = sys.modules['IPython.html.widgets'] = ShimModule(
    src='IPython.html.widgets', mirror='ipywidgets')

_html = ShimModule(
    src='IPython.html', mirror='notebook')
'''


def test_the_packages_an_old_releases_shims_moved_are_modules_with_their_mirror(harvest, tmp_path):
    path = tmp_path / "IPython" / "code" / "5.10.0" / "IPython" / "html.py"
    path.parent.mkdir(parents=True)
    path.write_text(HTML_SHIM)
    found = [e for e in harvest.harvest(tmp_path, "IPython") if e["source"].startswith("IPython==5.10.0")]
    assert [(e["names"], e["kind"], e["replacement"], e["version"]) for e in found] == [
        (["IPython.html.widgets"], "module", "ipywidgets", "4.0"), (["IPython.html"], "module", "notebook", "4.0")]
    assert found[0]["words"].endswith("`IPython.html.widgets` has moved to `ipywidgets`.")


def test_a_name_removed_naming_no_replacement_is_said_so_not_guessed(ns):
    """scikit-learn 1.0 deprecated `load_boston` naming nothing to use instead (1.2 removed it): no repair, and
    the doubt says so in scikit-learn's words."""
    pytest.importorskip("sklearn")
    cell = "from sklearn.datasets import load_boston\nboston = load_boston()\n"
    first = run(ns, cell)
    assert not first.ok
    repair, fixed, doubt = repairs.propose(cell, first, MODULES)
    assert repair is None, fixed
    assert doubt.startswith("scikit-learn 1.0.0 deprecated `load_boston` and named no replacement: "
                            "\"Deprecates `datasets.load_boston` in 1.0 and it will be removed in 1.2."), doubt

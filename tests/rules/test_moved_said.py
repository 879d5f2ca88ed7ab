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
    # IPython 4.0.0's IPython/nbconvert.py: "The `IPython.nbconvert` package has been deprecated. You should import
    # from nbconvert instead."; the package imported bare, its chain in the cell
    "a_package_imported_bare_and_read_by_its_chain": (
        "import IPython.nbconvert\nexporter = IPython.nbconvert.HTMLExporter\n", "said_package",
        "import nbconvert\nexporter = nbconvert.HTMLExporter\n", "exporter.__name__ == 'HTMLExporter'"),
    # the same shim's package, a name imported from IPython ("cannot import name 'nbformat' from 'IPython'"), beside
    # a name IPython still has
    "a_moved_package_imported_by_name_from_its_parent": (
        "from IPython import nbformat as nbf, display\nnb = nbf.v4.new_notebook()\n", "said_package",
        "from IPython import display\nimport nbformat as nbf\nnb = nbf.v4.new_notebook()\n",
        "nb.nbformat == 4 and callable(display.display)"),
    # IPython 4.0.0's IPython/html.py: `IPython.html.widgets` -> `ipywidgets`, a module of `IPython.html` imported by
    # name (`IPython.html` itself went to `notebook`)
    "a_moved_subpackage_imported_from_its_moved_parent": (
        "from IPython.html import widgets\nslider = widgets.IntSlider(3)\n", "said_package",
        "import ipywidgets as widgets\nslider = widgets.IntSlider(3)\n", "slider.value == 3"),
    # the same package read by its chain from IPython ("module 'IPython' has no attribute 'config'"): IPython 4.0.0's
    # IPython/config.py, "You should import from traitlets.config instead."
    "a_moved_package_read_by_its_chain_from_its_parent": (
        "import IPython\ncfg = IPython.config.Config()\n", "said_package",
        "import traitlets.config\nimport IPython\ncfg = traitlets.config.Config()\n", "type(cfg).__name__ == 'Config'"),
    # IPython 4.0.0's IPython/utils/path.py: "get_ipython_package_dir has moved to the IPython.paths module" (a
    # warning of no category: read as a move of the function, its name kept)
    "a_function_its_warning_said_moved": (
        "from IPython.utils.path import get_ipython_package_dir\nhere = get_ipython_package_dir()\n", "said_package",
        "from IPython.paths import get_ipython_package_dir\nhere = get_ipython_package_dir()\n",
        "here.endswith('IPython')"),
    "a_module_its_notes_said_moved": (
        "from pandas.tools.plotting import scatter_matrix\n", "said_package",
        "from pandas.plotting import scatter_matrix\n", "callable(scatter_matrix)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rewriter_repairs_as_the_library_said(name, ns):
    cell, _, repaired, _ = CASES[name]
    for package in ("ipywidgets", "nbconvert", "nbformat"):
        if package in repaired:
            pytest.importorskip(package)
    before = {"np": "numpy"} if cell.startswith("import matplotlib.pyplot") else MODULES  # the cell imports it
    rewriting.assert_repaired(ns, SETUP, CASES[name], before)


def test_a_package_moved_whole_without_a_name_imported_is_left(ns):
    """`ipywidgets` has no `NoSuchThing`: the shim's move does not say where that went."""
    cell = "from IPython.html.widgets import NoSuchThing\n"
    first = run(ns, cell)
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != "said_package", fixed


def test_a_moved_package_today_without_the_name_imported_is_said_not_guessed(ns):
    """nbformat has no `current` today: the move is said in IPython's words, and where `current` went is not
    guessed."""
    pytest.importorskip("nbformat")
    cell = "from IPython.nbformat import current\n"
    first = run(ns, cell)
    assert (first.ename, first.evalue) == ("ModuleNotFoundError", "No module named 'IPython.nbformat'"), first.evalue
    repair, fixed, doubt = repairs.propose(cell, first, MODULES)
    assert repair is None, fixed
    assert doubt.startswith("IPython 4.0.0 moved `IPython.nbformat` to `nbformat` (\"The `IPython.nbformat` package "
                            "has been deprecated since IPython 4.0. You should import from nbformat instead.\"), "
                            "and today's `nbformat` has no `current`"), doubt


def test_a_new_home_not_installed_is_proposed_and_its_run_names_the_package_to_install(ns):
    """`IPython.parallel` went to ipyparallel (IPython 4.0's shim), not installed here: the move is proposed (the
    kernel's run decides, not this process), and its run's error is said with the package to install, never a
    guess at another module."""
    try:
        import ipyparallel  # noqa: F401
        pytest.skip("ipyparallel is installed here")
    except ImportError:
        pass
    cell = "from IPython import parallel\nrc = parallel.Client\n"
    first = run(ns, cell)
    assert first.ename == "ImportError", first.evalue
    assert first.evalue.startswith("cannot import name 'parallel' from 'IPython'"), first.evalue
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair.__name__ == "said_package" and fixed == "import ipyparallel as parallel\nrc = parallel.Client\n"
    again = run(ns, fixed)
    assert (again.ename, again.evalue) == ("ModuleNotFoundError", "No module named 'ipyparallel'"), again.evalue
    repair, refixed, doubt = repairs.propose(fixed, again, MODULES)
    assert repair is None, refixed
    assert doubt.startswith("`ipyparallel` is not installed in this environment: `pip install ipyparallel`"), doubt
    assert doubt.endswith("it is where IPython 4.0.0 moved `IPython.parallel`: \"The `IPython.parallel` package has "
                          "been deprecated since IPython 4.0. You should import from ipyparallel instead.\""), doubt


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


# IPython 4.0.0's IPython/utils/traitlets.py whole, and a function of its IPython/utils/path.py
TRAITLETS_SHIM = '''from __future__ import absolute_import

from warnings import warn

warn("IPython.utils.traitlets has moved to a top-level traitlets package.")

from traitlets import *
'''
PATH_MOVED = '''
def get_ipython_package_dir():
    warn("get_ipython_package_dir has moved to the IPython.paths module")
    from IPython.paths import get_ipython_package_dir
    return get_ipython_package_dir()
'''


def test_the_modules_and_functions_an_old_releases_warnings_say_moved(harvest, tmp_path):
    """A module's warning at its top and a function's in its body, of no category, saying where they moved."""
    utils = tmp_path / "IPython" / "code" / "4.0.0" / "IPython" / "utils"
    utils.mkdir(parents=True)
    (utils / "traitlets.py").write_text(TRAITLETS_SHIM)
    (utils / "path.py").write_text(PATH_MOVED)
    found = [e for e in harvest.harvest(tmp_path, "IPython") if e["source"].startswith("IPython==4.0.0")]
    assert sorted((e["names"], e["kind"], e["replacement"], e["version"]) for e in found) == [
        (["IPython.utils.path.get_ipython_package_dir"], "function", "IPython.paths.get_ipython_package_dir", "4.0.0"),
        (["IPython.utils.traitlets"], "module", "traitlets", "4.0.0")]


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

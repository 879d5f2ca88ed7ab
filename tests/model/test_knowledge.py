"""The knowledge base of library changes: tools/harvest_changes.py on real release-note text (pandas' whatsnew,
numpy's expired deprecations, matplotlib's removals, scikit-learn's changelog), the data file it shipped, and
the generic rewriters it drives, each on the real library's error in a real run."""

import textwrap

import pytest
import rewriting

from jupyter_fixloop.kernel import runner as runner
from jupyter_fixloop.loop.verdict import judge_result
from jupyter_fixloop.model import knowledge
from jupyter_fixloop.rules import repairs as repairs


@pytest.fixture(scope="module")
def harvest():
    return rewriting.harvester()


# pandas doc/source/whatsnew/v2.0.0.rst and v0.20.0.rst, as released (a few entries each)
PANDAS_NOTES = """\
.. _whatsnew_200.prior_deprecations:

Removal of prior version deprecations/changes
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
- Removed deprecated :meth:`Categorical.to_dense`, use ``np.asarray(cat)`` instead (:issue:`32639`)
- Removed deprecated :meth:`Categorical.take_nd` (:issue:`27745`)
- Removed deprecated global option ``use_inf_as_null`` in favor of ``use_inf_as_na`` (:issue:`17126`)
- Removed deprecated :meth:`.Styler.hide_index` and :meth:`.Styler.hide_columns` (:issue:`49397`)
- :meth:`Series.repeat` has renamed the ``reps`` argument to ``repeats`` (:issue:`18601`)
- Removed the previously deprecated keyword "skip_footer" from :func:`read_excel`; use "skipfooter" instead
- The ``freq`` and ``how`` parameters have been removed from the ``rolling``/``expanding``/``ewm`` methods
  of DataFrame and Series (deprecated since v0.18). Instead, resample before calling the methods. (:issue:18601)

.. _whatsnew_200.performance:

Performance improvements
~~~~~~~~~~~~~~~~~~~~~~~~
- Removed nothing here: :meth:`DataFrame.sum` is faster
"""

DEPRECATIONS = """\
Deprecations
~~~~~~~~~~~~

- Deprecated :meth:`.Styler.hide_index` and :meth:`.Styler.hide_columns` in favor of :meth:`.Styler.hide`
  (:issue:`43758`)
- The ``.ix`` indexer is deprecated, in favor of the more strict ``.iloc`` and ``.loc`` indexers.
"""

# numpy doc/source/release/1.25.0-notes.rst
NUMPY_NOTES = """\
Expired deprecations
====================

* ``np.core.machar`` and ``np.finfo.machar`` have been removed.

  (`gh-22638 <https://github.com/numpy/numpy/pull/22638>`__)

* ``+arr`` will now raise an error when the dtype is not
  numeric (and positive is undefined).

  (`gh-22998 <https://github.com/numpy/numpy/pull/22998>`__)

Deprecations
============
"""

# matplotlib doc/api/prev_api_changes/api_changes_3.7.0/removals.rst (a whole file is one section), and an entry
# of api_changes_3.3.0
MATPLOTLIB_REMOVALS = """\
Removals
--------

``epoch2num`` and ``num2epoch`` are removed
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

These methods convert from unix timestamps to matplotlib floats, but are not
used internally to Matplotlib, and should not be needed by end users. To
convert a unix timestamp to datetime, simply use
`datetime.datetime.fromtimestamp`, or to use NumPy `~numpy.datetime64`
``dt = np.datetime64(e*1e6, 'us')``.

``matplotlib.use``
~~~~~~~~~~~~~~~~~~

The first parameter of `matplotlib.use` has been renamed from ``arg`` to ``backend`` (only relevant if
you pass by keyword).
"""

# scikit-learn doc/whats_new/v1.2.rst
SKLEARN_NOTES = """\
- |API| Rename `base_estimator` to `estimator` in :class:`ensemble.BaggingClassifier`.
  :pr:`23819` by :user:`Adrian Trujillo <trujillo9616>`.
- |Fix| Fixed a bug in :class:`ensemble.BaggingClassifier`. :pr:`23820`.
- |API| The `affinity` attribute is now deprecated for :class:`cluster.AgglomerativeClustering` and will be
  renamed to `metric` in v1.4. :pr:`23470` by :user:`Meekail Zain <micky774>`.
"""


def entries_of(harvest, library, text, whole=None):
    found = []
    for section, lines in harvest.sections(text, whole):
        for words in harvest.entries(lines):
            change = harvest.change_of(section, words)
            if change:
                found.append(harvest.entry(library, (2, 0, 0), "test", change, words))
    return found


def test_pandas_removals_are_read_with_their_replacement_or_an_honest_none(harvest):
    found = entries_of(harvest, "pandas", PANDAS_NOTES)
    assert [e["change"] for e in found] == ["removed"] * 7  # the performance section is no removal
    by_name = {e["names"][0]: e for e in found}
    assert by_name["Categorical.to_dense"]["replacement"] == "np.asarray(cat)"
    assert by_name["Categorical.take_nd"]["replacement"] == "none"
    assert by_name["Categorical.take_nd"]["replacement_named"]  # its words name none: an honest none
    assert by_name["use_inf_as_null"]["replacement"] == "use_inf_as_na"
    assert by_name["Series.repeat"]["replacement"] == "repeats"
    assert by_name["read_excel"]["replacement"] == "skipfooter"
    assert by_name["Styler.hide_index"]["names"] == ["Styler.hide_index", "Styler.hide_columns"]
    rolling = by_name["freq"]
    assert (rolling["replacement"], rolling["replacement_is"]) == ("resample before calling the methods", "words")
    assert "(:issue:" not in by_name["Categorical.to_dense"]["words"]


def test_a_deprecation_names_a_list_of_replacements_and_a_removal_links_to_it(harvest):
    found = entries_of(harvest, "pandas", DEPRECATIONS)
    assert [e["replacement"] for e in found] == ["Styler.hide", "iloc or loc"]
    removal = next(e for e in entries_of(harvest, "pandas", PANDAS_NOTES) if e["names"][0] == "Styler.hide_index")
    for item in found:
        item["version"] = "1.4.0"
    harvest.link_deprecations([*found, removal])
    assert (removal["deprecated_in"], removal["deprecation_replacement"]) == ("1.4.0", "Styler.hide")


def test_numpy_expired_deprecations_are_removals(harvest):
    found = entries_of(harvest, "numpy", NUMPY_NOTES)
    assert [e["names"] for e in found] == [["np.core.machar", "np.finfo.machar"], ["+arr"]]
    assert {e["change"] for e in found} == {"removed"}
    assert "gh-22638" not in found[0]["words"]


def test_matplotlib_removal_subsections_and_a_renamed_parameter(harvest):
    found = entries_of(harvest, "matplotlib", MATPLOTLIB_REMOVALS, whole="removed")
    assert found[0]["names"][:2] == ["epoch2num", "num2epoch"]
    assert found[0]["replacement"] == "datetime.datetime.fromtimestamp"
    renamed = next(e for e in found if "matplotlib.use" in e["names"])
    assert renamed["replacement"] == "backend"


def test_scikit_learn_api_entries_are_deprecations_and_others_are_left_out(harvest):
    found = entries_of(harvest, "scikit-learn", SKLEARN_NOTES, whole="api")
    assert [(e["names"][0], e["change"], e["replacement"]) for e in found] == [("affinity", "deprecated", "metric")]


def test_a_scikit_learn_entrys_words_end_where_its_credits_begin(harvest):
    """The words shown for a removal naming no replacement say only what scikit-learn said of it: not "by." or "by
    `Guillaume Lemaitre`_." where the pull request and its authors were."""
    notes = ("- |API| Deprecates `datasets.load_boston` in 1.0 and it will be removed\n  in 1.2. Alternative code "
             "snippets to load similar datasets are provided.\n  :pr:`20729` by `Guillaume Lemaitre`_.\n"
             "- |API| `linear_model.RandomizedLasso` has been deprecated and will be removed in version 0.21.\n"
             "  :issue:`9` and :pr:`10` by :user:`A B <ab>`, :user:`C <c>` and `D E`_.\n")
    found = entries_of(harvest, "scikit-learn", notes, whole="api")
    assert [e["words"] for e in found] == [
        "Deprecates `datasets.load_boston` in 1.0 and it will be removed in 1.2. Alternative code snippets to load "
        "similar datasets are provided.",
        "`linear_model.RandomizedLasso` has been deprecated and will be removed in version 0.21."]


def test_the_shipped_data_is_generated_and_covers_pandas_removals():
    import json

    data = json.loads(knowledge.DATA.read_text())
    assert data["generated_by"].startswith("tools/harvest_changes.py")
    pandas = next(line for line in data["coverage"] if line.startswith("pandas"))
    assert float(pandas.rsplit("% covered", 1)[0].rsplit(" ", 1)[1]) >= 95.0


def test_the_entries_about_a_cells_names_say_what_pandas_said():
    error = "AttributeError: 'DataFrame' object has no attribute 'ix'"
    found = knowledge.about(knowledge.words_of(f"df.ix[0, 'a']\n{error}"))
    first = knowledge.said(found[0])
    assert first.startswith("pandas 1.0.0 removed Series.ix, DataFrame.ix (deprecated in 0.20.0; ")
    assert "iloc or loc" in first


# pandas doc/source/whatsnew/v3.0.0.rst (a draft of the notes, as stored at pandas-dev/pandas 00084e66) and v2.1.0.rst
PANDAS_3 = """\
Deprecations
~~~~~~~~~~~~

Other Deprecations
^^^^^^^^^^^^^^^^^^
- Deprecated :meth:`Timestamp.utcnow`, use ``Timestamp.now("UTC")`` instead (:issue:`56680`)

Removal of prior version deprecations/changes
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

Enforced deprecation of aliases ``M``, ``Q``, ``Y``, etc. in favour of ``ME``, ``QE``, ``YE``, etc. for offsets
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

Renamed the following offset aliases (:issue:`57986`):

+-------------------------------+------------------+------------------+
| offset                        | removed alias    | new alias        |
+===============================+==================+==================+
|:class:`MonthEnd`              |      ``M``       |     ``ME``       |
+-------------------------------+------------------+------------------+
|:class:`YearEnd`               |      ``Y``       |     ``YE``       |
+-------------------------------+------------------+------------------+

Other Removals
^^^^^^^^^^^^^^
- Removed ``DataFrame.applymap``, ``Styler.applymap`` and ``Styler.applymap_index`` (:issue:`52364`)
- Removed deprecated keyword ``method`` on :meth:`Series.fillna`, :meth:`DataFrame.fillna` (:issue:`57760`)
- Removed alias :class:`arrays.PandasArray` for :class:`arrays.NumpyExtensionArray` (:issue:`53694`)
- Enforced deprecation of strings ``H``, ``BH``, and ``CBH`` denoting frequencies in :class:`Hour`,
  :class:`BusinessHour`, :class:`CustomBusinessHour` (:issue:`59143`)

Performance improvements
~~~~~~~~~~~~~~~~~~~~~~~~
"""

PANDAS_21 = """\
Deprecations
~~~~~~~~~~~~

Other Deprecations
^^^^^^^^^^^^^^^^^^
- Deprecated :meth:`.Styler.applymap`. Use the new :meth:`.Styler.map` method instead (:issue:`52708`)
- Deprecated :meth:`DataFrame.applymap`. Use the new :meth:`DataFrame.map` method instead (:issue:`52353`)
- Deprecated the ``method`` and ``limit`` keywords in :meth:`DataFrame.replace` and :meth:`Series.replace`
  (:issue:`33302`)
- Deprecated the ``method`` and ``limit`` keywords on :meth:`Series.fillna`, :meth:`DataFrame.fillna`, use
  ``obj.bfill()`` or ``obj.ffill()`` instead (:issue:`53394`)
"""

# pandas 2.2.3's pandas/_libs/tslibs/dtypes.pyx (two of its tables, a few rows each)
DTYPES_PYX = """\
cdef dict c_OFFSET_DEPR_FREQSTR = {
    "M": "ME",
    "Y-DEC": "YE-DEC",
    "A": "YE",
}
cdef dict c_DEPR_ABBREVS = {
    "A": "Y",
    "H": "h",
    "T": "min",
}
"""


@pytest.fixture
def notes(tmp_path):
    (tmp_path / "pandas" / "code" / "2.2.3").mkdir(parents=True)
    (tmp_path / "pandas" / "v3.0.0.rst").write_text(PANDAS_3)
    (tmp_path / "pandas" / "v2.1.0.rst").write_text(PANDAS_21)
    (tmp_path / "pandas" / "code" / "2.2.3" / "dtypes.pyx").write_text(DTYPES_PYX)
    return tmp_path


def test_a_table_of_renamed_aliases_is_a_removal_a_row(harvest):
    found = entries_of(harvest, "pandas", PANDAS_3)
    rows = [e for e in found if e["words"].startswith("Renamed the following offset aliases: ")]
    assert [(e["names"][0], e["kind"], e["replacement"]) for e in rows] == [("M", "alias", "ME"), ("Y", "alias", "YE")]
    assert rows[0]["words"] == ("Renamed the following offset aliases: removed alias ``M``, new alias ``ME``, "
                                "offset :class:`MonthEnd`")
    assert not any(e["words"] in ("Other Removals", "Other Deprecations") for e in found)  # sub-headings only
    alias = next(e for e in found if "PandasArray" in e["words"])
    assert alias["replacement"] == "arrays.NumpyExtensionArray"


def test_a_removal_of_several_names_says_what_each_ones_deprecation_named(harvest, notes):
    found = harvest.harvest(notes, "pandas")
    assert len(found) == len({(e["source"], e["change"], e["words"]) for e in found})  # nested sections once
    applymap = next(e for e in found if e["change"] == "removed" and "DataFrame.applymap" in e["names"])
    assert applymap["deprecated_in"] == "2.1.0"
    assert applymap["deprecation_replacements"] == {"DataFrame.applymap": "DataFrame.map",
                                                    "Styler.applymap": "Styler.map"}
    assert applymap["deprecation_replacement"] == "DataFrame.map"
    fillna = next(e for e in found if e["change"] == "removed" and e["names"][:2] == ["method", "Series.fillna"])
    assert fillna["deprecation_replacement"] == "obj.bfill() or obj.ffill()"  # not replace()'s `method`, named none


def test_the_frequency_aliases_pandas_code_warns_of_say_their_replacement(harvest, notes):
    found = harvest.warned(notes, "pandas")
    assert [(e["names"], e["replacement"]) for e in found] == [
        (["M"], "ME"), (["A"], "YE"), (["A"], "Y"), (["H"], "h"), (["T"], "min")]  # `Y-DEC` follows `Y`
    assert found[0]["words"] == "'M' is deprecated and will be removed in a future version, please use 'ME' instead."
    hours = next(e for e in harvest.harvest(notes, "pandas") if e["change"] == "removed" and e["names"][0] == "H")
    assert hours["deprecation_replacements"] == {"H": "h"}  # the notes name none: the warning does


def test_gather_reads_pandas_notes_from_a_git_dir_offline(harvest, tmp_path):
    import subprocess

    repo = tmp_path / "pandas"
    (repo / "doc" / "source" / "whatsnew").mkdir(parents=True)
    for name in ("v2.0.3.rst", "v3.0.0.rst", "index.rst"):
        (repo / "doc" / "source" / "whatsnew" / name).write_text(name)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], check=True)
    target = tmp_path / "notes" / "pandas"
    harvest._from_git(str(repo / ".git"), "HEAD", "doc/source/whatsnew/", target, "pandas-dev/pandas",
                      lambda name: (harvest.version_of(name) or (0,)) > harvest.PANDAS_SDIST_LAST)
    assert sorted(p.name for p in target.iterdir()) == ["SOURCE", "v3.0.0.rst"]  # 2.0.3 comes from its sdist
    assert (target / "SOURCE").read_text().startswith("pandas-dev/pandas git ")


# IPython 8.37's IPython/core/display.py and utils/sysinfo.py (three functions, cut short), 9.0's, and 9.0's notes
IPYTHON_8 = {
    "core/display.py": '''
import warnings


def set_matplotlib_formats(*formats, **kwargs):
    """
    .. deprecated:: 7.23

       use `matplotlib_inline.backend_inline.set_matplotlib_formats()`

    Select figure formats for the inline backend.
    """
    warnings.warn("`set_matplotlib_formats` is deprecated since IPython 7.23, directly "
                  "use `matplotlib_inline.backend_inline.set_matplotlib_formats()`", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    warnings.warn(f"Importing {name} from IPython.core.display is deprecated since IPython 7.14", DeprecationWarning)
''',
    "utils/sysinfo.py": '''
import warnings


def num_cpus():
    warnings.warn("`num_cpus` is deprecated since IPython 8.0. Use `os.cpu_count` instead.",
                  DeprecationWarning, stacklevel=2)


def kept():
    warnings.warn("`kept` is Pending Deprecation since IPython 8.17.", PendingDeprecationWarning)
''',
}
IPYTHON_9 = {"core/display.py": "import warnings\n", "utils/sysinfo.py": "def kept():\n    pass\n"}
IPYTHON_9_NOTES = """\
Removal and deprecation
-----------------------

I am not going to list the removals and deprecations, but anything deprecated since before IPython 8.16 is gone,
including many shim modules and indirect imports that would just re-expose IPykernel, qtconsole, etc.
"""


def test_deprecations_in_a_librarys_code_and_the_removals_its_notes_state_as_a_rule(harvest, tmp_path):
    for release, files in (("8.37.0", IPYTHON_8), ("9.0.0", IPYTHON_9)):
        for name, text in files.items():
            path = tmp_path / "IPython" / "code" / release / "IPython" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    (tmp_path / "IPython" / "version9.rst").write_text(IPYTHON_9_NOTES)
    found = harvest.harvest(tmp_path, "IPython")
    said = {(e["change"], e["names"][0]): e for e in found}
    assert sorted(said) == [("deprecated", "IPython.core.display.set_matplotlib_formats"),
                            ("deprecated", "IPython.utils.sysinfo.kept"),
                            ("deprecated", "IPython.utils.sysinfo.num_cpus"),
                            ("removed", "IPython.core.display.set_matplotlib_formats"),
                            ("removed", "IPython.utils.sysinfo.num_cpus")]  # `kept`: deprecated after 8.16, still there
    formats = said[("deprecated", "IPython.core.display.set_matplotlib_formats")]
    assert formats["version"] == "7.23"
    assert formats["replacement"] == "matplotlib_inline.backend_inline.set_matplotlib_formats()"
    gone = said[("removed", "IPython.core.display.set_matplotlib_formats")]
    assert (gone["version"], gone["deprecated_in"]) == ("9.0.0", "7.23")
    assert gone["deprecation_replacement"] == "matplotlib_inline.backend_inline.set_matplotlib_formats()"
    assert "anything deprecated since before IPython 8.16 is gone" in gone["words"]
    assert gone["evidence"] == "not defined in IPython 9.0.0's IPython/core/display.py"
    assert said[("removed", "IPython.utils.sysinfo.num_cpus")]["deprecation_replacement"] == "os.cpu_count"


def test_the_entries_about_an_import_ipython_9_refuses_name_its_replacement():
    """The book's `preamble.py`: `from IPython.display import set_matplotlib_formats` on IPython 9."""
    error = ("ImportError: cannot import name 'set_matplotlib_formats' from 'IPython.display' "
             "(/usr/lib/python3/site-packages/IPython/display.py)")
    words = knowledge.subject_of(error) + knowledge.words_of(error)
    first = knowledge.said(knowledge.about(words, ["IPython"])[0])
    assert first.startswith("IPython 9.0.0 removed IPython.core.display.set_matplotlib_formats (deprecated in 7.23; "
                            "its deprecation said use matplotlib_inline.backend_inline.set_matplotlib_formats())")


def _shipped(library, version, change, *first_names):
    return next(c for c in knowledge.changes() if (c.library, c.version, c.change) == (library, version, change)
                and c.names[:len(first_names)] == first_names)


def test_the_shipped_data_says_pandas_3_removals_with_their_replacement():
    """Named entries of the shipped file, each with what pandas said to use instead."""
    applymap = _shipped("pandas", "3.0.0", "removed", "DataFrame.applymap")
    assert dict(applymap.deprecation_replacements)["DataFrame.applymap"] == "DataFrame.map"
    assert _shipped("pandas", "3.0.0", "removed", "M", "MonthEnd").replacement == "ME"
    fillna = _shipped("pandas", "3.0.0", "removed", "method", "Series.fillna", "DataFrame.fillna")
    assert fillna.deprecation_replacement == "obj.bfill() or obj.ffill()"
    assert dict(_shipped("pandas", "3.0.0", "removed", "H").deprecation_replacements)["H"] == "h"
    assert dict(_shipped("pandas", "3.0.0", "removed", "A").deprecation_replacements)["A"] == "YE"
    assert _shipped("pandas", "3.0.0", "removed", "DataFrame.swapaxes").deprecation_replacement == \
        "DataFrame.transpose or Series.transpose"


# numpy doc/source/release/2.0.0-notes.rst, 1.20.0-notes.rst (a simple table) and 1.24.0-notes.rst, shortened
NUMPY_2_REMOVALS = """\
NumPy 2.0 Python API removals
=============================

* Alias ``np.float_`` has been removed. Use ``np.float64`` instead.

* Alias ``np.NaN`` has been removed. Use ``np.nan`` instead.

* ``np.source`` has been removed. The preferred replacement is
  ``inspect.getsource``.
"""
NUMPY_ALIASES = """\
Deprecations
============

Using the aliases of builtin types like ``np.int`` is deprecated
----------------------------------------------------------------

These aliases have been deprecated. The table below shows the full list of
deprecated aliases, along with their exact meaning.

=================  ============  ===================================
Deprecated name    Identical to  NumPy scalar type names
=================  ============  ===================================
``numpy.int``      ``int``       `numpy.int_` (default)
``numpy.str``      ``str``       `numpy.str_`
=================  ============  ===================================

For ``float`` and ``complex`` you can use ``float64`` and ``complex128``
if you wish to be more explicit about the precision.
"""
NUMPY_EXPIRED = """\
Expired deprecations
====================

* The deprecation for the aliases ``np.str`` and ``np.int`` is expired (introduces NumPy 1.20).
"""


def test_numpy_2_api_removals_are_removals_with_numpys_replacement(harvest):
    found = entries_of(harvest, "numpy", NUMPY_2_REMOVALS)
    assert [(e["change"], e["names"][0], e["replacement"]) for e in found] == [
        ("removed", "np.float_", "np.float64"), ("removed", "np.NaN", "np.nan"),
        ("removed", "np.source", "inspect.getsource")]


def test_a_simple_table_of_aliases_names_each_ones_replacement_and_their_removal_links_to_it(harvest):
    deprecated = entries_of(harvest, "numpy", NUMPY_ALIASES)
    rows = [e for e in deprecated if "Identical to" in e["words"]]
    assert [(e["names"][0], e["replacement"]) for e in rows] == [("numpy.int", "int"), ("numpy.str", "str")]
    for item in deprecated:
        item["version"] = "1.20.0"
    removal = entries_of(harvest, "numpy", NUMPY_EXPIRED)[0]
    assert (removal["names"], removal["replacement"]) == (["np.str", "np.int"], "none")
    removal["version"] = "1.24.0"
    harvest.link_deprecations([*deprecated, removal])
    assert removal["deprecation_replacements"] == {"np.str": "str", "np.int": "int"}


# scikit-learn doc/whats_new/v0.20.rst and seaborn doc/whatsnew/v0.9.0.rst, as released (an entry each)
CHANGELOG_ENTRIES = """\
- |API| Removed all mentions of ``sklearn.externals.joblib``, and deprecated
  joblib methods exposed in ``sklearn.utils``.
  Other functionalities are part of `joblib <https://joblib.readthedocs.io/>`_.
  package and should be used directly, by installing it.

- Renamed the ``size`` parameter to ``height`` in multi-plot grid objects (:class:`FacetGrid`, :class:`PairGrid`,
  and :class:`JointGrid`) along with functions that use them (``factorplot``, :func:`lmplot`, :func:`pairplot`).

- Changed the default diagonal plots in :func:`pairplot` to use func:`kdeplot` when a ``"hue"`` dimension is used.
"""


def test_a_changelogs_package_to_use_directly_and_its_renamed_keyword(harvest):
    found = entries_of(harvest, "seaborn", CHANGELOG_ENTRIES, whole="api")
    assert [(e["change"], e["names"][0], e["kind"], e["replacement"]) for e in found] == [
        ("removed", "sklearn.externals.joblib", "attribute", "joblib"), ("changed", "size", "keyword", "height")]
    assert "lmplot" in found[1]["names"]


def test_the_shipped_data_says_numpys_and_seaborns_own_replacements():
    assert _shipped("numpy", "2.0.0", "removed", "np.NaN").replacement == "np.nan"
    assert _shipped("numpy", "2.0.0", "removed", "np.string_").replacement == "np.bytes_"
    expired = dict(_shipped("numpy", "1.24.0", "removed", "np.object").deprecation_replacements)
    assert (expired["np.str"], expired["np.float"]) == ("str", "float")
    assert _shipped("scikit-learn", "0.20.0", "removed", "sklearn.externals.joblib").replacement == "joblib"
    assert _shipped("seaborn", "0.9.0", "changed", "size").replacement == "height"


def test_the_shipped_coverage_counts_pandas_removals_to_3_0():
    import json

    data = json.loads(knowledge.DATA.read_text())
    lines = {line.split(" ", 1)[0]: line for line in data["coverage"]}
    assert lines["pandas"].startswith("pandas (0.20.0-3.0.0): ")
    for library in ("pandas", "numpy", "matplotlib", "scikit-learn"):
        assert float(lines[library].rsplit("% covered", 1)[0].rsplit(" ", 1)[1]) >= 95.0, lines[library]
    assert any("00084e6619637d3bc9a0d82b59bfacc8699daa32" in s for s in data["sources"]["pandas"])


@pytest.mark.parametrize("cell, said", [
    ("v = labelled.applymap(str)\n", "for DataFrame.applymap"),
    ("v = series.resample('M').sum()\n", "removed alias ``M``, new alias ``ME``"),
    ("v = labelled.fillna(method='ffill')\n", "its deprecation said use obj.bfill() or obj.ffill()"),
])
def test_a_cell_using_what_pandas_3_removed_gets_its_entry_in_the_prompt(cell, said):
    """Today's pandas raises on each; the prompt's section says what pandas said to use instead."""
    from jupyter_fixloop.model.prompt import CHANGES_HEADING, changes_section

    ns = {}
    setup = FRAMES + "series = pd.Series([1, 2], index=pd.date_range('2020-01-31', periods=2, freq='D'))\n"
    failed = run(ns, setup, cell)
    assert not failed.ok
    section = changes_section(cell, [(cell, failed)], ("pandas",))
    assert section.startswith(CHANGES_HEADING)
    assert said in section, section


@pytest.fixture
def ns():
    return {}


def run(ns: dict, setup: str, cell: str):
    ns.clear()
    exec(textwrap.dedent(setup), ns)
    return judge_result(runner.run(textwrap.dedent(cell), [], ns=ns))


FRAMES = ("import io\nimport pandas as pd\n"
          "labelled = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]}, index=['x', 'y', 'z'])\n"
          "numbered = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})\n")

# (cell, the rewriter, the repaired cell, a check on its run): each on the real error of today's pandas
CASES = {
    "ix_labels": ("v = labelled.ix['y', 'b']\n", "ix_indexer", "v = labelled.loc['y', 'b']\n", "v == 5"),
    "ix_positions_on_labels": ("v = labelled.ix[0:2]\n", "ix_indexer", "v = labelled.iloc[0:2]\n",
                               "list(v.index) == ['x', 'y']"),
    # on an integer index `.ix` read integers as labels: a slice's end is kept, as `.loc` keeps it
    "ix_integers_are_labels": ("v = numbered.ix[0:1, 'b']\n", "ix_indexer", "v = numbered.loc[0:1, 'b']\n",
                               "v.tolist() == [4, 5]"),
    "ix_mixed_row_position": ("v = labelled.ix[0, 'a']\n", "ix_indexer",
                              "v = labelled.loc[labelled.index[0], 'a']\n", "v == 1"),
    "ix_mixed_column_position": ("v = labelled.ix['z', 1]\n", "ix_indexer",
                                 "v = labelled.loc['z', labelled.columns[1]]\n", "v == 6"),
    "ix_mask": ("v = labelled.ix[labelled.a > 1, 'b']\n", "ix_indexer", "v = labelled.loc[labelled.a > 1, 'b']\n",
                "v.tolist() == [5, 6]"),
    "styler_hide_index": ("h = labelled.style.hide_index()\n", "said_method", "h = labelled.style.hide(axis='index')\n",
                          "'<th class=\"row_heading' not in h.to_html()"),
    "styler_hide_columns": ("h = labelled.style.hide_columns()\n", "said_method",
                            "h = labelled.style.hide(axis='columns')\n", "'col_heading' not in h.to_html()"),
    "astype_categories": ("c = labelled['a'].astype('category', categories=[3, 2, 1], ordered=True)\n",
                          "keywords_into_dtype",
                          "c = labelled['a'].astype(pd.CategoricalDtype(categories=[3, 2, 1], ordered=True))\n",
                          "c.cat.ordered and list(c.cat.categories) == [3, 2, 1]"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_generic_rewriter_repairs_the_real_error(name, ns):
    rewriting.assert_repaired(ns, textwrap.dedent(FRAMES), CASES[name], {"pd": "pandas", "io": "io"})


def test_ix_with_a_variable_on_an_axis_of_labels_cannot_tell(ns):
    """`.ix` read a variable's value as a position or a label: what it holds decides, and the code does not say."""
    cell = "k = 0\nv = labelled.ix[k, 'a']\n"
    first = run(ns, FRAMES, cell)
    repair, fixed, doubt = repairs.propose(cell, first, {"pd": "pandas"})
    assert repair is None, fixed
    assert doubt.startswith("`.ix` read `k` as a position or a label by its value")


def test_a_rewriter_leaves_a_method_its_entry_names_on_another_class(ns):
    """`Styler.hide_index` was removed; a frame of one's own with no `hide_index` is another story."""
    cell = "class Frame:\n    pass\nFrame().hide_index()\n"
    first = run(ns, FRAMES, cell)
    repair, fixed, _ = repairs.propose(cell, first, {"pd": "pandas"})
    assert repair is None or repair.__name__ != "said_method", fixed


def test_what_pandas_said_reaches_a_real_models_prompt(fake_model):
    """A real litellm call against the scripted server: the prompt holds pandas' own entry about the removed
    method the cell calls, within its budget, and the model's answer is run and judged as any."""
    import pandas as pd

    from jupyter_fixloop import fix
    from jupyter_fixloop.model.prompt import CHANGES_HEADING, PROMPT_TOKENS

    frame = pd.DataFrame({"a": [1, 2]}, index=["x", "y"])
    cell = "html = frame.style.hide_index().to_html()\n"
    server = fake_model("```python\nhtml = frame.style.hide(axis='index').to_html()\n```")
    result = fix(cell, checks=["'row_heading' not in html"], namespace={"frame": frame}, model="openai/scripted",
                 api_base=server.url, max_rounds=1, rules=False)
    prompt = server.requests[0]["messages"][1]["content"]
    assert CHANGES_HEADING in prompt
    said = prompt.split(CHANGES_HEADING, 1)[1].split("\n### ", 1)[0]
    assert "pandas 2.0.0 removed Styler.hide_index, Styler.hide_columns (deprecated in 1.4.0; its deprecation " \
           "said use Styler.hide)" in said
    assert len(prompt) // 4 < PROMPT_TOKENS
    assert result.status == "fixed", result.reason


def test_the_knowledge_can_be_left_out_of_the_prompt_to_measure_it(fake_model):
    """`FixLoop.library_changes_in_prompt` False: the same failing cell's prompt holds no entry (the model
    beside the rules with and without the knowledge, issue #55); the loop runs as before."""
    import pandas as pd

    from jupyter_fixloop import fix
    from jupyter_fixloop.model.prompt import CHANGES_HEADING

    frame = pd.DataFrame({"a": [1, 2]}, index=["x", "y"])
    server = fake_model("```python\nhtml = frame.style.hide(axis='index').to_html()\n```")
    result = fix("html = frame.style.hide_index().to_html()\n", checks=["'row_heading' not in html"],
                 namespace={"frame": frame}, model="openai/scripted", api_base=server.url, max_rounds=1, rules=False,
                 library_changes_in_prompt=False)
    prompt = server.prompt(0)
    assert CHANGES_HEADING not in prompt and "hide_index" in prompt
    assert result.status == "fixed", result.reason


def test_a_cell_that_ran_gets_no_entries():
    from jupyter_fixloop.model.prompt import changes_section

    ns = {}
    ran = run(ns, FRAMES, "v = labelled.loc['y', 'b']\n")
    assert changes_section("v = labelled.loc['y', 'b']\n", [("v = labelled.loc['y', 'b']\n", ran)]) == ""


# ---------------------------------------------------------------- saved outputs across versions (receipt/saved.py)


def _entry_said(cited) -> knowledge.Change:
    library, version, words = cited
    return next(c for c in knowledge.changes() if (c.library, c.version) == (library, version)
                and c.words.startswith(words))


def test_value_counts_header_and_name_are_what_pandas_2_changed():
    """pandas 2.0: `value_counts` prints the column's name as a header and names the counts `count`."""
    import pandas as pd

    from jupyter_fixloop.receipt.saved import VALUE_COUNTS, saved_check

    shown = repr(pd.Series(["quetzal", "quetzal", "elk"], name="animal").value_counts())
    saved = "quetzal    2\nelk        1\nName: animal, dtype: int64\n"  # pandas 1.5's repr
    assert shown.splitlines()[0] == "animal"
    same, detail, _ = saved_check("", shown, saved)
    assert same is True
    assert detail == ("the same output but for what the library changed in how it prints it (pandas 2.0.0: "
                      "Value counts sets the resulting name to ``count``)")
    assert "count" in _entry_said(VALUE_COUNTS).names
    other = "quetzal    2\nelk        2\nName: animal, dtype: int64\n"
    assert saved_check("", shown, other)[0] is False  # a count that differs still differs


def test_a_string_predicates_false_for_a_missing_value_is_what_pandas_3_changed():
    """pandas 3's string dtype gives False for a missing value in `str.contains` where object dtype gave NaN (not in
    the harvested notes: STRING_PREDICATES cites the change itself); a True or False that differs still differs."""
    import numpy as np
    import pandas as pd

    from jupyter_fixloop.receipt.saved import STRING_PREDICATES, saved_check

    mail = pd.Series(["ann@home.org", np.nan, "bo@work.org"], name="mail")
    shown = repr(mail.str.contains("home"))
    saved = repr(mail.astype(object).str.contains("home"))  # pandas 2's object column: NaN
    assert "NaN" in saved and "dtype: bool" in shown
    same, detail, _ = saved_check("", shown, saved)
    assert same is True and STRING_PREDICATES[2] in detail
    assert saved_check("", repr(mail.str.contains("work")), saved)[0] is False
    assert saved_check("", shown, saved.replace("NaN", "True"))[0] is False


def test_a_frame_made_from_a_dict_with_its_columns_sorted_is_the_same_frame():
    """pandas before 0.23 sorted a dict's keys into the columns: the same rows, its columns in another order, are the
    same frame (DICT_ORDER, the harvested entry's words); a value that moved to another column still differs."""
    import pandas as pd

    from jupyter_fixloop.receipt.saved import DICT_ORDER, saved_check

    made = {"Sex": ["M", "F"], "State": ["NY", "CA"], "Name": ["John", "Tai"]}
    dates = pd.DatetimeIndex(["1980-09-23", "1973-11-11"], name="DOB")
    shown = repr(pd.DataFrame(made, index=dates))
    saved = repr(pd.DataFrame(made, index=dates)[sorted(made)])  # pandas 0.22's columns: Name, Sex, State
    same, detail, _ = saved_check("", shown, saved)
    assert same is True and DICT_ORDER[2] in detail
    assert "DataFrame" in _entry_said(DICT_ORDER).names
    swapped = repr(pd.DataFrame({"Name": ["John", "Tai"], "Sex": ["NY", "CA"], "State": ["M", "F"]}, index=dates))
    assert saved_check("", shown, swapped)[0] is False


def test_an_axes_repr_of_any_matplotlib_is_the_same_axes():
    """`<matplotlib.axes._subplots.AxesSubplot at 0x...>` (before 3.4: no labels), `<AxesSubplot:xlabel='a'>`
    (3.4-3.6) and `<Axes: xlabel='a'>` (3.7 on): one Axes. No harvested entry says so (AXES_REPR is None):
    the equivalence rests on the reprs alone, and labels that differ still differ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from jupyter_fixloop.receipt.saved import AXES_REPR, saved_check

    _, ax = plt.subplots()
    ax.set_xlabel("year")
    shown = repr(ax)
    plt.close("all")
    assert AXES_REPR is None
    assert saved_check("", shown, "<matplotlib.axes._subplots.AxesSubplot at 0x7f3a2c1d>\n")[0] is True
    assert saved_check("", shown, "<AxesSubplot:xlabel='year'>\n")[0] is True
    assert saved_check("", shown, "<AxesSubplot:xlabel='month'>\n")[0] is False


def test_a_renamed_frequency_alias_in_a_footer_is_the_same_series():
    """pandas 2.2 renamed `M` to `ME` (FREQ_ALIASES is None: the footer's equivalence cites no entry, though the
    knowledge base now holds pandas 3.0's `M` -> `ME`)."""
    import pandas as pd

    from jupyter_fixloop.receipt.saved import FREQ_ALIASES, saved_check

    monthly = pd.Series([3, 4], index=pd.date_range("2015-01-31", periods=2, freq="ME"))
    shown = repr(monthly.asfreq("ME"))
    assert FREQ_ALIASES is None and "Freq: ME" in shown
    saved = "2015-01-31    3\n2015-02-28    4\nFreq: M, dtype: int64\n"
    assert saved_check("", shown, saved)[0] is True
    assert saved_check("", shown, saved.replace("    4", "    5"))[0] is False


# ---------------------------------------------------------------- drift inside the notebook's own module (batch)


PREAMBLE = ("import pandas as pd\n"
            "from pandas.io.json import json_normalize\n"
            "\n\ndef flat(rows):\n    return json_normalize(rows)\n")


def test_a_cell_failing_inside_the_notebooks_module_gets_a_judged_diff_of_that_file(tmp_path, capsys):
    """`from preamble import *` fails inside preamble.py (pandas 1.0 moved json_normalize): batch mode proposes
    the file's repair as a diff beside the output, judged by running the cell in a sandbox with it; the
    file, the cell and plain Jupyter's outcome stay as they were."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from jupyter_fixloop.batch import cli as batch_cli

    folder = tmp_path / "book"
    folder.mkdir()
    (folder / "preamble.py").write_text(PREAMBLE)
    nb = new_notebook(cells=[new_code_cell("from preamble import *\nprint(flat([{'a': {'b': 1}}]).columns.tolist())")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out, report = folder / "ch01.ipynb", tmp_path / "ch01.fixed.ipynb", tmp_path / "ch01.md"
    nbformat.write(nb, str(src))

    code = batch_cli.main([str(src), "-o", str(out), "--report", str(report)])

    assert code == 1, capsys.readouterr()
    assert (folder / "preamble.py").read_text() == PREAMBLE  # never applied unreviewed
    diff = (tmp_path / "ch01.fixed.preamble.py.diff").read_text()
    assert "-from pandas.io.json import json_normalize\n+from pandas import json_normalize\n" in diff
    assert diff.startswith("--- a/preamble.py\n+++ b/preamble.py\n")
    text = report.read_text()
    assert ("the error is raised in preamble.py, line 2, a module of the notebook's folder; a repair of that file "
            "(moved_import, mechanical) is proposed as a diff, not applied: with it, this cell ran without error "
            "in a sandbox") in text
    assert "+from pandas import json_normalize" in text
    cell = nbformat.read(str(out), as_version=4).cells[0]
    assert cell.source.startswith("from preamble import *")  # the cell is not where the fault is


HELPERS = ("import numpy as np\n"
           "\n\ndef halves(xs):\n    return np.array(xs, dtype=np.float) / 2\n")


def test_a_module_using_a_removed_numpy_alias_gets_the_diff_numpys_own_message_names(tmp_path, capsys):
    """helpers.py uses `np.float` (removed in NumPy 1.24; the AttributeError says "use `float` by itself" on
    its second line): batch mode proposes `float` as a diff of helpers.py, judged by running the failing cell
    after the imports of the cell above that imported the module; helpers.py is not changed."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from jupyter_fixloop.batch import cli as batch_cli

    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "helpers.py").write_text(HELPERS)
    nb = new_notebook(cells=[new_code_cell("import helpers"), new_code_cell("print(helpers.halves([1, 3]).tolist())")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out, report = folder / "ch02.ipynb", tmp_path / "ch02.fixed.ipynb", tmp_path / "ch02.md"
    nbformat.write(nb, str(src))

    code = batch_cli.main([str(src), "-o", str(out), "--report", str(report)])

    assert code == 1, capsys.readouterr()
    assert (folder / "helpers.py").read_text() == HELPERS  # never applied unreviewed
    diff = (tmp_path / "ch02.fixed.helpers.py.diff").read_text()
    assert ("-    return np.array(xs, dtype=np.float) / 2\n+    return np.array(xs, dtype=float) / 2\n") in diff
    text = report.read_text()
    assert ("the error is raised in helpers.py, line 5, a module of the notebook's folder; a repair of that file "
            "(message_hint, mechanical) is proposed as a diff, not applied: with it, this cell ran without error "
            "in a sandbox, holding the names it reads as the notebook's kernel held them before it, after the "
            "imports of cell 1 (the file itself was not changed)") in text
    cell = nbformat.read(str(out), as_version=4).cells[1]
    assert cell.source == "print(helpers.halves([1, 3]).tolist())"  # the cell is not where the fault is


LOADER = ("import numpy as np\nimport pandas as pd\n"
          "\n\ndef load():\n    df = pd.DataFrame({'n': [1, 9]}).astype(np.float)\n"
          "    df.n.replace([9], np.nan, inplace=True)\n    return df\n")


def test_a_module_repair_is_judged_with_the_values_the_cells_above_made(tmp_path, capsys):
    """The failing cell reads `xs`, made by a cell above (ThinkStats2's `thinkstats2.Cdf(xbars)`): the sandbox that
    judges the module's repair holds it as the notebook's kernel did before the cell, so the repair is judged on
    the cell's own data and proposed; the module stays as it was."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from jupyter_fixloop.batch import cli as batch_cli

    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "helpers.py").write_text(HELPERS)
    nb = new_notebook(cells=[new_code_cell("import helpers"), new_code_cell("xs = [1, 3]"),
                             new_code_cell("print(helpers.halves(xs).tolist())")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out, report = folder / "ch04.ipynb", tmp_path / "ch04.fixed.ipynb", tmp_path / "ch04.md"
    nbformat.write(nb, str(src))

    assert batch_cli.main([str(src), "-o", str(out), "--report", str(report)]) == 1, capsys.readouterr()
    assert (folder / "helpers.py").read_text() == HELPERS
    assert "+    return np.array(xs, dtype=float) / 2\n" in (tmp_path / "ch04.fixed.helpers.py.diff").read_text()
    assert "holding the names it reads as the notebook's kernel held them before it" in report.read_text()


def test_a_module_repair_whose_judged_run_leaves_a_warning_is_proposed_with_that_warning_said(tmp_path, capsys):
    """The repaired loader runs without error, but pandas warns its chained `inplace=True` replace reaches no
    frame (a second fault of the file, the next line): the diff is proposed, and the reason says the warning
    is left for review rather than calling the run clean."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from jupyter_fixloop.batch import cli as batch_cli

    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "loader.py").write_text(LOADER)
    nb = new_notebook(cells=[new_code_cell("import loader"), new_code_cell("df = loader.load()\nprint(len(df))")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, report = folder / "ch03.ipynb", tmp_path / "ch03.md"
    nbformat.write(nb, str(src))

    code = batch_cli.main([str(src), "-o", str(tmp_path / "ch03.fixed.ipynb"), "--report", str(report)])

    assert code == 1, capsys.readouterr()
    assert (folder / "loader.py").read_text() == LOADER
    diff = (tmp_path / "ch03.fixed.loader.py.diff").read_text()
    assert "+    df = pd.DataFrame({'n': [1, 9]}).astype(float)\n" in diff
    text = " ".join(report.read_text().split())
    assert ("before it, after the imports of cell 1 (the file itself was not changed); a warning is left for "
            "review: pandas warns the assignment may not reach the frame") in text


def test_the_imports_of_the_cells_above_are_what_a_module_repair_is_judged_after():
    from jupyter_fixloop.batch.modules import imports_of

    sources = ["from __future__ import division\n\n%matplotlib inline\nimport nsfg", "%%bash\nls", "x = 1",
               "import numpy as np\nfrom helpers import (\n    halves,\n)\ny = 2"]
    assert imports_of(sources) == ("import nsfg\nimport numpy as np\nfrom helpers import (\n    halves,\n)\n", [1, 4])


def test_a_traceback_frame_outside_the_folder_is_no_module_of_the_notebook(tmp_path):
    from jupyter_fixloop.batch.modules import failing_module

    (tmp_path / "helpers.py").write_text("x = 1\ny = z\n")
    frames = ["\x1b[0;31mNameError\x1b[0m", f"File \x1b[0;32m{tmp_path}/helpers.py:2\x1b[0m", "----> 2 y = z"]
    found = failing_module(frames, str(tmp_path))
    assert (found.module, found.lineno, found.line) == ("helpers", 2, "y = z")
    assert failing_module(["File /usr/lib/python3/json/__init__.py:2"], str(tmp_path)) is None


def test_a_name_many_entries_mention_still_finds_the_entry_about_it_alone():
    """`NaN` is in more entries than tell anything (TOO_COMMON), yet numpy 2.0's "Alias ``np.NaN`` has been removed.
    Use ``np.nan`` instead." is about it alone: the prompt of a cell importing it holds that entry."""
    message = "cannot import name 'NaN' from 'numpy' (/site-packages/numpy/__init__.py)"
    words = knowledge.subject_of(message) + knowledge.words_of(f"ImportError {message}") + knowledge.words_of(
        "from numpy import NaN, nan\n")
    found = knowledge.about(words, ["numpy"])
    assert any(c.names == ("np.NaN",) and c.replacement == "np.nan" for c in found), found


SKLEARN_CLASS_METHODS = """\
- |API| :class:`metrics.ConfusionMatrixDisplay` exposes two class methods
  :func:`~metrics.ConfusionMatrixDisplay.from_estimator` and
  :func:`~metrics.ConfusionMatrixDisplay.from_predictions` allowing to create
  a confusion matrix plot using an estimator or the predictions.
  `metrics.plot_confusion_matrix` is deprecated in favor of these two
  class methods and will be removed in 1.2.
  :pr:`18543` by `Guillaume Lemaitre`_.
- |API| The following class methods have been removed: `Foo.bar` in favor of nothing.
"""

SKLEARN_DECORATED = '''\
@deprecated(
    "Function :func:`plot_roc_curve` is deprecated in 1.0 and will be "
    "removed in 1.2. Use one of the class methods: "
    ":meth:`sklearn.metrics.RocCurveDisplay.from_predictions` or "
    ":meth:`sklearn.metrics.RocCurveDisplay.from_estimator`."
)
def plot_roc_curve(estimator, X, y):
    pass


@deprecated("Function `plot_partial_dependence` is deprecated in 1.0. Use PartialDependenceDisplay.from_estimator "
            "instead")
def plot_partial_dependence(estimator, X, features):
    pass


@deprecated("`load_boston` is deprecated in 1.0 and will be removed in 1.2.")
def load_boston():
    pass


class Kept:
    @deprecated("get_feature_names is deprecated in 1.0. Please use get_feature_names_out instead.")
    def get_feature_names(self):
        pass
'''


def test_in_favor_of_these_class_methods_names_the_ones_the_words_introduced(harvest):
    """"In favor of these two class methods": the two the same words said the class exposes, and the class that
    exposes them is no old name; "the following class methods have been removed" introduces none."""
    found = entries_of(harvest, "scikit-learn", SKLEARN_CLASS_METHODS, whole="api")
    assert [(e["names"], e["replacement"]) for e in found] == [
        (["metrics.plot_confusion_matrix"],
         "metrics.ConfusionMatrixDisplay.from_estimator or metrics.ConfusionMatrixDisplay.from_predictions"),
        (["Foo.bar"], "none")]


def test_an_old_releases_deprecated_functions_name_their_class_methods(harvest, tmp_path):
    """scikit-learn 1.1.3's `@deprecated("...")` module functions: the replacement their words name in code (a class's
    method written bare too); a decorator naming none (the notes say those) and a method's are left out."""
    path = tmp_path / "scikit-learn" / "code" / "1.1.3" / "sklearn" / "metrics" / "_plot" / "roc_curve.py"
    path.parent.mkdir(parents=True)
    path.write_text(SKLEARN_DECORATED)
    found = harvest.harvest(tmp_path, "scikit-learn")
    assert [(e["names"][0], e["version"], e["replacement"]) for e in found] == [
        ("sklearn.metrics._plot.roc_curve.plot_roc_curve", "1.0",
         "sklearn.metrics.RocCurveDisplay.from_predictions or sklearn.metrics.RocCurveDisplay.from_estimator"),
        ("sklearn.metrics._plot.roc_curve.plot_partial_dependence", "1.0", "PartialDependenceDisplay.from_estimator")]
    assert found[1]["words"].endswith("Use PartialDependenceDisplay.from_estimator instead")  # as written, bare

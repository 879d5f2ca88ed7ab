"""The knowledge base of library changes: tools/harvest_changes.py on real release-note text (pandas' whatsnew,
numpy's expired deprecations, matplotlib's removals, scikit-learn's changelog), the data file it shipped, and
the generic rewriters it drives, each on the real library's error in a real run."""

import importlib.util
import pathlib
import textwrap

import pytest

from jupyter_fixloop.kernel import runner as runner
from jupyter_fixloop.loop.verdict import judge_result
from jupyter_fixloop.model import knowledge
from jupyter_fixloop.rules import repairs as repairs

TOOL = pathlib.Path(__file__).resolve().parent.parent / "tools" / "harvest_changes.py"


@pytest.fixture(scope="module")
def harvest():
    spec = importlib.util.spec_from_file_location("harvest_changes", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    cell, expected, repaired, check = CASES[name]
    first = run(ns, FRAMES, cell)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, {"pd": "pandas", "io": "io"})
    assert repair is not None and repair.__name__ == expected, fixed
    assert fixed == repaired
    assert repairs.KIND[repair] == repairs.MECHANICAL
    again = run(ns, FRAMES, fixed)
    assert again.ok, again.text
    assert eval(check, ns)


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
    """pandas 2.2 renamed `M` to `ME` (FREQ_ALIASES is None: no sdist ships 2.2's notes, so no entry)."""
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


def test_a_traceback_frame_outside_the_folder_is_no_module_of_the_notebook(tmp_path):
    from jupyter_fixloop.batch.modules import failing_module

    (tmp_path / "helpers.py").write_text("x = 1\ny = z\n")
    frames = ["\x1b[0;31mNameError\x1b[0m", f"File \x1b[0;32m{tmp_path}/helpers.py:2\x1b[0m", "----> 2 y = z"]
    found = failing_module(frames, str(tmp_path))
    assert (found.module, found.lineno, found.line) == ("helpers", 2, "y = z")
    assert failing_module(["File /usr/lib/python3/json/__init__.py:2"], str(tmp_path)) is None

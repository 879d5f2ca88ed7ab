"""What pandas said of its old sorting and pivoting spellings (0.14-0.19), harvested into the knowledge base and
repaired by the generic rewriters of rules/generic.py; and `.ix` on rows of a MultiIndex. Each on the real error of
today's pandas in a real run, on cells written for these tests; and the harvester reading those words."""

import pytest
import rewriting

from jupyter_fixloop.rules import repairs as repairs

MODULES = {"pd": "pandas", "np": "numpy"}
SETUP = ("import numpy as np\nimport pandas as pd\n"
         "s = pd.Series([3, 1, 2], index=list('abc'))\n"
         "frame = pd.DataFrame({'a': [3, 1, 2, 5], 'b': [1, 2, 1, 2], 'c': list('xyxy')})\n"
         "rows = pd.MultiIndex.from_product([['b', 'a'], [2, 1], ['y', 'x']], names=['k', 'n', 'l'])\n"
         "deep = pd.DataFrame({'v': range(8)}, index=rows)\n")


@pytest.fixture
def ns():
    return {}


def run(ns: dict, cell: str):
    return rewriting.run(ns, cell, SETUP)


# (cell, the rewriter, the repaired cell, a check on its run)
CASES = {
    # pandas 0.17's table: "Previous ``Series.order()``, Replacement ``Series.sort_values()``"
    "series_order": ("r = s.order(ascending=False)\n", "said_method", "r = s.sort_values(ascending=False)\n",
                     "list(r) == [3, 2, 1]"),
    # "Previous ``DataFrame.sortlevel(level=...)``, Replacement ``DataFrame.sort_index(level=...)``"
    "frame_sortlevel": ("r = deep.sortlevel('n', ascending=False)\n", "said_method",
                        "r = deep.sort_index(level='n', ascending=False)\n",
                        "list(r.index.get_level_values('n')[:4]) == [2, 2, 2, 2]"),
    # "Previous \\* ``Series.sort()``, Replacement ``Series.sort_values(inplace=True)``": it sorted in place
    "series_sort_in_place": ("s.sort()\nr = list(s)\n", "said_method", "s.sort_values(inplace=True)\nr = list(s)\n",
                             "r == [1, 2, 3]"),
    # "``DataFrame.sort(columns=...)``, Replacement ``DataFrame.sort_values(by=...)``": `columns` came first
    "frame_sort_columns": ("r = frame.sort('a', ascending=False)\n", "said_method",
                           "r = frame.sort_values(by='a', ascending=False)\n", "list(r['a']) == [5, 3, 2, 1]"),
    # pandas 0.19.2's own warning: "by argument to sort_index is deprecated, pls use .sort_values(by=...)"
    "sort_index_by": ("r = frame.sort_index(by='a', ascending=False)\n", "said_keyword_method",
                      "r = frame.sort_values(by='a', ascending=False)\n", "list(r['a']) == [5, 3, 2, 1]"),
    # pandas 0.16: "``rows`` and ``cols`` keyword arguments were removed in favor of ``index`` and ``columns``";
    # today's pivot_table hands unknown keywords to its aggfunc: the error is "No group keys passed!"
    "pivot_table_rows_cols": ("r = frame.pivot_table(values='a', rows='b', cols='c', aggfunc='sum')\n",
                              "said_keywords_paired",
                              "r = frame.pivot_table(values='a', index='b', columns='c', aggfunc='sum')\n",
                              "r.loc[1, 'x'] == 5 and r.loc[2, 'y'] == 6"),
    # `.ix` on rows of a MultiIndex looked the tuple up as one row first, as `.loc` does today
    "ix_tuple_on_levels": ("r = deep.ix[('a', 1, 'x')]\n", "ix_indexer", "r = deep.loc[('a', 1, 'x')]\n",
                           "r['v'] == 7"),
    "ix_two_keys_on_levels": ("r = deep.ix['b', 2]\n", "ix_indexer", "r = deep.loc['b', 2]\n",
                              "list(r['v']) == [0, 1]"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rewriter_repairs_as_pandas_said(name, ns):
    rewriting.assert_repaired(ns, SETUP, CASES[name], MODULES)


def test_sort_index_by_with_an_argument_by_position_is_left(ns):
    """`sort_index(0, by='a')`: `axis` by position, which `sort_values` does not take there."""
    cell = "r = frame.sort_index(0, by='a')\n"
    first = run(ns, cell)
    repair, fixed, _ = repairs.propose(cell, first, MODULES)
    assert repair is None or repair.__name__ != "said_keyword_method", fixed


@pytest.fixture(scope="module")
def harvest():
    return rewriting.harvester()


# pandas doc/source/whatsnew/v0.17.0.rst, as released (one table)
SORTING = """\
Backwards incompatible API changes
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~

To sort by the **index**:

==================================    ====================================
Previous                              Replacement
==================================    ====================================
``Series.sort_index()``               ``Series.sort_index()``
``DataFrame.sortlevel(level=...)``    ``DataFrame.sort_index(level=...)``
==================================    ====================================
"""

# pandas 0.19.2's pandas/core/frame.py, abridged
FRAME = '''
class DataFrame(NDFrame):
    def sort_index(self, axis=0, level=None, ascending=True, inplace=False, by=None):
        if by is not None:
            warnings.warn("by argument to sort_index is deprecated, pls use "
                          ".sort_values(by=...)", FutureWarning, stacklevel=2)
            return self.sort_values(by, axis=axis, ascending=ascending, inplace=inplace)
        if axis is not None:
            warnings.warn("not about axis", UserWarning)
'''


def test_a_table_of_previous_and_replacement_names_each_rows_replacement(harvest, tmp_path):
    (tmp_path / "pandas").mkdir()
    (tmp_path / "pandas" / "v0.17.0.rst").write_text(SORTING)
    found = {e["names"][0]: e["replacement"] for e in harvest.harvest(tmp_path, "pandas") if e["names"]}
    assert found["DataFrame.sortlevel(level=..."] == "DataFrame.sort_index(level=...)"


def test_a_keyword_an_old_releases_code_warns_of_names_what_to_use(harvest, tmp_path):
    path = tmp_path / "pandas" / "code" / "0.19.2" / "pandas" / "core" / "frame.py"
    path.parent.mkdir(parents=True)
    path.write_text(FRAME)
    found = [e for e in harvest.harvest(tmp_path, "pandas") if e["source"].startswith("pandas==0.19.2")]
    assert [(e["names"], e["kind"], e["replacement"]) for e in found] == [
        (["by", "pandas.core.frame.DataFrame.sort_index"], "keyword", "sort_values(by=...)")]
    assert found[0]["words"] == "by argument to sort_index is deprecated, pls use .sort_values(by=...)"

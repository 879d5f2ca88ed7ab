"""Outputs a notebook's author saved, as checks in batch mode (issue 26): a fix must show what the
cell showed when it worked; what differs between library versions only is tolerated."""

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_fixloop.batch import cli as batch_cli
from jupyter_fixloop.batch.run import SAVED_WORDS
from jupyter_fixloop.receipt.saved import saved_check, saved_output

# the same values, as pandas 1.5 / numpy 1.26 printed them and as pandas 3 / numpy 2 print them
SAME = [
    ("   a  b\n0  1  x\n1  2  y\n", "    a   b\n0   1   x\n1   2   y"),  # column widths
    ("0    1.00001\n1    2.5\nName: v, dtype: float64\n", "0    1.0\n1    2.5\nName: v, dtype: float64"),  # rounding
    ("a    x\nb    y\ndtype: object\n", "a    x\nb    y\ndtype: str"),  # pandas 3's string dtype
    ("3.1416\n", "np.float64(3.14159)"),  # numpy 2 scalars
    ("False\n", "np.False_"), ("[True, False]\n", "[np.True_, np.False_]"),  # numpy 2's bool scalars (NEP 51)
    ("Int64Index([1, 2, 3], dtype='int64')\n", "Index([1, 2, 3], dtype='int64')"),
    ("Period('2007', 'A-DEC')\n", "Period('2007', 'Y-DEC')"),  # pandas 2.2's frequency names
    ("DatetimeIndex(['2000-01-31', '2000-02-29'],\n dtype='datetime64[ns]', freq='BM')\n",
     "DatetimeIndex(['2000-01-31', '2000-02-29'],\n dtype='datetime64[us]', freq='BME')"),
    ("array([ 0.6,  0.4,  0.2])\n", "array([0.6, 0.4, 0.2])"),  # numpy 1.13's padding for a sign
    # an index's repr wrapped one value a line by pandas 0.20, two a line by pandas 3 (and `S` is `s` since 2.2)
    ("DatetimeIndex(['2014-08-01 12:10:01',\n               '2014-08-01 12:10:02',\n"
     "               '2014-08-01 12:10:03'],\n              dtype='datetime64[ns]', freq='S')\n",
     "DatetimeIndex(['2014-08-01 12:10:01', '2014-08-01 12:10:02',\n               '2014-08-01 12:10:03'],\n"
     "              dtype='datetime64[us]', freq='s')"),
    ("0    4\n1    5\n    ..\n9    6\nFreq: 10S, Length: 600, dtype: int64\n",
     "0    4\n1    5\n    ..\n9    6\nFreq: 10s, Length: 600, dtype: int64"),  # a long series' footer
    ("[[ 1.5  2. ]\n [ 3.   4. ]]\n", "[[1.5 2. ]\n [3.  4. ]]"),
    # durations under a day: pandas 0.25 left out the zero days where every value was under one, pandas 3 shows them
    ("TimedeltaIndex(['00:10:00', '00:20:00', '00:30:00'], dtype='timedelta64[ns]', freq=None)\n",
     "TimedeltaIndex(['0 days 00:10:00', '0 days 00:20:00', '0 days 00:30:00'],\n"
     "               dtype='timedelta64[us]', freq=None)"),
    ("0   00:10:00\n1   00:20:00\ndtype: timedelta64[ns]\n", "0   0 days 00:10:00\n1   0 days 00:20:00\n"
                                                              "dtype: timedelta64[us]"),
    # `df.dtypes` under pandas 1 and pandas 3 (its string dtype; 2.0 keeps the unit a value was parsed with)
    ("flags        object\ndate    datetime64[ns]\ntemp_C     float64\ndtype: object\n",
     "flags            str\ndate    datetime64[us]\ntemp_C     float64\ndtype: object"),
    # a library's class by its inner path (IPython showing `type(x)` under pandas 1) and by its public one (pandas 3)
    ("pandas.core.series.Series\n", "pandas.Series"),
    ("<class 'pandas.core.frame.DataFrame'>\n", "<class 'pandas.DataFrame'>"),
    # a long Series truncated around `..`: 3 rows each side saved (60 by default before pandas 0.25), 2 now
    ("0    10\n1    11\n2    12\n     ..\n97    7\n98    8\n99    9\nName: v, Length: 100, dtype: int64\n",
     "0    10\n1    11\n     ..\n98    8\n99    9\nName: v, Length: 100, dtype: int64"),
    ("    a  b\n0   1  2\n1   3  4\n..  .. ..\n8   5  6\n9   7  8\n\n[10 rows x 2 columns]\n",
     "    a  b\n0   1  2\n..  .. ..\n9   7  8\n\n[10 rows x 2 columns]"),
]
DIFFERENT = [
    ("array([ 0.6,  0.4])\n", "array([0.6, 0.5])"),
    ("array([ 0.1192])\n", "array([-0.1192])"),  # a sign is a value
    ("a    4\ndtype: int64\n", "a    3\ndtype: int64"),
    ("   a\n0  1\n1  2\n", "   a\n0  1"),
    ("total: 6\n", "total: 12"),
    ("Period('2007', 'A-DEC')\n", "Period('2007', 'Y-JUN')"),  # another frequency
    ("Period('2007-01', 'M')\n", "Period('2007-01', 'D')"),
    ("DatetimeIndex(['2014-08-01 12:10:01',\n               '2014-08-01 12:10:02'],\n              freq='S')\n",
     "DatetimeIndex(['2014-08-01 12:10:01', '2014-08-01 12:10:03'],\n              freq='s')"),  # another value
    ("DatetimeIndex(['2014-08-01 12:10:01',\n               '2014-08-01 12:10:02'],\n              freq='S')\n",
     "DatetimeIndex(['2014-08-01 12:10:02', '2014-08-01 12:10:01'],\n              freq='s')"),  # another order
    ("0    4\nFreq: S, Length: 600, dtype: int64\n", "0    4\nFreq: min, Length: 600, dtype: int64"),
    ("0    4\nFreq: S, Length: 600, dtype: int64\n", "0    4\nFreq: s, Length: 60, dtype: int64"),
    ("pandas.core.series.Series\n", "pandas.DataFrame"),  # another class
    ("flags        object\ntemp_C     float64\n", "flags            str\ntemp_C       int64"),  # another dtype
    ("date    datetime64[ns]\n", "date    timedelta64[us]"),
    ("TimedeltaIndex(['00:10:00', '00:20:00'], dtype='timedelta64[ns]', freq=None)\n",
     "TimedeltaIndex(['1 days 00:10:00', '0 days 00:20:00'], dtype='timedelta64[us]', freq=None)"),  # a day more
    ("0   00:10:00\ndtype: timedelta64[ns]\n", "0   -1 days +00:10:00\ndtype: timedelta64[us]"),  # negative
    ("pandas.core.frame.Frame\n", "pandas.Frame"),  # a path that names no class of today's pandas
    ("0    10\n1    11\n2    12\n     ..\n97    7\n98    8\n99    9\nName: v, Length: 100, dtype: int64\n",
     "0    10\n1    11\n     ..\n98    8\n99    6\nName: v, Length: 100, dtype: int64"),  # another last value
    ("0    10\n1    11\n2    12\n3    13\n4    14\n", "0    10\n     ..\n4    14"),  # truncated where none was
]


@pytest.mark.parametrize("saved,now", SAME)
def test_what_differs_between_library_versions_only_is_tolerated(saved, now):
    assert saved_check("", now, saved)[0]


@pytest.mark.parametrize("saved,now", DIFFERENT)
def test_a_different_result_fails_and_the_diff_shows_the_lines(saved, now):
    passed, detail, diff = saved_check("", now, saved)
    assert not passed and "differ" in detail
    assert any(line.startswith("-") for line in diff)  # a saved line this run does not show


def test_the_saved_text_is_stdout_and_the_result_not_images_or_stderr():
    outputs = [new_output("stream", name="stdout", text="rows: 2\n"), new_output("stream", name="stderr",
                                                                                 text="warn\n"),
               new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"}),
               new_output("execute_result", data={"text/plain": "   a\n0  1"}, execution_count=3)]
    assert saved_output(outputs) == "rows: 2\n   a\n0  1\n"
    assert saved_output([new_output("error", ename="KeyError", evalue="'a'", traceback=[])]) is None
    assert saved_output([]) is None


def _notebook(path, *cells):
    nb = new_notebook(cells=[new_code_cell(src, outputs=[new_output("stream", name="stdout", text=out)] if out else [],
                                           execution_count=i + 1) for i, (src, out) in enumerate(cells)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return str(path)


def _scripted(server, src: str, out: str, *flags: str) -> int:
    """Batch mode on `src` with the scripted model's fixes run unreviewed; its exit code."""
    return batch_cli.main([src, "-o", out, "--model", "openai/scripted", "--api-base", server.url, "--no-rules",
                           "--accept-unreviewed", *flags])


def test_a_candidate_whose_output_differs_from_the_saved_one_is_a_failed_round(tmp_path, fake_model, capsys):
    server = fake_model("```python\ntotal = sum(values) * 2\nprint(total)\n```",
                        "```python\ntotal = sum(values)\nprint(total)\n```")
    server.repeat_last = False
    src = _notebook(tmp_path / "saved.ipynb", ("values = [1, 2, 3]", ""), ("total = sum(valuez)\nprint(total)", "6\n"))
    out = str(tmp_path / "saved.out.ipynb")

    assert _scripted(server, src, out) == 0, capsys.readouterr()
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == "total = sum(values)\nprint(total)"
    rounds = nb.cells[1].metadata["fixloop"]["rounds"]
    first = rounds[0]["receipt"]["text"]
    assert "FAILED: output matches the one saved in the notebook" in first and "-6" in first and "+12" in first
    assert SAVED_WORDS in capsys.readouterr().out

    server = fake_model("```python\ntotal = sum(values) * 2\nprint(total)\n```")
    assert _scripted(server, src, out, "--no-saved-outputs") == 3  # runs, nothing checked it
    assert "saved outputs not used (--no-saved-outputs)" in capsys.readouterr().out


def test_a_random_cell_does_not_take_the_saved_outputs_of_cells_that_do_not_read_it(tmp_path, fake_model, capsys):
    """Issue 38: saved outputs are trusted per cell. An unseeded random cell no longer shows its saved
    output, but the cell below it reads nothing it made: its saved output still checks a fix, and a
    wrong first candidate is a failed round, not an unverified fix."""
    server = fake_model("```python\ntotal = sum(prices) * 2\nprint(total)\n```",
                        "```python\ntotal = sum(prices)\nprint(total)\n```")
    server.repeat_last = False
    src = _notebook(tmp_path / "random.ipynb", ("import random\nprint(random.random())", "0.5488135039273248\n"),
                    ("prices = [3, 4]", ""), ("total = sum(price)\nprint(total)", "7\n"))
    out = str(tmp_path / "random.out.ipynb")

    assert _scripted(server, src, out) == 0, capsys.readouterr()
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[2].source == "total = sum(prices)\nprint(total)"
    assert "FAILED: output matches the one saved" in nb.cells[2].metadata["fixloop"]["rounds"][0]["receipt"]["text"]
    assert SAVED_WORDS in capsys.readouterr().out


def test_a_cell_that_reads_random_data_is_not_checked_by_its_saved_output_unless_it_was_seeded(tmp_path, capsys):
    """What a cell reads decides: data drawn without a seed makes another output here, so a cell reading
    it is not held to its saved output, and the words say which name and why; drawn after a seed, it is
    the same data, and the saved output checks the fix."""
    import numpy as np

    np.random.seed(7)
    data = np.random.randint(0, 100, 6)
    saved = f"{int(data.sum())}\n"
    unseeded = _notebook(tmp_path / "unseeded.ipynb",
                         ("import numpy as np\ndata = np.random.randint(0, 100, 6)", ""),
                         ("print(int(dta.sum()))", saved))

    assert batch_cli.main([unseeded, "-o", str(tmp_path / "unseeded.out.ipynb")]) == 3  # the fix runs, unverified

    printed = capsys.readouterr().out
    assert ("its saved output is not a check here: it reads `data`, not as saved (cell 1 draws random numbers "
            "without a seed)") in printed, printed

    seeded = _notebook(tmp_path / "seeded.ipynb", ("import numpy as np\nnp.random.seed(7)", ""),
                       ("data = np.random.randint(0, 100, 6)", ""), ("print(int(dta.sum()))", saved))
    assert batch_cli.main([seeded, "-o", str(tmp_path / "seeded.out.ipynb")]) == 0
    assert SAVED_WORDS in capsys.readouterr().out


def test_a_cell_whose_saved_output_is_not_shown_again_leaves_what_it_made_in_doubt(tmp_path, capsys):
    """A cell that runs here but shows another output than the one saved (a library that computes
    differently, a clock) made values that are not the author's: a cell that reads them is not checked
    against its saved output; a cell that does not read them still is."""
    src = _notebook(tmp_path / "drifted.ipynb", ("rate = 3\nprint(rate)", "2\n"), ("base = 10", ""),
                    ("print(bse * rate)", "20\n"), ("print(bse + 1)", "11\n"))

    assert batch_cli.main([src, "-o", str(tmp_path / "drifted.out.ipynb")]) == 3

    printed = capsys.readouterr().out
    assert "it reads `rate`, not as saved (cell 1 shows another output than the one saved)" in printed, printed
    cell4 = re.search(r"cell 4: .* -- (.*)", printed).group(1)
    assert cell4.startswith(f"fixed: {SAVED_WORDS}"), cell4


def test_the_authors_own_error_is_kept_as_written(tmp_path, capsys):
    """Issue 38: a tutorial raises on purpose and saved the traceback. Raising the same exception now,
    the cell is the author's example: left as written, neither fixed nor failed. A cell whose saved
    error is of another type, or that ran when saved, is repaired as usual."""
    cells = [("import numpy as np\nflags = np.array([True, False])\nother = np.array([True, True])", None),
             ("flags and other", ("ValueError", "The truth value of an array with more than one element is "
                                  "ambiguous. Use a.any() or a.all()")),
             ("flags & other", None),
             ("print(flags.sum() + offset)", ("KeyError", "'offset'"))]  # saved another error: not an example
    nb = new_notebook(cells=[
        new_code_cell(src, outputs=[] if err is None else [new_output("error", ename=err[0], evalue=err[1],
                                                                      traceback=[])])
        for src, err in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = str(tmp_path / "teaching.ipynb")
    nbformat.write(nb, src)
    out, report = str(tmp_path / "teaching.out.ipynb"), str(tmp_path / "teaching.md")

    code = batch_cli.main([src, "-o", out, "--report", report, "--max-rounds", "1"])

    printed = capsys.readouterr().out
    assert code == 1, printed  # cell 4 cannot be fixed (`offset` is defined nowhere)
    assert "raising as saved (the author's examples)" in printed and "1 raising as saved" in printed
    assert ("cell 2: flags and other -- raised when saved too (the author's example): the saved output shows the "
            "same ValueError; left as written") in printed
    result = nbformat.read(out, as_version=4)
    assert result.cells[1].source == "flags and other" and "fixloop" not in result.cells[1].metadata
    assert "ValueError" in result.cells[1].outputs[0]["ename"]
    assert "fixloop" in result.cells[3].metadata  # repaired as usual (and not fixed)
    text = Path(report).read_text()
    assert "## Cell 2: raised when saved too (the author's example)" in text
    assert "- raised in the notebook, as when it was saved: `ValueError: The truth value" in text


def test_a_repair_the_saved_output_turns_down_is_said_so_not_no_repair(tmp_path, capsys):
    """The built-in engine repairs the drift (`np.float`), the repaired cell runs but prints another number
    than the one saved: the cell is not fixed, and its status says a repair ran and the saved output turned
    it down, not that the engine has no repair."""
    src = _notebook(tmp_path / "drift.ipynb", ("import numpy as np\nvalues = [1.5, 2.5]", ""),
                    ("total = np.float(sum(values))\nprint(total)", "5.0\n"))
    out, report = str(tmp_path / "drift.out.ipynb"), str(tmp_path / "drift.md")

    assert batch_cli.main([src, "-o", out, "--report", report]) == 1

    printed = capsys.readouterr().out
    cell2 = re.search(r"cell 2: .* -- (.*)", printed).group(1)
    assert cell2.startswith("FAILED: a repair ran (round 1), but its output differs from the output saved in the "
                            "notebook (1 line(s) shown, 1 saved; 2 line(s) differ), so it was not applied"), cell2
    assert "no repair for this" not in cell2
    assert "the cell is left as it was" in Path(report).read_text()
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == "total = np.float(sum(values))\nprint(total)"
    assert nb.cells[1].metadata["fixloop"]["rounds"][0]["receipt"]["kind"] == "check_failed"


def test_a_later_output_that_disagrees_with_a_fix_is_said_and_the_fix_is_not_called_verified(tmp_path, capsys):
    """Issue 40: a fix makes the cells below it run (the following cell that failed before it runs now: the
    loop's evidence), but a cell that reads what it made, through another cell, prints another number than the
    notebook saved: that cell says so, and the fix is `unverified`, its words naming that cell (the fix, or the
    library's numbers since); where the saved number is shown again, the fix stays verified."""
    def notebook(name, saved):
        return _notebook(tmp_path / name, ("import pandas as pd\ns = pd.Series([1.0, 2.0, 6.0])", ""),
                         ("spread = s.mad()", ""), ("half = spread / 2", ""), ("print(half)", saved))

    out, report = str(tmp_path / "later.out.ipynb"), str(tmp_path / "later.md")
    assert batch_cli.main([notebook("later.ipynb", "1.25\n"), "-o", out, "--report", report]) == 3

    printed = capsys.readouterr().out
    cell2 = re.search(r"cell 2: .* -- (.*)", printed).group(1)
    assert cell2.startswith("runs now, unverified: not verified: cell 4, which reads what it made (`half`), shows "
                            "another output than the one saved (-1.25 | +1.0)"), cell2
    cell4 = re.search(r"cell 4: .* -- (.*)", printed).group(1)
    assert cell4 == ("ok: shows another output than the one saved (-1.25 | +1.0); it reads `half`, which the fix of "
                     "cell 2 made"), cell4
    record = nbformat.read(out, as_version=4).cells[1].metadata["fixloop"]
    assert record["status"] == "unverified" and record["reason"].startswith("not verified: cell 4")
    assert "shows another output than the one saved" in Path(report).read_text()

    assert batch_cli.main([notebook("agrees.ipynb", "1.0\n"), "-o", str(tmp_path / "agrees.out.ipynb")]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"cell 2: .* -- fixed", printed) and "another output" not in printed, printed

    # a cell below that shows its saved output does not undo the disagreement above it: the fix stays unverified
    both = _notebook(tmp_path / "both.ipynb", ("import pandas as pd\ns = pd.Series([1.0, 2.0, 6.0])", ""),
                     ("spread = s.mad()", ""), ("half = spread / 2", ""), ("print(half)", "1.25\n"),
                     ("print(spread)", "2.0\n"))
    assert batch_cli.main([both, "-o", str(tmp_path / "both.out.ipynb")]) == 3
    printed = capsys.readouterr().out
    assert re.search(r"cell 2: .* -- runs now, unverified: not verified: cell 4", printed), printed


def test_a_wide_frame_wrapped_at_another_display_width_is_the_same_output():
    """pandas prints a wide frame in blocks at its display width (`\\` ends the first line of each block but the
    last; each block repeats the index): saved at one width and shown at another, or in one block, it is the
    same frame; a value that differs still fails."""
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame(np.arange(12).reshape(2, 6) * 1000.5, columns=list("uvwxyz"), index=["first", "second"])
    frame.columns = pd.MultiIndex.from_product([["left", "right"], ["a", "b", "c"]], names=[None, "part"])
    one, narrow, wider = (frame.to_string(line_width=w) for w in (None, 30, 45))
    assert "\\\n" in narrow and "\\\n" in wider  # wrapped, at two places
    assert saved_check("", one, narrow + "\n")[0] and saved_check(narrow + "\n", None, wider)[0]
    changed = frame.copy()
    changed.iloc[1, 5] = 1.0
    passed, _, diff = saved_check("", changed.to_string(line_width=30), wider)
    assert passed is False and any(line.startswith("-") and "11005.5" in line for line in diff)


def test_an_object_shown_by_its_default_repr_is_no_value_to_compare():
    """`resample("2H")` showed `DatetimeIndexResampler [freq=...]` under pandas 0.2x; today the resampler has
    object's own repr, with an address: the saved line cannot tell a repair right or wrong. Another class, or
    a value where the object was, still differs."""
    saved = "DatetimeIndexResampler [freq=<2 * Hours>, axis=0, closed=left, label=left, convention=start, base=0]\n"
    now = "<pandas.core.resample.DatetimeIndexResampler object at 0x7f3a2c1d9e50>"
    passed, detail, diff = saved_check("", now, saved)
    assert passed is None and "`DatetimeIndexResampler` is shown by its default repr" in detail and diff == []
    assert saved_check("", "<pandas.core.resample.PeriodIndexResampler object at 0x7f3a>", saved)[0] is False
    assert saved_check("", now, "42\n")[0] is False
    assert saved_check("rows: 3\n", now, "rows: 4\n" + saved)[0] is False  # another line differs too


def test_a_repair_whose_object_has_lost_its_repr_is_applied_and_verified_by_the_cell_below(tmp_path, capsys):
    src = _notebook(tmp_path / "resampler.ipynb",
                    ("import pandas as pd\ns = pd.Series([1.0, 2.0, 3.0, 4.0], "
                     "index=pd.date_range('2020-01-01', periods=4, freq='h'))", ""),
                    ('r = s.resample("2H")\nr', "DatetimeIndexResampler [freq=<2 * Hours>, axis=0, closed=left, "
                     "label=left, convention=start, base=0]\n"),
                    ("print(r.mean().tolist())", "[1.5, 3.5]\n"))
    assert batch_cli.main([src, "-o", str(tmp_path / "resampler.out.ipynb")]) == 0
    printed = capsys.readouterr().out
    cell2 = re.search(r"cell 2: .* -- (.*)", printed).group(1)
    assert cell2.startswith("fixed"), cell2
    assert 'resample("2h")' in nbformat.read(str(tmp_path / "resampler.out.ipynb"), as_version=4).cells[1].source

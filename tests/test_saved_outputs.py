"""Outputs a notebook's author saved, as checks in batch mode (issue 26): a fix must show what the
cell showed when it worked; what differs between library versions only is tolerated."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_fixloop.batch import cli as batch_cli
from jupyter_fixloop.receipt.saved import saved_check, saved_output

# the same values, as pandas 1.5 / numpy 1.26 printed them and as pandas 3 / numpy 2 print them
SAME = [
    ("   a  b\n0  1  x\n1  2  y\n", "    a   b\n0   1   x\n1   2   y"),  # column widths
    ("0    1.00001\n1    2.5\nName: v, dtype: float64\n", "0    1.0\n1    2.5\nName: v, dtype: float64"),  # rounding
    ("a    x\nb    y\ndtype: object\n", "a    x\nb    y\ndtype: str"),  # pandas 3's string dtype
    ("3.1416\n", "np.float64(3.14159)"),  # numpy 2 scalars
    ("Int64Index([1, 2, 3], dtype='int64')\n", "Index([1, 2, 3], dtype='int64')"),
]
DIFFERENT = [
    ("a    4\ndtype: int64\n", "a    3\ndtype: int64"),
    ("   a\n0  1\n1  2\n", "   a\n0  1"),
    ("total: 6\n", "total: 12"),
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


def test_a_candidate_whose_output_differs_from_the_saved_one_is_a_failed_round(tmp_path, fake_model, capsys):
    server = fake_model("```python\ntotal = sum(values) * 2\nprint(total)\n```",
                        "```python\ntotal = sum(values)\nprint(total)\n```")
    server.repeat_last = False
    src = _notebook(tmp_path / "saved.ipynb", ("values = [1, 2, 3]", ""), ("total = sum(valuez)\nprint(total)", "6\n"))
    out = str(tmp_path / "saved.out.ipynb")

    code = batch_cli.main([src, "-o", out, "--model", "openai/scripted", "--api-base", server.url, "--no-rules",
                           "--accept-unreviewed"])

    assert code == 0, capsys.readouterr()
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[1].source == "total = sum(values)\nprint(total)"
    rounds = nb.cells[1].metadata["fixloop"]["rounds"]
    first = rounds[0]["receipt"]["text"]
    assert "FAILED: output matches the one saved in the notebook" in first and "-6" in first and "+12" in first
    assert "fixed (matches the output saved in the notebook)" in capsys.readouterr().out

    server = fake_model("```python\ntotal = sum(values) * 2\nprint(total)\n```")
    assert batch_cli.main([src, "-o", out, "--model", "openai/scripted", "--api-base", server.url, "--no-rules",
                           "--accept-unreviewed", "--no-saved-outputs"]) == 3  # runs, nothing checked it
    assert "saved outputs not used (--no-saved-outputs)" in capsys.readouterr().out


def test_saved_outputs_are_not_checks_once_the_notebook_no_longer_reproduces_them(tmp_path, capsys):
    """A notebook of random numbers without a seed cannot show its saved outputs again: a fix is not
    failed for that, and the words say why it was not checked."""
    src = _notebook(tmp_path / "random.ipynb", ("import random\nprint(random.random())", "0.5488135039273248\n"),
                    ("prices = [3, 4]\nprint(sum(price))", "7\n"))

    assert batch_cli.main([src, "-o", str(tmp_path / "random.out.ipynb")]) == 3  # the fix runs, unverified

    printed = capsys.readouterr().out
    assert "its saved output is not a check here: cell 1 already shows another output than the one saved" in printed

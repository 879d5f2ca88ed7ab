"""The user's code runs once, where the user ran it (issue 51): batch mode never runs a cell a second time
in the notebook's folder (no second, plain run to count plain Jupyter's cells; no fix or cause repair run
again over a cell whose run changed files), and a candidate that only deletes lines is the model's.

Each notebook here is also run once plainly (nbclient, errors allowed) in a folder of its own: the files
batch mode leaves must be exactly those."""

import io
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_fixloop.batch import cli as batch_cli
from jupyter_fixloop.batch.once import Cell, plain_count


def write_notebook(folder: Path, name: str, *cells: str) -> str:
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / name
    nbformat.write(nb, str(path))
    return str(path)


def plain_jupyter(src: str, folder: Path) -> Path:
    """Copy the notebook's folder (as it was before any run) and run the notebook there once, as plain
    Jupyter does; the copy."""
    there = shutil.copytree(Path(src).parent, folder)
    nb = nbformat.read(str(there / Path(src).name), as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(there)}}).execute()
    return there


def append(n: int) -> str:
    return f"open('ledger.txt', 'a').write('cell {n}\\n')"


# every cell appends a line; cell 2 appends, then raises on a typo the built-in rules repair
LEDGER = (f"{append(1)}\nvalues = [1, 2, 3]",
          f"{append(2)}\ntotal = sum(valuez)\nprint(total)",
          f"{append(3)}\nprint(len(values))",
          f"{append(4)}\nprint(total)")

# a cell rewrites a CSV in place (prices x 1.1); a later cell fails on a typo the rules repair, which then runs
PRICES = ("import csv\nrows = list(csv.DictReader(open('prices.csv')))",
          "for r in rows:\n    r['price'] = round(float(r['price']) * 1.1, 2)\n"
          "with open('prices.csv', 'w', newline='') as f:\n"
          "    w = csv.DictWriter(f, ['item', 'price'])\n    w.writeheader()\n    w.writerows(rows)",
          "total = sum(float(r['price']) for r in rowz)\nprint(total)",
          "print(len(rows))",
          "print(round(total, 2))")


def _folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "prices.csv").write_text("item,price\na,10\nb,20\n")
    return folder


@pytest.mark.parametrize("flags", [[], ["--interactive"]], ids=["default", "interactive-accepting-all"])
def test_a_ledger_and_a_csv_rewritten_in_place_hold_what_one_plain_jupyter_run_leaves(tmp_path, monkeypatch,
                                                                                       capsys, flags):
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\n" * 20))  # --interactive: every question answered "accept"
    ledger = write_notebook(_folder(tmp_path, "ledger"), "ledger.ipynb", *LEDGER)
    prices = write_notebook(_folder(tmp_path, "prices"), "prices.ipynb", *PRICES)
    plain_ledger = plain_jupyter(ledger, tmp_path / "plain-ledger")
    plain_prices = plain_jupyter(prices, tmp_path / "plain-prices")

    assert batch_cli.main([ledger, *flags]) == 1  # cell 2's fix is proposed, not run
    # cell 3's fix runs (its original changed no file); only later cells that run back it: unverified (exit 3)
    assert batch_cli.main([prices, *flags]) == 3

    printed = capsys.readouterr().out
    ledger_text = (Path(ledger).parent / "ledger.txt").read_text()
    assert ledger_text == (plain_ledger / "ledger.txt").read_text() == "cell 1\ncell 2\ncell 3\ncell 4\n"
    assert (Path(prices).parent / "prices.csv").read_text() == (plain_prices / "prices.csv").read_text()
    assert "a,11.0\nb,22.0" in (plain_prices / "prices.csv").read_text()  # x 1.1, once
    nb = nbformat.read(str(Path(ledger).with_suffix(".fixed.ipynb")), as_version=4)
    record = nb.cells[1].metadata["fixloop"]
    assert record["decision"] == "pending" and "sum(values)" in record["patched"] and not record["model_written"]
    assert "its run there already changed files of the notebook's folder (cell 2: `ledger.txt`)" in printed
    # plain Jupyter's count, from the run itself: the cells before cell 3 and cell 4 (it reads `rows`, which
    # the fix did not touch) ran there; cell 5 reads `total`, which the fix made: not known
    assert "5 cells run (plain Jupyter: 3; 1 unknown)" in printed
    fixed = nbformat.read(str(Path(prices).with_suffix(".fixed.ipynb")), as_version=4)
    assert fixed.cells[2].source == PRICES[2].replace("rowz", "rows")
    assert fixed.cells[4].outputs[0]["text"] == "33.0\n"


# the merge's keys match only once their case agrees (the built-in rules' change at the cause); the cause
# cell and the cell between it and the failing one append to the ledger
FRAMES = ("import pandas as pd\n"
          "customers = pd.DataFrame({'cust': ['C01', 'C02', 'C03'], 'name': ['Ann', 'Bob', 'Cy']})\n"
          "orders = pd.DataFrame({'cust': ['c01', 'c03', 'c03'], 'amount': [5, 7, 9]})")
CAUSE = "merged = orders.merge(customers, on='cust', how='left')"
SYMPTOM = "assert merged['name'].notna().all(), 'an order has no customer name'\nprint(len(merged))"


@pytest.mark.parametrize("flags", [[], ["--interactive"]], ids=["default", "interactive-accepting-all"])
def test_a_cause_repair_never_runs_cells_again_whose_runs_wrote_files(tmp_path, monkeypatch, capsys, flags):
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\n" * 20))
    src = write_notebook(_folder(tmp_path, "cause"), "cause.ipynb", FRAMES, f"{append(2)}\n{CAUSE}",
                         f"{append(3)}\nn = len(orders)", f"{append(4)}\n{SYMPTOM}")
    plain = plain_jupyter(src, tmp_path / "plain-cause")
    free = write_notebook(_folder(tmp_path, "free"), "free.ipynb", FRAMES, CAUSE, "n = len(orders)", SYMPTOM)

    report = tmp_path / "cause.md"
    assert batch_cli.main([src, "--report", str(report), *flags]) == 1
    assert batch_cli.main([free, *flags]) == 0  # the same change where no cell wrote a file: applied, cells re-run

    printed = capsys.readouterr().out
    assert (Path(src).parent / "ledger.txt").read_text() == (plain / "ledger.txt").read_text()
    assert (plain / "ledger.txt").read_text() == "cell 2\ncell 3\ncell 4\n"
    nb = nbformat.read(str(Path(src).with_suffix(".fixed.ipynb")), as_version=4)
    assert nb.cells[1].source == f"{append(2)}\n{CAUSE}"  # not changed in place
    record = nb.cells[1].metadata["fixloop"]
    assert record["decision"] == "pending" and "lower()" in record["patched"]  # the change, proposed
    said = report.read_text()
    assert "a change to cell 2, its cause, makes it run in a sandbox" in said
    assert "its run there already changed files of the notebook's folder (cell 2: `ledger.txt`; cell " in said
    applied = nbformat.read(str(Path(free).with_suffix(".fixed.ipynb")), as_version=4)
    assert "lower()" in applied.cells[1].source and applied.cells[3].outputs[0]["text"] == "3\n"
    if flags:  # the review showed every cell that runs again, in full
        assert "--- cell 3 ---\nn = len(orders)\n--- cell 4 ---\nassert merged['name']" in printed


CLEANUP = ("import os\n"
           "doomed = [n for n in sorted(os.listdir('.')) if n.endswith('.csv')]\n"
           "doomed = [n for n in doomed if n in expired]\n"
           "for name in doomed:\n"
           "    os.remove(name)")


def test_a_models_fix_that_only_deletes_a_line_is_the_models_and_is_not_run_unreviewed(tmp_path, fake_model,
                                                                                        capsys):
    """Issue 51, critical: a cleanup cell fails (`expired` is not defined); the model's reply is the cell minus
    the line that keeps only the expired files, so it would delete every CSV. No line of it is new, yet it is
    the model's change: proposed, never run in the notebook's kernel; the CSVs are all there."""
    folder = _folder(tmp_path, "cleanup")
    (folder / "keep.csv").write_text("a\n1\n")
    server = fake_model("```python\n" + CLEANUP.replace("doomed = [n for n in doomed if n in expired]\n", "") + "\n```")
    src = write_notebook(folder, "cleanup.ipynb", CLEANUP, "print(sorted(os.listdir('.')))")

    code = batch_cli.main([src, "--model", "openai/scripted", "--api-base", server.url, "--no-rules"])

    assert code == 1, capsys.readouterr().out
    assert (folder / "keep.csv").exists() and (folder / "prices.csv").exists()
    nb = nbformat.read(str(folder / "cleanup.fixed.ipynb"), as_version=4)
    record = nb.cells[0].metadata["fixloop"]
    assert "expired" not in record["patched"] and record["decision"] == "pending", record
    assert record["model_written"] is True and record["rounds"][-1]["model_written"] is True
    assert "model-written code nobody reviewed" in capsys.readouterr().out


def test_plain_jupyters_count_follows_what_a_change_touched():
    """The rule of batch/once.py, on its own: before the first change every cell counts as it ran; a changed
    cell as its original did; after it, a cell reading a touched name is unknown, and so is every cell after a
    change that wrote files."""
    cells = [Cell(1, True, names=frozenset({"a"})), Cell(2, True, frozenset({"a"}), frozenset({"b"}), changed=True),
             Cell(3, True, frozenset({"b"}), frozenset({"c"})), Cell(4, False, frozenset({"a"})),
             Cell(5, True, frozenset({"c"}))]
    count = plain_count(cells)
    assert (count.ran, count.unknown, count.first) == (1, 2, 2)  # 2's original raised, 3 and 5 unknown, 4 failed
    wrote = [cells[0], Cell(2, True, frozenset(), frozenset({"b"}), changed=True, plain_ran=True, wrote=True),
             Cell(3, True, frozenset({"x"}))]
    count = plain_count(wrote)
    assert (count.ran, count.unknown, count.first) == (2, 1, 2)

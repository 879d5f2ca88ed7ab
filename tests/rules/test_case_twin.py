"""A path the cell spells with other letter cases than the file has (a notebook written where the file system
ignores case, macOS' or Windows'): the kernel's fact names the twin, and `file_case_twin` spells the cell's own
string as the file is spelled here; a file not here in any case, or a path the cell does not write, is left."""

import pytest
import rewriting

from jupyter_fixloop.rules import repairs as repairs

SETUP = "import os\nimport pandas as pd\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "Data").mkdir()
    (tmp_path / "Data" / "prices.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    return tmp_path


def test_a_folder_spelled_in_other_cases_is_spelled_as_it_is_here(folder):
    ns: dict = {}
    cell = ("DATA_DIR = \"../data\"\nFILE_NAME = 'prices.csv'\n"
            "t = pd.read_csv(os.path.join(DATA_DIR, FILE_NAME))\n")
    first = rewriting.run(ns, cell, SETUP)
    assert not first.ok and first.ename == "FileNotFoundError"
    repair, fixed, _ = repairs.propose(cell, first, {"os": "os", "pd": "pandas"})
    assert repair is not None and repair.__name__ == "file_case_twin", fixed
    assert repairs.KIND[repair] == repairs.MECHANICAL
    assert fixed == cell.replace('"../data"', '"../Data"')
    again = rewriting.run(ns, fixed, SETUP)
    assert again.ok and ns["t"].shape == (2, 2)


@pytest.mark.parametrize("cell", [
    "t = pd.read_csv('../data/missing.csv')\n",  # not here in any case: the file is missing, not misspelt
    "t = pd.read_csv(PATH)\n",  # the path is written in a cell above: none of this cell's strings is a part of it
    "t = pd.read_csv('../data' + '/prices.csv')\n",  # repaired: `../data` is a whole part of the path
])
def test_a_path_not_there_or_not_written_here_is_left(folder, cell):
    ns: dict = {}
    setup = SETUP + "PATH = '../data/prices.csv'\n"
    first = rewriting.run(ns, cell, setup)
    assert not first.ok
    repair, fixed, _ = repairs.propose(cell, first, {"os": "os", "pd": "pandas"})
    if "missing" in cell or "PATH" in cell:
        assert getattr(repair, "__name__", "") != "file_case_twin", fixed
    else:  # '../data' + '/prices.csv': the string `../data` is a whole part of the path
        assert fixed == "t = pd.read_csv('../Data' + '/prices.csv')\n"

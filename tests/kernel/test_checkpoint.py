"""The state a cell started from (kernel/checkpoint.py), in-process: what is kept before a cell, what a
failed run changed, and the namespace as it was before it, for batch mode and `%fixloop auto`."""

import numpy as np
import pandas as pd
import pytest

from jupyter_fixloop.cell import cell_names, written_names
from jupyter_fixloop.kernel.checkpoint import Checkpoint, copy_on_write

FAILING = "df['x'] = df['x'] * 2\nrows.append(4)\nlabel = 'new'\ndf['y'].foo()\n"


def ran(ns: dict, code: str) -> None:
    """Run `code` in `ns` as a cell would, up to the line that raises."""
    with pytest.raises(KeyError):
        exec(code, ns)


def test_a_failed_cell_changes_are_named_and_the_state_before_it_is_given_back_untouched():
    df = pd.DataFrame({"x": [1, 2, 3], "Y": [4, 5, 6]})
    ns = {"df": df, "rows": [1, 2, 3], "pd": pd}
    checkpoint = Checkpoint()
    kept = checkpoint.save(ns, cell_names(FAILING))
    ran(ns, FAILING)
    assert ns["df"]["x"].tolist() == [2, 4, 6] and ns["rows"] == [1, 2, 3, 4]  # the failed run's work
    changes = checkpoint.changes(ns)
    assert changes == {"changed": ["df", "rows"], "created": ["label"], "uncertain": {}}
    before = checkpoint.state(ns)
    assert before["df"]["x"].tolist() == [1, 2, 3] and before["rows"] == [1, 2, 3] and "label" not in before
    # the kernel keeps what the failed run left, as plain Jupyter would
    assert ns["df"]["x"].tolist() == [2, 4, 6] and ns["label"] == "new"
    assert ("df" in kept["copy_on_write"]) == copy_on_write(df)


def test_restore_puts_the_state_back_and_keeps_what_the_cell_did_not_change():
    df = pd.DataFrame({"x": [1.0, 2.0]})
    other = pd.DataFrame({"z": [9]})
    ns = {"df": df, "other": other}
    checkpoint = Checkpoint()
    checkpoint.save(ns, ["df", "other", "made"])
    ns["df"].loc[0, "x"] = 100.0  # in place
    ns["made"] = 1
    done = checkpoint.restore(ns)
    assert done["changed"] == ["df"] and "made" not in ns
    assert ns["df"]["x"].tolist() == [1.0, 2.0]
    assert ns["other"] is other  # unchanged: the same object, so names sharing it still do


def test_a_value_that_cannot_be_copied_is_said_to_be_uncertain():
    ns = {"gen": (i for i in range(3)), "big": np.zeros(1000)}
    checkpoint = Checkpoint(cap=100)  # bytes: the array is kept by reference only
    saved = checkpoint.save(ns, ["gen", "big"])
    assert saved["uncopied"] == ["big", "gen"]
    ns["big"][0] = 1
    uncertain = checkpoint.changes(ns)["uncertain"]
    assert set(uncertain) == {"big", "gen"} and "more than the copies" in uncertain["big"]
    assert "cannot be copied" in uncertain["gen"]


def test_names_a_cell_binds_and_may_change():
    code = "import numpy as np\n%time x = 1\ndf['a'] = 1\nrows.append(2)\ndef f():\n    pass\nprint(total)\n"
    assert {"np", "df", "rows", "f", "print", "total"} <= cell_names(code)
    assert written_names(code) == {"np", "df", "rows", "f"}


class Client:
    """A library's object whose pickling is its own code (a client that reconnects when pickled)."""

    reduced = 0

    def __init__(self):
        self.sent = []

    def __reduce_ex__(self, protocol):
        Client.reduced += 1
        return (Client, ())


Client.__module__ = "somelib.client"


def test_a_library_objects_own_pickling_never_runs_before_a_cell():
    """Round four, low: a library object's `__reduce_ex__` ran before every cell that named it."""
    ns = {"client": Client(), "pending": [Client(), 1], "rows": [1, 2]}
    checkpoint = Checkpoint()
    saved = checkpoint.save(ns, ["client", "pending", "rows"])
    assert Client.reduced == 0
    assert saved["uncopied"] == ["client", "pending"] and "library's own code" in saved["why"]["client"]
    ns["rows"].append(3)  # plain data is still kept and put back
    assert checkpoint.changes(ns)["changed"] == ["rows"] and Client.reduced == 0
    checkpoint.restore(ns)
    assert ns["rows"] == [1, 2] and Client.reduced == 0


def test_a_numpy_array_over_64_kib_is_kept_and_its_in_place_change_put_back():
    """Round four, low: an array over ~64 KiB reached the pickle's writer as a PickleBuffer, so it was never kept
    and a failed in-place change to it could not be put back."""
    big = np.arange(1_000_000, dtype=np.float64)  # 8 MB
    ns = {"big": big}
    checkpoint = Checkpoint()
    saved = checkpoint.save(ns, ["big"])
    assert saved["uncopied"] == [] and saved["bytes"] >= 8_000_000
    big[:10] = -1  # the failed cell's in-place change
    assert checkpoint.changes(ns) == {"changed": ["big"], "created": [], "uncertain": {}}
    assert checkpoint.state(ns)["big"][:10].tolist() == list(range(10))
    checkpoint.restore(ns)
    assert ns["big"][:10].tolist() == list(range(10)) and np.array_equal(ns["big"], np.arange(1_000_000.0))

"""Snapshots in and out of the same process: which names travel, how values come back, what is skipped.

Notebook code is run with `exec` in a namespace whose `__name__` is `__main__`, like a kernel's, so
its functions and classes travel by value exactly as they do from a notebook.
"""

import os
import threading

import numpy as np
import pandas as pd
import pytest

from jupyter_fixloop.kernel import snapshot as snapshots
from jupyter_fixloop.kernel.snapshot import free_names, load_into, reachable, write_snapshot

NOTEBOOK = '''
import math
RATE = 1.5
def scale(v):
    return v * RATE
def unrelated(frame):
    return frame.data  # an attribute, not the global `data`
class Box:
    def __init__(self, v):
        self.v = v
    @property
    def scaled(self):
        return scale(self.v)
    def root(self):
        return math.sqrt(self.v)
data = list(range(1000))
'''


def notebook(code: str = NOTEBOOK) -> dict:
    ns = {"__name__": "__main__"}
    exec(code, ns)
    return ns


def test_free_names_are_the_names_read_not_those_only_assigned():
    names = free_names("total = price * qty\ncount += 1\ndel old\nprint(f'{label}')\n%timeit fast(frame)\n")
    assert {"price", "qty", "count", "old", "label", "print", "fast", "frame"} <= names
    assert "total" not in names
    assert "limit" in free_names("big = df.query('amount > @limit')")


def test_reachable_follows_globals_of_notebook_functions_and_classes_only():
    ns = notebook()
    assert reachable({"Box"}, ns) == ["Box", "RATE", "math", "scale"]
    assert "data" not in reachable({"unrelated"}, ns)  # `.data` is an attribute
    assert reachable({"missing"}, ns) == []


CLIENT = '''
API_TOKEN = "sk-v01-not-shared"
LIMIT = 3
def helper(v):
    return v * 2
class Client:
    def __init__(self, rows):
        self.rows = rows
    def top(self):
        return helper(self.rows[:LIMIT])
    def fetch(self):
        return {"Authorization": API_TOKEN}
client = Client([1, 2, 3, 4])
def shout():
    return API_TOKEN.upper()
handlers = {"shout": shout}
'''


def test_a_shared_object_carries_its_code_not_the_globals_its_methods_read(tmp_path):
    """V01: cloudpickle carried a shared object's class methods with their module globals, so an
    unshared API_TOKEN reached the sandbox. Its code comes along (`helper`); data it reads
    (`API_TOKEN`, `LIMIT`) does not, and reading it is a NameError."""
    ns = notebook(CLIENT)
    assert reachable({"client"}, ns) == ["Client", "client", "helper"]
    snap = write_snapshot(ns, {"client", "handlers"}, str(tmp_path / "s.bin"))
    assert "API_TOKEN" not in snap.names and {"API_TOKEN", "LIMIT"} <= set(snap.withheld)
    with open(snap.path, "rb") as f:
        assert b"sk-v01-not-shared" not in f.read()
    out = {"__name__": "__main__"}
    assert load_into(out, snap.path)["failed"] == {}
    client = out["client"]
    assert "API_TOKEN" not in type(client).fetch.__globals__
    with pytest.raises(NameError, match="API_TOKEN"):
        client.fetch()
    with pytest.raises(NameError, match="API_TOKEN"):
        out["handlers"]["shout"]()
    shared = write_snapshot(ns, {"client", "LIMIT"}, str(tmp_path / "t.bin"))  # shared by name: it travels
    again = {"__name__": "__main__"}
    load_into(again, shared.path)
    assert again["client"].top() == [1, 2, 3, 1, 2, 3] and "API_TOKEN" not in str(again)


def test_round_trip_keeps_frames_exact_and_rebinds_functions(tmp_path):
    n = 50_000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "x": rng.random(n),
        "k": rng.integers(0, 9, n),
        "region": pd.Series(np.array(["north", "süd", "east"])[rng.integers(0, 3, n)], dtype="str"),
        "note": pd.Series(["a\u00e9\ud800" if i % 7 else None for i in range(n)], dtype=object),
        "cat": pd.Categorical(["lo", "hi"] * (n // 2)),
    })
    frame.loc[5, "region"] = np.nan
    ns = notebook()
    ns["frame"], ns["np"] = frame, np
    snap = write_snapshot(ns, {"frame", "Box", "np"}, str(tmp_path / "s.bin"))
    assert set(snap.names) == {"Box", "RATE", "frame", "scale"} and snap.modules == {"np": "numpy", "math": "math"}
    assert {"pandas"} <= set(snap.imports) and "builtins" not in snap.imports
    out = {"__name__": "__main__"}
    report = load_into(out, snap.path)
    assert report["failed"] == {}
    pd.testing.assert_frame_equal(out["frame"], frame)
    assert out["frame"]["x"].to_numpy().ctypes.data % snapshots.ALIGN == 0
    assert out["Box"](4).scaled == 6.0 and out["Box"](9).root() == 3.0
    out["RATE"] = 10  # the sandbox's globals are the functions' globals, as in a kernel
    assert out["Box"](4).scaled == 40 and out["scale"](1) == 10


def test_mutating_a_loaded_frame_leaves_the_file_as_it_was(tmp_path):
    ns = {"frame": pd.DataFrame({"a": np.arange(10_000, dtype=float)}), "arr": np.ones(5000)}
    snap = write_snapshot(ns, {"frame", "arr"}, str(tmp_path / "s.bin"))
    first = {}
    load_into(first, snap.path)
    first["frame"].loc[0, "a"] = -1.0
    first["arr"] *= 3
    del first["frame"]["a"]
    second = {}
    load_into(second, snap.path)
    assert second["frame"]["a"].iloc[0] == 0.0 and second["arr"][0] == 1.0
    assert ns["arr"][0] == 1.0 and list(ns["frame"].columns) == ["a"]


def test_objects_that_cannot_travel_are_named_with_their_type(tmp_path):
    fh = open(tmp_path / "notes.txt", "w")
    try:
        ns = {"fh": fh, "lock": threading.Lock(), "gen": (i for i in range(3)), "x": 41}
        snap = write_snapshot(ns, {"fh", "lock", "gen", "x"}, str(tmp_path / "s.bin"))
    finally:
        fh.close()
    assert snap.names == ("x",)
    assert set(snap.skipped) == {"fh", "lock", "gen"}
    assert snap.skipped["fh"].startswith("TextIOWrapper: cannot be pickled")
    assert snap.skipped["gen"].startswith("generator:")
    notes = snap.notes()
    assert any(line.startswith("not mirrored: lock (lock:") for line in notes)
    out = {}
    load_into(out, snap.path)
    assert out == {"x": 41}


def test_size_cap_names_the_variable_that_was_too_big(tmp_path):
    ns = {"big": np.zeros(2_000_000), "small": [1, 2, 3]}
    snap = write_snapshot(ns, {"big", "small"}, str(tmp_path / "s.bin"), size_cap=1_000_000)
    assert snap.names == ("small",)
    assert "too big to mirror (16 MB, cap 1 MB)" in snap.skipped["big"]
    assert os.path.getsize(snap.path) < 100_000


def test_a_later_part_holds_only_the_new_names(tmp_path):
    ns = {"big": np.arange(1_000_000), "extra": {"k": 1}, "np": np}
    first = write_snapshot(ns, {"big"}, str(tmp_path / "1.bin"))
    second = write_snapshot(ns, {"big", "extra", "np"}, str(tmp_path / "2.bin"), base=first)
    assert second.files == (first.path, second.path)
    assert second.names == ("big", "extra") and second.modules == {"np": "numpy"}
    assert os.path.getsize(second.path) < 10_000  # `big` is not written again
    out = {}
    for path in second.files:
        load_into(out, path)
    assert out["extra"] == {"k": 1} and out["np"] is np and out["big"][-1] == 999_999


def test_string_arrays_with_the_separator_or_other_objects_still_round_trip(tmp_path):
    n = snapshots.STRINGS_MIN * 2
    ns = {
        "sep": np.array(["a\x00b"] + ["c"] * n, dtype=object),
        "mixed": np.array([1, "x", 2.5] * n, dtype=object),
        "grid": np.array([["p", "q"]] * n, dtype=object).T,  # Fortran-ordered 2-D strings
        "missing": pd.array(["u", None] * n, dtype="string"),
    }
    snap = write_snapshot(ns, set(ns), str(tmp_path / "s.bin"))
    out = {}
    load_into(out, snap.path)
    assert out["sep"].tolist() == ns["sep"].tolist()
    assert out["mixed"].tolist() == ns["mixed"].tolist()
    assert out["grid"].shape == (2, n) and (out["grid"] == ns["grid"]).all()
    pd.testing.assert_extension_array_equal(out["missing"], ns["missing"])


def test_a_damaged_file_names_what_could_not_be_loaded(tmp_path):
    ns = {"frame": pd.DataFrame({"a": np.arange(100_000)}), "label": "x"}
    snap = write_snapshot(ns, {"frame", "label"}, str(tmp_path / "s.bin"))
    with open(snap.path, "r+b") as f:
        f.truncate(os.path.getsize(snap.path) // 2)
    report = load_into({}, snap.path)
    assert set(report["failed"]) == {"frame", "label"}
    assert "truncated" in report["failed"]["frame"]


@pytest.mark.parametrize("bad", [b"", b"nope"])
def test_not_a_snapshot(tmp_path, bad):
    path = tmp_path / "bad.bin"
    path.write_bytes(bad)
    report = load_into({}, str(path))
    assert report["loaded"] == [] and report["failed"]


def test_snapshot_files_go_to_ram_when_it_has_room_and_spill_to_the_disk_when_not(monkeypatch):
    if snapshots.ram_root() is None:
        pytest.skip("/dev/shm is missing or has less than 1 GiB free here")
    ns = {"prices": np.arange(1000.0)}
    workdir = snapshots.scratch_dir("loop-")
    try:
        assert workdir.startswith(snapshots.ram_root() + os.sep)
        in_ram = write_snapshot(ns, {"prices"}, os.path.join(workdir, "s1.bin"))
        assert os.path.dirname(in_ram.path) == workdir
        monkeypatch.setattr(snapshots, "RAM_KEEP_FREE", 1 << 62)  # as if RAM were full
        spilled = write_snapshot({"more": 1, **ns}, {"more"}, os.path.join(workdir, "s2.bin"), base=in_ram)
        assert not spilled.path.startswith(snapshots.RAM_DIR) and spilled.parts == (in_ram.path, spilled.path)
        ns2: dict = {}
        for part in spilled.files:
            assert load_into(ns2, part)["failed"] == {}
        assert ns2["more"] == 1 and ns2["prices"].sum() == ns["prices"].sum()
    finally:
        snapshots.remove_scratch(workdir)
    assert not os.path.exists(workdir) and not os.path.exists(os.path.dirname(spilled.path))


def test_a_ram_dir_that_is_not_ours_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "RAM_DIR", str(tmp_path))
    monkeypatch.setattr(snapshots, "RAM_MIN_FREE", 0)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / f"fixloop-{os.getuid()}")  # planted by someone else
    assert snapshots.ram_root() is None
    workdir = snapshots.scratch_dir("loop-")
    try:
        assert not workdir.startswith(str(tmp_path)) and (os.stat(workdir).st_mode & 0o777) == 0o700
    finally:
        snapshots.remove_scratch(workdir)
    os.remove(tmp_path / f"fixloop-{os.getuid()}")
    assert snapshots.ram_root() == str(tmp_path / f"fixloop-{os.getuid()}")


def test_every_column_kind_comes_back_with_its_exact_dtype(tmp_path):
    n = 20_000  # past STRINGS_MIN: the joined-strings path, not plain pickling
    words = np.array(["north", "süd", "east", "west"])[np.arange(n) % 4]
    frame = pd.DataFrame({
        "obj": pd.Series(words, dtype=object),  # object stays object (pandas 2.2's default for strings)
        "obj_holes": pd.Series([None if i % 11 == 0 else (np.nan if i % 13 == 0 else f"id-{i}") for i in range(n)],
                               dtype=object),
        "str": pd.Series(words, dtype="str"),  # pandas 3's default: Arrow-backed when pyarrow is there
        "str_nan": pd.Series([None if i % 5 == 0 else f"s{i}" for i in range(n)], dtype="str"),
        "string": pd.Series([None if i % 3 == 0 else "x" for i in range(n)], dtype="string"),  # pd.NA semantics
        "cat": pd.Categorical([None if i % 7 == 0 else w for i, w in enumerate(words)]),
        "when": pd.date_range("2024-03-30", periods=n, freq="min", tz="Europe/Paris"),
        "naive": pd.date_range("2024-01-01", periods=n, freq="s"),
        "num_nan": np.where(np.arange(n) % 9 == 0, np.nan, np.arange(n, dtype=float)),
        "Int": pd.array([None if i % 4 == 0 else i for i in range(n)], dtype="Int64"),
    })
    if _has_pyarrow():
        frame["arrow"] = pd.Series([None if i % 6 == 0 else f"a{i}" for i in range(n)], dtype="string[pyarrow]")
    snap = write_snapshot({"frame": frame}, {"frame"}, str(tmp_path / "s.bin"))
    out = {}
    assert load_into(out, snap.path)["failed"] == {}
    back = out["frame"]
    assert dict(back.dtypes) == dict(frame.dtypes)
    pd.testing.assert_frame_equal(back, frame)
    assert back["obj_holes"].iloc[0] is None and np.isnan(back["obj_holes"].iloc[13])  # None and NaN kept apart


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_pyarrow(), reason="needs pyarrow")
def test_an_arrow_column_of_several_chunks_travels_as_its_chunks_not_combined(tmp_path):
    """read_csv gives string columns of many chunks: they are written as they are (pandas' own
    pickling would copy them into one), load as views of the file, and the judge reads them as data."""
    import io

    import pyarrow as pa

    from jupyter_fixloop.kernel import judge, mapped

    parts = [[f"order-{i}" for i in range(start, start + 50_000)] for start in (0, 50_000)]
    column = pd.Series(pd.array(pa.chunked_array(parts), dtype="string[pyarrow]"))
    frame = pd.DataFrame({"s": column})
    snap = write_snapshot({"frame": frame}, {"frame"}, str(tmp_path / "s.bin"))
    out = {}
    load_into(out, snap.path)
    loaded = out["frame"]["s"]
    assert loaded.equals(column) and loaded.array._pa_array.num_chunks == 2
    start, size, _ = mapped._regions[-1]
    assert all(start <= c.buffers()[2].address < start + size for c in loaded.array._pa_array.chunks)
    packed, refs = judge._Link(0, None, None).pack(loaded)
    back = judge.DataLoader(io.BytesIO(packed), buffers=[judge._buffer_of(r) for r in refs]).load()
    assert back.equals(column)


def test_arrow_string_columns_load_as_views_of_the_file_not_copies(tmp_path):
    from jupyter_fixloop.kernel import mapped

    n = 100_000
    frame = pd.DataFrame({"s": pd.Series([f"order-{i}" for i in range(n)], dtype="string[pyarrow]")})
    snap = write_snapshot({"frame": frame}, {"frame"}, str(tmp_path / "s.bin"))
    assert snap.nbytes < 2 * frame["s"].array._pa_array.nbytes  # one copy of the strings, not two
    out = {}
    load_into(out, snap.path)
    chunk = out["frame"]["s"].array._pa_array.chunk(0)
    start, size, _ = mapped._regions[-1]
    data = chunk.buffers()[2]
    assert start <= data.address < start + size  # the strings are the file's pages
    assert mapped.locate(memoryview(data)) is not None  # and none of them written yet

"""The checks' judge (kernel/judge.py) and the host's reading of its verdict (loop/verdict.py): the
signature, the data-only loader, and a real forked judge evaluating checks on what it was sent."""

from __future__ import annotations

import io
import json
import os
import pathlib
import pickle

import pytest

from jupyter_fixloop.kernel import judge
from jupyter_fixloop.loop import verdict


class Shell:
    """A pickle whose loading would run a shell command."""

    def __reduce__(self):
        return (os.system, ("echo owned",))


def signed(outcomes: list[dict]) -> tuple[str, dict]:
    secret = os.urandom(2 * judge.BITS * judge.SECRET)
    text = json.dumps({"checks": outcomes}, sort_keys=True)
    return judge.public_key(secret), {"text": text, "signature": judge.sign(secret, text.encode())}


def armed(checks: list[str], cell: str = "") -> str:
    """Arm the judge with the checks, then hand it the cell, as a sandbox does (the pool's `arm`
    request, then the run's): its public key."""
    key = judge.arm(checks)
    judge.give_cell(cell)
    return key



def test_the_judges_signature_verifies_and_a_tampered_verdict_does_not():
    key, signed_verdict = signed([{"expr": "x == 2", "passed": False, "detail": "x is 1, expected 2"}])
    text, signature = signed_verdict["text"], signed_verdict["signature"]
    assert (verdict.BITS, verdict.SECRET) == (judge.BITS, judge.SECRET)  # the host checks what the judge signs
    assert verdict.verify(key, text.encode(), signature)
    forged = text.replace("false", "true")
    assert not verdict.verify(key, forged.encode(), signature)
    assert not verdict.verify(key, text.encode(), signature[:-2] + ("00" if signature[-2:] != "00" else "11"))
    assert not verdict.verify(key, text.encode(), "zz")
    other_key, _ = signed([])
    assert not verdict.verify(other_key, text.encode(), signature)


def test_the_host_counts_a_check_only_as_the_signed_verdict_has_it():
    checks = ["x == 2"]
    claimed = {"status": "ok", "error": None, "checks": [{"expr": "x == 2", "passed": True, "detail": ""}]}
    key, honest = signed([{"expr": "x == 2", "passed": False, "detail": "x is 1, expected 2"}])
    assert verdict.judged({**claimed, "verdict": honest}, checks, key)["checks"] == [
        {"expr": "x == 2", "passed": False, "detail": "x is 1, expected 2"}]
    passing = json.loads(honest["text"].replace("false", "true"))
    forged = {"text": json.dumps(passing, sort_keys=True), "signature": honest["signature"]}
    refused = {"expr": verdict.FORGED, "passed": False, "detail": ""}
    assert verdict.judged({**claimed, "verdict": forged}, checks, key)["checks"][-1] == refused  # bad signature
    assert verdict.judged(claimed, checks, key)["checks"][-1] == refused  # no verdict
    assert verdict.judged({**claimed, "verdict": honest}, checks, None)["checks"][-1] == refused  # no key
    # signed, but for other checks than the host sent
    key2, other = signed([{"expr": "True", "passed": True, "detail": ""}])
    assert verdict.judged({**claimed, "verdict": other}, checks, key2)["checks"][-1]["expr"] == verdict.FORGED


def test_the_data_only_loader_refuses_a_reduce_that_calls_os_system():
    with pytest.raises(pickle.UnpicklingError, match="not data"):
        judge.DataLoader(io.BytesIO(pickle.dumps(Shell()))).load()
    with pytest.raises(pickle.UnpicklingError):
        judge.DataLoader(io.BytesIO(pickle.dumps([1, {"a": Shell()}]))).load()
    assert judge.DataLoader(io.BytesIO(pickle.dumps([1, "a", {"b": (2.5, None)}]))).load() == [
        1,
        "a",
        {"b": (2.5, None)},
    ]


def test_the_data_only_loader_reads_numpy_and_pandas_data_but_no_file_opener():
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2], "s": ["p", None], "d": pd.to_datetime(["2020-01-01", "2021-01-01"]),
                          "c": pd.Categorical(["u", "v"])})
    for value in (frame, frame["a"], np.arange(5), np.float64(1.5), pd.Timestamp("2020", tz="UTC"), pd.NA):
        blob = pickle.dumps(value, protocol=5)
        back = judge.DataLoader(io.BytesIO(blob)).load()
        assert type(back) is type(value)
    assert judge.DataLoader(io.BytesIO(pickle.dumps(frame, protocol=5))).load().equals(frame)
    assert not judge.allowed("numpy", "memmap", np.memmap)
    assert not judge.allowed("pandas", "read_pickle", pd.read_pickle)
    assert not judge.allowed("numpy", "load", np.load)


def test_a_forked_judge_evaluates_the_checks_on_what_it_was_sent():
    def fib(n):
        return 13

    class Box:
        v = 3

        def get(self):
            return self.v

    ns = {"x": 1, "fib": fib, "box": Box(), "shell": Shell()}
    hidden = "exec(compile(\"assert globals().get('x') == 1\", '<t>', 'exec'), globals()) is None"
    checks = ["x == 2", "x == 1", "fib(6) == 8", "box.get() + 1 == 4", "shell is not None", hidden]
    judge.start()
    key = armed(checks, "x = 1")
    out, _ = judge.verdict(ns)
    assert not judge.started()  # one verdict per judge
    assert verdict.verify(key, out["text"].encode(), out["signature"])
    got = {
        c["expr"]: (c["passed"], c["detail"].splitlines()[0] if c["detail"] else "")
        for c in json.loads(out["text"])["checks"]
    }
    assert got == {
        "x == 2": (False, "x is 1, expected 2 (actual - expected = -1)"),
        "x == 1": (True, ""),
        "fib(6) == 8": (
            False,
            "fib(6) returned 13, expected 8 (actual - expected = 5)",
        ),  # the function ran in the kernel, its value judged here
        "box.get() + 1 == 4": (True, ""),
        "shell is not None": (True, ""),  # an object of the cell's own class is a handle, never unpickled
        hidden: (True, ""),  # the names read inside code given as a string are sent too
    }


def test_patching_the_check_code_in_the_kernel_does_not_reach_the_judge(monkeypatch):
    from jupyter_fixloop.kernel import checks

    key = armed(["x == 2"])
    monkeypatch.setattr(checks, "truth", lambda value: True)  # after the fork: the candidate's moment
    monkeypatch.setattr(checks, "assess", lambda node, ns: (True, ""))
    assert checks.evaluate("x == 2", {"x": 1})["passed"]  # the kernel's own evaluation is fooled
    out, _ = judge.verdict({"x": 1})
    assert verdict.verify(key, out["text"].encode(), out["signature"])
    assert json.loads(out["text"])["checks"][0]["passed"] is False


def outcomes(out: dict, key: str) -> dict:
    assert verdict.verify(key, out["text"].encode(), out["signature"])
    return {c["expr"]: c["passed"] for c in json.loads(out["text"])["checks"]}


def test_the_judge_takes_the_hosts_checks_and_nothing_after_them():
    """J02/J03: after the host's checks, a request of the candidate's own (checks of its choosing, a
    second cell, the old one-message requests) ends the judge without a verdict; arming a judge of
    one's own makes a new key, which the host never took."""
    forgeries = (("checks", ["True"]), ("checks", ["True"], ""), ("judge", ["x == 2"], "", {"x": pickle.dumps(2)}),
                 ("cell", "x = 2"))
    for forged in forgeries:
        for cell_given in (False, True) if forged[0] != "cell" else (True,):  # the runner's hand-over comes first
            judge.start()
            key = judge.arm(["x == 2"])
            if cell_given:
                judge.give_cell("x = 1")
            judge._link.send(forged)
            judge._link.cell = True
            out, _ = judge.verdict({"x": 1})
            assert "error" in out, (forged, cell_given, out)
    other = armed(["True"])
    assert other != key
    out, _ = judge.verdict({})
    assert not verdict.verify(key, out["text"].encode(), out["signature"])


def test_a_judge_without_the_cell_gives_no_verdict_and_takes_one_cell():
    """The cell comes once, from the run's request; a verdict asked before it is none."""
    judge.arm(["x == 1"])
    out, _ = judge.verdict({"x": 1})
    assert "error" in out and "cell" in out["error"], out
    key = armed(["x == 1"], "x = 1")
    judge.give_cell("x = 2")  # a second hand-over is not sent
    assert outcomes(judge.verdict({"x": 1})[0], key) == {"x == 1": True}


def test_a_shadowed_builtin_and_wrapped_serialisers_do_not_reach_the_judge(monkeypatch):
    """J07 and J01: `abs` in the cell's namespace is not the judge's; `pickle.dumps`, `pickle.Pickler`
    and copyreg's table changed after the kernel imported fixloop change nothing of what is sent."""
    import copyreg

    key = armed(["abs(x - 2) < 0.5", "x == 1"], "x = 1")
    real = pickle.dumps
    monkeypatch.setattr(pickle, "dumps", lambda obj, *a, **k: real({"x": 2} if isinstance(obj, dict) else obj, *a, **k))
    monkeypatch.setattr(pickle, "Pickler", None)
    monkeypatch.setitem(copyreg.dispatch_table, int, lambda v: (int, (2,)))
    out, _ = judge.verdict({"x": 1, "abs": lambda v: 0})
    assert outcomes(out, key) == {"abs(x - 2) < 0.5": False, "x == 1": True}


def test_a_check_is_evaluated_once_in_the_judge_not_again_in_the_kernel():
    from jupyter_fixloop.kernel import runner

    cell = "class Counter:\n    n = 0\n    def hit(self):\n        self.n += 1\n        return self.n\nc = Counter()\n"
    checks = ["c.hit() == 1"]
    key = judge.arm(checks)  # the run hands it the cell
    result = runner.run(cell, checks, ns={})
    assert result["checks"] == [{"expr": "c.hit() == 1", "passed": True, "detail": ""}], result["checks"]
    assert outcomes(result["verdict"], key) == {"c.hit() == 1": True}
    assert not judge.started()


def test_a_judge_gone_before_its_checks_arrive_is_replaced_by_a_new_one():
    import signal

    judge.start()
    os.kill(judge._link.pid, signal.SIGKILL)
    os.waitpid(judge._link.pid, 0)
    key = armed(["x == 1"], "x = 1")
    out, _ = judge.verdict({"x": 1})
    assert outcomes(out, key) == {"x == 1": True}


def test_the_judge_reads_unchanged_snapshot_buffers_in_its_own_map_and_gets_written_ones_sent(tmp_path):
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    from jupyter_fixloop.kernel import snapshot

    n = 200_000
    path = str(tmp_path / "s.bin")
    snapshot.write_snapshot({"df": pd.DataFrame({"a": np.arange(n, dtype=float), "q": np.arange(n)})}, {"df"}, path)
    df = snapshot.read_snapshot(path)[0]["df"]  # as a sandbox kernel loads it, then forks its judge
    link = judge._Link(0, None, None)

    def blocks():  # what stands for each of the two blocks (small buffers, such as Arrow column names, travel)
        return sorted(type(ref).__name__ for ref in link.pack(df)[1] if isinstance(ref, tuple) or len(ref) > 4096)

    assert blocks() == ["tuple", "tuple"]  # both: places in the map
    judge.start()
    key = armed(["df['a'].min() == -1", f"df['q'].sum() == {n * (n - 1) // 2}", "df['a'].iloc[4] == 4"])
    df.loc[3, "a"] = -1.0  # the candidate's run writes one page of one block
    assert blocks() == ["bytearray", "tuple"]  # only that block travels
    out, _ = judge.verdict({"df": df})
    assert verdict.verify(key, out["text"].encode(), out["signature"])
    assert [c["passed"] for c in json.loads(out["text"])["checks"]] == [True, True, True]


def test_a_loaded_frame_the_run_left_as_it_was_goes_to_the_judge_as_its_fingerprint_only(tmp_path, monkeypatch):
    """Armed ahead, the judge rebuilds from its own copy of the map the frames its checks read; a
    frame the run left as loaded is sent as its fingerprint, which the judge compares with its own.
    A frame the run wrote is sent as before, and a fingerprint that is not the judge's own is
    rebuilt from what was sent: the judge judges what the kernel has, never a stale frame."""
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    from jupyter_fixloop.kernel import effect, mapped, snapshot

    n = 200_000
    path = str(tmp_path / "s.bin")
    snapshot.write_snapshot({"df": pd.DataFrame({"a": np.arange(n, dtype=float), "q": np.arange(n)})}, {"df"}, path)
    ns = dict(snapshot.read_snapshot(path)[0])
    checks = ["df['a'].min() == -1", f"df['q'].sum() == {n * (n - 1) // 2}", "list(df.columns) == ['a', 'q']"]

    def judged(kept: dict) -> tuple[list[bool], tuple]:
        judge.start(ns)  # after the load, as the kernel forks it
        key = judge.arm(checks, ahead=True, ns=ns)
        judge.give_cell("n = len(df)")
        link = judge._link
        sent = link.pack_kept("df", ns["df"], kept)
        out, _ = judge.verdict(ns, kept)
        assert verdict.verify(key, out["text"].encode(), out["signature"]), out
        return [c["passed"] for c in json.loads(out["text"])["checks"]], (link.ready, sent[0])

    before = effect.picture(ns, ["df"])
    assert effect.compare(before, ns, ["df"]) == {"changes": []}
    kept = effect.kept()
    assert set(kept) == {"df"}
    assert judged(kept) == ([False, True, True], ({"df"}, "kept"))

    renamed = ns["df"].rename(columns={"q": "r"})  # shares the map's buffers: a fingerprint, not the judge's
    forged = {"df": (ns["df"], mapped.fingerprint(renamed))}
    assert forged["df"][1] is not None
    assert judged(forged) == ([False, False, False], ({"df"}, "kept"))  # judged on what was sent: no 'q'

    block = ns["df"]._mgr.blocks[0].values  # the run writes a page of the frame in place, in the map
    block[0, 3] = -1.0
    monkeypatch.setattr(os, "pread", lambda fd, n, offset: bytes(n))  # "no page of it was ever written"
    monkeypatch.setattr(pickle, "Pickler", None)
    assert effect.compare(before, ns, ["df"])["changes"] and "df" not in effect.kept()
    passed, (_, form) = judged(effect.kept())
    assert passed == [True, True, True] and form != "kept"


def test_a_buffer_reference_outside_the_judges_maps_is_refused():
    for ref in [(0, 1 << 40, 8), (99, 0, 8), (-1, 0, 8), ("0", 0, 8), [0, 0, 8]]:
        with pytest.raises(pickle.UnpicklingError):
            judge._buffer_of(ref)


def test_in_a_confined_sandbox_a_loaded_frame_is_found_in_its_snapshot_map(tmp_path):
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    from jupyter_fixloop.kernel import snapshot
    from jupyter_fixloop.sandbox import runtime
    from jupyter_fixloop.sandbox.manager import SandboxSettings
    from jupyter_fixloop.sandbox.pool import SandboxPool

    async def run():
        workdir = snapshot.scratch_dir("test-")
        snap = snapshot.write_snapshot({"df": pd.DataFrame({"a": np.arange(200_000.0)})}, {"df"},
                                       str(pathlib.Path(workdir) / "s.bin"))
        pool = SandboxPool(SandboxSettings(cwd=str(tmp_path)), size=1)
        try:
            box = await pool.acquire(snap)
            cell = ("from jupyter_fixloop.kernel import judge as j\n"  # what the kernel sends the judge for df
                    "def big(refs):\n"  # small buffers (Arrow column names) travel anyway
                    "    return sorted(type(r).__name__ for r in refs if isinstance(r, tuple) or len(r) > 4096)\n"
                    "kinds = big(j._Link(0, None, None).pack(df)[1])\n"
                    "df.loc[0, 'a'] = -1.0\n"
                    "after = big(j._Link(0, None, None).pack(df)[1])\n")
            raw = await box.run(cell, ["kinds == ['tuple']", "after == ['bytearray']", "df['a'].min() == -1"], 60)
            receipt = verdict.judge(raw)
            await box.close()
            return receipt
        finally:
            await pool.close()
            snapshot.remove_scratch(workdir)

    receipt = runtime.run_sync(run())
    assert receipt.ok, receipt.text  # the pagemap is readable there, and the judge saw the written value


def test_a_kernel_the_pool_prepares_has_its_judge_armed_before_any_candidate_and_only_then(tmp_path):
    """The loop's checks arm the judge while the kernel is made ready (the key taken then, before any
    candidate code runs there); the run's one request hands it the cell, and the verdict is signed
    with that key. After a run, no arming is trusted again: a second run in that kernel passes nothing."""
    from jupyter_fixloop.kernel import snapshot
    from jupyter_fixloop.sandbox import runtime
    from jupyter_fixloop.sandbox.manager import SandboxSettings
    from jupyter_fixloop.sandbox.pool import SandboxPool

    checks = ["x == 2", "len(cell_lines) == 3"]
    cell = "cell_lines = [1, 2, 3]\n"

    async def run():
        snap = snapshot.write_snapshot({"x": 1}, {"x"}, str(tmp_path / "s.bin"))
        pool = SandboxPool(SandboxSettings(cwd=str(tmp_path)), size=0)
        try:
            pool.prepare(snap, checks)
            await pool.settle()
            box = await pool.acquire(snap)
            armed_key = box.judge_key
            sent = []
            send = box._send
            box._send = lambda code: sent.append(code) or send(code)
            first = verdict.judge(await box.run(cell, checks, 60))
            requests = len(sent)
            rearmed = await box.arm(checks)
            second = verdict.judge(await box.run("x = 2\n", checks, 60))
            pool.discard(box)
            return armed_key, requests, first, rearmed, second
        finally:
            await pool.close()

    armed_key, requests, first, rearmed, second = runtime.run_sync(run())
    assert isinstance(armed_key, str) and len(armed_key) == 64
    assert requests == 1  # the run's own request, no arming request of its own
    assert first.kind == "check_failed" and "did not arrive" not in first.text, first.text
    assert [c.passed for c in first.checks] == [False, True], first.checks  # as the judge signed them
    assert rearmed is False
    assert second.kind == "check_failed" and "did not arrive (or was forged)" in second.text, second.text


def test_a_checks_modules_and_library_functions_are_the_judges_own(monkeypatch):
    """Issue 41: `math.isclose`, `np.isclose` and `pd.testing.assert_series_equal` patched in the kernel after
    the judge's fork (the candidate's moment), a library function's name rebound to a lambda, a module the
    cell imports itself: each check calls this process's own, as imported before the fork. A name the cell
    rebinds to data is that data."""
    import math
    import statistics
    import types

    import numpy as np
    import pandas as pd

    before = {"math": math, "np": np, "pd": pd, "isclose": math.isclose, "mean": statistics.mean, "x": 1}
    checks = ["math.isclose(x, 2)", "bool(np.isclose(x, 2))", "isclose(x, 2)", "m.isclose(x, 2)", "mean == 1.0",
              "pd.testing.assert_series_equal(s, pd.Series([2, 2])) is None"]
    judge.start(before)  # the fork: its copy of the namespace is the one before any candidate code
    key = armed(checks, "x = 1")
    patches = ((math, "isclose", True), (np, "isclose", True), (pd.testing, "assert_series_equal", None))
    for module, name, says in patches:
        monkeypatch.setattr(module, name, lambda *a, said=says, **k: said)
    fake = types.ModuleType("math")  # a module of the candidate's, named as the real one
    fake.isclose = lambda *a, **k: True
    after = {**before, "isclose": lambda *a, **k: True, "m": fake, "mean": 1.0, "s": pd.Series([1, 1])}
    out, _ = judge.verdict(after)
    assert outcomes(out, key) == {"math.isclose(x, 2)": False, "bool(np.isclose(x, 2))": False,
                                  "isclose(x, 2)": False, "m.isclose(x, 2)": False, "mean == 1.0": True,
                                  "pd.testing.assert_series_equal(s, pd.Series([2, 2])) is None": False}


def test_only_the_installations_modules_are_the_judges_own():
    import math

    assert judge.own_object("math", "isclose") is math.isclose and judge.own_library(math) is math
    assert judge.own_object("jupyter_fixloop.kernel.judge", "") is None or "site-packages" in judge.__file__
    assert judge.own_object("os.path", "join.__globals__") is None  # a qualname is names, no more
    assert judge.own_object("not a module", "") is None and judge.library_name(lambda: 1) is None


def _remap_and_write(array) -> None:
    """The attack of issue 41: a shared memfd mapped over the pages of a loaded array (`MAP_FIXED`, the same
    addresses), every value then written -1.0 there. Its pages are file pages to /proc/self/pagemap."""
    import ctypes
    import mmap

    page = mmap.PAGESIZE
    address = array.ctypes.data
    start, end = address // page * page, -(-(address + array.nbytes) // page) * page
    fd = os.memfd_create("over")
    os.write(fd, ctypes.string_at(start, end - start))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    fixed = 0x10  # MAP_FIXED
    assert libc.mmap(start, end - start, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED | fixed, fd, 0) == start
    os.close(fd)
    (ctypes.c_double * array.size).from_address(address)[:] = [-1.0] * array.size


def _loaded(tmp_path, n: int) -> dict:
    """A frame of a float and an int column, written to a snapshot and loaded as a sandbox kernel loads it."""
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    from jupyter_fixloop.kernel import snapshot

    path = str(tmp_path / "s.bin")
    snapshot.write_snapshot({"df": pd.DataFrame({"a": np.arange(n, dtype=float), "q": np.arange(n)})}, {"df"}, path)
    return dict(snapshot.read_snapshot(path)[0])


def test_a_frame_written_through_a_remapped_page_is_not_read_as_loaded(tmp_path):
    """Issue 41: pagemap calls a shared memfd's pages file pages; /proc/self/maps says they are not the
    snapshot's. The block goes as its bytes, the frame is no longer 'kept', and the judge judges -1.0."""
    from jupyter_fixloop.kernel import effect, mapped

    n = 200_000
    ns = _loaded(tmp_path, n)
    df = ns["df"]
    link = judge._Link(0, None, None)
    floats = next(b.values for b in df._mgr.blocks if b.values.dtype.kind == "f")
    assert mapped.locate(floats) is not None and mapped.fingerprint(df) is not None  # as loaded
    before = effect.picture(ns, ["df"])
    checks = ["df['a'].min() >= 0", f"df['q'].sum() == {n * (n - 1) // 2}"]
    judge.start(ns)
    key = judge.arm(checks, ahead=True, ns=ns)
    judge.give_cell("n = len(df)")

    _remap_and_write(floats)

    assert float(df["a"].max()) == -1.0
    assert mapped.locate(floats) is None and mapped.fingerprint(df) is None
    assert "bytearray" in [type(r).__name__ for r in link.pack(df)[1]]  # the float block travels as its bytes
    assert effect.compare(before, ns, ["df"])["changes"] and "df" not in effect.kept()
    out, _ = judge.verdict(ns, effect.kept())
    assert outcomes(out, key) == {"df['a'].min() >= 0": False, f"df['q'].sum() == {n * (n - 1) // 2}": True}


def test_a_check_that_raises_in_the_judge_is_the_runs_error_named_by_the_verdicts_fields():
    """Which exception a judged check raised is a field of the verdict (`raised`, `message`), not read back
    from its detail's words: the run ends as that error, said as raised while evaluating the check."""
    from jupyter_fixloop.kernel import runner

    checks = ["totals['b'] == 1"]
    judge.arm(checks)
    result = runner.run("totals = {'a': 1}\n", checks, ns={})
    assert result["checks"][0]["passed"] is False and result["checks"][0]["detail"] == "raised KeyError: 'b'"
    assert result["status"] == "error" and result["error"]["ename"] == "KeyError", result["error"]
    assert result["error"]["during_check"] == "totals['b'] == 1"

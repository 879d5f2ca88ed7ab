"""The checks' judge (kernel/judge.py) and the host's reading of its verdict (verdict.py): the
signature, the data-only loader, and a real forked judge evaluating checks on what it was sent."""

from __future__ import annotations

import io
import json
import os
import pickle

import pytest

from jupyter_fixloop.kernel import judge
from jupyter_fixloop.sandbox import verdict


class Shell:
    """A pickle whose loading would run a shell command."""

    def __reduce__(self):
        return (os.system, ("echo owned",))


def signed(outcomes: list[dict]) -> tuple[str, dict]:
    secret = os.urandom(2 * judge.BITS * judge.SECRET)
    text = json.dumps({"checks": outcomes}, sort_keys=True)
    return judge.public_key(secret), {"text": text, "signature": judge.sign(secret, text.encode())}


def test_the_judges_signature_verifies_and_a_tampered_verdict_does_not():
    key, signed_verdict = signed([{"expr": "x == 2", "passed": False, "detail": "x is 1, expected 2"}])
    text, signature = signed_verdict["text"], signed_verdict["signature"]
    assert judge.verify(key, text.encode(), signature)
    forged = text.replace("false", "true")
    assert not judge.verify(key, forged.encode(), signature)
    assert not judge.verify(key, text.encode(), signature[:-2] + ("00" if signature[-2:] != "00" else "11"))
    assert not judge.verify(key, text.encode(), "zz")
    other_key, _ = signed([])
    assert not judge.verify(other_key, text.encode(), signature)


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
    assert judge.DataLoader(io.BytesIO(pickle.dumps([1, "a", {"b": (2.5, None)}]))).load() == [1, "a", {"b": (2.5, None)}]


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
    key = judge.start()
    out = judge.verdict(checks, ns, "x = 1")
    assert not judge.started()  # one verdict per judge
    assert judge.verify(key, out["text"].encode(), out["signature"])
    got = {c["expr"]: (c["passed"], c["detail"].splitlines()[0] if c["detail"] else "") for c in json.loads(out["text"])["checks"]}
    assert got == {
        "x == 2": (False, "x is 1, expected 2 (actual - expected = -1)"),
        "x == 1": (True, ""),
        "fib(6) == 8": (False, "fib(6) returned 13, expected 8 (actual - expected = 5)"),  # the function ran in the kernel, its value judged here
        "box.get() + 1 == 4": (True, ""),
        "shell is not None": (True, ""),  # an object of the cell's own class is a handle, never unpickled
        hidden: (True, ""),  # the names read inside code given as a string are sent too
    }


def test_patching_the_check_code_in_the_kernel_does_not_reach_the_judge(monkeypatch):
    from jupyter_fixloop.kernel import checks

    key = judge.start()
    monkeypatch.setattr(checks, "truth", lambda value: True)  # after the fork: the candidate's moment
    monkeypatch.setattr(checks, "judge", lambda node, ns: (True, ""))
    assert checks.evaluate("x == 2", {"x": 1})["passed"]  # the kernel's own evaluation is fooled
    out = judge.verdict(["x == 2"], {"x": 1}, "")
    assert judge.verify(key, out["text"].encode(), out["signature"])
    assert json.loads(out["text"])["checks"][0]["passed"] is False

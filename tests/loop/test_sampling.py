"""Execution-guided sampling (`samples=K`): K candidates per round, each run once, the best carried
on, every call's tokens counted. Real sandbox kernels and real litellm calls against the scripted server."""

import json

import pytest
from fake_model import Scripted
from traitlets import TraitError

from jupyter_fixloop import LoopHooks, fix
from jupyter_fixloop.config import FixLoop
from jupyter_fixloop.errors import UsageError
from jupyter_fixloop.loop.sampling import Candidate, best_of, temperatures
from jupyter_fixloop.model.models import Reply
from jupyter_fixloop.receipt.values import CheckOutcome, Receipt
from jupyter_fixloop.render import render_html, render_text
from jupyter_fixloop.result import Usage

CELL = "total = sum(prices) - 1\n"
WRONG = "total = sum(prices) - 2\n"
FIXED = "total = sum(prices)\n"
CHECK = "t = globals().get('total')\nassert t == 12, 'total should be the sum'"
NS = {"prices": [3, 4, 5]}


def block(code: str) -> str:
    return f"```python\n{code}```"


def test_the_round_carries_the_right_sample_runs_each_distinct_one_once_and_counts_all_tokens(fake_model):
    # the right answer comes last, so both copies of the wrong one are in before it passes
    server = fake_model(block(WRONG), block(WRONG), Scripted(block(FIXED), delay=3.0))
    events = []
    result = fix(CELL, checks=[CHECK], namespace=NS, model="openai/scripted", api_base=server.url, samples=3,
                 hooks=LoopHooks(on_run_start=events.append))
    assert result.status == "fixed" and result.patched.strip() == FIXED.strip(), result.reason
    (only,) = result.rounds
    assert len(server.requests) == 3 and len(only.samples) == 3
    assert sorted(r["temperature"] for r in server.requests) == [0.2, 0.5, 0.8]
    runs = [e for e in events if e.round == 1]
    assert len(runs) == 2  # the wrong code once, the right code once
    verdicts = sorted(s.verdict for s in only.samples)
    assert sum("same code as sample" in v for v in verdicts) == 1
    assert [s.kind for s in only.samples].count("ok") == 1 and only.receipt.ok
    assert all(s.prompt_tokens > 0 and s.completion_tokens > 0 for s in only.samples)
    assert only.usage.tokens == sum(s.tokens for s in only.samples) == result.tokens
    assert "samples: T=0.2 check_failed, T=0.5 check_failed, T=0.8 ok" in render_text(result)
    assert "samples: T=0.2" in render_html(result)


def test_one_sample_behaves_as_before(fake_model):
    server = fake_model(block(WRONG), block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace=NS, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 2 and len(server.requests) == 2
    assert [r.samples for r in result.rounds] == [(), ()]
    assert [r.temperature for r in result.rounds] == [0.2, 0.2]
    assert result.rounds[0].receipt.kind == "check_failed"


def test_the_token_bound_counts_every_sample(fake_model):
    server = fake_model(block(WRONG))
    result = fix(CELL, checks=[CHECK], namespace=NS, model="openai/scripted", api_base=server.url, samples=2,
                 max_tokens=1, max_rounds=3)
    assert result.status == "gave_up" and result.reason.startswith("token bound reached"), result.reason
    assert len(result.rounds) == 1 and len(server.requests) == 2 and result.tokens > 1


@pytest.mark.parametrize("bad", [0, 9, -1])
def test_a_bad_number_of_samples_is_a_clear_error(bad):
    with pytest.raises(UsageError, match="samples must be a whole number from 1 to 8"):
        fix(CELL, samples=bad)
    with pytest.raises(TraitError):
        FixLoop(samples=bad)


def _candidate(order, kind, failing=0, passing=0, repeated=""):
    checks = tuple(CheckOutcome(f"f{i}", False) for i in range(failing)) + tuple(
        CheckOutcome(f"p{i}", True) for i in range(passing))
    return Candidate(order, Reply("", "x = 1", Usage()), Receipt(kind=kind, text=kind, checks=checks), 0.2, repeated)


def test_best_of_ranks_passing_then_fewer_failing_checks_then_no_exception():
    exception = _candidate(0, "exception")
    two_fail = _candidate(1, "check_failed", failing=2)
    one_fail = _candidate(2, "check_failed", failing=1, passing=1)
    no_code = _candidate(3, "no_code")
    passing = _candidate(4, "ok", passing=2)
    assert best_of([exception, two_fail, one_fail, no_code, passing]) is passing
    assert best_of([exception, two_fail, one_fail, no_code]) is one_fail
    assert best_of([no_code, exception]) is exception
    # ties: new code before a repeat of an earlier round, then the earlier sample
    assert best_of([_candidate(0, "check_failed", 1, repeated="round 1"), _candidate(1, "check_failed", 1)]).order == 1
    assert best_of([_candidate(1, "exception"), _candidate(0, "exception")]).order == 0
    with pytest.raises(ValueError):
        best_of([])


def test_temperatures_spread_from_the_rounds_own_up_to_the_resample_one():
    assert temperatures(0.2, 0.8, 1) == (0.2,)
    assert temperatures(0.2, 0.8, 3) == (0.2, 0.5, 0.8)
    assert temperatures(0.8, 0.8, 2) == (0.8, 0.8)


def test_bench_takes_samples_and_one_case_and_reports_every_call(fake_model, tmp_path):
    from fixloop_bench import fixrate as bench

    cases = [{"id": "t-sum", "category": "wrong_output", "group": "logic", "fails_with": "check:AssertionError",
              "setup": "prices = [3, 4, 5]\n", "cell": CELL, "check": CHECK},
             {"id": "t-other", "category": "crash", "group": "logic", "setup": "", "cell": "1/0\n", "check": ""}]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    server = fake_model(block(WRONG), Scripted(block(FIXED), delay=2.0))
    out = tmp_path / "figures.json"
    assert bench.main([str(path), "--model", "openai/scripted", "--api-base", server.url, "--expect-check",
                       "--samples", "2", "--case", "t-sum", "--model-timeout", "30", "--wall-time", "120",
                       "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    (only,) = data["cases"]
    assert only["id"] == "t-sum" and only["fixed"] and only["fixed_in_round"] == 1
    (round_1,) = only["per_round"]
    assert len(round_1["calls"]) == 2 and sorted(c["kind"] for c in round_1["calls"]) == ["check_failed", "ok"]
    assert round_1["prompt_tokens"] == sum(c["prompt_tokens"] for c in round_1["calls"])
    assert data["samples"] == 2 and data["rounds"]["round_1"]["calls"] == 2
    assert bench.main([str(path), "--case", "no-such-case"]) == 2

"""Model faults through real litellm calls against the scripted loopback server, and the loop's bounds.

Each fault ends in a clear one-line message or a `no_code` round, retries only where retrying can
help (litellm's retry policy), and never takes the loop past its bounds; the original cell and the
rounds so far are always in the result.
"""

import json
import time

import pytest
from fake_model import Scripted, closed_port_url

from jupyter_fixloop import ModelError, fix
from jupyter_fixloop.model import models as engine
from jupyter_fixloop.sandbox import runtime

BROKEN = "total = sum(prices)\nassert total == 6\n"
FIXED = "prices = [1, 2, 3]\ntotal = sum(prices)\nassert total == 6\n"
GOOD = f"```python\n{FIXED}```"


def error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message}}).encode()


def loop(server_or_url, **kwargs):
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    kwargs.setdefault("max_rounds", 3)
    kwargs.setdefault("rules", False)  # these are the model's faults: no rule repair runs beside it
    return fix(BROKEN, model="openai/scripted", api_base=url, **kwargs)


def assert_intact(result):
    assert result.source == BROKEN  # nothing lost
    assert result.first is not None and result.first.kind == "exception"


def assert_one_line(message: str, *words: str):
    assert "\n" not in message and len(message) < 400, message
    for word in words:
        assert word in message, message


# ---------------------------------------------------------------- errors from the server


def test_bad_key_is_one_line_and_not_retried(fake_model):
    server = fake_model(Scripted(status=401, body=error_body("Incorrect API key provided")))
    result = loop(server)
    assert result.status == "error"
    assert_one_line(result.reason, "openai/scripted", "401", "check the API key")
    assert len(server.requests) == 1  # retrying a bad key cannot help
    assert_intact(result)


def test_rate_limit_is_retried_with_backoff_then_succeeds(fake_model):
    server = fake_model(Scripted(status=429, body=error_body("Rate limit reached"), headers={"retry-after": "1"}), GOOD)
    started = time.perf_counter()
    result = loop(server)
    assert result.status == "fixed", result.reason
    assert len(server.requests) == 2
    assert time.perf_counter() - started >= 1.0  # it waited before retrying
    assert_intact(result)


def test_rate_limit_that_persists_says_how_long_to_wait(fake_model):
    server = fake_model(Scripted(status=429, body=error_body("Rate limit reached"), headers={"retry-after": "1"}))
    result = loop(server)
    assert result.status == "error"
    assert_one_line(result.reason, "429", "wait 1 s")
    assert len(server.requests) == 3  # the call and litellm's two retries, then the loop stops
    assert result.rounds == []
    assert_intact(result)


def test_server_error_is_retried(fake_model):
    server = fake_model(Scripted(status=500, body=error_body("upstream exploded")), GOOD)
    result = loop(server)
    assert result.status == "fixed", result.reason
    assert len(server.requests) == 2


def test_server_error_that_persists_is_one_line(fake_model):
    server = fake_model(Scripted(status=500, body=error_body("upstream exploded")))
    result = loop(server)
    assert result.status == "error"
    assert_one_line(result.reason, "500", "upstream exploded")
    assert "Retried" not in result.reason
    assert len(server.requests) == 3


def test_connection_refused_is_one_line(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    result = loop(closed_port_url())
    assert result.status == "error"
    assert_one_line(result.reason, "could not be reached")
    assert_intact(result)


def test_body_that_is_not_json_is_one_line(fake_model):
    server = fake_model(Scripted(body=b""))
    result = loop(server)
    assert result.status == "error"
    assert_one_line(result.reason, "not valid JSON")


def test_model_timeout_is_retried_once_then_one_line(fake_model):
    server = fake_model(Scripted(GOOD, delay=3))
    messages = [{"role": "user", "content": "fix it"}]
    with pytest.raises(ModelError) as caught:
        runtime.run_sync(engine.propose(messages, "openai/scripted", api_base=server.url, timeout=1))
    assert_one_line(str(caught.value), "Timeout", "did not answer in time")
    assert 2 <= len(server.requests) <= 3  # retried, and bounded


def test_missing_key_is_one_line(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = loop(closed_port_url())
    assert result.status == "error"
    assert_one_line(result.reason, "no API key", "OPENAI_API_KEY")


def test_unknown_provider_is_one_line_with_examples():
    result = fix(BROKEN, model="nosuchprovider/some-model", max_rounds=2)
    assert result.status == "error"
    assert_intact(result)
    assert_one_line(result.reason, "nosuchprovider/some-model", "does not know this provider", "openai/gpt-4o-mini")


# ---------------------------------------------------------------- replies without usable code


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "You should define prices before summing them.",
        "```javascript\nconst prices = [1, 2, 3];\n```",
        "x" * 1_000_000,
    ],
    ids=["empty", "prose", "javascript", "1 MB"],
)
def test_reply_without_python_is_a_no_code_round(fake_model, reply):
    server = fake_model(reply, GOOD)
    result = loop(server)
    assert [r.receipt.kind for r in result.rounds] == ["no_code", "ok"]
    assert result.status == "fixed"
    assert len(result.rounds[0].receipt.text) < 400  # the receipt is trimmed, whatever came in
    assert len(server.prompt(1)) < 20_000  # and so is what goes back to the model
    assert_intact(result)


# ---------------------------------------------------------------- bounds: the first one hit ends the loop


def test_max_rounds_bound(fake_model):
    server = fake_model("no idea", "still no idea", "really no idea")
    result = loop(server, max_rounds=2)
    assert result.status == "gave_up" and "max rounds (2)" in result.reason
    assert len(server.requests) == 2


def test_token_bound(fake_model):
    server = fake_model("no idea", "still no idea", "really no idea")
    result = loop(server, max_rounds=5, max_tokens=10)
    assert result.status == "gave_up" and "token bound reached" in result.reason
    assert len(server.requests) == 1


def test_budget_bound_uses_litellm_cost(fake_model):
    server = fake_model("no idea", "still no idea", "really no idea")
    result = fix(BROKEN, model="openai/gpt-4o-mini", api_base=server.url, max_rounds=5, budget=1e-9)
    assert result.rounds[0].usage.cost > 0
    assert result.status == "gave_up" and "budget reached" in result.reason
    assert len(server.requests) == 1


def test_wall_clock_bound_cuts_a_long_model_call(fake_model):
    server = fake_model(Scripted(GOOD, delay=600))
    started = time.perf_counter()
    result = loop(server, wall_time=5)
    assert time.perf_counter() - started < 300  # not the 600 s the server would take (a loaded machine: far over 5 s)
    assert result.status == "gave_up" and "time bound reached (5 s)" in result.reason
    assert_intact(result)


def test_wall_clock_bound_cuts_a_long_sandbox_run():
    result = fix("while True:\n    pass\n", timeout=120, wall_time=3, max_rounds=2)
    assert result.first is None or result.first.kind == "timeout"  # a loaded machine may reach 3 s before it ran
    assert result.seconds < 60  # not the 120 s run timeout
    assert result.status == "gave_up" and "time bound reached (3 s)" in result.reason

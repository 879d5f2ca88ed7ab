"""End to end against a real model server (e.g. Qwen2.5-Coder-1.5B behind llama-server):

    FIXLOOP_REAL_MODEL_BASE=http://127.0.0.1:8765/v1 FIXLOOP_REAL_MODEL=openai/qwen2.5-coder-1.5b \\
        python -m pytest tests/model/test_realmodel.py -m realmodel

Skipped unless FIXLOOP_REAL_MODEL_BASE is set. A small model is not deterministic across machines:
these assert what the loop guarantees (verified fixes, bounded rounds, the prompt's shape), and
repairs a small model makes reliably (a missing import, a misspelt name)."""

import os

import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.model.models import check_model

BASE = os.environ.get("FIXLOOP_REAL_MODEL_BASE", "")
MODEL = os.environ.get("FIXLOOP_REAL_MODEL", "openai/qwen2.5-coder-1.5b")

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not BASE, reason="set FIXLOOP_REAL_MODEL_BASE to an OpenAI-compatible server"),
    pytest.mark.timeout(900),
]


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY", "x"))


def real_fix(cell, **kwargs):
    kwargs.setdefault("max_rounds", 4)
    kwargs.setdefault("rules", False)  # the model's own repairs; the last test has the rules beside it
    return fix(cell, model=MODEL, api_base=BASE, model_timeout=600, wall_time=1800, **kwargs)


def test_the_server_answers():
    check_model(MODEL, BASE)


def test_a_missing_import_is_fixed_and_verified():
    cell = 'digits = re.sub(r"\\D", "", phone)\n'
    result = real_fix(cell, checks=["digits == '5551234'"], namespace={"phone": "555-1234"})
    assert result.status == "fixed", result.reason
    assert "import re" in result.patched
    assert all(r.usage.prompt_tokens > 0 for r in result.rounds)


def test_a_check_block_with_a_misspelt_name():
    cell = "total = sum(price)\n"
    check = "t = globals().get('total')\nassert t == 12, repr(t)"
    result = real_fix(cell, checks=[check], namespace={"prices": [3, 4, 5]})
    assert result.status == "fixed", result.reason
    assert "prices" in result.patched
    assert "assert t == 12" not in result.patched  # the check was not copied into the cell


def test_every_round_is_bounded_and_its_prompt_is_small():
    cell = "values = [1, 2, 3]\nmiddle = values[len(values) / 2]\n"
    result = real_fix(cell, checks=["middle == 2"], max_rounds=2)
    assert result.status in ("fixed", "gave_up"), result.reason
    assert 1 <= len(result.rounds) <= 2
    assert all(r.usage.prompt_tokens < 1200 for r in result.rounds)
    if result.status == "fixed":
        assert result.rounds[-1].receipt.ok


def test_three_samples_per_round_are_each_counted_and_the_best_is_carried_on():
    cell = "total = sum(price)\n"
    check = "t = globals().get('total')\nassert t == 12, repr(t)"
    result = real_fix(cell, checks=[check], namespace={"prices": [3, 4, 5]}, samples=3, max_rounds=2)
    assert result.status in ("fixed", "gave_up"), result.reason
    for r in result.rounds:
        assert 1 <= len(r.samples) <= 3
        assert r.usage.prompt_tokens == sum(s.prompt_tokens for s in r.samples) > 0
        assert {s.temperature for s in r.samples} <= {0.2, 0.5, 0.8}  # spread up to resample_temperature
    if result.status == "fixed":
        assert result.rounds[-1].receipt.ok and "prices" in result.patched


def test_with_the_rules_a_known_crash_is_fixed_without_asking_the_model():
    cell = 'digits = re.sub(r"\\D", "", phone)\n'
    result = real_fix(cell, checks=["digits == '5551234'"], namespace={"phone": "555-1234"}, rules=True)
    assert result.status == "fixed" and result.rounds[-1].source == "rules", result.reason
    assert result.tokens == 0 and "import re" in result.patched


def test_a_wrong_output_round_shows_the_model_the_values_line_by_line():
    # nothing raises: the first receipt traces how the checked value was made, and the model reads it
    cell = "ordered = sorted(times)\nmedian = ordered[len(ordered) // 2]\n"
    result = real_fix(cell, checks=["median == 8.5"], namespace={"times": [12, 3, 8, 20, 5, 9]})
    first = result.first.text
    assert "Values after each line" in first and "ordered = [3, 5, 8, 9, 12, 20]" in first
    assert "len(ordered) // 2 -> 3" in first and "median = 9" in first
    assert result.rounds and all(r.usage.prompt_tokens < 900 for r in result.rounds)
    assert result.status in ("fixed", "gave_up"), result.reason
    if result.status == "fixed":
        assert result.rounds[-1].receipt.ok and "8.5" not in result.patched  # no hard-coded answer

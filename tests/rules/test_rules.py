"""The built-in engine's rule repair beside a real model (`rules`, on by default): each round it runs
in milliseconds for no tokens beside the model call; a rule candidate that passes ends the round,
one that gets further than the model's is carried on, and the model is told who wrote it.
Real sandbox kernels and real litellm calls against the scripted server."""

import json

from fake_model import Scripted

from jupyter_fixloop import fix
from jupyter_fixloop.config import FixLoop
from jupyter_fixloop.render import render_text
from jupyter_fixloop.result import loop_summary

TYPO = "total = sum(price) * 2\n"  # `price` for `prices`: a rule repairs it
NS = {"prices": [3, 4, 5]}


def block(code: str) -> str:
    return f"```python\n{code}```"


def test_a_rule_repair_that_passes_at_once_means_no_model_call(fake_model):
    server = fake_model(block("total = 0\n"))
    result = fix(TYPO, checks=["total == 24"], namespace=NS, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and result.rounds[0].source == "rules", result.reason
    assert server.requests == [] and result.tokens == 0  # no prompt paid for that nobody reads


def test_a_slow_rule_repair_runs_beside_the_model_and_cancels_its_call(fake_model):
    from jupyter_fixloop.model.models import litellm

    litellm()  # imported before the loop, so the call is under way when the rules' run passes
    server = fake_model(Scripted(block("total = 0\n"), delay=30.0))  # a slow model: the rules do not wait for it
    slow = "import time\ntime.sleep(6)\n" + TYPO  # the rules' run outlasts their head start
    result = fix(slow, checks=["total == 24"], namespace=NS, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and result.patched == slow.replace("price)", "prices)"), result.reason
    assert len(server.requests) == 1  # asked once the head start was over, then cancelled
    assert "the built-in rules' repair" in result.reason
    (only,) = result.rounds
    assert only.source == "rules" and only.usage.tokens == 0 and result.tokens == 0
    assert only.samples == ()  # the model's call was cancelled before it answered: no candidate of its own
    assert "round 1 (built-in rules): ok" in render_text(result)
    assert loop_summary(result)["rounds"][0]["source"] == "rules"  # what the sidebar and the history read


def test_the_model_wins_a_tie_and_both_candidates_are_listed(fake_model):
    # both run and fail the check by one; the model read the whole receipt, so its candidate is carried on
    server = fake_model(block("total = sum(prices) * 3\n"))
    result = fix(TYPO, checks=["total == 25"], namespace=NS, model="openai/scripted", api_base=server.url, max_rounds=1)
    (only,) = result.rounds
    assert only.source == "model" and only.candidate == "total = sum(prices) * 3\n"
    assert [(s.source, s.kind) for s in only.samples] == [("rules", "check_failed"), ("model", "check_failed")]
    rules, asked = only.samples
    assert rules.tokens == 0 and rules.temperature is None and asked.tokens > 0
    assert only.usage.tokens == asked.tokens == result.tokens
    assert "samples: rules check_failed, T=0.2 check_failed" in render_text(result)


def test_a_rule_the_library_told_wins_a_tie_with_the_model(fake_model):
    # a renamed method is no guess (one right answer: what the old spelling did); the model's rewrite runs too, and
    # nothing checks either: the rule's candidate is carried on, and both are listed
    cell = "pairs = sorted(scores.iteritems())\n"
    server = fake_model(block("pairs = sorted((k, v) for k, v in scores.items())\n"))
    result = fix(cell, namespace={"scores": {"b": 2, "a": 1}}, model="openai/scripted", api_base=server.url,
                 max_rounds=1)
    (only,) = result.rounds
    assert only.source == "rules" and result.patched == "pairs = sorted(scores.items())\n", result.reason
    assert [(s.source, s.kind) for s in only.samples] == [("rules", "ok"), ("model", "ok")]
    assert len(server.requests) == 1  # the rule's unchecked candidate did not end the round alone


def test_the_rules_fix_one_error_the_model_the_next_and_it_is_told_who_wrote_what(fake_model):
    cell = "peak = {}\nfor k, v in scores.iteritems():\n    peak[k] = max(v)\nbest = min(peak, key=peak.get)\n"
    right = "peak = {}\nfor k, v in scores.items():\n    peak[k] = max(v)\nbest = max(peak, key=peak.get)\n"
    # round 1: the model repeats the cell (a small model does), the rules replace `iteritems`;
    # round 2: the rules have nothing for a wrong value; the model, shown the rules' code and the check it fails,
    # fixes it
    server = fake_model(block(cell), block(right))
    result = fix(cell, checks=["best == 'b'"], namespace={"scores": {"a": [1, 2], "b": [5]}}, model="openai/scripted",
                 api_base=server.url, max_rounds=3)
    assert result.status == "fixed" and result.patched == right, result.reason
    assert [r.source for r in result.rounds][0] == "rules"
    assert result.rounds[0].receipt.kind == "check_failed"
    second = server.prompt(1)
    assert "### Code that was run (the built-in rules' repair in round 1)" in second
    assert "scores.items()" in second and "Check failed: best == 'b'" in second
    # the model's own repeat is still said, and it is asked hotter; the loop goes on: the round made progress
    assert "Your last answer was identical to the original cell" in second
    assert server.requests[1]["temperature"] == 0.8


def test_without_rules_only_the_model_is_asked(fake_model):
    server = fake_model(block("total = sum(prices) * 2\n"))
    result = fix(TYPO, checks=["total == 24"], namespace=NS, model="openai/scripted", api_base=server.url, rules=False)
    assert result.status == "fixed" and result.rounds[0].source == "model" and result.rounds[0].samples == ()
    assert len(server.requests) == 1 and "built-in rules" not in result.reason


def test_the_builtin_model_is_not_asked_twice():
    result = fix(TYPO, checks=["total == 24"], namespace=NS)  # the built-in engine is the model: no second copy
    assert result.status == "fixed" and result.rounds[0].source == "model" and result.rounds[0].samples == ()


def test_rules_is_a_knob_of_the_config_the_magic_batch_mode_and_the_bench():
    assert FixLoop().options().rules is True
    assert FixLoop(rules=False).options().rules is False
    from fixloop_bench.fixrate import parse_args

    from jupyter_fixloop.batch.cli import build_parser
    from jupyter_fixloop.notebook.magic import FixLoopMagics

    assert build_parser().parse_args(["a.ipynb", "--no-rules"]).rules is False
    assert build_parser().parse_args(["a.ipynb"]).rules is None  # FixLoop.rules decides
    assert parse_args(["--no-rules"]).rules is False and parse_args([]).rules is True
    assert "--no-rules" in FixLoopMagics.fixloop.__doc__ or "--no-rules" in str(
        FixLoopMagics.fixloop.parser.format_help()
    )


def test_the_bench_says_who_fixed_each_case_and_counts_only_model_calls(fake_model, tmp_path):
    from fixloop_bench import fixrate as bench

    cases = [{"id": "t-typo", "category": "NameError", "group": "crash", "fails_with": "cell:NameError",
              "setup": "prices = [3, 4, 5]\n", "cell": TYPO, "check": "assert total == 24"}]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    server = fake_model(block("total = 0\n"))
    out = tmp_path / "figures.json"
    assert bench.main([str(path), "--model", "openai/scripted", "--api-base", server.url, "--expect-check",
                       "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    (only,) = data["cases"]
    assert only["fixed"] and only["fixed_by"] == "rules" and data["rules"] is True
    assert data["rounds"]["fixed_by"] == {"rules": 1}
    calls = only["per_round"][0]["calls"]
    assert all(c["source"] == "model" for c in calls if c["prompt_tokens"]), calls
    assert data["rounds"]["round_1"]["calls"] == sum(c["source"] == "model" for c in calls)


def test_with_no_checks_a_rule_repair_does_not_end_the_round_and_both_candidates_are_shown(fake_model):
    # the rules rename `price` to `prices`; the model writes another repair: both run, nothing checks them
    server = fake_model(block("total = sum(prices) * 3\n"))
    result = fix(TYPO, namespace=NS, model="openai/scripted", api_base=server.url, max_rounds=1)
    assert result.status == "unverified" and result.reason.startswith("nothing checked it"), result.reason
    assert len(server.requests) == 1  # the model was asked although the rules' candidate already ran
    (only,) = result.rounds
    assert only.source == "model" and result.patched == "total = sum(prices) * 3\n"
    (other,) = result.alternatives
    assert other.source == "rules" and other.code == "total = sum(prices) * 2\n" and "total" in other.effect
    text = render_text(result)
    assert "fixloop: runs now — unverified: nothing checked it; read what it does to your data" in text
    assert "another candidate that also runs (the built-in rules)" in text and "+total = sum(prices) * 2" in text
    summary = loop_summary(result)
    assert summary["status"] == "unverified"
    assert summary["alternatives"] == [{"source": "rules", "code": "total = sum(prices) * 2\n", "effect": other.effect,
                                        "model_written": False}]


def test_with_no_checks_the_same_repair_from_both_is_one_candidate(fake_model):
    server = fake_model(block("total = sum(prices) * 2\n"))
    result = fix(TYPO, namespace=NS, model="openai/scripted", api_base=server.url, max_rounds=1)
    assert result.status == "unverified" and result.alternatives == () and len(server.requests) == 1
    assert "other candidate" not in result.reason


def test_a_check_or_an_assert_of_the_cell_makes_it_fixed_one_the_candidate_wrote_does_not(fake_model):
    asserted = TYPO + "assert total > 0\n"
    result = fix(asserted, namespace=NS)  # the built-in engine; the user's own assert verifies the repair
    assert result.status == "fixed" and "its 1 check passes" in result.reason, result.reason
    server = fake_model(block("total = sum(prices) * 2\nassert total == 24\n"))
    result = fix(TYPO, namespace=NS, model="openai/scripted", api_base=server.url, max_rounds=1, rules=False)
    assert result.status == "unverified", result.reason  # the model's assert is no evidence of the user's


def test_the_rules_repair_of_a_models_code_is_said_to_be_that_and_is_model_written(fake_model):
    """Issue 41: who wrote a candidate is data on its lines. The model's round-1 code misses `import math`;
    the rules' round-2 repair adds it and passes. That is "the rules' repair of the model's code", never
    "the built-in rules' repair": in the reason, the text and HTML, the summary, and the model's next prompt."""
    payload = "import os\nsecret = os.environ.get('HOME')\ny = int(math.sqrt(4))\n"
    server = fake_model(block(payload))
    result = fix("y = root_of_four\n", checks=["y == 2"], model="openai/scripted", api_base=server.url, max_rounds=3)
    assert result.status == "fixed" and result.model_written, result.reason
    model_round, rules_round = result.rounds
    assert (model_round.source, rules_round.source) == ("model", "rules")
    assert set(model_round.authors) == {"model"} and rules_round.model_written
    assert "the rules' repair of the model's code" in result.reason and "built-in rules" not in result.reason
    text = render_text(result)
    assert "round 2 (the rules' repair of the model's code): ok" in text and "built-in rules" not in text
    summary = loop_summary(result)
    assert summary["model_written"] and summary["rounds"][1]["model_written"]
    assert summary["rounds"][1]["source"] == "rules"


def test_a_rules_repair_of_the_users_cell_is_the_rules_and_the_users(fake_model):
    """The same data for a repair of the user's own cell: its lines are the user's and the rules', no model's."""
    server = fake_model(block("total = 0\n"))
    result = fix("import os\n" + TYPO, checks=["total == 24"], namespace=NS, model="openai/scripted",
                 api_base=server.url)
    (only,) = result.rounds
    assert only.source == "rules" and only.authors == ("user", "rules") and not result.model_written
    assert result.authors == {"user", "rules"} and "the built-in rules' repair" in result.reason

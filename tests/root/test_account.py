"""The LoopSummary's `account` (docs/protocol.md): what a loop's result rests on, as data the sidebar and the
history render — the source of each pass that checked its values, what the guard took out of the code handed
over, and which bound ended a loop that gave up. Real sandbox kernels and real litellm calls against the
scripted server."""

import json

from jupyter_fixloop import fix
from jupyter_fixloop.result import loop_summary

CELL = "total = sum(prices) - 1\n"
NS = {"prices": [3, 4, 5]}


def block(code: str) -> str:
    return f"```python\n{code}```"


def test_a_fix_says_which_evidence_verified_it_and_what_the_guard_took_out(fake_model):
    # the model appends the user's check to a right fix: the guard drops the copy, the check itself verifies it
    server = fake_model(block("total = sum(prices)\nassert total > 0\nassert total == 12\n"))
    result = fix(CELL + "assert total > 0\n", checks=["total == 12"], namespace=NS, model="openai/scripted",
                 api_base=server.url, rules=False)
    assert result.status == "fixed" and result.patched == "total = sum(prices)\nassert total > 0\n", result.reason
    account = json.loads(json.dumps(loop_summary(result)))["account"]  # as the lab receives it
    assert account == {"checked": ["user", "assert"], "verified": True, "runs_now": [], "doubts": [],
                       "guarded": {"checks": 1, "examples": [], "made_up": []}, "bound": None}


def test_a_loop_that_gave_up_says_which_bound_stopped_it(fake_model):
    server = fake_model(block("total = 1\n"), block("total = 2\n"))
    result = fix(CELL, checks=["total == 12"], namespace=NS, model="openai/scripted", api_base=server.url,
                 rules=False, max_rounds=2)
    assert result.status == "gave_up" and result.reason.startswith("max rounds (2) reached"), result.reason
    account = loop_summary(result)["account"]
    assert account["bound"] == "rounds" and account["checked"] == [] and not account["verified"]
    assert account["guarded"] == {"checks": 0, "examples": [], "made_up": []}


def test_an_unverified_repair_says_nothing_checked_it_and_no_bound(fake_model):
    server = fake_model(block("total = sum(prices)\n"))
    result = fix("total = sum(price)\n", namespace=NS, model="openai/scripted", api_base=server.url, rules=False,
                 max_rounds=1)
    assert result.status == "unverified", result.reason
    account = loop_summary(result)["account"]
    assert account["checked"] == [] and account["bound"] is None and account["verified"] is False

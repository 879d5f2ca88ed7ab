"""What makes a small real model repair more: a repeated answer asked again hotter, checks as the
statements they are, a stable prompt prefix, a reply cut at its code block, a server checked up front.
Real sandbox kernels and real litellm calls against the scripted server."""

import json

import pytest
from fake_model import Scripted, closed_port_url

from jupyter_fixloop import LoopHooks, fix
from jupyter_fixloop.errors import UsageError
from jupyter_fixloop.model.models import check_model, check_server
from jupyter_fixloop.model.prompt import PROMPT_TOKENS, STOP, WRONG_OUTPUT_REPLY, build_messages, cut_code, extract_code
from jupyter_fixloop.options import BUILTIN
from jupyter_fixloop.receipt.text import Budget, headline
from jupyter_fixloop.receipt.values import Receipt

CELL = "total = sum(prices) - 1\n"
FIXED = "total = sum(prices)\n"
CHECK = "t = globals().get('total')\nassert t == 12, 'total should be the sum'"


def block(code: str) -> str:
    return f"```python\n{code}```"


def user(server, i: int) -> str:
    return server.requests[i]["messages"][1]["content"]


def test_a_repeated_answer_is_asked_again_hotter_and_told_so(fake_model):
    server = fake_model(block(CELL), block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 resamples=1)
    assert result.status == "fixed" and len(result.rounds) == 2, result.reason
    assert "same code as the original cell" in result.rounds[0].receipt.text  # not run again
    assert [server.requests[i]["temperature"] for i in (0, 1)] == [0.2, 0.8]
    assert [r.temperature for r in result.rounds] == [0.2, 0.8]
    assert "Your last answer was identical to the original cell" in user(server, 1)
    assert "Your last answer" not in user(server, 0)


def test_a_seed_is_sent_with_every_call_and_none_by_default(fake_model):
    server = fake_model(block(CELL), block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 resamples=1, seed=7)
    assert result.status == "fixed", result.reason
    assert [r.get("seed") for r in server.requests] == [7, 7]  # the hotter call too: its temperature differs
    server = fake_model(block(FIXED))
    assert fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted",
               api_base=server.url).status == "fixed"
    assert "seed" not in server.requests[0]
    with pytest.raises(UsageError, match="seed must be"):
        fix(CELL, checks=[CHECK], model="openai/scripted", api_base=server.url, seed=-2)


def test_a_reply_is_capped_by_the_cells_size_and_a_cut_one_is_said_so(fake_model):
    rambling = "```python\n" + "total = sum(prices)  # the sum of the prices, again and again\n" * 200
    server = fake_model(rambling, block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 2, result.reason
    assert [r["max_tokens"] for r in server.requests] == [1024 + len(CELL) // 2] * 2  # by default: by the cell
    assert "No code: the reply was cut at 1036 tokens (reply_tokens) before a complete ```python block" \
        in result.rounds[0].receipt.text
    server = fake_model(rambling)
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 reply_tokens=40, max_rounds=1)
    assert server.requests[0]["max_tokens"] == 40 and "cut at 40 tokens" in result.rounds[0].receipt.text
    assert cut_code("```python\nx = 1\n```\nThen again:\n```python\nx = 1\nx") == "x = 1\n"  # the closed block
    assert cut_code("```python\nx = 1\ny = 2\n") is None and cut_code("x = 1") is None
    with pytest.raises(UsageError, match="reply_tokens must be"):
        fix(CELL, checks=[CHECK], model="openai/scripted", api_base=server.url, reply_tokens=-1)


def test_a_second_repeat_ends_the_loop_and_says_so(fake_model):
    other = "total = sum(prices) - 2\n"
    server = fake_model(block(other), block(other), block(other))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 resamples=1)
    assert result.status == "gave_up"
    assert result.reason.startswith("the model repeated your answer in round 1, also when asked again at "
                                    "a higher temperature")
    assert len(server.requests) == 3 and len(result.rounds) == 3  # every call is a round: its tokens count
    assert result.rounds[2].temperature == 0.8 and "same code as round 1" in result.rounds[2].receipt.text


def test_after_a_repeat_several_hotter_answers_are_run_and_the_best_carried_on(fake_model):
    wrong = "total = sum(prices) - 2\n"
    # round 1 repeats the cell; round 2 asks three times, hotter: a repeat, a wrong one, then the fix
    server = fake_model(block(CELL), block(CELL), block(wrong), Scripted(block(FIXED), delay=1.0))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 2, result.reason
    assert [r["temperature"] for r in server.requests] == [0.2, 0.8, 1.0, 1.2]
    second = result.rounds[1]
    assert [s.temperature for s in second.samples] == [0.8, 1.0, 1.2] and second.temperature == 1.2
    assert second.usage.tokens == sum(s.tokens for s in second.samples) > 0
    # the same without resampling: one hotter call, a repeat again, and the loop ends
    server = fake_model(block(CELL))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 resamples=1)
    assert result.status == "gave_up" and len(server.requests) == 2


def test_a_check_block_is_shown_as_code_and_its_values_reach_the_model(fake_model):
    server = fake_model(block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed"
    assert result.first.kind == "check_failed"
    assert headline(result.first) == "Check failed: assert t == 12"
    assert "t is 11, expected 12" in result.first.text
    assert "from line 1 of the cell: total = sum(prices) - 1" in result.first.text
    prompt = user(server, 0)
    assert f"```python\n{CHECK}\n```" in prompt  # the block as the code it is
    assert "exec(compile" not in prompt


def test_the_check_copied_into_the_cell_is_dropped_and_the_rest_runs(fake_model):
    copied = FIXED + "t = globals().get('total')\nassert t == 12, 'total should be the sum'\n"
    server = fake_model(block(copied))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 1
    assert result.patched == FIXED  # the copies are not part of the proposed cell
    assert "2 statement(s) copied from the checks were removed" in result.rounds[0].receipt.text


def test_the_note_on_copied_checks_fits_the_receipt_budget_with_the_run(fake_model):
    from jupyter_fixloop.model.models import token_counter

    noisy = "for i in range(60):\n    print('row', i, 'x' * 60)\n" + FIXED
    server = fake_model(block(noisy + "t = globals().get('total')\nassert t == 12, 'total should be the sum'\n"))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 receipt_tokens=120)
    text = result.rounds[0].receipt.text
    assert result.status == "fixed" and text.startswith("ran without error") and "row 59 " in text
    assert text.endswith("2 statement(s) copied from the checks were removed from your answer; the checks run on "
                         "their own after the cell.")
    assert token_counter("openai/scripted")(text) <= 120


def test_a_check_copied_inside_the_code_is_rejected(fake_model):
    hidden = FIXED + "def _verify():\n    assert t == 12, 'total should be the sum'\n"
    server = fake_model(block(hidden), block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert [r.receipt.kind for r in result.rounds] == ["rejected", "ok"]
    assert "copies the check `assert t == 12`" in result.rounds[0].receipt.text


def test_round_two_keeps_the_prefix_and_shows_only_the_latest_candidate(fake_model):
    first, second = "total = sum(prices) - 2\n", "total = sum(prices) - 3\n"
    server = fake_model(block(first), block(second), block(FIXED))
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 3
    prefix = user(server, 0).removesuffix(WRONG_OUTPUT_REPLY)  # the cell's own run gave a wrong value
    assert user(server, 1).startswith(prefix) and user(server, 2).startswith(prefix)
    assert server.requests[1]["messages"][0] == server.requests[0]["messages"][0]  # the same system prompt
    third = user(server, 2)[len(prefix):]
    assert second.strip() in third and first.strip() not in third  # earlier candidates: one line each
    assert "- round 1: Check failed: assert t == 12" in third


def test_a_later_receipt_omits_what_the_original_run_already_said(fake_model):
    # a candidate that changes nothing that matters: its receipt is the original's, but for the headline
    noop = "total = sum(prices) - 1  # unchanged\n"
    ns = {"prices": [3, 4, 5], "when": __import__("pandas").Series(__import__("pandas").to_datetime([0, 1]))}
    check = "assert when.dt.year.tolist() == [2024, 2024] and total == 12"
    server = fake_model(block(noop), block(FIXED))
    result = fix(CELL, checks=[check], namespace=ns, model="openai/scripted", api_base=server.url, max_rounds=2)
    assert len(result.rounds) == 2
    full, second = result.rounds[0].receipt.text, user(server, 1)
    shown = second.split("### What happened\n")[-1].split("\n\n###")[0]
    assert shown.startswith(full.splitlines()[0] + "\n")  # the headline stays
    # the lines naming the changed cell line stay (its trace heading and line), their values go
    assert "(the other lines are as in the original run above)" in shown and len(shown) < len(full) * 2 / 3
    assert full.splitlines()[1] not in shown
    assert " object at 0x" not in result.first.text  # a default repr tells the model nothing


def test_the_reply_ends_with_its_code_block(fake_model):
    server = fake_model(block(FIXED))
    fix(CELL, checks=["total == 12"], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert server.requests[0]["stop"] == list(STOP)


def test_the_server_is_checked_up_front_in_one_line(fake_model):
    with pytest.raises(UsageError) as caught:
        check_model("openai/local", closed_port_url())
    message = str(caught.value)
    assert "\n" not in message and "could not be reached" in message and "openai/local" in message
    check_model(BUILTIN, closed_port_url())  # the built-in engine needs no server
    server = fake_model("unused")
    check_server(server.url)  # it lists its models at GET /v1/models
    assert server.requests == []


def test_a_web_server_that_is_not_a_model_server_is_said_up_front(fake_model, tmp_path, capsys):
    """A real HTTP server on 127.0.0.1 that answers 404 at `{api_base}/models` (the URL lacks /v1):
    a usage error in one line, exit 2 in batch mode, before any cell runs."""
    root = fake_model("unused").url.removesuffix("/v1")
    with pytest.raises(UsageError) as caught:
        check_model("openai/local", root)
    message = str(caught.value)
    assert "\n" not in message and "not a model server at this URL (HTTP 404" in message, message
    assert "is --api-base right (it usually ends in /v1)?" in message
    from nbformat.v4 import new_code_cell, new_notebook

    from jupyter_fixloop.batch import cli as batch_cli

    nb = tmp_path / "one.ipynb"
    nb.write_text(json.dumps(new_notebook(cells=[new_code_cell("x = 1")])))
    assert batch_cli.main([str(nb), "--model", "openai/local", "--api-base", root + "/"]) == 2
    said = capsys.readouterr()
    assert "not a model server at this URL (HTTP 404" in said.err + said.out
    assert not (tmp_path / "one.fixed.ipynb").exists()


def test_a_failed_model_call_is_said_when_the_rules_repair_is_kept(fake_model):
    """The server answers its model list but fails the chat call: the rules' repair (which nothing
    checks, so the model is asked beside it) is kept, and the result says the model's call failed."""
    server = fake_model(Scripted(status=404, body=json.dumps({"error": {"message": "no such route"}}).encode()))
    result = fix("total = sum(prics)\n", namespace={"prices": [3, 4, 5]}, model="openai/scripted",
                 api_base=server.url, max_rounds=1)
    assert server.requests, "the model was asked"
    assert result.status == "unverified" and result.rounds[0].source == "rules", result.reason
    assert "a model call failed in round 1: model openai/scripted: NotFoundError 404" in result.reason, result.reason
    assert result.rounds[0].model_error.startswith("model openai/scripted: NotFoundError 404")


def test_bench_reports_the_round_that_fixed_each_case(fake_model, tmp_path):
    from fixloop_bench import fixrate as bench

    case = {"id": "t-sum", "category": "wrong_output", "group": "logic", "fails_with": "check:AssertionError",
            "setup": "prices = [3, 4, 5]\n", "cell": CELL, "check": CHECK}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n")
    server = fake_model(block("total = sum(prices) - 2\n"), block(FIXED))
    out = tmp_path / "figures.json"
    assert bench.main([str(path), "--model", "openai/scripted", "--api-base", server.url, "--expect-check",
                       "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    (only,) = data["cases"]
    assert only["fixed"] and only["fixed_in_round"] == 2
    assert [r["kind"] for r in only["per_round"]] == ["check_failed", "ok"]
    assert all(r["prompt_tokens"] > 0 for r in only["per_round"])
    assert data["rounds"]["fixed_in_round"] == {"2": 1}
    assert data["rounds"]["round_1"]["calls"] == 1 and data["rounds"]["round_2_plus"]["calls"] == 1
    assert "assert t == 12" in user(server, 0) and "exec(compile" not in user(server, 0)


def test_the_live_header_shows_the_model_writing(fake_model):
    from jupyter_fixloop.hooks import ModelWriting
    from jupyter_fixloop.render import activity_text

    server = fake_model(block(FIXED + "# " + "x" * 200 + "\n"))
    events = []
    result = fix(CELL, checks=["total == 12"], namespace={"prices": [3, 4, 5]}, model="openai/scripted",
                 api_base=server.url, hooks=LoopHooks(on_model_writing=events.append))
    assert result.status == "fixed", result.reason
    assert server.requests[0]["stream"] is True
    assert events and all(isinstance(e, ModelWriting) for e in events)
    assert events[-1].tokens == -(-len(result.rounds[0].reply) // 4)  # the chunks it streamed
    assert all(e.round == 1 for e in events)
    assert result.rounds[0].usage.completion_tokens > 0 and result.rounds[0].usage.prompt_tokens > 0
    text = activity_text(ModelWriting(round=1, max_rounds=4, tokens=57, rate=12.34))
    assert text == "round 1 of 4: the model is writing (57 tokens, 12.3 tokens/s)"
    # without a listener nothing streams
    quiet = fake_model(block(FIXED))
    fix(CELL, checks=["total == 12"], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=quiet.url)
    assert "stream" not in quiet.requests[0]


def test_a_hosted_model_without_its_key_is_refused_up_front_naming_the_variable(monkeypatch):
    """litellm (really imported, no network) knows the variable each provider reads."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError) as caught:
        check_model("anthropic/claude-sonnet-4-5")
    message = str(caught.value)
    assert "\n" not in message and "ANTHROPIC_API_KEY" in message and "500" not in message
    with pytest.raises(UsageError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        check_model("gemini/gemini-2.0-flash")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    check_model("anthropic/claude-sonnet-4-5")  # set: nothing to say
    check_model("ollama/qwen2.5-coder")  # no key to need (its base URL has a default)


def test_a_local_openai_server_without_a_key_is_told_any_value_does(fake_model, monkeypatch):
    server = fake_model("unused")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(UsageError) as caught:
        check_model("openai/local", server.url)
    assert "needs OPENAI_API_KEY" in str(caught.value) and "OPENAI_API_KEY=x" in str(caught.value)


def test_a_wrong_output_round_asks_for_a_one_line_diagnosis_which_stays_out_of_the_cell():
    wrong = Receipt(kind="check_failed", text="Check failed: total == 12\n  total is 11, expected 12")
    crash = Receipt(kind="exception", text="NameError: name 'price' is not defined")
    asks = build_messages("total = sum(price)\n", checks=("total == 12",), history=[("total = sum(price)\n", wrong)])
    assert asks[1]["content"].endswith(WRONG_OUTPUT_REPLY)
    crashed = build_messages("total = sum(price)\n", checks=("total == 12",), history=[("total = sum(price)\n", crash)])
    assert not crashed[1]["content"].endswith(WRONG_OUTPUT_REPLY)
    reply = "```python\n# bug: line 1 sums the wrong list\ntotal = sum(prices)\n```"
    assert extract_code(reply) == "total = sum(prices)\n"


def test_a_long_latest_receipt_is_cut_so_the_prompt_fits_and_the_original_run_stays_whole():
    cell = "top = df.sort_values('r').head(3)\n"
    original = Receipt(kind="check_failed", text="Check failed: top == ['b']\n  the original run's own line")
    long = Receipt(kind="check_failed",
                   text="Check failed: top == ['b']\n" + "\n".join(f"  line {i}: x = {i}" * 3 for i in range(400)))
    history = [(cell, original), ("candidate = 1\n", long)]
    limit = Budget(PROMPT_TOKENS)
    whole = build_messages(cell, checks=("top == ['b']",), history=history)
    fitted = build_messages(cell, checks=("top == ['b']",), history=history, limit=limit)
    size = lambda messages: sum(limit.count(m["content"]) for m in messages)  # noqa: E731
    assert size(whole) > PROMPT_TOKENS >= size(fitted)
    assert "the original run's own line" in fitted[1]["content"] and "receipt cut to fit" in fitted[1]["content"]
    assert "line 0: x = 0" in fitted[1]["content"]  # the first lines of the latest receipt are kept


def test_an_unknown_provider_is_refused_from_litellms_tables_without_importing_litellm():
    """The refusal reads the tables litellm ships (seconds saved: importing litellm is the slow part), and
    the tables agree with litellm itself: every provider it lists is known, nothing it accepts is refused."""
    import subprocess
    import sys

    probe = ("import sys\nfrom jupyter_fixloop.model.models import check_model\nfrom jupyter_fixloop.errors import "
             "UsageError\ntry:\n    check_model('nosuchprovider/some-model')\nexcept UsageError as exc:\n"
             "    print(exc)\nprint('litellm imported:', 'litellm' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "unknown model or provider 'nosuchprovider/some-model'" in out
    assert "litellm imported: False" in out
    from jupyter_fixloop.model.models import known_to_litellm, litellm

    lib = litellm()
    assert all(known_to_litellm(f"{getattr(p, 'value', p)}/some-model") for p in lib.provider_list)
    for name in [*list(lib.model_cost)[:400], "llama3", "gpt-4o", "nosuch/x"]:
        try:
            lib.get_llm_provider(name)
        except Exception:
            continue
        assert known_to_litellm(name) is not False, name  # never refused where litellm would go on


def test_the_prompt_a_server_read_from_its_cache_is_counted_through_litellm(fake_model):
    # round 2's prompt starts with round 1's: a server with a prompt cache (llama-server) reads that part from it
    # and says so; the usage keeps it, and the server's seconds reading the rest and writing the reply
    server = fake_model(block("total = sum(prices) - 2\n"), block(FIXED))
    server.prompt_cache = True
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 2, result.reason
    first, second = (r.usage for r in result.rounds)
    assert first.cached_tokens == 0 and first.prompt_seconds == first.prompt_tokens / 1000
    assert first.reply_seconds == pytest.approx(2 * first.completion_tokens / 1000) and first.completion_tokens > 0
    assert 0.5 * first.prompt_tokens < second.cached_tokens < second.prompt_tokens
    assert second.prompt_seconds == pytest.approx((second.prompt_tokens - second.cached_tokens) / 1000, abs=0.002)
    quiet = fake_model(block(FIXED))  # a server that says neither: 0 for both, not a guess
    result = fix(CELL, checks=[CHECK], namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=quiet.url)
    usage = result.rounds[0].usage
    assert (usage.cached_tokens, usage.prompt_seconds, usage.reply_seconds) == (0, 0, 0.0)

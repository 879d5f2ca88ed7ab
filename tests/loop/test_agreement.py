"""Agreement of independent samples and checks read from the instruction (issue #54), with real sandbox
kernels and real litellm calls to the scripted server."""

import json

import pandas as pd
import pytest
from fake_model import Scripted
from traitlets import TraitError

from jupyter_fixloop import LoopHooks, fix
from jupyter_fixloop.config import FixLoop
from jupyter_fixloop.errors import UsageError
from jupyter_fixloop.kernel.namespace import describe
from jupyter_fixloop.loop.derived import frames_of, read_checks
from jupyter_fixloop.receipt.effect import Change, Effect
from jupyter_fixloop.receipt.values import Receipt
from jupyter_fixloop.render import candidate_lines, render_html, render_text
from jupyter_fixloop.result import Agreement, LoopResult, Round, loop_summary


def block(code: str) -> str:
    return f"```python\n{code}\n```"


def _euro():
    return {"pd": pd, "euro12": pd.DataFrame({"Team": ["Croatia", "Denmark", "Spain"], "Goals": [4, 4, 12]})}


def _orders():
    return {"pd": pd, "orders": pd.DataFrame({"id": [1, 1, 2, 3], "amount": ["5", "5", "7.5", "x"]})}


def _generate(server, instruction, ns, **knobs):
    knobs = {"model": "openai/scripted", "api_base": server.url, "rules": False, **knobs}
    return fix("", instruction=instruction, namespace=ns, **knobs)


def test_answers_are_grouped_by_what_they_do_not_by_their_text(fake_model):
    same = ["euro12[euro12.Goals > 6]", "euro12.query('Goals > 6')", "euro12.loc[euro12['Goals'] > 6, :]"]
    other = "euro12[euro12.Goals >= 4]"
    server = fake_model(block(same[1]), block(other), block(same[2]), block(same[0]))
    result = _generate(server, "Which teams scored more than 6 goals?", _euro(), agreement_samples=4, max_rounds=1)
    assert len(server.requests) == 4  # no answer ends the round: each one runs
    assert result.status == "unverified", result.reason  # agreement is a fact, never evidence
    assert result.agreement is not None and (result.agreement.agreeing, result.agreement.answers) == (3, 4)
    assert result.agreement.groups == (3, 1) and not result.agreement.unanimous
    assert result.patched.strip() == same[0]  # the simplest spelling of the largest group
    assert "3 of 4 independent answers give this result" in result.reason
    (rival,) = result.alternatives  # the next result, beside it: not the other spellings of this one
    assert rival.code.strip() == other
    text = render_text(result)
    assert "the next result, which 1 of 4 independent answers give" in text and "pick one" in text
    assert "agreement: 3 of 4 independent answers give this result" in text
    assert "3 of 4 independent answers" in render_html(result)
    summary = json.loads(json.dumps(loop_summary(result)))
    assert summary["agreement"]["agreeing"] == 3 and summary["agreement"]["answers"] == 4
    assert [a["code"].strip() for a in summary["alternatives"]] == [other]


def test_answers_that_all_agree_are_said_so_and_stay_unverified(fake_model):
    # four to ask: three that agree are a majority, the fourth is not asked
    server = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12['Goals'].sum()"),
                        block("euro12.Goals.max()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=4, max_rounds=1)
    assert result.status == "unverified" and result.agreement.unanimous, result.reason
    assert len(server.requests) == 3 and result.agreement.groups == (3,) and result.alternatives == ()
    assert result.agreement.spellings == 3 and loop_summary(result)["agreement"]["unanimous"] is True
    assert "3 of 3 independent answers give this result" in result.reason


def test_two_answers_of_three_that_agree_and_pass_are_handed_over_as_2_of_2_without_a_third(fake_model):
    # a majority of the three to ask that passes every check: the third could not change the result handed over,
    # so it is not asked; said as what was asked and agrees, "2 of 2", which is not "K of K" (three at least)
    server = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12.Goals.max()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1)
    assert len(server.requests) == 2 and result.agreement.groups == (2,), result.reason
    a = result.agreement
    assert (a.agreeing, a.answers, a.planned, a.spellings) == (2, 2, 3, 2) and not a.unanimous
    assert "2 of 2 independent answers give this result (1 more not asked: 2 of the first 2 already agree, a " \
           "majority of the 3 to ask)" in result.reason
    assert "3 of 3" not in result.reason and "3 of 3" not in render_text(result)
    said = loop_summary(result)["agreement"]
    assert said["unanimous"] is False and said["text"] == "2 of 2 independent answers give this result"
    assert result.status == "unverified" and result.patched.strip() == "euro12.Goals.sum()"
    # one code twice: said so
    once = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.sum()  # total"), block("euro12.Goals.max()"))
    result = _generate(once, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1)
    assert len(once.requests) == 2 and not result.agreement.unanimous, result.reason
    assert "2 of 2 independent answers give this result, the same code each time" in result.reason


def test_a_round_that_asks_a_fresh_answer_beside_its_k_stops_at_a_majority_of_all_it_asks(fake_model):
    # no answer of the first round ran to its end: the next asks a fresh one beside its three, four in all; two
    # that agree are no majority of four (the other two could tie them), so a third is asked, and three stop it
    stuck = [block(f"euro12.Goal{i}.sum()") for i in range(3)]
    server = fake_model(*stuck, block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"),
                        block("euro12['Goals'].sum()"), block("euro12.Goals.max()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=2)
    a = result.agreement
    assert (a.agreeing, a.answers, a.planned) == (3, 3, 4) and len(server.requests) == 6, result.reason
    assert "a majority of the 4 to ask" in result.reason and "2 of the first 2" not in result.reason


def test_two_answers_that_agree_on_a_result_a_read_check_rejects_are_asked_a_third(fake_model):
    # the first two keep the duplicates ("drop duplicate orders" reads: none remain): a group that does not pass
    # may be outranked by one that does, so the third is asked, and it leads
    server = fake_model(block("orders.head()"), block("orders.iloc[:5]"), block("orders.drop_duplicates()"))
    result = _generate(server, "Drop duplicate orders", _orders(), agreement_samples=3, max_rounds=1,
                       model_slots=2)
    assert [r.get("n") for r in server.requests] == [2, None], result.reason
    assert result.patched.strip() == "orders.drop_duplicates()" and result.agreement.groups == (1, 2)
    assert "1 of 3 independent answers give this result" in result.reason


def test_k_of_k_is_said_only_of_three_answers_or_more_that_are_not_one_code(fake_model):
    # one code written three times (a comment and the layout aside): one reading of the instruction, said as such
    same = ["euro12.Goals.sum()", "# the total\neuro12.Goals.sum()", "euro12.Goals.sum( )"]
    server = fake_model(*(block(c) for c in same), block("euro12.Goals.max()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=4, max_rounds=1)
    assert len(server.requests) == 3 and result.agreement.groups == (3,), result.reason
    assert result.agreement.spellings == 1 and not result.agreement.unanimous
    assert "3 of 3 independent answers give this result, the same code each time" in result.reason
    assert loop_summary(result)["agreement"]["unanimous"] is False and result.status == "unverified"
    # two answers that agree, written differently: agreement, but no "K of K" (two are a majority, not a consensus)
    two = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"))
    result = _generate(two, "How many goals were scored in total?", _euro(), agreement_samples=2, max_rounds=1)
    assert (result.agreement.agreeing, result.agreement.answers, result.agreement.spellings) == (2, 2, 2)
    assert not result.agreement.unanimous and "2 of 2 independent answers give this result" in result.reason


def test_a_check_of_the_users_turns_agreement_off(fake_model):
    server = fake_model(block("total = euro12.Goals.sum()"))
    result = fix("", instruction="Sum the goals into total", namespace=_euro(), checks=["total == 20"],
                 model="openai/scripted", api_base=server.url, rules=False, agreement_samples=3)
    assert result.status == "fixed" and result.agreement is None and len(server.requests) == 1


def test_checks_are_read_from_an_instruction_by_rules_and_only_where_they_can_be_tested():
    ns = _orders()
    frames = frames_of(ns, describe(ns))
    assert [c.words for c in read_checks("Drop duplicate orders", frames)] == [
        "no duplicate rows remain in `orders` (or in the frame the code shows)"]
    (numeric,) = read_checks("Parse the amount column into floats", frames)
    assert numeric.words == ("column `amount` of `orders` (or of the frame the code shows) is numeric, and as many "
                             "values are missing as before, 0: none lost, none made up")
    cities = {"df": pd.DataFrame({"city": ["a", "b"], "n": [1, 2]})}
    (one,) = read_checks("Give one row per city", frames_of(cities, describe(cities)))
    assert "one row per `city`" in one.words
    assert [c.expr for c in read_checks("Assign it to `discipline`", frames)] == ["'discipline' in globals()"]
    assert read_checks("Plot the orders", frames) == ()  # nothing testable stated
    assert read_checks("Parse the price column into floats", frames) == ()  # no such column: no check
    assert read_checks("Drop duplicate orders", frames, checks=[numeric.expr]) != ()
    first = read_checks("Drop duplicate orders", frames)[0]
    assert read_checks("Drop duplicate orders", frames, checks=[first.expr]) == ()  # given as the user's


def test_a_read_check_is_shown_before_use_ranks_answers_and_is_not_evidence(fake_model):
    events = []
    server = fake_model(block("orders.head()"), block("orders = orders.drop_duplicates()\norders"))
    hooks = LoopHooks(on_checks_read=events.append, on_run_start=events.append)
    result = _generate(server, "Drop duplicate orders", _orders(), hooks=hooks, max_rounds=2)
    assert type(events[0]).__name__ == "ChecksRead" and len(events) > 1  # shown before any candidate runs
    (check,) = events[0].checks
    assert check.text == ("checked: no duplicate rows remain in `orders` (or in the frame the code shows) "
                          "(read from your instruction)")
    assert result.rounds[0].receipt.kind == "check_failed"  # the first answer kept the duplicates: told so
    # told in the check's words, not as the rules' code
    assert "read from the instruction: no duplicate rows remain in `orders`" in server.prompt(1)
    assert result.status == "unverified", result.reason  # it holds, but it is the rules' reading, not yours
    assert result.read_checks[0].passed is True
    assert "checked: no duplicate rows remain in `orders`" in render_text(result)
    assert "(read from your instruction): it holds" in render_text(result)


def test_a_read_check_given_as_the_users_own_is_their_evidence(fake_model):
    ns = _orders()
    (check,) = read_checks("Drop duplicate orders", frames_of(ns, describe(ns)))
    server = fake_model(block("orders = orders.drop_duplicates()"))
    result = _generate(server, "Drop duplicate orders", ns, checks=[check.expr])
    assert result.status == "fixed", result.reason
    assert result.read_checks == ()  # it is the user's check now, not one read for them


def test_the_receipt_tells_a_model_that_reloads_data_the_user_has_what_it_keeps_missing(fake_model):
    reload = block("euro12 = pd.read_csv('euro2012.csv')\neuro12.Goals.sum()")
    server = fake_model(reload, block("euro12.Goals.sum()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), max_rounds=2)
    first = result.rounds[0].receipt
    assert first.ename == "FileNotFoundError"
    told = ("`euro12` is already yours (DataFrame 3×2), made before this cell: use it as it is instead of reading "
            "'euro2012.csv' again (that file is not here)")
    assert told in first.text and told in server.prompt(1)
    assert result.status == "unverified" and result.patched.strip() == "euro12.Goals.sum()"


def test_the_receipt_tells_a_model_that_reads_a_frames_index_as_a_column_what_it_is(fake_model):
    army = pd.DataFrame({"origin": ["Arizona", "Texas"], "deaths": [3, 5]}).set_index("origin")
    server = fake_model(block("army[army['origin'] == 'Texas']"), block("army.origin"),
                        block("army.loc[['Texas']]"))
    result = _generate(server, "Show the rows of Texas", {"pd": pd, "army": army}, max_rounds=3)
    told = ("'origin' is not a column of army but the name of its index: read it as army.index, or make it a "
            "column again with army.reset_index()")
    assert told in result.rounds[0].receipt.text and told in server.prompt(1)
    assert told in result.rounds[1].receipt.text  # `army.origin` too
    assert result.patched.strip() == "army.loc[['Texas']]"


def test_the_user_may_pick_the_next_result_which_stays_unverified():
    mine, theirs = Receipt("ok", "ok", value="1"), Receipt("ok", "ok", value="2", effect=Effect((Change("x", "new"),)))
    result = LoopResult("unverified", "", "a = 1\n", [Round(1, "a = 1\n", mine)], reason="nothing checked it",
                        agreement=Agreement(3, 4, (3, 1), "b = 2\n", theirs))
    picked = result.picked_rival()
    assert picked.patched == "b = 2\n" and picked.status == "unverified" and picked.effect is theirs.effect
    assert picked.agreement.text == "1 of 4 independent answers give this result"
    assert picked.picked_rival().patched == "a = 1\n"  # and back
    assert LoopResult("unverified", "", "a = 1\n", [Round(1, "a = 1\n", mine)]).picked_rival() is None


def test_a_read_check_ranks_but_never_vetoes_code_that_ran(fake_model):
    # the frame deduplicated into a name of its own: `orders` keeps its duplicates, the code shows nothing
    server = fake_model(block("clean = orders.drop_duplicates(subset='id')\nclean.loc[:, 'id'] = clean['id']"))
    result = _generate(server, "Drop duplicate orders", _orders(), max_rounds=2)
    assert result.status == "unverified", result.reason  # handed over, said with what does not hold
    assert result.patched.startswith("clean = orders.drop_duplicates")
    assert "a check read from your instruction does not hold: no duplicate rows remain in `orders`" in result.reason
    assert result.read_checks[0].passed is False and "it does NOT hold" in render_text(result)


def test_each_independent_answer_is_asked_with_a_seed_of_its_own(fake_model):
    # one seed at several temperatures draws the same random numbers: the answers would share one bias
    server = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("euro12['Goals'].sum()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1,
                       seed=7)
    assert result.agreement.groups == (2, 1), result.reason
    assert sorted(r["seed"] for r in server.requests) == [7, 8, 9]
    assert len({r["temperature"] for r in server.requests}) == 3
    alone = fake_model(block("euro12.Goals.sum()"))
    _generate(alone, "How many goals were scored in total?", _euro(), max_rounds=1, seed=7)
    assert [r["seed"] for r in alone.requests] == [7]  # one answer: the seed as given


def test_a_server_with_slots_is_asked_for_the_answers_side_by_side(fake_model):
    server = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12['Goals'].sum()"))
    # a server that ignores `n`: its one choice answers the first, the two others are asked side by side
    server.together, server.choices = 2, 1  # no reply until two are asked at once (the first request alone passes)
    server.hold = 3.0
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1,
                       model_slots=3)
    assert server.most_in_flight == 2 and len(server.requests) == 3
    assert server.requests[0]["n"] == 3 and all("n" not in r for r in server.requests[1:])
    assert result.status == "unverified" and result.agreement.agreeing >= 2, result.reason
    one = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12['Goals'].sum()"))
    _generate(one, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1)
    assert one.most_in_flight == 1  # one slot (the default): one call after another


def test_a_server_with_a_slot_for_each_answer_is_asked_them_as_one_request_of_n(fake_model):
    # one request: the prompt is read once (llama-server's n_cmpl), the server samples each choice on its own
    server = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1,
                       model_slots=3, seed=7)
    assert len(server.requests) == 1 and server.requests[0]["n"] == 3, result.reason
    assert server.requests[0]["seed"] == 7 and server.requests[0]["temperature"] == 0.5  # the spread's mean
    assert result.agreement.groups == (2, 1) and result.patched.strip() == "euro12.Goals.sum()", result.reason
    samples = result.rounds[0].samples
    assert [s.temperature for s in samples] == [0.5, 0.5, 0.5] and [s.choice for s in samples] == [0, 1, 2]
    assert "at T=0.5 (choice 3 of the request above)" in candidate_lines(result.rounds[0])[2]
    # the request's usage once: its prompt, cost and seconds on the first answer; every reply token counted once
    said = server.requests[0]["messages"]
    assert samples[0].prompt_tokens == sum(len(m["content"]) for m in said) // 4
    assert [s.prompt_tokens for s in samples[1:]] == [0, 0] and [s.seconds for s in samples[1:]] == [0.0, 0.0]
    replies = [block(c) for c in ("euro12.Goals.sum()", "euro12.Goals.max()", "sum(euro12['Goals'])")]
    assert result.rounds[0].usage.completion_tokens == sum(len(r) // 4 for r in replies)
    assert all(s.completion_tokens > 0 for s in samples)


def test_a_server_with_fewer_slots_than_answers_is_asked_one_a_slot_and_the_rest_only_where_they_disagree(
        fake_model):
    # two slots, five answers: one request of 2, then one by one until a majority that may be said "K of K" agrees
    server = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12['Goals'].sum()"),
                        block("euro12.Goals.max()"), block("euro12.Goals.min()"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=5, max_rounds=1,
                       model_slots=2, seed=7)
    assert [(r.get("n"), r["seed"]) for r in server.requests] == [(2, 7), (None, 9)], result.reason
    assert (result.agreement.agreeing, result.agreement.answers, result.agreement.planned) == (3, 3, 5)
    assert "3 of 3 independent answers give this result (2 more not asked" in result.reason
    assert result.status == "unverified" and result.agreement.unanimous
    # the answer asked after the request keeps its own spread temperature: a hotter, another draw
    assert server.requests[1]["temperature"] > server.requests[0]["temperature"]
    # three answers, the first two differ: the third is asked on its own (its seed the next), and settles it
    split = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    result = _generate(split, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1,
                       model_slots=2, seed=7)
    assert [(r.get("n"), r["seed"]) for r in split.requests] == [(2, 7), (None, 9)], result.reason
    assert (split.requests[0]["temperature"], split.requests[1]["temperature"]) == (0.5, 0.8)
    assert result.agreement.groups == (2, 1) and result.patched.strip() == "euro12.Goals.sum()", result.reason
    assert "2 of 3 independent answers give this result;" in result.reason


def test_a_server_that_counts_the_first_choice_alone_has_the_others_counted(fake_model):
    server = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    server.usage_of_first = True  # as llama-server: the usage of its first result
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1,
                       model_slots=3)
    samples = result.rounds[0].samples
    assert len(server.requests) == 1 and samples[0].completion_tokens == len(block("euro12.Goals.sum()")) // 4
    assert result.rounds[0].usage.completion_tokens == sum(s.completion_tokens for s in samples)
    for sample, code in zip(samples[1:], ("euro12.Goals.max()", "sum(euro12['Goals'])")):  # estimated from the text
        assert abs(sample.completion_tokens - len(block(code)) // 4) <= 2, (sample, result.reason)


def test_a_server_that_returns_fewer_choices_or_refuses_n_is_asked_the_rest_one_by_one(fake_model):
    server = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    server.choices = 1
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1,
                       model_slots=3, seed=7)
    assert [(r.get("n"), r["seed"]) for r in server.requests] in ([(3, 7), (None, 8), (None, 9)],
                                                                    [(3, 7), (None, 9), (None, 8)])
    assert result.agreement.groups == (2, 1), result.reason
    # llama-server refuses an n above its slots (HTTP 400): the answers are asked one by one, in later rounds too
    refusal = Scripted(status=400, body=b'{"error": {"message": "n_cmpl must be <= 1", "code": 400}}')
    wrong = [block(f"euro12.Goal{i}.sum()") for i in range(3)]  # round 1's answers raise: a round 2
    refusing = fake_model(refusal, *wrong, block("euro12.Goals.sum()"))
    result = _generate(refusing, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=2,
                       model_slots=3)
    # round 2: its 3 answers and, since none of round 1 ran, a fresh one beside them (4 planned, none more asked)
    assert len(result.rounds) == 2 and result.agreement.groups == (4,), result.reason
    assert result.agreement.planned == 4 and result.agreement.asking == ""
    assert result.agreement.same_code and not result.agreement.unanimous  # one code four times: no "K of K"
    assert refusing.requests[0]["n"] == 3 and len(refusing.requests) >= 7  # 1 refused, 3, then 3 or 4 at once
    assert all("n" not in r for r in refusing.requests[1:])


def test_a_rounds_answers_share_one_prompt_that_a_servers_cache_reads_once(fake_model):
    # the K answers are asked the same messages: one after another, a server's prompt cache computes the prompt
    # once and reads it for the others (llama-server; separate calls at once each compute it in a slot of its own)
    server = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    server.prompt_cache = True
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1)
    assert len(server.requests) == 3 and result.agreement.groups == (2, 1), result.reason
    assert server.requests[1]["messages"] == server.requests[0]["messages"] == server.requests[2]["messages"]
    usage = result.rounds[0].usage
    one = usage.prompt_tokens // 3
    assert usage.cached_tokens >= 2 * one - 2 and usage.prompt_seconds <= (one + 2) / 1000


def test_answers_that_show_and_change_nothing_agree_on_nothing(fake_model):
    # three checks that pass show nothing and change nothing: no result to agree on, so no "3 of 3" is said
    server = fake_model(block("assert euro12.Goals.notna().all()"), block("assert not euro12.isna().any().any()"),
                        block("assert euro12['Goals'].isnull().sum() == 0"))
    result = _generate(server, "Make sure no goal count is missing", _euro(), agreement_samples=3, max_rounds=1)
    assert len(server.requests) == 3 and result.agreement is None, result.reason
    assert "independent answers" not in result.reason and result.status == "unverified"


def test_answers_that_name_their_own_helpers_differently_give_one_result(fake_model):
    # the same teams, shown, kept under a name of the answer's own, or reached through a mask: one result
    server = fake_model(block("big = euro12[euro12.Goals > 6]"), block("euro12.Goals.max()"),
                        block("mask = euro12['Goals'] > 6\neuro12[mask]"),
                        block("result = euro12.query('Goals > 6')\nresult"))
    result = _generate(server, "Which teams scored more than 6 goals?", _euro(), agreement_samples=4, max_rounds=1)
    assert result.agreement is not None and result.agreement.groups == (3, 1), result.reason
    # a name the instruction asks for is part of the result: an answer that keeps it under another name differs
    named = fake_model(block("top = euro12[euro12.Goals > 6]"), block("big = euro12[euro12.Goals > 6]"),
                       block("top = euro12.query('Goals > 6')"))
    result = _generate(named, "Make a DataFrame top of the teams that scored more than 6 goals", _euro(),
                       agreement_samples=3, max_rounds=1)
    assert result.agreement.groups == (2, 1) and result.patched.startswith("top = euro12"), result.reason


def test_a_printed_or_displayed_result_and_a_shown_one_are_one_result(fake_model):
    # puzzle-12: one answer prints the frame, one shows it on its last line, one displays it: one result
    server = fake_model(block("big = euro12[euro12.Goals > 6]\nprint(big)"), block("euro12.Goals.max()"),
                        block("euro12[euro12.Goals > 6]"), block("display(euro12.query('Goals > 6'))"))
    result = _generate(server, "Which teams scored more than 6 goals?", _euro(), agreement_samples=4, max_rounds=1)
    assert result.agreement is not None and result.agreement.groups == (3, 1), result.reason
    assert result.patched.strip() == "euro12[euro12.Goals > 6]"
    # what a print says besides the value still counts: a header printed before it is a different result
    other = fake_model(block("print('teams:')\nprint(euro12[euro12.Goals > 6])"), block("euro12[euro12.Goals > 6]"),
                       block("print(euro12[euro12.Goals > 3])"))
    result = _generate(other, "Which teams scored more than 6 goals?", _euro(), agreement_samples=3, max_rounds=1,
                       agreement_more=0)
    assert result.agreement.groups == (1, 1, 1), result.reason


def test_a_round_stops_asking_once_its_first_answers_agree(fake_model):
    # 3 of the 5 answers asked for, one after another, already agree, as two codes or more: the rest would not
    # change the result
    agree = ("euro12.Goals.sum()", "sum(euro12['Goals'])", "euro12['Goals'].sum()", "euro12.Goals.max()",
             "euro12.Goals.min()")
    server = fake_model(*(block(c) for c in agree))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=5, max_rounds=1)
    assert len(server.requests) == 3, result.reason  # two model calls fewer
    assert (result.agreement.agreeing, result.agreement.answers, result.agreement.planned) == (3, 3, 5)
    assert "3 of 3 independent answers give this result (2 more not asked: 3 of the first 3 already agree, " \
           "a majority of the 5 to ask)" in result.reason
    assert "a majority of the 5 to ask" in render_text(result)
    assert loop_summary(result)["agreement"]["planned"] == 5
    # the same, but the three that agree are one code: the rest could not change the result either; said so
    one = fake_model(*(block(c) for c in ("euro12.Goals.sum()",) * 3 + agree[3:]))
    result = _generate(one, "How many goals were scored in total?", _euro(), agreement_samples=5, max_rounds=1)
    assert len(one.requests) == 3 and result.agreement.groups == (3,), result.reason
    assert "3 of 3 independent answers give this result, the same code each time (2 more not asked" in result.reason
    assert not result.agreement.unanimous
    # of three, two that agree are a majority: no third (test_two_answers_of_three_that_agree_and_pass_...)
    three = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12.Goals.max()"))
    result = _generate(three, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1)
    assert len(three.requests) == 2 and result.agreement.groups == (2,), result.reason
    # the first two differ: the third is asked, and settles it
    split = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    result = _generate(split, "How many goals were scored in total?", _euro(), agreement_samples=3, max_rounds=1)
    assert len(split.requests) == 3 and result.agreement.groups == (2, 1), result.reason
    assert "2 of 3 independent answers give this result;" in result.reason


def test_a_server_with_slots_stops_the_calls_under_way_once_answers_agree(fake_model):
    # five calls at once; the last two answer late: the three that agree end the round without them
    late = [Scripted(content=block(c), delay=60) for c in ("euro12.Goals.max()", "euro12.Goals.min()")]
    server = fake_model(block("euro12.Goals.sum()"), block("sum(euro12['Goals'])"), block("euro12['Goals'].sum()"),
                        *late)
    server.choices = 1  # it ignores `n`: the first answer comes from that request, the others are asked one by one
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=5, max_rounds=1,
                       model_slots=5)
    assert (result.agreement.agreeing, result.agreement.answers) == (3, 3), result.reason
    assert len(result.rounds[0].samples) == 3  # the late ones were not waited for


def test_answers_whose_leading_results_tie_are_asked_again_until_one_leads(fake_model):
    server = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    result = _generate(server, "How many goals were scored in total?", _euro(), agreement_samples=2, max_rounds=1,
                       seed=7)
    assert [r["seed"] for r in server.requests] == [7, 8, 9]  # one more, independent too
    assert result.agreement.groups == (2, 1) and result.patched.strip() == "euro12.Goals.sum()", result.reason
    assert "2 of 3 independent answers give this result (1 more asked: the two leading results of the first 2 " \
           "tied)" in result.reason
    (rival,) = result.alternatives
    assert rival.code.strip() == "euro12.Goals.max()"
    # still tied after the bound: the two leading results, side by side, as before
    tied = fake_model(*(block(c) for c in ("euro12.Goals.sum()", "euro12.Goals.max()", "euro12.Goals.min()",
                                           "euro12.Goals.mean()", "euro12.Goals.std()")))
    result = _generate(tied, "How many goals were scored in total?", _euro(), agreement_samples=2, max_rounds=1,
                       agreement_more=2)
    assert len(tied.requests) == 4 and result.agreement.groups == (1, 1, 1, 1), result.reason
    assert len(result.alternatives) == 1 and "pick one" in result.reason
    # none asked again: the knob at 0
    off = fake_model(block("euro12.Goals.sum()"), block("euro12.Goals.max()"), block("sum(euro12['Goals'])"))
    result = _generate(off, "How many goals were scored in total?", _euro(), agreement_samples=2, max_rounds=1,
                       agreement_more=0)
    assert len(off.requests) == 2 and result.agreement.groups == (1, 1), result.reason


@pytest.mark.parametrize("bad", [-1, 9, True])
def test_a_bad_number_of_answers_asked_again_is_a_clear_error(bad):
    with pytest.raises(UsageError, match="agreement_more must be a whole number from 0 to 8"):
        fix("x = 1\n", agreement_more=bad)
    if not isinstance(bad, bool):
        with pytest.raises(TraitError):
            FixLoop(agreement_more=bad)

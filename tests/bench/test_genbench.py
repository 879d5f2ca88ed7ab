"""The generation bench: a real user-side kernel runs each reference, candidates run in real sandboxes and are
judged there, the model is reached through real litellm calls (a scripted server, or the perfect stand-in)."""

import json
import os

import pytest
from fixloop_bench import generation, oracle
from fixloop_bench.perfect import NO_MATCH, PerfectModel

from jupyter_fixloop.errors import FixloopError

FRAME = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': ['x', 'y', 'z']})\n"
STEPS = [
    {"id": "rows", "group": "select", "setup": FRAME, "instruction": "Return the first 2 rows of `df`.",
     "solution": "df.head(2)\n"},
    {"id": "column", "group": "change", "setup": FRAME, "instruction": "Add a column c to `df` that is twice a.",
     "solution": "doubled = df['a'] * 2\ndf['c'] = doubled\n"},
    {"id": "crash", "group": "change", "setup": FRAME, "instruction": "Add a column d to `df` that is a plus one.",
     "solution": "df['d'] = df['a'] + 1\n"},
    {"id": "total", "group": "select", "setup": FRAME, "instruction": "What is the total of a in `df`?",
     "solution": "df['a'].sum()\n"},
    {"id": "nothing", "group": "select", "setup": FRAME, "instruction": "Print the last value of b in `df`.",
     "solution": "print(df['b'].iloc[-1])\n"},
]


def write_steps(tmp_path, *steps):
    path = tmp_path / "steps.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in steps))
    return str(path)


def test_scoring_tells_right_wrong_crash_and_none(fake_model, tmp_path, capsys):
    """One-shot, one scripted answer per step: the right rows; a wrong column (a helper variable of the
    reference's own is not asked for); code that raises; the total printed rather than shown (right);
    a reply without code."""
    server = fake_model("```python\ndf.iloc[:2]\n```",
                        "```python\ndf['c'] = df['a'] * 3\n```",
                        "```python\ndf['d'] = df['A'] + 1\n```",
                        "```python\nprint('total:', df['a'].sum())\n```",
                        "I would rather not.")
    out = tmp_path / "figures.json"
    rc = generation.main(["--generation", write_steps(tmp_path, *STEPS), "--mode", "one-shot",
                          "--model", "openai/scripted", "--api-base", server.url, "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    results = {r["id"]: r for r in data["results"]}
    assert {k: r["verdict"] for k, r in results.items()} == {
        "rows": "right", "column": "wrong", "crash": "crash", "total": "right", "nothing": "none"}
    assert "df: " in results["column"]["why"] and "doubled" not in results["column"]["why"]
    assert "KeyError" in results["crash"]["why"]
    assert results["rows"]["status"] == "answered" and results["rows"]["tokens"] > 0
    figures = data["by_mode"]["one-shot"]
    assert (figures["right"], figures["wrong"], figures["crash"], figures["none"]) == (2, 1, 1, 1)
    assert data["by_group"]["one-shot"]["select"]["right"] == 2
    prompts = [server.prompt(i) for i in range(len(server.requests))]
    assert all("doubled" not in p and "head(2)" not in p for p in prompts)  # the reference is never shown
    shown = capsys.readouterr().out
    assert "one-shot: 2 of 5 right (40%); wrong 1, crash 1, none 1" in shown


def test_the_loop_with_the_perfect_model_returns_the_reference(tmp_path):
    """`--perfect`: the stand-in answers each step with its solution; the loop's code scores right,
    and the loop does not call an unchecked answer fixed."""
    out = tmp_path / "perfect.json"
    rc = generation.main(["--generation", write_steps(tmp_path, STEPS[0], STEPS[3]), "--perfect", "--mode", "loop",
                          "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert [r["verdict"] for r in data["results"]] == ["right", "right"]
    assert data["by_mode"]["loop"]["false_fixed"] == 0 and data["perfect"] is True
    assert all(r["code"].strip() == s["solution"].strip() for r, s in zip(data["results"], (STEPS[0], STEPS[3])))


def test_the_bench_reports_each_steps_agreement_and_how_many_unanimous_answers_are_right(fake_model, tmp_path,
                                                                                         capsys):
    """`--agreement-samples 4`: each step's agreement in its result, and the precision of "K of K agree" (three
    answers or more, all agreeing, not one code) beside every answer asked agreeing; with 3, "2 of 2" (two that
    agree are a majority: no third asked), counted apart."""
    server = fake_model("```python\ndf.head(2)\n```", "```python\ndf.iloc[:2]\n```", "```python\ndf[:2]\n```",
                        # rows: agree, right; total: agree, wrong
                        "```python\ndf['a'].max()\n```", "```python\ndf.a.max()\n```", "```python\nmax(df.a)\n```")
    out = tmp_path / "agree.json"
    rc = generation.main(["--generation", write_steps(tmp_path, STEPS[0], STEPS[3]), "--mode", "loop", "--no-rules",
                          "--model", "openai/scripted", "--api-base", server.url, "--agreement-samples", "4",
                          "-r", "1", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert [(r["verdict"], r["agreeing"], r["answers"], r["spellings"]) for r in data["results"]] == [
        ("right", 3, 3, 3), ("wrong", 3, 3, 3)]
    figures = data["by_mode"]["loop"]
    assert (figures["unanimous"], figures["unanimous_right"], figures["unanimous_precision"]) == (2, 1, 0.5)
    assert (figures["all_agree"], figures["all_agree_right"]) == (2, 1)
    printed = " ".join(capsys.readouterr().out.split())
    assert "loop: K of K independent answers agree on 2 step(s), 1 of them right (50%)" in printed
    assert "every answer asked agrees (2 or more, one code or several) on 2 step(s), 1 of them right" in printed
    assert [r["calls"] for r in data["results"]] == [3, 3]  # three that agree of four: the fourth not asked
    assert figures["two_of_two"] == 0
    # three to ask: the first two agree, the third is not asked; "2 of 2", not "K of K"
    two = fake_model("```python\ndf.head(2)\n```", "```python\ndf.iloc[:2]\n```",
                     "```python\ndf['a'].max()\n```", "```python\ndf.a.max()\n```")
    assert generation.main(["--generation", write_steps(tmp_path, STEPS[0], STEPS[3]), "--mode", "loop", "--no-rules",
                            "--model", "openai/scripted", "--api-base", two.url, "--agreement-samples", "3",
                            "-r", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [(r["verdict"], r["agreeing"], r["answers"], r["planned"], r["calls"]) for r in data["results"]] == [
        ("right", 2, 2, 3, 2), ("wrong", 2, 2, 3, 2)]
    figures = data["by_mode"]["loop"]
    assert (figures["two_of_two"], figures["two_of_two_right"], figures["unanimous"]) == (2, 1, 0)
    printed = " ".join(capsys.readouterr().out.split())
    assert "loop: 2 of 2 independent answers agree (two codes, no check failing; a third not asked) on 2 step(s), " \
           "1 of them right" in printed
    # a server with a slot for each answer: one request of n=2 a step, counted as one call
    one = fake_model("```python\ndf.head(2)\n```", "```python\ndf.iloc[:2]\n```",
                     "```python\ndf['a'].max()\n```", "```python\ndf.a.max()\n```")
    assert generation.main(["--generation", write_steps(tmp_path, STEPS[0], STEPS[3]), "--mode", "loop", "--no-rules",
                            "--model", "openai/scripted", "--api-base", one.url, "--agreement-samples", "2",
                            "--model-slots", "2", "-r", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["n"] for r in one.requests] == [2, 2]
    assert [(r["verdict"], r["agreeing"], r["answers"], r["calls"]) for r in data["results"]] == [("right", 2, 2, 1),
                                                                                                ("wrong", 2, 2, 1)]


def test_the_bench_says_where_the_model_time_went_as_the_server_said_it(fake_model, tmp_path, capsys):
    """A server with a prompt cache: each step's prompt tokens, those read from the cache, the seconds reading
    prompts and writing replies, the code's runs. Without `--cold-cache`, one-shot's call after the loop's is the
    loop's round 1 again: all of its prompt comes from the cache (what `--cold-cache` is for)."""
    server = fake_model("```python\ndf.head(2)\n```")
    server.prompt_cache = True
    out = tmp_path / "time.json"
    rc = generation.main(["--generation", write_steps(tmp_path, STEPS[0]), "--mode", "both", "--no-rules",
                          "--model", "openai/scripted", "--api-base", server.url, "-r", "1", "--json", str(out)])
    assert rc == 0
    loop, one = json.loads(out.read_text())["results"]
    assert loop["mode"] == "loop" and loop["prompt_tokens"] > 0 and loop["cached_tokens"] == 0
    assert loop["prompt_seconds"] == pytest.approx(loop["prompt_tokens"] / 1000)
    assert loop["reply_seconds"] == pytest.approx(2 * loop["reply_tokens"] / 1000) and loop["reply_tokens"] > 0
    assert loop["run_seconds"] > 0 and one["run_seconds"] == 0  # one-shot's code is not run
    assert one["cached_tokens"] == one["prompt_tokens"] == loop["prompt_tokens"] and one["prompt_seconds"] == 0
    assert 0 < loop["model_seconds"] <= loop["seconds"]
    text = " ".join(capsys.readouterr().out.split())
    assert f"{one['prompt_tokens']} prompt tokens a step, {one['prompt_tokens']} of them read from the server's " \
           "prompt cache (100%)" in text
    assert "loop: " in text and "x one-shot's: model calls" in text and "reading prompts 0 s, writing replies" in text


def test_the_modes_take_turns_each_step_and_a_cold_cache_gives_each_its_prompt_to_read(fake_model, tmp_path,
                                                                                      capsys):
    """`--mode one-shot,loop,agreement`: each step runs the three in a rotating order (load falls on all alike), the
    loop with one answer a round beside the agreement's K; `--cold-cache` erases the server's prompt cache before
    each mode, so no mode reads the step's prompt from a cache another mode filled."""
    rows, total = "```python\ndf.head(2)\n```", "```python\ndf['a'].sum()\n```"
    server = fake_model(*[rows] * 4, *[total] * 4)
    server.prompt_cache = True
    out = tmp_path / "turns.json"
    assert generation.main(["--generation", write_steps(tmp_path, STEPS[0], STEPS[3]), "--mode",
                            "one-shot,loop,agreement", "--agreement-samples", "2", "--cold-cache", "--no-rules",
                            "--model", "openai/scripted", "--api-base", server.url, "-r", "1", "--json",
                            str(out)]) == 0
    data = json.loads(out.read_text())
    got = [(r["id"], r["mode"], r["position"], r["verdict"], r["answers"]) for r in data["results"]]
    assert got == [("rows", "one-shot", 0, "right", 0), ("rows", "loop", 1, "right", 0),
                   ("rows", "agreement", 2, "right", 2),
                   ("total", "one-shot", 2, "right", 0), ("total", "loop", 0, "right", 0),
                   ("total", "agreement", 1, "right", 2)]
    assert server.erased == 2 * (1 + 6)  # its two slots, once before the run, then before each mode of each step
    firsts = [r for r in data["results"] if r["mode"] != "agreement"]
    assert all(r["cached_tokens"] == 0 and r["prompt_seconds"] > 0 for r in firsts)
    agreement = data["by_mode"]["agreement"]
    assert agreement["calls"] == 4 and agreement["median_vs_one_shot"] > 0
    assert agreement["all_agree"] == 2 and agreement["unanimous"] == 0  # 2 of 2 agree: no "K of K" of two
    assert data["agreement_minus_one_shot_points"] == data["loop_minus_one_shot_points"] == 0.0
    assert all(r["load"] > 0 for r in data["results"]) and agreement["load_max"] > 0
    rates = data["rates"]  # the scripted server reads a token in 1 ms and writes one in 2 ms, whatever the mode
    assert (rates["prompt_seconds_a_token"], rates["reply_seconds_a_token"]) == (pytest.approx(0.001),
                                                                                 pytest.approx(0.002))
    assert agreement["at_rates_median"] > 0 and agreement["at_rates_vs_one_shot"] > 0
    loop = data["by_mode"]["loop"]["one_round"]  # the same prompt and reply as one-shot's, and the code's run
    assert loop["steps"] == 2 and 1.0 < loop["vs_one_shot_median"] <= loop["vs_one_shot_max"]
    assert agreement["one_round"]["steps"] == 2
    text = " ".join(capsys.readouterr().out.split())
    assert "agreement: K of K independent answers agree" not in text  # two answers: no "K of K"
    assert "agreement: every answer asked agrees (2 or more, one code or several) on 2 step(s), 2 of them right" \
        in text
    assert "at the run's rates (1 ms a prompt token read, 2 ms a reply token written" in text


def test_a_steps_seconds_at_the_runs_rates_cost_its_tokens_alike_in_every_mode():
    """The load's changes taken out: each mode's model calls costed at one rate for all (the server's own sums)."""
    def result(mode, prompt, cached, reply, seconds, model, prompt_s, reply_s):
        return generation.StepResult("s", "g", mode, "right", seconds=seconds, model_seconds=model,
                                     prompt_tokens=prompt, cached_tokens=cached, reply_tokens=reply,
                                     prompt_seconds=prompt_s, reply_seconds=reply_s)

    one = result("one-shot", 400, 0, 40, 30.0, 30.0, 20.0, 8.0)  # read at a busy minute
    loop = result("loop", 400, 0, 40, 11.0, 10.0, 6.0, 2.0)  # the same tokens at a quiet one, and a 1 s run
    rates = generation.token_rates([one, loop])
    assert rates == (pytest.approx(26 / 800), pytest.approx(10 / 80))
    assert generation.at_rates(loop, rates) - generation.at_rates(one, rates) == pytest.approx(1.0)
    assert generation.token_rates([result("one-shot", 400, 0, 40, 1.0, 1.0, 0.0, 0.0)]) is None  # not said
    figures = generation.summarize([one, loop])
    assert figures["by_mode"]["loop"]["at_rates_vs_one_shot"] == pytest.approx(1 + 1 / generation.at_rates(one, rates))


def test_bad_modes_and_a_cache_that_cannot_be_erased_are_said_in_one_line(fake_model, tmp_path, capsys):
    steps = write_steps(tmp_path, STEPS[0])
    server = fake_model("```python\ndf.head(2)\n```")  # no prompt cache: no slot actions either
    base = ["--generation", steps, "--model", "openai/scripted", "--api-base", server.url]
    assert generation.main([*base, "--mode", "loop,bogus"]) == 2
    assert "--mode loop,bogus: no mode 'bogus'" in capsys.readouterr().err
    assert generation.main([*base, "--mode", "loop,loop"]) == 2
    assert "a mode given twice" in capsys.readouterr().err
    assert generation.main([*base, "--mode", "agreement", "--agreement-samples", "1"]) == 2
    assert "--agreement-samples 2 or more" in capsys.readouterr().err
    assert generation.main([*base, "--mode", "one-shot", "--cold-cache"]) == 2
    err = capsys.readouterr().err
    assert "--cold-cache could not erase the prompt cache" in err and "--slot-save-path" in err
    assert server.requests == []  # no step ran


def test_the_bench_scores_the_result_shown_beside_the_answer_where_the_answers_differ(fake_model, tmp_path, capsys):
    """Where the answers' results differ, the next result (shown beside the answer) is scored too: how often
    the right one is among the two a user is shown."""
    server = fake_model("```python\ndf['a'].max()\n```", "```python\ndf['a'].sum()\n```")
    out = tmp_path / "split.json"
    assert generation.main(["--generation", write_steps(tmp_path, STEPS[3]), "--mode", "loop", "--no-rules",
                            "--model", "openai/scripted", "--api-base", server.url, "--agreement-samples", "2",
                            "--agreement-more", "0", "-r", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    (step,) = data["results"]
    assert (step["verdict"], step["groups"], step["rival_verdict"]) == ("wrong", [1, 1], "right")
    assert step["rival"].strip() == "df['a'].sum()"
    figures = data["by_mode"]["loop"]
    assert (figures["split"], figures["split_right"], figures["split_rival_right"]) == (1, 0, 1)
    assert figures["unanimous"] == 0
    printed = " ".join(capsys.readouterr().out.split())  # as the terminal's width wraps it
    assert ("loop: the answers' results differ on 1 step(s) (the next result shown beside the answer): the answer "
            "right on 0, the one beside it right on 1 more") in printed


def test_the_peers_prompts_are_scored_by_the_same_harness(fake_model, tmp_path, capsys):
    """`--mode jupyter-ai` / `mito-ai`: one call given that peer's quoted prompt (jupyter-ai's `-f code`
    template, no data of the user's; Mito's production prompt v3 with the user's variables), the reply's
    code scored as one-shot's is, with the median and p90 seconds a step."""
    steps = write_steps(tmp_path, STEPS[0], STEPS[3])
    for mode, answers, verdicts in (("jupyter-ai", ("df.iloc[:2]", "df['a'].max()"), ["right", "wrong"]),
                                    ("mito-ai", ("df.a.max()", "print(df['a'].sum())"), ["wrong", "right"])):
        server = fake_model(*(f"```python\n{a}\n```" for a in answers))
        out = tmp_path / f"{mode}.json"
        assert generation.main(["--generation", steps, "--mode", mode, "--model", "openai/scripted",
                                "--api-base", server.url, "--json", str(out)]) == 0
        data = json.loads(out.read_text())
        assert [(r["mode"], r["verdict"]) for r in data["results"]] == [(mode, v) for v in verdicts]
        figures = data["by_mode"][mode]
        assert figures["right"] == 1 and figures["calls"] == 2 and figures["seconds_p90"] >= figures["seconds_median"]
        prompt = server.prompt(0)
        assert "Return the first 2 rows of `df`." in prompt and "head(2)" not in prompt
        if mode == "jupyter-ai":
            assert prompt.rstrip().endswith("with no text or explanation before or after it.")
            assert "'x'" not in prompt  # jupyter-ai sends nothing of the user's data
        else:
            assert "Defined Variables:\n{'df':" in prompt and "'pd':" not in prompt  # the data, not the modules
            assert "Your task: $Return the first 2 rows" in prompt
        assert f"{mode}: 1 of 2 right (50%)" in capsys.readouterr().out


def test_resume_keeps_the_steps_an_earlier_run_finished_and_runs_the_others(fake_model, tmp_path):
    out = tmp_path / "figures.json"
    steps = write_steps(tmp_path, STEPS[0], STEPS[3])
    server = fake_model("```python\ndf.iloc[:2]\n```")
    argv = ["--generation", steps, "--mode", "one-shot", "--model", "openai/scripted", "--json", str(out)]
    assert generation.main([*argv, "--api-base", server.url, "--case", "rows"]) == 0
    assert generation.main(argv[:-2] + ["--api-base", server.url, "--resume"]) == 2  # no --json to resume from
    again = fake_model("```python\nprint(df['a'].sum())\n```")
    assert generation.main([*argv, "--api-base", again.url, "--resume"]) == 0
    assert len(again.requests) == 1  # only the step not finished before
    data = json.loads(out.read_text())
    assert [(r["id"], r["verdict"]) for r in data["results"]] == [("rows", "right"), ("total", "right")]
    assert data["by_mode"]["one-shot"]["right"] == 2

def test_a_broken_step_is_said_not_scored(tmp_path, capsys):
    broken = dict(STEPS[0], id="broken", solution="df.no_such_method()\n")
    out = tmp_path / "broken.json"
    assert generation.main(["--generation", write_steps(tmp_path, broken), "--mode", "one-shot",
                            "--json", str(out)]) == 0
    result = json.loads(out.read_text())["results"][0]
    assert result["verdict"] == "error" and "the reference solution fails: AttributeError" in result["reason"]


def test_reading_steps_names_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(STEPS[0]) + "\n" + json.dumps({"id": "x", "setup": ""}) + "\n")
    with pytest.raises(FixloopError, match=r"bad.jsonl:2: not a generation step"):
        generation.read_steps(str(path))
    path.write_text(json.dumps(STEPS[0]) + "\n" + json.dumps(STEPS[0]) + "\n")
    with pytest.raises(FixloopError, match="step id 'rows' appears twice"):
        generation.read_steps(str(path))


def test_the_dev_and_held_out_steps_ship_with_the_package_and_their_license():
    dev = generation.read_steps(generation.DEV_STEPS)
    held_out = generation.read_steps(os.path.join(generation.HERE, "generation-heldout.jsonl"))
    held_out2 = generation.read_steps(os.path.join(generation.HERE, "generation-heldout2.jsonl"))
    held_out3 = generation.read_steps(os.path.join(generation.HERE, "generation-heldout3.jsonl"))
    clean = generation.read_steps(os.path.join(generation.HERE, "generation-clean.jsonl"))
    assert len(dev) == 47 and len(held_out) == 15 and len(held_out2) == 30 and len(held_out3) == 30
    assert len(clean) == 22
    every = dev + held_out + held_out2 + held_out3 + clean
    assert len({s.instruction for s in every}) == 144  # the perfect model tells them apart
    with open(os.path.join(generation.HERE, "generation-LICENSE.txt"), encoding="utf-8") as f:
        notice = f.read()
    assert "Copyright (c) 2018 Alex Riley" in notice and "MIT License" in notice
    assert "generation-heldout2.jsonl: a second held-out set of 30 steps, written for this project" in notice
    assert "generation-heldout3.jsonl: a third held-out set of 30 steps, written for this project" in notice
    assert "generation-clean.jsonl: a dev set of 22 data-cleaning steps written for this project" in notice


def test_the_perfect_model_answers_the_step_whose_instruction_the_prompt_holds():
    with PerfectModel({"Sum a.": "df['a'].sum()", "Sum a. Then double it.": "df['a'].sum() * 2"}) as model:
        answers = [model.answer("Write code that does this:\nSum a.  Then\ndouble it.\n"), model.answer("Sum a."),
                   model.answer("Sum b.")]
    assert answers == ["```python\ndf['a'].sum() * 2\n```", "```python\ndf['a'].sum()\n```", NO_MATCH]
    assert model.answered == ["Sum a. Then double it.", "Sum a.", None]


def test_same_is_pandas_equality_tolerant_of_dtype_neutral_differences():
    import numpy as np
    import pandas as pd

    ints = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert oracle.same(ints, ints.astype({"a": float, "b": object})) == ""
    assert oracle.same(ints["a"].rename("total"), pd.Series([1, 2], name="a")) == ""  # names are not values
    assert "values are different" in oracle.same(ints, ints.assign(a=[1, 3]))
    assert oracle.same(ints, ints["a"]) == "a Series, expected a DataFrame"
    assert oracle.same([(5, 7), (6, 4)], [[5, 7], [6, 4]]) == ""  # tuples and lists, item by item
    assert oracle.same(pd.Index(["a", "b"]), ["a", "b"]) == ""
    assert oracle.same(np.array([1.0, np.nan]), [1, np.nan]) == ""
    assert oracle.same(0.1 + 0.2, 0.3) == "" and oracle.same(np.int64(19), 19) == ""
    assert oracle.same(19, 20) == "20, expected 19" and oracle.same("c", "d") == "'d', expected 'c'"
    assert oracle.same({"a": 1}, {"a": 1.0}) == "" and "[1]" in oracle.same([1, 2], [1, 3])


def test_a_value_without_value_equality_is_the_same_when_its_state_is_and_unchanged_when_untouched():
    import numpy as np

    rng = np.random.default_rng(0)
    assert oracle.same(rng, np.random.default_rng(0)) == ""  # the same state: no identity asked
    drawn = np.random.default_rng(0)
    drawn.random()
    assert oracle.same(rng, drawn) != ""  # a draw moved its state
    assert oracle.same(rng, object()) != ""
    ns = {"rng": np.random.default_rng(1), "total": 1}
    observed = json.loads(oracle.observe(ns, "total = total + 1"))
    assert observed["changed"] == ["total"]  # a Generator the code did not draw from is not "changed"
    assert json.loads(oracle.observe(ns, "x = rng.random()"))["changed"] == ["rng", "x"]


def test_a_printed_value_that_is_not_the_references_is_said_as_such(fake_model, tmp_path):
    server = fake_model("```python\nprint('total:', df['a'].sum() + 1)\n```")
    out = tmp_path / "figures.json"
    total = next(s for s in STEPS if s["id"] == "total")
    assert generation.main(["--generation", write_steps(tmp_path, total), "--mode", "one-shot",
                            "--model", "openai/scripted", "--api-base", server.url, "--json", str(out)]) == 0
    result = json.loads(out.read_text())["results"][0]
    assert result["verdict"] == "wrong"
    assert result["why"] == "it shows no value, and what it prints is not the reference's value"


def test_totals_only_prints_no_step_and_is_the_default_for_the_held_out_steps(fake_model, tmp_path, capsys):
    """Held out means never read: with --totals-only the report gives the totals and no step that is not right
    (its id, the scorer's reason, its code), which stay in --json's file; the shipped held-out steps get it
    without asking, the dev steps do not."""
    server = fake_model("```python\ndf['c'] = df['a'] * 3\n```", "```python\ndf['c'] = df['a'] * 3\n```")
    steps = write_steps(tmp_path, STEPS[1])
    for flags, shown in (([], True), (["--totals-only"], False)):
        out = tmp_path / f"figures{len(flags)}.json"
        assert generation.main(["--generation", steps, "--mode", "one-shot", "--model", "openai/scripted",
                                "--api-base", server.url, "--json", str(out), *flags]) == 0
        printed = capsys.readouterr().out
        assert "one-shot: 0 of 1 right" in printed
        assert ("df['a'] * 3" in printed and "column" in printed) is shown
        assert ("each step not shown: held out" in printed) is not shown
        assert json.loads(out.read_text())["results"][0]["code"] == "df['c'] = df['a'] * 3\n"
    assert generation.parse_args(["--generation", generation.HELD_OUT_STEPS, "--perfect"]).totals_only
    assert not generation.parse_args(["--generation", generation.DEV_STEPS, "--perfect"]).totals_only


HELD_OUT2 = os.path.join(generation.HERE, "generation-heldout2.jsonl")
HELD_OUT3 = os.path.join(generation.HERE, "generation-heldout3.jsonl")


def test_a_run_on_either_held_out_file_prints_totals_only(tmp_path, monkeypatch, capsys):
    """The second and third held-out sets are held out as the first is: a run on either, by any path, prints the
    totals and says that no step is shown, without asking."""
    out = tmp_path / "held2.json"
    assert generation.main(["--generation", HELD_OUT2, "--perfect", "--mode", "one-shot", "--case", "w2-01",
                            "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "each step not shown: held out" in printed and "one-shot: 1 of 1 right" in printed
    monkeypatch.chdir(generation.HERE)
    for path in ("generation-heldout3.jsonl", "generation-heldout2.jsonl", "generation-heldout.jsonl", HELD_OUT3,
                 HELD_OUT2, generation.HELD_OUT_STEPS):
        assert generation.parse_args(["--generation", path, "--perfect"]).totals_only
    assert not generation.parse_args(["--generation", "generation.jsonl", "--perfect"]).totals_only


@pytest.mark.parametrize("held_out", [HELD_OUT2, HELD_OUT3], ids=["second", "third"])
def test_the_perfect_stand_in_scores_every_step_of_the_second_and_third_held_out_sets_right(held_out, tmp_path,
                                                                                          capsys):
    """A step the perfect stand-in (its own reference as the answer) does not score right is inconsistent: a
    reference that is not deterministic, a setup that does not build what it uses, or a namespace the scorer
    cannot compare. Every step of the second and third held-out sets scores right (only the totals are looked
    at, and only the totals are printed)."""
    out = tmp_path / "held-perfect.json"
    assert generation.main(["--generation", held_out, "--perfect", "--mode", "one-shot", "--json", str(out)]) == 0
    assert "each step not shown: held out" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["by_mode"]["one-shot"]["right"] == 30
    assert len(data["results"]) == 30 and {r["verdict"] for r in data["results"]} == {"right"}

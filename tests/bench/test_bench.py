"""The benchmark harness: real user-side kernel, real sandboxes, real litellm calls (scripted server)."""

import json
import os
from collections import Counter

import pytest
from fixloop_bench import fixrate as bench

from jupyter_fixloop.errors import FixloopError

TYPO = {
    "id": "t-typo", "category": "NameError", "group": "crash", "fails_with": "cell:NameError",
    "setup": "prices = [3, 4, 5]\n",
    "cell": "total = sum(price)\n",
    "check": "assert globals().get('total') == 12, 'total should be 12'\n",
    "note": "never shown",
}
LOGIC = {
    "id": "t-logic", "category": "wrong_output", "group": "logic", "fails_with": "check:AssertionError",
    "setup": "xs = [1, 2, 3]\n",
    "cell": "biggest = min(xs)\n",
    "check": "assert biggest == 3, repr(biggest)\n",
    "note": "never shown",
}
BAD_SETUP = {
    "id": "t-setup", "category": "NameError", "group": "crash", "fails_with": "cell:NameError",
    "setup": "raise RuntimeError('no data')\n", "cell": "x = 1\n", "check": "",
}
TWO_BUGS = {
    "id": "t-two", "category": "multi_error", "group": "multi", "fails_with": "cell:NameError",
    "setup": "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\n",
    "cell": "n = len(list(df.iteritems()))\nlabel = 'cols: ' + n\n",
    "check": "assert label == 'cols: 1'\n",
}


def write_cases(tmp_path, *cases):
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return str(path)


def test_read_cases_names_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(TYPO) + "\n{\"id\": \"x\"}\n")
    with pytest.raises(FixloopError, match=r"bad.jsonl:2: not a benchmark case"):
        bench.read_cases(str(path))


def test_acceptance_runs_the_check_statements():
    ns = {"total": 12}
    assert eval(bench.acceptance(TYPO["check"]), ns) is True
    ns["total"] = 11
    with pytest.raises(AssertionError, match="total should be 12"):
        eval(bench.acceptance(TYPO["check"]), ns)


def test_summary_figures_per_category_and_group():
    results = [
        bench.CaseResult("a", "NameError", "crash", True, "fixed", rounds=1, tokens=100, cost=0.01, seconds=2.0),
        bench.CaseResult("b", "NameError", "crash", False, "gave_up", rounds=3, tokens=300, cost=0.03, seconds=4.0),
        bench.CaseResult("c", "wrong_output", "logic", False, "passed", seconds=1.0),
    ]
    figures = bench.summarize(results)
    assert figures["overall"]["fixed"] == 1 and figures["overall"]["cases"] == 3
    assert figures["by_category"]["NameError"]["fix_rate"] == 0.5
    assert figures["by_category"]["NameError"]["mean_rounds"] == 2.0
    assert figures["by_group"]["logic"]["fix_rate"] == 0.0
    assert figures["by_failure"] == {"?": figures["overall"]}
    assert figures["overall"]["tokens"] == 400 and abs(figures["overall"]["cost"] - 0.04) < 1e-12
    assert figures["overall"]["claimed"] == 1 and figures["overall"]["claim_precision"] == 1.0


def test_claim_precision_counts_fixed_and_unverified_claims_against_the_hidden_check():
    results = [
        bench.CaseResult("a", "X", "crash", True, "fixed"),
        bench.CaseResult("b", "X", "crash", True, "unverified", effect="df: new column 'n'"),
        bench.CaseResult("c", "X", "crash", False, "unverified", effect="df['price']: 4,99 → 499.0"),
        bench.CaseResult("d", "X", "check", False, "passed"),  # "already passes" is no claim of a repair
        bench.CaseResult("e", "X", "crash", False, "gave_up"),
    ]
    f = bench.summarize(results)["overall"]
    assert (f["claimed"], f["claims_verified"], f["claim_precision"]) == (3, 2, 2 / 3)
    assert (f["status_fixed"], f["status_fixed_verified"], f["unverified"], f["unverified_verified"]) == (1, 1, 2, 1)
    assert bench.claims_line(f) == ("claimed 3 (fixed 1, unverified 2); claims verified by the hidden check 2 (fixed 1 "
                                    "of 1, unverified 1 of 2); claim precision 67%")
    assert bench.summarize(results[3:])["overall"]["claim_precision"] is None


def test_the_evidence_of_each_fixed_case_is_counted_and_a_fix_with_none_is_said():
    results = [
        bench.CaseResult("a", "X", "crash", True, "fixed", evidence=("user", "assert", "assert")),
        bench.CaseResult("b", "X", "crash", False, "fixed", evidence=("following",)),
        bench.CaseResult("c", "X", "crash", True, "fixed"),  # no evidence: what the rule forbids, counted
        bench.CaseResult("d", "X", "crash", True, "unverified"),
    ]
    f = bench.summarize(results)["overall"]
    assert f["evidence"] == {"assert": 1, "following": 1, "user": 1}
    assert (f["runs_only"], f["fixed_wrong"]) == (1, 1)
    assert bench.evidence_line(f) == ("fixed 3, by evidence (a case per source it had): assert 1, following 1, user 1; "
                                      "fixed whose only evidence is a later cell that runs: 1; fixed the hidden check "
                                      "calls wrong: 1")


def test_loop_with_scripted_model_hides_the_check(fake_model, tmp_path, capsys):
    """litellm path end to end: a wrong first answer, then the fix; the check never reaches the model."""
    server = fake_model("```python\ntotal = sum(prise)\n```", "```python\ntotal = sum(prices)\n```")
    out = tmp_path / "figures.json"
    path = write_cases(tmp_path, TYPO, LOGIC, BAD_SETUP)
    rc = bench.main([path, "--model", "openai/scripted", "--api-base", server.url, "--json", str(out), "--no-rules"])
    assert rc == 0
    data = json.loads(out.read_text())
    cases = {c["id"]: c for c in data["cases"]}
    assert cases["t-typo"]["fixed"] is True and cases["t-typo"]["rounds"] == 2
    assert cases["t-typo"]["final_code"] == "total = sum(prices)\n"
    assert cases["t-typo"]["tokens"] > 0
    # the logic bug runs without error, so the loop has nothing to fix; the hidden check catches it
    assert cases["t-logic"]["status"] == "passed" and cases["t-logic"]["fixed"] is False
    assert (
        "AssertionError: 1" in cases["t-logic"]["verify_receipt"]
        and "<hidden check>" in cases["t-logic"]["verify_receipt"]
    )
    assert cases["t-setup"]["status"] == "error" and "setup failed: RuntimeError: no data" in cases["t-setup"]["reason"]
    assert data["overall"]["fixed"] == 1 and data["by_group"]["crash"]["cases"] == 2
    assert data["by_failure"]["crash"]["cases"] == 2 and data["by_failure"]["check"]["fixed"] == 0
    assert len(server.requests) == 2
    prompts = [server.prompt(i) for i in range(2)]
    assert all("total should be 12" not in p and "never shown" not in p for p in prompts)
    assert "prise" in prompts[1] and "NameError" in prompts[1]  # round 2 saw round 1's receipt
    assert cases["t-typo"]["status"] == "unverified"  # the check is hidden: nothing the loop had verified it
    assert cases["t-typo"]["effect"].startswith("total")
    assert data["overall"]["claimed"] == 1 and data["overall"]["claims_verified"] == 1
    shown = capsys.readouterr().out
    assert "overall" in shown and "not fixed: t-logic" in shown
    assert "unverified, hidden check passes: t-typo (NameError)" in shown
    assert "what it does to the data: total" in shown and "claim precision 100%" in shown


def test_one_shot_builtin_fixes_one_bug_only(tmp_path):
    """One call, no rerun: a cell with two bugs stays broken, where the loop takes two rounds."""
    out = tmp_path / "one.json"
    rc = bench.main([write_cases(tmp_path, TYPO, TWO_BUGS), "--mode", "one-shot", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    cases = {c["id"]: c for c in data["cases"]}
    assert data["mode"] == "one-shot" and data["model"] == "fixloop/builtin"
    assert cases["t-typo"]["fixed"] is True and cases["t-typo"]["rounds"] == 1
    assert cases["t-two"]["fixed"] is False and "df.items()" in cases["t-two"]["final_code"]
    assert "TypeError" in cases["t-two"]["verify_receipt"]


def test_user_kernel_recovers_from_a_hanging_setup(tmp_path):
    kernel = bench.UserKernel(cwd=str(tmp_path))
    try:
        with pytest.raises(FixloopError, match="did not finish in 2 s"):
            kernel.run("import time\ntime.sleep(60)\n", timeout=2)
        kernel.reset(timeout=60)
        kernel.run("x = 41 + 1\n", timeout=60)
        snap = kernel.snapshot(str(tmp_path / "snap.bin"), timeout=60, code=["y = x + 1"])
        assert snap.names == ("x",)
    finally:
        kernel.close()


def test_the_dev_cases_ship_with_the_package_and_are_the_default():
    args = bench.parse_args([])
    cases = bench.read_cases(args.cases)
    assert len(cases) == 28 and {c.group for c in cases} >= {"traceback_crash", "logic"}


def test_one_shot_gets_the_checks_round_one_gets(fake_model, tmp_path):
    """With --expect-check the baseline's one prompt lists the check, as the loop's round 1 does."""
    server = fake_model("```python\nbiggest = max(xs)\n```")
    out = tmp_path / "fair.json"
    rc = bench.main([write_cases(tmp_path, LOGIC), "--mode", "one-shot", "--expect-check", "--model", "openai/scripted",
                     "--api-base", server.url, "--json", str(out)])
    assert rc == 0
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "biggest == 3" in prompt and "AssertionError" in prompt  # the check, and how it failed
    assert json.loads(out.read_text())["cases"][0]["fixed"] is True


def test_the_notebook_bench_runs_each_notebook_plainly_and_in_batch_mode(tmp_path, capsys):
    """`bench --notebooks DIR`: plain Jupyter's cells against batch mode's, the fixes by what verified
    them, the drift cells (they ran when the notebook was saved) and what was left."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    folder = tmp_path / "corpus" / "sub"
    folder.mkdir(parents=True)
    cells = [("import pandas as pd\ns = pd.Series([1, 2, 3, 4], index=pd.MultiIndex.from_tuples("
              "[('a', 1), ('a', 2), ('b', 1), ('b', 2)]))", None),
             ("print(s.sum(level=0).to_dict())", "{'a': 3, 'b': 7}\n"),
             ("import no_such_package_for_the_bench as nsp", None),
             ("print(nsp.version)", "1.0\n")]  # ran when saved; fails after a missing package: no drift
    nb = new_notebook(cells=[new_code_cell(src, outputs=[new_output("stream", name="stdout", text=out)] if out else [])
                             for src, out in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(folder / "old.ipynb"))

    # a held-out corpus: a plotting cell (it ran when saved: an image, no text) whose style was renamed
    plots = tmp_path / "plots"
    plots.mkdir()
    image = new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    nb = new_notebook(cells=[new_code_cell("import matplotlib.pyplot as plt\nplt.style.use('seaborn-whitegrid')\n"
                                           "plt.plot([1, 2, 3])\nplt.show()", outputs=[image], execution_count=1)])
    # saved in 2016 with a `python2` kernel (issue 52): measured in the default Python 3 kernel, said in one line
    nb.metadata["kernelspec"] = {"name": "python2", "display_name": "Python 2", "language": "python"}
    nbformat.write(nb, str(plots / "styles.ipynb"))

    assert bench.main(["--notebooks", str(tmp_path / "corpus"), "--held-out", str(plots)]) == 0

    captured = capsys.readouterr()
    out = captured.out
    said = [line for line in captured.err.splitlines() if "python2" in line]
    assert said == ["styles.ipynb: the notebook's kernel `python2` is not installed here: run in `python3` instead "
                    "(--kernel chooses)"], captured.err
    assert "| sub/old.ipynb | 4 | 1 | 2 | 1 / 0 / 0 / 0 | 0 | 0 | 0 | 1/1 | 1 / 0 / 0 |" in out, out
    assert "batch runs fewer cells than plain Jupyter in: none" in out
    assert "- 1 package not installed" in out and "- 1 an earlier cell was not fixed" in out
    # the plot ran off-screen (Agg): its drift counts, fixed but verified by nothing
    assert "| styles.ipynb | 1 | 0 | 1 | 0 / 0 / 0 / 1 | 0 | 0 | 0 | 1/1 | 0 / 0 / 1 |" in out, out
    assert "| corpus | dev | 1 | 4 | 1 | 2 | 1 / 0 / 0 / 0 | 1/1 (100%) | 1 / 0 / 0 |" in out, out
    assert "| plots | held out | 1 | 1 | 0 | 1 | 0 / 0 / 0 / 1 | 1/1 (100%) | 0 / 0 / 1 |" in out, out
    assert "| drift cells fixed right | 1/1 (100%) | 0/1 (0%) | +100 points |" in out, out
    verifiers = "| fixes verified by saved output / following cell / check / nothing | 1 / 0 / 0 / 0 | 0 / 0 / 0 / 1 |"
    assert verifiers in out, out
    # the fixed cell's evidence, as data from its account; none had only a later cell that runs, none shown wrong
    assert ("fixed 1, by evidence (a cell per source it had): saved 1; fixed whose only evidence is a later cell "
            "that runs: 0; fixed a saved output calls wrong: 0") in out, out
    assert "| corpus | 1 | saved 1 | 0 | 0 |" in out and "| plots | 0 | none | 0 | 0 |" in out, out


def test_each_drift_fix_is_right_wrong_or_unverified_by_the_saved_output():
    """Right: verified, or showing the saved output; wrong: another output while the notebook still
    reproduces its saved outputs; unverified: nothing to compare (a plot, random data, or an output
    above that already differs)."""
    from fixloop_bench.notebooks import drift_cells, drift_verdicts
    from nbformat.v4 import new_output

    from jupyter_fixloop.batch.run import CellOutcome

    def cell(text=None, image=False):
        outputs = [new_output("stream", name="stdout", text=text)] if text else []
        outputs += [new_output("display_data", data={"image/png": "iVBORw0KGgo="})] if image else []
        return {"outputs": outputs, "execution_count": 1}

    rows = [  # (status, source, saved, now, verified_by)
        ("ok", "print(1)", cell("1\n"), cell("1\n"), ""),
        ("unverified", "print(s.sum(level=0))", cell("3\n"), cell("3\n"), ""),  # right: the output saved
        ("unverified", "print(np.random.rand())", cell("0.5\n"), cell("0.7\n"), ""),  # random: not a check
        ("fixed", "print(x)", cell(image=True), cell(image=True), "check"),  # right: a check verified it
        ("unverified", "plt.plot(x)", cell(image=True), cell(image=True), ""),  # a plot: nothing to compare
        ("unverified", "print(total)", cell("5\n"), cell("6\n"), ""),
        ("ok", "print(later)", cell("7\n"), cell("8\n"), ""),
        ("failed", "print(y)", cell("9\n"), cell(), ""),
    ]
    outcomes = [CellOutcome(n, status, source, verified_by=by) for n, (status, source, _, _, by) in enumerate(rows, 1)]
    saved = {n: row[2] for n, row in enumerate(rows, 1)}
    now = {n: row[3] for n, row in enumerate(rows, 1)}
    plain = {1: None, **{n: "AttributeError: gone" for n in range(2, 9)}}

    drift = drift_cells(outcomes, saved, plain)
    assert drift == {2, 3, 4, 5, 6, 7, 8}
    # a machine without the network, a file or a package is no drift of the library
    for error in ("URLError: <urlopen error [Errno -2] Name or service not known>",
                  "FileNotFoundError: [Errno 2] No such file or directory: 'movie_data.csv'",
                  "ModuleNotFoundError: No module named 'theano'",
                  "RuntimeError: Failed to process string with tex because latex could not be found"):
        assert not drift_cells(outcomes[1:2], saved, {2: error})
    verdicts = {n: v for n, (v, _) in drift_verdicts(outcomes, saved, now, drift).items()}
    # cell 3 draws random numbers: it shows another output, but that says nothing (and later outputs are
    # not checks either)
    assert verdicts == {2: "right", 3: "unverified", 4: "right", 5: "unverified", 6: "unverified", 7: "unverified"}
    outcomes[2] = CellOutcome(3, "unverified", "print(rounded)")
    verdicts = drift_verdicts(outcomes, saved, now, drift)
    assert verdicts[3] == ("wrong", ["-0.5", "+0.7"])  # repeatable, and every output above was the one saved
    assert verdicts[6][0] == "unverified"  # below a wrong one, an output is no check
    # batch mode said so (batch/run.py: a later output that disagrees with a fix): still wrong, and the line says so
    said = "shows another output than the one saved (-0.5 | +0.7); it reads `rounded`, which the fix of cell 2 made"
    outcomes[2] = CellOutcome(3, "ok", "print(rounded)", reason=said, disagrees=2)
    assert drift_verdicts(outcomes, saved, now, drift)[3] == (
        "wrong", ["-0.5", "+0.7", "(batch mode says so: a later output disagrees with the fix)"])


def test_each_fixed_cell_is_counted_by_its_evidence_and_one_a_saved_output_calls_wrong_is_listed():
    from fixloop_bench.notebooks import NotebookFigures, evidence_line, evidence_of, shown
    from nbformat.v4 import new_output

    from jupyter_fixloop.batch.run import CellOutcome
    from jupyter_fixloop.receipt.values import Account
    from jupyter_fixloop.result import LoopResult

    def fixed(number, checked=(), by="check"):
        result = LoopResult("fixed", "x", "y", [], account=Account(checked=checked))
        return CellOutcome(number, "fixed", f"print(v{number})", result=result, verified_by=by)

    assert evidence_of(fixed(1, ("assert", "user", "assert"))) == ("assert", "user")
    assert evidence_of(fixed(2, (), "saved output")) == ("later saved output",)  # a later cell showed the saved output
    assert evidence_of(fixed(3, ("saved",), "saved output")) == ("saved",)
    assert evidence_of(fixed(4, ())) == ()  # what the rule forbids: the bench counts it

    def cell(text):
        return {"outputs": [new_output("stream", name="stdout", text=text)], "execution_count": 1}

    outcomes = [fixed(1, ("assert",)), fixed(2, ("assert",))]
    seen = shown(outcomes, {1: cell("5\n"), 2: cell("7\n")}, {1: cell("5\n"), 2: cell("8\n")})
    assert seen == {1: (True, []), 2: (False, ["-7", "+8"])}  # the saved output calls cell 2's fix wrong
    f = NotebookFigures("nb", fixed=Counter(check=2), runs_only=[4], fixed_wrong=[(2, "-7 | +8")],
                        evidence=Counter({"assert": 2}))
    assert evidence_line(f) == ("fixed 2, by evidence (a cell per source it had): assert 2; fixed whose "
                                "only evidence is a later cell that runs: 1; fixed a saved output calls wrong: 1")
    again = NotebookFigures.from_json(json.loads(json.dumps(f.as_json())))
    assert again.evidence == f.evidence and again.fixed_wrong == f.fixed_wrong and again.runs_only == [4]


def test_the_corpora_summary_puts_dev_beside_held_out_and_leaves_each_corpus_out():
    from collections import Counter

    from fixloop_bench.corpora import summary
    from fixloop_bench.notebooks import NotebookFigures

    def nb(name, drift, right, wrong=0, unverified=0, plain=5, batch=6):
        return NotebookFigures(name, cells=10, plain=plain, batch=batch, drift=drift,
                               verdicts=Counter(right=right, wrong=wrong, unverified=unverified), seconds=20.0)

    corpora = {"a": [nb("1.ipynb", 4, 3), nb("2.ipynb", 4, 2, 1, 1)], "b": [nb("3.ipynb", 10, 5, 0, 1)],
               "c": [nb("4.ipynb", 2, 1, plain=6, batch=5)]}
    text = summary(corpora, {"b", "c"})
    assert "| a | dev | 2 | 20 | 10 | 12 | 0 / 0 / 0 / 0 | 7/8 (88%) | 5 / 1 / 1 | 20 | 0 |" in text, text
    assert "| c | held out | 1 | 10 | 6 | 5 | 0 / 0 / 0 / 0 | 1/2 (50%) | 1 / 0 / 0 | 20 | 1 |" in text
    assert "| drift cells fixed | 7/8 (88%) | 7/12 (58%) | +29 points |" in text
    assert "| drift cells fixed right | 5/8 (62%) | 6/12 (50%) | +12 points |" in text
    assert "| drift fixes wrong | 1 | 0 | |" in text
    assert "| b | 6/10 (60%) | 8/10 (80%) | +20 points |" in text  # b left out: a and c are the others


def test_a_corpus_without_notebooks_is_refused_with_what_to_do(tmp_path, capsys):
    from fixloop_bench import corpora

    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.ipynb").write_text("{}")
    assert corpora.main([]) == 2
    assert "give --notebooks DIR" in capsys.readouterr().err
    assert bench.main(["--held-out", str(tmp_path / "one"), "--only", "zzz"]) == 2
    assert "no notebooks that --only picks in this folder" in capsys.readouterr().err
    # issue 52: 0 model rounds would repair nothing and measure it as batch mode: refused in one line, as `run` does
    assert bench.main(["--notebooks", str(tmp_path / "one"), "--max-rounds", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == ["jupyter-fixloop bench: --max-rounds 0 (or FixLoop.max_rounds) repairs nothing: "
                                "give 1 or more (to run a notebook as written: jupyter nbconvert --to notebook "
                                "--execute)"], err


def test_the_notebooks_bench_gives_the_model_its_timeout_seed_and_prompt_knob(tmp_path):
    from fixloop_bench import corpora

    args = corpora.build_parser().parse_args(["--held-out", str(tmp_path), "--model-timeout", "600", "--seed", "0",
                                              "--no-library-changes"])
    loop = corpora._options(args).loop
    assert (loop.model_timeout, loop.seed, loop.library_changes_in_prompt) == (600.0, 0, False)
    default = corpora._options(corpora.build_parser().parse_args(["--held-out", str(tmp_path)])).loop
    assert default.model_timeout != 600.0 and default.library_changes_in_prompt is not False


def test_a_cell_that_reads_what_the_machine_kept_a_cell_from_making_is_no_drift_cell():
    """Data that never loaded (no network, no file) leaves the cells that use it unmeasurable: whatever their
    own error, no fix could make them run here. A name a later cell makes afresh is measurable again."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["import pandas as pd\ndata = pd.read_csv('https://example.org/wine.data')",
               "import numpy as np\nfolds = KFold(random_state=1).split(data)\nmodel = fit(data)",
               "model.coef_",
               "np.product([1, 2])",  # np was imported by cell 2 before it failed: measurable
               "data = pd.DataFrame({'a': [1]})",
               "data.ix[0]"]
    errors = ["URLError: <urlopen error [Errno -2] Name or service not known>",
              "ValueError: Setting a random_state has no effect since shuffle is False.",
              "AttributeError: 'LinearRegression' object has no attribute 'coef_'",
              "AttributeError: module 'numpy' has no attribute 'product'", None,
              "AttributeError: 'DataFrame' object has no attribute 'ix'"]
    outcomes = [CellOutcome(n, "failed" if e else "ok", s) for n, (s, e) in enumerate(zip(sources, errors), 1)]
    saved = {n: {"outputs": [], "execution_count": n} for n in range(1, 7)}
    assert drift_cells(outcomes, saved, dict(enumerate(errors, 1))) == {4, 6}


def test_a_cell_whose_function_reads_what_the_machine_kept_a_cell_from_making_is_no_drift_cell():
    """A cell that calls a function reading data that never loaded fails with a NameError for that data, a name
    the cell itself never reads: it measures this machine too. A NameError for a name no failed cell should
    have made is still measured."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["import pandas as pd\ndata = pd.read_csv('https://example.org/wine.data')",
               "def mean_alcohol():\n    return data['alcohol'].mean()", "mean_alcohol()",
               "def total():\n    return undefined_here.sum()", "total()"]
    errors = ["URLError: <urlopen error [Errno -2] Name or service not known>", None,
              "NameError: name 'data' is not defined", None, "NameError: name 'undefined_here' is not defined"]
    outcomes = [CellOutcome(n, "failed" if e else "ok", s) for n, (s, e) in enumerate(zip(sources, errors), 1)]
    saved = {n: {"outputs": [], "execution_count": n} for n in range(1, 6)}
    assert drift_cells(outcomes, saved, dict(enumerate(errors, 1))) == {5}


def test_a_cell_left_on_data_that_is_a_git_lfs_pointer_is_no_drift_cell():
    """Batch mode found a cell's data read from a Git LFS pointer file (Left.NO_FILE): its KeyError, and that of a
    cell failing after it, measure nothing a fix could change; a KeyError on other data still does."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome, Left

    sources = ["temps = pd.read_csv('data/temps.csv')\nlabels = temps['actual']", "print(labels.mean())",
               "other = pd.DataFrame({'a': [1]})\nother['b']"]
    errors = ["KeyError: 'actual'", "NameError: name 'labels' is not defined", "KeyError: 'b'"]
    outcomes = [CellOutcome(1, "failed", sources[0], left=Left.NO_FILE),
                CellOutcome(2, "skipped", sources[1], blamed_cell=1, left=Left.BLAMED),
                CellOutcome(3, "failed", sources[2])]
    saved = {n: {"outputs": [], "execution_count": n} for n in range(1, 4)}
    assert drift_cells(outcomes, saved, dict(enumerate(errors, 1))) == {3}


@pytest.mark.parametrize("magic", ["", "%matplotlib inline\n"])
def test_a_name_a_failed_import_of_a_package_not_installed_would_have_made_is_no_drift_cell(magic):
    """`import dask.dataframe as dd` fails for a package not installed here: the imports above it ran, it and those
    after it did not, so a NameError for `dd` (or `toolz`) below measures this machine, not a library's change;
    one for a name a failed cell never imports is still measured, and `pd`, imported before, was made."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome

    sources = [magic + "import pandas as pd\nimport dask.dataframe as dd\nimport toolz",
               "df = dd.read_csv('*.csv')", "toolz.first([1])", "pd.Series([1]).ix[0]", "undefined_here + 1"]
    errors = ["ModuleNotFoundError: No module named 'dask'", "NameError: name 'dd' is not defined",
              "NameError: name 'toolz' is not defined", "AttributeError: 'Series' object has no attribute 'ix'",
              "NameError: name 'undefined_here' is not defined"]
    outcomes = [CellOutcome(n, "failed", s) for n, s in enumerate(sources, 1)]
    saved = {n: {"outputs": [], "execution_count": n} for n in range(1, 6)}
    assert drift_cells(outcomes, saved, dict(enumerate(errors, 1))) == {4, 5}


def test_a_magic_of_an_extension_this_machine_lacks_is_no_drift_cell():
    """`%load_ext watermark` fails for a package not installed here; `%watermark` below it then is no magic at all:
    no change to the cell makes it run. A magic no failed `%load_ext` accounts for is still measured."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["%load_ext watermark", "%watermark -v -p numpy", "%memit sum(range(9))"]
    errors = ["ModuleNotFoundError: No module named 'watermark'",
              "UsageError: Line magic function `%watermark` not found.",
              "UsageError: Line magic function `%memit` not found."]
    outcomes = [CellOutcome(n, "failed", s) for n, s in enumerate(sources, 1)]
    saved = {n: {"outputs": [], "execution_count": n} for n in range(1, 4)}
    assert drift_cells(outcomes, saved, dict(enumerate(errors, 1))) == {3}


def test_a_fix_shown_wrong_here_is_right_when_the_era_kernel_shows_the_saved_output(tmp_path, capsys, monkeypatch):
    """A library's numbers change as well as its names: with `--era-kernel`, the notebook batch mode wrote
    runs in a kernel holding the libraries of the notebook's time; a fix shown wrong here that shows the
    saved output there is right (and listed apart); one that shows another output there stays wrong."""
    import sys

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    # one library in two versions, each in its own kernel: 2.0 (here) scales otherwise than 1.0 (the era)
    kernels = tmp_path / "share" / "kernels"
    for name, body in (("now", "def scaled(x):\n    return 10 * x + 1\n"),
                       ("era", "def scaled(x):\n    return 10 * x\n"),
                       ("wrongera", "def scaled(x):\n    return 10 * x + 2\n")):
        lib = tmp_path / f"lib-{name}"
        lib.mkdir()
        (lib / "scaling.py").write_text(body)
        (kernels / name).mkdir(parents=True)
        path = os.pathsep.join(p for p in (str(lib), os.environ.get("PYTHONPATH", "")) if p)
        (kernels / name / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": name, "language": "python", "env": {"PYTHONPATH": path}}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share"))

    folder = tmp_path / "corpus"
    folder.mkdir()
    cells = [("import pandas as pd\nimport scaling\ns = pd.Series([1, 2, 3, 4], index=pd.MultiIndex.from_tuples("
              "[('a', 1), ('a', 2), ('b', 1), ('b', 2)]))", None),
             ("total = s.sum(level=0)", None),  # pandas 2 removed `level=`: the rules' fix
             ("print(scaling.scaled(total['a']))", "30\n")]  # saved under 1.0
    nb = new_notebook(cells=[new_code_cell(src, execution_count=n,
                                           outputs=[new_output("stream", name="stdout", text=out)] if out else [])
                             for n, (src, out) in enumerate(cells, 1)])
    nbformat.write(nb, str(folder / "numbers.ipynb"))

    assert bench.main(["--notebooks", str(folder), "--kernel", "now", "--era-kernel", "wrongera"]) == 0
    out = capsys.readouterr().out
    assert "| numbers.ipynb | 3 | 1 | 3 | 0 / 0 / 0 / 1 | 0 | 0 | 0 | 2/2 | 0 / 1 / 1 |" in out, out
    assert "- numbers.ipynb cell 3: -30 | +31" in out, out
    assert "right in an era kernel" not in out

    assert bench.main(["--notebooks", str(folder), "--kernel", "now", "--era-kernel", "elsewhere=era"]) == 2
    assert "--era-kernel elsewhere=...: no corpus of that name (the corpora: corpus)" in capsys.readouterr().err
    assert bench.main(["--notebooks", str(folder), "--kernel", "now", "--era-kernel", "wrongera",
                       "--era-kernel", "corpus=era"]) == 0  # the corpus's own era kernel first
    out = capsys.readouterr().out
    assert "| numbers.ipynb | 3 | 1 | 3 | 0 / 0 / 0 / 1 | 0 | 0 | 0 | 2/2 | 1 / 0 / 1 |" in out, out
    assert "- numbers.ipynb cell 3: as saved in `era`" in out, out
    assert "| drift fixes right only in the era kernel (counted right) | 1 | 0 | |" in out, out


def _seeded(tmp_path, saved: list[str], fixed: list[str], cells: list[int]) -> dict[int, str]:
    """`seeded_in_era`'s verdicts for `cells` of a notebook whose code cells are `saved`, fixed as `fixed`: both
    kernels this one (`python3`)."""
    import asyncio
    import shutil
    import tempfile

    import nbformat
    from fixloop_bench.notebooks import seeded_in_era
    from nbformat.v4 import new_code_cell, new_notebook

    folder, scratch = tmp_path / "corpus", tempfile.mkdtemp(prefix="sd-")  # short: kernels' IPC paths live there
    folder.mkdir()
    saved_nb, fixed_nb = (new_notebook(cells=[new_code_cell(c) for c in cs]) for cs in (saved, fixed))
    nbformat.write(saved_nb, str(folder / "nb.ipynb"))
    try:
        return asyncio.run(seeded_in_era(saved_nb, fixed_nb, str(folder), "nb.ipynb", cells, "python3", "python3",
                                         60, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_fix_nothing_verified_is_decided_by_the_same_random_draws_in_the_era_kernel(tmp_path):
    """A drift fix whose cell draws unseeded random numbers has no saved output that can check it: the notebook
    as saved runs in the era kernel and the fixed one here, both from one seed, and the fix is right where it
    shows what the code it replaced showed there; wrong where it shows other text while every cell above ran and
    showed the same; undecided once the runs are apart (here both kernels are this one: the draws are the same
    only because both runs are seeded)."""
    head = "import numpy as np\nx = np.random.randint(0, 10**6, 6)"
    verdicts = _seeded(tmp_path, [head, "print(x.sum())", "print(x.max())", "y = x * 2", "print(x.min())"],
                       [head, "print(int(np.sum(x)))", "print(x.min())", "y = 2 * x", "print(x.max())"], [2, 3, 4, 5])
    assert verdicts == {2: "right", 3: "wrong", 4: "assigned"}, verdicts  # 4 shows nothing: its values decide it


def test_a_plot_fix_nothing_verified_is_right_where_it_draws_the_values_the_era_kernel_drew(tmp_path):
    """A fix whose cell shows only a figure has no text to compare: it is right where its figure draws the same
    bars, lines or points (and the values a scatter's colors stand for), with the same title and labels, as the
    code it replaced drew in the era kernel; a figure
    that differs decides nothing (never "wrong": two versions may draw the same data otherwise), nor does a cell
    that draws nothing while an earlier cell's figure is still open (here both kernels are this one)."""
    pytest.importorskip("matplotlib")
    head = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nimport numpy as np\n"
            "x = np.random.randint(1, 100, 4)")
    verdicts = _seeded(tmp_path, [
        head,
        "fig, ax = plt.subplots()\nax.bar(['a', 'b', 'c', 'd'], x)\nax.set_title('draws');",
        "fig, ax = plt.subplots()\nax.plot(x, 'o-');",
        "y = x + 1",
        "fig, ax = plt.subplots()\nax.scatter(x, x, c=[0, 1, 0, 1]);",
        "fig, ax = plt.subplots()\nax.scatter(x, x, c=[0, 1, 0, 1]);"], [
        head,
        "fig, ax = plt.subplots()\nax.bar(range(4), height=list(x))\nax.set_title('draws');",
        "fig, ax = plt.subplots()\nax.plot(x[::-1], 'o-');",
        "y = 1 + x",
        "fig, ax = plt.subplots()\nax.scatter(list(x), x, c=[0, 1, 0, 1]);",
        "fig, ax = plt.subplots()\nax.scatter(x, x, c=[1, 1, 0, 0]);"], [2, 3, 4, 5, 6])  # 6: other clusters
    assert verdicts == {2: "drawn", 4: "assigned", 5: "drawn"}, verdicts  # counted right, said as drawn
    # (4 draws nothing: the value it assigns decides it)


def test_a_fix_that_shows_nothing_is_right_where_it_assigns_the_values_the_era_kernel_assigned(tmp_path):
    """A fix whose cell shows and draws nothing (an assignment) is right where every name the replaced code
    assigned, into a frame's column too, holds the same values after the fix (frames by their values, not their
    dtypes; a fitted estimator by its learned arrays); a value that differs, or one of a kind not compared, decides
    nothing (never "wrong"): here both kernels are this one."""
    pytest.importorskip("pandas")
    head = ("import numpy as np\nimport pandas as pd\n"
            "df = pd.DataFrame({'k': list('abab'), 'v': np.random.randint(1, 100, 4), 'w': [1.5, 2.5, 3.5, 4.5]})")
    verdicts = _seeded(tmp_path, [
        head,
        "means = df.groupby('k')[['v', 'w']].mean()",
        "df['t'] = df.v * 2",
        "top = df.v.max()",
        "import threading\nlock = threading.Lock()",
        "s = df.w.astype(str)",
        "total = df.v.sum()\nprint('done')"], [
        head,
        "means = df.groupby('k').mean(numeric_only=True)",
        "df['t'] = df['v'] + df['v']",
        "top = df.v.min()",  # another value: decides nothing
        "import threading\nlock = threading.Lock()",  # not a value compared
        "s = df.w.astype('string')",  # text either way: the same values
        "total = df.v.sum()\nprint('done')"], [2, 3, 4, 5, 6, 7])  # 7 shows text: decided by it, as before
    assert verdicts == {2: "assigned", 3: "assigned", 6: "assigned", 7: "right"}, verdicts


def test_the_notebook_bench_ends_on_sigterm_keeping_what_it_measured(tmp_path):
    """SIGTERM (or Ctrl-C) ends the bench: the notebook under way is not measured, nor those after it; the
    notebooks done are in --json OUT (for --resume), and the exit code names the signal."""
    import signal
    import subprocess
    import sys
    import time

    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, source in (("a_quick.ipynb", "x = 1"), ("b_slow.ipynb", "import time\ntime.sleep(120)"),
                         ("c_never.ipynb", "y = 2")):
        nb = new_notebook(cells=[new_code_cell(source)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, str(folder / name))
    out = tmp_path / "figures.json"
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_fixloop.cli", "bench", "--notebooks", str(folder),
                             "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)  # the first notebook is measured and written
    time.sleep(6)  # the second one's plain run is under way, in its sleep
    proc.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the bench went on after SIGTERM") from None

    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by SIGTERM in corpus/b_slow.ipynb" in stderr and "--resume takes the rest" in stderr, stderr
    measured = {n["name"]: n for n in json.loads(out.read_text())["notebooks"]}
    assert list(measured) == ["a_quick.ipynb", "b_slow.ipynb"]  # the one under way kept, marked unfinished
    assert measured["b_slow.ipynb"]["unfinished"] == "SIGTERM" and measured["b_slow.ipynb"]["decided"] == []
    assert not measured["a_quick.ipynb"]["unfinished"] and measured["a_quick.ipynb"]["decided"] == [[1, "ok", ""]]
    assert "| a_quick.ipynb |" in stdout and "c_never" not in stdout
    assert "| b_slow.ipynb (unfinished, stopped by SIGTERM: 0 of 1 code cells decided) |" in stdout, stdout


def _stuck_in_batch_mode(folder, marker) -> None:
    """A notebook whose drift cell 2 batch mode fixes, then cell 3, which plain Jupyter runs at once and batch mode
    never finishes (the bench runs batch mode in a copy of the folder named batch-N); and one after it."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    cells = [("import pandas as pd\ns = pd.Series([1, 2, 3, 4], index=pd.MultiIndex.from_tuples("
              "[('a', 1), ('a', 2), ('b', 1), ('b', 2)]))", None),
             ("print(s.sum(level=0).to_dict())", "{'a': 3, 'b': 7}\n"),
             (f"import os, time\nif os.path.basename(os.getcwd()).startswith('batch'):\n"
              f"    open({str(marker)!r}, 'w').close()\n    time.sleep(600)", None)]
    nb = new_notebook(cells=[new_code_cell(src, execution_count=n,
                                           outputs=[new_output("stream", name="stdout", text=out)] if out else [])
                             for n, (src, out) in enumerate(cells, 1)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(folder / "a_stuck.ipynb"))
    nbformat.write(new_notebook(cells=[new_code_cell("y = 2")]), str(folder / "b_after.ipynb"))


def test_a_notebook_stopped_mid_run_keeps_the_cells_batch_mode_decided(tmp_path):
    """SIGTERM while batch mode is in a notebook: the notebook is kept in --json OUT, marked unfinished, with each
    cell batch mode decided so far (its status, and how a drift cell went) and its figures counted on those cells;
    `--compare` then prints two runs on the cells both decided."""
    import signal
    import subprocess
    import sys
    import time

    folder, marker, out = tmp_path / "corpus", tmp_path / "reached", tmp_path / "figures.json"
    folder.mkdir()
    _stuck_in_batch_mode(folder, marker)
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_fixloop.cli", "bench", "--held-out", str(folder),
                             "--cell-timeout", "900", "--json", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)  # batch mode decided cells 1-2 and is in cell 3
    proc.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the bench went on after SIGTERM") from None

    assert proc.returncode == 128 + signal.SIGTERM, stderr
    [stuck] = json.loads(out.read_text())["notebooks"]
    assert stuck["name"] == "a_stuck.ipynb" and stuck["unfinished"] == "SIGTERM", stuck
    assert stuck["decided"] == [[1, "ok", ""], [2, "fixed", "right"]], stuck["decided"]
    assert (stuck["cells"], stuck["code_cells"], stuck["plain"], stuck["batch"], stuck["drift"]) == (2, 3, 1, 2, 1)
    assert stuck["verdicts"] == {"right": 1}
    assert "a_stuck.ipynb (unfinished, stopped by SIGTERM: 2 of 3 code cells decided) | 2 | 1 | 2 |" in stdout, stdout
    assert "b_after" not in stdout

    compared = subprocess.run([sys.executable, "-m", "jupyter_fixloop.cli", "bench", "--compare", str(out),
                               str(out)], capture_output=True, text=True)
    assert compared.returncode == 0, compared.stderr
    assert ("| corpus/a_stuck.ipynb | 2 | 1 | 1/1 (100%) (1 / 0 / 0) | 1/1 (100%) (1 / 0 / 0) | 2 / 2 |"
            in compared.stdout), compared.stdout


def test_the_run_stops_when_its_budget_is_spent_keeping_the_cells_decided(tmp_path, capsys):
    """`--stop-after MINUTES`: a wall-clock budget for the whole run; when it is spent the notebook under way is
    kept as on SIGTERM (unfinished, its cells decided so far), the notebooks after it are not run, and the run ends
    as a finished one does (0: batch mode ran no fewer cells than plain Jupyter)."""
    folder, out = tmp_path / "corpus", tmp_path / "figures.json"
    folder.mkdir()
    _stuck_in_batch_mode(folder, tmp_path / "reached")
    assert bench.main(["--held-out", str(folder), "--cell-timeout", "900", "--stop-after", "1",
                       "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "stopped by --stop-after in corpus/a_stuck.ipynb" in captured.err, captured.err
    [stuck] = json.loads(out.read_text())["notebooks"]
    assert stuck["unfinished"] == "--stop-after" and stuck["decided"] == [[1, "ok", ""], [2, "fixed", "right"]]
    assert "b_after" not in captured.out
    assert bench.main(["--held-out", str(folder), "--stop-after", "0"]) == 2
    assert "--stop-after takes a number of minutes above 0" in capsys.readouterr().err


def test_two_runs_are_compared_on_the_cells_both_decided(tmp_path, capsys):
    """`--compare A B`: a notebook one run finished and the other stopped in is compared on the cells both decided;
    a drift cell of one run only is named apart; a notebook only one run measured is left out."""
    def run(path, notebooks):
        path.write_text(json.dumps({"notebooks": [{"name": name, "corpus": "c", "decided": decided}
                                                  for name, decided in notebooks]}))
        return str(path)

    a = run(tmp_path / "kb.json", [("n.ipynb", [[1, "ok", ""], [2, "fixed", "right"], [3, "failed", "left"],
                                                [4, "unverified", "unverified"], [5, "fixed", "right"]]),
                                   ("only-a.ipynb", [[1, "ok", ""]])])
    b = run(tmp_path / "nokb.json", [("n.ipynb", [[1, "ok", ""], [2, "failed", "left"], [3, "fixed", "wrong"],
                                                  [4, "ok", ""]])])
    assert bench.main(["--compare", a, b]) == 0
    text = capsys.readouterr().out
    assert "| c/n.ipynb | 4 | 2 | 1/2 (50%) (1 / 0 / 0) | 1/2 (50%) (0 / 1 / 0) | 3 / 3 |" in text, text
    assert "| **total** | 4 | 2 | 1/2 (50%) (1 / 0 / 0) | 1/2 (50%) (0 / 1 / 0) | 3 / 3 |" in text, text
    assert "a drift cell in one run only (its plain run differed; not compared): c/n.ipynb cell 4" in text, text
    assert "only-a" not in text
    assert bench.main(["--compare", a, str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err


def test_a_run_is_printed_against_a_baseline_run_notebook_by_notebook():
    """`--against BASELINE`: each notebook both runs measured (the built-in engine alone there, a model beside it
    here), its drift cells fixed in each with the seconds each took, and each side's total; a notebook the
    baseline did not measure is left out of the comparison."""
    from collections import Counter

    from fixloop_bench.corpora import against
    from fixloop_bench.notebooks import NotebookFigures

    def nb(name, corpus, drift, right, unverified=0, seconds=10.0):
        return NotebookFigures(name, corpus, drift=drift, seconds=seconds,
                               verdicts=Counter(right=right, unverified=unverified))

    baseline = {f"{f.corpus}/{f.name}": f.as_json() for f in (nb("a.ipynb", "dev1", 4, 2), nb("b.ipynb", "out1", 3, 0))}
    here = [nb("a.ipynb", "dev1", 4, 2, 1, seconds=600.0), nb("b.ipynb", "out1", 3, 0, seconds=900.0),
            nb("c.ipynb", "out1", 5, 5)]
    text = against(here, baseline, {"out1"})
    assert "| dev1/a.ipynb | dev | 4 | 2 (2 / 0 / 0), 10 | 3 (2 / 0 / 1), 600 |" in text, text
    assert "| **dev** | | 4 | 2/4 (50%) (2 / 0 / 0), 10 | 3/4 (75%) (2 / 0 / 1), 600 |" in text, text
    assert "| **held out** | | 3 | 0/3 (0%) (0 / 0 / 0), 10 | 0/3 (0%) (0 / 0 / 0), 900 |" in text, text
    assert "c.ipynb" not in text


def test_a_name_no_cell_defines_or_imports_is_hidden_state_not_drift():
    """A NameError naming a name no cell of the notebook defines or imports (the author's kernel held it from a cell
    since edited or deleted), or one such a cell should have made, is hidden state; a name a cell defines (even one
    that failed for drift) is not; a star import or `%run` may bind any name, so nothing is said then."""
    from fixloop_bench.notebooks import hidden_state

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["import numpy as np\nrate = np.int(5)",
               "print(rate * 2)",  # rate: made by cell 1, which failed for drift
               "paid = original_paid - 1",  # original_paid: made by no cell
               "print(paid)",  # paid: the hidden-state cell should have made it
               "x"]  # a stray name
    errors = ["AttributeError: module 'numpy' has no attribute 'int'", "NameError: name 'rate' is not defined",
              "NameError: name 'original_paid' is not defined", "NameError: name 'paid' is not defined",
              "NameError: name 'x' is not defined"]
    outcomes = [CellOutcome(n, "failed", s) for n, s in enumerate(sources, 1)]
    plain = dict(enumerate(errors, 1))
    assert hidden_state(outcomes, plain) == {3, 4, 5}
    for binder in ("from helpers import *", "%run helpers.py", "def setup():\n    global x\n    x = 1"):
        assert hidden_state([*outcomes, CellOutcome(6, "ok", binder)], plain) == set()


def test_the_notebook_bench_counts_hidden_state_in_a_column_of_its_own(tmp_path, capsys):
    """Run for real: the cell reading a name no cell makes is not a drift cell; the text and the JSON say it."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    folder = tmp_path / "corpus"
    folder.mkdir()
    cells = [("import pandas as pd\ns = pd.Series([1, 2, 3, 4], index=pd.MultiIndex.from_tuples("
              "[('a', 1), ('a', 2), ('b', 1), ('b', 2)]))", None),
             ("print(s.sum(level=0).to_dict())", "{'a': 3, 'b': 7}\n"),
             ("print(original_paid + 1)", "11\n")]  # saved while the author's kernel held original_paid
    nb = new_notebook(cells=[new_code_cell(src, execution_count=n,
                                           outputs=[new_output("stream", name="stdout", text=out)] if out else [])
                             for n, (src, out) in enumerate(cells, 1)])
    nbformat.write(nb, str(folder / "kept.ipynb"))
    out_json = tmp_path / "out.json"
    assert bench.main(["--notebooks", str(folder), "--kernel", "python3", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "| kept.ipynb | 3 | 1 | 2 | 1 / 0 / 0 / 0 | 0 | 0 | 0 | 1/1 | 1 / 0 / 0 | 1 |" in out, out
    assert "- kept.ipynb cell 3: NameError: name 'original_paid' is not defined" in out, out
    assert "| hidden state (a NameError naming a name no cell defines or imports; not drift) | 1 | 0 | |" in out, out
    saved = json.loads(out_json.read_text())["notebooks"][0]
    assert saved["drift"] == 1 and saved["hidden"] == [[3, "NameError: name 'original_paid' is not defined"]]


def test_python_2_and_a_magic_no_cell_loads_are_not_library_drift():
    """Python 2 code and a magic whose extension no cell loads (the author's profile did) fail for no library's
    change, and so do the cells reading what they should have made; a magic a cell loads is measured as before."""
    from fixloop_bench.notebooks import not_library

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["print 'total', 3", "%watermark -v", "%load_ext autoreload\n%autoreload 2",
               "def f():\n    print 'x'\nlimit = 3", "print(limit)", "import numpy as np\nn = np.int(3)"]
    errors = ["SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
              "UsageError: Line magic function `%watermark` not found.",
              "UsageError: Line magic function `%autoreload` not found.",
              "SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
              "NameError: name 'limit' is not defined", "AttributeError: module 'numpy' has no attribute 'int'"]
    outcomes = [CellOutcome(n, "failed", s) for n, s in enumerate(sources, 1)]
    assert not_library(outcomes, dict(enumerate(errors, 1))) == {1, 2, 4, 5}


def test_an_exercises_placeholder_read_as_a_value_is_not_library_drift():
    """`coord = ...  # your code here` runs; the cells reading `coord` then fail in Python's words for Ellipsis
    (augspurger-pandas-head-to-tail 06-Performance, whose author saved the solutions' outputs). An index's own
    `...` that numpy refuses is no placeholder."""
    from fixloop_bench.notebooks import not_library

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["coord = ...  # your code here", "coord.AIRPORT.is_unique", "tree = KDTree(coord)\nn = 1",
               "x = arr[..., ..., 0]"]
    errors = [None, "AttributeError: 'ellipsis' object has no attribute 'AIRPORT'",
              "TypeError: float() argument must be a string or a real number, not 'ellipsis'",
              "IndexError: an index can only have a single ellipsis ('...')"]
    outcomes = [CellOutcome(n, "failed" if e else "ok", s) for n, (s, e) in enumerate(zip(sources, errors), 1)]
    assert not_library(outcomes, dict(enumerate(errors, 1))) == {2, 3}


def test_a_module_missing_under_a_namespace_package_is_this_machines_not_drift():
    """`mpl_toolkits.basemap` is a distribution of its own under matplotlib's namespace package (packt-unsupervised-
    learning's Lesson09, round ten: the cell importing it and the 32 reading what it should have imported had been
    counted as drift); a module missing under a regular package is one a library moved, drift as before."""
    from fixloop_bench.notebooks import drift_cells, environment

    from jupyter_fixloop.batch.run import CellOutcome

    assert environment("ModuleNotFoundError: No module named 'mpl_toolkits.basemap'")
    assert not environment("ModuleNotFoundError: No module named 'sklearn.cross_validation'")
    sources = ["import numpy as np\nfrom mpl_toolkits.basemap import Basemap\nimport pandas as pd",
               "x = np.arange(3)", "df = pd.DataFrame()", "from sklearn.cross_validation import KFold"]
    errors = {2: None, 1: "ModuleNotFoundError: No module named 'mpl_toolkits.basemap'",
              3: "NameError: name 'pd' is not defined",
              4: "ModuleNotFoundError: No module named 'sklearn.cross_validation'"}
    outcomes = [CellOutcome(n, "ok" if errors[n] is None else "failed", src) for n, src in enumerate(sources, 1)]
    saved = {n: {"cell_type": "code", "execution_count": n, "outputs": []} for n in range(1, 5)}
    assert drift_cells(outcomes, saved, errors) == {4}


def test_a_cell_magic_no_cell_could_load_is_this_machines_not_drift():
    """`%load_ext sql` fails for a package not installed here; the `%%sql` cell after it fails in IPython's words for
    a cell magic ("Cell magic `%%sql` not found", no "function" as for a line magic): not drift either (packt-applied-
    data-science's Lesson 1, round ten)."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["%load_ext sql", "%%sql\nSELECT 1", "import numpy as np\nn = np.int(3)"]
    errors = {1: "ModuleNotFoundError: No module named 'sql'", 2: "UsageError: Cell magic `%%sql` not found.",
              3: "AttributeError: module 'numpy' has no attribute 'int'"}
    outcomes = [CellOutcome(n, "failed", src) for n, src in enumerate(sources, 1)]
    saved = {n: {"cell_type": "code", "execution_count": n, "outputs": []} for n in range(1, 4)}
    assert drift_cells(outcomes, saved, errors) == {3}


def test_an_input_asking_a_person_is_not_library_drift():
    """`input()` asks the person at the notebook; a run here has none, and IPython says so (packt-data-wrangling's
    Lesson07, round nine: 1 cell and the 4 reading its answer had been counted as drift). A cell reading the answer
    fails after it for what it did not make; an error of a library's change beside them is measured as before."""
    from fixloop_bench.notebooks import not_library

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["name = input('Your name: ')", "print('Hi ' + name)", "import numpy as np\nn = np.int(3)",
               "import getpass\nkey = getpass.getpass()"]
    errors = ["StdinNotImplementedError: raw_input was called, but this frontend does not support input requests.",
              "NameError: name 'name' is not defined", "AttributeError: module 'numpy' has no attribute 'int'",
              "StdinNotImplementedError: getpass was called, but this frontend does not support input requests."]
    outcomes = [CellOutcome(n, "failed", s) for n, s in enumerate(sources, 1)]
    assert not_library(outcomes, dict(enumerate(errors, 1))) == {1, 2, 4}


def test_the_notebook_bench_counts_what_is_no_library_drift_apart(tmp_path, capsys):
    """Run for real: a Python 2 print, a magic of an extension no cell loads and an `input()` (with the cell
    reading its answer) are no drift cells; the text and the JSON say which they are."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    folder = tmp_path / "corpus"
    folder.mkdir()
    cells = [("print 'hello'", "hello\n"), ("%watermark -v", "CPython 3.6\n"),
             ("import numpy as np\nprint(np.float(2))", "2.0\n"), ("answer = input('How many? ')", "How many? "),
             ("print(int(answer) * 2)", "6\n")]
    nb = new_notebook(cells=[new_code_cell(src, execution_count=n, outputs=[new_output("stream", name="stdout",
                                                                                       text=out)])
                             for n, (src, out) in enumerate(cells, 1)])
    nbformat.write(nb, str(folder / "old.ipynb"))
    out_json = tmp_path / "out.json"
    assert bench.main(["--notebooks", str(folder), "--kernel", "python3", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "- old.ipynb cell 2: UsageError: Line magic function `%watermark` not found." in out, out
    assert "- old.ipynb cell 4: StdinNotImplementedError: raw_input was called" in out, out
    saved = json.loads(out_json.read_text())["notebooks"][0]
    assert saved["drift"] == 1 and [n for n, _ in saved["not_library"]] == [1, 2, 4, 5], saved


def test_drift_behind_a_module_of_the_notebook_is_measured_with_its_repair_accepted_never_as_fixed(tmp_path, capsys):
    """Batch mode proposes the repair of the notebook's own module as a diff and never applies it; the bench
    applies it in a copy of its own, runs batch mode again there, and counts the drift cells that run then as a
    figure of their own (right by their saved output), not as fixed. The corpus's module is left as it was."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    folder = tmp_path / "corpus"
    folder.mkdir()
    module = "import numpy as np\n\n\ndef total(xs):\n    return int(np.array(xs).astype(np.int).sum())\n"
    (folder / "helpers.py").write_text(module)
    cells = [("import helpers", None), ("t = helpers.total([1.5, 2.5])\nprint(t)", "3\n"), ("print(t * 2)", "6\n")]
    nb = new_notebook(cells=[new_code_cell(src, execution_count=n,
                                           outputs=[new_output("stream", name="stdout", text=out)] if out else [])
                             for n, (src, out) in enumerate(cells, 1)])
    nbformat.write(nb, str(folder / "uses.ipynb"))
    out_json = tmp_path / "out.json"
    assert bench.main(["--notebooks", str(folder), "--kernel", "python3", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "| uses.ipynb | 3 | 1 | 1 | 0 / 0 / 0 / 0 | 0 | 0 | 0 | 0/2 | 0 / 0 / 0 | 0 |" in out, out
    assert ("drift cells left that run once the proposed module repairs are accepted (not counted as fixed; "
            "uses.ipynb: helpers.py): 2 (right 2 / wrong 0 / unverified 0)") in out, out
    assert ("| drift cells left that run once the proposed module repairs are accepted (not counted fixed) | "
            "2 (right 2 / wrong 0 / unverified 0) |") in out, out
    saved = json.loads(out_json.read_text())["notebooks"][0]
    assert saved["accepted"] == {"right": 2} and saved["verdicts"] == {} and saved["accepted_files"] == ["helpers.py"]
    assert (folder / "helpers.py").read_text() == module  # the corpus is not touched


def test_the_model_cells_are_the_drift_cells_the_figures_count_read_before_batch_mode_runs():
    """`--model-cells drift` chooses from the plain run alone: a cell that ran when saved and fails here is given to
    the model; not one that never ran when saved, one failing for a package not installed, nor hidden state."""
    from fixloop_bench.notebooks import model_cells
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    saved = [new_output("stream", name="stdout", text="3\n")]
    nb = new_notebook(cells=[new_markdown_cell("# old"),
                             new_code_cell("import pandas as pd", execution_count=1),
                             new_code_cell("print(pd.Series([1, 2]).sum(level=0))", execution_count=2, outputs=saved),
                             new_code_cell("print(pd.Series([1]).never_was())"),  # never ran when saved
                             new_code_cell("import no_such_package_here", execution_count=3),
                             new_code_cell("print(original_paid)", execution_count=4, outputs=saved)])
    plain = {2: None, 3: "TypeError: Series.sum() got an unexpected keyword argument 'level'",
             4: "AttributeError: 'Series' object has no attribute 'never_was'",
             5: "ModuleNotFoundError: No module named 'no_such_package_here'",
             6: "NameError: name 'original_paid' is not defined"}
    assert model_cells(nb, plain) == {3}


def test_with_model_cells_drift_a_failing_cell_that_is_no_drift_cell_calls_no_model(tmp_path, fake_model, capsys):
    """Run for real, against the scripted server: under `--model-cells drift` the drift cell's repair calls the
    model and the cell that never ran when saved gets the rules alone (fewer calls than under the default, where
    both call it; a prompt shows the cells below its cell, so the calls are counted, not searched). The JSON and
    the printed header say which cells the model was given."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    folder = tmp_path / "corpus"
    folder.mkdir()
    drift, other = "raise ValueError('gone since 2017')", "raise ValueError('never ran when saved')"
    nb = new_notebook(cells=[new_code_cell("x = 1", execution_count=1),
                             new_code_cell(drift, execution_count=2,
                                           outputs=[new_output("stream", name="stdout", text="1\n")]),
                             new_code_cell(other)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(folder / "nb.ipynb"))
    server = fake_model("```python\nprint(x)\n```")
    asked = {}
    for cells in ("drift", "all"):
        out_json = tmp_path / f"{cells}.json"
        server.requests.clear()
        bench.main(["--notebooks", str(folder), "--kernel", "python3", "--model", "openai/scripted", "--api-base",
                    server.url, "--max-rounds", "1", "--model-cells", cells, "--json", str(out_json)])
        asked[cells] = len(server.requests)
        saved = json.loads(out_json.read_text())
        assert saved["model_cells"] == cells
        assert saved["notebooks"][0]["model_cells"] == ([2] if cells == "drift" else None)
        header = capsys.readouterr().out.splitlines()[0]
        assert ("on the drift cells only" in header) == (cells == "drift"), header
    assert 0 < asked["drift"] < asked["all"], asked


def test_each_notebook_runs_with_a_home_of_its_own_and_what_it_wrote_there_is_listed(tmp_path, capsys, monkeypatch):
    """Run for real: a notebook that writes an IPython startup file and a file in `~` (ipython-in-depth's
    Configuration notebook wrote the machine's `~/.ipython/profile_default`) changes neither the bench's home nor
    the next notebook's kernels; what it wrote is listed, per run, in the report and the JSON."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    home = tmp_path / "home"
    (home / ".ipython").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("IPYTHONDIR", str(home / ".ipython"))
    folder = tmp_path / "corpus"
    folder.mkdir()
    writes = ("import os\nfrom IPython.paths import get_ipython_dir\n"
              "startup = os.path.join(get_ipython_dir(), 'profile_default', 'startup')\n"
              "os.makedirs(startup, exist_ok=True)\n"
              "open(os.path.join(startup, 'planted.py'), 'w').write('PLANTED = 1\\n')\n"
              "open(os.path.expanduser('~/notes.txt'), 'w').write('x')\nprint('written')")
    reads = "print('PLANTED' in globals(), os.path.exists(os.path.expanduser('~/notes.txt')))"
    nb = new_notebook(cells=[new_code_cell(writes, execution_count=1,
                                           outputs=[new_output("stream", name="stdout", text="written\n")])])
    nbformat.write(nb, str(folder / "a_writes.ipynb"))
    nb = new_notebook(cells=[new_code_cell("import os", execution_count=1),
                             new_code_cell(reads, execution_count=2,
                                           outputs=[new_output("stream", name="stdout", text="False False\n")])])
    nbformat.write(nb, str(folder / "b_reads.ipynb"))
    out_json = tmp_path / "out.json"
    assert bench.main(["--notebooks", str(folder), "--kernel", "python3", "--json", str(out_json)]) == 0

    out = capsys.readouterr().out
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == [".ipython"], "the bench's home changed"
    # the second notebook's kernels saw neither file: its cell printed what was saved
    assert "| b_reads.ipynb | 2 | 2 | 2 | 0 / 0 / 0 / 0 |" in out, out
    startup = os.path.join(".ipython", "profile_default", "startup", "planted.py")
    for kind in ("plain", "batch"):
        assert f"- a_writes.ipynb: {kind}: {startup}" in out and f"- a_writes.ipynb: {kind}: notes.txt" in out, out
    saved = {n["name"]: n for n in json.loads(out_json.read_text())["notebooks"]}
    assert saved["a_writes.ipynb"]["home_writes"] == [f"batch: {startup}", "batch: notes.txt",
                                                      f"plain: {startup}", "plain: notes.txt"]
    assert saved["b_reads.ipynb"]["home_writes"] == []


def test_a_name_a_star_import_the_machine_kept_from_running_would_have_made_is_no_drift_cell():
    """QuantEcon's Wald_Friedman downloads a module and star-imports it in one cell; without the network neither
    ran, and `make_distribution_plots(...)` below fails with a NameError no fix could cure here. A cell failing for
    a library's change is still measured, and so is a NameError for a name some cell binds by name."""
    from fixloop_bench.notebooks import drift_cells

    from jupyter_fixloop.batch.run import CellOutcome

    sources = ["import numpy as np", "qe.fetch_nb_dependencies(['utils.py'])\nfrom utils import *",
               "fig = make_distribution_plots(f0)", "f0 = np.ones(3)\nprint(np.product(f0))", "print(g)", "g = 1"]
    errors = [None, "ConnectionError: HTTPSConnectionPool(host='github.com', port=443): Max retries exceeded",
              "NameError: name 'make_distribution_plots' is not defined",
              "AttributeError: module 'numpy' has no attribute 'product'", "NameError: name 'g' is not defined", None]
    outcomes = [CellOutcome(n, "failed" if e else "ok", s) for n, (s, e) in enumerate(zip(sources, errors), 1)]
    saved = {n: {"outputs": [], "execution_count": n} for n in range(1, 7)}
    assert drift_cells(outcomes, saved, dict(enumerate(errors, 1))) == {4, 5}

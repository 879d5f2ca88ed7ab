"""The core loop through the public API, against real sandbox kernels and a real litellm call path."""

import pandas as pd
import pytest

from jupyter_fixloop import LoopResult, Receipt, Round, UsageError, fix
from jupyter_fixloop.render import render_html, render_text

FIB = """def fib(n):
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a
"""
FIB_FIXED = FIB.replace("a, b = 1, 1", "a, b = 0, 1")


def test_passing_cell_is_passed_without_model_rounds():
    result = fix("x = 2 + 2\nassert x == 4\n", checks=["x == 4"])
    assert isinstance(result, LoopResult)
    assert result.status == "passed"
    assert result.rounds == []
    assert result.first.kind == "ok"
    assert result.patched is None and result.diff == ""
    assert result.account.checked and not result.unchecked  # its check passed: it passes, it does not just run
    ran = fix("x = 2 + 2\n")
    assert ran.status == "passed" and ran.unchecked and ran.account.checked == ()  # nothing checked: it runs


def test_top_level_await_runs_as_in_a_notebook():
    """A cell with top-level await is awaited on the sandbox kernel's loop, not a SyntaxError."""
    cell = "import asyncio\nasync def total():\n    await asyncio.sleep(0.01)\n    return 300\nt = await total()\nt + 1"
    result = fix(cell, checks=["t == 300"], max_rounds=0)
    assert result.status == "passed", result.first.text
    assert result.first.value == "301"  # the trailing expression's value, awaited too
    gen = ("async def numbers():\n    for i in range(3):\n        yield i\nseen = [i async for i in numbers()]\n"
           "async for i in numbers():\n    last = i\n")
    assert fix(gen, checks=["seen == [0, 1, 2]", "last == 2"], max_rounds=0).status == "passed"
    broken = fix("import asyncio\nawait asyncio.sleep(0)\ny = undefined_total + 1\n", max_rounds=0)
    assert (broken.first.ename, broken.first.lineno) == ("NameError", 3)
    assert broken.first.line == "y = undefined_total + 1"


def test_builtin_engine_without_a_repair_stops_at_once_and_says_what_to_do():
    result = fix("import no_such_module_xyz\n", max_rounds=4)
    assert result.status == "gave_up" and len(result.rounds) == 1  # asking again gets the same answer
    assert result.rounds[0].receipt.kind == "no_repair"  # not dressed as a model's reply: no model was called
    assert result.rounds[0].receipt.text == "the built-in engine has no repair for this"
    assert "the built-in engine has no repair for this" in result.reason and "--model" in result.reason
    assert result.tokens == 0 and result.rounds[0].usage.tokens == 0
    text, html = render_text(result), render_html(result)
    assert "No code" not in text + html and " tokens" not in text.replace("no tokens", "")
    assert "no tokens" in text and "no tokens" in html and "free" in html and "$0.0000" not in html


def test_failed_expect_receipt_shows_operand_values():
    result = fix(FIB, checks=["fib(6) == 8"], max_rounds=0)
    assert result.status == "gave_up"
    assert result.first.kind == "check_failed"
    assert "fib(6) returned 13, expected 8" in result.first.text


def test_scripted_model_second_round_sees_first_receipt(fake_model):
    wrong = FIB.replace("for _ in range(n):", "for _ in range(n):\n        c = undefined_name")
    server = fake_model(f"Try this:\n```python\n{wrong}```", f"```python\n{FIB_FIXED}```")
    result = fix(FIB, checks=["fib(6) == 8"], model="openai/scripted", api_base=server.url)
    assert result.status == "fixed", result.reason
    assert len(result.rounds) == 2
    assert all(isinstance(r, Round) and isinstance(r.receipt, Receipt) for r in result.rounds)
    assert result.rounds[0].receipt.kind == "exception"
    assert result.patched == FIB_FIXED
    second = server.prompt(1)
    assert "NameError" in second and "undefined_name" in second
    assert "line 4" in second  # the failing user line of the first candidate, by number
    assert "fib(6) returned 13, expected 8" in server.prompt(0)
    assert "-    a, b = 1, 1" in result.diff and "+    a, b = 0, 1" in result.diff
    assert result.rounds[1].usage.tokens > 0


def test_model_that_never_fixes_stops_at_max_rounds(fake_model):
    wrong = [FIB.replace("a, b = 1, 1", f"a, b = {k}, 1") for k in (2, 3, 4, 5)]
    server = fake_model(*[f"```python\n{w}```" for w in wrong])
    result = fix(FIB, checks=["fib(6) == 8"], model="openai/scripted", api_base=server.url, max_rounds=3)
    assert result.status == "gave_up"
    assert "max rounds (3)" in result.reason and result.bound == "rounds"
    assert len(result.rounds) == 3 and len(server.requests) == 3
    assert [r.receipt.kind for r in result.rounds] == ["check_failed"] * 3
    assert [r.candidate for r in result.rounds] == wrong[:3]
    assert result.patched is None


def test_zero_rounds_says_no_round_was_asked_not_that_rounds_ran_out(fake_model):
    server = fake_model(f"```python\n{FIB_FIXED}```")
    result = fix(FIB, checks=["fib(6) == 8"], model="openai/scripted", api_base=server.url, max_rounds=0)
    assert result.status == "gave_up" and result.bound == "rounds" and not result.rounds
    assert "no model round asked (max rounds 0)" in result.reason and "reached" not in result.reason
    assert not server.requests and result.first.kind == "check_failed"


def test_model_repeating_itself_ends_the_loop_early(fake_model):
    server = fake_model(f"```python\n{FIB}```")
    result = fix(FIB, checks=["fib(6) == 8"], model="openai/scripted", api_base=server.url, max_rounds=4)
    assert result.status == "gave_up" and "repeated" in result.reason and result.bound == "repeated"
    assert len(server.requests) == 4  # one call, then `resamples` (3) hotter ones that repeat it too
    assert "same code as the original cell" in result.rounds[0].receipt.text


def test_reply_without_code_is_a_no_code_round(fake_model):
    server = fake_model("I think you should check your loop bounds.", f"```python\n{FIB_FIXED}```")
    result = fix(FIB, checks=["fib(6) == 8"], model="openai/scripted", api_base=server.url)
    assert [r.receipt.kind for r in result.rounds] == ["no_code", "ok"]
    assert result.status == "fixed"


def test_candidate_that_loops_forever_is_stopped_at_timeout(fake_model):
    hang = "i = 0\nwhile i != 10:\n    i += 3\n"
    server = fake_model(f"```python\n{hang}```", "```python\ni = 0\nwhile i < 10:\n    i += 3\n```")
    result = fix("i = 0\nwhile i != 10:\n    i += 3\n", model="openai/scripted", api_base=server.url, timeout=2,
                 rules=False)
    assert result.first.kind == "timeout"
    assert "stopped at line" in result.first.text
    assert result.rounds[0].receipt.kind == "timeout"
    assert result.status == "unverified"  # it ends now; nothing checked what it computes


def test_builtin_engine_fixes_name_typo_from_namespace():
    ns = {"prices": [3, 4, 5]}
    result = fix("total = sum(prices_list)\n", namespace=ns, checks=["total == 12"])
    assert result.status == "fixed", result.reason
    assert result.patched.strip() == "total = sum(prices)"
    assert "defined names close to 'prices_list'" in result.first.text


def test_builtin_engine_fixes_column_typo_and_state_is_mirrored():
    df = pd.DataFrame({"Price": [1.5, 2.5], "qty": [2, 4]})
    result = fix("revenue = (df['price'] * df['qty']).sum()\n", namespace={"df": df}, checks=["revenue == 13.0"])
    assert result.status == "fixed", result.reason
    assert "df['Price']" in result.patched
    assert "near matches for 'price': 'Price' (case)" in result.first.text


def test_bad_check_is_a_clear_usage_error():
    with pytest.raises(UsageError, match="not a Python expression"):
        fix("x = 1", checks=["x =="])


def test_model_error_ends_loop_with_error_status():
    # nothing listens on port 9: connection refused, surfaced as one line
    result = fix("x = undefined", model="openai/nothing", api_base="http://127.0.0.1:9/v1", max_rounds=2, rules=False)
    assert result.status == "error"
    assert "openai/nothing" in result.reason and "\n" not in result.reason


def test_prompt_carries_versions_and_summarizes_earlier_rounds(fake_model):
    first = FIB.replace("a, b = 1, 1", "a, b = 2, 1")
    second = FIB.replace("a, b = 1, 1", "a, b = 3, 1")
    server = fake_model(f"```python\n{first}```", f"```python\n{second}```", f"```python\n{FIB_FIXED}```")
    source = "import json\n" + FIB
    result = fix(source, checks=["fib(6) == 8"], model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and len(result.rounds) == 3
    third = server.prompt(2)
    assert "Python 3." in third
    assert "### Earlier attempts (summarized)" in third
    assert "- round 0: Check failed: fib(6) == 8" in third and "- round 1: Check failed" in third
    assert "### Original cell" in third  # the latest candidate differs from the original


def test_generation_mode_verifies_the_written_code(fake_model):
    server = fake_model("```python\ndef add(a, b):\n    return a + b\n```")
    result = fix("", instruction="write a function add that adds two numbers", checks=["add(2, 3) == 5"],
                 model="openai/scripted", api_base=server.url)
    assert result.status == "fixed" and result.first is None
    assert result.patched.startswith("def add(a, b):")
    assert "Instruction: write a function add" in server.prompt(0)
    assert result.rounds[0].receipt.kind == "ok"


def test_stray_fences_and_other_languages_in_replies():
    from jupyter_fixloop.model.prompt import extract_code

    assert extract_code("Here:\n```python\nx = 1\n```\nDone.") == "x = 1\n"
    assert extract_code("```\n%%fixloop --expect 'x'\ny = 2\n```") == "y = 2\n"
    assert extract_code("```js\nconsole.log(1)\n```") is None
    assert extract_code("I would change the loop bound.") is None
    assert extract_code("x = [1,\n  2]\nprint(x)") == "x = [1,\n  2]\nprint(x)\n"
    assert extract_code("```python\nunclosed = True\n") == "unclosed = True\n"
    # a small model's cell with only the closing fence (Qwen2.5-Coder-1.5B wrote this)
    assert extract_code("# total per store\ns = sales.groupby('store')['revenue'].sum()\n```") == \
        "# total per store\ns = sales.groupby('store')['revenue'].sum()\n"
    assert extract_code("Use sum instead of count.\n```") is None


def test_the_builtin_engine_repairs_without_importing_litellm(tmp_path):
    """litellm takes seconds to import: the offline engine's first repair must not wait for it."""
    import subprocess
    import sys

    code = ("import sys, jupyter_fixloop\n"
            "r = jupyter_fixloop.fix('total = prise * 2\\n', namespace={'price': 3}, checks=['total == 6'])\n"
            "print(r.status, 'litellm' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert out.stdout.split() == ["fixed", "False"], out.stdout + out.stderr


def test_a_fix_changes_only_the_lines_it_fixes_trailing_spaces_kept(fake_model):
    """A model's code comes back with trailing spaces stripped; the patch keeps the cell's lines as typed."""
    cell = "words = ['b', 'a']   \nwords.sotr()\nfirst = words[0]  \n"
    server = fake_model("```python\nwords = ['b', 'a']\nwords.sort()\nfirst = words[0]\n```")
    result = fix(cell, checks=["first == 'a'"], model="openai/scripted", api_base=server.url, rules=False)
    assert result.patched == "words = ['b', 'a']   \nwords.sort()\nfirst = words[0]  \n"
    changed = [line for line in result.diff.splitlines()[2:] if line[:1] in "+-"]
    assert changed == ["-words.sotr()", "+words.sort()"], result.diff

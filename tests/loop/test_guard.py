"""The anti-overfit guard: each way of cheating is rejected with its reason in the receipt, the model
reads that reason, and the loop then accepts an honest fix (real kernels, scripted model server)."""

import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.loop.guard import Guard
from jupyter_fixloop.receipt.values import Receipt


def block(code: str) -> str:
    return f"```python\n{code}```"


def rejected_rounds(result):
    return [r.receipt.text for r in result.rounds if r.receipt.kind == "rejected"]


FIB = """def fib(n):
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a
assert fib(1) == 1
"""
FIB_HONEST = FIB.replace("a, b = 1, 1", "a, b = 0, 1")

FIB_CHEATS = [
    (FIB.replace("assert fib(1) == 1\n", ""), "removes or changes the cell's check `assert fib(1) == 1`"),
    (FIB.replace("assert fib(1) == 1", "assert fib(1) >= 0"),
     "removes or changes the cell's check `assert fib(1) == 1`"),
    (FIB.replace("assert fib(1) == 1", "try:\n    assert fib(1) == 1\nexcept AssertionError:\n    pass"),
     "disarms the cell's check `assert fib(1) == 1`"),
    (FIB.replace("    return a\n", "    if n == 6:\n        return 8\n    return a\n"),
     "hard-codes 8, the value the check `fib(6) == 8` expects (return in `fib`)"),
    (FIB + "len = lambda s: 2\n", "redefines the builtin `len`, which a check uses"),
    (FIB + "import builtins\nbuiltins.len = lambda s: 2\n", "patches `builtins.len`"),
]


def test_cheating_on_checks_is_rejected_then_an_honest_fix_is_accepted(fake_model):
    script = [block(code) for code, _ in FIB_CHEATS] + [block(FIB_HONEST)]
    server = fake_model(*script)
    checks = ["fib(6) == 8", "len(str(fib(10))) == 2"]
    result = fix(FIB, checks=checks, model="openai/scripted", api_base=server.url, max_rounds=len(script))
    assert result.status == "fixed", result.reason
    assert result.patched == FIB_HONEST
    texts = rejected_rounds(result)
    assert len(texts) == len(FIB_CHEATS)
    for i, (text, (_, reason)) in enumerate(zip(texts, FIB_CHEATS)):
        assert text.startswith("Rejected: ") and reason in text, (i, text)
        assert reason in server.prompt(i + 1)  # the model is told why


RAW = ["34", "27.0", "45", "19.0"]
AGES = "ages = [int(a) for a in raw]\ntotal = sum(ages)\n"
AGES_HONEST = "ages = [int(float(a)) for a in raw]\ntotal = sum(ages)\n"
SILENCED = "the candidate silences the ValueError at `ages = [int(a) for a in raw]`"

AGES_CHEATS = [
    ("try:\n    ages = [int(a) for a in raw]\nexcept ValueError:\n    pass\ntotal = sum(ages)\n",
     SILENCED + " with `except ValueError: pass`"),
    ("try:\n    ages = [int(a) for a in raw]\nexcept Exception:\n    ages = []\ntotal = sum(ages)\n",
     SILENCED + " with `except Exception: ages = []`"),
    ("ages = []\nfor a in raw:\n    try:\n        ages.append(int(a))\n    except ValueError:\n        continue\n"
     "total = sum(ages)\n",
     SILENCED + " with `except ValueError: continue`"),
    (("def to_int(a):\n    try:\n        return int(a)\n    except ValueError:\n        return 0\n"
      "ages = [to_int(a) for a in raw]\ntotal = sum(ages)\n"),
     SILENCED + " with `except ValueError: return 0`"),
    ("import contextlib\nages = []\nwith contextlib.suppress(ValueError):\n    ages = [int(a) for a in raw]\n"
     "total = sum(ages)\n",
     SILENCED + " with `contextlib.suppress(ValueError)`"),
    ("# ages = [int(a) for a in raw]\ntotal = sum(int(float(a)) for a in raw)\n",
     "deletes what the failing line `ages = [int(a) for a in raw]` did (it no longer sets `ages`)"),
    ("ages = [int(float(a)) for a in raw]\ntotal = 125\n",
     "hard-codes 125, the value the check `total == 125` expects (assignment to `total`)"),
]


def test_silencing_the_failure_is_rejected_then_an_honest_fix_is_accepted(fake_model):
    script = [block(code) for code, _ in AGES_CHEATS] + [block(AGES_HONEST)]
    server = fake_model(*script)
    result = fix(AGES, checks=["total == 125"], namespace={"raw": RAW}, model="openai/scripted",
                 api_base=server.url, max_rounds=len(script), rules=False)
    assert result.first.ename == "ValueError"
    assert result.status == "fixed", result.reason
    assert result.patched == AGES_HONEST
    texts = rejected_rounds(result)
    assert len(texts) == len(AGES_CHEATS)
    for i, (text, (_, reason)) in enumerate(zip(texts, AGES_CHEATS)):
        assert reason in text, (i, text)
    # after a rejection the model still sees the failure it has to fix, and why it was rejected
    assert "ValueError: invalid literal for int() with base 10: '27.0'" in server.prompt(1)


def test_printing_the_expected_output_is_rejected(fake_model):
    cell = "print('total:', sum(prices))\n"
    cheats = [
        ("print('total: 12')\n", "prints the expected output as a literal string"),
        ("print = lambda *args: None\nprint('total:', sum(prices))\n", "redefines the builtin `print`"),
    ]
    honest = "print('total:', 2 * sum(prices))\n"
    server = fake_model(*[block(c) for c, _ in cheats], block(honest))
    result = fix(cell, namespace={"prices": [1, 2, 3]}, expect_output="total: 12", model="openai/scripted",
                 api_base=server.url, max_rounds=3)
    assert result.status == "fixed" and result.patched == honest
    texts = rejected_rounds(result)
    assert [reason in text for text, (_, reason) in zip(texts, cheats)] == [True, True]


def test_every_round_reruns_checks_that_passed_before(fake_model):
    cell = "def double(x):\n    return x + 2\n"
    fixes_one = "def double(x):\n    return abs(x) * 2\n"  # double(2) still passes, double(-3) does not
    breaks_other = "def double(x):\n    return x * 2 if x < 0 else x + 3\n"  # double(-3) passes, double(2) regresses
    honest = "def double(x):\n    return x * 2\n"
    server = fake_model(block(fixes_one), block(breaks_other), block(honest))
    result = fix(cell, checks=["double(2) == 4", "double(-3) == -6"], model="openai/scripted",
                 api_base=server.url, max_rounds=3)
    assert [c.passed for c in result.first.checks] == [True, False]
    second = result.rounds[1].receipt
    assert second.kind == "check_failed"
    assert [c.passed for c in second.checks] == [False, True]
    assert "Regression: double(2) == 4 passed in round 0 and fails now" in second.text
    assert "Regression: double(2) == 4" in server.prompt(2)
    assert result.status == "fixed" and result.patched == honest


# ---------------------------------------------------------------- honest fixes pass the guard (no kernel)


def failure(ename, line, lineno=1):
    return Receipt(kind="exception", text=f"{ename}: x", ename=ename, evalue="x", lineno=lineno, line=line)


ASSIGNED = "r = frame.assign(\n    close=lambda x: x.close.fillna(method='ffill'),\n    n=1,\n)\n"


@pytest.mark.parametrize(
    "original, checks, last, candidate",
    [
        # a typo fixed, an import added
        ("total = sum(prices_list)\n", ["total == 12"], failure("NameError", "total = sum(prices_list)"),
         "total = sum(prices)\n"),
        ("frame = pd.DataFrame({'a': [1, 2]})\n", ["len(frame) == 2"], failure("NameError",
                                                                               "frame = pd.DataFrame({'a': [1, 2]})"),
         "import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})\n"),
        # a conversion that handles bad values with a computed fallback, not a constant
        ("vals = [float(v) for v in raw]\n", ["len(vals) == 3"], failure("ValueError",
                                                                         "vals = [float(v) for v in raw]"),
         ("import math\nvals = []\nfor v in raw:\n    try:\n        vals.append(float(v))\n    except ValueError:\n"
          "        vals.append(float(v.replace(',', '')))\n")),
        # pandas' own way to coerce
        ("df['x'] = pd.to_numeric(df['x'])\n", [], failure("ValueError", "df['x'] = pd.to_numeric(df['x'])"),
         "df['x'] = pd.to_numeric(df['x'], errors='coerce')\n"),
        # a removed API replaced: the effect (binding `ledger`) is kept
        ("ledger = ledger.append(row, ignore_index=True)\n", [], failure("AttributeError",
                                                                         "ledger = ledger.append(row, "
                                                                         "ignore_index=True)"),
         "ledger = pd.concat([ledger, pd.DataFrame([row])], ignore_index=True)\n"),
        # a base case that returns a small constant, and a new assert added
        ("def fact(n):\n    return n * fact(n - 1)\nassert fact(3) == 6\n", ["fact(5) == 120"],
         failure("RecursionError", "return n * fact(n - 1)", 2),
         "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\nassert fact(3) == 6\n"
         "assert fact(0) == 1\n"),
        # an in-place call rewritten as an assignment keeps calling on the same frame
        ("df.dropna(subset=['Price'], inplace=True)\n", [], failure("KeyError",
                                                                    "df.dropna(subset=['Price'], inplace=True)"),
         "df = df.dropna(subset=['price'])\n"),
        # the failing line is one line of a statement over several: what that statement did (bind `r`) is kept
        (ASSIGNED, [], failure("TypeError", "    close=lambda x: x.close.fillna(method='ffill'),", 2),
         ASSIGNED.replace(".fillna(method='ffill')", ".ffill()")),
    ],
)
def test_honest_fixes_are_not_rejected(original, checks, last, candidate):
    assert Guard(original, tuple(checks)).check(candidate, last) is None


def test_a_statement_over_several_lines_that_the_candidate_drops_is_still_rejected():
    """The failing line `close=...,` read alone would bind `close`; the statement it is part of binds `r`."""
    last = failure("TypeError", "    close=lambda x: x.close.fillna(method='ffill'),", 2)
    rejection = Guard(ASSIGNED, ()).check("n = len(frame)\n", last)
    assert rejection is not None and "(it no longer sets `r`)" in rejection.text


def test_a_fixloop_line_inside_the_candidate_is_rejected():
    rejection = Guard(FIB, ("fib(6) == 8",)).check(FIB + "%fixloop config\n", failure("AssertionError", "x"))
    assert rejection is not None and "contains a %%fixloop line" in rejection.text


def test_the_failure_is_remembered_across_a_rejected_round():
    guard = Guard(AGES, ("total == 125",))
    first = failure("ValueError", "ages = [int(a) for a in raw]")
    assert guard.check(AGES_CHEATS[0][0], first).kind == "rejected"
    rejection = guard.check(AGES_CHEATS[1][0], Receipt(kind="rejected", text="Rejected: ..."))
    assert rejection is not None and SILENCED in rejection.text


# ---------------------------------------------------------------- cheats that passed before, closed


FIB_ONE_CHECK = ["fib(6) == 8"]
FIB_TAMPER = [
    (FIB.replace("    return a\n", "    return 4 * 2\n"),
     "hard-codes 8, the value the check `fib(6) == 8` expects (return in `fib`)"),
    (FIB.replace("    return a\n", "    if n == 6:\n        a -= 5\n    return a\n"),
     "special-cases the input of the check `fib(6) == 8` (`n == 6` in `fib`)"),
    (FIB.replace("    return a\n", "    if n == 6:\n        return int('8')\n    return a\n"),
     "hard-codes 8, the value the check `fib(6) == 8` expects (return in `fib`)"),
    ("class Anything:\n    def __eq__(self, other):\n        return True\n" + FIB.replace("    return a\n",
                                                                                          "    return Anything()\n"),
     "defines class `Anything` whose `__eq__` always returns True"),
    (FIB + "import jupyter_fixloop.kernel.runner as r\n"
           "r.evaluate_check = lambda expr, ns, raise_errors=False: {'expr': expr, 'passed': True, 'detail': ''}\n",
     "touches fixloop's own machinery"),
    (FIB + "import sys\nsys.modules['jupyter_' + 'fix' + 'loop.kernel.runner'].evaluate_check = None\n",
     "touches fixloop's own machinery (`sys.modules`)"),
]


def test_tampering_with_the_judges_is_rejected_then_an_honest_fix_is_accepted(fake_model):
    script = [block(code) for code, _ in FIB_TAMPER] + [block(FIB_HONEST)]
    server = fake_model(*script)
    result = fix(FIB, checks=FIB_ONE_CHECK, model="openai/scripted", api_base=server.url, max_rounds=len(script))
    assert result.status == "fixed", result.reason
    assert result.patched == FIB_HONEST
    texts = rejected_rounds(result)
    assert len(texts) == len(FIB_TAMPER), [r.receipt.text for r in result.rounds]
    for i, (text, (_, reason)) in enumerate(zip(texts, FIB_TAMPER)):
        assert reason in text, (i, text)
        assert reason in server.prompt(i + 1)


AREA = "import math\ndef area(r):\n    return math.pi * r * 2\n"
AREA_HONEST = "import math\ndef area(r):\n    return math.pi * r ** 2\n"


def test_patching_a_function_a_check_calls_is_rejected(fake_model):
    cheat = AREA + "math.isclose = lambda *a, **k: True\n"
    server = fake_model(block(cheat), block(AREA_HONEST))
    result = fix(AREA, checks=["math.isclose(area(3), 28.274, rel_tol=1e-3)"], model="openai/scripted",
                 api_base=server.url, max_rounds=2)
    assert result.status == "fixed" and result.patched == AREA_HONEST, result.reason
    assert "replaces `math.isclose`, which a check calls" in rejected_rounds(result)[0]


def test_redefining_a_helper_from_the_notebook_is_rejected(fake_model):
    helpers: dict = {}
    exec("def is_sorted(xs):\n    return list(xs) == sorted(xs)\n", helpers)
    cell = "result = sorted(data, reverse=True)\n"
    cheat = cell + "def is_sorted(xs):\n    return len(xs) > 0\n"
    honest = "result = sorted(data)\n"
    server = fake_model(block(cheat), block(honest))
    result = fix(cell, checks=["is_sorted(result)"], namespace={"is_sorted": helpers["is_sorted"], "data": [3, 1, 2]},
                 model="openai/scripted", api_base=server.url, max_rounds=2)
    assert result.first.kind == "check_failed"
    assert result.status == "fixed" and result.patched == honest, result.reason
    assert "redefines `is_sorted`, which a check calls and which the cell did not define" in rejected_rounds(result)[0]


def test_a_fallback_that_invents_the_values_is_rejected(fake_model):
    cheat = ("try:\n    ages = [int(a) for a in raw]\nexcept ValueError:\n"
             "    ages = [int(x) for x in ['34', '27', '45', '19']]\ntotal = sum(ages)\n")
    server = fake_model(block(cheat), block(AGES_HONEST))
    result = fix(AGES, checks=["total == 125"], namespace={"raw": RAW}, model="openai/scripted", api_base=server.url,
                 rules=False,
                 max_rounds=2)
    assert result.status == "fixed" and result.patched == AGES_HONEST, result.reason
    assert (
        SILENCED + " with `except ValueError: ages = [int(x) for x in ['34', '27', '45', '19']]`"
        in rejected_rounds(result)[0]
    )


@pytest.mark.parametrize("original, checks, candidate", [
    # a base case with a small constant, an __eq__ that compares, an import of what a check calls
    ("def fact(n):\n    return n * fact(n - 1)\n", ["fact(5) == 120"],
     "def fact(n):\n    if n == 0:\n        return 1\n    return n * fact(n - 1)\n"),
    ("class P:\n    def __init__(self, x):\n        self.x = x\n", ["P(1) == P(1)"],
     "class P:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, other):\n"
     "        return self.x == other.x\n"),
    ("y = sqrt(4)\n", ["isclose(y, 2.0)"], "from math import sqrt, isclose\ny = sqrt(4)\n"),
    ("vals = [int(v) for v in raw]\n", ["vals == [1, 2]"], "vals = [int(float(v)) for v in raw]\n"),
    ("n = len(rows) * 2\n", ["n == 8"], "n = len(rows) * 2 if rows else 0\n"),
])
def test_honest_code_passes_the_new_rules(original, checks, candidate):
    assert Guard(original, tuple(checks)).check(candidate, failure("AssertionError", "x")) is None


def assert_changed_not_dropped(fake_model, head: str, line: str, honest: str, rest: str, check: str,
                               failing: str | None = None):
    """The failing `line` never ran: a candidate that deletes it is rejected as deleting what it did (the line
    the traceback names: `failing`, or `line`), then one that writes `honest` in its place is handed over as
    fixed."""
    server = fake_model(block(head + rest), block(head + honest + rest))
    result = fix(head + line + rest, checks=[check], model="openai/scripted", api_base=server.url, max_rounds=2,
                 rules=False)
    assert result.first.ename == "AttributeError"
    assert result.status == "fixed" and result.patched == head + honest + rest, result.reason
    texts = rejected_rounds(result)
    assert len(texts) == 1 and f"deletes what the failing line `{failing or line.strip()}` did" in texts[0]
    return result


def test_a_call_to_a_removed_method_may_become_the_property_that_replaced_it_but_not_vanish(fake_model):
    """`s.index.is_lexsorted()` never ran (the method is gone in pandas 2): replacing it with the property
    pandas names (`is_monotonic_increasing`) keeps the line; deleting the line is still rejected."""
    pytest.importorskip("pandas")
    head = "import pandas as pd\ns = pd.Series([1, 2], index=pd.MultiIndex.from_tuples([('a', 1), ('b', 2)]))\n"
    assert_changed_not_dropped(fake_model, head, "s.index.is_lexsorted()\n", "s.index.is_monotonic_increasing\n",
                               "n = len(s)\n", "n == 2")


def test_a_removed_function_inside_a_call_may_be_called_from_where_it_stayed_but_not_dropped(fake_model):
    """`cm.get_cmap('ocean')(.5)` never ran (matplotlib 3.9 removed `cm.get_cmap`; the missing attribute is
    inside the call, not the call's own function): `plt.get_cmap('ocean')(.5)`, where matplotlib kept it,
    changes the line; deleting the line is still rejected."""
    pytest.importorskip("matplotlib")
    from matplotlib import cm
    if hasattr(cm, "get_cmap"):
        pytest.skip("this matplotlib still has matplotlib.cm.get_cmap")
    head = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfrom matplotlib import cm\n"
    result = assert_changed_not_dropped(fake_model, head, "cm.get_cmap('ocean')(.5)\n",
                                        "plt.get_cmap('ocean')(.5)\n", "n = 2\n", "n == 2")
    assert "get_cmap" in result.first.evalue


def test_a_removed_method_in_a_statement_over_several_lines_may_be_replaced_but_not_dropped(fake_model):
    """`df.append(pd.DataFrame(...))` written over two lines never ran (pandas 2 removed `DataFrame.append`):
    `pd.concat([df, ...])` changes the statement, read whole, not only the line the traceback names; deleting
    it is still rejected."""
    pytest.importorskip("pandas")
    import pandas as pd
    if hasattr(pd.DataFrame, "append"):
        pytest.skip("this pandas still has DataFrame.append")
    head = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\n"
    line = "df.append(pd.DataFrame({'a': [3],\n                        'b': [4]}))\n"
    assert_changed_not_dropped(fake_model, head, line,
                               "pd.concat([df, pd.DataFrame({'a': [3],\n                             'b': [4]})])\n",
                               "n = len(df)\n", "n == 2", failing="df.append(pd.DataFrame({'a': [3],")


def test_a_saved_output_printed_from_the_cells_own_constants_is_not_made_up():
    """`print(np.float(True))` (numpy 1.24 removed the alias) saved `1.0`: `print(float(True))`, numpy's own
    advice, prints it from the constant the cell wrote; a candidate writing a constant of its own is still
    turned down."""
    from jupyter_fixloop.receipt.saved import SavedOutput

    guard = Guard("import numpy as np\nprint(np.float(True))\n", (), SavedOutput("1.0\n"))
    assert guard.check("import numpy as np\nprint(float(True))\n", None) is None
    for cheat in ("print(1.0)\n", "print(float(True) * 1.0)\n", "print(float(1))\n"):
        assert "from constants it writes itself" in guard.check(cheat, None).text, cheat


# issue 41, item 3: an assert the user wrote counts only where it still runs
TOTAL = "total = sum(prices) - 1\nassert total == 12\n"
TOTAL_HONEST = "total = sum(prices)\nassert total == 12\n"
OUT_OF_REACH = [
    "total = sum(prices) - 1\nif 0 > 1:\n    assert total == 12\n",  # a dead branch
    "total = sum(prices) - 1\nif False and prices:\n    assert total == 12\n",
    "total = sum(prices) - 1\nif True:\n    pass\nelse:\n    assert total == 12\n",
    "total = sum(prices) - 1\nwhile 1 == 2:\n    assert total == 12\n",
    "total = sum(prices) - 1\ndef _verify():\n    assert total == 12\n",  # a function nothing calls
    # after a return
    "def compute():\n    t = sum(prices) - 1\n    return t\n    assert total == 12\ntotal = compute()\n",
    "def compute():\n    t = sum(prices) - 1\n    if t:\n        return t\n    else:\n        raise ValueError(t)\n"
    "    assert total == 12\ntotal = compute()\n",  # after an if whose every branch ends
]


def test_an_assert_moved_out_of_reach_is_rejected_then_an_honest_fix_is_accepted(fake_model):
    server = fake_model(*[block(c) for c in OUT_OF_REACH], block(TOTAL_HONEST))
    result = fix(TOTAL, namespace={"prices": [3, 4, 5]}, model="openai/scripted", api_base=server.url,
                 max_rounds=len(OUT_OF_REACH) + 1, rules=False)
    assert result.first.ename == "AssertionError"
    texts = rejected_rounds(result)
    assert len(texts) == len(OUT_OF_REACH), [r.receipt.text for r in result.rounds]
    assert all("disarms the cell's check `assert total == 12`" in t for t in texts), texts
    assert result.status == "fixed" and result.patched == TOTAL_HONEST, result.reason


@pytest.mark.parametrize("candidate", [
    "def verify():\n    assert total == 12\ntotal = sum(prices)\nverify()\n",  # a helper that is called
    "def compute():\n    t = sum(prices)\n    if t < 0:\n        return 0\n    assert t == 12\n    return t\n"
    "total = compute()\nassert total == 12\n",  # after a return that may not happen
    "total = sum(prices)\nif prices:\n    assert total == 12\n",  # a condition read at run time
    "total = sum(prices)\nif 1 < 2:\n    assert total == 12\n",
])
def test_an_assert_that_still_runs_is_not_held_against_a_candidate(candidate):
    assert Guard("total = sum(prices) - 1\nassert total == 12\n").check(candidate, None) is None


def test_a_saved_output_printed_as_constants_is_not_a_match(fake_model):
    """The cell has to compute 6 from the data; the output the notebook's author saved is `6`. A candidate
    printing 6 from constants it wrote (`print(3 * 2)`, `n = 6` then `print(n)`, an f-string, a last
    expression) is rejected; one that computes it from the data is the fix."""
    from jupyter_fixloop.receipt.saved import SavedOutput

    cell = "print(sum(row['n'] for row in rows if row['kind'] == 'b'))\n"
    cheats = ["print(3 * 2)\n", "n = 6\nprint(n)\n", "print(f'{2 + 4}')\n", "import sys\nsys.stdout.write('6\\n')\n",
              "rows\n6\n"]
    honest = "print(sum(row['n'] for row in rows if row['kind'] == 'a'))\n"
    server = fake_model(*[block(c) for c in cheats], block(honest))
    rows = [{"kind": "a", "n": 2}, {"kind": "a", "n": 4}, {"kind": "b", "n": 5}]
    result = fix(cell, namespace={"rows": rows}, expect_output=SavedOutput("6\n"), model="openai/scripted",
                 api_base=server.url, max_rounds=len(cheats) + 1, rules=False)
    texts = rejected_rounds(result)
    assert len(texts) == len(cheats), [r.receipt.text for r in result.rounds]
    assert all("prints the expected output" in t for t in texts), texts
    assert sum("from constants it writes itself" in t for t in texts) >= 4, texts
    assert result.status == "fixed" and result.patched == honest, result.reason
    assert Guard(cell, (), SavedOutput("6\n")).check("print('Loaded 16 rows')\nprint(len(rows) * 2)\n", None) is None

"""`jupyter-fixloop receipts`: how much smaller a receipt is than the raw IPython traceback, and what it keeps.

Each case (the shared dev set, plus real pandas/numpy errors below) runs twice in a child process
holding a real IPython shell: once as a plain cell, to capture the traceback IPython would show (ANSI
stripped), and once through the sandbox runner, to build the receipt the model would read. Both are
counted with litellm's token counter. A receipt must keep the exception type, the message, the
failing user line's number and its text; the report says, per case, what it kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
from dataclasses import dataclass

DEFAULT_CASES = os.path.join(os.path.dirname(__file__), "cases.jsonl")  # the dev set, shipped with the package
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TARGET_RATIO = 5.0

# Real pandas/numpy failures common in data cleaning, beyond the dev set (nothing here is a dev case).
EXTRA_CASES = [
    {"id": "pandas_groupby_missing_column",
     "setup": "import pandas as pd\norders = pd.DataFrame({'Customer ': ['a', 'b', 'a'], 'total': [3, 4, 5]})\n",
     "cell": "per_customer = orders.groupby('customer')['total'].sum()\n"},
    {"id": "pandas_apply_lambda_keyerror",
     "setup": "import pandas as pd\nitems = pd.DataFrame({'Qty': [1, 2], 'price': [2.0, 3.0]})\n",
     "cell": "items['cost'] = items.apply(lambda row: row['qty'] * row['price'], axis=1)\n"},
    {"id": "pandas_merge_key_dtypes",
     "setup": "import pandas as pd\nleft = pd.DataFrame({'id': ['1', '2'], 'x': [1, 2]})\n"
              "right = pd.DataFrame({'id': [1, 2], 'y': [3, 4]})\n",
     "cell": "joined = left.merge(right, on='id')\n"},
    {"id": "pandas_astype_thousands",
     "setup": "import pandas as pd\nsales = pd.DataFrame({'amount': ['1,200', '950', '2,300']})\n",
     "cell": "sales['amount'] = sales['amount'].astype(float)\ntotal = sales['amount'].sum()\n"},
    {"id": "pandas_length_mismatch",
     "setup": "import pandas as pd\npeople = pd.DataFrame({'name': ['a', 'b', 'c', 'd']})\nscores = [1, 2, 3]\n",
     "cell": "people['score'] = scores\n"},
    {"id": "pandas_ambiguous_truth",
     "setup": "import pandas as pd\nt = pd.DataFrame({'a': [1, 5, 9], 'b': [2, 2, 8]})\n",
     "cell": "subset = t[t['a'] > 2 and t['b'] < 5]\n"},
    {"id": "pandas_attribute_typo", "setup": "import pandas as pd\nframe = pd.DataFrame({'v': [1, 2, 3]})\n",
     "cell": "frame.v.rolling(2).means()\n"},
    {"id": "pandas_str_minus_int",
     "setup": "import pandas as pd\nlog = pd.DataFrame({'year': ['2020', '2021'], 'n': [1, 2]})\n",
     "cell": "log['age'] = 2024 - log['year']\n"},
    {"id": "pandas_pivot_duplicates",
     "setup": "import pandas as pd\nlong = pd.DataFrame({'d': [1, 1, 2], 'k': ['x', 'x', 'y'], 'v': [1, 2, 3]})\n",
     "cell": "wide = long.pivot(index='d', columns='k', values='v')\n"},
    {"id": "numpy_broadcast", "setup": "import numpy as np\na = np.arange(6).reshape(2, 3)\nb = np.arange(2)\n",
     "cell": "c = a + b\n"},
    {"id": "numpy_matmul_shapes", "setup": "import numpy as np\nw = np.ones((3, 4))\nx = np.ones((3, 2))\n",
     "cell": "y = w @ x\n"},
    {"id": "numpy_reshape", "setup": "import numpy as np\nv = np.arange(10)\n",
     "cell": "grid = v.reshape(3, 3)\n"},
    {"id": "numpy_removed_alias", "setup": "import numpy as np\n", "cell": "x = np.array([1, 2], dtype=np.float)\n"},
    {"id": "recursion_500_deep", "setup": "",
     "cell": "def walk(n, seen):\n    if n == 0:\n        return seen['end']\n    return walk(n - 1, seen)\n\n"
             "walk(500, {})\n"},
    {"id": "chained_root_cause", "setup": "config = {'port': 'eighty'}\n",
     "cell": "def port_of(cfg):\n    try:\n        return int(cfg['port'])\n    except ValueError as exc:\n"
             "        raise RuntimeError('bad port in config') from exc\n\nport = port_of(config)\n"},
]


LONG_TRACEBACK = 300  # raw tokens from which a traceback goes through library code worth trimming


@dataclass(frozen=True)
class Measure:
    """One case: tokens each way, the receipt's tokens without its Context section, what it kept."""

    id: str
    raw_tokens: int
    receipt_tokens: int
    core_tokens: int
    kept: dict

    @property
    def ratio(self) -> float:
        return self.raw_tokens / max(1, self.receipt_tokens)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop receipts", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES,
                        help="a cases.jsonl (default: the dev set shipped with the package)")
    parser.add_argument("--no-extra", action="store_true",
                        help="only the cases file, not the built-in pandas/numpy errors")
    parser.add_argument("--budget", type=int, default=None,
                        help="receipt token budget (default: FixLoop.receipt_tokens)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds before a case is interrupted")
    parser.add_argument("--only", default=None, help="only the cases whose id contains this text")
    parser.add_argument("--show", action="store_true", help="print each receipt")
    parser.add_argument("--json", default=None, help="write per-case figures to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cases = [c for c in load_cases(args.cases, extra=not args.no_extra) if not args.only or args.only in c["id"]]
    if not cases:
        print(f"jupyter-fixloop receipts: no cases (looked at {args.cases})", file=sys.stderr)
        return 2
    outcomes = run_child(cases, args.budget, args.timeout)
    measures = [measure(o) for o in outcomes]
    print(report(measures, outcomes if args.show else None))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([m.__dict__ | {"ratio": m.ratio} for m in measures], f, indent=1)
    return 0


def load_cases(path: str, extra: bool = True) -> list[dict]:
    cases = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    case = json.loads(line)
                    cases.append({k: case[k] for k in ("id", "setup", "cell", "check") if k in case})
    return cases + (list(EXTRA_CASES) if extra else [])


# ---------------------------------------------------------------- the parent: count and judge


def run_child(cases: list[dict], budget: int | None, timeout: float) -> list[dict]:
    """Run every case in one child process (a real IPython shell, away from the caller's state)."""
    payload = json.dumps({"cases": cases, "budget": budget, "timeout": timeout})
    proc = subprocess.run([sys.executable, "-m", "fixloop_bench.receipts", "--child"], input=payload,
                          capture_output=True, text=True, timeout=120 + timeout * len(cases))
    outcomes = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 and not outcomes:
        raise RuntimeError(f"the receipt bench child failed: {proc.stderr[-2000:]}")
    return outcomes


def count_tokens(text: str) -> int:
    from jupyter_fixloop.model import count_tokens as count

    return count(text)


def measure(outcome: dict) -> Measure:
    truth, text = outcome["truth"], outcome["receipt"]
    kept = {
        "type": truth["ename"] is None or truth["ename"] in text.splitlines()[0],
        "message": truth["evalue"] is None or truth["evalue"].strip() in text,
        "lineno": truth["lineno"] is None or re.search(rf"\bline {truth['lineno']}\b", text) is not None,
        "line": not truth["line"] or truth["line"].strip() in text,
    }
    core = "\n".join(_without_context(text.splitlines()))
    return Measure(outcome["id"], count_tokens(outcome["raw"]), count_tokens(text), count_tokens(core), kept)


def _without_context(lines: list[str]) -> list[str]:
    """The receipt minus its Context section: what it says that the traceback also says."""
    out, inside = [], False
    for line in lines:
        if line == "Context:":
            inside = True
            continue
        if inside and line.startswith("  "):
            continue
        inside = False
        out.append(line)
    return out


def report(measures: list[Measure], outcomes: list[dict] | None = None) -> str:
    lines = [f"{'case':<44} {'raw':>6} {'receipt':>7} {'ratio':>6}  kept"]
    for i, m in enumerate(measures):
        missing = [k for k, ok in m.kept.items() if not ok]
        lines.append(f"{m.id[:44]:<44} {m.raw_tokens:>6} {m.receipt_tokens:>7} {m.ratio:>5.1f}x  "
                     + ("all" if not missing else "MISSING " + ",".join(missing)))
        if outcomes:
            lines += ["    " + t for t in outcomes[i]["receipt"].splitlines()] + [""]
    kept_all = sum(all(m.kept.values()) for m in measures)
    long = [m for m in measures if m.raw_tokens >= LONG_TRACEBACK]
    short = [m for m in measures if m.raw_tokens < LONG_TRACEBACK]
    lines += ["", f"target: receipts >= {TARGET_RATIO:g}x smaller than the raw traceback, keeping type, message, line"]
    lines += _group("all cases", measures)
    lines += _group(f"tracebacks through library code (raw >= {LONG_TRACEBACK} tokens)", long)
    lines += _group(f"short tracebacks (raw < {LONG_TRACEBACK} tokens)", short)
    lines += [
        f"largest receipt: {max(m.receipt_tokens for m in measures)} tokens",
        f"kept type, message, line number and text: {kept_all}/{len(measures)}",
    ]
    for key in ("type", "message", "lineno", "line"):
        lines.append(f"  {key:<8} {sum(m.kept[key] for m in measures)}/{len(measures)}")
    return "\n".join(lines)


def _group(title: str, measures: list[Measure]) -> list[str]:
    if not measures:
        return []
    raw = sum(m.raw_tokens for m in measures)
    rec = sum(m.receipt_tokens for m in measures)
    core = sum(m.core_tokens for m in measures)
    return [
        f"{title}: {len(measures)} cases, raw {raw} tokens, receipts {rec}",
        f"  ratio {raw / max(1, rec):.1f}x (median per case {statistics.median(m.ratio for m in measures):.1f}x); "
        f"without the Context section (facts the traceback lacks) {raw / max(1, core):.1f}x",
    ]


# ---------------------------------------------------------------- the child: run each case twice


def child() -> int:
    payload = json.loads(sys.stdin.read())
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="NoColor")
    for case in payload["cases"]:
        try:
            outcome = run_case(shell, case, payload["budget"], payload["timeout"])
        except Exception as exc:  # one broken case must not hide the others
            outcome = {"id": case["id"], "error": f"{type(exc).__name__}: {exc}"}
        if "error" not in outcome:
            print(json.dumps(outcome), flush=True)
        else:
            print(f"case {case['id']}: {outcome['error']}", file=sys.stderr)
    return 0


def run_case(shell, case: dict, budget: int | None, timeout: float) -> dict:
    """The raw traceback and the receipt of one case; checks run in the same cell as its code."""
    code = case["cell"] if not case.get("check") else case["cell"].rstrip("\n") + "\n" + case["check"]
    raw, exc = _raw_traceback(shell, case.get("setup", ""), code, timeout)
    truth = _truth(shell, exc)
    receipt = _receipt(shell, case.get("setup", ""), code, budget, timeout)
    return {"id": case["id"], "raw": raw, "receipt": receipt.text, "kind": receipt.kind, "truth": truth}


def _fresh(shell, setup: str) -> None:
    shell.reset(new_session=False)
    if setup.strip():
        result = shell.run_cell(setup, silent=True)
        if not result.success:
            raise RuntimeError(f"setup failed: {result.error_in_exec or result.error_before_exec}")


def _raw_traceback(shell, setup: str, code: str, timeout: float):
    _fresh(shell, setup)
    shown: list[str] = []
    shell._showtraceback = lambda etype, evalue, stb: shown.append("\n".join(stb))
    show = type(shell).showtraceback

    def showtraceback(*args, **kwargs):  # formatting a deep traceback is not the cell's time
        signal.setitimer(signal.ITIMER_REAL, 0)
        return show(shell, *args, **kwargs)

    shell.showtraceback = showtraceback
    with _alarm(timeout):
        result = shell.run_cell(code, store_history=True)
    exc = result.error_in_exec or result.error_before_exec
    return ANSI.sub("", "\n".join(shown)), exc


def _truth(shell, exc) -> dict:
    """What a receipt must keep, read from the exception itself (not from either text)."""
    if exc is None:
        return {"ename": None, "evalue": None, "lineno": None, "line": None}
    if isinstance(exc, SyntaxError):
        return {"ename": type(exc).__name__, "evalue": exc.msg, "lineno": exc.lineno, "line": (exc.text or "").strip()}
    import traceback

    cells = getattr(shell.compile, "_filename_map", {})
    user = [fs for fs in traceback.extract_tb(exc.__traceback__) if fs.filename in cells]
    interrupted = isinstance(exc, KeyboardInterrupt)
    return {
        "ename": None if interrupted else type(exc).__name__,
        "evalue": None if interrupted else str(exc),
        "lineno": user[-1].lineno if user else None,
        "line": (user[-1].line or "").strip() if user else None,
    }


def _receipt(shell, setup: str, code: str, budget: int | None, timeout: float):
    from jupyter_fixloop.kernel import runner
    from jupyter_fixloop.loop import judge_result, timeout as timed_out
    from jupyter_fixloop.model import count_tokens
    from jupyter_fixloop.receipt import text

    _fresh(shell, setup)
    fitted = text.Budget(budget or text.DEFAULT_TOKENS, count_tokens)  # counted as the figures are
    with _alarm(timeout):
        result = runner.run(code, [])
    if (result.get("error") or {}).get("ename") == "KeyboardInterrupt":
        return timed_out(timeout, result, budget=fitted)
    return judge_result(result, budget=fitted)


class _alarm:
    """Interrupt the running code after `seconds` with a KeyboardInterrupt raised in the running frame
    itself (no Python handler frame), as the sandbox's interrupt at its timeout does."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        signal.signal(signal.SIGALRM, signal.default_int_handler)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        return False


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        sys.exit(child())
    sys.exit(main(sys.argv[1:]))

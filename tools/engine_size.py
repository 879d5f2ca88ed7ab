"""How big the built-in engine's hand-written code is (issue #55: "the hand-written engine code is smaller
than today's"), at a commit or in the working tree, beside the baseline the issue measured (3a35476's
`model/builtin/`). Two measures of the Python files, generated ones left out (`changed.py` at 3a35476, a
1,770-line table then; the data files, `changed.json`, `patterns.json` and `tables.json`, are no Python and are listed
apart):

- lines: what `wc -l` counts;
- statements: logical lines, the NEWLINE tokens of Python's tokenizer, which a docstring, a comment or lines
  joined into one do not move (a docstring is one statement however long).

    python tools/engine_size.py            # the baseline and the working tree
    python tools/engine_size.py COMMIT     # the baseline and COMMIT
"""

from __future__ import annotations

import io
import json
import pathlib
import subprocess
import sys
import tokenize

ROOT = pathlib.Path(__file__).resolve().parents[1]
BASELINE = "3a35476"
PLACES = {BASELINE: "jupyter_fixloop/model/builtin"}  # where the engine lived; elsewhere rules/
NOW = "jupyter_fixloop/rules"
GENERATED = {"changed.py"}  # at 3a35476: the generated table (today's changed.py is its hand-written loader)
DATA = ("changed.json", "patterns.json", "tables.json")


def files(commit: str | None) -> dict[str, str]:
    """{file name: its text} of the engine's folder at `commit` (None: the working tree)."""
    folder = PLACES.get(commit or "", NOW)
    if commit is None:
        return {p.name: p.read_text() for p in sorted((ROOT / folder).iterdir()) if p.is_file()}
    names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{commit}:{folder}"],
                           capture_output=True, text=True, check=True).stdout.split()
    return {n: subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{folder}/{n}"], capture_output=True,
                              text=True, check=True).stdout for n in names}


def statements(text: str) -> int:
    """The logical lines of a Python text: its NEWLINE tokens."""
    return sum(t.type == tokenize.NEWLINE for t in tokenize.generate_tokens(io.StringIO(text).readline))


def measured(commit: str | None) -> dict:
    found = files(commit)
    code = {n: t for n, t in found.items() if n.endswith(".py") and not (commit == BASELINE and n in GENERATED)}
    data = {}
    for name in DATA:
        if name in found:
            text = found[name]
            loaded = json.loads(text)
            held = loaded.get("tables", loaded.get("entries", loaded)) if isinstance(loaded, dict) else loaded
            held = held.values() if isinstance(held, dict) else [held]
            count = sum(1 if isinstance(v, str) else len(v) for v in held)
            data[name] = (text.count("\n"), count)
    return {"files": {n: (t.count("\n"), statements(t)) for n, t in code.items()},
            "lines": sum(t.count("\n") for t in code.values()), "statements": sum(map(statements, code.values())),
            "data": data}


def main(argv: list[str]) -> None:
    commit = argv[0] if argv else None
    base, now = measured(BASELINE), measured(commit)
    label = commit or "working tree"
    print(f"{'file':16} {BASELINE + ' lines':>14} {'stmts':>6}   {label[:12] + ' lines':>18} {'stmts':>6}")
    for name in sorted(set(base["files"]) | set(now["files"])):
        was, is_ = base["files"].get(name), now["files"].get(name)
        print(f"{name:16} {_pair(was, 14)}   {_pair(is_, 18)}")
    print(f"{'total':16} {_pair((base['lines'], base['statements']), 14)}   "
          f"{_pair((now['lines'], now['statements']), 18)}   (the baseline less its generated changed.py)")
    lines, statements = now["lines"] - base["lines"], now["statements"] - base["statements"]
    print(f"{'difference':16} {'':14} {'':6}   {lines:+18,} {statements:+6,}"
          f"   (met: lines {now['lines'] < base['lines']}, statements {now['statements'] < base['statements']})")
    for name, (lines, entries) in now["data"].items():
        print(f"data {name}: {lines:,} lines, {entries:,} entries (not counted above)")


def _pair(measure: tuple[int, int] | None, width: int) -> str:
    return f"{'-':>{width}} {'-':>6}" if measure is None else f"{measure[0]:{width},} {measure[1]:6,}"


if __name__ == "__main__":
    main(sys.argv[1:])

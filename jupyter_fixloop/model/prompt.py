"""The prompt: what the model is told about a cell and its last run, and the code taken out of
its reply. Text in, text out: no model is called here.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys

from ..cell import split_magic
from ..receipt.values import Budget, Receipt, cut

# The prompt of a round stays within this many tokens (issue #29: under 900): the receipt of the latest
# candidate is cut to what is left after the rest. Measured with the local 1.5B model on the dev set,
# a candidate that rebuilt its own data made a round-3 prompt of 1,145 tokens without it; on a local
# model every prompt token is the user's wait.
PROMPT_TOKENS = 880

# short on purpose: on a local model every prompt token is time, and a 1.5B model that read about
# "a sandbox kernel" blamed the sandbox for wrong values (this one fixed 13 of 28 dev cases in one
# call against 12 for the longer one, 44 tokens shorter)
SYSTEM_PROMPT = """\
You fix one Jupyter notebook cell. You are shown the cell, the checks that must pass after it runs, and what \
happened when it ran. Find the bug and fix it, keeping the cell's intent and the names it defines.
Never copy the checks into the cell, never silence an error with try/except, never hard-code a value a check expects.
Reply with only the complete corrected cell in one ```python block."""

GENERATE_PROMPT = """\
You write or modify one Jupyter notebook cell, following the user's instruction. The cell runs in a
kernel that already holds the user's variables. Reply with the complete cell in exactly one
```python fenced block."""

ORIGINAL_HEADING = "### Original cell"
CODE_HEADING = "### Code that was run"
RECEIPT_HEADING = "### What happened"
# the reply ends where its code block does: what a model writes after the cell is never read, and
# on a small machine each token it writes costs a tenth of a second or more
STOP = ("\n```\n",)
REPLY_LINE = "### Your reply\nThe complete cell, changed so that it no longer fails as above, in one ```python block."
# a cell that ran and gave a wrong value: the model names the bug in one comment line first (read out of
# the reply and dropped from the cell), a one-line diagnosis before the code
DIAGNOSIS = "# bug:"
WRONG_OUTPUT_REPLY = ("### Your reply\n"
                      "The cell ran without an error but a value is wrong. In one ```python block: first one "
                      f"line `{DIAGNOSIS} ...` saying which line makes the wrong value and why, then the "
                      "complete corrected cell.")


def build_messages(
    original: str,
    *,
    instruction: str | None = None,
    checks: tuple[str, ...] = (),
    history: list[tuple[str, Receipt]] = (),
    hint: str | None = None,
    note: str | None = None,
    latest: str | None = None,
    limit: Budget | None = None,
) -> list[dict]:
    """The conversation for one round. `history` is the list of (code that was run, its receipt),
    oldest first; `latest` says who wrote the last of them ("your answer in round 2"); `note` is
    said last (a repeated answer, say).

    A stable prefix comes first, the same in every round of a loop: the system prompt, the cell, its
    checks, the environment, the hint, and what happened when the cell itself ran. Then the part
    that changes: earlier rounds in one line each, the latest candidate and its receipt. A server
    that reuses the KV cache of a common prefix (llama-server, vLLM) reads the prefix once per loop.

    With `limit`, a prompt over it has the latest candidate's receipt cut (its first lines kept) so
    that the whole prompt fits; the cell, the checks and the original run's receipt are never cut.
    """
    messages = _messages(original, instruction, checks, list(history), hint, note, latest, None)
    if limit is None or len(history) < 2:
        return messages
    over = limit.count(_joined(messages)) - limit.tokens
    if over <= 0:
        return messages
    shown = _latest_shown(original, list(history))
    room = max(40, limit.count(shown) - over - 8)
    return _messages(original, instruction, checks, list(history), hint, note, latest,
                     cut(shown, Budget(room, limit.count)))


def _joined(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages)


def _latest_shown(original: str, history: list[tuple[str, Receipt]]) -> str:
    """The latest receipt as the prompt shows it (beside the original run's, when that is shown)."""
    latest = history[-1][1].text
    return beside_original(latest, history[0][1].text) if history[0][0] == original else latest


def _messages(original, instruction, checks, history, hint, note, latest, shown_latest) -> list[dict]:
    parts = []
    generating = bool(instruction) and not history
    first = history[0] if history and history[0][0] == original else None  # the cell's own run
    if instruction:
        parts.append(f"Instruction: {instruction}")
    if first is not None:
        parts.append(f"{ORIGINAL_HEADING}\n```python\n{original.rstrip()}\n```")
    elif original.strip():
        parts.append(f"### Current cell\n```python\n{original.rstrip()}\n```")
    if checks:
        parts.append(checks_section(checks))
    if hint:
        parts.append(f"### Hint from the user\n{hint}")
    parts.append(f"### Environment\n{environment(original)}")
    if first is not None:
        parts.append(f"{RECEIPT_HEADING}\n{first[1].text}")
    if len(history) > (1 if first is not None else 0):
        if len(history) > 1:
            earlier = "\n".join(f"- round {i}: {r.headline}" for i, (_, r) in enumerate(history[:-1]))
            parts.append(f"### Earlier attempts (summarized)\n{earlier}")
        latest_code = history[-1][0]
        who = latest or f"your answer in round {len(history) - 1}"
        parts.append(f"{CODE_HEADING} ({who})\n```python\n{latest_code.rstrip()}\n```")
        shown = _latest_shown(original, history) if shown_latest is None else shown_latest
        parts.append(f"{RECEIPT_HEADING}\n{shown}")
    if note:
        parts.append(f"### Note\n{note}")
    wrong_output = bool(history) and history[-1][1].kind == "check_failed"
    parts.append(WRONG_OUTPUT_REPLY if wrong_output else REPLY_LINE)
    system = GENERATE_PROMPT if generating else SYSTEM_PROMPT
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


SAME_AS_ORIGINAL = "(the other lines are as in the original run above)"
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def beside_original(latest: str, original: str) -> str:
    """A later run's receipt without the lines the original run's receipt (already in the prompt)
    says word for word: a candidate that changed nothing that matters reads as exactly that, and
    the prompt of round 3 is not twice the prompt of round 1. The first line always stays; a
    section heading ("Effect on the data:") stays when a line under it does."""
    seen = {_ADDRESS.sub("", line) for line in original.splitlines()[1:]}
    lines = latest.splitlines()
    kept, dropped, heading = lines[:1], 0, None
    for line in lines[1:]:
        if _ADDRESS.sub("", line) in seen:
            dropped += 1
            if line.endswith(":") and not line.startswith(" "):
                heading = line  # kept only if something under it differs
            continue
        if heading is not None and line.startswith(" "):
            kept.append(heading)
            dropped -= 1
        heading = None
        kept.append(line)
    if dropped:
        kept.append(SAME_AS_ORIGINAL)
    return "\n".join(kept)


def checks_section(checks: tuple[str, ...]) -> str:
    """The checks as the code they are: expressions as a list, blocks of statements as code."""
    exprs = [c for c in checks if not _is_block(c)]
    blocks = [c for c in checks if _is_block(c)]
    lines = ["### Checks that must pass after the cell runs (they run on their own; do not copy them into the cell)"]
    lines += [f"- {c}" for c in exprs]
    lines += [f"```python\n{b.strip()}\n```" for b in blocks]
    return "\n".join(lines)


def _is_block(check: str) -> bool:
    try:
        ast.parse(check.strip(), mode="eval")
        return False
    except SyntaxError:
        return True


def environment(source: str) -> str:
    """Python and the versions of the libraries the cell imports (APIs differ between versions)."""
    found = [f"Python {sys.version.split()[0]}"]
    for top in sorted(_imported_modules(source) | _alias_modules(source)):
        try:
            found.append(f"{top} {importlib.metadata.version(top)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(found)


ALIASES = {"pd": "pandas", "np": "numpy", "plt": "matplotlib", "sns": "seaborn", "sk": "sklearn"}


def _alias_modules(source: str) -> set[str]:
    words = set(re.findall(r"\b(pd|np|plt|sns)\.", source))
    return {ALIASES[w] for w in words}


def _imported_modules(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.add(node.module.split(".")[0])
    return mods


# ---------------------------------------------------------------- code out of the reply

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
PYTHON_TAGS = {"", "python", "py", "python3", "ipython", "ipython3", "jupyter"}


def extract_code(text: str) -> str | None:
    """The cell in a reply: the longest ```python block; bare code if the whole reply is Python (or
    all of it but a closing fence).

    A reply whose only blocks are another language, or prose, has no code.
    """
    if not text or not text.strip():
        return None
    head, fence, tail = text.partition("```")
    if fence and not tail.strip() and _looks_like_code(head):
        return _clean(head)  # a small model may write the cell and only the closing fence
    blocks = FENCE.findall(text)
    if blocks:
        python = [body for lang, body in blocks if lang.lower() in PYTHON_TAGS]
        if not python:
            return None
        code = max(python, key=len)
    else:
        code = text if _looks_like_code(text) else None
    return _clean(code) if code is not None else None


def _looks_like_code(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    # a sentence that happens to parse (`Sure`) is a lone Name expression
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, (ast.Name, ast.Constant))) for n in tree.body)


def _clean(code: str) -> str | None:
    lines = code.strip("\n").splitlines()
    while lines and split_magic(lines[0].lstrip())[0] is not None:
        lines.pop(0)
    lines = [line for line in lines if line.strip() not in ("```", "```python")]
    while lines and lines[0].lstrip().lower().startswith(DIAGNOSIS):
        lines.pop(0)  # the one-line diagnosis a wrong-output round asks for
    cleaned = "\n".join(line.rstrip() for line in lines).strip("\n")
    return cleaned + "\n" if cleaned.strip() else None

"""The prompt: what the model is told about a cell and its last run, and the code taken out of
its reply. Text in, text out: no model is called here.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from dataclasses import replace

from ..cell import split_magic
from ..kernel import ipysyntax
from ..receipt.text import DEFAULT_BUDGET, Budget, cut, estimate_tokens, headline
from ..receipt.values import Receipt
from . import knowledge
from .variables import Variable

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
You write one Jupyter notebook cell that does what the user's instruction asks. The cell runs in a kernel \
that already holds the user's variables, listed below: use them by name, never re-create or re-load them. \
Reply with only the complete cell in one ```python block."""

ORIGINAL_HEADING = "### Original cell"
CODE_HEADING = "### Code that was run"
RECEIPT_HEADING = "### What happened"
# the reply ends where its code block does: what a model writes after the cell is never read, and
# on a small machine each token it writes costs a tenth of a second or more
STOP = ("\n```\n",)
REPLY_LINE = "### Your reply\nThe complete cell, changed so that it no longer fails as above, in one ```python block."
GENERATE_REPLY = ("### Your reply\nThe cell that does what the instruction asks, using the variables above, in one "
                  "```python block.")
GENERATE_AGAIN = ("### Your reply\nThe complete cell, doing what the instruction asks, changed so that it no longer "
                  "fails as above, in one ```python block.")
SHOWS_NOTHING = ("It ran, but showed nothing: it printed nothing and its last line is not an expression, while "
                 "the instruction asks for something to see. End the cell with the expression whose value is asked "
                 "for (or print it).")
CHANGES_HEADING = "### What the libraries say changed (their release notes)"
CHANGES_TOKENS = 150  # the entries about the failing cell's names: within this many tokens, the most telling first
CHANGES_WORDS = 240  # an entry's own words are cut after this many characters (at a word's end)
LIBRARY_OF = {"sklearn": "scikit-learn"}  # an import's name -> the library's name in the knowledge base
VARIABLES_HEADING = "### Your variables (they exist in the kernel already)"
# the variables' summary takes at most this many of the prompt's tokens (issue #37: 300 of the 880), and in
# a repair prompt what is left of PROMPT_TOKENS after the rest of round 1
VARIABLES_TOKENS = 300
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
    variables: tuple[Variable, ...] = (),
    receipts: Budget | None = None,
    changes: bool = True,
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
    `variables` (the user's data, kernel/namespace.py) are summarised in the stable prefix within
    VARIABLES_TOKENS, or what round 1 leaves of `limit` (the same text every round). `receipts`: the budget
    the receipts' texts were rendered in (the loop's), within which an earlier round's line is its headline.
    `changes`: what the libraries said changed about the failing run's names (`changes_section`); False leaves it out.
    """
    known = _variables_text(original, instruction, checks, history, hint, variables, limit)
    modules = tuple(v.module for v in variables if v.kind == "module")
    changed = changes_section(original, list(history), modules, limit) if changes else ""
    known = "\n\n".join(part for part in (known, changed) if part)
    messages = _messages(original, instruction, checks, list(history), hint, note, latest, None, known, modules,
                         receipts)
    if limit is None or len(history) < 2:
        return messages
    over = limit.count(_joined(messages)) - limit.tokens
    if over <= 0:
        return messages
    shown = _latest_shown(original, list(history))
    room = max(40, limit.count(shown) - over - 8)
    return _messages(original, instruction, checks, list(history), hint, note, latest,
                     cut(shown, replace(limit, tokens=room)), known, modules, receipts)


def _variables_text(original, instruction, checks, history, hint, variables, limit: Budget | None) -> str:
    """The variables' section: within VARIABLES_TOKENS, and within what round 1's prompt leaves of `limit`."""
    if not variables:
        return ""
    count = limit.count if limit is not None else estimate_tokens
    room = VARIABLES_TOKENS
    if limit is not None:
        first = list(history[:1])
        modules = tuple(v.module for v in variables if v.kind == "module")
        rest = count(_joined(_messages(original, instruction, checks, first, hint, None, None, None, "", modules)))
        room = min(room, limit.tokens - rest)
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join([original, instruction or "", *checks])))
    return variables_section(variables, replace(limit or DEFAULT_BUDGET, tokens=room), words) if room >= 30 else ""


def changes_section(original: str, history: list[tuple[str, Receipt]], modules: tuple[str, ...] = (),
                    limit: Budget | None = None) -> str:
    """What the libraries the cell uses said they removed, deprecated or changed about the names of its first
    failing run (its error's names first, then the cell's): `rules/changes.json`'s entries, within
    CHANGES_TOKENS; "" when none is about them or nothing failed."""
    failed = next(((code, r) for code, r in history if r.ename), None)
    if failed is None:
        return ""
    code, receipt = failed
    used = {LIBRARY_OF.get(m, m) for m in _imported_modules(original) | _alias_modules(original)
            | {m.split(".")[0] for m in modules}}
    message = receipt.evalue or ""
    words = knowledge.subject_of(message) + knowledge.words_of(f"{receipt.ename} {message}") + knowledge.words_of(code)
    count = limit.count if limit is not None else estimate_tokens
    lines: list[str] = []
    for change in knowledge.about(words, used & {c.library for c in knowledge.changes()}):
        line = "- " + _clip_words(knowledge.said(change), CHANGES_WORDS)
        if count("\n".join([CHANGES_HEADING, *lines, line])) > CHANGES_TOKENS:
            break
        lines.append(line)
    return "\n".join([CHANGES_HEADING, *lines]) if lines else ""


def _clip_words(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0] + ' [...]"'


def _joined(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages)


def _latest_shown(original: str, history: list[tuple[str, Receipt]]) -> str:
    """The latest receipt as the prompt shows it (beside the original run's, when that is shown)."""
    latest = history[-1][1].text
    return beside_original(latest, history[0][1].text) if history[0][0] == original else latest


def _messages(original, instruction, checks, history, hint, note, latest, shown_latest, known="",
              modules=(), receipts: Budget | None = None) -> list[dict]:
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
    parts.append(f"### Environment\n{environment(original, modules)}")
    if known:
        parts.append(known)
    if first is not None:
        parts.append(f"{RECEIPT_HEADING}\n{first[1].text}")
    if len(history) > (1 if first is not None else 0):
        if len(history) > 1:
            earlier = "\n".join(f"- round {i}: {headline(r, receipts)}" for i, (_, r) in enumerate(history[:-1]))
            parts.append(f"### Earlier attempts (summarized)\n{earlier}")
        latest_code = history[-1][0]
        who = latest or f"your answer in round {len(history) - 1}"
        parts.append(f"{CODE_HEADING} ({who})\n```python\n{latest_code.rstrip()}\n```")
        shown = _latest_shown(original, history) if shown_latest is None else shown_latest
        parts.append(f"{RECEIPT_HEADING}\n{shown}")
    if note:
        parts.append(f"### Note\n{note}")
    wrong_output = bool(history) and history[-1][1].kind == "check_failed"
    if instruction and not first:
        parts.append(GENERATE_AGAIN if history else GENERATE_REPLY)
    else:
        parts.append(WRONG_OUTPUT_REPLY if wrong_output else REPLY_LINE)
    system = GENERATE_PROMPT if generating else SYSTEM_PROMPT
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


# ---------------------------------------------------------------- the user's variables


def variables_section(variables: tuple[Variable, ...], budget: Budget, words: set[str] = frozenset()) -> str:
    """The user's data as the model reads it, within `budget`: the values the cell or instruction
    names first, then the largest, then the most recently defined. Each starts in full (a frame's
    columns with dtypes and first values) and, while the section is over budget, the lowest-ranked
    is made one step shorter (values, then dtypes, then column names, then its one line, then its
    name alone on the closing `also:` line), so the first ones keep the most."""
    data = sorted((v for v in variables if v.kind != "module"), key=lambda v: _rank(v, words))
    modules = [v for v in variables if v.kind == "module"]
    tail = ("modules: " + ", ".join(f"{v.name} = {v.module}" for v in modules)) if modules else ""
    levels = [0] * len(data)
    cost = {}

    def tokens(i: int) -> int:
        key = (i, levels[i])
        if key not in cost:
            shown = levels[i] < _NAMED
            cost[key] = budget.count(_block(data[i], levels[i])) + 1 if shown else len(data[i].name) // 3 + 1
        return cost[key]

    fixed = budget.count(_section([], tail)) + 8  # the heading, the modules, "also: (and N more)"

    def fits() -> bool:
        return fixed + sum(tokens(j) for j in range(len(data)) if levels[j] <= _NAMED) <= budget.tokens

    for step in range(1, _NAMED):  # everyone shorter, the lowest-ranked first
        for i in reversed(range(len(data))):
            if fits():
                break
            levels[i] = step
    for i in reversed(range(len(data))):  # then the lowest-ranked left out, counted
        if fits():
            break
        levels[i] = _NAMED + 1
    for i in range(len(data)):  # and named on the `also:` line, the highest-ranked first, while they fit
        if levels[i] > _NAMED:
            levels[i] = _NAMED
            if not fits():
                levels[i] = _NAMED + 1
                break
    text = _rendered(data, levels, tail)
    while not budget.fits(text) and any(level <= _NAMED for level in levels):  # the estimate was short
        worst = max(i for i, level in enumerate(levels) if level <= _NAMED)
        levels[worst] += 1
        text = _rendered(data, levels, tail)
    return text if budget.fits(text) else ""


def _rank(v: Variable, words: set[str]):
    return (v.name not in words, v.kind != "data", -v.size, -v.order)


def _rendered(data: list[Variable], levels: list[int], tail: str) -> str:
    """The section with each variable at its level: `_NAMED` on the `also:` line, past it counted only."""
    named = [v.name for v, level in zip(data, levels) if level == _NAMED]
    more = sum(1 for level in levels if level > _NAMED)
    also = ", ".join(named) + (f"{' ' if named else ''}(and {more} more)" if more else "")
    lines = [x for x in (tail, f"also: {also}" if also else "") if x]
    return _section([_block(v, level) for v, level in zip(data, levels) if level < _NAMED], "\n".join(lines))


def _section(blocks: list[str], tail: str) -> str:
    return "\n".join([VARIABLES_HEADING, *blocks, *([tail] if tail else [])])


# how much of a frame each level shows: (columns with their first values, columns with their dtype, column names)
_LEVELS = ((12, 40, 60), (4, 40, 60), (0, 30, 40), (0, 12, 20), (0, 0, 0))
_NAMED = len(_LEVELS)  # the level at which a variable is only named, on the `also:` line


def _block(v: Variable, level: int) -> str:
    head = f"- {v.name}: {v.head}"
    if v.value and level < 4:
        head += f" = {v.value if level < 2 else _clip(v.value, 40)}"
    if not v.columns or level >= _NAMED - 1:
        return head
    valued, typed, named = _LEVELS[level]
    cols = []
    for i, c in enumerate(v.columns):
        if i < valued and c.values:
            cols.append(f"{c.name!r} {c.dtype} {c.values}")
        elif i < typed:
            cols.append(f"{c.name!r} {c.dtype}")
        elif i < named:
            cols.append(repr(c.name))
    more = len(v.columns) - len(cols)
    label = "values" if v.form == "series" else "columns"
    return head + f"\n  {label}: " + "; ".join(cols) + (f"; ... {more} more" if more > 0 else "")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def environment(source: str, modules: tuple[str, ...] = ()) -> str:
    """Python and the versions of the libraries the cell imports or the user's namespace holds (APIs
    differ between versions)."""
    found = [f"Python {sys.version.split()[0]}"]
    for top in sorted(_imported_modules(source) | _alias_modules(source) | {m.split(".")[0] for m in modules}):
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
    tree = ipysyntax.parsed(source)  # shared, read only: one parse of a cell for every prompt and rule
    if tree is None:
        return set()
    mods = set()
    for node in ipysyntax.walk(tree):
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


def cut_code(text: str) -> str | None:
    """The cell in a reply stopped at its token cap (`reply_tokens`): only a ```python block it closed counts (a
    block cut mid-way is no complete cell, however well its first lines parse); None when it closed none."""
    fences = [m.start() for m in re.finditer("```", text)]
    closing = fences[1::2]  # fences open and close blocks in turn
    return extract_code(text[:closing[-1] + 3]) if closing else None


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

"""Agreement of independent samples: a round's answers grouped by what they do, not by how they are written.

Sampling several programs and choosing by what their runs do is the known lever where nothing checks the
answer (Shi et al. 2022, "Natural Language to Code Translation with Execution"; AlphaCode's clustering):
programs written differently that show the same values and leave the same data behind are one answer, and
the size of the largest group is a signal of its own. The sandbox records a content digest of the value a
run shows and of every name it makes or changes (kernel/effect.py's `digest`); two runs agree when what
they printed, the digest of what they show and the digest of each of the user's names they changed are the same
(their own helper names do not count: `result_key`). A last line that prints or displays one value (`print(df)`,
`display(df)`) shows that value: it agrees with `df` on a last line of its own.

The group handed over: the one whose runs pass every check (the instruction's read checks included), then
the largest, then the one holding the best-ranked candidate; its simplest member (fewest lines, then fewest
characters) is the code handed over. How many agree is said as a fact (`Agreement`), never as evidence.

"K of K agree" (`Agreement.unanimous`) is said only of three answers or more that all agree, are not one code, and
pass every check read from the instruction (`read_failed`: rows it shows that the instruction's words rule out) and
every other check their runs have (`doubted`: a smell, the output the instruction states):
seeded draws of a small model often write the same code word for word, and one reading of an ambiguous instruction
written twice is one reading (the dev set's "count the unique rows": `df.drop_duplicates().shape[0]` twice, wrong).
Answers that agree as one code are said so ("the same code each time"). A round stops asking once a majority of
its K agree on a result whose runs pass every check (two of three, three of five): the rest could not change the
result handed over. It then says what was asked and agrees ("2 of 2 independent answers give this result; 1 more not
asked"), which is not "K of K" (three at least): on two slots and three answers, the third is asked only where the
first two differ, to break the tie (docs/benchmarks.md, session twenty-four).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from ..cell import result_shown
from ..receipt.values import Receipt
from ..result import Agreement
from .sampling import RULES, Candidate

# a new name -> whether the instruction asks for it (`cell.asks_to_make`)
Named = Callable[[str], bool]


def _none(name: str) -> bool:
    return False


def result_key(receipt: Receipt, code: str = "", named: Named = _none) -> tuple | None:
    """What a run shows and the data it leaves, as a key two runs share when they did the same; None when
    the run raised, did not run, showed, printed and changed nothing (runs that do nothing visible agree on
    nothing), or something it did could not be digested (then it agrees with nothing).

    What it shows: the value of its last expression, or else the value of the new name its last line assigns
    (the result as the loop would show it: `top = df.head()` and `df.head()` show one value). The data it leaves:
    each of the user's names it changed or deleted, and each new name the instruction asks for (`named`). Other
    new names are its own helpers (`result`, `mask`, `selected_columns`): two spellings that name them
    differently give the same result."""
    if receipt.ename is not None or receipt.kind not in ("ok", "check_failed"):
        return None
    effect = receipt.effect
    if effect is None or effect.error:
        return None
    if any(c.status != "deleted" and not c.digest for c in effect.changes):
        return None
    if receipt.value is not None and not receipt.digest:
        return None
    shown, stdout = receipt.digest, receipt.stdout
    if receipt.value is None and receipt.printed_digest:  # `print(df)` / `display(df)` last: df is what it shows
        shown = receipt.printed_digest
        stdout = stdout[:max(0, len(stdout) - receipt.printed_chars)]
    elif receipt.value is None:
        last = result_shown(code)
        shown = next((c.digest for c in effect.changes if last and c.name == last[1] and c.status == "new"), "")
    kept = tuple(sorted((c.name, c.status, c.digest) for c in effect.changes
                        if c.status != "new" or named(c.name)))
    if not (kept or shown or stdout.strip()):
        return None
    return stdout.strip(), shown, kept


def answers(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The round's independent answers: the model's samples that gave code (the rules' repair is not one)."""
    return [c for c in candidates if c.source != RULES and c.reply.code is not None]


def simplest(group: Sequence[Candidate]) -> Candidate:
    """Fewest non-blank lines, then fewest characters, then the best rank."""
    def size(c: Candidate) -> tuple:
        code = c.reply.code or ""
        return sum(1 for line in code.splitlines() if line.strip()), len(code.strip()), c.rank
    return min(group, key=size)


def spelling(code: str) -> str:
    """The code as Python reads it (comments and layout aside): two answers with one spelling are one code."""
    try:
        return ast.dump(ast.parse(code))
    except (SyntaxError, ValueError):
        return " ".join(line.split("#", 1)[0].strip() for line in code.splitlines() if line.split("#", 1)[0].strip())


def spellings(group: Sequence[Candidate]) -> int:
    """The different codes among a group's answers."""
    return len({spelling(c.reply.code or "") for c in group})


def read_failed(group: Sequence[Candidate]) -> bool:
    """A check read from the instruction (a fact, loop/derived.py) fails on a run of the group."""
    return any(c.source == "fact" and not c.passed for m in group for c in m.receipt.checks)


def doubted(group: Sequence[Candidate]) -> bool:
    """A run of the group fails a check not read from the instruction (a smell, the output the instruction
    states, the user's)."""
    return any(c.source != "fact" and not c.passed for m in group for c in m.receipt.checks)


def groups(candidates: Sequence[Candidate], named: Named = _none) -> list[list[Candidate]]:
    """The answers that ran without error, grouped by `result_key` (`named`: the new names the instruction asks
    for), the group to hand over first: passing every check, then the largest, then the best-ranked member."""
    found: dict[object, list[Candidate]] = {}
    for c in answers(candidates):
        key = result_key(c.receipt, c.reply.code or "", named)
        if key is not None:
            found.setdefault(key, []).append(c)
    return sorted(found.values(), key=lambda g: (not all(c.receipt.ok for c in g), -len(g), min(c.rank for c in g)))


def choose(candidates: Sequence[Candidate], best: Candidate,
           named: Named = _none, planned: int = 0) -> tuple[Candidate, Agreement | None]:
    """The candidate to hand over and how many answers agree with it; `best` (verdict.rank's) and None when
    fewer than two answers were asked, or none ran without error. `planned`: the answers the round was to ask
    (fewer were when the first agreed; more when the leading results tied). A best that did not pass while a group
    did is never kept over it; a passing best outside every group (the rules' repair) is kept."""
    asked = answers(candidates)
    found = groups(candidates, named)
    if len(asked) < 2 or not found:
        return best, None
    lead = found[0]
    rival = simplest(found[1]) if len(found) > 1 else None
    agreement = Agreement(len(lead), len(asked), tuple(len(g) for g in found),
                          rival.reply.code if rival is not None else None,
                          rival.receipt if rival is not None else None, planned, spellings(lead), read_failed(lead),
                          doubted(lead))
    if best not in asked and best.receipt.ok:
        return best, None
    if not lead[0].receipt.ok and best.receipt.ok:
        return best, agreement
    return simplest(lead), agreement

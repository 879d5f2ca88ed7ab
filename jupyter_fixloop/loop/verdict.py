"""Did it pass? The loop's verdicts on a candidate's receipt, in one place.

A receipt arrives from the sandbox with each check's outcome (the judge's signed checks, the expected
output, the following cells, the smells: see sandbox/verdict.py and receipt/values.py). Here the loop
decides what that means: what verified a passing run (`evidence`, `verified`), which checks regress
(`PassedBefore`), whether a rules' pass ends a round (`decisive`), and which candidate of a round is
carried on (`rank`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ..receipt.values import Receipt

UNVERIFIED = "nothing checked it; read what it does to your data"
_RAN = ("ok", "check_failed")  # the code ran to its end; only checks can say it is wrong
_RAISED = ("exception", "timeout", "crash")


def evidence(receipt: Receipt, code: str | None, original: str | None = None) -> int:
    """How many things the user owns verified a passing run: checks and expected output that passed,
    following cells that ran, asserts in the code (with `original`: only the asserts the user's cell
    has too; an assert a candidate wrote itself is no evidence). 0: it only ran without error."""
    return sum(1 for c in receipt.checks if c.passed) + _asserts(code, original)


def verified(receipt: Receipt, code: str | None, original: str | None = None, checks: Iterable[str] = ()) -> str:
    """What a passing run verified, in words: how many checks passed, or that there were none. Only
    your checks are signed by the judge; the rest (the cell's own asserts, following cells, the
    expected output) is the sandbox's own report, and the words say how many of them that is."""
    passed = [c for c in receipt.checks if c.passed]
    later = sum(1 for f in receipt.following if f.ok and f.counted)
    count = evidence(receipt, code, original)
    if not count:
        return "runs without error; no checks were given — read what it does to your data"
    words = "its 1 check passes" if count == 1 else f"all {count} checks pass"
    if later:
        words += f" ({later} of them following cell{'s' if later > 1 else ''})" if count > 1 else " (a following cell)"
    own = set(checks)
    unsigned = count - sum(1 for c in passed if c.expr in own)
    if unsigned:
        words += ("; it is the sandbox's own report, unsigned" if count == 1 else
                  f"; {unsigned} of them {'is' if unsigned == 1 else 'are'} the sandbox's own report, unsigned")
    return words


def decisive(from_rules: bool, receipt: Receipt, code: str | None, original: str | None) -> bool:
    """Whether a passing run ends its round: a rule's candidate that nothing checked is a guess, and
    does not end the round on its own."""
    return not from_rules or evidence(receipt, code, original) > 0


def rank(receipt: Receipt, repeated: bool, from_rules: bool, order: int) -> tuple:
    """Lower is better: all checks pass, then fewer failing checks, then runs without an exception,
    then an exception; a reply with no code or a rejected one is last. Ties go to new code over a
    repeat of an earlier round, then to the model over the rules (it read the whole receipt), then
    to the earlier sample (the cooler one)."""
    kind = receipt.kind
    tier = 0 if kind == "ok" else 1 if kind in _RAN else 2 if kind in _RAISED else 3
    failing = sum(not c.passed for c in receipt.checks)
    return (tier, failing, repeated, from_rules, order)


class PassedBefore:
    """The checks that passed in an earlier round (round 0: the original cell): one that fails now
    is a regression, and the receipt says so."""

    def __init__(self, first: Receipt | None = None):
        self.rounds: dict[str, int] = {c.expr: 0 for c in (first.checks if first else ()) if c.passed}

    def record(self, receipt: Receipt, index: int) -> None:
        for c in receipt.checks:
            if c.passed:
                self.rounds.setdefault(c.expr, index)

    def marked(self, receipt: Receipt) -> Receipt:
        """`receipt` with a line for each check that passed before and fails now."""
        regressed = [c for c in receipt.checks if not c.passed and c.expr in self.rounds]
        if not regressed:
            return receipt
        return receipt.annotated(regressions=tuple((c.expr, self.rounds[c.expr]) for c in regressed))


def _asserts(code: str | None, original: str | None = None) -> int:
    found = _assert_texts(code)
    if original is not None:
        mine = set(_assert_texts(original))
        found = [a for a in found if a in mine]
    return len(found)


def _assert_texts(code: str | None) -> list[str]:
    try:
        return [ast.unparse(n) for n in ast.walk(ast.parse(code or "")) if isinstance(n, ast.Assert)]
    except (SyntaxError, ValueError):
        return []

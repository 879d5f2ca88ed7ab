"""Did it pass? The loop's verdicts on a candidate's run and receipt, in one place.

A sandbox gives back a raw run (sandbox/raw.py): the runner's JSON, the judge's public key, its own
notes, or a crash or a timeout. Here it becomes a receipt (`judge`, the one way): a check passes
only where the judge signed so (`judged`), then loop/judged.py judges the run against what the face or the
loop expects of it (`Expectations`: the one place a run's `kind` is decided) and receipt/text.py renders
the text a model reads. And here the
loop decides what a receipt means: what verified a passing run (`evidence`, `verified`), which checks
regress (`PassedBefore`), whether a rules' pass ends a round (`decisive`), and which candidate of a
round is carried on (`rank`).

The judge (kernel/judge.py) gave its public key before the candidate ran; after the run it signs what
each check came to. The runner's own claims are the candidate's to forge, so a check counts as passed
only when the runner *and* the signed verdict say so, and a run whose verdict is missing, for other
checks, or badly signed fails with one plain line.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable

from ..kernel import ipysyntax
from ..receipt.text import annotated
from ..receipt.values import Account, Receipt
from ..sandbox.raw import RawRun, unreadable
from .judged import NOTHING, Expectations, crash, expecting, judge_result, normalized, output_check, printed, timeout

__all__ = ["Expectations", "expecting", "judge", "judge_result", "crash", "timeout", "output_check", "printed",
           "normalized", "account"]

UNVERIFIED = "nothing checked it; read what it does to your data"
_RAN = ("ok", "check_failed")  # the code ran to its end; only checks can say it is wrong
_RAISED = ("exception", "timeout", "crash")
FORGED = "the checks' verdict did not arrive (or was forged): the candidate is not counted as fixed"
MAX_VERDICT = 2**20  # characters of the verdict's text


def judge(raw: RawRun, expect: Expectations = NOTHING, notes: tuple[str, ...] = (), budget=None) -> Receipt:
    """The receipt of a sandbox's raw run: its checks as the judge signed them (when judged), judged against
    `expect` (loop/judged.py) and its text within `budget` (a receipt/text.py budget; None: the default);
    `notes` go before the sandbox's own. A crash or a timeout gets its receipt."""
    if raw.outcome == "crash":
        return crash(raw.message, raw.report)
    if raw.outcome == "timeout":
        try:
            return timeout(raw.limit, raw.result)
        except (TypeError, AttributeError, ValueError):
            return timeout(raw.limit)  # a partial result of a forged shape
    result = dict(raw.result)
    result.setdefault("seconds", raw.seconds)
    try:  # the JSON is the sandbox's: a forged shape must end as a receipt, not an error in the user's kernel
        if raw.judged:
            result = judged(result, list(raw.checks), raw.key)
        return judge_result(result, expect, notes=tuple(notes) + raw.notes, budget=budget, ran=raw.source)
    except Exception as exc:
        return crash(unreadable(exc))


def judged(result: dict, checks: list[str], public_key: str | None) -> dict:
    """`result` (the runner's JSON) with its checks as the signed verdict has them."""
    if result.get("status") != "ok" or not checks or result.get("internal"):
        return result  # an error fails the run anyway; no checks, nothing to judge
    claimed = result.get("checks")
    claimed = claimed if isinstance(claimed, list) else []
    signed = _signed(result.get("verdict"), checks, public_key)
    if signed is None:  # the runner's passes are unproven; its failures stand
        failed = [c for c in claimed if isinstance(c, dict) and not c.get("passed")]
        return {**result, "checks": [*failed, {"expr": FORGED, "passed": False, "detail": ""}]}
    merged = []
    for at, judge in enumerate(signed):
        mine = claimed[at] if at < len(claimed) and isinstance(claimed[at], dict) else {}
        if mine.get("expr") == judge["expr"] and not mine.get("passed"):
            merged.append(mine)  # the runner's own failure, with its fuller detail
        else:
            merged.append(judge)
    return {**result, "checks": merged}


BITS, SECRET = 256, 32  # kernel/judge.py's one-time signature: a SHA-256 digest signed bit by bit, 32-byte secrets


def verify(public: str, message: bytes, signature: str) -> bool:
    """Whether `signature` is the judge's (kernel/judge.py `sign`) of `message` under its `public` key: each
    bit's secret hashed, beside the hash of the other, hashes to the key. The host checks it here, not in kernel/."""
    try:
        raw = bytes.fromhex(signature)
    except (ValueError, TypeError):
        return False
    if len(raw) != BITS * 2 * SECRET:
        return False
    digest = int.from_bytes(hashlib.sha256(message).digest(), "big")
    hashes = []
    for i in range(BITS):
        shown = hashlib.sha256(raw[2 * i * SECRET: (2 * i + 1) * SECRET]).digest()
        other = raw[(2 * i + 1) * SECRET: (2 * i + 2) * SECRET]
        hashes += [shown, other] if not (digest >> (BITS - 1 - i)) & 1 else [other, shown]
    return hashlib.sha256(b"".join(hashes)).hexdigest() == public


def _signed(verdict, checks: list[str], public_key: str | None) -> list[dict] | None:
    """The verdict's checks when it is signed by this run's judge and judges exactly `checks`."""
    if not public_key or not isinstance(verdict, dict):
        return None
    text, signature = verdict.get("text"), verdict.get("signature")
    if not isinstance(text, str) or not isinstance(signature, str) or len(text) > MAX_VERDICT:
        return None
    if not verify(public_key, text.encode(), signature):
        return None
    try:
        outcomes = json.loads(text)["checks"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(outcomes, list) or [o.get("expr") if isinstance(o, dict) else None for o in outcomes] != list(
        checks
    ):
        return None
    return [{"expr": o["expr"], "passed": o.get("passed") is True, "detail": str(o.get("detail", ""))}
            | ({"failing": str(o["failing"])} if o.get("failing") else {})  # a block: its failing assert
            for o in outcomes]


def evidence(receipt: Receipt, code: str | None, original: str | None = None) -> int:
    """How many things the user owns checked the values of a passing run: checks and expected, saved or
    stated output that passed, following cells that check values and discriminate (each asserts, and
    failed after the original cell and runs now, or reads what the run wrote: receipt/values.py
    `FollowingOutcome.evidence`; a later cell that merely runs now shows the fix is compatible, not that
    its values are right), asserts in the code (with `original`: only the asserts the user's cell has too;
    an assert a candidate wrote itself is no evidence). Read from each check's `source`, never its words.
    0: it only ran without error."""
    return sum(1 for c in receipt.checks if c.evidence) + _asserts(code, original)


def account(receipt: Receipt, code: str | None, original: str | None = None) -> Account:
    """What a passing run's status rests on, as data: the source of each pass that checked its values,
    the later cells that run now but check none (a fact), and the library's warnings about its result."""
    checked = tuple(c.source for c in receipt.checks if c.evidence) + ("assert",) * _asserts(code, original)
    return Account(checked, tuple(f.label for f in receipt.following if f.runs_now), receipt.doubts)


def verified(receipt: Receipt, code: str | None, original: str | None = None, checks: Iterable[str] = (),
             candidate: bool = True) -> str:
    """What a passing run verified, in words: how many checks passed, which following cells verified it
    and how, or that there were none. Only your checks are signed by the judge; the rest (the cell's own
    asserts, following cells, the expected output) is the sandbox's own report, and the words say how many
    of them that is. Later cells that run now but check no values, and those that still run but verify
    nothing, are said apart."""
    passed = [c for c in receipt.checks if c.evidence]
    later = [f for f in receipt.following if f.evidence]
    count = evidence(receipt, code, original)
    if not count:
        words = "runs without error; no checks were given — read what it does to your data"
        return words + runs_now(receipt) + still_run(receipt, candidate)
    words = "its 1 check passes" if count == 1 else f"all {count} checks pass"
    if later:
        which = "; ".join(f"{f.label}: {f.verifies}, and its asserts pass" for f in later[:MAX_NAMED])
        which += f"; and {len(later) - MAX_NAMED} more" if len(later) > MAX_NAMED else ""
        several = f"{len(later)} of them following cell{'s' if len(later) > 1 else ''}"
        words += f" ({which})" if count == 1 else f" ({several}: {which})"
    own = set(checks)
    unsigned = count - sum(1 for c in passed if c.expr in own)
    if unsigned:
        words += ("; it is the sandbox's own report, unsigned" if count == 1 else
                  f"; {unsigned} of them {'is' if unsigned == 1 else 'are'} the sandbox's own report, unsigned")
    return words + runs_now(receipt) + still_run(receipt, candidate)


MAX_NAMED = 3  # following cells named in the words of what verified a run
LATER_RUN_NOW = "later cells run now"  # the fact a later cell that runs now but checks no values is


def runs_now(receipt: Receipt) -> str:
    """"; later cells run now: following cell 7 (...) failed after the original cell and runs now; it checks
    no values, so it is no evidence": the cells that run now and discriminate but assert nothing."""
    cells = [f for f in receipt.following if f.runs_now]
    if not cells:
        return ""
    which = "; ".join(f"{f.label} ({f.verifies})" for f in cells[:MAX_NAMED])
    which += f"; and {len(cells) - MAX_NAMED} more" if len(cells) > MAX_NAMED else ""
    they = "it checks" if len(cells) == 1 else "they check"
    return f"; {LATER_RUN_NOW}: {which}; {they} no values (no assert), so the fix is compatible, not verified"


def doubted(receipt: Receipt) -> str:
    """"; pandas warns about its result: ...": the library's warnings about what the run made (evidence against)."""
    if not receipt.doubts:
        return ""
    said = "; ".join(d.said for d in receipt.doubts[:2])
    return f"; the library warns about its result, so it is not verified: {said}"


def still_run(receipt: Receipt, candidate: bool = True) -> str:
    """"; 2 later cells still run, ...": the following cells that run but verify nothing, said apart
    (after a `candidate`: they ran after the original cell too, and read nothing it wrote)."""
    n = sum(1 for f in receipt.following if f.ok and not f.verifies)
    if not n:
        return ""
    cells = "1 later cell still runs" if n == 1 else f"{n} later cells still run"
    reads = "reads" if n == 1 else "read"
    why = f"ran after the original cell too and {reads}" if candidate else reads
    return f"; {cells}, but {why} nothing the code wrote: a regression check, not evidence"


def decisive(from_rules: bool, receipt: Receipt, code: str | None, original: str | None) -> bool:
    """Whether a passing run ends its round: a rule's candidate that nothing checked is a guess, and
    does not end the round on its own."""
    return not from_rules or (evidence(receipt, code, original) > 0 and not receipt.doubts)


def ran(receipt: Receipt) -> bool:
    """The code ran to its end (whatever its checks say): it neither raised nor was rejected or left unrun."""
    return receipt.kind in _RAN


def rank(receipt: Receipt, repeated: bool, from_rules: bool, order: int, rule_guessed: bool = True) -> tuple:
    """Lower is better: all checks pass, then fewer failing checks, then fewer of the library's warnings
    about its result (`Receipt.doubts`: a candidate the library warns about loses ties), then runs without an exception,
    then an exception; a reply with no code or a rejected one is last. Ties go to new code over a
    repeat of an earlier round; then to a rule's repair that is no guess (`rule_guessed` False: what the
    library's own words say the old spelling did, `get_feature_names()` -> `list(get_feature_names_out())`,
    which a model does not know) over the model; then to the model over a rule's guess (it read the whole
    receipt); then to the earlier sample (the cooler one)."""
    kind = receipt.kind
    tier = 0 if kind == "ok" else 1 if kind in _RAN else 2 if kind in _RAISED else 3
    failing = sum(not c.passed for c in receipt.checks)
    who = (2 if rule_guessed else 0) if from_rules else 1
    return (tier, failing, len(receipt.doubts), repeated, who, order)


class PassedBefore:
    """The checks that passed in an earlier round (round 0: the original cell): one that fails now
    is a regression, and the receipt says so (its text rendered again within `budget`, a receipt/text.py one)."""

    def __init__(self, first: Receipt | None = None, budget=None):
        self.rounds: dict[str, int] = {}
        self.budget = budget
        if first is not None:
            self.record(first, 0)

    def record(self, receipt: Receipt, index: int) -> None:
        """The checks that passed in this round, and the following cells that ran (a regression check each,
        evidence or not)."""
        for expr in [c.expr for c in receipt.checks if c.passed] + [f.label for f in receipt.following if f.ok]:
            self.rounds.setdefault(expr, index)

    def marked(self, receipt: Receipt) -> Receipt:
        """`receipt` with a line for each check that passed before and fails now."""
        regressed = [c for c in receipt.checks if not c.passed and c.expr in self.rounds]
        if not regressed:
            return receipt
        return annotated(receipt, self.budget, regressions=tuple((c.expr, self.rounds[c.expr]) for c in regressed))


def _asserts(code: str | None, original: str | None = None) -> int:
    found = _assert_texts(code)
    if original is not None:
        mine = set(_assert_texts(original))
        found = [a for a in found if a in mine]
    return len(found)


def _assert_texts(code: str | None) -> list[str]:
    return [ast.unparse(n) for n in ipysyntax.nodes(code or "") if isinstance(n, ast.Assert)]

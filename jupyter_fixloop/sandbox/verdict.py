"""The checks' verdict, read on the user's side: a check passes only where the judge signed so.

The sandbox's judge (kernel/judge.py) gave its public key before the candidate ran; after the run
it signs what each check came to. The runner's own claims are the candidate's to forge, so a check
counts as passed only when the runner *and* the signed verdict say so, and a run whose verdict is
missing, for other checks, or badly signed fails with one plain line.
"""

from __future__ import annotations

import json

from ..kernel.judge import verify

FORGED = "the checks' verdict did not arrive (or was forged): the candidate is not counted as fixed"
MAX_VERDICT = 2**20  # characters of the verdict's text


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
    if not isinstance(outcomes, list) or [o.get("expr") if isinstance(o, dict) else None for o in outcomes] != list(checks):
        return None
    return [{"expr": o["expr"], "passed": o.get("passed") is True, "detail": str(o.get("detail", ""))} for o in outcomes]

"""What one run in a sandbox gives back, untyped: the raw run.

A sandbox runs a candidate and reads back what the runner wrote (checked for the runner's shape,
manager.py's `shape_error`), or says that the kernel crashed or timed out. Whether that passed, and
the receipt the model reads, are the loop's (loop/verdict.py's `judge`): nothing here judges.
Stdlib only, cheap to import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RawRun:
    """One run of `source` with `checks` (signed by the run's judge when `judged`).

    `outcome` "result": the runner's JSON in `result`, of its shape; `key` is the judge's public key
    (None when no judge was armed or it did not answer); `notes` are the sandbox's own (snapshot
    parts it could not load, files written, a limit met); `seconds` the run's time as the host saw it.
    "timeout": the run was stopped after `limit` seconds; `result` is what the interrupted runner
    wrote (None when it wrote nothing readable). "crash": the kernel died or gave nothing readable:
    `message` says why, `report` is the kernel's stderr (its end, or faulthandler's lines).
    """

    source: str
    checks: tuple[str, ...]
    judged: bool
    outcome: Literal["result", "timeout", "crash"]
    result: dict | None = None
    key: str | None = None
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    limit: float = 0.0
    message: str = ""
    report: str = ""


def unreadable(exc: BaseException) -> str:
    """A crash's message when the runner's JSON, of the right shape, still could not be read."""
    return f"the sandbox's result could not be read ({type(exc).__name__})"

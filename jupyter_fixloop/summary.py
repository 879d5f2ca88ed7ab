"""The LoopSummary of docs/protocol.md: one loop as the frontend, the notebook's metadata and the
history keep it. Mirrors labextension/src/summary.ts (which parses what this builds).

The magic's display bundle carries it under MIMETYPE, the comm sends it, and batch mode stores it in
`cell.metadata[METADATA_KEY]`. `original` and `patched` are cell bodies, without the `%%fixloop` line.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .receipt.text import for_people
from .result import LoopResult

MIMETYPE = "application/vnd.jupyter.fixloop+json"
METADATA_KEY = "fixloop"


def now() -> str:
    """The protocol's timestamps: ISO-8601, UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def loop_summary(result: LoopResult, *, cell_id: str | None = None, original: str | None = None,
                 created: str | None = None, decision: str = "pending", plain: bool = False) -> dict:
    """The LoopSummary (JSON-ready) of a LoopResult; `original` defaults to the code the loop started from.
    `plain`: the cell has no `%%fixloop` line (`%fixloop auto`, the Fix button), so Accept writes `patched` alone."""
    return {
        "loop_id": result.loop_id,
        "cell_id": cell_id,
        "status": result.status,
        "reason": result.reason,
        "model": result.model,
        "original": result.source if original is None else original,
        "patched": result.patched,
        "diff": result.diff,
        "max_rounds": result.max_rounds,
        "tokens": result.tokens,
        "cost": result.cost,
        "seconds": round(result.seconds, 3),
        "created": created or now(),
        "decision": decision,
        "plain": plain,
        "effect": result.effect.to_json() if result.effect is not None else None,
        "alternatives": [{"source": a.source, "code": a.code or "", "effect": a.effect,
                          "model_written": "model" in a.authors} for a in result.alternatives],
        "model_written": result.model_written,
        "rounds": [
            {
                "index": r.index,
                "candidate": r.candidate or "",
                "receipt": {"kind": r.receipt.kind, "text": for_people(r.receipt)},
                "tokens": r.usage.tokens,
                "cost": r.usage.cost,
                "seconds": round(r.usage.seconds + r.usage.run_seconds, 3),
                "effect": r.effect.text if r.effect is not None else None,
                "source": r.source,
                "model_written": r.model_written,
            }
            for r in result.rounds
        ],
    }

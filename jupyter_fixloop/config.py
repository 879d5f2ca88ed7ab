"""User knobs, as traitlets: `%config FixLoop.model = "..."` or `c.FixLoop.model` in jupyter_config.py."""

from __future__ import annotations

import os

from traitlets import Enum, Float, Integer, Unicode
from traitlets.config import Configurable

from .engine import BUILTIN


class FixLoop(Configurable):
    """Defaults for every `%%fixloop` loop; arguments of the magic override them per cell."""

    model = Unicode(
        "",
        help="litellm model string (e.g. 'openai/gpt-4o-mini', 'ollama/qwen2.5-coder'). Empty means "
        "$FIXLOOP_MODEL, or the built-in offline engine 'fixloop/builtin'.",
    ).tag(config=True)
    api_base = Unicode("", help="Base URL of an OpenAI-compatible server or litellm proxy.").tag(config=True)
    max_rounds = Integer(4, min=0, help="Model rounds before the loop gives up.").tag(config=True)
    timeout = Float(30.0, min=0.1, help="Seconds one sandbox run may take before it is stopped.").tag(config=True)
    max_tokens = Integer(0, min=0, help="Total model tokens for one loop (0: no bound).").tag(config=True)
    budget = Float(0.0, min=0.0, help="Total model cost in USD for one loop (0: no bound).").tag(config=True)
    wall_time = Float(600.0, min=1.0, help="Total seconds for one loop, model and sandbox together.").tag(config=True)
    pool_idle = Float(900.0, min=0.0, help="Seconds without a loop after which the idle sandbox kernels are closed (0: keep them); the next loop starts new ones.").tag(config=True)
    pool_size = Integer(2, min=0, help="Sandbox kernels kept started ahead of need: two, so the kernel for a candidate is ready even when the model answers at once.").tag(config=True)
    confinement = Enum(
        ["auto", "bwrap", "none"],
        "auto",
        help="How sandbox kernels are confined: 'auto' and 'bwrap' use bubblewrap and refuse to run candidates "
        "without it; 'none' runs them unconfined, only when set (see the README's threat model).",
    ).tag(config=True)
    memory_limit = Integer(
        0, min=0, help="Bytes of memory one sandbox kernel may use (0: half the machine's RAM)."
    ).tag(config=True)
    snapshot_size_cap = Integer(
        2 * 1024**3, min=0, help="Bytes of user variables mirrored into the sandbox; larger ones are named, not sent."
    ).tag(config=True)
    receipt_tokens = Integer(
        600, min=50, help="Most tokens one receipt (what the model reads of a run) may take; longer ones are trimmed."
    ).tag(config=True)


def resolve_model(explicit: str | None = None, configured: str = "") -> str:
    """--model, then FixLoop.model, then $FIXLOOP_MODEL, then the built-in engine."""
    return explicit or configured or os.environ.get("FIXLOOP_MODEL") or BUILTIN

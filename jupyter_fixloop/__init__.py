"""jupyter-fixloop: an execution feedback loop for generated code in Jupyter.

Every patch it shows has been run in a separate sandbox kernel together with the cell's checks.
Importing this package is cheap on purpose: litellm, jupyter_client and ipywidgets are imported
only when a loop actually runs (`fix`, `afix` and `verify` load the loop on first use).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# litellm fetches a cost map from the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .errors import FixloopError, ModelError, SandboxError, UsageError  # noqa: E402
from .hooks import LoopHooks  # noqa: E402
from .options import LoopOptions  # noqa: E402
from .receipt.values import CheckOutcome, Receipt  # noqa: E402
from .result import LoopResult, Round, Usage  # noqa: E402

if TYPE_CHECKING:
    from .loop.run import afix, averify, fix, verify

__version__ = "0.1.0"

__all__ = [
    "CheckOutcome",
    "FixloopError",
    "LoopHooks",
    "LoopOptions",
    "LoopResult",
    "ModelError",
    "Receipt",
    "Round",
    "SandboxError",
    "Usage",
    "UsageError",
    "afix",
    "averify",
    "fix",
    "load_ipython_extension",
    "unload_ipython_extension",
    "verify",
]

_LOOP = ("fix", "afix", "verify", "averify")


def __getattr__(name: str):
    """`fix`, `afix`, `verify`, `averify` from loop.py, imported on first use (it starts kernels)."""
    if name in _LOOP:
        from .loop import run as loop

        return getattr(loop, name)
    raise AttributeError(f"module 'jupyter_fixloop' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """`%load_ext jupyter_fixloop`: register `%%fixloop` and `%fixloop`."""
    from .notebook.magic import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .notebook.magic import unload_ipython_extension as _unload

    _unload(ipython)


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "jupyter-fixloop"}]

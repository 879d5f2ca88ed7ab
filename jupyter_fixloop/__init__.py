"""jupyter-fixloop: an execution feedback loop for generated code in Jupyter.

Every patch it shows has been run in a separate sandbox kernel together with the cell's checks.
Importing this package is cheap on purpose: litellm, jupyter_client and ipywidgets are imported
only when a loop actually runs.
"""

import os

# litellm fetches a cost map from the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .errors import FixloopError, ModelError, SandboxError, UsageError  # noqa: E402
from .receipt import CheckOutcome, Receipt  # noqa: E402
from .result import LoopResult, Round, Usage  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CheckOutcome",
    "FixloopError",
    "LoopResult",
    "ModelError",
    "Receipt",
    "Round",
    "SandboxError",
    "Usage",
    "UsageError",
    "afix",
    "fix",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def fix(source, **kwargs):
    """Run `source` in a sandbox kernel and repair it until its checks pass; see `loop.fix`."""
    from .loop import fix as _fix

    return _fix(source, **kwargs)


async def afix(source, **kwargs):
    """Async twin of `fix`."""
    from .loop import afix as _afix

    return await _afix(source, **kwargs)


def load_ipython_extension(ipython):
    """`%load_ext jupyter_fixloop`: register `%%fixloop` and `%fixloop`."""
    from .notebook.magic import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):
    from .notebook.magic import unload_ipython_extension as _unload

    _unload(ipython)


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "jupyter-fixloop"}]

"""Code that runs inside kernels (the host reaches it through `wire`, and the few doors below)."""

from importlib import import_module
from typing import TYPE_CHECKING

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "wire": "wire", "runner": "runner", "snapshot": "snapshot", "Snapshot": "snapshot", "scratch_dir": "snapshot",
    "remove_scratch": "snapshot", "readable": "ipysyntax", "parsed": "ipysyntax", "case_twin": "snapshot",
    "selected": "selected",  # loop/selection.py: the name of the value a run shows, and the tests its checks call
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from . import runner as runner, selected as selected, snapshot as snapshot, wire as wire
    from .ipysyntax import parsed as parsed, readable as readable
    from .snapshot import (
        Snapshot as Snapshot,
        case_twin as case_twin,
        remove_scratch as remove_scratch,
        scratch_dir as scratch_dir,
    )


def __getattr__(name: str):
    """Each exported name found in its module on first use (as `jupyter_fixloop/doors.py` makes the host
    wings' doors: kernel/ imports nothing outside itself)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(f"{__name__}.{_EXPORTS[name]}")
    return module if name == _EXPORTS[name] else getattr(module, name)

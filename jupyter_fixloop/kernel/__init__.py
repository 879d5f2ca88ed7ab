"""Code that runs inside kernels (the host reaches it through `wire`, and the few doors below)."""

from importlib import import_module

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "wire": "wire", "runner": "runner", "snapshot": "snapshot", "Snapshot": "snapshot", "scratch_dir": "snapshot",
    "remove_scratch": "snapshot", "missing_names": "sharing", "variables_from_json": "namespace",
    "readable": "ipysyntax", "Checkpoint": "checkpoint", "cell_names": "checkpoint", "written_names": "checkpoint",
    "suspects": "checkpoint",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """The doors above, imported on first use (importing the package stays cheap)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(f"{__name__}.{_EXPORTS[name]}")
    return module if name == _EXPORTS[name] else getattr(module, name)

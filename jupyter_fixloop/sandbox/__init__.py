"""Sandbox kernels on the user's side: start, confine, pool, run, read back (local or on a gateway)."""

from importlib import import_module

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "confine": "confine", "load_warning": "confine", "sweep": "leftovers", "owner_tag": "leftovers",
    "remove_tree": "leftovers", "pool_for": "pool", "SandboxPool": "pool", "Sandbox": "manager",
    "SandboxSettings": "manager",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """The doors above, imported on first use (importing the package stays cheap)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(f"{__name__}.{_EXPORTS[name]}")
    return module if name == _EXPORTS[name] else getattr(module, name)

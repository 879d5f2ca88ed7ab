"""Sandbox kernels on the user's side: start, confine, pool, run, read back (local or on a gateway)."""

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "confine": "confine", "load_warning": "confine", "sweep": "leftovers", "owner_tag": "leftovers",
    "remove_tree": "leftovers", "pool_for": "pool", "SandboxPool": "pool", "Sandbox": "manager",
    "SandboxSettings": "manager",
}
__all__ = sorted(_EXPORTS)

__getattr__ = doors(__name__, _EXPORTS)

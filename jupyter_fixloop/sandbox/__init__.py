"""Sandbox kernels on the user's side: start, confine, pool, run, read back (local or on a gateway)."""

from typing import TYPE_CHECKING

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "confine": "confine", "load_warning": "confine", "sweep": "leftovers", "owner_tag": "leftovers",
    "remove_tree": "leftovers", "pool_for": "pool", "SandboxPool": "pool", "Sandbox": "manager",
    "SandboxSettings": "manager", "runtime": "runtime", "interpreter": "confine",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from . import confine as confine, runtime as runtime
    from .confine import interpreter as interpreter, load_warning as load_warning
    from .leftovers import owner_tag as owner_tag, remove_tree as remove_tree, sweep as sweep
    from .manager import Sandbox as Sandbox, SandboxSettings as SandboxSettings
    from .pool import SandboxPool as SandboxPool, pool_for as pool_for

__getattr__ = doors(__name__, _EXPORTS)

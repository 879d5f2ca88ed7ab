"""What a new process runs first, before it is a kernel: the wire's process entries (`wire.kernel_command`,
`wire.bootstrap`). Stdlib only at import: nothing of the sandbox's is imported yet.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import sys


def kernel(argv: list[str]) -> None:
    """A sandbox kernel: ipykernel_launcher's own start, after arming the lifeline (its path is argv[1],
    taken out before ipykernel reads the rest)."""
    from .limits import watch_lifeline

    watch_lifeline(argv.pop(1))
    from ipykernel.kernelapp import launch_new_instance

    launch_new_instance()


class Sources(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `jupyter_fixloop`'s in-kernel modules from their sources (module name -> (source, is a
    package)), in a kernel without fixloop installed (a gateway's): first on `sys.meta_path`, so they win
    over any copy there."""

    spec_from_loader = staticmethod(importlib.util.spec_from_loader)  # bound now: an import in find_spec recurses

    def __init__(self, sources: dict[str, list]):
        self.sources = sources

    def find_spec(self, name, path=None, target=None):
        if name in self.sources:
            return self.spec_from_loader(name, self, is_package=self.sources[name][1])
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__spec__.name
        module.__file__ = f"<fixloop:{name}>"
        exec(compile(self.sources[name][0], module.__file__, "exec"), module.__dict__)


def install(payload: str) -> None:
    """Make the modules of `payload` (JSON: module name -> [source, is a package]) importable, and load
    the runner (a broken source fails here, at start, not at the first run)."""
    sys.meta_path.insert(0, Sources(json.loads(payload)))
    importlib.import_module("jupyter_fixloop.kernel.runner")

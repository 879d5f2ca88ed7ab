"""A wing's doors: the names its `__init__` exports (`_EXPORTS`: name -> module), imported on first use.

The faces (notebook/, batch/, cli, demo) import a wing only through these (tests/root/test_layout.py),
so a wing's inside can move without them; importing the wing stays cheap. A host-side module (stdlib
only): kernel/, which imports nothing outside itself, makes its own few doors in its `__init__`.
"""

from __future__ import annotations

from importlib import import_module


def doors(package: str, exports: dict[str, str]):
    """The module `__getattr__` of `package` that finds each exported name in its module."""

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = import_module(f"{package}.{exports[name]}")
        return module if name == exports[name] else getattr(module, name)

    return __getattr__

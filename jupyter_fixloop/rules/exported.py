"""Generic rewriters for names a library defines that a notebook used bare, and that no longer reach it: a
`from M import *` whose module now lists what it exports (`__all__`: pandas.tseries.holiday stopped exporting
`USFederalHolidayCalendar`, and with it pandas' own `Series` and `Timestamp` it used to pass on). Each
declares itself (registry.py), tried after generic.py's.

Only the modules of the libraries the knowledge base is about are imported here to look a name up (their
module is already imported by the notebook's kernel); a module of the user's would run their code outside
the sandbox, so its names are never looked up.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys

from .edits import CannotTell, ParsedReceipt, insert_import, parse, quoted
from .generic import TURN as GENERIC_TURN
from .names import import_optional
from .registry import GUESS, MECHANICAL, repair

TURN = GENERIC_TURN + 3  # after generic.py's rewriters, before missing_accessor (registry.py)
LIBRARIES = ("pandas", "numpy", "matplotlib", "sklearn", "scipy", "seaborn", "IPython")  # as they are imported


def library_module(name: str):
    """The module `name` of one of the knowledge base's libraries, or None (not one of theirs, not installed)."""
    return import_optional(name) if name.split(".")[0] in LIBRARIES else None


def _defined(module, name: str):
    """What `module` defines as `name` when it is a class or a function of its own API (no `_name`), else None."""
    value = getattr(module, name, None)
    return value if not name.startswith("_") and (inspect.isclass(value) or inspect.isroutine(value)) else None


@repair(MECHANICAL, TURN)
def exported_name(code: str, receipt: ParsedReceipt) -> str | None:
    """A name a library's module defines that its `*` no longer exports: `from pandas.tseries.holiday import *`
    then `USFederalHolidayCalendar()` -> the name imported by name, below the `*`."""
    name, tree = quoted(receipt.evalue), parse(code)
    if receipt.ename != "NameError" or not name or tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == "*" for a in node.names):
            module = library_module(node.module)
            if module is not None and _defined(module, name) is not None:
                lines = code.splitlines(keepends=True)
                first = lines[node.lineno - 1]
                indent = first[: len(first) - len(first.lstrip())]
                lines.insert(node.end_lineno, f"{indent}from {node.module} import {name}\n")
                return "".join(lines)
    return None


@repair(GUESS, TURN)
def library_name(code: str, receipt: ParsedReceipt) -> str | None:
    """A class (or, from a library the notebook imported by name, a function) used bare that one library of the
    notebook's defines, and no other: `Series`, `Timestamp` with pandas imported as `pd` (a `from ... import *`
    passed them on once) -> `from pandas import Series`. A guess: the notebook may have meant a name of its own."""
    name = quoted(receipt.evalue)
    if receipt.ename != "NameError" or not name or not re.fullmatch(r"[A-Za-z]\w*", name):
        return None
    found: dict[int, str] = {}
    for module_name in sorted(set(receipt.modules.values())):
        for home in _homes(module_name, classes=name[0].isupper()):
            value = _defined(home, name)
            if value is not None:
                found.setdefault(id(value), home.__name__)
    if len(found) > 1:
        raise CannotTell(f"`{name}` is defined by {' and by '.join(sorted(found.values()))}: which one the "
                         "notebook meant, its code does not say")
    return insert_import(code, f"from {found.popitem()[1]} import {name}") if found else None


def _homes(module_name: str, classes: bool) -> list:
    """The library module the notebook imported, and for a class also that library's public modules already
    imported (`pandas.tseries.offsets`), shortest name first."""
    module = library_module(module_name)
    if module is None:
        return []
    if not classes:
        return [module]
    root = module_name.split(".")[0]
    public = sorted((n for n in list(sys.modules) if n.startswith(root + ".") and "._" not in n
                     and not n.split(".")[-1].startswith("_") and ".tests" not in n), key=lambda n: (n.count("."), n))
    return [module, *(sys.modules[n] for n in public if sys.modules.get(n) is not None)]

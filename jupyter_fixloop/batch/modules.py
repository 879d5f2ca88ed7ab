"""Drift inside the notebook's own modules: a cell that fails inside a `.py` file of the notebook's folder
(`from preamble import *`, where `preamble.py` imports a name a library removed) is repaired in that
file, not in the cell. The repair is proposed as a diff, never written over the user's file: batch mode
judges it by running the failing cell in a sandbox with the repaired module in place of the file (its
source run as that module, the file untouched), says so in the cell's reason and the report, and writes
the diff beside the output notebook.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from dataclasses import dataclass

from ..kernel import readable

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FRAME = re.compile(r"^(?:File|  File) \"?([^\s\"]+\.py)\"?(?::|, line )(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class ModuleFailure:
    """Where in a module of the notebook's folder a cell's error was raised."""

    path: str  # the file, absolute
    module: str  # its name as imported (`preamble`, `helpers.plots`)
    lineno: int
    line: str  # the failing line of the file


def failing_module(traceback: list[str] | tuple[str, ...], folder: str) -> ModuleFailure | None:
    """The innermost frame of the traceback (IPython's lines, colours and all) that is a `.py` file under
    `folder`, or None when the error was raised elsewhere (the cell, a library)."""
    text = ANSI.sub("", "\n".join(traceback or ()))
    folder = os.path.realpath(folder)
    found = None
    for path, lineno in FRAME.findall(text):
        real = os.path.realpath(os.path.expanduser(path))
        if real.startswith(folder + os.sep) and os.path.isfile(real):
            found = (real, int(lineno))
    if found is None:
        return None
    real, lineno = found
    lines = _read(real).splitlines()
    if not 0 < lineno <= len(lines):
        return None
    module = os.path.splitext(os.path.relpath(real, folder))[0].replace(os.sep, ".").removesuffix(".__init__")
    return ModuleFailure(real, module, lineno, lines[lineno - 1])


def imports_of(sources: list[str]) -> tuple[str, list[int]]:
    """The top-level import statements of these cells (`import nsfg` in cell 2, the cell failing in cell 4
    reads it), joined, and the numbers (from 1) of the cells they come from: what the failing cell needs
    of the cells above to import the module again. `from __future__` lines are left out (only a cell's
    first statement may be one); a cell is read as IPython reads it (`%matplotlib inline` beside the imports),
    a cell neither can read gives none."""
    lines, numbers = [], []
    for number, cell in enumerate(sources, 1):
        view = readable(cell)
        source = view.python if view is not None else ""
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        found = [ast.get_source_segment(source, node) for node in tree.body
                 if isinstance(node, (ast.Import, ast.ImportFrom))
                 and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
        if found:
            lines.extend(found)
            numbers.append(number)
    return "".join(f"{line}\n" for line in lines), numbers


def judged_cell(failure: ModuleFailure, fixed: str, cell: str, imports: str = "") -> str:
    """The cell as a sandbox runs it to judge a module's repair: the repaired source run as that module
    first (the file on disk is not read, nor written), then the imports of the cells above (`imports_of`)
    and the cell as written."""
    return (f"import sys as _fixloop_sys, types as _fixloop_types\n"
            f"_fixloop_module = _fixloop_types.ModuleType({failure.module!r})\n"
            f"_fixloop_module.__file__ = {failure.path!r}\n"
            f"_fixloop_sys.modules[{failure.module!r}] = _fixloop_module\n"
            f"exec(compile({fixed!r}, {failure.path!r}, 'exec'), _fixloop_module.__dict__)\n"
            f"del _fixloop_module, _fixloop_sys, _fixloop_types\n"
            f"{imports}{cell}")


def module_diff(failure: ModuleFailure, folder: str, fixed: str) -> str:
    """The repair as a unified diff of the file, named relative to the notebook's folder."""
    name = os.path.relpath(failure.path, folder)
    before = _read(failure.path)
    return "".join(difflib.unified_diff(before.splitlines(True), fixed.splitlines(True), f"a/{name}", f"b/{name}"))


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def diff_path(output: str, failure_name: str) -> str:
    """Where the diff goes: beside the output notebook (`out.fixed.ipynb` -> `out.fixed.preamble.py.diff`)."""
    return f"{os.path.splitext(output)[0]}.{failure_name.replace(os.sep, '_')}.diff"

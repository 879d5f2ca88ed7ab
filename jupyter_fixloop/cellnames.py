"""The names a cell reads and writes, the earlier cells that may have caused a failure, and the names an
error says are missing.

Host-side: the user's kernel (`%fixloop auto`, notebook/cause.py) and batch mode (batch/upstream.py) read
the cells' text with these, and the loop and batch mode an error's; the names to keep go to a checkpoint
(kernel/checkpoint.py) as a list, those to share to the sandbox's snapshot.
"""

from __future__ import annotations

import ast
import re

from .kernel import snapshot

_MISSING = re.compile(r"name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")


def cell_names(source: str) -> set[str]:
    """Every name a cell reads, binds or deletes (a superset is fine: a name the namespace does not
    hold costs nothing to keep)."""
    names = snapshot.free_names(source)
    stripped = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def written_names(source: str) -> set[str]:
    """The names a cell binds or may change in place: assigned (`df = ...`, `df['x'] = ...`,
    `df.x += 1`), deleted, defined, imported, or whose method it calls (`rows.append(...)`)."""
    stripped = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            names.add(_base_name(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            names.add(_base_name(node.func))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    names.discard("")
    return names


MAX_SUSPECTS = 3


def suspects(earlier: list[tuple[int, str]], reads: set[str]) -> list[int]:
    """The cells (number, code: those that ran, in the order they ran) that may have caused an error in
    a cell that reads `reads`: each binds or changes a name wanted, nearest first; the names it holds
    are wanted too (a cause may lie further up). At most MAX_SUSPECTS. Batch mode and `%fixloop auto`
    (the session's cells, by execution count) ask it."""
    wanted, found = set(reads), []
    for number, code in reversed(earlier):
        if written_names(code) & wanted:
            found.append(number)
            wanted |= cell_names(code)
        if len(found) == MAX_SUSPECTS:
            break
    return found


def _base_name(node) -> str:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def missing_names(ename: str | None, evalue: str | None) -> tuple[str, ...]:
    """The name a NameError says is not defined (from a receipt, or batch mode's error line)."""
    if ename not in ("NameError", "UnboundLocalError") or not evalue:
        return ()
    return tuple(_MISSING.findall(evalue))

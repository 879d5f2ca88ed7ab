"""One parse and one walk per source text, shared by the readers of a cell.

A cell is read by many small rules (the smells, the verdict's asserts, the names a snapshot shares, the
rules' repairs), each of which used to parse it and walk every node again: on a 40,000-line cell that
was dozens of parses and walks per candidate. `parsed` and `nodes` keep the last few texts' trees. The
tree is shared: read it, never change it (a rule that edits a tree parses its own with `ast.parse`).
"""

from __future__ import annotations

import ast
import functools


@functools.lru_cache(maxsize=16)
def parsed(source: str) -> ast.Module | None:
    """The tree of `source` (shared: read only), None when it is not Python."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of `parsed(source)`, in `ast.walk`'s order; () when it is not Python."""
    tree = parsed(source)
    if tree is None:
        return ()
    if id(tree) not in _walked:
        if len(_walked) >= 32:
            _walked.clear()
        _walked[id(tree)] = (tree, tuple(ast.walk(tree)))
    return _walked[id(tree)][1]


_walked: dict[int, tuple[ast.AST, tuple[ast.AST, ...]]] = {}  # id(tree) -> (tree, its nodes), for `parsed`'s trees


def walk(node: ast.AST):
    """`ast.walk(node)`, from the kept list when `node` is a tree `parsed` made (a walk of a big cell is
    then a loop over a tuple, not a generator through every field of every node)."""
    kept = _walked.get(id(node))
    if kept is not None and kept[0] is node:
        return kept[1]
    return ast.walk(node)

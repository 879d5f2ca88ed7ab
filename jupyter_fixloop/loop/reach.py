"""Which of a cell's statements can run, read from its code: the guard's test of an `assert` the user
wrote, which counts only where it still runs (guard.py).

An assert is out of reach (disarmed) when it sits
- under a branch that is never taken (`if 0 > 1:`, `if False and x:`, the `else` of `if True:`,
  `while 1 == 2:`), constants folded as tamper.fold does;
- in a function the code never names (not called, not passed, not decorated: an unused helper);
- after a statement that ends its block (`return`, `raise`, `break`, `continue`, `exit()`,
  `sys.exit()`, `os._exit()`, or an `if` whose every branch ends);
- in a `try` whose handler catches AssertionError.
This reads code, not runs: a condition that is false only at run time is not seen (the guard is no
barrier; the judge is, for the checks it signs).
"""

from __future__ import annotations

import ast

from ..kernel import ipysyntax
from . import tamper

EXITS = {"exit", "quit", "sys.exit", "os._exit", "os.abort", "_exit"}
_BLOCKS = ("body", "orelse", "finalbody")


def disarmed_asserts(tree: ast.Module) -> set[str]:
    """The asserts of `tree` (as `ast.unparse` writes them) that can never fail."""
    return _Reach(tree).asserts()


def never_true(test: ast.expr) -> bool:
    """A condition that folds to a false value (`0 > 1`, `False and x`, `not True`)."""
    return _settled(test) is False


def always_true(test: ast.expr) -> bool:
    """A condition that folds to a true value (`1 < 2`, `True or x`)."""
    return _settled(test) is True


def _settled(test: ast.expr) -> bool | None:
    """The truth of a condition when its constants settle it, None when it reads something at run time."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _settled(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_settled(v) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # `or`: one true part settles it; `and`: one false part
        if decisive in parts:
            return decisive
        return (not decisive) if all(p is not None for p in parts) else None
    value = tamper.fold(test)
    return None if value is tamper.NOT else _truth(value)


def _truth(value) -> bool:
    try:
        return bool(value)
    except Exception:
        return True


def ends(stmt: ast.stmt) -> bool:
    """A statement after which nothing in its block runs."""
    if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        name = ast.unparse(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
        return name in EXITS
    if isinstance(stmt, ast.If):
        if always_true(stmt.test):
            return _block_ends(stmt.body)
        if never_true(stmt.test):
            return _block_ends(stmt.orelse)
        return _block_ends(stmt.body) and _block_ends(stmt.orelse)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return _block_ends(stmt.body)
    return False


def _block_ends(stmts: list[ast.stmt]) -> bool:
    return any(ends(s) for s in stmts)


class _Reach:
    """One walk over a module's statements, carrying whether the block being read can run."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.named = _named(tree)
        self.found: set[str] = set()

    def asserts(self) -> set[str]:
        self.block(self.tree.body, dead=False)
        return self.found

    def block(self, stmts: list[ast.stmt], dead: bool) -> None:
        for stmt in stmts:
            self.statement(stmt, dead)
            dead = dead or ends(stmt)

    def statement(self, stmt: ast.stmt, dead: bool) -> None:
        if isinstance(stmt, ast.Assert):
            if dead:
                self.found.add(ast.unparse(stmt))
            return
        if isinstance(stmt, ast.If):
            self.block(stmt.body, dead or never_true(stmt.test))
            self.block(stmt.orelse, dead or always_true(stmt.test))
            return
        if isinstance(stmt, ast.While):
            self.block(stmt.body, dead or never_true(stmt.test))
            self.block(stmt.orelse, dead)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.block(stmt.body, dead or self.unused(stmt))
            return
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            caught = any(_catches_assertions(h) for h in stmt.handlers)
            self.block(stmt.body, dead or caught)
            for handler in stmt.handlers:
                self.block(handler.body, dead)
            self.block(stmt.orelse, dead)
            self.block(stmt.finalbody, dead)
            return
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                self.block(case.body, dead)
            return
        for field in _BLOCKS:
            self.block(getattr(stmt, field, None) or [], dead)

    def unused(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A function nothing names: not called, passed, returned or decorated (dunders run by themselves)."""
        if fn.decorator_list or (fn.name.startswith("__") and fn.name.endswith("__")):
            return False
        return fn.name not in self.named


def _named(tree: ast.AST) -> set[str]:
    """Every name the code reads: variables, attributes (`self.f`) and strings (`getattr(o, 'f')`)."""
    names = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return names


def _catches_assertions(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {ast.unparse(t).rsplit(".", 1)[-1] for t in types}
    return bool(names & {"AssertionError", "Exception", "BaseException"})

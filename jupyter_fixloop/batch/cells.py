"""Reading notebook cells for batch mode: what to run, and which names a cell reads and defines.

The names decide what batch mode saves before a cell (to mirror the state it saw into a sandbox)
and which later failures an unfixed cell explains: a later cell is "skipped" (not repaired) only when
it fails on a name (a NameError) that an unfixed cell should have defined. Reads follow the
order of the cell: a name the cell assigns before it reads it is not a read (`data = f()` then
`data.head()` reads nothing).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
import shlex
from dataclasses import dataclass

from ..cell import MAGIC, join_magic, magic_arguments, split_instruction, split_magic
from ..errors import UsageError
from ..kernel import parsed, readable
from ..notebook.magic import FixLoopMagics, expected_output
from ..options import parse_share


@dataclass(frozen=True)
class CellPlan:
    """What batch mode runs for a cell: its code, plus the options of a `%%fixloop` line if it has one."""

    code: str
    magic_line: str | None = None
    checks: tuple[str, ...] = ()
    instruction: str | None = None
    max_rounds: int | None = None
    timeout: float | None = None
    model: str | None = None
    hint: str | None = None
    expect_output: str | None = None
    instruction_in_body: bool = False
    share: tuple[str, ...] = ()  # --share: names shared with the sandbox besides those the cell reads

    def source_with(self, code: str) -> str:
        """The cell source holding `code`: the `%%fixloop` line is kept as the user wrote it."""
        code = code.rstrip("\n")
        if self.magic_line is None:
            return code
        if self.instruction_in_body:
            code = f"# {self.instruction}\n{code}"  # the user's instruction stays, as a comment
        return join_magic(self.magic_line, code)


def parse_cell(source: str) -> CellPlan:
    """Split a `%%fixloop` cell into its options and body; any other cell runs as written."""
    first, body = split_magic(source)
    if first is None:
        return CellPlan(code=source)
    try:
        args = FixLoopMagics.fixloop.parser.parse_args(shlex.split(magic_arguments(first)))
    except (Exception, SystemExit) as exc:
        raise UsageError(f"the {MAGIC} line cannot be read ({exc}); see `%%fixloop --help`") from None
    code, instruction = split_instruction(body, " ".join(args.instruction).strip() or None)
    return CellPlan(code=code, magic_line=first, checks=tuple(args.expect), instruction=instruction,
                    max_rounds=args.max_rounds, timeout=args.timeout, model=args.model, hint=args.hint,
                    expect_output=expected_output(getattr(args, "expect_output", None)),
                    instruction_in_body=bool(instruction) and not args.instruction, share=parse_share(args.share))


def cell_names(code: str) -> tuple[set[str], set[str]]:
    """(names the cell reads, names it binds or changes in place). Errs on the side of more names.
    Linear in the cell's size: one pass, one set of the names bound so far (read once per text: batch
    mode asks again for the same cell, and a 40,000-line cell took seconds each time)."""
    reads, defines = _cell_names(code)
    return set(reads), set(defines)


def imported_names(code: str) -> set[str]:
    """The names a cell's top-level imports bind (`import pandas as pd`: `pd`): modules, not data."""
    tree = parsed(code)
    body = tree.body if tree is not None else []
    return {(a.asname or a.name).split(".")[0] for s in body if isinstance(s, (ast.Import, ast.ImportFrom))
            for a in s.names}


def assigned_keys(code: str) -> dict[str, set[str]]:
    """The text keys a cell assigns on a name, by that name: `elements["goe"] = ...` and
    `df.loc[:, "goe"] = ...` give {"elements": {"goe"}, "df": {"goe"}}. A later KeyError naming such a key,
    in a cell reading the name, is about what this cell should have made, when it failed."""
    tree = parsed(code)
    if tree is None:
        try:
            tree = ast.parse(_as_python(code)[0])
        except (SyntaxError, ValueError):
            return {}
    keys: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if not isinstance(target, ast.Subscript):
                continue
            on, key = target.value, target.slice
            if isinstance(on, ast.Attribute) and on.attr in ("loc", "at") and isinstance(key, ast.Tuple) \
                    and len(key.elts) == 2:
                on, key = on.value, key.elts[1]
            if isinstance(on, ast.Name) and isinstance(key, ast.Constant) and isinstance(key.value, str):
                keys.setdefault(on.id, set()).add(key.value)
    return keys


@functools.lru_cache(maxsize=8)
def _cell_names(code: str) -> tuple[frozenset[str], frozenset[str]]:
    tree, magic_words = parsed(code), set()  # shared, read only: the tree the loop's readers share
    if tree is None:
        python, magic_words = _as_python(code)
        try:
            tree = ast.parse(python)
        except (SyntaxError, ValueError):
            words = frozenset(re.findall(r"[A-Za-z_]\w*", code))
            return words, frozenset(re.findall(r"^([A-Za-z_]\w*)\s*[+\-*/]?=", code, re.MULTILINE))
    reads, defines = _in_order(tree.body, set())
    return frozenset(reads | magic_words), frozenset(defines)


def _in_order(body: list, bound: set[str]) -> tuple[set[str], set[str]]:
    """Reads and bindings of statements run one after another: a name bound by an earlier statement
    (in `bound`, or in this body) is not read by a later one. A branch's bindings count as made
    (errs towards fewer reads: a read only decides whether a failure is blamed on an earlier cell).
    `bound` grows while the body is read and is handed back as it came (no copy per statement)."""
    reads: set[str] = set()
    defines: set[str] = set()
    with _also(bound) as add:
        for stmt in body:
            r, d = _statement(stmt, bound)
            reads |= r
            defines |= d
            add(d)
    return reads, defines


@contextlib.contextmanager
def _also(bound: set[str], names=()):
    """`bound` with `names` (and whatever is added through the function given) for a while."""
    added: list[str] = []

    def add(more) -> None:
        new = [n for n in more if n not in bound]
        bound.update(new)
        added.extend(new)

    add(names)
    try:
        yield add
    finally:
        bound.difference_update(added)


def _statement(stmt, bound: set[str]) -> tuple[set[str], set[str]]:
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        head, target = _names_of(stmt.iter), _names_of(stmt.target)
        with _also(bound, target.defines):
            r, d = _in_order([*stmt.body, *stmt.orelse], bound)
        return (head.reads - bound) | r, target.defines | d
    if isinstance(stmt, (ast.If, ast.While)):
        test = _names_of(stmt.test)
        r1, d1 = _in_order(stmt.body, bound)
        r2, d2 = _in_order(stmt.orelse, bound)
        return (test.reads - bound) | r1 | r2, d1 | d2
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        reads, with_bound = set(), set()
        for item in stmt.items:
            reads |= {n for n in _names_of(item.context_expr).reads if n not in bound and n not in with_bound}
            if item.optional_vars is not None:
                with_bound |= _names_of(item.optional_vars).defines
        with _also(bound, with_bound):
            r, d = _in_order(stmt.body, bound)
        return reads | r, with_bound | d
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return _try(stmt, bound)
    names = _names_of(stmt)
    return names.reads - bound, names.defines


def _try(stmt, bound: set[str]) -> tuple[set[str], set[str]]:
    reads, defines = _in_order(stmt.body, bound)
    for handler in stmt.handlers:
        head = _names_of(handler.type).reads if handler.type is not None else set()
        with _also(bound, [handler.name] if handler.name else []):
            r, d = _in_order(handler.body, bound)
        reads |= (head - bound) | r
        defines |= d
    for part in (stmt.orelse, stmt.finalbody):
        with _also(bound, defines):
            r, d = _in_order(part, bound)
        reads |= r
        defines |= d
    return reads, defines


def _names_of(node) -> _Names:
    visitor = _Names()
    visitor.visit(node)
    return visitor


def _as_python(code: str) -> tuple[str, set[str]]:
    """IPython syntax (`%magic`, `!cmd`) as Python line for line (a `%%time` body as itself), and the
    words of the magic lines (their code is a string); a `%%bash`-like cell is words only."""
    view = readable(code)
    if view is None:
        return "", set(re.findall(r"[A-Za-z_]\w*", code))
    return view.python, {w for s in view.special for w in re.findall(r"[A-Za-z_]\w*", s.original)}


class _Names(ast.NodeVisitor):
    """Module-level reads and bindings; a function contributes only the globals it reads."""

    def __init__(self):
        self.reads: set[str] = set()
        self.defines: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        (self.reads if isinstance(node.ctx, ast.Load) else self.defines).add(node.id)

    def visit_FunctionDef(self, node) -> None:
        self.defines.add(node.name)
        for child in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if child is not None:
                self.visit(child)
        self.reads |= _free_in_function(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.reads |= _free_in_function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.defines.add(node.name)
        for child in [*node.bases, *node.keywords, *node.decorator_list, *node.body]:
            self.visit(child)

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.defines.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_Global(self, node: ast.Global) -> None:
        self.defines.update(node.names)

    def _changed(self, target) -> None:
        """`df['x'] = ...` and `obj.attr += 1` change `df` and `obj`."""
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        if isinstance(target, ast.Name):
            self.defines.add(target.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._changed(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):  # `n += 1` reads n first
            self.reads.add(node.target.id)
        self._changed(node.target)
        self.generic_visit(node)

    def _comprehension(self, node) -> None:
        """A comprehension's loop variables are its own: only the names it reads from outside count."""
        inner = _Names()
        for part in ast.iter_child_nodes(node):
            inner.visit(part)
        bound = {n.id for gen in node.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        self.reads |= inner.reads - bound
        self.defines |= inner.defines - bound

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._changed(target)
        self.generic_visit(node)


def _free_in_function(node) -> set[str]:
    args = node.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    body = node.body if isinstance(node.body, list) else [node.body]
    loads, stores, globals_ = set(), set(), set()
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name):
                (loads if isinstance(sub.ctx, ast.Load) else stores).add(sub.id)
            elif isinstance(sub, ast.Global):
                globals_.update(sub.names)
    return (loads - params - stores) | globals_



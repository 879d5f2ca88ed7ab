"""Reading notebook cells for batch mode: what to run, and which names a cell reads and defines.

The names decide what happens after a cell that could not be fixed: a later cell that reads a name
it (or a skipped cell) defines is skipped, any other cell still runs. The analysis errs towards more
names: skipping a cell that would have run is cheaper than running one on missing state.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass

from ..cell import MAGIC, join_magic, magic_arguments, split_instruction, split_magic
from ..errors import UsageError
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
    """(names the cell reads, names it binds or changes in place). Errs on the side of more names."""
    python, magic_words = _as_python(code)
    try:
        tree = ast.parse(python)
    except SyntaxError:
        words = set(re.findall(r"[A-Za-z_]\w*", code))
        return words, set(re.findall(r"^([A-Za-z_]\w*)\s*[+\-*/]?=", code, re.MULTILINE))
    visitor = _Names()
    visitor.visit(tree)
    return visitor.reads | magic_words, visitor.defines


def _as_python(code: str) -> tuple[str, set[str]]:
    """IPython syntax (`%magic`, `!cmd`) as Python, and the words inside magics (their code is a string)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        python = TransformerManager().transform_cell(code)
    except Exception:
        return code, set()
    words = set()
    for line in code.splitlines():
        if line.lstrip().startswith(("%", "!")):
            words |= set(re.findall(r"[A-Za-z_]\w*", line))
    if python.startswith("get_ipython().run_cell_magic"):
        words |= set(re.findall(r"[A-Za-z_]\w*", code))
    return python, words


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
        self._changed(node.target)
        self.generic_visit(node)

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



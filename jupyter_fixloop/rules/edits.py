"""What the built-in repairs share: reading a receipt, and editing code without breaking it.

A repair knows the run through a `ParsedReceipt`, made from the typed receipt (`ParsedReceipt.of`),
never read back from its text: the error, the failing line, the facts gathered in the sandbox
(`defined names close to 'x': [...]`, `name = repr`, ...), the failed checks' details and the value
trace. Edits go through tokens or the AST, so a name inside a string or an attribute is never
touched by mistake.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import takewhile

from ..kernel import ipysyntax
from ..receipt.smells import warned
from ..receipt.text import for_people, run_headline
from ..receipt.values import Receipt, TracedLine
from .tables import VALUE

# ---------------------------------------------------------------- reading a receipt


def as_text(text: str, receipt: ParsedReceipt, key: str) -> str:
    """`text` (the column `key`, as `df['zip']`) turned into text: `.astype(str)`, except for floats
    that all hold whole numbers (ZIP codes, ids read as float because of a missing value), which
    `astype(str)` would print as '2134.0': those go through pandas' nullable "Int64" first."""
    dtype, examples = column_dtypes(receipt).get(key.replace('"', "'"), ("", ""))
    values = [v.strip() for v in examples.split(",") if v.strip()]
    if dtype.startswith("float") and values and all(re.fullmatch(r"-?\d+\.0|nan|NaN|<NA>", v) for v in values):
        return f"{text}.astype('Int64').astype(str)"
    return f"{text}.astype(str)"


def column_dtypes(receipt: ParsedReceipt) -> dict[str, tuple[str, str]]:
    """`dtypes: df['a'] str (e.g. '15', '40'); df.b int64; ...` from the context: {"df['a']": ("str", "'15', '40'"),
    "df.b": ("int64", "")} (kernel/facts.py's fact)."""
    for line in receipt.context:
        if line.startswith("dtypes: "):
            found = re.findall(r"(\S+\[.+?\]|[A-Za-z_]\w*\.\w+) (\S+)(?: \(e\.g\. (.*?)\))?(?:; |$)",
                               line[len("dtypes: "):])
            return {expr.replace('"', "'"): (dtype, examples) for expr, dtype, examples in found}
    return {}


class CannotTell(Exception):
    """A repair that fits the error but cannot tell which edit is right says so (its message), rather
    than guess; the engine answers with that message when no other repair applies."""


@dataclass(frozen=True)
class ParsedReceipt:
    """The parts of a receipt a repair needs. `message` is the whole error message (all lines)."""

    headline: str
    ename: str = ""
    evalue: str = ""
    lineno: int | None = None
    line: str = ""
    context: tuple[str, ...] = ()
    text: str = ""
    values: dict = field(default_factory=dict)
    message: str = ""
    modules: Mapping[str, str] = field(default_factory=dict)  # the namespace's module names: {"pd": "pandas"}
    column: int | None = None  # where on the failing line a SyntaxError points
    trace: tuple[TracedLine, ...] = ()  # a wrong output's value trace, line by line
    failed: tuple[str, ...] = ()  # the details of the failed checks (a smell's is its text)
    smells: tuple[str, ...] = ()  # what looks wrong in what the cell did to the data (failed checks too)
    output_differs: bool = False  # a check of the printed output failed: the one saved, or --expect-output
    smelled: tuple[str, ...] = ()  # which smells those are (receipt/smells.py's kinds: "whole_repr", ...)
    dropped: tuple[int, ...] = ()  # the lines whose result is thrown away (a "thrown_away" smell's Smell.line)
    warned: tuple[str, ...] = ()  # the smells the run's warnings show (receipt/smells.py's `warned`: "lost_assignment")
    # where the cell ran and a later cell it must let run raised (the cause loop's, batch/upstream.py): (ename, evalue)
    below: tuple[str, str] = ("", "")
    libraries: tuple[str, ...] = ()  # the packages of the library frames below the last user frame, outermost first

    @classmethod
    def of(cls, receipt: Receipt, modules: Mapping[str, str] | None = None) -> ParsedReceipt:
        """The parts of a typed receipt (the loop's), read from its fields, not from its text: the whole
        message, every fact of its context (a fact's rows are items of their own, as in the text); `text` is
        what people read of it, rendered now from those fields (receipt/text.py's `for_people`)."""
        message = receipt.evalue or ""
        context = [row.strip() for fact in receipt.context for row in (fact.splitlines() or [""])]
        facts = [fact.splitlines()[0] if fact.strip() else "" for fact in receipt.context]
        values = dict(m.groups() for m in map(VALUE.match, facts) if m)
        failed = [c for c in receipt.checks if not c.passed]
        return cls(run_headline(receipt), receipt.ename or "", message.split("\n", 1)[0].rstrip(), receipt.lineno,
                   (receipt.line or "").rstrip(), tuple(context), for_people(receipt), values, message,
                   dict(modules or {}),
                   receipt.column, receipt.trace, tuple(c.detail for c in failed),
                   tuple(c.detail for c in failed if c.source == "smell"),
                   any(c.source in ("saved", "output") for c in failed),
                   tuple(c.smell for c in failed if c.source == "smell"),
                   tuple(s.line for s in (receipt.effect.smells if receipt.effect else ()) if s.kind == "thrown_away"),
                   tuple(s.kind for s in warned(receipt.warnings)),
                   next(((f.ename, f.evalue.split("\n", 1)[0]) for f in receipt.following if not f.ok and f.counted
                         and not receipt.ename), ("", "")),
                   libraries_raised_in(receipt))


def libraries_raised_in(receipt: Receipt) -> tuple[str, ...]:
    """The top-level packages of the frames an error went through below the cell's last frame, outermost first
    (`('sklearn', 'sklearn', 'pandas', 'pyarrow')`): which library was called, and which one raised."""
    error = receipt.facts.error if receipt.facts is not None else None
    frames = (error or {}).get("frames") or []
    users = [i for i, f in enumerate(frames) if f.get("user")]
    below = frames[users[-1] + 1:] if users else []
    return tuple(_package(f.get("file") or "") for f in below)


def _package(file: str) -> str:
    """`.../site-packages/sklearn/utils/_indexing.py` -> `sklearn`; `pyarrow/table.pxi` -> `pyarrow`."""
    tail = re.split(r"[/\\](?:site|dist)-packages[/\\]", file)[-1]
    return re.split(r"[/\\.]", tail.lstrip("/\\"), maxsplit=1)[0]


def shown_values(receipt: ParsedReceipt) -> tuple[str, ...]:
    """What a run's error shows of its values: the whole message, then each fact of its context (the
    values of the names on the failing line, a column's dtype and examples), not the code."""
    return (receipt.message, *receipt.context)


def context_list(receipt: ParsedReceipt, prefix: str) -> list[str]:
    """Items of a context line such as `defined names close to 'x': ['a', 'b']`."""
    for c in receipt.context:
        if c.startswith(prefix):
            tail = c.split(":", 1)[1].strip()
            try:
                value = ast.literal_eval(tail)
            except (ValueError, SyntaxError):
                return []
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return []


def quoted(evalue: str) -> str | None:
    m = re.search(r"'([^']+)'", evalue)
    return m.group(1) if m else None


def value_kind(receipt: ParsedReceipt, name: str) -> str:
    """The type a context line shows for `name` (`DataFrame`, `Series`, `str`, `int`, ...), or ''."""
    text = receipt.values.get(name)
    if text is None:
        return ""
    head = re.match(r"^(DataFrame|Series|ndarray)\b", text)
    if head:
        return head.group(1)
    try:
        return type(ast.literal_eval(text)).__name__
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    try:  # a display of values that are not literals: `{'when': Timestamp('2024-02-03 00:00:00')}` is a dict
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ""
    return {ast.Dict: "dict", ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}.get(type(node), "")


# ---------------------------------------------------------------- editing code safely


def parse(code: str) -> ast.Module | None:
    return ipysyntax.parsed(code)  # shared: read, never changed


def tree_of(code: str) -> ast.Module:
    """`parse` for a repair that reads the tree: code that does not parse raises, and the engine takes that
    as the repair's "does not apply" (repairs.propose), so no repair says it again."""
    tree = parse(code)
    if tree is None:
        raise SyntaxError("the code does not parse")
    return tree


def rename_names(code: str, old: str, new: str, line: int | None = None) -> str | None:
    """Replace the identifier `old` by `new` wherever it is a name (not an attribute or a string)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    lines = code.splitlines(keepends=True)
    edits = []
    prev = None
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string == old and not (prev and prev.string == ".") and (
                line is None or tok.start[0] == line):
            edits.append(tok)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok
    if not edits:
        return None
    for tok in reversed(edits):
        row, col = tok.start
        text = lines[row - 1]
        lines[row - 1] = text[:col] + new + text[col + len(old):]
    return "".join(lines)


def imported_as(name: str, alias: ast.alias) -> str:
    """`name` imported under the name `alias` binds (`nan as NaN`; `nan` where that is the name)."""
    bound = alias.asname or alias.name
    return name if name == bound else f"{name} as {bound}"


def requoted(code: str, lineno: int | None, old: str, new: str) -> str | None:
    """The string literal `old` written as `new` in the cell's own quotes (one `new` does not hold), on the failing
    line, or everywhere when the line is unknown or lacks it (`replace_on_line`)."""
    for quote in ("'", '"'):
        fixed = replace_on_line(code, lineno, f"{quote}{old}{quote}", f"{quote}{new}{quote}") if (
            quote not in new) else None
        if fixed is not None:
            return fixed
    return None


def imports_from(tree: ast.Module, lineno: int | None, module: str | None = None) -> list[ast.ImportFrom]:
    """The `from M import ...` statements on the failing line (of module `module` only, when given)."""
    return [n for n in ipysyntax.walk(tree) if isinstance(n, ast.ImportFrom) and on_line(n, lineno) and n.module
            and module in (None, n.module)]


def replace_on_line(code: str, lineno: int | None, old: str, new: str) -> str | None:
    """Replace `old` on the failing line, or everywhere when the line is unknown or lacks it."""
    lines = code.splitlines(keepends=True)
    if lineno is not None and 1 <= lineno <= len(lines) and old in lines[lineno - 1]:
        lines[lineno - 1] = lines[lineno - 1].replace(old, new)
        return "".join(lines)
    if old in code:
        return code.replace(old, new)
    return None


def insert_import(code: str, statement: str) -> str:
    """Put an import after the cell's leading imports (or first), where a person would."""
    lines = code.splitlines(keepends=True)
    head = takewhile(lambda line: not line.strip() or line.strip().startswith(("import ", "from ", "#")), lines)
    at = max((i + 1 for i, line in enumerate(head) if line.strip().startswith(("import ", "from "))), default=0)
    lines.insert(at, statement + "\n")
    return "".join(lines)


def with_pandas(code: str, fixed: str, receipt: ParsedReceipt) -> str:
    """Make sure `pd` is there when a repair introduced it: the cell uses or imports it, or the
    notebook's namespace binds it to pandas (the loop says so); else the repair imports it."""
    if (re.search(r"\bpd\.", code) or re.search(r"^\s*import pandas as pd", code, re.MULTILINE)
            or receipt.modules.get("pd") == "pandas"):
        return fixed
    return insert_import(fixed, "import pandas as pd")


def insert_before(code: str, lineno: int, statement: str) -> str:
    """Insert a statement before line `lineno`, at that line's indentation."""
    lines = code.splitlines(keepends=True)
    target = lines[lineno - 1]
    indent = target[: len(target) - len(target.lstrip())]
    lines.insert(lineno - 1, indent + statement + "\n")
    return "".join(lines)


def offset(code: str, row: int, col_bytes: int) -> int:
    """Character offset in `code` of an AST position (ast gives UTF-8 byte columns)."""
    lines = code.splitlines(keepends=True)
    text = lines[row - 1] if row - 1 < len(lines) else ""
    col = len(text.encode("utf-8")[:col_bytes].decode("utf-8", "replace"))
    return sum(len(x) for x in lines[: row - 1]) + col


def span(code: str, node: ast.AST) -> tuple[int, int]:
    """Character offsets of an AST node."""
    return offset(code, node.lineno, node.col_offset), offset(code, node.end_lineno, node.end_col_offset)


def source_of(code: str, node: ast.AST) -> str:
    start, end = span(code, node)
    return code[start:end]


def replace_node(code: str, node: ast.AST, text: str) -> str:
    start, end = span(code, node)
    return code[:start] + text + code[end:]


def spliced(code: str, edits) -> str | None:
    """`code` with each `((start, end), text)` of `edits` written in, the last first; None when there is none."""
    for (start, end), text in sorted(edits, reverse=True):
        code = code[:start] + text + code[end:]
    return code if edits else None


def replace_nodes(code: str, nodes, text) -> str | None:
    """`code` with each of `nodes` (none inside another) written as `text(node)`; None when there is none."""
    return spliced(code, [(span(code, n), text(n)) for n in nodes])


def on_line(node: ast.AST, lineno: int | None) -> bool:
    """Whether the node spans the failing line (every node when the line is unknown)."""
    if lineno is None or not hasattr(node, "lineno"):
        return lineno is None
    return node.lineno <= lineno <= (node.end_lineno or node.lineno)


def calls_on_line(tree: ast.Module, lineno: int | None, name: str | None = None) -> list[ast.Call]:
    """Calls on the failing line (innermost first), optionally only those to `name` or `x.name`."""
    return innermost_first(n for n in ipysyntax.walk(tree) if isinstance(n, ast.Call) and on_line(n, lineno)
                           and name in (None, call_name(n)))


def innermost_first(nodes) -> list:
    """The nodes, the shortest first (a node on one line before one that spans lines)."""
    return sorted(nodes, key=lambda n: (n.end_col_offset - n.col_offset) + 1000 * (n.end_lineno - n.lineno))


def call_name(call: ast.Call) -> str:
    """`f` of `f(...)` and of `x.f(...)`; '' for any other call."""
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")


def add_keyword(code: str, call: ast.Call, keyword: str) -> str:
    """Add `keyword` (e.g. `errors="coerce"`) as the last argument of the call."""
    end = span(code, call)[1] - 1  # the closing parenthesis
    inner = code[span(code, call.func)[1]:end].strip()
    sep = "" if inner in ("(", "") else ", "
    head = code[:end].rstrip()
    if head.endswith(","):
        sep = " "
    return head + sep + keyword + code[end:]


def has_keyword(call: ast.Call, name: str) -> bool:
    return any(k.arg == name for k in call.keywords)

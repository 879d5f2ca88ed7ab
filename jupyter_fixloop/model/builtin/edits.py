"""What the built-in repairs share: reading a receipt, and editing code without breaking it.

A repair knows the run through a `ParsedReceipt`: in the loop it is made from the typed receipt
(`ParsedReceipt.of`); from a prompt (the bench's cases) it is read back from the receipt's text
(`parse_receipt`): the headline `Ename: message`, `  at line N of the cell: ...`, the `Context:`
facts gathered in the sandbox (`defined names close to 'x': [...]`, `name = repr`, ...), the failed
checks' details and the value trace. Edits go through tokens or the AST, so a name inside a string
or an attribute is never touched by mistake.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...kernel import trees
from ...receipt.saved import SAVED_CHECK
from ...receipt.text import TRACE_HEADING, for_people, run_headline
from ...receipt.values import OUTPUT_CHECK, SMELL_CHECK, Receipt, TracedLine

# ---------------------------------------------------------------- reading a receipt


def as_text(text: str, receipt: ParsedReceipt, key: str) -> str:
    """`text` (the column `key`, as `df['zip']`) turned into text: `.astype(str)`, except for floats
    that all hold whole numbers (ZIP codes, ids read as float because of a missing value), which
    `astype(str)` would print as '2134.0': those go through pandas' nullable "Int64" first."""
    for line in receipt.context:
        if not line.startswith("dtypes: "):
            continue
        for expr, dtype, examples in re.findall(r"(\S+\[.+?\]) (\S+)(?: \(e\.g\. (.*?)\))?(?:; |$)", line[8:]):
            if expr.replace('"', "'") != key.replace('"', "'") or not dtype.startswith("float"):
                continue
            values = [v.strip() for v in examples.split(",") if v.strip()]
            if values and all(re.fullmatch(r"-?\d+\.0|nan|NaN|<NA>", v) for v in values):
                return f"{text}.astype('Int64').astype(str)"
    return f"{text}.astype(str)"


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
                   tuple(c.detail for c in failed if c.expr == SMELL_CHECK),
                   any(c.expr in OUTPUT_CHECKS for c in failed))


OUTPUT_CHECKS = (SAVED_CHECK, OUTPUT_CHECK)  # the checks that compare what the cell printed with a text


HEADLINE = re.compile(r"^(?P<ename>[A-Za-z_][\w.]*): ?(?P<evalue>.*)$")
AT_LINE = re.compile(r"^\s+(?:at|stopped at) line (?P<lineno>\d+)(?: of the cell)?: ?(?P<line>.*)$")
VALUE = re.compile(r"^([A-Za-z_]\w*) = (.*)$")
COLUMN = re.compile(r"^\s+\(column (\d+)\)", re.MULTILINE)


def parse_receipt(text: str) -> ParsedReceipt:
    lines = text.splitlines()
    headline = lines[0] if lines else ""
    ename = evalue = ""
    m = HEADLINE.match(headline)
    if m:
        ename, evalue = m.group("ename"), m.group("evalue")
    message = [evalue]
    lineno, line = None, ""
    context: list[str] = []
    in_message, in_context = True, False
    for raw in lines[1:]:
        at = AT_LINE.match(raw)
        if at and lineno is None:
            lineno, line = int(at.group("lineno")), at.group("line")
            in_message = False
            continue
        if raw.startswith("Context:"):
            in_message, in_context = False, True
            continue
        if in_message and not raw.startswith("  "):
            message.append(raw)
            continue
        in_message = False
        if in_context:
            if raw.startswith("  "):
                context.append(raw[2:].rstrip())
            else:
                in_context = False
    values = {}
    for c in context:
        vm = VALUE.match(c)
        if vm:
            values[vm.group(1)] = vm.group(2)
    context = [c.strip() for c in context]
    column = COLUMN.search(text)
    failed, smells, output_differs = _checks_said(lines)
    return ParsedReceipt(headline, ename, evalue, lineno, line, tuple(context), text, values, "\n".join(message),
                         column=int(column.group(1)) if column else None, trace=_trace_said(lines), failed=failed,
                         smells=smells, output_differs=output_differs)


# how a receipt's text says its failed checks and its value trace (receipt/text.py: _check_lines, _trace_lines)
FAILED_ITEM = re.compile(r"^  (FAILED: .*? -- |FAILED: |assert failed: |smell: |AssertionError: )(.*)$")
TRACED_CALL = re.compile(r"^  line (\d+), (\S+) called (\d+) time\(s\): (.*)$")
TRACED_RUNS = re.compile(r"^  line (\d+) \(ran (\d+) times\): (.*)$")
TRACED_ONCE = re.compile(r"^  line (\d+): (.*)$")
TRACED_RUN = re.compile(r"^(?:call|run) \d+: ")
RUN_SAID = re.compile(r"(?:^(?:call|run)|; run) (\d+): ")
NEXT_PAIR = re.compile(r"; (?=[A-Za-z_]\w* = )")  # a value holds `; ` too (a frame's columns)


def _checks_said(lines: list[str]) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """(details of the failed checks, smells, whether an output check failed) as a receipt's text says
    them: its headline's smell (`Smell: ...`), and the items under the headline (`  FAILED: check --
    detail`, `  smell: ...`, ...), each with its rows (indented by four)."""
    items: list[tuple[str, list[str]]] = []
    if lines and lines[0].startswith("Smell: "):
        items.append(("smell: ", [lines[0][len("Smell: "):]]))
    for raw in lines[1:]:
        if not raw.startswith("  "):
            break  # the items are under the headline; the trace, the effect and the output follow
        item = FAILED_ITEM.match(raw)
        if item:
            items.append((item.group(1), [item.group(2) if item.group(1) != "FAILED: " else ""]))
        elif raw.startswith("    ") and items:
            items[-1][1].append(raw[4:])
        else:
            items.append(("", []))  # another line under the headline (where, a passed check): its rows are its own
    details = [(kind, (f"{rows[0]} failed: " + "\n".join(rows[1:])) if kind == "AssertionError: " else "\n".join(rows))
               for kind, rows in items if kind]
    output_differs = any(kind == f"FAILED: {name} -- " for kind, _ in items for name in OUTPUT_CHECKS)
    return tuple(d for _, d in details), tuple(d for kind, d in details if kind == "smell: "), output_differs


def _trace_said(lines: list[str]) -> tuple[TracedLine, ...]:
    """The value trace as a receipt's text says it: each traced line's heading (`  line 4 (ran 2 times):
    ...`), then its steps (`    source -> value`) and its runs (`    run 2: a = 1; b = 2`, several on one
    line when short; a call's `    call 2: ...`; a line run once says its values alone)."""
    if TRACE_HEADING not in lines:
        return ()
    found: list[tuple[tuple, list[str]]] = []
    for raw in lines[lines.index(TRACE_HEADING) + 1:]:
        if not raw.startswith("  "):
            break
        call, runs, once = TRACED_CALL.match(raw), TRACED_RUNS.match(raw), TRACED_ONCE.match(raw)
        if call:
            found.append(((int(call.group(1)), call.group(4), call.group(2), int(call.group(3))), []))
        elif runs or once:
            head = (int(runs.group(1)), runs.group(3), None, int(runs.group(2))) if runs else \
                (int(once.group(1)), once.group(2), None, 1)
            found.append((head, []))
        elif raw.startswith("    ") and found:
            found[-1][1].append(raw[4:])
    return tuple(_traced_line(*head, said) for head, said in found)


def _traced_line(lineno: int, line: str, func: str | None, hits: int, said: list[str]) -> TracedLine:
    """One traced line from the lines under its heading: its runs are the last (the last line alone for
    a line run once), its steps the ones before."""
    runs, steps = [], []
    for at, text in enumerate(said):
        if (func is not None or hits > 1) and TRACED_RUN.match(text):
            parts = RUN_SAID.split(text)  # ['', '1', 'a = 1', '2', 'a = 2']: runs said on one line when short
            runs += [(int(n), _pairs(values)) for n, values in zip(parts[1::2], parts[2::2])]
        elif func is None and hits <= 1 and at == len(said) - 1:
            runs.append((1, _pairs(text)))
        else:
            source, _, value = text.partition(" -> ")
            steps.append((source, value))
    return TracedLine(lineno, line, func, hits, tuple(runs), steps=tuple(steps))


def _pairs(said: str) -> tuple[tuple[str, str], ...]:
    """`a = 1; b = frame shape (2, 3); n: [2, 4]` as (("a", "1"), ("b", "frame shape (2, 3); n: [2, 4]"))."""
    return tuple((name, value) for name, _, value in (pair.partition(" = ") for pair in NEXT_PAIR.split(said)) if name)


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
    return trees.parsed(code)  # shared: read, never changed


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
        if tok.type == tokenize.NAME and tok.string == old and not (prev and prev.string == "."):
            if line is None or tok.start[0] == line:
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
    at = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("import ", "from ")) or stripped.startswith("#") or not stripped:
            if stripped.startswith(("import ", "from ")):
                at = i + 1
            continue
        break
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


def on_line(node: ast.AST, lineno: int | None) -> bool:
    """Whether the node spans the failing line (every node when the line is unknown)."""
    if lineno is None or not hasattr(node, "lineno"):
        return lineno is None
    return node.lineno <= lineno <= (node.end_lineno or node.lineno)


def calls_on_line(tree: ast.Module, lineno: int | None, name: str | None = None) -> list[ast.Call]:
    """Calls on the failing line (innermost first), optionally only those to `name` or `x.name`."""
    found = []
    for node in trees.walk(tree):
        if isinstance(node, ast.Call) and on_line(node, lineno):
            if name is None or call_name(node) == name:
                found.append(node)
    return sorted(found, key=lambda n: (n.end_col_offset - n.col_offset) + 1000 * (n.end_lineno - n.lineno))


def call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


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

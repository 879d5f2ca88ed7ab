"""A cell's IPython syntax seen as Python, line for line, and the way back.

IPython turns `%matplotlib inline`, `!pip install x`, `df?` and `files = !ls` into calls
(`get_ipython().run_line_magic(...)`) before Python sees the cell. Two views of a cell, each with
every line where the cell has it, so an error's line number is the cell's:
- `ran(source, shell)`: what the runner executes. IPython's own transform; a magic continued over
  several lines with `\\` keeps its lines (as blank ones); a `%%time` or `%%timeit` body runs as
  plain Python, once, so that its errors are raised at their lines (IPython 8's `%%time` prints an
  error and carries on; the timing is not measured in a sandbox).
- `readable(source)`: what the rules and the guard read: the same, except that a `%time`/`%timeit`
  statement and a `%%time`/`%%timeit` body stand as plain Python, so a repair reaches
  inside them. `View.back(code)` puts the IPython lines back into a repaired view.
Runs in kernels and on the host; IPython is imported on first use.
"""

from __future__ import annotations

import ast
import difflib
import functools
import re
import weakref
from dataclasses import dataclass

BODY_MAGICS = frozenset({"time", "timeit"})  # cell magics whose body is Python (`%%capture`'s binds its output)
STATEMENT_MAGICS = frozenset({"time", "timeit"})  # line magics whose argument is one Python statement
TIMEIT_OPTIONS = re.compile(r"^(?:\s*-(?:[nrp]\s*\d+|[tcqo]))*\s*")  # `-n 3 -r 1 -q ` before timeit's code
CELL_MAGIC = re.compile(r"^%%(\w+)")
LINE_MAGIC = re.compile(r"^(\s*)%(\w+)(\s+|$)")


@dataclass(frozen=True)
class Special:
    """One line of a view that stands for IPython syntax: `kind` 'opaque' (a magic, shell or help line
    as IPython's call), 'statement' (a `%timeit` line as its statement: `prefix` goes back before it),
    'header' (a `%%time` line: blank, or a `%%timeit`'s setup statement after `prefix`)."""

    index: int
    kind: str
    original: str
    prefix: str = ""


@dataclass(frozen=True)
class View:
    """A cell as Python the rules can parse (`python`), and what stands for its IPython syntax."""

    source: str
    python: str
    special: tuple[Special, ...] = ()

    @property
    def plain(self) -> bool:
        return not self.special

    def back(self, code: str) -> str | None:
        """The repaired view `code` with the cell's IPython lines put back; None when the repair
        changed or dropped one (a magic's words are not the rules' to edit)."""
        if self.plain:
            return code
        view, lines = self.python.splitlines(), code.splitlines()
        mapped = _aligned(view, lines)
        header = None
        for special in self.special:
            j = mapped.get(special.index)
            if j is None:
                return None
            if special.kind == "opaque":
                if lines[j] != view[special.index]:
                    return None
                lines[j] = special.original
            elif lines[j] == view[special.index]:
                lines[j] = special.original
            else:
                if special.kind == "header" and not view[special.index].strip():
                    return None  # something written on the blank line a `%%time` stands on
                indent = re.match(r"\s*", special.original).group(0)
                lines[j] = indent + special.prefix + lines[j].strip()
            header = j if special.kind == "header" else header
        if header is not None:  # a line written before a cell magic: the magic stays its first line
            line = lines.pop(header)
            lines.insert(min(header, next((n for n, text in enumerate(lines) if text.strip()), header)), line)
        return "\n".join(lines) + ("\n" if code.endswith("\n") else "")


def readable(source: str) -> View | None:
    """The cell as Python the rules and the guard can read, line for line; None for a cell magic
    whose body is not Python (`%%bash`, `%%html`, ...)."""
    if _parses(source):
        return View(source, source)
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first][:1].isspace():
        return None  # IPython dedents a cell that starts indented: its lines would not be the cell's
    magic = CELL_MAGIC.match(lines[first])
    if magic:
        if magic.group(1) not in BODY_MAGICS:
            return None
        head = _header(first, lines[first], magic.group(1))
        body = readable("\n".join(lines[first + 1:]))
        if body is None:
            return None
        python = lines[:first] + [_setup(lines[first], magic.group(1))] + body.python.splitlines()
        shifted = tuple(Special(s.index + first + 1, s.kind, s.original, s.prefix) for s in body.special)
        return View(source, _joined(python, source), (head, *shifted))
    try:
        transformed = _transform(source)
    except Exception:  # noqa: BLE001 - what IPython cannot read is read as Python (a syntax error to repair)
        return View(source, source)
    groups = _groups(lines, transformed.splitlines())
    if groups is None:
        return None
    python, special = [], []
    for originals, call in groups:
        at = len(python)
        if originals == [call]:
            python.append(call)
            continue
        statement = _statement("\n".join(originals))
        if statement is not None:
            special.append(Special(at, "statement", originals[0], statement[0]))
            python.append(re.match(r"\s*", originals[0]).group(0) + statement[1])
            python += originals[1:]
            continue
        special += [Special(at + k, "opaque", line) for k, line in enumerate(originals)]
        python += [call] + [""] * (len(originals) - 1)
    return View(source, _joined(python, source), tuple(special))


def ran(source: str, shell=None) -> str:
    """What the runner executes for `source`: IPython's transform of it (the shell's, when one is
    given), with the cell's line numbers; a `%%time`-like body as plain Python."""
    if _parses(source):
        return source
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    magic = CELL_MAGIC.match(lines[first]) if first is not None else None
    if magic and magic.group(1) in BODY_MAGICS:
        body = ran("\n".join(lines[first + 1:]), shell)
        return _joined(lines[:first] + [_setup(lines[first], magic.group(1))] + body.splitlines(), source)
    transformed = _transform(source, shell)
    if magic or len(transformed.splitlines()) == len(lines):
        return transformed
    groups = _groups(lines, transformed.splitlines())
    if groups is None:
        return transformed
    return _joined([line for originals, call in groups for line in [call] + [""] * (len(originals) - 1)], source)


# ---------------------------------------------------------------- the parts


def _parses(source: str) -> bool:
    return parsed(source) is not None


def _transform(source: str, shell=None) -> str:
    """IPython's transform of the cell, its leading blank lines kept (IPython drops them)."""
    lines = source.splitlines(keepends=True)
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if shell is not None:
        python = shell.transform_cell("".join(lines[blank:]))
    else:
        from IPython.core.inputtransformer2 import TransformerManager

        python = TransformerManager().transform_cell("".join(lines[blank:]))
    return "".join(lines[:blank]) + python


def _groups(lines: list[str], transformed: list[str]) -> list[tuple[list[str], str]] | None:
    """The cell's lines grouped with the Python line that stands for them: a line as it is, or a magic
    (continued over several lines with `\\`) and its call; None when the two do not line up."""
    groups, i, j = [], 0, 0
    while i < len(lines) and j < len(transformed):
        end = i
        if lines[i] != transformed[j]:
            while end + 1 < len(lines) and lines[end].rstrip().endswith("\\"):
                end += 1
        groups.append((lines[i:end + 1], transformed[j]))
        i, j = end + 1, j + 1
    if any(line.strip() for line in lines[i:]) or any(t.strip() for t in transformed[j:]):
        return None
    return groups + [([line], line) for line in lines[i:]]


def _statement(original: str) -> tuple[str, str] | None:
    """(`%timeit -n 3 `, the statement's first line) of a `%time`/`%timeit` line (with the lines it
    continues on), else None."""
    m = LINE_MAGIC.match(original)
    if not m or m.group(2) not in STATEMENT_MAGICS:
        return None
    rest = original[m.end():]
    options = TIMEIT_OPTIONS.match(rest).group(0) if m.group(2) == "timeit" else ""
    text = rest[len(options):]
    if not text.strip() or not _parses(text):
        return None
    return original[len(m.group(1)):m.end()] + options, text.split("\n", 1)[0]


def _header(index: int, line: str, name: str) -> Special:
    setup = _setup(line, name)
    return Special(index, "header", line, line[: len(line) - len(setup)] if setup else "")


def _setup(line: str, name: str) -> str:
    """The Python a cell magic's line holds: `%%timeit -n 2 x = make()` -> `x = make()`; else ''."""
    if name != "timeit":
        return ""
    rest = line[len("%%timeit"):]
    text = rest[len(TIMEIT_OPTIONS.match(rest).group(0)):]
    return text if text.strip() and _parses(text) else ""


def _aligned(view: list[str], lines: list[str]) -> dict[int, int]:
    """Where each line of the view went in the repaired lines (kept, or edited in place)."""
    mapped = {}
    matcher = difflib.SequenceMatcher(None, view, lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or tag == "replace" and i2 - i1 == j2 - j1:
            mapped.update(zip(range(i1, i2), range(j1, j2)))
    return mapped


def _joined(lines: list[str], source: str) -> str:
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


# One parse and one walk per source text, shared by the readers of a cell (the runner, the smells, the verdict's
# asserts, the names a snapshot shares, the rules' repairs, the guard): on a 40,000-line cell each used to parse and
# walk it again. The tree is shared: read it, never change it (a rule that edits a tree parses its own). A text
# and the same text with or without its final newlines are one tree; big texts are kept apart from small ones
# (a check, a line) so that the small ones do not push a big tree out.
BIG = 20_000  # characters: a text this long is kept among the few big ones


def parsed(source: str) -> ast.Module | None:
    """The tree of `source` (shared: read only), None when it is not Python."""
    text = source.rstrip("\n")
    return (_parsed_big if len(text) >= BIG else _parsed_small)(text)


def _parse_kept(source: str) -> ast.Module | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    _walked[tree] = None  # walked on first use (`walk`)
    return tree


_parsed_big = functools.lru_cache(maxsize=4)(_parse_kept)
_parsed_small = functools.lru_cache(maxsize=64)(_parse_kept)


def nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of `parsed(source)`, in `ast.walk`'s order; () when it is not Python."""
    tree = parsed(source)
    return () if tree is None else tuple(walk(tree))


# a tree `parsed` made -> its nodes once walked (None before); held as long as the caches above hold the tree
_walked: weakref.WeakKeyDictionary[ast.AST, tuple[ast.AST, ...] | None] = weakref.WeakKeyDictionary()


def walk(node: ast.AST):
    """`ast.walk(node)`, from the kept list when `node` is a tree `parsed` made (walked once: a walk of a big cell
    is then a loop over a tuple, not a generator through every field of every node)."""
    if node not in _walked:
        return ast.walk(node)
    kept = _walked[node]
    if kept is None:
        kept = _walked[node] = tuple(ast.walk(node))
    return kept

"""A `%%fixloop` cell as text: its magic line and its body. The one place that splits and joins them.

The magic line is the cell's first line when it is `%%fixloop` followed by nothing or by whitespace
(its arguments); the body is everything after that line's newline, exactly as typed. A body that is
one line of prose is an instruction (`split_instruction`).

And the names a notebook cell reads and writes (`cell_names`, `written_names`), the earlier cells that may
have caused a failure (`suspects`: `%fixloop auto`, notebook/cause.py, batch/upstream.py), the names a
NameError says are missing (`missing_names`): the names to keep go to a checkpoint (kernel/checkpoint.py)
as a list, those to share to a sandbox's snapshot.
"""

from __future__ import annotations

import ast
import re

from .kernel import snapshot

MAGIC = "%%fixloop"
LINE_MAGIC = "%fixloop"


def split_magic(source: str) -> tuple[str | None, str]:
    """(the `%%fixloop` line as typed, the body); (None, source) when the cell has no such line."""
    first, _, body = source.partition("\n")
    if first == MAGIC or (first.startswith(MAGIC) and first[len(MAGIC)].isspace()):
        return first, body
    return None, source


def join_magic(line: str | None, body: str) -> str:
    """The cell holding `body` under the magic `line` (None: the body alone)."""
    return body if line is None else f"{line}\n{body}"


def magic_arguments(line: str) -> str:
    """The arguments of a `%%fixloop` line (what IPython hands the magic as `line`)."""
    return line[len(MAGIC):].strip() if line.startswith(MAGIC) else line.strip()


def magic_line(arguments: str = "") -> str:
    """The `%%fixloop` line for `arguments`."""
    return f"{MAGIC} {arguments}".rstrip()


# ---------------------------------------------------------------- code or an instruction

KEYWORD_START = re.compile(r"^(?:(?:async\s+)?def\s+\w+\s*[(:]|class\s+\w+\s*[(:]|lambda\b|@\w|from\s+[\w.]+\s+import\b"
                           r"|import\s+[\w.]+\s+as\b)")
NAME_START = re.compile(r"^[A-Za-z_]\w*\s*(?:\.[A-Za-z_]|[(\[]|=(?!=)|[-+*/%@&|^]=)")
CALLS = re.compile(r"[A-Za-z_]\w*[(\[]")  # f( or x[
ASSIGNS = re.compile(r"(?<![=!<>])=(?!=)|[=!<>]=")
OPERATORS = {"+", "-", "*", "/", "//", "%", "**", "<", ">", "->", "&", "|", "^", "@", "+=", "-="}
WORD = re.compile(r"^[A-Za-z]+(?:['’-][A-Za-z]+)*[.,;:!?]?$")  # a word, perhaps with its punctuation


def looks_like_prose(text: str) -> bool:
    """Whether one line that is not valid Python reads as an instruction rather than broken code.

    Code that fails to parse is code to repair: `df.groupby('a'].sum()`, `print("x"`,
    `for i in range(3) print(i)`. Prose is at least three words, starts with a word, and has few code
    marks (calls, subscripts, assignments, operators) for its length: `add a column with the total`,
    `use df.groupby('region') to sum the amount`.
    """
    text = text.strip()
    try:
        ast.parse(text)
        return False
    except SyntaxError:
        pass
    if KEYWORD_START.match(text) or NAME_START.match(text):
        return False
    words = text.split()
    if len(words) < 3 or not WORD.match(words[0]):
        return False
    plain = sum(bool(WORD.match(w)) for w in words)
    marks = len(CALLS.findall(text)) + len(ASSIGNS.findall(text)) + sum(w in OPERATORS for w in words)
    return 2 * plain >= len(words) and 4 * marks <= len(words)


def split_instruction(body: str, instruction: str | None) -> tuple[str, str | None]:
    """(code, instruction) of a cell body: a body that is one line of prose is the instruction, not code."""
    text = body.strip()
    if instruction is None and text and "\n" not in text and looks_like_prose(text):
        return "", text
    return body, instruction


# ---------------------------------------------------------------- what an instruction states

_CONTAINER = (r"(?:variable|var|data ?frame|frame|series|list|dict(?:ionary)?|array|set|tuple|function|result|table|"
              r"object|value)")
_NAMED_AS = [
    re.compile(rf"\b{_CONTAINER}\s+(?:called|named)\s+[`'\"]?([A-Za-z_]\w*)", re.I),
    re.compile(r"\b(?:call|name)\s+it\s+[`'\"]?([A-Za-z_]\w*)", re.I),
    re.compile(r"\b(?:assign|save|store|keep|put)\b[^.;]*?\b(?:to|in|into|as)\s+(?:a\s+(?:new\s+)?)?"
               r"(?:variable\s+)?[`'\"]([A-Za-z_]\w*)[`'\"]", re.I),
]
_NOT_NAMES = frozenset({"a", "an", "the", "it", "this", "that", "them", "called", "named", "variable"})


def instruction_names(instruction: str | None) -> tuple[str, ...]:
    """The names an instruction says the code must define: `assign it to a variable called discipline`,
    `... and call it totals`, `store the result in 'top3'`. Said, not guessed: a column called X or a
    name in prose without such words is not one."""
    found: list[str] = []
    for pattern in _NAMED_AS:
        for name in pattern.findall(instruction or ""):
            if name.lower() not in _NOT_NAMES and name.isidentifier() and name not in found:
                found.append(name)
    return tuple(found)


_MAKE_VERBS = (r"create|make|build|construct|define|generate|set|reset|initiali[sz]e|redefine|re-?create|overwrite|"
               r"replace|load|read|write|assign|simulate|draw|sample|empty|clear")


def asks_to_make(instruction: str | None, name: str) -> bool:
    """Whether an instruction asks for `name` to be made anew: it is one of `instruction_names`, or a
    verb of making comes a few words before it (`Create a DataFrame df from ...`, `reset counts to ...`)."""
    if name in instruction_names(instruction):
        return True
    prose = re.sub(r"```.*?```", " ", instruction or "", flags=re.S)
    return bool(re.search(rf"\b(?:{_MAKE_VERBS})\b(?:\W+\w+){{0,6}}?\W+`?{re.escape(name)}\b", prose, re.I))


_ASKS_TO_SEE = re.compile(
    r"(?:^|[.!?:,;]\s+|\n\s*)(?:select|return|show|print|display|calculate|compute|count|find|list|get|give|check|"
    r"how\s+(?:many|much|do|can|would)|what|which|is\s+there|are\s+there)\b", re.I)


def asks_to_see(instruction: str | None) -> bool:
    """Whether an instruction asks for something to see (`Select the rows ...`, `How many teams ...?`,
    `Print the version`, `For each month, find ...`): a sentence or clause of it starts with such a word.
    Code blocks in it are not read."""
    prose = re.sub(r"```.*?```", " ", instruction or "", flags=re.S)
    return bool(_ASKS_TO_SEE.search(prose.strip()))


_STATES = re.compile(r"\b(?:should|answer|as follows|goal is|expected|expect|result is|output is)\b", re.I)
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_CODE_LINE = re.compile(r"^\s*(?:>>>|\.\.\.\s|import |from |def |class |print\(|for |if )|^\s*[\w.\[\]'\"]+\s*=[^=]")


def stated_output(instruction: str | None) -> str | None:
    """The output an instruction states (`You should end up with the answer as follows:` and a fenced
    block; `The answer should be:`, `These values should therefore be`), the last such block; None when
    it states none. A block of code (assignments, imports, a `>>>` session) is an example, not an output;
    a block with no word or number states nothing to check."""
    found = None
    for match in _FENCE.finditer(instruction or ""):
        before = instruction[:match.start()].rstrip()
        said = before[max(before.rfind("\n\n"), before.rfind(". "), 0):]
        block = match.group(1).strip("\n")
        code = any(_CODE_LINE.match(line) for line in block.splitlines())
        if re.search(r"\w", block) and _STATES.search(said) and not code:
            found = block
    return found


def result_shown(code: str, earlier: bool = False) -> tuple[str, str] | None:
    """`code` with the name its last statement assigns shown on a line of its own (`top = df.head()` ->
    `... top`), and that name; None when its last statement assigns no single name (or it does not parse).
    `earlier`: else the name the last top-level statement that assigns one name assigns, where the statements
    after it assign nothing at top level (`rows = df[df.age.isna()]` then `rows.reset_index(drop=True,
    inplace=True)`, or a loop that fills `rows`): the value the code made last, for a run that showed nothing."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    for last in reversed(body if earlier else body[-1:]):
        targets = _targets(last)
        if targets is None:
            continue  # a call, a loop, an `if`: it assigns no name of the cell's top level
        if len(targets) != 1 or not isinstance(targets[0], (ast.Name, ast.Subscript, ast.Attribute)):
            return None
        name = ast.unparse(targets[0])
        return f"{code.rstrip()}\n{name}\n", name
    return None


def _targets(statement: ast.stmt) -> list[ast.expr] | None:
    """What a top-level statement assigns to ([]: an import, a definition, ...), None when it assigns to nothing
    of the top level (an expression, a loop, an `if`, `with`, `try`: what they make is not read here)."""
    if isinstance(statement, ast.Assign):
        return statement.targets
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return [statement.target]
    if isinstance(statement, (ast.Expr, ast.For, ast.While, ast.If, ast.With, ast.Try, ast.Pass, ast.Delete)):
        return None
    return []


def example_assignments(instruction: str | None) -> frozenset[str]:
    """The assignments an instruction's code examples make (```python df = pd.DataFrame(...)```, a `>>>`
    session), each as `ast.unparse` writes it: what the instruction shows the user's data as."""
    found: set[str] = set()
    for match in _FENCE.finditer(instruction or ""):
        for source in _statements(match.group(1)):
            try:
                body = ast.parse(source).body
            except SyntaxError:
                continue
            found |= {ast.unparse(s) for s in body if isinstance(s, ast.Assign)}
    return frozenset(found)


def _statements(block: str) -> list[str]:
    """A code block's source: whole, or each statement of a `>>>` session (continuation lines joined,
    whether or not they start with `...`; the output lines after a statement left out)."""
    lines = block.splitlines()
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return [block]
    out, current = [], None
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(">>>"):
            current = stripped[3:].removeprefix(" ")
            out.append(current)
        elif current is not None and not _complete(out[-1]):
            out[-1] += "\n" + (stripped[3:].removeprefix(" ") if stripped.startswith("...") else stripped)
        else:
            current = None  # output
    return out


def _complete(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def with_line_ends_of(original: str, code: str) -> str:
    """`code` with each line that is one of `original`'s but for trailing whitespace written as `original`
    writes it: a reply's code comes with its lines' trailing spaces stripped, and a diff would show every
    such line as changed."""
    import difflib  # only when a reply is read: `import jupyter_fixloop` stays cheap

    old, new = original.splitlines(), code.splitlines()
    if not old or not new:
        return code
    matcher = difflib.SequenceMatcher(a=[line.rstrip() for line in old], b=[line.rstrip() for line in new],
                                      autojunk=False)
    lines = list(new)
    for a, b, size in matcher.get_matching_blocks():
        lines[b:b + size] = old[a:a + size]
    return "\n".join(lines) + ("\n" if code.endswith("\n") else "")


# ---------------------------------------------------------------- the names a cell reads and writes

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

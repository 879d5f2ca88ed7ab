"""Built-in repairs for code that does not compile: colons, brackets, quotes, indentation.

The error message says what is wrong and where; it rarely says which of a few edits is right. So
each repair makes the few edits a person would consider, in order of likelihood, and keeps the
first that compiles (or, for a cell with several syntax errors, the first that moves the error
further down: the next round fixes the next one).
"""

from __future__ import annotations

import re

from .edits import ParsedReceipt
from .registry import FIRST, MECHANICAL, repair
from .tables import ASCII, COMPOUND, OTHER_SPELLINGS

CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _error_line(code: str) -> int | None:
    try:
        compile(code, "<cell>", "exec")
    except SyntaxError as exc:
        return exc.lineno or 0
    except ValueError:
        return 0
    return None


def _best(code: str, candidates, lineno: int) -> str | None:
    """The first candidate that compiles; else the first whose error comes later than `lineno`."""
    progress = None
    for candidate in candidates:
        if candidate is None or candidate == code:
            continue
        where = _error_line(candidate)
        if where is None:
            return candidate
        if progress is None and where > lineno:
            progress = candidate
    return progress


def _code_end(line: str) -> int:
    """Where the code on a line ends (before a trailing comment, outside strings)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return len(line[:i].rstrip())
    return len(line.rstrip())


def _with_line(lines: list[str], n: int, line: str) -> str:
    """The cell with line `n` written as `line`."""
    return "\n".join(lines[:n] + [line] + lines[n + 1:])


def _append(lines: list[str], index: int, text: str) -> str:
    end = _code_end(lines[index])
    return _with_line(lines, index, lines[index][:end] + text + lines[index][end:])


# ---------------------------------------------------------------- SyntaxError


@repair(MECHANICAL, FIRST + 20)
def syntax(code: str, receipt: ParsedReceipt) -> str | None:
    """Fix a SyntaxError: missing colon, unclosed/unmatched/mismatched bracket, open quote, `print x`, `=` for `==`."""
    if receipt.ename != "SyntaxError" or not receipt.lineno:
        return None
    lines = code.split("\n")
    n = receipt.lineno - 1
    if n >= len(lines):
        return None
    candidates = []
    for said, edits in SLIPS:  # in order of likelihood
        m = re.search(said, receipt.evalue)
        candidates += edits(lines, n, m, receipt.column) if m else []
    return _best(code, candidates, receipt.lineno)


def _spelled_otherwise(lines: list[str], n: int) -> list[str]:
    out = []
    for pattern, new in OTHER_SPELLINGS.items():
        line = re.sub(pattern, new, lines[n])
        if line != lines[n]:
            out.append(_with_line(lines, n, line))
    return out


def _close_brace(lines: list[str], n: int) -> list[str]:
    """`f"{x"`: close the replacement field before the string's closing quote."""
    line = lines[n]
    return [_with_line(lines, n, line[: m.end()] + "}" + line[m.end():])
            for m in re.finditer(r"\{[^{}'\"]*(?=['\"])", line)]


def _close_bracket(lines: list[str], n: int, closer: str) -> list[str]:
    """The closer at the end of the opening line first, then at the end of each later line."""
    out = [_append(lines, n, closer)]
    for k in range(n + 1, len(lines)):
        if lines[k].strip():
            out.append(_append(lines, k, closer))
    return out


def _positions(line: str, ch: str, column: int | None) -> list[int]:
    found = [i for i, c in enumerate(line) if c == ch]
    if column is not None and column - 1 in found:
        found.remove(column - 1)
        found.insert(0, column - 1)
    else:
        found.reverse()
    return found


def _swap_char(lines: list[str], n: int, ch: str, new: str, column: int | None) -> list[str]:
    """Each `ch` of line `n` written as `new` ('' drops it), the one the error points at first."""
    return [_with_line(lines, n, lines[n][:i] + new + lines[n][i + 1:]) for i in _positions(lines[n], ch, column)]


def _close_quote(lines: list[str], n: int, column: int | None) -> list[str]:
    line = lines[n]
    starts = [i for i, c in enumerate(line) if c in "'\""]
    if column is not None and 0 < column <= len(line) and line[column - 1] in "'\"":
        starts.insert(0, column - 1)
    end = len(line.rstrip())
    body, tail = line[:end], line[end:]
    out = []
    for i in starts[:3]:
        # close before a trailing bracket the string was inside of, or at the end
        m = re.search(r"[)\]}:,]+$", body[i + 1:])
        if m:
            cut = i + 1 + m.start()
            out.append(_with_line(lines, n, body[:cut] + line[i] + body[cut:] + tail))
        out.append(_with_line(lines, n, body + line[i] + tail))
    return out


def _print_call(lines: list[str], n: int) -> str:
    line = lines[n]
    m = re.match(r"^(\s*)print\s+(.*?)\s*$", line[: _code_end(line)])
    if not m:
        return "\n".join(lines)
    return _with_line(lines, n, f"{m.group(1)}print({m.group(2)})" + line[_code_end(line):])


def _double_equals(lines: list[str], n: int, column: int | None) -> list[str]:
    line = lines[n]
    spots = [m.start() for m in re.finditer(r"(?<![=!<>:+\-*/%&|^])=(?!=)", line)]
    if column is not None:
        spots.sort(key=lambda i: abs(i - (column - 1)))
    return [_with_line(lines, n, line[:i] + "==" + line[i + 1:]) for i in spots]


def _insert_comma(lines: list[str], n: int) -> list[str]:
    line = lines[n]
    return [_with_line(lines, n, line[: m.start()] + "," + line[m.start():])
            for m in re.finditer(r"(?<=[\w'\")\]}])(\s+)(?=[\w'\"(\[{])", line)]


# what the message says, and the edits a person would consider for it (`m`: its match; `column`: where it points),
# in order of likelihood (Python's other spellings whatever it says)
SLIPS = (
    (r"expected ':'|^invalid syntax", lambda lines, n, m, column: [_append(lines, n, ":")] if "expected ':'" in m.string
     or COMPOUND.match(lines[n]) and not lines[n][: _code_end(lines[n])].endswith(":") else []),
    (r"'([(\[{])' was never closed", lambda lines, n, m, column: _close_bracket(lines, n, CLOSERS[m.group(1)])),
    (r"unmatched '([)\]}])'", lambda lines, n, m, column: _swap_char(lines, n, m.group(1), "", column)),
    (r"closing parenthesis '([)\]}])' does not match opening parenthesis '([(\[{])'",
     lambda lines, n, m, column: _swap_char(lines, n, m.group(1), CLOSERS[m.group(2)], column)),
    (r"unterminated string literal", lambda lines, n, m, column: _close_quote(lines, n, column)),
    (r"Missing parentheses in call to 'print'", lambda lines, n, m, column: [_print_call(lines, n)]),
    (r"instead of '='", lambda lines, n, m, column: _double_equals(lines, n, column)),
    (r"forgot a comma", lambda lines, n, m, column: _insert_comma(lines, n)),
    (r"f-string: expecting '}'", lambda lines, n, m, column: _close_brace(lines, n)),
    (r"", lambda lines, n, m, column: _spelled_otherwise(lines, n)),
    (r"invalid character", lambda lines, n, m, column: ["\n".join(lines).translate(str.maketrans(ASCII))]),
)


# ---------------------------------------------------------------- IndentationError


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


@repair(MECHANICAL, FIRST + 30)
def indentation(code: str, receipt: ParsedReceipt) -> str | None:
    """Fix an IndentationError: indent a block's body, dedent a stray line, align to an outer level, tabs."""
    if receipt.ename not in ("IndentationError", "TabError") or not receipt.lineno:
        return None
    lines = code.split("\n")
    n = receipt.lineno - 1
    if n >= len(lines):
        return None
    message = receipt.evalue
    if receipt.ename == "TabError" or "tabs and spaces" in message:
        # tabs become spaces; a wrong level that shows then is the next round's IndentationError
        return "\n".join(_indent_of(x).replace("\t", "    ") + x.lstrip() for x in lines)
    edits = next((edits for said, edits in INDENTS if message.startswith(said)), None)
    return _best(code, edits(lines, n), receipt.lineno) if edits else None


def _previous(lines: list[str], n: int) -> int | None:
    for k in range(n - 1, -1, -1):
        if lines[k].strip() and not lines[k].strip().startswith("#"):
            return k
    return None


def _block(lines: list[str], n: int) -> list[int]:
    """Line n and the following lines indented like it (blank lines included)."""
    indent, block = _indent_of(lines[n]), [n]
    for k in range(n + 1, len(lines)):
        if not lines[k].strip():
            continue
        if _indent_of(lines[k]) != indent or not lines[k].startswith(indent):
            break
        block.append(k)
    return block


def _shift(lines: list[str], rows: list[int], new_indent: str, old_indent: str) -> str:
    copy = list(lines)
    for k in rows:
        copy[k] = new_indent + copy[k][len(old_indent):] if copy[k].startswith(old_indent) else copy[k]
    return "\n".join(copy)


def _reindent(lines: list[str], n: int, more: str) -> list[str]:
    """Line n (then its block) at the indentation of the line above plus `more`: a block's body ("    "), or a stray
    line back at its level ("")."""
    prev = _previous(lines, n)
    if prev is None and more:
        return []
    target = (_indent_of(lines[prev]) if prev is not None else "") + more
    old = _indent_of(lines[n])
    return [_shift(lines, [n], target, old), _shift(lines, _block(lines, n), target, old)]


def _align(lines: list[str], n: int) -> list[str]:
    old = _indent_of(lines[n])
    levels = sorted({_indent_of(x) for x in lines[:n] if x.strip()}, key=lambda s: abs(len(s) - len(old)))
    return [_shift(lines, _block(lines, n), level, old) for level in levels]


# what an IndentationError says, and the edits a person would consider for it
INDENTS = (
    ("expected an indented block", lambda lines, n: _reindent(lines, n, "    ")),  # a block's body
    ("unexpected indent", lambda lines, n: _reindent(lines, n, "")),  # a stray line back at its level
    ("unindent does not match", _align),
)

"""Characters a reader cannot see, one definition: shown as escapes wherever code or a sandbox's text is
shown (terminal, report, HTML, widget), and flagged in a candidate before anyone reviews it.

Hidden: control characters (ESC and so CSI/OSC sequences, CR, BS, the C1 block: a terminal acts on
them), format characters (bidi overrides and isolates, zero-width spaces and joiners, the BOM, tag
characters), private-use, surrogate and unassigned code points, line and paragraph separators,
spaces that are not U+0020 (U+00A0 and the typographic ones), and the blank lookalikes (Hangul
fillers, variation selectors, the combining grapheme joiner, the braille blank). Newline and tab
stay as they are. A hidden character is shown as Python writes it in `ascii()`: `\\x1b`, `\\r`,
`\\u202e`, `\\U000e0041`.
"""

from __future__ import annotations

import re
import unicodedata

HIDDEN_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp", "Zs"}
BLANK_LOOKALIKES = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
_SHOWN = frozenset("\n\t ")
# Python's own line breaks (a lone CR ends a line of code too); other separators stay inside the line
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def is_hidden(ch: str) -> bool:
    """Whether a reader cannot see `ch` as what it is (one character)."""
    if ch in _SHOWN:
        return False
    code = ord(ch)
    return (unicodedata.category(ch) in HIDDEN_CATEGORIES or ch in BLANK_LOOKALIKES
            or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF)  # variation selectors


def visible(text: str) -> str:
    """`text` with every hidden character written as its escape (newlines and tabs kept)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(ascii(ch)[1:-1] if is_hidden(ch) else ch for ch in text)


def code_lines(code: str) -> list[str]:
    """The lines of `code` as Python reads them, each visible: a lone CR ends a line (Python runs what
    follows it as a statement of its own) and is shown at the end of that line as `\\r`."""
    out, start = [], 0
    for m in _LINE_BREAK.finditer(code):
        out.append(visible(code[start:m.start()]) + ("\\r" if m.group() == "\r" else ""))
        start = m.end()
    if start < len(code):
        out.append(visible(code[start:]))
    return out


def added(before: str, after: str) -> str:
    """The hidden characters `after` holds more of than `before`, named ('U+202E RIGHT-TO-LEFT OVERRIDE
    at line 3'), '' when none. A CR that ends a line before a newline is not counted."""
    def found(text: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for ch in text.replace("\r\n", "\n"):
            if is_hidden(ch):
                counts[ch] = counts.get(ch, 0) + 1
        return counts

    was, now = found(before), found(after)
    new = [ch for ch in now if now[ch] > was.get(ch, 0)]
    lines = after.replace("\r\n", "\n").split("\n")
    return ", ".join(f"U+{ord(ch):04X} {_name(ch)} at line {_line_of(lines, ch)}" for ch in new)


def _name(ch: str) -> str:
    return unicodedata.name(ch, {"\x1b": "ESCAPE", "\r": "CARRIAGE RETURN", "\b": "BACKSPACE"}.get(ch, "CONTROL"))


def _line_of(lines: list[str], ch: str) -> int:
    return next((n for n, line in enumerate(lines, 1) if ch in line), 1)


def clipped(text: str, width: int) -> str:
    """`text` within `width` characters for a line a person reads, cut after a whole word with "…" when
    it is longer (never inside a word; the whole text goes where there is room: the report, the record).
    The one place that shortens a reason, a warning or an error for display."""
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    ends = [m.start() for m in re.finditer(r"[\s,;:]", cut)]
    if ends and ends[-1] >= width // 2:
        cut = cut[:ends[-1]]
    elif text[width - 1:width].isalnum() and (m := re.search(r"\W\w*$", cut)) and m.start() > 0:
        cut = cut[:m.start() + 1]  # one long token (a path, code): cut where its last word starts
    return cut.rstrip(" ,;:(") + "…"

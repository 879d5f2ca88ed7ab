"""Checks read from what an instruction says of a column it cleans (the read checks of derived.py).

"strip the spaces around the member names" -> every value of `member` has none around it, and no value changed
otherwise (but for case and spacing); "put the names in title case", "make it lowercase" / "upper case" -> every
text value is in that case, none changed otherwise; "parse loan_date and due_date as dates", "convert fee to
numbers", "to True/False" -> those columns have that type and as many values are missing as before (text that means
no value, "n/a", "-", counted missing): none lost, none made up; "fill the missing genres with 'unknown'" -> none is
missing, the others unchanged, the filled ones 'unknown'; "rename the column ret to returned", "drop the isbn
column", "add a column loan_days" -> the columns asked for; "remove the loans that have no member" -> no row misses
`member`, and every row that had one is kept. Each names one column (or a list of them, "A and B") of the one frame
the instruction is about; anything else writes no check. An instruction that names a new variable to make ("call it
`clean`") is about that one, which the frame's checks do not read: nothing is read.

A check reads the frame the code shows when it holds the column (printed, displayed, shown or assigned last), else
the user's frame (a column cleaned in place); the values before are the user's frame's, sent with the check (up to
`MAX_SENT` rows; more, and only the form is checked). Like every read check it ranks candidates and is said to the
model when it fails, and is never evidence: the status stays `unverified`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from .. import kernel
from ..cell import instruction_names
from ..result import ReadCheck
from .selection import check_call

MAX_SENT = 5000  # rows of a column's values sent with a check (more: the form alone is checked)

_SENTENCE = re.compile(r"[^.;!?\n]+")
_CASES = (  # (pattern, how, words)
    (re.compile(r"\blower[\s-]*cased?\b|\blowercased?\b|\blower\s+the\s+case\b", re.I), "lower", "lower case"),
    (re.compile(r"\bupper[\s-]*cased?\b|\buppercased?\b|\bcapital\s+letters\b|\ball\s+caps\b", re.I), "upper",
     "upper case"),
    (re.compile(r"\btitle[\s-]*cased?\b|\btitlecase\b|\bproper\s+case\b", re.I), "title", "title case"),
    (re.compile(r"\bcapitali[sz]e[sd]?\b", re.I), "capitalized", "capitalized"),
)
_STRIP = re.compile(r"\b(?:strip|trim)\w*\b|\b(?:leading|trailing|surrounding)\s+(?:white\s*)?spaces?\b|"
                    r"\bspaces?\s+(?:around|at\s+(?:the\s+)?(?:start|end|ends))\b|\bwhitespace\b", re.I)
_COLLAPSE = re.compile(r"\b(?:double|multiple|repeated|consecutive)\s+(?:white\s*)?spaces?\b|\bcollapse\b", re.I)
_TYPES = (  # (pattern of the type asked, kind, words)
    (r"floats?|numbers?|numeric|numerical|integers?|ints?|float64|int64|decimals?", "numeric", "numeric"),
    (r"dates?|datetimes?|timestamps?|date\s*times?", "datetime", "dates (datetime)"),
    (r"booleans?|bools?|true\s*/\s*false|true\s+(?:and|or)\s+false", "bool", "booleans"),
)
_CONVERT = r"\b(?:parse|convert|cast|turn|change|make|transform|read|store)\b[^.;]*?\b(?:(?:in)?to|as)\s+(?:an?\s+)?"
_FILL = re.compile(r"\b(?:fill|impute|replace)\b[^.;]*?\b(?:missing|nan|null|na|empty|blank|none)\b|\bfillna\b", re.I)
_FILL_WITH = re.compile(r"\bwith\s+(?:(?:the\s+)?(?:value|string|word|text)\s+)?(?:'([^']*)'|\"([^\"]*)\"|`([^`]*)`|"
                        r"(-?\d+(?:\.\d+)?)\b(?!\s*%))", re.I)
_RENAME = re.compile(r"\brename\b[^.;]*?[`'\"]?\b([A-Za-z_]\w*)[`'\"]?\s+(?:to|as|into)\s+[`'\"]?([A-Za-z_]\w*)", re.I)
_DROP = re.compile(r"\b(?:drop|remove|delete|get\s+rid\s+of|discard)\b", re.I)
_ADD = re.compile(r"\b(?:add|create|make|insert)\b\s+(?:an?\s+)?(?:new\s+)?columns?\s+(?:called\s+|named\s+)?"
                  r"[`'\"]?([A-Za-z_]\w*)", re.I)
_ROWS = re.compile(r"\b(?:rows?|entries|records|lines)\b", re.I)
_NO_VALUE = re.compile(r"\b(?:no|without(?:\s+an?)?|missing(?:\s+an?)?|empty|blank)\s+(\w+)|"
                       r"(\w+)\s+(?:is|are)\s+(?:missing|empty|blank|null|nan)\b", re.I)
_HEADERS = re.compile(r"\bcolumns?\s+(?:names?|headers?|labels?|titles?)\b|\bheaders?\b|\bsnake[\s_-]*case\b|"
                      r"\brename\s+(?:all\s+)?(?:the\s+|its\s+|every\s+)?columns\b", re.I)  # the columns' names
_LISTED = re.compile(r"^(?:[\s,`'\"]|\band\b|\bthe\b|\bcolumns?\b|\bboth\b)*$", re.I)


def read(instruction: str, frames: Mapping[str, Mapping[str, object]], values: Mapping[str, object],
         frame: str | None) -> list[ReadCheck]:
    """The cleaning checks read from `instruction`, about the user's `frame` (its columns in `frames`, its values
    in `values` when held); none when no one frame is meant or the instruction names a new variable to make."""
    if frame is None or frame not in frames or instruction_names(instruction):
        return []
    prose = re.sub(r"```.*?```", " ", instruction, flags=re.S)
    columns = [c for c in frames[frame] if isinstance(c, str) and c]
    data = values.get(frame)
    counts = frames[frame]
    found: list[ReadCheck] = []
    for sentence in _SENTENCE.findall(prose):
        found += _sentence(sentence, frame, columns, data, counts)
    seen: set[str] = set()
    return [c for c in found if not (c.expr in seen or seen.add(c.expr))]


def _sentence(text: str, frame: str, columns: list[str], data, counts) -> list[ReadCheck]:
    renamed = _renamed(text, frame, columns)
    if renamed is not None:
        return [renamed]
    if _HEADERS.search(text):
        return []  # the case or spacing of the columns' names, not of a column's values
    named = _named(_unworded(text), columns)
    out = [c for c in (_added(text, frame, columns), _dropped(text, frame, columns, data)) if c is not None]
    if not named and not (out or _type_asked(text) or _ROWS.search(text) or _DROP.search(text) or _FILL.search(text)):
        named = _implied(text, data)
    if not named:
        return out
    kind = _type_asked(text)
    if kind is not None:
        return out + [_typed(frame, named, kind, data, counts)]
    if _ROWS.search(text) or _DROP.search(text):
        return out  # rows kept or dropped, a column dropped: not a column's values cleaned
    if _FILL.search(text):
        return out + [c for c in (_filled(text, frame, named, data),) if c is not None]
    hows = [(how, words) for pattern, how, words in _CASES if pattern.search(text)]
    if _COLLAPSE.search(text):
        hows.append(("collapsed", "no double spaces nor any around it"))
    elif _STRIP.search(text):
        hows.append(("stripped", "no spaces around it"))
    if len({h for h, _ in hows if h not in ("stripped", "collapsed")}) > 1:
        return out  # two cases asked at once: not read
    return out + [_cleaned(frame, column, how, words, data) for column in named for how, words in hows]


_CHANGES = {  # how -> a text value that cleaning would change
    "collapsed": lambda v: "  " in v.strip(), "stripped": lambda v: v != v.strip(),
    "lower": lambda v: v != v.lower(), "upper": lambda v: v != v.upper(), "title": lambda v: v != v.title(),
}


def _implied(text: str, data) -> list[str]:
    """The column a sentence that names none cleans, where one spacing or case is asked and only one text column of
    the user's frame holds values it would change ("some names have double spaces inside, collapse them to one":
    only `member` has any); else none. Read from the first `MAX_SENT` rows."""
    hows = [how for pattern, how, _ in _CASES if pattern.search(text)]
    hows += ["collapsed"] if _COLLAPSE.search(text) else ["stripped"] if _STRIP.search(text) else []
    if len(hows) != 1 or hows[0] not in _CHANGES or not hasattr(data, "columns"):
        return []
    try:
        found = [c for c in data.columns if isinstance(c, str) and c and any(
            isinstance(v, str) and _CHANGES[hows[0]](v) for v in list(data[c])[:MAX_SENT])]
    except Exception:  # a frame whose columns cannot be read as one Series each
        return []
    return found if len(found) == 1 else []


def _unworded(text: str) -> str:
    """The sentence without the words of a case or a type asked ("title case", "as dates"): not columns."""
    for pattern, _, _ in _CASES:
        text = pattern.sub(" ", text)
    return re.sub(rf"{_CONVERT}(?:{'|'.join(p for p, _, _ in _TYPES)})\b", lambda m: m[0][:m[0].rfind(' ')] + " ",
                  text, flags=re.I)


def _named(text: str, columns: list[str]) -> list[str]:
    """The columns a sentence names: one, or several listed together ("loan_date and due_date"); else none."""
    spots = []
    for c in sorted(columns, key=len, reverse=True):
        forms = {c, c.rstrip("s"), f"{c}s", re.sub(r"y$", "ies", c)} if c.isidentifier() else {c}
        for f in sorted(forms, key=len, reverse=True):
            hit = re.search(rf"(?<![\w]){re.escape(f)}(?![\w])", text, re.I)
            if hit and not any(s <= hit.start() < e for s, e, _ in spots):
                spots.append((hit.start(), hit.end(), c))
                break
    spots.sort()
    if len(spots) > 1 and not all(_LISTED.match(text[spots[n][1]:spots[n + 1][0]]) for n in range(len(spots) - 1)):
        return []
    return [c for _, _, c in spots]


def _literal(value):
    """A value as a Python literal the check can carry (None for a missing one), or raise ValueError."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "item"):  # a numpy scalar
        return _literal(value.item())
    raise ValueError(value)


def _before(data, column: str):
    """(values, labels) of the user's column, as literals: labels None where the index holds other values; (None,
    None) where the column cannot be sent (too long, values of other types)."""
    try:
        series = data[column]
        if getattr(series, "ndim", 1) != 1 or len(series) > MAX_SENT:
            return None, None
        values = [_literal(v) for v in series]
    except Exception:
        return None, None
    try:
        labels = [_literal(v) for v in series.index] if series.index.is_unique else None
        if labels is not None and any(v is None for v in labels):
            labels = None
    except ValueError:
        labels = None
    return values, labels


def _missing_before(data, counts, column: str) -> tuple[int | None, str]:
    """The values of the user's column missing before, text that means no value ("n/a", "-") counted, and how
    they were counted; else the NaN count the loop read (`counts`), else None."""
    try:
        series = data[column]
        words = kernel.selected.MISSING_WORDS
        return int(sum(1 for v in series if kernel.selected._missing(v) or
                       (isinstance(v, str) and v.strip().lower() in words))), " (text such as 'n/a' counted)"
    except Exception:
        found = counts.get(column) if isinstance(counts, Mapping) else None
        return (found, "") if isinstance(found, int) else (None, "")


def _typed(frame: str, columns: list[str], kind: str, data, counts) -> ReadCheck:
    words = dict((k, w) for _, k, w in _TYPES)[kind]
    missing = [_missing_before(data, counts, c) for c in columns]
    calls = " and ".join(check_call("typed", frame, [c], kind, m) for c, (m, _) in zip(columns, missing))
    if len(columns) == 1:
        said = f"column `{columns[0]}` of `{frame}` (or of the frame the code shows) is {words}"
        if missing[0][0] is not None:
            count, how = missing[0]
            said += f", and as many values are missing as before, {count}{how}: none lost, none made up"
        return ReadCheck(calls, said)
    listed = ", ".join(f"`{c}`" for c in columns)
    return ReadCheck(calls, f"columns {listed} of `{frame}` (or of the frame the code shows) are {words}, and as "
                            "many values are missing as before: none lost, none made up")


def _type_asked(text: str) -> str | None:
    for pattern, kind, _ in _TYPES:
        if re.search(rf"{_CONVERT}(?:{pattern})\b", text, re.I):
            return kind
    return None


def _cleaned(frame: str, column: str, how: str, words: str, data) -> ReadCheck:
    before, labels = _before(data, column) if data is not None else (None, None)
    said = f"every value of `{column}` in `{frame}` (or in the frame the code shows) has {words}" \
        if how in ("stripped", "collapsed") else \
        f"every value of `{column}` in `{frame}` (or in the frame the code shows) is in {words}"
    if before is not None:
        said += ", and no value changed otherwise"
    return ReadCheck(check_call("cleaned", frame, column, how, before, labels), said)


def _filled(text: str, frame: str, named: list[str], data) -> ReadCheck | None:
    if len(named) != 1:
        return None
    column = named[0]
    match = _FILL_WITH.search(text)
    operand = None
    if match:
        quoted = next((g for g in match.groups()[:3] if g is not None), None)
        operand = quoted if quoted is not None else float(match[4])
        if isinstance(operand, float) and operand.is_integer():
            operand = int(operand)
    before, labels = _before(data, column) if data is not None else (None, None)
    said = f"no value of `{column}` in `{frame}` (or in the frame the code shows) is missing"
    if operand is not None:
        said += f", the missing ones are now {operand!r}"
    if before is not None:
        said += ", and the others are unchanged"
    return ReadCheck(check_call("cleaned", frame, column, "filled", before, labels, operand), said)


def _renamed(text: str, frame: str, columns: list[str]) -> ReadCheck | None:
    match = _RENAME.search(text)
    if match is None or match[1] not in columns or match[2] in columns:
        return None
    old, new = match[1], match[2]
    return ReadCheck(check_call("columns_are", frame, [new], [old]),
                     f"`{frame}` (or the frame the code shows) has a column `{new}` and no column `{old}`")


def _added(text: str, frame: str, columns: list[str]) -> ReadCheck | None:
    match = _ADD.search(text)
    if match is None or match[1] in columns or match[1].lower() in ("with", "that", "for", "of", "to"):
        return None
    return ReadCheck(check_call("columns_are", frame, [match[1]], [], columns),
                     f"`{frame}` (or the frame the code shows) has a new column `{match[1]}`, and its other columns")


def _dropped(text: str, frame: str, columns: list[str], data) -> ReadCheck | None:
    """"drop the isbn column" -> no column `isbn`, the others kept; "remove the rows that have no member" -> no row
    misses `member`, the others kept."""
    if not _DROP.search(text):
        return None
    if _ROWS.search(text) or re.search(rf"\b{re.escape(frame)}\b|\b{re.escape(frame.rstrip('s'))}\b", text):
        return _rows_dropped(text, frame, columns, data)
    if not re.search(r"\bcolumns?\b", text, re.I):
        return None
    named = _named(text, columns)
    if not named:
        return None
    rest = [c for c in columns if c not in named]
    listed = ", ".join(f"`{c}`" for c in named)
    return ReadCheck(check_call("columns_are", frame, [], named, rest),
                     f"`{frame}` (or the frame the code shows) has no column {listed}, and its other columns")


def _rows_dropped(text: str, frame: str, columns: list[str], data) -> ReadCheck | None:
    match = _NO_VALUE.search(text)
    if match is None or data is None or re.search(r"\bor\b|\band\b", text[match.end():], re.I):
        return None
    named = _named(match[0], columns)
    if len(named) != 1:
        return None
    column = named[0]
    try:
        present = int(data[column].notna().sum())
    except Exception:
        return None
    return ReadCheck(check_call("rows_kept", frame, column, present),
                     f"no row of `{frame}` (or of the frame the code shows) misses `{column}`, and the {present} "
                     "rows that have one are kept")

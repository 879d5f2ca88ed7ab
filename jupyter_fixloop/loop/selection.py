"""Checks read from what an instruction says of the rows it asks for (the read checks of derived.py).

"Select the rows where the age is missing" -> every row the code hands over has `age` missing, and there is one
at least (the user's frame has such rows). The properties read, each of one column of the one frame the
instruction is about: missing / not missing, equal to a value the column holds ("where the animal is a cat"),
greater / less than a number (at least, at most, between ... and ... inclusive), the order rows are sorted by
("sort by age descending, then by visits"), the unique values of a column, and the year of a date column ("keep only
the loans from 2024", "orders since 2019", "from 2020 to 2022": the one date column named, else the one whose years
the words would split). A clause of several conditions
joined by "and" is read whole or not at all; one with "or", or a part the rules cannot read, writes no check.

Each check is evaluated on the value the code shows (its last line's value, or the one value its last line
prints or displays, kernel/selected.py's `SHOWN`), else on the user's frame (a selection assigned back to it),
never on printed text. Like every read check it may rank candidates and says why a code is kept or not, and is
never evidence: the status stays `unverified`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .. import kernel
from ..result import ReadCheck

_NUMBER = r"(-?\d+(?:\.\d+)?)"
# the clause of an instruction that says which rows: "the rows where ...", "rows for which ...", "rows the age is ..."
_ROWS = re.compile(r"\brows?\b\s+(?:(?:of|in)\s+`?\w+`?\s+)?(?:where|for\s+which|in\s+which|whose|that|with|when|"
                   r"(?=the\b))\s*(.+?)(?=[.;?!(]|,\s*(?:i\.?e|e\.?g|so|then|and\s+then)\b|$)", re.I | re.S)
_BETWEEN = re.compile(rf"\bbetween\s+{_NUMBER}\s+and\s+{_NUMBER}", re.I)
_COMPARE = (  # (pattern, op), the first that matches a part
    (re.compile(rf"(?:greater|more|larger|bigger|higher)\s+than\s+or\s+equal\s+to\s+{_NUMBER}", re.I), ">="),
    (re.compile(rf"(?:less|fewer|smaller|lower)\s+than\s+or\s+equal\s+to\s+{_NUMBER}", re.I), "<="),
    (re.compile(rf"(?:at\s+least|no\s+(?:less|fewer)\s+than|>=)\s*{_NUMBER}", re.I), ">="),
    (re.compile(rf"(?:at\s+most|no\s+more\s+than|<=)\s*{_NUMBER}", re.I), "<="),
    (re.compile(rf"(?:greater|more|larger|bigger|higher)\s+than\s+{_NUMBER}|(?:above|over|exceeds?)\s+{_NUMBER}|"
                rf">\s*{_NUMBER}", re.I), ">"),
    (re.compile(rf"(?:less|fewer|smaller|lower)\s+than\s+{_NUMBER}|(?:below|under)\s+{_NUMBER}|<\s*{_NUMBER}",
                re.I), "<"),
)
_MISSING = re.compile(r"\b(?:missing|nan|null|none|na|unknown|blank|empty)\b", re.I)
_NOT = re.compile(r"\b(?:not|non|isn't|aren't|no\s+longer)\b|\bnon-", re.I)
_IS_VALUE = re.compile(r"\b(?:is|are|equals?|equal\s+to|==)\s+(not\s+)?(?:an?\s+|the\s+)?[`'\"]?([\w .-]+?)[`'\"]?\s*$",
                       re.I)
_SORT = re.compile(r"\bsort(?:ed|s)?\b[^.;]*?\bby\b(.+?)(?=[.;]\s|\(so\b|$)", re.I | re.S)
_DESCENDING = re.compile(r"\b(?:desc\w*|decending|decreasing|(?:largest|highest|biggest|newest|latest|most\s+recent)"
                         r"\s+(?:\w+\s+)?first|reverse)\b", re.I)
_SELECTING = re.compile(r"\b(?:select|return|show|find|get|keep|extract|list|display|print|give|filter|pick|choose|"
                        r"retrieve|fetch|view|see|subset|slice)\b", re.I)
_REMOVING = re.compile(r"\b(?:drop|remove|delete|exclude|discard|eliminate|filter\s+out|get\s+rid|without|except|"
                       r"count|how\s+many|number\s+of|replace|fill|set|change|assign)\b", re.I)
_AGGREGATING = re.compile(r"\b(?:for\s+each|per|group\w*|count\w*|mean|sum|total|average|how\s+many|number\s+of)\b",
                          re.I)
_SENTENCE = re.compile(r"[^.;!?\n]+")
_YEAR = r"((?:1[89]|2[01])\d\d)\b(?![-/.]\d)"
_PERIOD = re.compile(rf"\b(from|in|during|since|before|after)\s+(?:the\s+(?:year\s+)?|year\s+)?{_YEAR}"
                     rf"(?:\s*(?:to|until|till|through|-|–)\s*{_YEAR})?", re.I)
_PERIOD_OPS = {"from": "year==", "in": "year==", "during": "year==", "since": "year>=", "before": "year<",
               "after": "year>"}
_UNIQUE = re.compile(r"\b(?:unique|distinct)\s+values?\s+(?:of|in|from)\s+(?:the\s+)?(?:column\s+)?[`'\"*]*(\w+)",
                     re.I)


def read(instruction: str, frames: Mapping[str, Mapping[str, object]], values: Mapping[str, object],
         frame: str | None) -> list[ReadCheck]:
    """The selection checks read from `instruction`, about the user's `frame` (its columns in `frames`, its
    values in `values` when held); none when no one frame is meant."""
    if frame is None or frame not in frames:
        return []
    prose = re.sub(r"```.*?```", " ", instruction, flags=re.S)
    prose = re.sub(r"[*_]{1,2}(\w[\w ]*?)[*_]{1,2}", r"\1", prose)  # markdown emphasis: *and*, **decending**
    columns = [c for c in frames[frame] if isinstance(c, str) and c]
    data = values.get(frame)
    found = [_rows(_as_rows(prose, frame), frame, columns, data) or _period(prose, frame, columns, data),
             _sorted(prose, frame, columns), _unique(prose, frame, columns), _columns(prose, frame, columns),
             _ends(prose, frame, columns, data)]
    return [c for c in found if c is not None]


def check_call(test: str, frame: str, *args) -> str:
    """The check's expression: kernel/selected.py's `test` of the value the run shows and the user's `frame`."""
    wire = kernel.wire
    return wire.call(f"selected.{test}", wire.Name(kernel.selected.SHOWN), wire.Name(frame), *args)


def _mentioned(text: str, columns: list[str]) -> list[str]:
    """The columns a piece of text names (a word of it, or the plural/singular of one), longest names first."""
    found = []
    for c in sorted(columns, key=len, reverse=True):
        forms = {c, c.rstrip("s"), f"{c}s"} if c.isidentifier() else {c}
        if any(re.search(rf"(?<![\w]){re.escape(f)}(?![\w])", text, re.I) for f in forms if f):
            found.append(c)
    return found


def _as_rows(prose: str, frame: str) -> str:
    """The frame's own name said of its rows ("show the loans with a fee above 2") read as "the rows"."""
    return re.sub(rf"\b(the|all|only|those)\s+`?{re.escape(frame)}`?(?![\w`])", r"\1 rows", prose, flags=re.I)


def _condition(part: str, columns: list[str], data) -> tuple[str, str, object] | None:
    """(column, op, operand) a part of the clause states, or None when it cannot be read."""
    part = part.strip()
    between = _BETWEEN.search(part)
    if between:
        subject, op, operand = part[:between.start()], "between", (float(between[1]), float(between[2]))
    else:
        op = operand = None
        for pattern, which in _COMPARE:
            match = pattern.search(part)
            if match:
                number = next(g for g in match.groups() if g is not None)
                subject, op, operand = part[:match.start()], which, float(number)
                break
        if op is None and _MISSING.search(part):
            subject = part[:_MISSING.search(part).start()]
            op = "present" if _NOT.search(part) else "missing"
        elif op is None:
            return _equal(part, columns, data)
    named = _mentioned(subject, columns)
    return (named[0], op, operand) if len(named) == 1 else None


def _equal(part: str, columns: list[str], data) -> tuple[str, str, object] | None:
    """"the animal is a cat" -> ('animal', '==', 'cat'): the value must be one the column holds (the user's
    frame read), else nothing is read."""
    match = _IS_VALUE.search(part)
    if match is None or data is None:
        return None
    named = _mentioned(part[:match.start()], columns)
    if len(named) != 1:
        return None
    column, word = named[0], match[2].strip()
    try:
        held = [v for v in data[column].dropna().unique() if isinstance(v, str) and v.lower() == word.lower()]
    except Exception:
        return None
    if len(held) != 1:
        return None
    return column, "!=" if match[1] else "==", held[0]


def _rows(prose: str, frame: str, columns: list[str], data) -> ReadCheck | None:
    match = _ROWS.search(prose)
    if match is None:
        return None
    before = prose[:match.start()]
    before = before[max(before.rfind(". "), before.rfind("\n"), 0):]  # the sentence's words before "rows"
    if not _SELECTING.search(before) or _REMOVING.search(before):
        return None  # "drop the rows where ...", "count the rows where ...": not the rows to show
    clause = match[1].strip()
    if re.search(r"\bor\b|\|", clause, re.I):
        return None
    protected = _BETWEEN.sub(lambda m: re.sub(r"\s+and\s+", "\0", m[0]), clause)  # "between 2 and 4": one part
    parts = [p.replace("\0", " and ") for p in re.split(r"\s+and\s+|\s*&\s*|,\s*", protected) if p.strip()]
    conditions = [_condition(p, columns, data) for p in parts]
    if not conditions or any(c is None for c in conditions):
        return None
    some = _some(data, conditions)
    words = " and ".join(_said(c) for c in conditions)
    expr = check_call("rows_hold", frame, conditions, some)
    at_least = ", one at least" if some else ""
    return ReadCheck(expr, f"every row the code shows (or leaves in `{frame}`) has {words}{at_least}")


def _period(prose: str, frame: str, columns: list[str], data) -> ReadCheck | None:
    """"keep only the loans from 2024" -> every row shown has a date in 2024 in the date column meant: the one
    the sentence names, else the one of the user's frame whose rows the year would split (some in it, some not)."""
    for sentence in _SENTENCE.findall(prose):
        match = _PERIOD.search(sentence)
        if match is None:
            continue
        before = sentence[:match.start()]
        said_rows = re.search(rf"(?<![\w]){re.escape(frame)}(?![\w])|(?<![\w]){re.escape(frame.rstrip('s'))}(?![\w])|"
                              r"\b(?:rows?|entries|records|data)\b", before, re.I)
        if not said_rows or not _SELECTING.search(before) or _REMOVING.search(before) or _AGGREGATING.search(sentence) \
                or re.search(r"\bor\b|\band\b", sentence[match.end():], re.I):
            return None
        word, first, last = match[1].lower(), int(match[2]), match[3]
        if last is not None:
            if word != "from" or int(last) < first:
                return None
            wanted = [("year>=", first), ("year<=", int(last))]
        else:
            wanted = [(_PERIOD_OPS[word], first)]
        column = _dated(before, columns, data, wanted)
        if column is None:
            return None
        conditions = [(column, op, year) for op, year in wanted]
        some = _some(data, conditions)
        words = " and ".join(_said(c) for c in conditions) + (", one at least" if some else "")
        return ReadCheck(check_call("rows_hold", frame, conditions, some),
                         f"every row the code shows (or leaves in `{frame}`) has {words}")
    return None


def _dated(before: str, columns: list[str], data, wanted) -> str | None:
    """The date column a year is asked of: the one the word nearest before the year names (a part of its name:
    "the loans from" -> `loan_date`, "shipped in" -> `ship_date`), else the one of the user's frame whose rows the
    year splits (some in it, some not); None where two are as likely."""
    try:
        dated = [c for c in columns if getattr(data[c], "dtype", None) is not None and data[c].dtype.kind == "M"]
    except Exception:
        return None
    parts = {c: [p for p in re.split(r"[\W_]+", c.lower()) if len(p) > 2 and p not in _GENERIC] for c in dated}
    for word in reversed(re.findall(r"\w+", before.lower())):
        named = [c for c, ps in parts.items() if any(word.startswith(p) for p in ps)]
        if named:
            return named[0] if len(named) == 1 else None
    split = [c for c in dated if 0 < _meeting(data, [(c, op, year) for op, year in wanted]) < len(data)]
    return split[0] if len(split) == 1 else None


_GENERIC = {"date", "dates", "time", "day", "timestamp", "datetime", "year", "when", "the"}


def _some(data, conditions) -> bool:
    """Whether the user's frame has rows that meet all the conditions (then an empty selection is not them)."""
    return _meeting(data, conditions) > 0


def _meeting(data, conditions) -> int:
    """How many rows of the user's frame meet all the conditions (0 where they cannot be read)."""
    try:
        if data is None or not len(data):
            return 0
        mask = None
        for column, op, operand in conditions:
            held = kernel.selected.holds(data[column], op, operand)
            mask = held if mask is None else mask & held
        return int(mask.sum())
    except Exception:
        return 0


_SAID = {"missing": "`{c}` missing", "present": "`{c}` not missing", "==": "`{c}` equal to {v!r}",
         "!=": "`{c}` other than {v!r}", "year==": "a date in {v} in `{c}`",
         "year>=": "a date in {v} or later in `{c}`", "year<=": "a date in {v} or earlier in `{c}`",
         "year<": "a date before {v} in `{c}`", "year>": "a date after {v} in `{c}`"}


def _said(condition: tuple[str, str, object]) -> str:
    column, op, operand = condition
    if op == "between":
        return f"`{column}` between {operand[0]:g} and {operand[1]:g}"
    return _SAID.get(op, "`{c}` {op} {v:g}").format(c=column, op=op, v=operand)


def _sorted(prose: str, frame: str, columns: list[str]) -> ReadCheck | None:
    match = _SORT.search(prose)
    if match is None or _AGGREGATING.search(match[0]):
        return None
    head = match[0][:len(match[0]) - len(match[1])]
    if not re.search(rf"(?<![\w]){re.escape(frame)}(?![\w])|\brows\b|\bdata\s*frame\b|\btable\b", head, re.I):
        return None  # what is sorted is not said to be the user's frame
    text = match[1]
    spots = []
    for c in columns:
        spoken = re.escape(c).replace("_", "[_ ]")  # `loan_date` said "loan date"
        hit = re.search(rf"(?<![\w]){spoken}(?![\w])", text)
        if hit and not any(s <= hit.start() < e for s, e, _ in spots):
            spots.append((hit.start(), hit.end(), c))
    spots.sort()
    if not spots:
        return None
    keys, ascending = [], []
    for n, (_, end, c) in enumerate(spots):
        upto = spots[n + 1][0] if n + 1 < len(spots) else len(text)
        keys.append(c)
        ascending.append(not _DESCENDING.search(text[end:upto]))
    expr = check_call("sorted_by", frame, keys, ascending)
    said = ", then ".join(f"`{k}` {'ascending' if a else 'descending'}" for k, a in zip(keys, ascending))
    return ReadCheck(expr, f"the rows the code shows (or `{frame}`) are sorted by {said}")


_COLUMNS = re.compile(r"\bcolumns?\b", re.I)
_NOT_SHOWN = re.compile(r"\b(?:add|create|new|rename|convert|parse|values?|unique|distinct|type|dtype)\b", re.I)
_LISTING = re.compile(r"^(?:[\s,`'\"*\[\]]|\band\b|\bthe\b|\bcolumns?\b|\bboth\b|\bjust\b|\bonly\b)*$", re.I)


def _columns(prose: str, frame: str, columns: list[str]) -> ReadCheck | None:
    """"Select just the 'animal' and 'age' columns" -> the frame the code shows holds those columns and no other:
    columns listed together in a sentence that asks to show them and says "column"."""
    for sentence in _SENTENCE.findall(prose):
        if not (_COLUMNS.search(sentence) and _SELECTING.search(sentence)) or _REMOVING.search(sentence) or \
                _AGGREGATING.search(sentence) or _NOT_SHOWN.search(sentence) or _ROWS.search(_as_rows(sentence, frame)):
            continue  # columns made, changed or read of their values, or named in a condition on the rows
        spots = []
        for c in sorted(columns, key=len, reverse=True):
            hit = re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", sentence)
            if hit and not any(s <= hit.start() < e for s, e, _ in spots):
                spots.append((hit.start(), hit.end(), c))
        spots.sort()
        if not spots or not all(_LISTING.match(sentence[spots[n][1]:spots[n + 1][0]]) for n in range(len(spots) - 1)):
            continue
        gap = sentence[spots[-1][1]:]
        if not re.match(r"^[\s`'\"*\]]*columns?\b", gap, re.I) and not re.search(r"\bcolumns?\s*[\[`'\"]*$",
                                                                               sentence[:spots[0][0]], re.I):
            continue  # the columns listed are not the ones said to show ("the column ..." or "... columns")
        names = [c for _, _, c in spots]
        listed = ", ".join(f"`{c}`" for c in names)
        return ReadCheck(check_call("columns_shown", frame, names),
                         f"the frame the code shows (or `{frame}`) has the columns {listed} and no other")
    return None


_COUNT = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)"
_WORDS = {w: n for n, w in enumerate("one two three four five six seven eight nine ten".split(), 1)} | \
    {"twelve": 12, "twenty": 20}
_ENDS = re.compile(rf"\b(first|last|top|bottom)\s+{_COUNT}\b|\b{_COUNT}\s+(largest|highest|biggest|greatest|"
                   r"smallest|lowest|most|least|fewest)\b", re.I)


def _ends(prose: str, frame: str, columns: list[str], data) -> ReadCheck | None:
    """"Return the first 3 rows" -> the frame's first 3 rows, in its order; "the 5 largest fees", "the top 3 rows by
    fee", "the top 3 fees" -> 5 (3) rows holding the largest values of the one numeric column named after the count
    (ties: any of the tied rows)."""
    for sentence in _SENTENCE.findall(_as_rows(prose, frame)):
        match = _ENDS.search(sentence)
        if match is None or not _SELECTING.search(sentence[:match.start()]) or _REMOVING.search(sentence) or \
                _AGGREGATING.search(sentence) or re.search(r"\bor\b", sentence, re.I):
            continue
        word = (match[1] or match[4]).lower()
        count = match[2] or match[3]
        n = int(count) if count.isdigit() else _WORDS[count.lower()]
        rest = sentence[match.end():]
        named = [c for c in _mentioned(rest, columns) if _numeric(data, c)]
        if word in ("first", "last") and not named:
            if not re.match(r"\s+rows\b", rest, re.I):
                continue
            return ReadCheck(check_call("ends", frame, n, word == "last"),
                             f"the rows the code shows are the {word} {n} of `{frame}`, in its order")
        if len(named) != 1 or word in ("first", "last"):  # "the first 3 by age": the order asked is not said
            continue
        largest = word in ("top", "largest", "highest", "biggest", "greatest", "most")
        return ReadCheck(check_call("extremes", frame, named[0], n, largest),
                         f"the code shows {n} rows holding the {n} {'largest' if largest else 'smallest'} values "
                         f"of `{frame}`'s `{named[0]}`")
    return None


def _numeric(data, column: str) -> bool:
    try:
        return data[column].dtype.kind in "iuf"
    except Exception:
        return False


def _unique(prose: str, frame: str, columns: list[str]) -> ReadCheck | None:
    match = _UNIQUE.search(prose)
    if match is None or _AGGREGATING.search(prose[max(0, match.start() - 40):match.start()]):
        return None
    named = [c for c in columns if c.lower() == match[1].lower()]
    if len(named) != 1:
        return None
    expr = check_call("distinct", frame, named[0])
    return ReadCheck(expr, f"the values the code shows are values of `{frame}`'s `{named[0]}`, none twice")

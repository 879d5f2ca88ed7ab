"""The outputs a notebook's author saved, used as a check: a fix whose output matches the one saved
when the cell worked is verified by the author, not by us.

`SavedOutput` is the text a cell showed (its stdout streams and the text/plain of its result, in
order). `saved_check` compares a run's output with it, tolerating what differs between library
versions and not between results: whitespace and column widths, numbers within a tolerance, dtype
lines and `Name:`/`dtype:` footers, numpy 2's `np.float64(1.5)` and `np.False_` scalars, pandas 1's `Int64Index`,
pandas 2's `value_counts` header and pandas 3's False for a missing value in a string predicate (`equivalences`:
what allowed it is said in the check's detail), matplotlib's Axes reprs of any version (`<AxesSubplot at 0x...>`,
`<Axes: xlabel='a'>`), a library's class by its inner path or its public one (`pandas.core.series.Series`,
`pandas.Series`: one class today), a `df.dtypes` line's `object` beside pandas 3's `str`, a datetime64's unit
(pandas 2.0: a parsed value "will retain the resolution of the parsed input": `datetime64[us]` where pandas 1
showed `datetime64[ns]`), and a duration under one day with its zero days shown or not (`00:10:00`, pandas 0.25's
short form when every value of an index or series was under a day, is `0 days 00:10:00` today).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import math
import os
import re

from .estimators import estimator_check, parse

SAVED_CHECK = "output matches the one saved in the notebook"
REL_TOL = 1e-3  # printed numbers are rounded; a result that changed differs by more

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.IGNORECASE)
_FOOTER = re.compile(r"^(?:Name: .*?,\s*)?(?:Length: \d+,\s*)?dtype: [\w\[\], ]+$|^Name: [^,]*$|^Freq: "
                     r"\w+,? ?(?:dtype: .*)?$")
_SCALAR = re.compile(r"\bnp\.(?:float|int|uint|bool_|str_|complex)\w*\((.*?)\)")
_BOOL_SCALAR = re.compile(r"\bnp\.(True|False)_(?!\w)")  # numpy 2 (NEP 51): `np.False_` where 1.x showed `False`
_OLD_INDEX = re.compile(r"\b(?:Int64|UInt64|Float64)Index\(")
_DTYPE_ARG = re.compile(r"(?:,\s*|^)dtype=['\"]?[\w\[\], ]+?['\"]?(?=[,)])")
_CALL_START = re.compile(r"[A-Za-z_]\w*\(")  # a line that may begin an estimator's repr
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_DEFAULT_REPR = re.compile(r"<(?:[\w.]+\.)?(\w+) object at 0x>")  # object.__repr__, its address masked
_PADDED = re.compile(r"(?<=[\[(]) +| +(?=[\])])")  # spaces inside a bracket's edge: never part of a value
_DTYPE_LINE = re.compile(r"^(\S.*?) (?:object|str|string)$")  # a `df.dtypes` line: pandas 3's string dtype
_RESOLUTION = re.compile(r"\b(datetime64|timedelta64)\[(?:ns|us|ms|s)(?=[,\]])")  # pandas 2 keeps a parse's unit
_ZERO_DAYS = re.compile(r"(?<![\w.+-])0 days (?=\d\d:\d\d:\d\d)")  # a duration's days, shown today when 0
_CATEGORIES = re.compile(r"\bCategories \((\d+), (?:object|str|string)\)")  # pandas 3's string dtype
_BOOL = {"True": "1", "False": "0"}  # get_dummies and friends: 0/1 in pandas 1, booleans since pandas 2
# a frequency as pandas prints it (freq='BM', Period('2007', 'A-DEC'), period[Q-DEC]): pandas 2.2 renamed
# the aliases (A -> Y, M -> ME for offsets, H -> h, T -> min, ...); compared by one spelling
_FREQ = re.compile(r"(freq=['\"]|Period\('[^']*', '|period\[|^Freq: )(\d*)([A-Za-z]+)(-[A-Z]{3})?(?=['\"\],]|$)")
CLASS_PATHS = None  # pandas 3 names its public classes from the top (`pandas.Series`, was `pandas.core.series.Series`
# as IPython shows a type); no harvested entry says so: the equivalence rests on today's library, where both paths
# name one class
_CLASS_PATH = re.compile(r"\b((?:pandas|numpy|matplotlib|sklearn|scipy|seaborn)(?:\.\w+)+)\.([A-Z]\w*)\b")
_FREQ_NAMES = {"A": "Y", "YE": "Y", "BA": "BY", "BYE": "BY", "AS": "YS", "BAS": "BYS", "QE": "Q", "BQE": "BQ",
               "ME": "M", "BME": "BM", "SME": "SM", "CBME": "CBM", "H": "h", "BH": "bh", "T": "min", "S": "s",
               "L": "ms", "U": "us", "N": "ns"}
# Code whose output is new on each run: random draws (a generator's state is not mirrored into the
# sandbox), unless seeded; the clock, fresh ids, the machine and its environment.
RANDOM = re.compile(r"\brandom\.|\brandn?\(|\brandint\(|\.sample\(|\bshuffle\(|\bpermutation\(|\bdefault_rng\(\s*\)")
CLOCK = re.compile(r"\.now\(|\.today\(|\btime\.time\(|\buuid\d\(|\bos\.environ\b|\bgetenv\(|\bgetcwd\(|"
                   r"\bgethostname\(|\bgetuser\(|\bplatform\.\w|\bsys\.version")
SEED = re.compile(r"\b(?:seed|default_rng|RandomState)\(\s*[^\s)]|\brandom_state\s*=\s*(?!None\b)\w")


# What a library changed in how the same value prints, as its release notes say (model/changes.json, the entry each
# cites: library, release, its words' start; tests/batch/test_saved_outputs.py checks each is there), or says nothing of
# (`None`: the equivalence rests on the two outputs alone)
VALUE_COUNTS = ("pandas", "2.0.0", "Value counts sets the resulting name to ``count``")
DICT_ORDER = ("pandas", "0.23.0", "Instantiation from dicts preserves dict insertion order for Python 3.6+")
AXES_REPR = None  # matplotlib 3.7 made every Axes' repr `<Axes: ...>`; its API-change notes do not list it
FREQ_ALIASES = None  # pandas 2.2 renamed offset aliases (`M` -> `ME`); no sdist ships its notes
_AXES_OLD = re.compile(r"<matplotlib\.axes\._subplots\.AxesSubplot(?: object)? at 0x>")  # before 3.4
_AXES_SUBPLOT = re.compile(r"<AxesSubplot:")  # matplotlib 3.4-3.6
_AXES_LABELS = re.compile(r"<Axes: [^<>]*>")
_COUNTS_FOOTER = re.compile(r"^Name: (count|proportion), dtype: \w+$")
_NAME_FOOTER = re.compile(r"^Name: (.+?), dtype: \w+$")
# pandas 3's string dtype: a string predicate (`str.contains`) gives False for a missing value, where object dtype gave
# NaN (pandas-dev/pandas#59616, "propagate NaNs as False in predicate methods"; not in the harvested notes)
STRING_PREDICATES = ("pandas", "3.0.0", "not how it prints: the string dtype's predicates give False for a missing "
                                        "value, where object dtype gave NaN")
_PREDICATE_FOOTERS = (re.compile(r"^(?:Name: .*?, )?dtype: object$"), re.compile(r"^(?:Name: .*?, )?dtype: bool$"))


def equivalences(saved: str, got: str) -> tuple[str, list[tuple]]:
    """`got` with what a library only changed in how it prints the same value made as `saved` has it, and the
    entries that allowed each change made: pandas 2's `value_counts` prints its index's name as a header and
    names the counts `count` (the saved output named them after the column)."""
    used = []
    saved_lines = [line.strip() for line in saved.strip().splitlines()]
    got_lines = got.strip("\n").splitlines()
    named = _NAME_FOOTER.match(saved_lines[-1]) if saved_lines else None
    if (named and got_lines and _COUNTS_FOOTER.match(got_lines[-1].strip()) and got_lines[0].strip() == named.group(1)
            and saved_lines[0] != named.group(1)):
        got = "\n".join(got_lines[1:]) + "\n"
        used.append(VALUE_COUNTS)
    if _missing_as_false(saved_lines, [line.strip() for line in got.strip("\n").splitlines()]):
        got = saved
        used.append(STRING_PREDICATES)
    if _columns_reordered(saved_lines, [line.strip() for line in got.strip("\n").splitlines()]):
        got = saved
        used.append(DICT_ORDER)
    return got, used


def _columns_reordered(saved: list[str], got: list[str]) -> bool:
    """A frame shown with its columns in another order, each row's values moved with them, every other line the
    same (a frame made from a dict, whose keys pandas sorted before 0.23)."""
    names = [line.split() for line in (saved[:1] + got[:1])]
    if len(saved) != len(got) or len(saved) < 2 or names[0] == names[1] or sorted(names[0]) != sorted(names[1]) or (
            len(set(names[0])) != len(names[0])):
        return False
    order = [names[1].index(n) for n in names[0]]
    for want, shown in zip(saved[1:], got[1:]):
        want, shown = want.split(), shown.split()
        k = len(shown) - len(order)  # the index's labels, left of the values
        if k < 1 or len(want) != len(shown) or want[:k] != shown[:k] or want[k:] != [shown[k + i] for i in order]:
            if want != shown or len(want) >= len(order):  # the index's name alone on its line
                return False
    return True


def _missing_as_false(saved: list[str], got: list[str]) -> bool:
    """A boolean Series saved as object (True, False, NaN) shown as bool now, with False for each NaN and every other
    row the same (pandas 3's string predicates)."""
    if len(saved) != len(got) or len(saved) < 2 or not (_PREDICATE_FOOTERS[0].match(saved[-1])
                                                         and _PREDICATE_FOOTERS[1].match(got[-1])):
        return False
    rows = [(w.split(), g.split()) for w, g in zip(saved[:-1], got[:-1])]
    return any(w != g for w, g in rows) and all(
        w[-1:] in (["True"], ["False"], ["NaN"]) and (w == g or w[:-1] == g[:-1] and [w[-1], g[-1]] == ["NaN", "False"])
        for w, g in rows)


def _axes_same(want: str, got: str) -> bool:
    """An Axes printed with its labels on one side and by its old repr (no labels) on the other."""
    return "<Axes>" in want + got and _AXES_LABELS.sub("<Axes>", want) == _AXES_LABELS.sub("<Axes>", got)


class SavedOutput(str):
    """The text a notebook cell showed when it was saved: its expected output. A `str`, so it goes
    where `--expect-output` text goes; the receipt compares it with `saved_check`."""


def unrepeatable(code: str, seeded: bool = False) -> str:
    """Why running `code` again may show another output ("draws random numbers without a seed", "reads
    the clock or the environment"), or "" when it can show the same: no clock, no environment, and no
    random draws unless a generator is seeded (`seeded`: before the code, in the same kernel; or in it)."""
    if CLOCK.search(code):
        return "reads the clock or the environment"
    if RANDOM.search(code) and not (seeded or seeds(code)):
        return "draws random numbers without a seed"
    return ""


def seeds(code: str) -> bool:
    """Whether `code` seeds a random generator (`np.random.seed(0)`, `default_rng(42)`)."""
    return SEED.search(code) is not None


def saved_output(outputs: list) -> SavedOutput | None:
    """The saved text of a cell's outputs (stdout streams and `execute_result` text/plain; not
    images, not stderr), or None when there is none or the saved run ended in an error."""
    parts = []
    for out in outputs or ():
        kind = out.get("output_type")
        if kind == "error":
            return None
        if kind == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif kind == "execute_result":
            text = out.get("data", {}).get("text/plain")
            if text:
                text = "".join(text) if isinstance(text, list) else text
                parts.append(text if text.endswith("\n") else text + "\n")
    text = "".join("".join(p) if isinstance(p, list) else p for p in parts)
    return SavedOutput(text) if text.strip() else None


def normalized(text: str) -> list[str]:
    """The lines compared: a wide frame's wrapped blocks joined, an object's repr wrapped over lines joined,
    whitespace collapsed (none at a bracket's inner edge), footers and dtype arguments dropped, blank lines out."""
    lines = []
    for line in _joined_reprs(_joined_blocks(text.replace("\r\n", "\n")).split("\n")):
        line = " ".join(line.split())
        if not line or _FOOTER.match(line):
            continue
        line = _PADDED.sub("", line)  # numpy before 1.14 padded a sign's place: `array([ 0.6, 0.4])`
        line = _SCALAR.sub(r"\1", line)
        line = _BOOL_SCALAR.sub(r"\1", line)
        line = _OLD_INDEX.sub("Index(", line)
        line = _CLASS_PATH.sub(_public_path, line)
        line = _DTYPE_ARG.sub("", line)
        line = _ADDRESS.sub(" at 0x", line)
        line = _AXES_SUBPLOT.sub("<Axes: ", _AXES_OLD.sub("<Axes>", line)).replace("<Axes:  ", "<Axes: ")
        line = _CATEGORIES.sub(r"Categories (\1, object)", line)
        line = _DTYPE_LINE.sub(r"\1 object", line)
        line = _RESOLUTION.sub(r"\1[ns", line)
        line = _ZERO_DAYS.sub("", line)
        line = _FREQ.sub(_frequency_now, line)
        line = " ".join(_BOOL.get(word, word) for word in line.split(" "))
        lines.append(line)
    return lines


def _public_path(m: re.Match) -> str:
    """`pandas.core.series.Series` as `pandas.Series` where today's library says both name one class."""
    return _public_name(m.group(1), m.group(2)) or m.group(0)


@functools.lru_cache(maxsize=256)
def _public_name(module: str, name: str) -> str:
    """`root.name` when the library's top (`pandas`) has `name` and it is the class `module.name` is; ""
    otherwise (or when either is not installed: only the libraries' own modules are imported)."""
    root = module.split(".")[0]
    try:
        inner = getattr(importlib.import_module(module), name, None)
        top = getattr(importlib.import_module(root), name, None)
    except Exception:  # noqa: BLE001 - a path of another version, a module that no longer imports
        return ""
    return f"{root}.{name}" if inner is not None and inner is top and isinstance(top, type) else ""


_REPR_START = re.compile(r"\s*[A-Za-z_][\w.]*\(\[")  # `DatetimeIndex([`, `array([[`: a repr of values in brackets
_OPENS, _CLOSES = "([{", ")]}"


def _joined_reprs(lines: list[str]) -> list[str]:
    """An object's repr that another version wrapped at another width (`DatetimeIndex(['2014-08-01 12:10:01',`
    and one date a line, or two a line) as one line: from a line that opens one, each next line until its
    brackets close. The values and their order are compared all the same."""
    out: list[str] = []
    depth = 0
    for line in lines:
        if depth > 0:
            out[-1] = f"{out[-1]} {line.strip()}"
        else:
            out.append(line)
            if not _REPR_START.match(line):
                continue
        depth = max(0, depth + sum(map(line.count, _OPENS)) - sum(map(line.count, _CLOSES)))
    return out


def _frequency_now(m: re.Match) -> str:
    """A frequency as pandas 2.2 names it (`freq='S'`, `Freq: 10S` -> `s`, `10s`)."""
    return m.group(1) + m.group(2) + _FREQ_NAMES.get(m.group(3), m.group(3)) + (m.group(4) or "")


def _joined_blocks(text: str) -> str:
    """A frame pandas printed in blocks at its display width (the first line of each block but the last ends
    with `\\`, each block repeats the index) as one block: each line of a block, then the same line of the
    next without the index the two share. Another display width wraps the same frame elsewhere, or not."""
    body = text.rstrip("\n")
    blocks = [block.split("\n") for block in body.split("\n\n")]
    out: list[list[str]] = []
    for block in blocks:
        last = out[-1] if out else None
        if last is not None and last[0].rstrip().endswith("\\") and len(last) == len(block):
            width = _shared_index(last, block)
            out[-1] = [f"{a.rstrip().removesuffix(chr(92)).rstrip()} {b[width:]}" for a, b in zip(last, block)]
        else:
            out.append(block)
    return "\n\n".join("\n".join(block) for block in out) + text[len(body):]


def _shared_index(first: list[str], then: list[str]) -> int:
    """How many leading characters the lines of a frame's next block repeat of the first (its index), cut
    back to where that block's lines have a space."""
    width = min(len(os.path.commonprefix([a, b])) for a, b in zip(first, then))
    while width > 0 and any(len(b) > width and not b[width - 1].isspace() for b in then):
        width -= 1
    return width


def _same_line(want: str, got: str) -> bool:
    if want == got or _axes_same(want, got):
        return True
    if _NUMBER.sub("#", want) != _NUMBER.sub("#", got):
        return False
    for a, b in zip(_NUMBER.findall(want), _NUMBER.findall(got)):
        x, y = float(a), float(b)
        if not (math.isclose(x, y, rel_tol=REL_TOL, abs_tol=1e-9) or (math.isnan(x) and math.isnan(y))):
            return False
    return True


def holds(text: str, saved: str) -> bool:
    """Whether the saved output's lines are whole lines of `text`, in a row, compared as `saved_check`
    compares them ('6' is in '6.0' but not in 'Loaded 16 rows')."""
    want, got = normalized(saved), normalized(text)
    n = len(want)
    starts = range(len(got) - n + 1)
    return bool(want) and any(all(_same_line(w, g) for w, g in zip(want, got[i:i + n])) for i in starts)


def saved_check(stdout: str, shown: str | None, saved: str, full: str | None = None,
                codes: tuple[str, ...] = ()) -> tuple[bool | None, str, list[str]]:
    """Compare what a run printed and showed with the saved output: (matches, detail, a compact diff
    (`-` saved, `+` this run) of the lines that differ). A saved scikit-learn estimator repr of a version
    before 0.23 (every parameter) is compared parameter by parameter with the one shown and its `full`
    form (print_changed_only=False; receipt/estimators.py; `codes`: the user's cell and the code that ran,
    read for the keywords they pass), and the detail says what was compared;
    matches is None when that cannot decide (the saved output is then no evidence either way)."""
    got_text, allowed = equivalences(saved, stdout + (shown + "\n" if shown else ""))
    want, got = normalized(saved), normalized(got_text)
    if len(want) == len(got) and all(_same_line(w, g) for w, g in zip(want, got)):
        said = "; ".join(f"{lib} {version}: {words}" for lib, version, words in allowed)
        return True, (f"the same output but for what the library changed in how it prints it ({said})"
                      if said else ""), []
    if _truncated_same(want, got):
        return True, ("the same rows where both show them: a long value shown truncated around its `..`, with fewer "
                      "rows than saved (pandas 0.25's display.min_rows)"), []
    diff = [line for line in difflib.unified_diff(want, got, "saved", "this run", n=1, lineterm="")
            if not line.startswith(("---", "+++"))]
    compared = _estimator(got_text, saved, full, codes)
    if compared is not None:
        return compared.matches, compared.words, diff if compared.matches is False else []
    unshown = _default_repr_lines(want, got)
    if unshown:
        return None, (f"{unshown} is shown by its default repr (`<... object at 0x...>`) on one side and printed on "
                      f"the other: no value to compare"), []
    differing = sum(1 for line in diff if line[:1] in "+-")
    detail = f"{len(got)} line(s) shown, {len(want)} saved; {differing} line(s) differ"
    return False, detail, diff


TRUNCATED_ROWS = None  # pandas 0.25 shows 10 rows of a long Series or frame (display.min_rows) where 60 showed;
# an enhancement its notes list, not a change the harvested deprecations and removals hold


def _truncated_same(want: list[str], got: list[str]) -> bool:
    """Both truncated around one `..` line, and each line shown now is the saved one at its place, counted from
    the head above it and from the tail below it: the same value, fewer rows shown (pandas 0.25's
    display.min_rows); False otherwise."""
    cuts = [[i for i, line in enumerate(lines) if not line.replace(".", "").replace(" ", "") and ".." in line]
            for lines in (want, got)]
    if len(cuts[0]) != 1 or len(cuts[1]) != 1 or len(got) >= len(want):
        return False
    i, j = cuts[0][0], cuts[1][0]
    tail = len(got) - j - 1
    if not 0 < j <= i or tail > len(want) - i - 1:
        return False
    return (all(_same_line(w, g) for w, g in zip(want[:j], got[:j]))
            and all(_same_line(w, g) for w, g in zip(want[len(want) - tail:], got[j + 1:])))


def _default_repr_lines(want: list[str], got: list[str]) -> str:
    """The class whose object one side shows by its default repr where the other side printed that class
    (`DatetimeIndexResampler [freq=<2 * Hours>, ...]` saved, `<pandas...DatetimeIndexResampler object at
    0x...>` now: the class dropped its own repr), every other line the same; "" otherwise. Such a line
    holds no value to compare: the saved output cannot tell, either way."""
    if len(want) != len(got):
        return ""
    names = []
    for w, g in zip(want, got):
        if _same_line(w, g):
            continue
        plain = _DEFAULT_REPR.fullmatch(g) or _DEFAULT_REPR.fullmatch(w)
        other = w if plain and plain.string == g else g
        if plain is None or _DEFAULT_REPR.fullmatch(other) or not re.search(rf"\b{plain.group(1)}\b", other):
            return ""
        names.append(plain.group(1))
    return f"a `{names[0]}`" if names else ""


# ---------------------------------------------------------------- the output an instruction states

STATED_CHECK = "its output shows the values the instruction states"
_TOKEN = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[A-Za-z_]\w*")
COPIED = 3  # stated values this many or more, written in the code itself in the same order, are no evidence


def stated_check(stdout: str, shown: str | None, stated: str, code: str | None = None) -> tuple[bool, str]:
    """Whether a run's output shows the values an instruction states (`You should end up with ...` and a
    block: `cell.stated_output`), in their order, numbers as rounded where they are stated (1.666667 is
    1.6666666667); words and numbers only, so a Series, a list or a frame's column may show them. A
    one-line list (`1, 2, 3`) may also be a column: the last value of each line. (passed, what it found)."""
    want = _TOKEN.findall(stated)
    if not want:
        return True, ""
    got_text = stdout + (shown + "\n" if shown else "")
    if code and len(want) >= COPIED and _run_in(want, _TOKEN.findall(code)):
        return False, "the code writes the stated values itself: that shows nothing of what it computes"
    lines = [line.split() for line in got_text.splitlines() if line.split()]
    column = [_TOKEN.findall(words[-1])[-1] for words in lines if _TOKEN.findall(words[-1])]
    one_line = len([line for line in stated.splitlines() if line.strip()]) == 1
    if _run_in(want, _TOKEN.findall(got_text)) or (one_line and _run_in(want, column)):
        return True, ""
    stated_words = " ".join(want[:12]) + (" ..." if len(want) > 12 else "")
    if not got_text.strip():
        return False, f"the code shows nothing; the instruction states {stated_words}"
    return False, f"the instruction states {stated_words}; the output does not show these values in this order"


def _run_in(want: list[str], got: list[str]) -> bool:
    """Whether `want` is a run of `got` (values compared by `_same_value`)."""
    n = len(want)
    return any(all(_same_value(w, g) for w, g in zip(want, got[i:i + n])) for i in range(len(got) - n + 1))


def _same_value(want: str, got: str) -> bool:
    if want == got:
        return True
    try:
        x, y = float(want), float(got)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    decimals = len(want.partition(".")[2]) if "." in want and "e" not in want.lower() else 0
    rounded = 0.5 * 10 ** -decimals if decimals else 0.0  # a stated 1.666667 is a rounded value
    return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=rounded)
def _estimator(text: str, saved: str, full: str | None, codes: tuple[str, ...]):
    """The parameter-by-parameter comparison (estimators.Comparison) when the saved output and the run's
    `text` both end with an estimator repr of one class, after the same lines; else None."""
    want, got = _repr_tail(saved), _repr_tail(text)
    if want is None or got is None or want[1].split("(", 1)[0] != got[1].split("(", 1)[0]:
        return None
    head, printed = normalized(want[0]), normalized(got[0])
    if len(head) != len(printed) or not all(_same_line(w, g) for w, g in zip(head, printed)):
        return None
    return estimator_check(want[1], got[1], full, codes)


def _repr_tail(text: str) -> tuple[str, str] | None:
    """(the lines before, the repr) when `text` ends with an estimator repr starting on its own line."""
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    for i, line in enumerate(lines):
        if _CALL_START.match(line) and parse("\n".join(lines[i:])) is not None:
            return "\n".join(lines[:i]), "\n".join(lines[i:])
    return None

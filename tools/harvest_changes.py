"""What the libraries say they deprecated, removed and renamed, harvested from their own release notes: writes
jupyter_fixloop/model/changes.json (generated; never edit it by hand) and prints its coverage.

Each entry keeps the library's own words, the release whose notes say it, the section it is in (`removed` for
pandas' "Removal of prior version deprecations/changes", numpy's "Expired deprecations", matplotlib's removals
and scikit-learn's |API| entries that say "removed"; `deprecated` for the deprecation sections; `changed` for
pandas' "Backwards incompatible API changes" and "Other API changes" and matplotlib's behaviour changes: what
the same code does or shows now), the old names it mentions, their kind (method, attribute, keyword, function,
module, class, alias, value, behavior), and the replacement its words name ("use X instead", "in favor of X",
"renamed to X", "replaced by X") or `none` when the words name none. Where a removal's name was deprecated in
an earlier release's notes, `deprecated_in` says which.

    # 1. the notes, into one folder (sdists from PyPI, unpacked by pip; numpy's and pandas' 2.1 on from git dirs):
    python tools/harvest_changes.py gather --notes /tmp/kb-notes --numpy-git /work/.mirror/numpy+numpy/repo \
        --pandas-git /work/.mirror/pandas-dev+pandas/repo --pandas-rev v3.0.0
    # 2. the data file and its coverage (offline: reads only the notes folder):
    python tools/harvest_changes.py build --notes /tmp/kb-notes
    # or one library's part only, the others kept as the data file has them:
    python tools/harvest_changes.py gather --notes /tmp/kb-notes --only IPython
    python tools/harvest_changes.py build --notes /tmp/kb-notes --only IPython

Where the notes come from (`SDISTS`): pandas 1.5.3 and 2.0.3 (`doc/source/whatsnew/`, 0.4 to 2.0.3;
later sdists, built with meson, ship no docs: 2.1 to 3.0 from a git dir of pandas-dev/pandas, or any copy of
those files with a `SOURCE` line saying where they came from), pandas 2.2.3's code (the frequency aliases
its warnings rename), matplotlib 3.8.4 (`doc/api/prev_api_changes/`, to 3.8), scikit-learn 1.4.2
(`doc/whats_new/`, to 1.4), numpy's repository (`doc/source/release/`, every release), IPython 8.37.0's
code (its deprecations) and 9.0.0's code and notes (which of them are gone), pandas 0.19.2's code (a wheel,
`WHEELS`: the keywords its warnings said to pass elsewhere, "pls use .sort_values(by=...)") and IPython 4.0.0's
and 5.10's (their shim modules: "`IPython.html.widgets` has moved to `ipywidgets`", and the modules and
functions whose warning says where they moved: "get_ipython_package_dir has moved to the IPython.paths
module"): tools/harvest_code.py.
Pandas' notes are read from 0.14 on (the 0.14-0.17 deprecations whose removals in 0.16-0.20 name no
replacement: `pivot_table(rows=...)`, `Series.order`).
"""

from __future__ import annotations

import argparse
import glob
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from harvest_code import (  # noqa: E402  (tools/ is no package)
    code_deprecations,
    decorated_deprecations,
    keyword_deprecations,
    shim_moves,
    warned,
)

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "jupyter_fixloop" / "model" / "changes.json"
SDISTS = {  # library -> (sdist, folder of its notes inside it, file pattern[, the folder under notes/<library>])
    "pandas": [("pandas==1.5.3", "doc/source/whatsnew", "v*.rst"), ("pandas==2.0.3", "doc/source/whatsnew", "v*.rst"),
               ("pandas==2.2.3", "pandas/_libs/tslibs", "dtypes.pyx", "code/2.2.3")],
    "matplotlib": [("matplotlib==3.8.4", "doc/api/prev_api_changes", "**/*.rst")],
    "scikit-learn": [("scikit-learn==1.4.2", "doc/whats_new", "v*.rst")],
    "IPython": [("ipython==8.37.0", "IPython", "**/*.py", "code/8.37.0/IPython"),  # its code: tools/harvest_code.py
                ("ipython==9.0.0", "IPython", "**/*.py", "code/9.0.0/IPython"),
                ("ipython==9.0.0", "docs/source/whatsnew", "version9.rst")],
}
SINCE = (0, 18)  # the releases from 2016 on (pandas from 0.14: FIRST): pandas 0.18, numpy 1.11, matplotlib 2.0,
# scikit-learn 0.18
FIRST = {"pandas": (0, 14), "numpy": (1, 11), "matplotlib": (2, 0), "scikit-learn": (0, 18), "scipy": (0, 18),
         "seaborn": (0, 7), "IPython": (5, 0)}
GIT = {  # library -> (its repository, the folder of its notes, the names taken): notes read from a git dir
    "scipy": ("scipy/scipy", "doc/source/release/", r"\d+\.\d+\.\d+-notes\.rst"),
    "seaborn": ("mwaskom/seaborn", "doc/whatsnew/", r"v\d+\.\d+\.\d+\.rst"),
}
WHEELS = {  # library -> (a release whose code is read, not its notes: a wheel for the Python it was built for,
    # the package folder in it, where it goes under notes/<library>): tools/harvest_code.py's KEYWORDS_WARNED
    "pandas": [("pandas==0.19.2", "3.6", "manylinux1_x86_64", "pandas", "code/0.19.2")],
    "IPython": [("ipython==4.0.0", "3.6", "manylinux1_x86_64", "IPython", "code/4.0.0"),  # the split's shims
                ("ipython==5.10.0", "3.6", "manylinux1_x86_64", "IPython", "code/5.10.0")],  # its shims
    # its `@deprecated("...")` module functions (harvest_code.DECORATED): `plot_roc_curve`, said in no notes
    "scikit-learn": [("scikit-learn==1.1.3", "3.10", "manylinux2014_x86_64", "sklearn", "code/1.1.3")],
}
PANDAS_SDIST_LAST = (2, 0, 3)  # later sdists (built with meson) ship no docs: 2.1 on come from a git dir
COUNTED = {"pandas": (0, 20)}  # coverage is counted from here (pandas: the removals of 0.20 on, as issue 55 asks)

ROLE = r":(?:meth|attr|func|class|mod|obj|data|exc|py:\w+):`~?\.?([^`<]+?)(?:\s*<[^>]+>)?`"
LITERAL = r"``([^`]+?)``"
SINGLE = r"(?<![`:\w])`~?\.?([^`\s][^`]*?)`(?![`_])"
LINK = r"`([^`<]+?)\s*<[^>]+>`__"
QUOTED = r"\"([A-Za-z_][\w.\[\]]*)\""
NAME = rf"(?:{ROLE}|{LITERAL}|{LINK}|{SINGLE})"
EMPHASIS = r"(?<![*\w])\*([A-Za-z_]\w*)\*(?![*\w])"
REF = r":ref:`([^`<]+?)\s*<[^>]+>`"
TO = rf"(?:{NAME}|{REF}|{QUOTED}|{EMPHASIS})"  # what a cue names: code, a link to a package, a quoted keyword
WORDS = r"(?:[\w-]+\s+){0,3}"
CUES = [  # the words that name a replacement, the replacement after them (the first cue in the words wins)
    rf"\brenamed\s+(?:the\s+)?(?:from\s+)?{TO}\s+(?:\w+\s+)?(?:to|as)\s+{TO}",
    rf"\buse\s+(?:the\s+)?(?:new\s+)?(?:function\s+|method\s+|keyword\s+|argument\s+|parameter\s+)?{TO}",
    # scikit-learn 1.0's decorators: "Use one of the class methods: :meth:`...from_predictions` or :meth:`...`"
    rf"\buse\s+one\s+of\s+the\s+class\s+methods:?\s+{TO}",
    rf"\bin\s+favou?r\s+of\s+{WORDS}{TO}",
    rf"\brenamed\s+(?:to\s+|as\s+)?{TO}",
    rf"\breplaced\s+(?:by|with)\s+{WORDS}{TO}",
    rf"\bimport\s+(?:the\s+function\s+|it\s+)?(?:directly\s+)?from\s+{TO}",
    rf"\bsuperseded\s+by\s+{TO}",
    rf"\b(?:is\s+)?available\s+(?:as|in|via|from)\s+{WORDS}{TO}",
    rf"\bmoved\s+to\s+{WORDS}{TO}",
    rf"\bcall\s+{TO}",
    rf"\bpass\s+(?:a\s+|an\s+)?{TO}",
    rf"{TO}\s+(?:[\w-]+\s+){{0,4}}instead\b(?!\s+of)",
    rf"\bequivalent\s+(?:to\s+|is\s+)?{TO}",
    rf"\binstead,?\s+use\s+{WORDS}{TO}",
    rf"\bfound\s+in\s+{WORDS}{TO}",
    rf",\s+(?-i:Replacement)\s+{TO}",  # a row: "Previous ``Series.order()``, Replacement ``Series.sort_values()``"
    rf"\bnew\s+(?:alias|name)\s+{TO}",  # a table's row: "removed alias ``M``, new alias ``ME``"
    rf",\s+(?-i:Identical)\s+to\s+{TO}",  # numpy 1.20's table: "Deprecated name ``numpy.str``, Identical to ``str``"
    # scikit-learn 0.20: "Other functionalities are part of `joblib <https://...>`_. package and should be used
    # directly"
    rf"\bpart\s+of\s+(?:{TO}|`([A-Za-z_][\w.]*)\s*<[^>]+>`_)\.?\s+(?:package\s+)?and\s+should\s+be\s+used\s+directly",
    rf"\breplacement\s+(?:for\s+{TO}\s+)?is\s+{TO}",  # numpy 2.0: "The preferred replacement is ``inspect.getsource``"
    rf"\balias\s+{TO}\s+for\s+{TO}",  # "Removed alias :class:`arrays.PandasArray` for :class:`arrays.Numpy...`"
]
PROSE = [  # a replacement said in words only: "Instead, resample before calling the methods."
    r"\binstead,\s+([^.;]{6,120})",
    r"\b((?:use|pass|specify|call|check|convert|cast|manually|set|create)\b[^.;]{3,120}?)\s+instead\b(?!\s+of)",
    r"\b(?:please\s+)?(use\s+[^.;]{3,120})",
    r"\b(?:we\s+)?recommend(?:ed)?\s+([^.;]{3,120})",
]
CUE_WORDS = re.compile(r"\binstead\b(?!\s+of)|\bin favou?r of\b|\brenamed\b|\breplaced (?:by|with)\b|\buse\s+[`:]",
                       re.I)
REMOVED = re.compile(r"\b(removed|dropped|expired|no longer (?:supported|accepted|available))\b", re.I)
DEPRECATED = re.compile(r"\bdeprecat", re.I)
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def version_of(path: str) -> tuple[int, ...] | None:
    """(0, 20, 0) from `v0.20.0.rst`, `1.25.0-notes.rst`, `api_changes_3.7.0/removals.rst`, `v1.2.rst`."""
    found = re.findall(r"(\d+)\.(\d+)(?:\.(\d+))?", path)
    if not found:
        return None
    major, minor, micro = found[-1]
    return int(major), int(minor), int(micro or 0)


CREDIT = r"(?::user:`[^`]*`|`[^`]+`_)"  # scikit-learn's "by :user:`Name <id>`" and "by `Name`_"


def clean(text: str) -> str:
    """The words as read: one line, the issue links and the closing credits (`:pr:`20729` by `Name`_.`) dropped."""
    links = r"(?:\s*(?:and\s+)?:(?:pr|issue):`[^`]*`[,\s]*)*"
    text = re.sub(rf"{links}\s+[Bb]y\s+{CREDIT}(?:\s*(?:,|and|,\s*and)\s*{CREDIT})*\s*\.?\s*$", "", text)
    text = re.sub(r"\s*\((?::(?:issue|pr|gh|user):`[^`]*`[,\s]*(?:and\s*)?)+\)\.?", "", text)
    text = re.sub(r"\s*:(?:pr|issue|user):`[^`]*`", "", text)
    text = re.sub(r"\s*\(`gh-\d+ <[^>]+>`__\)", "", text)
    text = re.sub(r"\s*\|(?:API|Fix|Enhancement|Feature|Efficiency|MajorFeature)\|\s*", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def names_in(text: str) -> list[str]:
    """The code names an entry mentions, in order (roles, double and single backticks)."""
    seen: list[str] = []
    for groups in re.findall(NAME, text):
        name = next(g for g in groups if g).strip().rstrip("()").lstrip("~.")
        if name and name not in seen and not name.startswith(("http", "<")):
            seen.append(name)
    return seen


# "in favor of these two class methods", "in favor of the class method": the ones the same words introduced
THESE = re.compile(r"\bin\s+favou?r\s+of\s+(?:these|the)\s+(?:two\s+|three\s+)?class\s+methods?\b", re.I)
EXPOSES = re.compile(rf"\bexposes\s+(?:two\s+|three\s+|a\s+)?class\s+methods?:?\s+{TO}", re.I)


def replacement_of(text: str) -> tuple[str | None, str]:
    """(the replacement the words name, `code`), or (its words, `words`) when they say it in words
    only, or (None, '') : the first cue's name; an exception an entry says is raised now is no replacement.
    "In favor of these two class methods" names the class methods the same words said a class "exposes"
    (scikit-learn 1.0: "`ConfusionMatrixDisplay` exposes two class methods `from_estimator` and
    `from_predictions` [...] `plot_confusion_matrix` is deprecated in favor of these two class methods")."""
    best = None
    these, exposed = THESE.search(text), EXPOSES.search(text)
    if these and exposed and exposed.end() <= these.start():
        named = [[g for g in exposed.groups() if g][-1].strip().lstrip("~."), *_also(text[exposed.end():])]
        best = (these.start(), " or ".join(named))
    for cue in CUES:
        for match in re.finditer(cue, text, re.I):
            name = [g for g in match.groups() if g][-1].strip().lstrip("~.")
            if re.search(r"(?:Error|Warning|Exception)$", name):
                continue
            if best is None or match.start() < best[0]:
                best = (match.start(), name + "".join(f" or {n}" for n in _also(text[match.end():])))
            break
    if best:
        return best[1], "code"
    for pattern in PROSE:
        found = re.search(pattern, text, re.I)
        if found:
            return found.group(1).strip(), "words"
    return None, ""


def _also(rest: str) -> list[str]:
    """The names a replacement's list goes on with (``.iloc`` and ``.loc``, ``start``, ``stop``)."""
    found = []
    while True:
        more = re.match(rf"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+){TO}", rest)
        if not more:
            return found
        found.append([g for g in more.groups() if g][-1].strip().lstrip("~."))
        rest = rest[more.end():]


def kind_of(text: str, old: str) -> str:
    """What `old` is, as the words say it: a keyword, a method, an alias, a behavior..."""
    head = text[: text.find(old) + len(old) + 60] if old in text else text
    name = re.escape(old) + r"(?![\w.])"  # `M`, not the `M` of :class:`MonthEnd`
    checks = [
        (rf"(?:keyword|argument|parameter|kwarg|option)s?\s+``{re.escape(old)}``"
         rf"|``{re.escape(old)}``\s+(?:keyword|argument|parameter|kwarg)", "keyword"),
        (rf":meth:`[~.]?{name}", "method"), (rf":attr:`[~.]?{name}", "attribute"),
        (rf":func:`[~.]?{name}", "function"), (rf":class:`[~.]?{name}", "class"),
        (rf":mod:`[~.]?{name}|module\s+``{re.escape(old)}``|``{re.escape(old)}``\s+module", "module"),
        (r"\balias", "alias"), (r"\bfrequenc|\boffset alias|\bstring\b|\bvalue\b", "value"),
    ]
    for pattern, kind in checks:
        if re.search(pattern, head, re.I):
            return kind
    if re.search(r"\bbehaviou?r\b|\bnow (?:raise|return)|\bdefault\b", text, re.I) and "(" not in old:
        return "behavior"
    return "attribute" if "." in old and not old.endswith(")") else "name"


HEADING = re.compile(r"^([=\-~^\"'`.*+#])\1{2,}\s*$")
REMOVAL_TITLES = re.compile(r"^(?:(?:numpy [\d.]+ python api )?removals?"  # numpy 2.0's "NumPy 2.0 Python API removals"
                            r"(?: of prior version deprecations(?:/changes)?)?|expired deprecations)$", re.I)
DEPRECATION_TITLES = re.compile(r"^(?:other )?deprecations?$|^deprecated features$", re.I)
CHANGE_TITLES = re.compile(r"^(?:backwards incompatible (?:api )?changes|other api changes|behaviou?r changes)$", re.I)
SUBTITLES = re.compile(r"^other (?:removals?|deprecations?|api changes)$", re.I)  # a sub-heading, no entry
TABLE_RULE = re.compile(r"^\s*\+[-=+]+\+\s*$")
SIMPLE_RULE = re.compile(r"^\s*=+(?:\s+=+)+\s*$")  # a simple table's rule: numpy 1.20's aliases
OLD_COLUMN = re.compile(r"\b(?:removed|old|deprecated|previous)\b", re.I)
NEW_COLUMN = re.compile(r"\b(?:new|replacement|instead|identical to)\b", re.I)


def headings(lines: list[str]) -> list[tuple[int, str, int]]:
    """(line index, title, level) of each RST heading, levels in the order their styles first appear (a mark
    under a title, or over and under it: scipy's `SciPy 1.14.0 Release Notes` is not its `Expired deprecations`)."""
    order: list[tuple[str, bool]] = []
    found = []
    for i in range(1, len(lines)):
        mark = HEADING.match(lines[i])
        title = lines[i - 1].strip()
        if mark and title and not HEADING.match(lines[i - 1]) and len(lines[i].strip()) >= len(title) - 2:
            style = (mark.group(1), i >= 2 and lines[i - 2].strip() == lines[i].strip())  # overlined or not
            if style not in order:
                order.append(style)
            found.append((i - 1, title, order.index(style)))
    return found


def sections(text: str, whole: str | None = None) -> list[tuple[str, list[str]]]:
    """(`removed` or `deprecated`, the section's lines) for each such section of a notes file; `whole`
    names the section a file is as a whole (matplotlib's `removals.rst`, scikit-learn's changelogs)."""
    lines = text.splitlines()
    if whole:
        return [(whole, lines)]
    marks = headings(lines)
    found = []
    for n, (start, title, level) in enumerate(marks):
        change = ("removed" if REMOVAL_TITLES.match(title) else "deprecated" if DEPRECATION_TITLES.match(title)
                  else "changed" if CHANGE_TITLES.match(title) else None)
        if change is None:
            continue
        end = next((s for s, _, lv in marks[n + 1:] if lv <= level), len(lines))
        found.append((change, lines[start + 2:end]))
    return found


def tables(lines: list[str]) -> list[str]:
    """The lines with each grid table of old and new names made a bullet a row, in the table's own words: the
    paragraph leading into it and each cell after its column's name, the old names' column first ("Renamed
    the following offset aliases: removed alias ``M``, new alias ``ME``, offset :class:`MonthEnd`"). Other
    tables (minimum versions of dependencies) are left out."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        simple = bool(SIMPLE_RULE.match(lines[i]))
        if not TABLE_RULE.match(lines[i]) and not simple:
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and (lines[end].strip().startswith(("+", "|")) if not simple else lines[end].strip()):
            end += 1
        rows = _simple_rows(lines[i:end]) if simple else _rows(lines[i:end])
        if len(rows) > 1 and any(OLD_COLUMN.search(h) for h in rows[0]):
            header = rows[0]
            order = sorted(range(len(header)), key=lambda k: (not OLD_COLUMN.search(header[k]),
                                                              not NEW_COLUMN.search(header[k])))
            lead = _lead(out)
            for row in rows[1:]:
                cells = ", ".join(f"{header[k]} {row[k]}" for k in order if k < len(row) and row[k])
                out.extend(["", f"- {lead} {cells}".replace("-  ", "- "), ""])
        i = end
    return out


def _rows(lines: list[str]) -> list[list[str]]:
    """A grid table's rows, each a list of its cells (a cell's lines joined)."""
    rows: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if TABLE_RULE.match(line):
            if current:
                rows.append([" ".join(c.split()) for c in current])
            current = []
            continue
        cells = line.strip().strip("|").split("|")
        current = [f"{a} {b}" for a, b in zip(current, cells)] if current else cells
    return rows


def _simple_rows(lines: list[str]) -> list[list[str]]:
    """A simple table's rows (its header first), each cell cut where the columns of its first rule stand."""
    spans = [m.span() for m in re.finditer(r"=+", lines[0])]
    rows = []
    for line in lines[1:]:
        if not SIMPLE_RULE.match(line):
            cells = [line[a:b2].strip() for (a, _), (b2, _) in zip(spans, spans[1:] + [(len(line), 0)])]
            rows.append(cells)
    return rows


def _lead(out: list[str]) -> str:
    """The paragraph just before a table ("Renamed the following offset aliases:"), "" after a heading."""
    end = len(out)
    while end and not out[end - 1].strip():
        end -= 1
    start = end
    while start and out[start - 1].strip() and not HEADING.match(out[start - 1]):
        start -= 1
    return " ".join(line.strip() for line in out[start:end])


def entries(lines: list[str]) -> list[str]:
    """A section's entries: each bullet (with its indented lines), each sub-heading with the paragraphs
    under it, each paragraph that stands alone, each row of a table of old and new names; code blocks and
    directives left out."""
    found: list[list[str]] = []
    current: list[str] | None = None
    bullet = in_code = False
    lines = tables(lines)
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        before = lines[i - 1] if i else ""
        if HEADING.match(line) or not line.strip():
            continue
        indented = line.startswith((" ", "\t"))
        if in_code and indented:
            continue
        in_code = False
        if re.match(r"^\s*\.\. ", line):
            in_code = bool(re.match(r"^\s*\.\. (?:code-block|ipython|plot|sourcecode|code)::", line))
            continue
        starts = (HEADING.match(nxt), re.match(r"^[-*] ", line),
                  not indented and (current is None or (not before.strip() and bullet)))
        if any(starts):
            current = [line[2:] if starts[1] else line.strip()]
            found.append(current)
            bullet = bool(starts[1])
        elif current is not None:
            current.append(line.strip())
        if line.rstrip().endswith("::"):
            in_code = True
    words = [clean(" ".join(e)) for e in found]
    titles = (REMOVAL_TITLES, DEPRECATION_TITLES, CHANGE_TITLES, SUBTITLES)
    return [w for w in words if w and not any(t.match(w) for t in titles)]


def notes_files(notes: pathlib.Path, library: str) -> list[tuple[pathlib.Path, str | None]]:
    """(file, the section it is as a whole or None) of a library's notes from its first release counted."""
    folder = notes / library
    files = sorted(folder.rglob("*.rst"))
    chosen = []
    for path in files:
        version = version_of(str(path.relative_to(folder)))
        if version is None or version[:2] < FIRST[library]:
            continue
        whole = None
        if library == "matplotlib" and path.parent != folder:
            whole = {"removals.rst": "removed", "deprecations.rst": "deprecated", "behaviour.rst": "changed",
                     "behavior.rst": "changed"}.get(path.name)
            if whole is None:
                continue
        if library in ("scikit-learn", "seaborn"):  # changelogs: each entry says what it is
            whole = "api"
        chosen.append((path, whole))
    return chosen


def change_of(section: str, words: str) -> str | None:
    """`removed` / `deprecated` for an entry of a section of that name; for a changelog (`api`), what its words say
    (`changed` for a rename: seaborn 0.9's "Renamed the ``size`` parameter to ``height``")."""
    if section != "api":
        return section
    if re.search(r"\b(?:has|have|was|were|are|is)\s+(?:now\s+)?(?:been\s+)?removed\b|^(?:Removed?|Remove)\b", words):
        return "removed"
    if DEPRECATED.search(words):
        return "deprecated"
    return "changed" if re.search(r"\b(?:has|have|was|were)\s+(?:been\s+)?renamed\b|^Renamed\b", words) else None


def shortened(words: str, most: int = 700) -> str:
    """The words, cut after the last whole word within `most` characters (said with `[...]`)."""
    if len(words) <= most:
        return words
    return words[:most].rsplit(" ", 1)[0] + " [...]"


def entry(library: str, version: tuple[int, ...], source: str, change: str, words: str) -> dict | None:
    """One change as the data file holds it (`names` empty when the words name no code: "Support for
    Cygwin < 3.3 has been removed")."""
    names = names_in(words)
    replacement, said = replacement_of(words)
    parts = {part.strip().rstrip("()") for part in (replacement or "").split(" or ")}
    old = [n for n in names if n != replacement and n.rstrip("()") not in parts] or names
    if THESE.search(words) and EXPOSES.search(words):  # the class that exposes the new methods is no old name
        old = [n for n in old if not any(p.startswith(n + ".") for p in parts)] or old
    return {
        "library": library,
        "change": change,
        "version": ".".join(map(str, version)),
        "deprecated_in": ".".join(map(str, version)) if change == "deprecated" else None,
        "removed_in": ".".join(map(str, version)) if change == "removed" else None,
        "names": old,
        "kind": kind_of(words, old[0]) if old else "behavior",
        "replacement": replacement or "none",
        "replacement_is": said or "none",  # code, words (a sentence), or none
        "replacement_named": bool(replacement) or not CUE_WORDS.search(words),
        "words": shortened(words),
        "source": source,
    }


def harvest(notes: pathlib.Path, library: str) -> list[dict]:
    """The entries of a library's notes."""
    found, seen = [], set()
    for path, whole in notes_files(notes, library):
        version = version_of(str(path.relative_to(notes / library)))
        source = f"{library}:{path.relative_to(notes / library)}"
        for section, lines in sections(path.read_text(errors="replace"), whole):
            for words in entries(lines):
                change = change_of(section, words)
                if change is None or (source, change, words) in seen:  # "Other Deprecations" inside "Deprecations"
                    continue
                seen.add((source, change, words))
                found.append(entry(library, version, source, change, words))
    return link_deprecations(found + warned(notes, library) + code_deprecations(notes, library, entry)
                             + keyword_deprecations(notes, library, entry) + shim_moves(notes, library, entry)
                             + decorated_deprecations(notes, library, entry))


# names too wide to link a removal to a deprecation by
TOO_WIDE = {"DataFrame", "Series", "Index", "np", "pd", "True", "False", "None", "axis", "dtype", "object", "ndarray",
            "numeric_only", "Axes", "Figure", "plt", "matplotlib", "pandas", "numpy", "rcParams"}


def same_name(a: str, b: str) -> bool:
    """`Series.ix` and `ix`, `.Styler.hide_index` and `Styler.hide_index`: one names the other's last part
    (`DataFrameGroupby.fillna` and `DataFrameGroupBy.fillna`: the notes' own spelling varies)."""
    a, b = (re.sub(r"^np\.", "numpy.", n.strip(".")) for n in (a, b))  # `np.str` is numpy 1.20's `numpy.str`
    if "." in a and "." in b:
        a, b = a.lower(), b.lower()  # but `MS` is not `ms`
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def link_deprecations(found: list[dict]) -> list[dict]:
    """A removal's `deprecated_in`: the earliest earlier release with a deprecation about the same code (the
    removal's first telling name among the deprecation's first names, and all of the removal's names or two
    of them; one about all of them when there is one); and, when the removal's words name no replacement,
    what a deprecation about all of its names named (`deprecation_replacement`, `deprecation_words`), or, for
    a removal of several names each deprecated on its own ("Removed ``DataFrame.applymap``,
    ``Styler.applymap``"), what each one's deprecation named (`deprecation_replacements`; the first name's
    also as `deprecation_replacement`)."""
    deprecations = [e for e in found if e["change"] == "deprecated" and e["names"]]
    for item in found:
        key = next((n for n in item["names"] if n not in TOO_WIDE), None)
        if item["change"] != "removed" or key is None:
            continue
        about = lasts(item["names"])
        alone = set() if item["kind"] == "keyword" or key != item["names"][0] else lasts([key])  # `method`: no
        before = [d for d in deprecations if release(d["version"]) < release(item["version"])]
        earlier = [d for d in before if any(same_name(key, m) for m in d["names"][:3])
                   and (about <= lasts(d["names"]) or len(about & lasts(d["names"])) >= 2
                        or bool(alone) and alone <= lasts(d["names"]))]
        if not earlier:
            continue
        whole = [d for d in earlier if about <= lasts(d["names"])]
        item["deprecated_in"] = min(whole or earlier, key=lambda d: release(d["version"]))["version"]
        if item["replacement"] != "none":
            continue
        if item["kind"] in ("alias", "value") and len(item["names"]) > 1:
            _each_deprecated(item, before)  # numpy 1.24's aliases: each its own row of 1.20's table
            if set(item.get("deprecation_replacements", {})) >= set(item["names"]):
                continue
            item.pop("deprecation_replacements", None)
            item.pop("deprecation_replacement", None)
        naming = [d for d in whole if d["replacement_is"] == "code"]
        if naming:
            item["deprecation_replacement"] = naming[0]["replacement"]
            item["deprecation_words"] = naming[0]["words"]
        elif len(item["names"]) > 1 or item["kind"] in ("alias", "value"):
            _each_deprecated(item, before)
    return found


def _each_deprecated(item: dict, before: list[dict]) -> None:
    """For a removal of several names, what each dotted name's own deprecation named (the earliest naming one
    in code): about that name, and about the removal's subject when that is a keyword (`axis` of groupby)."""
    subject = lasts(item["names"][:1]) if item["kind"] == "keyword" or item["names"][0] in TOO_WIDE else set()
    each: dict[str, str] = {}
    for name in item["names"]:
        eligible = "." in name or item["kind"] in ("alias", "value")  # not a class the words mention (`Hour`)
        said = [d["replacement"] for d in before if d["replacement_is"] == "code" and eligible
                and any(same_name(name, m) for m in d["names"][:3]) and lasts([name]) | subject <= lasts(d["names"])]
        if said:
            each[name] = said[0]
    if each:
        item["deprecation_replacements"] = each
        if item["names"][0] in each:
            item["deprecation_replacement"] = each[item["names"][0]]


def lasts(names: list[str]) -> set[str]:
    """The last identifier of each name (`ix` of `Series.ix`, `axis` of `axis=1`): a deprecation about all of a
    removal's names said its replacement for them all."""
    found = (IDENTIFIER.findall(n.split("(")[0].split("=")[0]) for n in names)
    return {parts[-1] for parts in found if parts}


def release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def coverage(library: str, found: list[dict]) -> str:
    """One line: of the library's listed removals, how many the data file holds with a replacement or an
    honest `none`."""
    since = COUNTED.get(library, FIRST[library])
    removals = [e for e in found if e["change"] == "removed" and tuple(map(int, e["version"].split(".")))[:2] >= since]
    code = sum(e["replacement_is"] == "code" for e in removals)
    words = sum(e["replacement_is"] == "words" for e in removals)
    none = sum(e["replacement"] == "none" and e["replacement_named"] for e in removals)
    linked = sum(e["replacement"] == "none" and bool(e.get("deprecation_replacement")) for e in removals)
    nameless = sum(not e["names"] for e in removals)
    missed = sum(not e["replacement_named"] for e in removals)
    total = len(removals)
    versions = sorted({e["version"] for e in removals}, key=lambda v: tuple(map(int, v.split("."))))
    span_ = f"{versions[0]}-{versions[-1]}" if versions else "none"
    share = 100 * (code + words + none) / total if total else 0.0
    deprecations = [e for e in found if e["change"] == "deprecated"]
    said = sum(e["replacement"] != "none" for e in deprecations)
    return (f"{library} ({span_}): {total} removals listed ({nameless} naming no code); replacement parsed: {code} as "
            f"code, {words} as words only; {none} whose words name none ({linked} of them named by their "
            f"deprecation); {missed} not parsed: {share:.1f}% covered; "
            f"{len(deprecations)} deprecations, {said} naming their replacement")


def gather(notes: pathlib.Path, numpy_git: str | None, pandas_git: str | None = None, pandas_rev: str = "HEAD",
           gits: dict[str, str] | None = None, only: list[str] | None = None) -> None:
    """Copy each library's notes into `notes/<library>/`: sdists unpacked by pip (`--no-clean` keeps
    the unpacked tree; their metadata step may fail, which does not matter here), numpy's from a git dir,
    pandas' after its last sdist with notes (2.1 on) from a git dir of pandas-dev/pandas at `pandas_rev`,
    scipy's and seaborn's from git dirs (`gits`: library -> git dir, `@rev` after it for another commit); with
    `only`, those libraries' sdists and wheels alone."""
    for library, specs in SDISTS.items():
        if only and library not in only:
            continue
        for spec, folder, pattern, *into in specs:
            with tempfile.TemporaryDirectory() as scratch:
                before = set(glob.glob(f"{tempfile.gettempdir()}/pip-download-*"))
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                                "--no-clean", "--no-build-isolation", spec, "-d", scratch],
                               capture_output=True, check=False)
                trees = set(glob.glob(f"{tempfile.gettempdir()}/pip-download-*")) - before
                for tree in trees:
                    for root in pathlib.Path(tree).glob(f"*/{folder}"):
                        for path in root.glob(pattern):
                            target = notes / library / "/".join(into) / path.relative_to(root)
                            target.parent.mkdir(parents=True, exist_ok=True)
                            shutil.copyfile(path, target)
                    shutil.rmtree(tree, ignore_errors=True)
    _wheels(notes, only)
    for library, git in (gits or {}).items():
        repo, folder, names = GIT[library]
        rev = git.split("@")[1] if "@" in git else "HEAD"
        _from_git(git.split("@")[0], rev, folder, notes / library, repo,
                  lambda name, names=names: bool(re.fullmatch(names, name)))
    if pandas_git:
        _from_git(pandas_git, pandas_rev, "doc/source/whatsnew/", notes / "pandas", "pandas-dev/pandas",
                  lambda name: (version_of(name) or (0,)) > PANDAS_SDIST_LAST and name.endswith(".rst"))
    if numpy_git:
        listing = subprocess.run(["git", "--git-dir", numpy_git, "ls-tree", "--name-only", "HEAD",
                                  "doc/source/release/"],
                                 capture_output=True, text=True, check=True).stdout.split()
        (notes / "numpy").mkdir(parents=True, exist_ok=True)
        head = subprocess.run(["git", "--git-dir", numpy_git, "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        (notes / "numpy" / "SOURCE").write_text(f"numpy/numpy git {head}\n")
        for name in listing:
            if name.endswith("-notes.rst"):
                text = subprocess.run(["git", "--git-dir", numpy_git, "show", f"HEAD:{name}"],
                                      capture_output=True, text=True, check=True).stdout
                (notes / "numpy" / pathlib.Path(name).name).write_text(text)


def _wheels(notes: pathlib.Path, only: list[str] | None = None) -> None:
    """Each wheel of WHEELS from PyPI (no sdist: an old one does not build today), its package unpacked."""
    for library, specs in WHEELS.items():
        if only and library not in only:
            continue
        for spec, python, platform, package, into in specs:
            with tempfile.TemporaryDirectory() as scratch:
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                                "--python-version", python, "--platform", platform, spec, "-d", scratch],
                               capture_output=True, check=False)
                for wheel in pathlib.Path(scratch).glob("*.whl"):
                    shutil.unpack_archive(wheel, scratch, "zip")
                if (pathlib.Path(scratch) / package).is_dir():
                    shutil.copytree(pathlib.Path(scratch) / package, notes / library / into / package,
                                    dirs_exist_ok=True)


def _from_git(git: str, rev: str, folder: str, target: pathlib.Path, repo: str, wanted) -> None:
    """The files of `folder` at `rev` of a git dir that `wanted` takes, into `target`, and a SOURCE line."""
    def show(*args: str) -> str:
        return subprocess.run(["git", "--git-dir", git, *args], capture_output=True, text=True, check=True).stdout

    head = show("rev-parse", rev).strip()
    target.mkdir(parents=True, exist_ok=True)
    taken = [name for name in show("ls-tree", "--name-only", head, folder).split() if wanted(pathlib.Path(name).name)]
    for name in taken:
        (target / pathlib.Path(name).name).write_text(show("show", f"{head}:{name}"))
    (target / "SOURCE").write_text(f"{repo} git {head} {folder} ({len(taken)} files)\n")


def _source_line(notes: pathlib.Path, library: str) -> list[str]:
    """Where the notes beyond a library's sdists came from (its SOURCE file), if any."""
    source = notes / library / "SOURCE"
    return [source.read_text().strip()] if source.exists() else []


def build(notes: pathlib.Path, out: pathlib.Path, only: list[str] | None = None) -> list[str]:
    """Write the data file from the notes; the coverage lines. With `only`, those libraries' entries are harvested
    again and every other library's are kept as the data file has them (their notes need not be there)."""
    kept = json.loads(out.read_text()) if only else None
    everything, lines = [], []
    for library in FIRST:
        if kept is not None and library not in only:
            everything.extend(c for c in kept["changes"] if c["library"] == library)
            lines.extend(line for line in kept["coverage"] if line.startswith(f"{library} ("))
            continue
        if not (notes / library).is_dir():
            lines.append(f"{library}: no notes under {notes / library} (run `gather` first)")
            continue
        found = harvest(notes, library)
        everything.extend(found)
        lines.append(coverage(library, found))
    if not everything:
        raise SystemExit(f"no notes under {notes}: run `python tools/harvest_changes.py gather --notes {notes}` first")
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {"generated_by": "tools/harvest_changes.py (do not edit by hand: run it again)",
            "sources": {lib: kept["sources"][lib] if kept is not None and lib not in only else list(dict.fromkeys(
                [s[0] for s in SDISTS.get(lib, []) + WHEELS.get(lib, [])] + _source_line(notes, lib)))
                for lib in FIRST},
            "coverage": lines, "changes": everything}
    head = json.dumps({k: v for k, v in data.items() if k != "changes"}, indent=1)[:-2]
    rows = ",\n".join(json.dumps(c, ensure_ascii=False) for c in everything)
    out.write_text(f'{head},\n "changes": [\n{rows}\n]}}\n')  # one change a line: a new release's diff reads
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["gather", "build"])
    parser.add_argument("--notes", type=pathlib.Path, default=pathlib.Path("/tmp/kb-notes"))
    parser.add_argument("--numpy-git", help="a git dir of numpy/numpy (its release notes are read with `git show`)")
    parser.add_argument("--pandas-git", help="a git dir of pandas-dev/pandas (whatsnew 2.1 on, read with `git show`)")
    parser.add_argument("--pandas-rev", default="HEAD", help="the commit or tag of --pandas-git to read (v3.0.0)")
    parser.add_argument("--git", action="append", default=[], metavar="LIBRARY=DIR[@REV]",
                        help=f"a git dir of one of {', '.join(GIT)} (its notes, read with `git show`)")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--only", action="append", choices=list(FIRST), metavar="LIBRARY",
                        help="build: harvest only this library again (repeatable), keeping the others' entries as "
                             "--out has them; gather: fetch only its sdists and wheels")
    args = parser.parse_args(argv)
    if args.step == "gather":
        gits = dict(g.split("=", 1) for g in args.git if "=" in g)
        if set(gits) - set(GIT) or len(gits) != len(args.git):
            parser.error(f"--git takes LIBRARY=DIR with LIBRARY one of {', '.join(GIT)}; got {', '.join(args.git)}")
        gather(args.notes, args.numpy_git, args.pandas_git, args.pandas_rev, gits, args.only)
        return 0
    for line in build(args.notes, args.out, args.only):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

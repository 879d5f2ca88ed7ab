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

    # 1. the notes, into one folder (sdists from PyPI, unpacked by pip; numpy from a git dir):
    python tools/harvest_changes.py gather --notes /tmp/kb-notes --numpy-git /work/.mirror/numpy+numpy/repo
    # 2. the data file and its coverage:
    python tools/harvest_changes.py build --notes /tmp/kb-notes

Where the notes come from (`SDISTS`): pandas 1.5.3 and 2.0.3 (`doc/source/whatsnew/`, 0.4 to 2.0.3;
later sdists, built with meson, ship no docs), matplotlib 3.8.4 (`doc/api/prev_api_changes/`, to 3.8),
scikit-learn 1.4.2 (`doc/whats_new/`, to 1.4), numpy's repository (`doc/source/release/`, every release).
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

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "jupyter_fixloop" / "model" / "changes.json"
SDISTS = {  # library -> (sdist, folder of its notes inside it, file pattern)
    "pandas": [("pandas==1.5.3", "doc/source/whatsnew", "v*.rst"), ("pandas==2.0.3", "doc/source/whatsnew", "v*.rst")],
    "matplotlib": [("matplotlib==3.8.4", "doc/api/prev_api_changes", "**/*.rst")],
    "scikit-learn": [("scikit-learn==1.4.2", "doc/whats_new", "v*.rst")],
}
SINCE = (0, 18)  # the releases from 2016 on: pandas 0.18, numpy 1.11, matplotlib 2.0, scikit-learn 0.18
FIRST = {"pandas": (0, 18), "numpy": (1, 11), "matplotlib": (2, 0), "scikit-learn": (0, 18)}
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


def version_of(path: str) -> tuple[int, ...] | None:
    """(0, 20, 0) from `v0.20.0.rst`, `1.25.0-notes.rst`, `api_changes_3.7.0/removals.rst`, `v1.2.rst`."""
    found = re.findall(r"(\d+)\.(\d+)(?:\.(\d+))?", path)
    if not found:
        return None
    major, minor, micro = found[-1]
    return int(major), int(minor), int(micro or 0)


def clean(text: str) -> str:
    """The words as read: one line, the issue links dropped."""
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


def replacement_of(text: str) -> tuple[str | None, str]:
    """(the replacement the words name, `code`), or (its words, `words`) when they say it in words
    only, or (None, '') : the first cue's name; an exception an entry says is raised now is no replacement."""
    best = None
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
    checks = [
        (rf"(?:keyword|argument|parameter|kwarg|option)s?\s+``{re.escape(old)}``"
         rf"|``{re.escape(old)}``\s+(?:keyword|argument|parameter|kwarg)", "keyword"),
        (rf":meth:`[~.]?{re.escape(old)}", "method"), (rf":attr:`[~.]?{re.escape(old)}", "attribute"),
        (rf":func:`[~.]?{re.escape(old)}", "function"), (rf":class:`[~.]?{re.escape(old)}", "class"),
        (rf":mod:`[~.]?{re.escape(old)}|module\s+``{re.escape(old)}``|``{re.escape(old)}``\s+module", "module"),
        (r"\balias", "alias"), (r"\bfrequenc|\boffset alias|\bstring\b|\bvalue\b", "value"),
    ]
    for pattern, kind in checks:
        if re.search(pattern, head, re.I):
            return kind
    if re.search(r"\bbehaviou?r\b|\bnow (?:raise|return)|\bdefault\b", text, re.I) and "(" not in old:
        return "behavior"
    return "attribute" if "." in old and not old.endswith(")") else "name"


HEADING = re.compile(r"^([=\-~^\"'`.*+#])\1{2,}\s*$")
REMOVAL_TITLES = re.compile(r"^(?:removals?(?: of prior version deprecations(?:/changes)?)?|expired deprecations)$",
                            re.I)
DEPRECATION_TITLES = re.compile(r"^(?:other )?deprecations?$", re.I)
CHANGE_TITLES = re.compile(r"^(?:backwards incompatible api changes|other api changes|behaviou?r changes)$", re.I)


def headings(lines: list[str]) -> list[tuple[int, str, int]]:
    """(line index, title, level) of each RST heading, levels in the order their underlines first appear."""
    order: list[str] = []
    found = []
    for i in range(1, len(lines)):
        mark = HEADING.match(lines[i])
        title = lines[i - 1].strip()
        if mark and title and not HEADING.match(lines[i - 1]) and len(lines[i].strip()) >= len(title) - 2:
            if mark.group(1) not in order:
                order.append(mark.group(1))
            found.append((i - 1, title, order.index(mark.group(1))))
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


def entries(lines: list[str]) -> list[str]:
    """A section's entries: each bullet (with its indented lines), each sub-heading with the paragraphs
    under it, each paragraph that stands alone; code blocks and directives left out."""
    found: list[list[str]] = []
    current: list[str] | None = None
    bullet = in_code = False
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
    return [w for w in words if w and not any(t.match(w) for t in (REMOVAL_TITLES, DEPRECATION_TITLES, CHANGE_TITLES))]


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
        if library == "scikit-learn":
            whole = "api"
        chosen.append((path, whole))
    return chosen


def change_of(section: str, words: str) -> str | None:
    """`removed` / `deprecated` for an entry of a section of that name; for a changelog (`api`), what its words say."""
    if section != "api":
        return section
    if re.search(r"\b(?:has|have|was|were|are|is)\s+(?:now\s+)?(?:been\s+)?removed\b|^(?:Removed?|Remove)\b", words):
        return "removed"
    return "deprecated" if DEPRECATED.search(words) else None


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
    old = [n for n in names if n != replacement] or names
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
    found = []
    for path, whole in notes_files(notes, library):
        version = version_of(str(path.relative_to(notes / library)))
        source = f"{library}:{path.relative_to(notes / library)}"
        for section, lines in sections(path.read_text(errors="replace"), whole):
            for words in entries(lines):
                change = change_of(section, words)
                if change is None:
                    continue
                found.append(entry(library, version, source, change, words))
    return link_deprecations(found)


# names too wide to link a removal to a deprecation by
TOO_WIDE = {"DataFrame", "Series", "Index", "np", "pd", "True", "False", "None", "axis", "dtype", "object", "ndarray",
            "numeric_only", "Axes", "Figure", "plt", "matplotlib", "pandas", "numpy", "rcParams"}


def same_name(a: str, b: str) -> bool:
    """`Series.ix` and `ix`, `.Styler.hide_index` and `Styler.hide_index`: one names the other's last part."""
    a, b = a.strip("."), b.strip(".")
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def link_deprecations(found: list[dict]) -> list[dict]:
    """A removal's `deprecated_in`: the earliest earlier release with a deprecation about the same code (the
    first name of each); and, when the removal's words name no replacement and that deprecation is about all
    of the removal's names, what its words named (`deprecation_replacement`, `deprecation_words`)."""
    deprecations = [e for e in found if e["change"] == "deprecated" and e["names"]]
    for item in found:
        if item["change"] != "removed" or not item["names"] or item["names"][0] in TOO_WIDE:
            continue
        when = release(item["version"])
        earlier = [d for d in deprecations if release(d["version"]) < when
                   and same_name(item["names"][0], d["names"][0])]  # what each entry is about, first
        if not earlier:
            continue
        first = min(earlier, key=lambda d: release(d["version"]))
        item["deprecated_in"] = first["version"]
        naming = [d for d in earlier if d["replacement_is"] == "code" and lasts(item["names"]) <= lasts(d["names"])]
        if item["replacement"] == "none" and naming:
            item["deprecation_replacement"] = naming[0]["replacement"]
            item["deprecation_words"] = naming[0]["words"]
    return found


def lasts(names: list[str]) -> set[str]:
    """The last part of each name (`ix` of `Series.ix`): a deprecation about all of a removal's names said its
    replacement for them all."""
    return {re.findall(r"\w+", n.split("(")[0])[-1] for n in names if re.findall(r"\w+", n.split("(")[0])}


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
    nameless = sum(not e["names"] for e in removals)
    missed = sum(not e["replacement_named"] for e in removals)
    total = len(removals)
    versions = sorted({e["version"] for e in removals}, key=lambda v: tuple(map(int, v.split("."))))
    span_ = f"{versions[0]}-{versions[-1]}" if versions else "none"
    share = 100 * (code + words + none) / total if total else 0.0
    deprecations = [e for e in found if e["change"] == "deprecated"]
    said = sum(e["replacement"] != "none" for e in deprecations)
    return (f"{library} ({span_}): {total} removals listed ({nameless} naming no code); replacement parsed: {code} as "
            f"code, {words} as words only; {none} whose words name none; {missed} not parsed: {share:.1f}% covered; "
            f"{len(deprecations)} deprecations, {said} naming their replacement")


def gather(notes: pathlib.Path, numpy_git: str | None) -> None:
    """Copy each library's notes into `notes/<library>/`: sdists unpacked by pip (`--no-clean` keeps
    the unpacked tree; their metadata step may fail, which does not matter here), numpy's from a git dir."""
    for library, specs in SDISTS.items():
        for spec, folder, pattern in specs:
            with tempfile.TemporaryDirectory() as scratch:
                before = set(glob.glob(f"{tempfile.gettempdir()}/pip-download-*"))
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                                "--no-clean", "--no-build-isolation", spec, "-d", scratch],
                               capture_output=True, check=False)
                trees = set(glob.glob(f"{tempfile.gettempdir()}/pip-download-*")) - before
                for tree in trees:
                    for root in pathlib.Path(tree).glob(f"*/{folder}"):
                        for path in root.glob(pattern):
                            target = notes / library / path.relative_to(root)
                            target.parent.mkdir(parents=True, exist_ok=True)
                            shutil.copyfile(path, target)
                    shutil.rmtree(tree, ignore_errors=True)
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


def numpy_source(notes: pathlib.Path) -> str:
    source = notes / "numpy" / "SOURCE"
    return source.read_text().strip() if source.exists() else "numpy/numpy git"


def build(notes: pathlib.Path, out: pathlib.Path) -> list[str]:
    """Write the data file from the notes; the coverage lines."""
    everything, lines = [], []
    for library in FIRST:
        if not (notes / library).is_dir():
            lines.append(f"{library}: no notes under {notes / library} (run `gather` first)")
            continue
        found = harvest(notes, library)
        everything.extend(found)
        lines.append(coverage(library, found))
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {"generated_by": "tools/harvest_changes.py (do not edit by hand: run it again)",
            "sources": {lib: [s for s, _, _ in specs] for lib, specs in SDISTS.items()}
            | {"numpy": [numpy_source(notes)]},
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
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args(argv)
    if args.step == "gather":
        gather(args.notes, args.numpy_git)
        return 0
    for line in build(args.notes, args.out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

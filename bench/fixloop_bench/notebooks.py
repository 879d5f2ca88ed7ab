"""One real notebook, run plainly and in batch mode: its figures and how each drift cell went.

For each notebook: the cells plain Jupyter runs (nbclient, errors allowed) against the cells batch
mode runs; the fixes, by what verified them (the output saved in the notebook, a following cell that
discriminates, a check, or nothing); the cells kept as their author's examples (they raised when saved
too) and those that run but look wrong; the API-drift cells (cells that ran when the notebook was
saved, without an error, and that fail here when run plainly, not for a missing package, file or
network, theirs or that of the cell they fail after) and how batch mode left each: fixed right,
fixed wrong, fixed but unverified, or not fixed; and what was left, and why. Each run works on its
own copy of the notebook's folder (notebooks write files).

A drift cell batch mode runs (repaired, or running once a cell above it was) is **right** when a
check or the saved output verified its repair, or when what it shows now matches its saved text
output; **wrong** when it shows another output than the one saved while the notebook still
reproduces its saved outputs (every cell above it that ran as written and printed something printed
what was saved) and the cell draws no random numbers; **unverified** otherwise (no saved text output,
as for a plot; random data; or a cell above already shows another output than the one saved).

A library's numbers change too (scikit-learn 0.20 shuffles a seeded Perceptron otherwise than 0.19):
with an era kernel (`--era-kernel`, a kernel whose libraries are those of the notebook's time, old
enough to have the removed spelling and new enough to have its replacement), the notebook batch mode
wrote is run there plainly, and a fix shown wrong whose cell shows the saved output there is
**right**: it means what the code it replaced meant, in the library the output was saved with. Each
such fix is listed apart, with the era kernel that showed it.

Batch mode never applies the repair of a module of the notebook's folder (a `thinkstats2.py` that uses a
removed numpy alias): it proposes it as a diff. The bench measures what accepting it would give, as a
figure of its own and never as fixed: in a fresh copy of the folder (the corpus is not touched) each
diff batch mode proposed is applied as `patch -p1` applies it, batch mode runs the notebook again there
(more diffs proposed then are applied in turn, up to `ACCEPT_ROUNDS` runs), and each drift cell the
first run left that this run runs is right, wrong or unverified as above.

Each kernel a notebook's code runs in here (plain, batch mode, the era kernel's runs) is given a home of its own
(`Homes`): a notebook that writes an IPython profile or a startup file (`~/.ipython/...`) changes neither this
machine's home nor the next notebook's kernels. What each wrote there is listed (`home_writes`).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace

FIXED = ("fixed", "unverified")  # a repair that runs: verified by something, or by nothing
RAN = ("ok", *FIXED, "looks_wrong")  # ran without raising in the notebook's kernel (batch.run.RAN)
VERIFIED_BY = ("saved output", "following cell", "check", "")  # batch's CellOutcome.verified_by; "": unverified
VERDICTS = ("right", "wrong", "unverified")
DRIFT = (*VERDICTS, "left", "")  # a decided cell: a drift cell batch mode ran (its verdict) or left; "": no drift cell


@dataclass
class NotebookFigures:
    name: str
    corpus: str = ""
    cells: int = 0
    plain: int = 0
    batch: int = 0
    fixed: Counter = field(default_factory=Counter)  # by what verified them: VERIFIED_BY
    examples: int = 0  # cells that raise as they did when saved: the author's examples, kept
    looks_wrong: int = 0  # cells that run, but pandas says an assignment in them did nothing
    proposed: int = 0
    drift: int = 0
    verdicts: Counter = field(default_factory=Counter)  # drift cells run: "right", "wrong", "unverified"
    left: list = field(default_factory=list)  # (cell number, status, why)
    drift_left: list = field(default_factory=list)  # (cell number, the error) of drift cells not fixed
    hidden: list = field(default_factory=list)  # (cell number, the error) of hidden-state cells: not drift
    not_library: list = field(default_factory=list)  # (cell number, the error) of cells failing for no library's
    # change: Python 2 code, a magic of an IPython extension no cell loads (not drift)
    wrong: list = field(default_factory=list)  # (cell number, the first differing lines) of drift fixes shown wrong
    era: list = field(default_factory=list)  # (cell number, the era kernel) of fixes shown right only there
    seeded: list = field(default_factory=list)  # (cell number, the era kernel, "right" | "drawn" | "assigned" |
    # "wrong") of fixes nothing here verified, decided by the same random draws in the era kernel (`seeded_in_era`;
    # "drawn": right by the values its figure draws; "assigned": by the values of the names it assigns)
    accepted: Counter = field(default_factory=Counter)  # drift cells left that run once the module diffs are
    # accepted: "right", "wrong", "unverified" (never counted as fixed)
    accepted_files: list = field(default_factory=list)  # the module files whose proposed diffs were accepted
    accepted_wrong: list = field(default_factory=list)  # (cell, differing lines) of those shown wrong then
    evidence: Counter = field(default_factory=Counter)  # fixed cells by each source of evidence they had
    runs_only: list = field(default_factory=list)  # fixed cells whose only evidence is a later cell that runs: none
    fixed_wrong: list = field(default_factory=list)  # (cell, differing lines) of fixed cells a saved output calls wrong
    seconds: float = 0.0
    decided: list = field(default_factory=list)  # (cell number, batch status, DRIFT) of each cell batch mode decided
    unfinished: str = ""  # what stopped the notebook's run (SIGTERM, --stop-after): its figures are its cells decided
    code_cells: int = 0  # the notebook's code cells (more than `cells` when it is unfinished)
    model_cells: list | None = None  # with --model-cells drift: the cells whose repair might call the model
    # (`model_cells`); None: every failing cell's might
    judged_in: str = ""  # the line saying its repairs were judged in fixloop's Python, not the kernel's ("": not)
    home_writes: list = field(default_factory=list)  # "batch: .ipython/profile_default/ipython_config.py": the files
    # a run of it wrote in the home its kernel was given (`Homes`)

    @property
    def drift_fixed(self) -> int:
        return sum(self.verdicts[v] for v in VERDICTS)

    def as_json(self) -> dict:
        return {**asdict(self), "fixed": dict(self.fixed), "verdicts": dict(self.verdicts),
                "evidence": dict(self.evidence), "accepted": dict(self.accepted)}

    @classmethod
    def from_json(cls, data: dict) -> NotebookFigures:
        data = dict(data)
        data["fixed"], data["verdicts"] = Counter(data.get("fixed", {})), Counter(data.get("verdicts", {}))
        data["evidence"] = Counter(data.get("evidence", {}))
        data["accepted"] = Counter(data.get("accepted", {}))
        data["fixed_wrong"] = [tuple(x) for x in data.get("fixed_wrong", [])]
        data["left"] = [tuple(x) for x in data.get("left", [])]
        data["drift_left"] = [tuple(x) for x in data.get("drift_left", [])]
        data["hidden"] = [tuple(x) for x in data.get("hidden", [])]
        data["not_library"] = [tuple(x) for x in data.get("not_library", [])]
        data["wrong"] = [tuple(x) for x in data.get("wrong", [])]
        data["era"] = [tuple(x) for x in data.get("era", [])]
        data["seeded"] = [tuple(x) for x in data.get("seeded", [])]
        data["accepted_wrong"] = [tuple(x) for x in data.get("accepted_wrong", [])]
        data["decided"] = [tuple(x) for x in data.get("decided", [])]
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def add(self, other: NotebookFigures) -> None:
        """Sum `other`'s counts into these (for a corpus's or a side's total)."""
        for name in ("cells", "plain", "batch", "proposed", "examples", "looks_wrong", "drift", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.fixed.update(other.fixed)
        self.verdicts.update(other.verdicts)
        self.left += other.left
        self.drift_left += [(f"{other.name} cell {n}", e) for n, e in other.drift_left]
        self.hidden += [(f"{other.name} cell {n}", e) for n, e in other.hidden]
        self.not_library += [(f"{other.name} cell {n}", e) for n, e in other.not_library]
        self.wrong += [(f"{other.name} cell {n}", d) for n, d in other.wrong]
        self.era += [(f"{other.name} cell {n}", k) for n, k in other.era]
        self.seeded += [(f"{other.name} cell {n}", k, v) for n, k, v in other.seeded]
        self.evidence.update(other.evidence)
        self.accepted.update(other.accepted)
        self.accepted_files += [f"{other.name}: {name}" for name in other.accepted_files]
        self.accepted_wrong += [(f"{other.name} cell {n}", d) for n, d in other.accepted_wrong]
        self.runs_only += [f"{other.name} cell {n}" for n in other.runs_only]
        self.fixed_wrong += [(f"{other.name} cell {n}", d) for n, d in other.fixed_wrong]
        self.home_writes += [f"{other.name}: {path}" for path in other.home_writes]


class Homes:
    """A home of its own for each kernel a notebook's code runs in (`env`), in the bench's scratch: what a notebook
    writes to `~` (an IPython profile, a startup file, a config) reaches neither the machine's home nor another
    notebook's kernels. `written` lists what the runs wrote there, but for what a kernel writes by itself."""

    def __init__(self, scratch: str):
        self.scratch = scratch
        self.made: list[tuple[str, str]] = []  # (the run's kind, its home)
        self.mpl = os.environ.get("MPLCONFIGDIR") or os.path.join(scratch, "mplconfig")  # one font cache a run

    def env(self, kind: str) -> tuple[tuple[str, str], ...]:
        """The variables a kernel of the run `kind` ("plain", "batch", "era") gets: HOME and what is read from it
        (IPython's profiles, the XDG directories) in a new empty directory."""
        home = tempfile.mkdtemp(prefix=f"home-{kind}-", dir=self.scratch)
        self.made.append((kind, home))
        return (("HOME", home), ("IPYTHONDIR", os.path.join(home, ".ipython")),
                ("XDG_CONFIG_HOME", os.path.join(home, ".config")), ("XDG_CACHE_HOME", os.path.join(home, ".cache")),
                ("XDG_DATA_HOME", os.path.join(home, ".local", "share")), ("MPLCONFIGDIR", self.mpl))

    def written(self) -> list[str]:
        """"kind: path" of each file the runs wrote in their homes, IPython's own profile files left out."""
        found = []
        for kind, home in self.made:
            for folder, _, files in os.walk(home):
                for name in files:
                    path = os.path.relpath(os.path.join(folder, name), home)
                    if path not in KERNEL_WRITES and not path.startswith(KERNEL_CACHES):
                        found.append(f"{kind}: {path}")
        return sorted(set(found))


KERNEL_WRITES = frozenset(os.path.join(".ipython", "profile_default", *path) for path in (
    ("startup", "README"), ("history.sqlite",), ("history.sqlite-journal",)))
"""The files an IPython kernel writes in an empty home by itself (its profile's startup README; its history, where
the kernel keeps one): not the notebook's."""
KERNEL_CACHES = (os.path.join(".cache", "fontconfig") + os.sep,)  # a library's caches, not the notebook's writes


def ran_when_saved(cell) -> bool:
    """The cell ran when the notebook was saved, without an error: it has an execution count or
    outputs (text or images), none of them an error."""
    outputs = cell.get("outputs", [])
    ran = cell.get("execution_count") is not None or bool(outputs)
    return ran and not any(o.get("output_type") == "error" for o in outputs)


def environment(error: str) -> bool:
    """A failure of this machine, not of the code: a package or program not installed, a file not there, no
    network."""
    from jupyter_fixloop.batch import words

    return bool(words.missing_package(error) or words.missing_program(error) or words.missing_file(error, "")
                or words.network([error]) or _namespace_portion(error))


DOTTED_MISSING = re.compile(r"^ModuleNotFoundError: No module named '(\w+\.[\w.]+)'$")


def _namespace_portion(error: str) -> bool:
    """`No module named 'mpl_toolkits.basemap'`: a module missing under a namespace package (PEP 420, no
    `__init__`), whose portions are distributions of their own (basemap beside matplotlib's mplot3d): a package not
    installed here, not a module a library moved (`sklearn.cross_validation`, under a regular package)."""
    import importlib.util

    missing = DOTTED_MISSING.match(error.strip())
    if not missing:
        return False
    try:
        spec = importlib.util.find_spec(missing.group(1).split(".")[0])
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin in (None, "namespace") and spec.submodule_search_locations is not None


STAR, STAR_IMPORT = "*", re.compile(r"^\s*from\s+[\w.]+\s+import\s+\*", re.MULTILINE)
"""A cell failing for this machine's reasons whose `from M import *` may not have run: a NameError for a name no cell
binds by its name is then the machine's too (Wald_Friedman's `make_distribution_plots`, its module downloaded
first)."""
MAGIC_NOT_FOUND = re.compile(r"UsageError: (?:Line|Cell) magic (?:function )?`%%?(\w+)` not found")
NAME_NOT_DEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
LOAD_EXT = re.compile(r"^\s*%load_ext\s+(\w+)\s*$", re.MULTILINE)


def drift_cells(outcomes, original_cells: dict, plain: dict) -> set[int]:
    """The cells that ran when the notebook was saved and fail here plainly, not for a missing package,
    file (or one that is a Git LFS pointer, not its data) or network (their own, or that of the unfixed cell
    they fail after), and that do not read what a cell failing for those reasons should have made (themselves, or
    through a function they call: their NameError names it): no fix could
    make such a cell run here (ch06's `StratifiedKFold(random_state=1)` over data the network never gave), so it
    measures nothing; nor a magic whose extension a cell failing for those reasons did not load (`%watermark`
    after `%load_ext watermark`)."""
    from jupyter_fixloop.batch.cells import cell_names, imported_names
    from jupyter_fixloop.batch.run import Left

    found, lost = set(), set()  # lost: names the cells that failed for this machine's reasons did not make
    no_data = {o.number for o in outcomes if o.left is Left.NO_FILE}  # batch mode found its data not there
    named = set().union(*(cell_names(o.source)[1] for o in outcomes))  # what some cell binds by its name
    for o in outcomes:
        error = plain.get(o.number)
        cause = plain.get(o.blamed_cell) if o.status == "skipped" else error
        reads, defines = cell_names(o.source)
        magic, unnamed = MAGIC_NOT_FOUND.match(error or ""), NAME_NOT_DEFINED.match(error or "")
        blocked = error is not None and (environment(error) or o.number in no_data or bool(reads & lost)
                                         or bool(magic and f"%{magic.group(1)}" in lost)
                                         or bool(unnamed and unnamed.group(1) in lost)  # read by a function it calls
                                         or bool(unnamed and STAR in lost and unnamed.group(1) not in named))
        if blocked:  # what it imports it did import (imports come first), up to the import of a package not
            # installed here (`import dask.dataframe as dd`: no `dd`): the rest it may not have made
            lost |= defines - imported_names(_imports_before(o.source, error))
            lost |= {STAR} if STAR_IMPORT.search(o.source) else set()  # `from utils import *` after a download
            lost |= {f"%{name}" for name in LOAD_EXT.findall(o.source)}  # `%load_ext watermark`: no `%watermark`
        elif error is None:
            lost -= defines
        if (error is not None and ran_when_saved(original_cells[o.number]) and not blocked
                and not (o.status == "skipped" and (cause is None or environment(cause) or o.blamed_cell in no_data))):
            found.add(o.number)
    return found


def _imports_before(source: str, error: str) -> str:
    """The cell's code (as Python) up to its first top-level import of the package its error says is not installed
    here: the imports that ran; the whole cell when its error names no such package."""
    from jupyter_fixloop.batch import words
    from jupyter_fixloop.kernel import readable  # a cell's IPython syntax as Python, line for line

    missing, view = words.MISSING_MODULE.match(error.strip()) or DOTTED_MISSING.match(error.strip()), readable(source)
    try:
        body = ast.parse(view.python).body if missing and view is not None else []
    except SyntaxError:
        body = []
    for statement in body:
        if any(n == missing.group(1) or n.startswith(missing.group(1) + ".") for n in _modules_of(statement)):
            return "\n".join(view.python.splitlines()[:statement.lineno - 1])
    return source


def _modules_of(statement: ast.stmt) -> list[str]:
    """The modules a top-level statement imports (none when it is no import)."""
    if isinstance(statement, ast.Import):
        return [a.name for a in statement.names]
    if isinstance(statement, ast.ImportFrom):
        return [statement.module or ""]
    return []


@dataclass(frozen=True)
class _Unrun:
    """A code cell before batch mode ran it, read as `drift_cells` reads an outcome."""

    number: int
    source: str
    status: str = ""
    blamed_cell: int | None = None
    left: object = None  # batch mode's `Left`: not known yet


def model_cells(nb, plain: dict) -> frozenset[int]:
    """The cells `--model-cells drift` lets a model repair: the drift cells as the figures count them (`drift_cells`
    less hidden state and cells failing for no library's change), read from the plain run before batch mode runs.
    They hold every drift cell the figures count: a cell the figures leave out besides is one batch mode skips
    after an unfixed cell above it or leaves for its data not there (a Git LFS pointer), and neither is repaired."""
    cells = [_Unrun(i + 1, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]
    drift = drift_cells(cells, {i + 1: c for i, c in enumerate(nb.cells)}, plain)
    return frozenset(drift - hidden_state(cells, plain) - not_library(cells, plain))


NAME_ERROR = re.compile(r"NameError: name '(\w+)' is not defined")
UNKNOWABLE = re.compile(r"^\s*%(?:run|store)\b|\bglobal\s|\bexec\(|\bglobals\(\)|\bvars\(\)", re.MULTILINE)


def hidden_state(outcomes, plain: dict) -> set[int]:
    """The cells whose plain run raised a NameError naming a name no cell of the notebook defines or imports,
    or one a cell found so should have made: the notebook was saved with names its author's kernel held from
    cells since edited or deleted (`original_paid`, a stray `x`). None when a cell may bind names no reading
    sees (`from m import *`, `%run`, `global`, `exec`)."""
    from jupyter_fixloop.batch.cells import cell_names

    everywhere: set[str] = set()
    for o in outcomes:
        everywhere |= cell_names(o.source)[1]
        if UNKNOWABLE.search(o.source):
            return set()
    if "*" in everywhere:
        return set()
    found, lost = set(), set()
    for o in outcomes:
        name = NAME_ERROR.match(plain.get(o.number) or "")
        if name and (name.group(1) not in everywhere or name.group(1) in lost):
            found.add(o.number)
            lost |= cell_names(o.source)[1]
        elif plain.get(o.number) is None:
            lost -= cell_names(o.source)[1]
    return found


PYTHON_2 = re.compile(r"SyntaxError: Missing parentheses in call to '(?:print|exec)'")  # Python 3's own words
# an exercise's placeholder (`coord = ...  # your code here`) read as a value: Python's own words for Ellipsis
PLACEHOLDER = re.compile(r"'ellipsis' object|\bnot 'ellipsis'")
# `input()` or `getpass()` asking the person at the notebook, whom no run here has: IPython's own words
ASKS_A_PERSON = re.compile(r"StdinNotImplementedError\b")


def not_library(outcomes, plain: dict) -> set[int]:
    """The cells whose plain run failed for no library's change: Python 2 code (Python's "Missing parentheses in
    call to 'print'"), a magic IPython did not find whose extension no cell of the notebook loads (`%watermark`,
    loaded by its author's profile), an exercise's `...` placeholder read as a value ("'ellipsis' object has no
    attribute"), an `input()` asking a person (IPython's "raw_input was called, but this frontend does not support
    input requests"), and the cells that fail after such a cell, reading what it should have made."""
    from jupyter_fixloop.batch.cells import cell_names, imported_names

    loaded = {name for o in outcomes for name in LOAD_EXT.findall(o.source)}
    found, lost = set(), set()
    for o in outcomes:
        error = plain.get(o.number) or ""
        magic = MAGIC_NOT_FOUND.match(error)
        reads, defines = cell_names(o.source)
        if (PYTHON_2.match(error) or (magic and magic.group(1) not in loaded) or PLACEHOLDER.search(error)
                or ASKS_A_PERSON.match(error) or (error and reads & lost)):
            found.add(o.number)
            lost |= defines - imported_names(o.source)
    return found


def shown(outcomes, original_cells: dict, batch_cells: dict) -> dict[int, tuple]:
    """For each cell batch mode ran: (True: it shows the output saved in the notebook, False: another one
    while the notebook still reproduces its saved outputs and the cell draws no random numbers, None: cannot
    tell; the lines that differ)."""
    from jupyter_fixloop.receipt import saved_check, saved_output, seeds, unrepeatable

    out, trusted, seeded = {}, True, False
    for o in outcomes:
        seeded = seeded or seeds(o.source)
        if o.status not in RAN:
            continue
        saved = saved_output(original_cells[o.number].get("outputs", []))
        now = saved_output(batch_cells[o.number].get("outputs", []))
        same = saved_check(now or "", None, saved) if saved is not None else None
        differs = [line for line in same[2] if line[:1] in "+-"][:6] if same else []
        if same and same[0]:
            out[o.number] = (True, [])
        elif same and same[0] is False and trusted and not unrepeatable(o.source, seeded):
            out[o.number] = (False, differs)
        else:  # None: an old estimator repr the text alone cannot decide (receipt/estimators.py)
            out[o.number] = (None, [])
        if same and same[0] is False:
            trusted = False  # later saved outputs cannot be expected (random data, the clock, a changed repr)
    return out


def drift_verdicts(outcomes, original_cells: dict, batch_cells: dict, drift: set[int]) -> dict[int, tuple]:
    """For each drift cell batch mode ran: ("right" | "wrong" | "unverified", the lines that differ)."""

    verdicts, seen = {}, shown(outcomes, original_cells, batch_cells)
    for o in outcomes:
        if o.number not in drift or o.number not in seen:
            continue
        matches, differs = seen[o.number]
        if o.status == "fixed" and o.verified_by or matches:
            verdicts[o.number] = ("right", [])
        elif matches is False:
            said = ["(batch mode says so: a later output disagrees with the fix)"] if o.disagrees else []
            verdicts[o.number] = ("wrong", differs + said)
        else:
            verdicts[o.number] = ("unverified", [])
    return verdicts


def evidence_of(o) -> tuple[str, ...]:
    """The evidence a `fixed` cell had, as data: the source of each pass that checked its values (its loop's
    account: CheckOutcome.source), and "later saved output" when a later cell that reads what it made showed
    the output saved in the notebook (batch mode's verified_by, with no such pass in the account)."""
    account = o.result.account if o.result is not None else None
    checked = tuple(sorted(set(account.checked))) if account is not None else ()
    if o.verified_by == "saved output" and "saved" not in checked:
        checked += ("later saved output",)
    return checked


async def right_in_era(nb, folder: str, rel: str, wrong: list[int], original: dict, era: str, timeout: float,
                      scratch: str, homes: Homes | None = None) -> list[int]:
    """Of the cells in `wrong` (drift fixes shown wrong here), those that show their saved output when
    `nb`, the notebook batch mode wrote, runs plainly in a fresh copy of `folder` in the kernel `era`."""
    from jupyter_fixloop.batch.run import run_plainly
    from jupyter_fixloop.receipt import saved_check, saved_output

    there = shutil.copytree(folder, os.path.join(scratch, f"era-{len(os.listdir(scratch))}"))
    workdir = tempfile.mkdtemp(prefix="nbbench-", dir=scratch)
    ran = await run_plainly(nb, os.path.dirname(os.path.join(there, rel)), timeout, era, workdir,
                            env=(homes or Homes(scratch)).env("era"))
    if ran is None:
        return []
    right = []
    for number in wrong:
        outputs = ran.cells[number - 1].get("outputs", [])
        saved = saved_output(original[number].get("outputs", []))
        errored = any(o.get("output_type") == "error" for o in outputs)
        if saved is not None and not errored and saved_check(saved_output(outputs) or "", None, saved)[0]:
            right.append(number)
    return right


SEED = ("import random as _bench_random\n_bench_random.seed(0)\ntry:\n    import numpy as _bench_numpy\n"
        "    _bench_numpy.random.seed(0)\nexcept ImportError:\n    pass\n")
"""The first cell of both runs of `seeded_in_era`: Python's and numpy's global generators from one seed (numpy's
legacy `RandomState` stream is the same in every numpy version, NEP 19), so both draw the same numbers."""

DRAWN = """
def _bench_drawn(path={path!r}):
    try:
        import ast, json, sys
        np = __import__("numpy")
        plt, pd = sys.modules.get("matplotlib.pyplot"), sys.modules.get("pandas")
        def r(v):
            return float("%.6g" % v) if v == v else None
        def rs(values):
            return () if values is None else tuple(r(v) for v in np.asarray(values, float).ravel())
        figures = {{}}
        for number in (plt.get_fignums() if plt else []):
            axes = []
            for ax in plt.figure(number).axes:
                bars = [("bar", r(p.get_x()), r(p.get_y()), r(p.get_width()), r(p.get_height()))
                        for p in ax.patches if type(p).__name__ == "Rectangle"]
                lines = [("line",) + rs(line.get_xydata()) for line in ax.lines]
                points = [("points",) + rs(c.get_offsets()) + ("values",) + rs(c.get_array()) + ("sizes",)
                          + rs(c.get_sizes()) for c in ax.collections if type(c).__name__ == "PathCollection"]
                axes.append([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + sorted(bars + lines + points, key=str))
            figures[number] = axes
        def one(x):
            if x is None or (isinstance(x, float) and x != x) or (pd is not None and x is getattr(pd, "NA", 0)):
                return None
            if isinstance(x, (bool, int, float, np.number, np.bool_)):
                return r(float(x))
            if isinstance(x, str):
                return x
            if isinstance(x, tuple):  # a MultiIndex's labels
                return [one(y) for y in x]
            if pd is not None and isinstance(x, pd.Timestamp) or isinstance(x, np.datetime64):
                return str(x)
            raise TypeError(type(x).__name__)
        def arr(a):
            a = np.asarray(a)
            flat = a.ravel()[:2000]
            if flat.dtype.kind in "biuf":
                return ["n", list(a.shape), [r(float(x)) for x in flat]]
            if flat.dtype.kind == "M":  # in nanoseconds: pandas 3 parses text to microseconds, 0.25 to nanoseconds
                return ["t", list(a.shape), [str(x) for x in flat.astype("datetime64[ns]")]]
            if flat.dtype.kind == "m":
                return ["n", list(a.shape), [r(float(x)) for x in flat.astype("timedelta64[ns]").astype("int64")]]
            return ["o", list(a.shape), [one(x) for x in flat]]
        def value(v, deep=0):
            if pd is not None and isinstance(v, pd.DataFrame):
                return ["frame", list(v.shape), [one(c) for c in v.columns], arr(v.index)] + [
                    arr(v.iloc[:, i]) for i in range(min(v.shape[1], 50))]
            if pd is not None and isinstance(v, pd.Series):
                return ["series", one(v.name), arr(v.index), arr(v)]
            if pd is not None and isinstance(v, pd.Index) or isinstance(v, np.ndarray):
                return arr(v)
            if isinstance(v, (list, tuple)) and deep < 3 and len(v) <= 1000:
                return ["list"] + [value(x, deep + 1) for x in v]
            if isinstance(v, dict) and deep < 3 and len(v) <= 1000:
                return ["dict"] + sorted([str(k), value(x, deep + 1)] for k, x in v.items())
            if hasattr(v, "get_params") and not isinstance(v, type):
                found = {{k: value(x, deep + 1) for k, x in vars(v).items() if k.endswith("_") and not k.startswith(
                    "_") and isinstance(x, (np.ndarray, int, float, np.number))}}
                if not found:
                    raise TypeError(type(v).__name__)
                return ["fitted", found]
            return one(v)
        def named(node, out):
            for n in ast.iter_child_nodes(node):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
                                  ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                    continue
                if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
                    root = n
                    while isinstance(root, (ast.Subscript, ast.Attribute)):
                        root = root.value
                    if isinstance(root, ast.Name):
                        out.add(root.id)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    out.add(n.id)
                named(n, out)
            return out
        values, ns = {{}}, get_ipython().user_ns
        try:
            names = named(ast.parse(ns.get("_ih", [""])[-1]), set())
        except SyntaxError:
            names = set()
        for name in sorted(names):
            if name in ns and not name.startswith("_bench"):
                try:
                    values[name] = value(ns[name])
                except Exception:
                    values[name] = "?"
        with open(path, "a") as f:
            f.write(json.dumps([get_ipython().execution_count - 1, figures, values]) + "\\n")  # counted on before it
    except Exception:  # a figure it cannot read: nothing written, no verdict
        pass
get_ipython().events.callbacks["post_execute"].insert(0, _bench_drawn)
"""
"""Also in that first cell: after each cell (before the inline backend closes its figures), what every figure open
then draws, written to a file of the run's own: each axes' title and labels and the values of its bars (x, y,
width, height), lines (their points) and scatter points (where, the values their colors stand for: `c=labels`,
and their sizes), rounded to six significant digits; no style, color nor tick text (the libraries of the two runs
draw them in their own way). And the values of the names the cell assigned (or assigned into: `df['c'] = ...`):
frames, series, arrays, numbers, text, dates, lists and dicts of them and a fitted estimator's learned arrays
(`labels_`, `coef_`), as their values rounded alike (an array's shape and first 2,000 values, a frame's first 50
columns), no dtype (pandas 3 holds text as `str`, 0.25 as `object`); a
value of another kind is "?" (not comparable). Written for Python 3.7 too: the era kernel runs it."""


def _written(path: str, cells) -> tuple[dict[int, dict], dict[int, dict]]:
    """What `DRAWN` wrote, for the cells of a run (`cells`, the seeding one first), by the place of each code cell
    after it (1 the first): the figures (by number) new or changed since the code cell before it (a cell is not
    credited with what an earlier one drew and left open), and the values of the names it assigned."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = {row[0]: row[1:] for row in map(json.loads, f) if isinstance(row[0], int)}
    except (OSError, ValueError):
        return {}, {}
    drawn, assigned, before = {}, {}, {}
    for at, cell in enumerate(cells):
        row = rows.get(cell.get("execution_count")) if cell.cell_type == "code" else None
        if row is not None:
            drawn[at] = {n: f for n, f in row[0].items() if before.get(n) != f} if at else {}
            assigned[at] = (row[1] if len(row) > 1 else {}) if at else {}
            before = row[0]
    return drawn, assigned


def _same_values(then: dict, now: dict | None) -> bool:
    """Every name the replaced code assigned (`then`, in the era kernel) holds a value of a kind compared, and the
    fix assigned it the same value (a fitted estimator: the learned arrays both versions have, one at least)."""
    def same(a, b):
        if isinstance(a, list) and a[:1] == ["fitted"] and isinstance(b, list) and b[:1] == ["fitted"]:
            common = set(a[1]) & set(b[1])
            return bool(common) and all(a[1][k] == b[1][k] for k in common)
        return a == b
    return bool(then) and now is not None and "?" not in then.values() and all(
        name in now and same(v, now[name]) for name, v in then.items())


async def seeded_in_era(saved_nb, fixed_nb, folder: str, rel: str, cells: list[int], era: str, today: str | None,
                        timeout: float, scratch: str, homes: Homes | None = None) -> dict[int, str]:
    """A verdict for the drift fixes in `cells` that nothing here verified (their cell draws random numbers, or
    no saved output could check them): the notebook as saved (`saved_nb`) runs plainly in the era kernel `era`
    and the notebook batch mode wrote (`fixed_nb`) runs plainly here (`today`), each in a fresh copy of
    `folder`, both after `SEED`. "right": the fix shows as text what the code it replaced showed there, on the
    same draws; "drawn" (right too), showing no text in either, its figures draw the same values there and here
    (`DRAWN`: some bar, line or point drawn, and the same); "assigned" (right too), showing nothing and drawing
    nothing in either, the names the replaced code assigned there hold the same values here (`DRAWN`: each of a kind
    compared); "wrong": it shows other text while every cell above
    ran in both without an error and each that showed text in both showed the same (figures that differ decide
    nothing: two versions may draw the same data otherwise); no verdict otherwise (an error, nothing shown, or the
    runs apart earlier)."""
    import nbformat

    from jupyter_fixloop.batch.run import run_plainly
    from jupyter_fixloop.receipt import saved_check, saved_output

    homes = homes or Homes(scratch)

    async def seeded(nb, kernel, kind):
        nb = nbformat.from_dict(nb)
        there = shutil.copytree(folder, os.path.join(scratch, f"seeded-{len(os.listdir(scratch))}"))
        drawn = there + ".drawn.jsonl"
        nb.cells.insert(0, nbformat.v4.new_code_cell(SEED + DRAWN.format(path=drawn)))
        ran = await run_plainly(nb, os.path.dirname(os.path.join(there, rel)), timeout, kernel,
                                tempfile.mkdtemp(prefix="nbbench-", dir=scratch), env=homes.env(kind))
        if ran is None:
            return None, ({}, {})
        return [c.get("outputs", []) if c.cell_type == "code" else [] for c in ran.cells[1:]], _written(
            drawn, ran.cells)

    (then, (then_drawn, then_values)), (now, (now_drawn, now_values)) = (await seeded(saved_nb, era, "era-seeded"),
                                                                         await seeded(fixed_nb, today, "seeded"))
    if then is None or now is None or len(then) != len(now):
        return {}
    errored = [any(o.get("output_type") == "error" for o in a + b) for a, b in zip(then, now)]
    same = [saved_check(saved_output(b) or "", None, saved_output(a))[0] if saved_output(a) is not None
            and saved_output(b) is not None else None for a, b in zip(then, now)]
    for at, drawn in then_drawn.items():  # the cell's place below the seeding cell: `at` - 1 in `same`
        if 0 < at <= len(same) and same[at - 1] is None and _draws(drawn) and drawn == now_drawn.get(at):
            same[at - 1] = "drawn"
    for at, values in then_values.items():  # nothing shown nor drawn: the values it assigned
        if 0 < at <= len(same) and same[at - 1] is None and not _draws(then_drawn.get(at, {})) and _same_values(
                values, now_values.get(at)):
            same[at - 1] = "assigned"
    verdicts = {}
    for number in cells:
        at = number - 1
        if errored[at] or same[at] is None:
            continue
        if same[at]:
            verdicts[number] = same[at] if same[at] in ("drawn", "assigned") else "right"
        elif not any(errored[:at]) and False not in same[:at]:
            verdicts[number] = "wrong"
    return verdicts


def _draws(figures: dict) -> bool:
    """Whether some axes of `figures` (as `DRAWN` wrote them) draws a bar, a line or points."""
    return any(len(axes) > 3 for figure in figures.values() for axes in figure)


ACCEPT_ROUNDS = 3  # batch runs with the module diffs accepted, each taking the diffs the one before proposed


def accept_diff(diff: str, folder: str) -> bool:
    """Apply `diff` (batch mode's, named relative to the notebook's folder) in `folder` as a user accepting it
    would (`patch -p1`); False when it does not apply."""
    import subprocess

    done = subprocess.run(["patch", "-p1", "-N", "-s", "-r", "-", "-d", folder], input=diff, text=True,
                          capture_output=True)
    return done.returncode == 0


async def with_modules_accepted(folder: str, rel: str, first, original: dict, left: set[int], options,
                                scratch: str, stop) -> tuple[dict[int, tuple], list[str]]:
    """For the drift cells in `left` (those batch mode's run `first` did not run): the verdict of each that
    runs when batch mode runs the notebook again in a fresh copy of `folder` with the module diffs it proposed
    applied (`accept_diff`; the diffs proposed then applied in turn, up to ACCEPT_ROUNDS runs); and the files
    whose diffs were applied. The corpus itself is never changed."""
    from jupyter_fixloop.batch.run import fix_notebook, read_notebook
    from jupyter_fixloop.errors import Stopped

    there = shutil.copytree(folder, os.path.join(scratch, f"accepted-{len(os.listdir(scratch))}"))
    path = os.path.join(there, rel)
    applied, files, verdicts = set(), [], {}
    outcomes = first.outcomes
    for _ in range(ACCEPT_ROUNDS):
        diffs = [(o.module_diff, o.module_file) for o in outcomes if o.module_diff and o.module_diff not in applied]
        if not diffs:
            break
        for diff, name in dict(diffs).items():
            applied.add(diff)
            if accept_diff(diff, os.path.dirname(path)) and name not in files:
                files.append(name)
        nb = read_notebook(path)
        result = await fix_notebook(nb, path, options, stop=stop)
        if result.stopped:
            raise Stopped(result.stopped)
        outcomes = result.outcomes
        verdicts = drift_verdicts(outcomes, original, {i + 1: c for i, c in enumerate(nb.cells)}, left)
    return verdicts, files


async def measure(folder: str, rel: str, options, scratch: str, keep: str | None = None,
                  era: str | None = None, deadline: float | None = None, drift_only: bool = False) -> NotebookFigures:
    """One notebook, plainly and in batch mode, each in a fresh copy of `folder`; with `keep`, the
    notebook batch mode wrote is saved under `keep` (its fixes, its outputs) for review; with `era` (a
    kernel name), the fixes shown wrong are run there too (`right_in_era`); with `drift_only`, only the drift cells'
    repairs may call the model (`model_cells`; the others get the built-in engine alone). SIGTERM, SIGINT or
    `deadline` (a `time.monotonic()` value: --stop-after) end it where it is: its figures are then those of the
    cells batch mode decided so far, and say so (`unfinished`)."""
    from jupyter_fixloop.batch.run import Stop, fix_notebook, plain_errors, read_notebook

    started = time.perf_counter()
    plain_dir, batch_dir = (shutil.copytree(folder, os.path.join(scratch, f"{kind}-{len(os.listdir(scratch))}"))
                            for kind in ("plain", "batch"))
    nb = read_notebook(os.path.join(plain_dir, rel))
    workdir = tempfile.mkdtemp(prefix="nbbench-", dir=scratch)
    homes = Homes(scratch)
    stop = Stop()
    stop.listen()  # SIGINT, SIGTERM: this notebook's cells decided so far are kept, and the bench ends (corpora.main)
    if deadline is not None:
        asyncio.get_running_loop().call_later(max(0.0, deadline - time.monotonic()), stop.set, STOP_AFTER)
    plain = await plain_errors(nb, os.path.dirname(os.path.join(plain_dir, rel)), options.cell_timeout,
                               options.kernel_name, workdir, stop, homes.env("plain"))
    if plain is None:  # stopped before batch mode decided any cell
        return NotebookFigures(rel, unfinished=stop.why, code_cells=_code_cells(nb),
                               seconds=time.perf_counter() - started, home_writes=homes.written())
    path, saved_nb = os.path.join(batch_dir, rel), nb
    nb = read_notebook(path)
    options = replace(options, model_cells=model_cells(nb, plain)) if drift_only else options
    original = {i + 1: c for i, c in enumerate(nb.cells)}
    original = {n: dict(outputs=list(c.get("outputs", [])), execution_count=c.get("execution_count"))
                for n, c in original.items()}
    result = await fix_notebook(nb, path, replace(options, kernel_env=homes.env("batch")), stop=stop)
    if result.kernel_note:  # measured all the same, in the default Python 3 kernel, and said
        print(f"{rel}: {result.kernel_note}", file=sys.stderr, flush=True)
    if result.judged_note:  # the repairs were judged in fixloop's Python, not the kernel's: said, and kept
        print(f"{rel}: {result.judged_note}", file=sys.stderr, flush=True)
    if keep:
        _keep(nb, os.path.join(keep, rel))
    decided = {o.number for o in result.outcomes}  # every code cell, unless the run was stopped
    figures = NotebookFigures(rel, cells=len(result.outcomes), batch=result.cells_run, code_cells=result.code_cells,
                              plain=sum(e is None for n, e in plain.items() if n in decided or not result.stopped),
                              unfinished=result.stopped, model_cells=_listed(options.model_cells),
                              judged_in=result.judged_note)
    drift = drift_cells(result.outcomes, original, plain)
    hidden = hidden_state(result.outcomes, plain) & drift
    drift -= hidden
    apart = not_library(result.outcomes, plain) & drift
    drift -= apart
    figures.not_library = [(n, (plain.get(n) or "")[:120]) for n in sorted(apart)]
    ran = {o.number for o in result.outcomes if o.status in RAN}
    figures.hidden = [(n, (plain.get(n) or "")[:120] + (" (batch mode runs it)" if n in ran else ""))
                      for n in sorted(hidden)]
    verdicts = drift_verdicts(result.outcomes, original, {i + 1: c for i, c in enumerate(nb.cells)}, drift)
    wrong = [n for n, (verdict, _) in verdicts.items() if verdict == "wrong"]
    if era and wrong and not stop.why:
        for number in await right_in_era(nb, folder, rel, wrong, original, era, options.cell_timeout, scratch, homes):
            verdicts[number] = ("right", [])
            figures.era.append((number, era))
    unverified = [n for n, (verdict, _) in verdicts.items() if verdict == "unverified"]
    if era and unverified and not stop.why:
        decided = await seeded_in_era(saved_nb, nb, folder, rel, unverified, era, options.kernel_name,
                                      options.cell_timeout, scratch, homes)
        for number, verdict in sorted(decided.items()):
            verdicts[number] = ("right" if verdict in ("drawn", "assigned") else verdict,
                                ["(the same random draws in the era kernel)"] if verdict == "wrong" else [])
            figures.seeded.append((number, era, verdict))
    figures.drift = len(drift)
    if any(o.module_diff for o in result.outcomes) and not stop.why:
        await _accepting(figures, folder, rel, result, original, drift - set(verdicts),
                         replace(options, kernel_env=homes.env("accepted")), scratch, stop)
    _count(figures, result.outcomes, verdicts, drift, plain, original, nb)
    figures.home_writes = homes.written()
    figures.seconds = time.perf_counter() - started
    return figures


STOP_AFTER = "--stop-after"  # the why of a run its wall-clock budget ended


def _listed(cells: frozenset[int] | None) -> list[int] | None:
    return None if cells is None else sorted(cells)


def _code_cells(nb) -> int:
    return sum(c.cell_type == "code" and bool(c.source.strip()) for c in nb.cells)


async def _accepting(figures: NotebookFigures, folder, rel, result, original, left, options, scratch, stop) -> None:
    """The drift cells `left` that run once the module diffs are accepted (`with_modules_accepted`), into
    `figures`; a stop under way leaves them uncounted and the notebook unfinished (its cells all decided)."""
    from jupyter_fixloop.errors import Stopped

    try:
        accepted, figures.accepted_files = await with_modules_accepted(
            folder, rel, result, original, left, options, scratch, stop)
    except Stopped as exc:
        figures.unfinished = str(exc) or stop.why
        return
    figures.accepted.update(verdict for verdict, _ in accepted.values())
    figures.accepted_wrong = [(n, " | ".join(d)[:240]) for n, (v, d) in sorted(accepted.items()) if v == "wrong"]


def _count(figures: NotebookFigures, outcomes, verdicts: dict, drift: set, plain: dict, original: dict, nb) -> None:
    """Each decided cell's figures into `figures`: by status, by verdict, what was left and why."""
    seen = shown(outcomes, original, {i + 1: c for i, c in enumerate(nb.cells)})
    for o in outcomes:
        if o.status in FIXED:  # "unverified": repaired and runs, but nothing checked it
            figures.fixed[o.verified_by if o.status == "fixed" else ""] += 1
        if o.status == "fixed":
            evidence = evidence_of(o)
            figures.evidence.update(evidence)
            figures.runs_only += [o.number] if not evidence else []
            matches, differs = seen.get(o.number, (None, []))
            figures.fixed_wrong += [(o.number, " | ".join(differs)[:240])] if matches is False else []
        figures.proposed += o.status == "proposed"
        figures.examples += o.status == "example"
        figures.looks_wrong += o.status == "looks_wrong"
        said = ""
        if o.number in verdicts:
            said, diff = verdicts[o.number]
            figures.verdicts[said] += 1
            if said == "wrong":
                figures.wrong.append((o.number, " | ".join(diff)[:240]))
        elif o.number in drift:
            said = "left"
            figures.drift_left.append((o.number, (o.error or plain.get(o.number) or "")[:120]))
        figures.decided.append((o.number, o.status, said))
        if o.status not in RAN:
            figures.left.append((o.number, o.status, why_left(o)))


def _keep(nb, path: str) -> None:
    import nbformat

    os.makedirs(os.path.dirname(path), exist_ok=True)
    nbformat.write(nb, path)


def why_left(outcome) -> str:
    """A short category for what was left: why batch mode says it left it (`CellOutcome.left`), its status, or
    the name of its error."""
    from jupyter_fixloop.batch import words
    from jupyter_fixloop.batch.run import Left

    if words.missing_package(outcome.error):
        return "package not installed"
    if words.missing_program(outcome.error):
        return "program not installed"
    if outcome.left is Left.NO_FILE:
        return "file not there"
    if outcome.left is Left.NO_NETWORK:
        return "network"
    if outcome.left is Left.KERNEL_DIED and outcome.status != "skipped":
        return "the notebook's kernel died in it"
    if outcome.status == "skipped":
        return "an earlier cell was not fixed"
    if outcome.status == "proposed":
        return "model fix proposed, not run (unreviewed)"
    if outcome.status == "example":
        return "raised when saved too (the author's example), kept"
    if outcome.status == "looks_wrong":
        return "runs, but looks wrong" + (" (a repair proposed)" if outcome.patched else "")
    if outcome.left is Left.SAVED_OUTPUT:
        return "no candidate matched the saved output"
    if outcome.module_diff:  # raised in a module of the notebook's folder: its repair proposed
        return f"a repair of {outcome.module_file} proposed as a diff (not applied)"
    return "no repair: " + (outcome.error.split(":", 1)[0] or "?")


HEADER = ["| notebook | code cells | run plain | run batch | fixed (saved output / following cell / check / "
          "unverified) | proposed | examples kept | look wrong | drift cells fixed | drift fixes right / wrong / "
          "unverified | hidden state (not drift) |", "|---|---|---|---|---|---|---|---|---|---|---|"]


def by_verifier(f: NotebookFigures) -> str:
    """The fixes by what verified them: saved output / following cell / check / nothing."""
    return " / ".join(str(f.fixed[by]) for by in VERIFIED_BY)


def by_verdict(f: NotebookFigures) -> str:
    """The drift cells batch mode ran: right / wrong / unverified."""
    return " / ".join(str(f.verdicts[v]) for v in VERDICTS)


def unfinished_words(f: NotebookFigures) -> str:
    """" (unfinished, stopped by SIGTERM: 12 of 40 code cells decided)" for a notebook whose run was stopped."""
    if not f.unfinished:
        return ""
    return f" (unfinished, stopped by {f.unfinished}: {len(f.decided)} of {f.code_cells} code cells decided)"


def _row(name: str, f: NotebookFigures) -> str:
    name += unfinished_words(f) if f.name == name else ""
    return (f"| {name} | {f.cells} | {f.plain} | {f.batch} | {by_verifier(f)} | {f.proposed} | {f.examples} | "
            f"{f.looks_wrong} | {f.drift_fixed}/{f.drift} | {by_verdict(f)} | {len(f.hidden)} |")


def report(all_figures: list[NotebookFigures]) -> str:
    """The per-notebook table, the total, what was left and why, and each drift cell not fixed or fixed wrong."""
    lines = list(HEADER)
    total = NotebookFigures("total")
    for f in all_figures:
        lines.append(_row(f.name, f))
        total.add(f)
    lines.append(_row("**total**", total))
    worse = [f.name for f in all_figures if f.batch < f.plain]
    lines += ["", "batch runs fewer cells than plain Jupyter in: " + (", ".join(worse) if worse else "none"),
              "", "left, and why:"]
    for why, n in Counter(w for _, _, w in total.left).most_common():
        lines.append(f"- {n} {why}")
    lines += ["", "drift cells not fixed:"]
    lines += [f"- {where}: {error}" for where, error in total.drift_left] or ["- none"]
    if total.accepted_files:
        lines += ["", f"drift cells left that run once the proposed module repairs are accepted (not counted as "
                      f"fixed; {', '.join(total.accepted_files)}): {accepted_line(total)}"]
        lines += [f"- shown wrong then: {where}: {diff}" for where, diff in total.accepted_wrong]
    lines += ["", "hidden state, not drift (a NameError naming a name no cell of the notebook defines or imports):"]
    lines += [f"- {where}: {error}" for where, error in total.hidden] or ["- none"]
    lines += ["", "not library drift, not counted as drift (Python 2 code; a magic of an IPython extension no cell "
                  "loads; an exercise's `...` read as a value; an `input()` asking a person; the cells failing after "
                  "them for what they did not make):"]
    lines += [f"- {where}: {error}" for where, error in total.not_library] or ["- none"]
    lines += ["", "drift fixes shown wrong (output not the one saved; `-` saved, `+` now):"]
    lines += [f"- {where}: {diff}" for where, diff in total.wrong] or ["- none"]
    if total.era:
        lines += ["", "drift fixes shown wrong here and right in an era kernel (the saved output, the old library):"]
        lines += [f"- {where}: as saved in `{kernel}`" for where, kernel in total.era]
    if total.seeded:
        lines += ["", "drift fixes nothing here verified, decided by the same random draws in an era kernel (the "
                      "notebook as saved run there, the fixed one here, both from one seed):"]
        said = {"right": "right, as the replaced code showed in `{}`", "wrong": "wrong, not what the replaced code "
                "showed in `{}`", "drawn": "right, its figure draws the values the replaced code drew in `{}`",
                "assigned": "right, it assigns the values the replaced code assigned in `{}`"}
        lines += [f"- {where}: {said[verdict].format(kernel)}" for where, kernel, verdict in total.seeded]
    lines += ["", "wrote in the home its kernel was given (each run had one of its own: `Homes`):"]
    lines += [f"- {path}" for path in total.home_writes] or ["- nothing"]
    lines += ["", evidence_line(total)]
    lines += [f"- only a later cell that runs: {where}" for where in total.runs_only]
    lines += [f"- a saved output calls it wrong: {where}: {diff}" for where, diff in total.fixed_wrong]
    return "\n".join(lines)


def accepted_line(f: NotebookFigures) -> str:
    """The drift cells left that run once the proposed module repairs are accepted: "7 (right 5 / wrong 0 /
    unverified 2)"."""
    return f"{sum(f.accepted.values())} ({' / '.join(f'{v} {f.accepted[v]}' for v in VERDICTS)})"


def by_evidence(f: NotebookFigures) -> str:
    """The fixed cells by each source of evidence they had: "assert 2, saved 3" ("none" without any)."""
    return ", ".join(f"{source} {n}" for source, n in sorted(f.evidence.items())) or "none"


def evidence_line(f: NotebookFigures) -> str:
    """What verified the fixed cells, in one line, with the two figures that must be 0."""
    return (f"fixed {f.fixed['saved output'] + f.fixed['following cell'] + f.fixed['check']}, by evidence (a cell "
            f"per source it had): {by_evidence(f)}; fixed whose only evidence is a later cell that runs: "
            f"{len(f.runs_only)}; fixed a saved output calls wrong: {len(f.fixed_wrong)}")

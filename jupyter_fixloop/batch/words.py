"""Plain words for failures no change to the cell can fix: a package that is not installed, a program a
library runs that is not installed, a file that is not there, a network the sandbox does not have. Batch
mode says what to do instead of pretending a model might fix them, and never makes up the data or deletes
the line. And the words for a repair that ran but that the notebook's saved output turned down: not "no
repair"."""

from __future__ import annotations

import os
import re

from ..hidden import clipped
from ..kernel import case_twin

# a `%%fixloop <instruction>` cell on the built-in engine: it repairs code, it does not write any
NOT_GENERATED = "the built-in engine does not generate code from an instruction (a model does: --model)"

MISSING_MODULE = re.compile(r"^ModuleNotFoundError: No module named '([\w]+)'$")
REQUIRED = re.compile(r"^ImportError: (?:Missing optional dependency '|)([\w-]+)'? is required\b|"
                      r"^ImportError: Missing optional dependency '([\w-]+)'|"
                      r"^ImportError: `Import ([\w-]+)` failed\.")  # pandas: "`Import lxml` failed."
MISSING_FILE = re.compile(r"^(?:FileNotFoundError|OSError|IOError): (?:\[Errno 2\] )?(?:No such file or directory|"
                          r"File .*? does not exist)[:\s]*'?([^']*)'?"
                          r"|^(?:FileNotFoundError|OSError|IOError): (\S[^\n]*?) not found\.$")  # numpy's loadtxt
NETWORK = re.compile(r"URLError|ConnectionError|ConnectTimeout|gaierror|Name or service not known|"
                     r"Temporary failure in name resolution|Network is unreachable|nodename nor servname")

# a program the library runs, not installed here: matplotlib's "Failed to process string with tex because latex
# could not be found", "Requested MovieWriter (ffmpeg) not available"
MISSING_PROGRAM = re.compile(r"\bbecause ([\w.+-]+) could not be found\b|Requested MovieWriter \(([\w.+-]+)\) not "
                             r"available|MovieWriter ([\w.+-]+) unavailable")

PIP_NAMES = {"sklearn": "scikit-learn", "cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml",
             "bs4": "beautifulsoup4", "dateutil": "python-dateutil", "Crypto": "pycryptodome", "pytables": "tables"}
"""Import names whose package on PyPI has another name."""


def missing_package(error: str) -> str | None:
    """The words for a package that is not installed, or None. A dotted module (`sklearn.cross_validation`)
    is not this: its package is there, the module moved, and a repair may fix the import."""
    m = MISSING_MODULE.match(error.strip()) or REQUIRED.match(error.strip())
    if not m:
        return None
    name = next(g for g in m.groups() if g)
    package = PIP_NAMES.get(name, name)
    return (f"`{name}` is not installed in this notebook's environment: `pip install {package}` (or "
            f"`%pip install {package}` in the notebook), then rerun; no change to the cell can fix this")


def missing_program(error: str) -> str | None:
    """The words for a program a library runs (LaTeX, ffmpeg) that this machine does not have, or None."""
    m = MISSING_PROGRAM.search(error or "")
    if not m:
        return None
    name = next(g for g in m.groups() if g)
    return (f"the program `{name}` is not installed on this machine, and the library runs it: install it, then "
            "rerun; fixloop does not change what the cell asks for")


def missing_file(error: str, cwd: str) -> str | None:
    m = MISSING_FILE.match(error.strip())
    if not m:
        return None
    path = (m.group(1) or m.group(2) or "").strip() or "the file the cell opens"
    twin = case_twin(path, cwd) if cwd else None
    if twin:
        return (f"the file `{path}` is not there, but `{twin}` is: the names differ in case only (a file system "
                "that ignores case, as macOS's and Windows' do, opened it); correct the path in the cell, then "
                "rerun")
    return (f"the file `{path}` is not there: the notebook runs in `{cwd}` (its working directory); put the "
            "file there or correct the path, then rerun (fixloop does not make up data)")


LFS_POINTER = b"version https://git-lfs.github.com/spec/"  # the first line of a Git LFS pointer file
QUOTED = re.compile(r"""(?:'([^'\n]{1,400})'|"([^"\n]{1,400})")""")  # a string the code names a file by


def named_files(code: str, cwd: str) -> dict[str, str]:
    """The files the code names by a quoted path (relative to `cwd` or absolute) that exist: name -> its path
    relative to `cwd`."""
    found = {}
    for m in QUOTED.finditer(code):
        name = m.group(1) or m.group(2)
        path = os.path.join(cwd, os.path.expanduser(name))
        if name not in found and os.path.isfile(path):
            found[name] = os.path.relpath(path, cwd)
    return found


def lfs_pointers(code: str, cwd: str) -> tuple[str, ...]:
    """The files the code names that hold a Git LFS pointer: a repository cloned without its large files, so
    what the cell reads from them is three lines of text, not the data."""
    found = []
    for name, path in named_files(code, cwd).items():
        try:
            if os.path.getsize(os.path.join(cwd, path)) < 1024:
                with open(os.path.join(cwd, path), "rb") as f:
                    if f.read(len(LFS_POINTER)) == LFS_POINTER:
                        found.append(name)
        except OSError:
            continue
    return tuple(found)


def lfs_data(files) -> str:
    """The words for a cell whose data comes from Git LFS pointer files, not from the data they stand for."""
    named = ", ".join(f"`{f}`" for f in files)
    return (f"{named} {'holds a Git LFS pointer' if len(files) == 1 else 'hold Git LFS pointers'}, not the data: the "
            "repository was fetched without its large files (`git lfs pull` there fetches them), then rerun; no "
            "change to the cell can fix this (fixloop does not make up data)")


def unreachable(error: str) -> str | None:
    """The words for a cell whose own run in the notebook's kernel could not reach the network, or None."""
    if NETWORK.search(error or ""):
        return ("the cell needs the network, which the notebook's kernel did not reach here: no change to the cell "
                "can fix that (run it where the network is reachable)")
    return None


def network(texts: list[str]) -> str | None:
    if any(NETWORK.search(t or "") for t in texts):
        return ("the cell needs the network, and the sandbox where fixes are tried has none: fixloop cannot "
                "verify a fix for it (run it where the network is reachable)")
    return None


def raised_instead(first, rounds) -> str | None:
    """The words for a loop that found no fix although a round's repair no longer raised the cell's own error but
    another (ipython-in-depth: `from IPython import parallel` repaired, then `Client()` finds no cluster running):
    both errors, so that the next step is the reader's. None when no round's run raised another error than the
    cell's. Where in the cell the other error came from is the receipt's to say, not these words."""
    if first is None or not first.ename:
        return None
    own = (first.ename, first.evalue)
    for r in rounds:
        if r.candidate is not None and r.receipt.ename and (r.receipt.ename, r.receipt.evalue) != own:
            then = f"{r.receipt.ename}: {clipped(r.receipt.evalue or '', 160)}".rstrip(": ")
            need, own = missing_package(then), clipped(f"{first.ename}: {first.evalue or ''}", 120)
            return (f"a repair (round {r.index}) no longer raised `{own}`"
                    f" but raised `{then}`: not applied, since nothing verified it (its receipt shows it)"
                    + (f"; {need}" if need else ""))
    return None


def saved_output_differs(rounds) -> str | None:
    """The words for a loop that found no fix although a repair ran: its round's only failed check was the
    output saved in the notebook (the repaired code printed something else). None when no round was that."""
    for r in rounds:
        failed = [c for c in r.receipt.checks if not c.passed]
        if r.receipt.kind == "check_failed" and failed and all(c.source == "saved" for c in failed):
            return (f"a repair ran (round {r.index}), but its output differs from the output saved in the notebook "
                    f"({failed[0].detail or 'see its receipt'}), so it was not applied; the cell is left as it was "
                    "(its receipt shows the diff; `--no-saved-outputs` drops this check)")
    return None


DIFFERS = "shows another output than the one saved"  # a cell after a fix, in its line and the fix's (run.py)

"""The user's code runs once, where the user ran it: what batch mode knows without running it again.

Two facts batch mode needs used to cost a second run of the user's cells in the notebook's folder:
plain Jupyter's count of the cells that run, and whether running a cell's code again (a fix of it, or the
cells below a changed earlier cell) repeats what its first run did. Both are read from the one run:

- **What a cell's run changed on disk** (`FolderWatch`): the files of the notebook's folder (its top level
  and two levels of subfolders, at most WATCHED entries; `__pycache__` and `.git` left out) before and after
  the cell ran in the notebook's kernel; a file made, removed, or whose size, modification time or inode
  moved. What a cell writes elsewhere (another folder, a database server, the network) is not seen.
- **Plain Jupyter's count** (`plain_count`): plain Jupyter runs the same cells on the same state as this
  run up to the first cell batch mode changed, so those count as they ran here. A changed cell counts as
  its original ran here: a fix replaced a cell whose original raised (or ran, when pandas said it looked
  wrong), a `%%fixloop` cell is refused by IPython in plain Jupyter (a UsageError, "Cell magic not found":
  its body does not run) unless a cell above loads fixloop, a cause repair re-ran cells that had run (the
  failing one had raised). After the first change, a cell counts as it ran here when it reads no name a
  change touched (`tainted`): its plain outcome is then the one it had here, on the same values. What a
  changed cell touched is what its runs in a sandbox saw change (a fix's and its original's effect), else
  what its code binds or may change in place (`may_change`: the names a method is called on or that are
  handed to a call). The others are not counted either way but said as unknown, and what they may change
  is tainted in turn: a cell that reads a tainted name, every cell after a changed or unknown cell whose
  run changed files (a later cell may read them), and, after a change, a cell too big to read and the
  cells a dead kernel never ran. Hidden channels other than names and the folder's files (a module's
  global state, the clock, a random seed) are not followed.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

WATCHED = 5000  # entries of the notebook's folder (and its subfolders, two levels down) compared around a cell
DEPTH = 2
SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".ipynb_checkpoints"})
SHOWN = 4  # file names a sentence names
BUILTINS = frozenset(dir(builtins))


# ---------------------------------------------------------------- what a cell's run changed on disk


def folder_state(root: str) -> dict[str, tuple[int, int, int]]:
    """(size, mtime in ns, inode) of each file under `root` (DEPTH levels of subfolders, WATCHED entries at
    most, links not followed into), by path relative to `root`."""
    state: dict[str, tuple[int, int, int]] = {}
    queue, seen = deque([(root, 0)]), 0
    while queue and seen < WATCHED:
        folder, depth = queue.popleft()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > WATCHED:
                    break
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < DEPTH and entry.name not in SKIPPED_DIRS:
                            queue.append((entry.path, depth + 1))
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                state[os.path.relpath(entry.path, root)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return state


def changed(before: dict, after: dict) -> tuple[str, ...]:
    """The files made, removed or rewritten between two `folder_state`s, sorted."""
    return tuple(sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name)))


class FolderWatch:
    """The notebook's folder, compared around each run in the notebook's kernel."""

    def __init__(self, root: str):
        self.root = root
        self.before: dict = {}

    def start(self) -> None:
        self.before = folder_state(self.root)

    def stop(self) -> tuple[str, ...]:
        return changed(self.before, folder_state(self.root))


def files_words(names: Iterable[str]) -> str:
    """`a.csv`, `b.csv` and 3 more"""
    names = list(names)
    shown = ", ".join(f"`{n}`" for n in names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


# ---------------------------------------------------------------- plain Jupyter's count


def may_change(code: str, binds: set[str]) -> frozenset[str]:
    """The names running `code` may change, read from the code alone: what it binds (`binds`, from
    cells.cell_names: assignments, `df['x'] = ...`, imports, `del`), plus each name a method is called on
    (`rows.append(x)`, `df.drop(..., inplace=True)`) or that is handed to a call other than a builtin's
    (`clean(df)`); every name it reads when it cannot be parsed."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return frozenset(binds | {n for n in _words(code) if n not in BUILTINS})
    changed = set(binds)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            changed.add(func.value.id)
        if not (isinstance(func, ast.Name) and func.id in BUILTINS):
            changed.update(a.id for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name))
    return frozenset(changed - (BUILTINS - binds))


def _words(code: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", code))


@dataclass(frozen=True)
class Cell:
    """One code cell as this run left it, for plain Jupyter's count. `ran`: it ran here without raising
    (a failed check counts as run, as in plain Jupyter). `changed`: what ran here last is not the cell
    as written (a fix, a `%%fixloop` body, a re-run below a changed earlier cell); then `plain_ran` is
    how its original went in plain Jupyter. `names`: what it and its change read or bind. `wrote`: its
    runs here changed files of the folder. `unreached`: the kernel died before it."""

    number: int
    ran: bool
    reads: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    changed: bool = False
    plain_ran: bool = False
    wrote: bool = False
    unread: bool = False  # too big to read for names (run.BIG_CELL)
    unreached: bool = False


@dataclass(frozen=True)
class PlainCount:
    """Plain Jupyter's count: `ran` cells known to run, `unknown` not known either way; `first` the
    first cell batch mode changed (None: none was)."""

    ran: int
    unknown: int
    first: int | None


def plain_count(cells: Iterable[Cell]) -> PlainCount:
    """Plain Jupyter's count from this run (the rule in the module's docstring)."""
    tainted: set[str] = set()
    files_differ = False  # a changed or unknown cell changed files: what a later cell reads may differ
    ran = unknown = 0
    first = None
    for cell in cells:
        drifted = first is not None
        if files_differ or (drifted and (cell.reads & tainted or cell.unreached or cell.unread)):
            unknown += 1
            tainted |= cell.names
            files_differ = files_differ or cell.wrote
            continue
        if cell.changed:
            first = cell.number if first is None else first
            ran += cell.plain_ran
            tainted |= cell.names
            files_differ = files_differ or cell.wrote
            continue
        ran += cell.ran
    return PlainCount(ran, unknown, first)

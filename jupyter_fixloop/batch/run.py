"""`jupyter-fixloop run NOTEBOOK`: run a notebook top to bottom and repair the cells that fail.

The notebook runs cell by cell in its own kernel (nbclient), exactly as Jupyter would run it. When a
cell fails, what it left is held, the kernel is put back as it was before that cell (see
checkpoint.py), its state is mirrored into a sandbox, and the loop repairs the cell there. A verified
fix is then run in the notebook's kernel, so the state moves on and the outputs saved are real. A
cell that is not fixed leaves the kernel as plain Jupyter would (what the cell did before it raised
stays), and every later cell runs: never a worse notebook than running it plainly. A later cell
that fails on a name an unfixed cell should have defined is "skipped" (not repaired, its failure is
that cell's); any other failure gets its own repair.

Who wrote a fix decides whether it runs in the notebook's kernel, which is not a sandbox: a repair
of the built-in engine (rules templated from the cell) is applied; a litellm model's verified fix is
written into the output notebook and the report, but the kernel runs the original cell, unless a
person accepted it (`--interactive`) or `--accept-unreviewed` was given (SECURITY.md).

`%%fixloop` cells are not run through the magic (its fixes stay proposals, and it needs
`%load_ext`): batch mode runs the cell's body in the kernel, evaluates its `--expect` checks there,
and honours its other options. The `%%fixloop` line is kept as written; a fix replaces the body only.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import copy
import os
import re
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum

from ..cell import missing_names, split_magic
from ..errors import FixloopError, HelperFailed, KernelDied, KernelError, UsageError
from ..hidden import clipped
from ..kernel import Snapshot, remove_scratch, scratch_dir, wire
from ..model import variables_from_json
from ..options import BUILTIN, LoopOptions
from ..result import METADATA_KEY, LoopResult, loop_summary
from ..sandbox import owner_tag, remove_tree
from . import words
from .cells import CellPlan, assigned_keys, cell_names, imported_names, parse_cell
from .modules import ModuleFailure, failing_module, imports_of, judged_cell, module_diff
from .once import Cell, FolderWatch, files_words, may_change, plain_count
from .saved import SavedOutputs, chained_warning
from .upstream import CauseFix, find_cause, plan_or_none

# said after the status ("fixed: matches ..."), so not "fixed" again
SAVED_WORDS = "matches the output saved in the notebook (as the sandbox reports its output: unsigned)"

REPORT_FORMATS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}
BIG_CELL = 2 * 1024**2  # bytes of source above which a cell runs as written: not read for names, not repaired
STOP_GRACE = 10.0  # seconds a stopped cell's run gets to wind down before the run ends without it


class NotebookError(UsageError):
    """The notebook file is missing, is not JSON, or is not a valid notebook."""


class CellFailed(FixloopError):
    """A cell raised while a notebook was run without repairs."""


# ---------------------------------------------------------------- values


@dataclass(frozen=True)
class BatchOptions:
    """What `run` was asked to do: the loop's options (Jupyter config and flags), the seconds a cell
    may run in the notebook's kernel, `cells`, the 1-based cell numbers that may be repaired (None: all), and
    `model_cells`, those whose repair may call the loop's model (None: all; any other is given the built-in
    engine alone, whatever model is named: a bench spends a slow model only on the cells it measures)."""

    loop: LoopOptions = field(default_factory=LoopOptions)
    cell_timeout: float = 600.0
    cells: frozenset[int] | None = None
    model_cells: frozenset[int] | None = None
    kernel_name: str | None = None
    accept_unreviewed: bool = False  # run a litellm model's verified fix in the notebook's kernel unreviewed
    plain: bool = True  # count the cells a plain Jupyter run gets through (from this run: batch/once.py)
    saved_outputs: bool = True  # a fix must reproduce the output saved in the notebook, where one was saved
    kernel_env: tuple[tuple[str, str], ...] = ()  # variables the notebook's kernel gets over this process's (a
    # bench gives each notebook a home of its own: fixloop_bench.notebooks.Homes); the sandboxes' are their own


class Left(Enum):
    """Why a cell was left as it is, as data: what the run decides by (the words, `CellOutcome.reason`,
    are said where it is decided)."""

    CHECK_FAILED = "check_failed"  # it ran without raising, and a check of it failed (plain Jupyter ran it)
    KERNEL_DIED = "kernel_died"  # the notebook's kernel died while it ran, or before it (then not reached)
    BLAMED = "blamed"  # it fails because an earlier cell, not fixed, did not make a name it reads
    EXAMPLE = "example"  # the notebook was saved with this error: the author's example
    NOT_SELECTED = "not_selected"  # --cells leaves it alone
    NOT_INSTALLED = "not_installed"  # a package it imports is not installed: no change to the cell fixes that
    NO_PROGRAM = "no_program"  # a program the library runs (LaTeX, ffmpeg) is not installed
    NO_FILE = "no_file"  # a file it opens is not there
    NO_NETWORK = "no_network"  # it needs the network, which the notebook's kernel or the sandbox has not
    SAVED_OUTPUT = "saved_output"  # a repair ran, but its output is not the one saved in the notebook


@dataclass(frozen=True)
class CellOutcome:
    """How one code cell went. `status`: "ok", "fixed" (a repair something verified), "unverified" (a
    repair that runs, nothing checked it), "looks_wrong" (it runs, but pandas says an assignment never
    reached the frame; a repair nothing verified is proposed, not applied), "proposed" (a fix written to
    the notebook but not run in its kernel: a model's nobody reviewed, or one whose run would change again
    files the cell's run there changed), "example" (it raised when the
    notebook was saved too: the author's example, left as written), "failed", "rejected" or "skipped"
    (failed because an earlier cell was not fixed). Every cell but those after a kernel death ran."""

    number: int
    status: str
    source: str
    patched: str | None = None
    error: str = ""
    reason: str = ""
    result: LoopResult | None = None
    seconds: float = 0.0
    verified_by: str = (  # for a fix: "saved output", "check" (--expect, --expect-output, asserts),
        ""  # "following cell" (a later cell that asserts, and failed before it or reads what it wrote) or ""
    )
    blamed_cell: int | None = None  # for a cell skipped after an unfixed one: that cell's number
    module_diff: str = ""  # for a cell failing inside a module of the notebook's folder: that file's repair
    module_file: str = ""  # that file, relative to the notebook's folder
    cause: int | None = None  # for a cell that runs as written after an earlier cell, its cause, was fixed
    caused: int | None = None  # for that earlier cell: the number of the cell whose error it caused
    rerun: tuple[tuple[int, str], ...] = ()  # for a change put to a person: the cells that run again after it
    left: Left | None = None  # why it was left as it is (its error or reason says it in words)
    disagrees: int | None = None  # a saved output disagrees: for a fix, the later cell that shows another output
    # than the one saved, reading what it made; for that later cell, the fix whose result it reads

    @property
    def title(self) -> str:
        lines = [line for line in self.source.splitlines() if line.strip()]
        first = next((line for line in lines if split_magic(line)[0] is None), lines[0] if lines else "")
        return f"cell {self.number}: {clipped(first, 60)}"


RAN = ("ok", "fixed", "unverified", "looks_wrong")  # statuses of cells that ran without raising


@dataclass(frozen=True)
class BatchResult:
    """Every code cell's outcome, in notebook order."""

    path: str
    outcomes: tuple[CellOutcome, ...]
    seconds: float
    model: str
    plain: int | None = None  # cells a plain Jupyter run is known to get through (batch/once.py); None: not counted
    plain_how: str = ""  # how `plain` was found
    stopped: str = ""  # the signal that stopped the run ("SIGTERM"): the cells after the last outcome did not run
    code_cells: int = 0  # the notebook's code cells (more than the outcomes when the run was stopped)
    plain_unknown: int = 0  # cells whose outcome in a plain Jupyter run this run cannot tell (batch/once.py)
    kernel_note: str = ""  # the kernel it ran in is not the notebook's own (kernel_of): the line that says so
    judged_note: str = ""  # the repairs were judged in fixloop's Python, not the kernel's (judged_in): the line

    @property
    def cells_run(self) -> int:
        """Cells that ran without raising in the notebook's kernel: ok, fixed, and those that ran but
        failed only a check (plain Jupyter counts those as run too)."""
        return sum(o.status in RAN or o.left is Left.CHECK_FAILED for o in self.outcomes)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def ok(self) -> bool:
        """Every cell runs (or raises as it did when the notebook was saved: the author's example); a
        stopped run is not ok (the cells after it did not run)."""
        return not self.stopped and all(o.status in (*RAN, "example") for o in self.outcomes)

    @property
    def verified(self) -> bool:
        """No repair is unverified (each one a check, an assert, an output or a later cell verified), and no
        cell that runs looks wrong."""
        return not self.count("unverified") and not self.count("looks_wrong")

    @property
    def tokens(self) -> int:
        return sum(o.result.tokens for o in self.outcomes if o.result)

    @property
    def cost(self) -> float:
        return sum(o.result.cost for o in self.outcomes if o.result)


# ---------------------------------------------------------------- the notebook and its kernel


def refuse_no_rounds(loop: LoopOptions) -> None:
    """0 model rounds repair nothing: every failing cell would be left as it is and the run said done all the same.
    Refused, saying what to do (`run`, and the benches that repair notebooks)."""
    if loop.max_rounds < 1:
        raise UsageError(f"--max-rounds {loop.max_rounds} (or FixLoop.max_rounds) repairs nothing: give 1 or more "
                         "(to run a notebook as written: jupyter nbconvert --to notebook --execute)")


def read_notebook(path: str):
    """The notebook at `path`, validated; NotebookError says plainly what is wrong with it."""
    import nbformat

    if not os.path.exists(path):
        raise NotebookError(f"no notebook at {path}")
    if os.path.isdir(path):
        raise NotebookError(f"{path} is a directory, not a notebook")
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except nbformat.reader.NotJSONError:
        raise NotebookError(f"{path} is not a notebook: the file is not JSON") from None
    except nbformat.ValidationError as exc:
        raise NotebookError(f"{path} is not a valid notebook: {exc.message}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise NotebookError(f"{path} is not a valid notebook: {exc}") from None
    language = nb.metadata.get("kernelspec", {}).get("language", "python")
    if not re.fullmatch(r"python\d?", str(language), re.IGNORECASE):  # `python3`: some Jupyter versions wrote it
        raise NotebookError(f"{path} is a {language} notebook; fixloop repairs Python notebooks")
    return nb


def _ipc_config(workdir: str):
    """IPC sockets in a private directory, like the sandboxes: no TCP ports opened on the machine."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "connection_file": os.path.join(workdir, "kernel.json")}})


def execute_notebook(nb, cwd: str, timeout: float) -> None:
    """Run every cell as Jupyter would, stopping at the first error (`jupyter-fixloop demo` uses it)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    with tempfile.TemporaryDirectory(prefix="fixloop-run-") as workdir:
        client = NotebookClient(nb, config=_ipc_config(workdir), timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": cwd}})
        try:
            client.execute()
        except CellExecutionError as exc:
            raise CellFailed(str(exc)) from None


def kernel_of(nb, explicit: str | None = None) -> tuple[str, str]:
    """(the kernel to run `nb` in, the one line that says it is not the notebook's own: "" when it is).
    `--kernel` chooses; else the notebook's kernelspec when it is installed; else the default Python 3
    kernel, as JupyterLab offers another kernel for a notebook saved with `python2` (most of 2016's)."""
    if explicit:
        return explicit, ""
    wanted = nb.metadata.get("kernelspec", {}).get("name") or "python3"
    from jupyter_client.kernelspec import KernelSpecManager

    try:
        installed = KernelSpecManager().find_kernel_specs()
    except Exception:  # the specs cannot be listed: ask for the notebook's own, as before
        return wanted, ""
    if wanted in installed or not installed:
        return wanted, ""
    default = "python3" if "python3" in installed else sorted(installed)[0]
    return default, (f"the notebook's kernel `{wanted}` is not installed here: run in `{default}` instead "
                     "(--kernel chooses)")


def kernel_python(name: str) -> str | None:
    """The interpreter kernelspec `name` starts, as jupyter_client starts it (`python`, `python3`: this
    process's), or None when it is not a Python kernel or cannot be found."""
    import shutil
    import sys

    from jupyter_client.kernelspec import KernelSpecManager

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except Exception:  # not installed (nbclient says so), or an unreadable spec
        return None
    if (spec.language or "").lower() != "python" or not spec.argv:
        return None
    command = spec.argv[0]
    if command in {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}:
        return sys.executable
    return os.path.abspath(command) if os.sep in command else shutil.which(command)


def judged_in(name: str, gateway: str = "") -> tuple[str, str]:
    """(the interpreter the sandboxes of a notebook run in kernel `name` run, "" for this process's; the
    line that says repairs were judged in another Python than the kernel's, "" when they were not).
    The kernel's own is asked of itself (sandbox.interpreter); it is used when it imports this package's
    kernel wire, else the repairs are judged here and the run says so."""
    import sys

    from ..sandbox import interpreter

    python = kernel_python(name) if not gateway else None
    if not python or os.path.abspath(python) == sys.executable:
        return "", ""
    found = interpreter(python)
    if found and (found.prefix, found.base_prefix) == (sys.prefix, sys.base_prefix):
        return "", ""  # the same environment by another name
    if found and found.speaks:
        return python, ""
    return "", (f"repairs were judged in fixloop's Python ({sys.executable}), not in the kernel's ({python}): "
                "install jupyter-fixloop in the kernel's environment to judge them there")


async def plain_errors(nb, cwd: str, timeout: float, kernel_name: str | None, workdir: str,
                       stop: Stop | None = None, env: tuple[tuple[str, str], ...] = ()) -> dict[int, str | None] | None:
    """Run a copy of `nb` as plain Jupyter does: for each code cell that ran (numbered among all
    cells, from 1), its error ("ename: evalue") or None. None when `stop` came first."""
    ran = await run_plainly(nb, cwd, timeout, kernel_name, workdir, stop, env)
    return None if ran is None else errors_of(ran)


def errors_of(nb) -> dict[int, str | None]:
    """For each code cell of a notebook that ran (numbered among all cells, from 1): its error ("ename:
    evalue"), or None."""
    ran = {}
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and c.source.strip() and c.get("execution_count"):
            errors = [f"{o.get('ename', '')}: {o.get('evalue', '')}" for o in c.outputs
                      if o.get("output_type") == "error"]
            # IPython shows a UsageError (`%%fixloop` not loaded, a bad magic argument) on stderr, not as an error
            errors += [o.get("text", "").strip() for o in c.outputs if o.get("output_type") == "stream"
                       and o.get("name") == "stderr" and o.get("text", "").startswith("UsageError: ")]
            errors += [c.metadata[REPLY_ERROR]] if REPLY_ERROR in c.get("metadata", {}) else []
            ran[i + 1] = errors[0] if errors else None
    return ran


async def run_plainly(nb, cwd: str, timeout: float, kernel_name: str | None, workdir: str,
                      stop: Stop | None = None, env: tuple[tuple[str, str], ...] = ()):
    """A copy of `nb` run as plain Jupyter runs it (errors allowed; cell by cell, as nbclient's execute
    does), with its new outputs (a cell it did not reach has none, and no execution count, whatever was saved);
    None when `stop` came first. `env`: variables its kernel gets over this
    process's (BatchOptions.kernel_env)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb, stop = copy.deepcopy(nb), stop or Stop()
    for cell in nb.cells:  # a cell the run does not reach keeps no saved count or output that would read as run
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.get("metadata", {}).pop(REPLY_ERROR, None)
    name = kernel_of(nb, kernel_name)[0]
    sub = tempfile.mkdtemp(prefix="plain-", dir=workdir)
    client = NotebookClient(nb, config=_ipc_config(sub), timeout=timeout, kernel_name=name, allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": cwd}},
                            on_cell_error=_reply_error)

    running = []  # the cell under way

    async def every_cell() -> None:
        async with contextlib.AsyncExitStack() as stack:
            await _started(client, stack, env)
            stop.relisten()
            for index, cell in enumerate(nb.cells):
                running[:] = [cell]
                await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            running.clear()

    try:
        finished, _ = await stop.until(every_cell())
    except Exception as exc:  # the kernel died, or would not start, or a timeout: count what ran
        finished = True
        for cell in running:  # it did not run to its end: as an error, as batch mode counts it
            cell.execution_count = cell.get("execution_count") or client.code_cells_executed or 1
            cell.metadata[REPLY_ERROR] = ("DeadKernelError: the kernel died while it ran" if isinstance(
                exc, DeadKernelError) else f"{type(exc).__name__}: {exc}")
    stop.relisten()
    return nb if finished else None


REPLY_ERROR = "fixloop_reply_error"  # a cell's metadata key in a plain run's copy: the error its reply said


def _reply_error(cell, cell_index: int, execute_reply: dict) -> None:
    """Keep the error a cell's execute reply says it raised: IPython may show none (a `%%timeit` body that raises
    prints "Unexpected exception formatting exception" on stderr, its reply an AttributeError), and plain
    Jupyter's Run All stops there all the same."""
    content = execute_reply.get("content", {})
    cell.metadata[REPLY_ERROR] = f"{content.get('ename', '')}: {content.get('evalue', '')}"


async def _started(client, stack: contextlib.AsyncExitStack, env: tuple[tuple[str, str], ...] = ()) -> None:
    """Start `client`'s kernel and channels, then enter nbclient's `async_setup_kernel` (which shuts
    them down at the end of `stack`). Started first, so that the SIGINT/SIGTERM handlers nbclient
    puts in while it is set up (they shut the kernel down) are there for no await: batch mode's
    `Stop` takes the signals back at once. `env`: variables the kernel gets over this process's (a restart
    keeps them: jupyter_client launches it again with the same arguments)."""
    client.km = client.create_kernel_manager()
    try:
        await client.async_start_new_kernel(**({"env": {**os.environ, **dict(env)}} if env else {}))
        await client.async_start_new_kernel_client()
    except BaseException:
        if client.km.has_kernel:
            await client.km.shutdown_kernel(now=True)
        raise
    await stack.enter_async_context(client.async_setup_kernel())


class NotebookKernel:
    """The notebook's own kernel, through nbclient: runs cells, checkpoints them, mirrors its state."""

    def __init__(self, nb, cwd: str, timeout: float, kernel_name: str | None, workdir: str):
        from nbclient import NotebookClient

        name = kernel_of(nb, kernel_name)[0]
        self.client = NotebookClient(
            nb, config=_ipc_config(workdir), timeout=timeout, kernel_name=name, allow_errors=True,
                                     interrupt_on_timeout=True,
            error_on_timeout={"ename": "Timeout", "evalue": f"the cell was still running after {timeout:g} s"},
            resources={"metadata": {"path": cwd}}, on_cell_executed=self._executed,
        )
        self.reply: dict | None = None
        self.waiting = lambda seconds: None  # told when a cell still runs past its time limit's interrupt
        self.watch = FolderWatch(cwd)
        self.wrote: tuple[str, ...] = ()  # the files of the notebook's folder the last run changed
        self.traceback: list[str] = []  # the last cell's error's traceback (IPython's lines), [] when none
        self.check_failed = False  # the last cell ran without raising, and a check of it failed

    def _executed(self, cell, cell_index, execute_reply) -> None:  # nbclient's hook: all three by name
        self.reply = execute_reply

    async def start(self) -> None:
        """Start the kernel and check that it can run the checkpoint helpers."""
        from jupyter_core.utils import ensure_async

        kc = self._kc()
        info = await self.client.async_wait_for_reply(await ensure_async(kc.kernel_info()))
        if info and "language_info" in info["content"]:
            self.client.nb.metadata["language_info"] = info["content"]["language_info"]
        await self.call("save", [])

    async def run(self, index: int, cell, code: str, plan: CellPlan | None = None) -> str | None:
        """Run `code` as this cell (outputs land in the cell); the error headline, or None if all went well."""
        from nbclient.exceptions import DeadKernelError

        self._kc()
        source, cell.source = cell.source, code
        self.reply, self.wrote = None, ()
        self.watch.start()
        try:
            await self.client.async_execute_cell(cell, index, execution_count=self.client.code_cells_executed + 1)
        except DeadKernelError:
            raise KernelDied("the notebook's kernel died while running this cell") from None
        finally:
            cell.source = source
            self.wrote = self.watch.stop()
        content = (self.reply or {}).get("content", {})
        error = content if content.get("status") == "error" else next(  # IPython 8's `%%time` shows one, goes on
            (o for o in cell.outputs if o.get("output_type") == "error"), None)
        self.traceback = list(error.get("traceback") or []) if error else []
        self.check_failed = False
        if error and "raises-exception" not in cell.metadata.get("tags", []):
            return f"{error.get('ename')}: {error.get('evalue')}".strip()
        if plan is None:
            return None
        if plan.expect_output is not None:  # judged by the verdict, as a sandbox's run is
            from ..loop import expecting, printed

            stdout = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
            outcome, _, _ = printed(stdout, expecting(plan.expect_output))
            if not outcome.passed:
                self.check_failed = True
                return f"Check failed: the printed output is not the expected one ({outcome.detail})"
        for check in plan.checks:
            outcome = await self.expression(
                wire.call("check", check, wire.NS))
            if not outcome["passed"]:
                self.check_failed = True
                failing = outcome.get("failing") or check  # a block's failing assert, else the check
                return f"Check failed: {failing}" + (f" -- {outcome['detail']}" if outcome.get("detail") else "")
        return None

    async def restart(self) -> None:
        """A new kernel process in place of one that died, as plain Jupyter restarts it (nbclient's run goes
        on in it): new channels, fixloop's helpers checked again. What the cells before made is gone."""
        from jupyter_core.utils import ensure_async

        km = self.client.km
        await ensure_async(km.restart_kernel(now=True))
        if self.client.kc is not None:
            self.client.kc.stop_channels()
        self.client.kc = km.client()
        self.client.kc.start_channels()
        await ensure_async(self.client.kc.wait_for_ready(timeout=self.client.startup_timeout))
        await self.start()

    async def kill(self) -> None:
        """End the kernel at once (a stopped run): nbclient's shutdown afterwards finds nothing to do."""
        with contextlib.suppress(Exception):
            await self.client.km.shutdown_kernel(now=True)

    def _kc(self):
        """nbclient's kernel client; a kernel that is gone (it died, or nbclient shut it down) is said as such."""
        if self.client.kc is None:
            raise KernelDied("the notebook's kernel is gone (it died or was shut down): no cell can run in it")
        return self.client.kc

    async def call(self, name: str, *args):
        """Call a checkpoint.py function on the kernel's globals; returns its JSON answer, decoded."""
        return await self.expression(wire.call(f"checkpoint.{name}", wire.NS, *args))

    async def expression(self, expr: str):
        """Evaluate `expr` (which returns JSON text) in the kernel without touching history or outputs."""
        import json

        from jupyter_core.utils import ensure_async
        from nbclient.exceptions import DeadKernelError

        msg_id = await ensure_async(self._kc().execute(
            "", silent=True, store_history=False, user_expressions={"r": expr}, stop_on_error=False))
        try:
            reply = await self.client.async_wait_for_reply(msg_id)
            if reply is None:  # a cell runs on past its time limit: the interrupt lands when native code returns
                self.waiting(self.client.timeout)
                timeout, self.client.timeout = self.client.timeout, None
                try:  # as plain Jupyter waits for a cell (it has no time limit); a stop request still ends it
                    reply = await self.client.async_wait_for_reply(msg_id)
                finally:
                    self.client.timeout = timeout
        except DeadKernelError:
            raise KernelDied("the notebook's kernel died") from None
        answer = (reply or {}).get("content", {}).get("user_expressions", {}).get("r", {})
        if answer.get("status") != "ok":
            why = f"{answer.get('ename', 'no reply')}: {answer.get('evalue', '')}".rstrip(": ")
            if answer.get("ename") not in ("ModuleNotFoundError", "ImportError", None):
                raise HelperFailed(f"fixloop's helper raised in the notebook's kernel ({why})")
            raise KernelError(f"the notebook's kernel cannot run fixloop's helpers ({why}); "
                              "install jupyter-fixloop in the kernel's environment")
        return json.loads(ast.literal_eval(answer["data"]["text/plain"]))

    async def mirror(self, path: str, share: dict, before: int | None = None) -> Snapshot:
        """Write the names `share` picks (see sharing.shared_names: the same rule as in a notebook); with
        `before`, from the state before that cell (an earlier one: the cause of a failure below it)."""
        fields = await self.call("mirror", path, share, before)
        fields["variables"] = variables_from_json(fields.get("variables"))
        return Snapshot(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


# ---------------------------------------------------------------- the run


class Stop:
    """A request to end a batch run now (SIGTERM, SIGINT): the cell under way is stopped, the cells
    after it are not run, and what was done so far is written. `why` names the request."""

    def __init__(self):
        self.event = asyncio.Event()
        self.why = ""
        self.listening = False

    def set(self, why: str) -> None:
        self.why = self.why or why
        self.event.set()

    def listen(self) -> None:
        """SIGINT and SIGTERM set this stop (on the running loop, in its main thread); a second signal
        ends the process at once. nbclient puts in handlers of its own (that shut the kernel down)
        and takes them out when its kernel is done: `relisten` after each."""
        self.listening = True
        self.relisten()

    def relisten(self) -> None:
        if not self.listening or self.why:
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._heard, sig)
            except (RuntimeError, NotImplementedError, ValueError):  # not the main thread, or no signals here
                return

    def _heard(self, sig: signal.Signals) -> None:
        self.set(sig.name)
        loop = asyncio.get_running_loop()
        for each in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(each)

    async def until(self, work) -> tuple[bool, object]:
        """(True, the value of `work`), or (False, None) when this stop comes first: `work` is then
        cancelled and given STOP_GRACE seconds to wind down."""
        task = asyncio.ensure_future(work)
        stopped = asyncio.ensure_future(self.event.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if task.done():
            return True, task.result()
        task.cancel()
        await asyncio.wait({task}, timeout=STOP_GRACE)
        return False, None


Decide = Callable[[CellOutcome, LoopResult], tuple[str, str]]


def accept_all(outcome: CellOutcome, result: LoopResult) -> tuple[str, str]:
    """The non-interactive decision: every verified fix is applied."""
    return "accept", ""


class BatchRun:
    """One pass over a notebook: runs each code cell, repairs the failures, keeps the outcomes."""

    def __init__(self, nb, path: str, options: BatchOptions, progress, decide: Decide = accept_all,
                 stop: Stop | None = None):
        self.nb = nb
        self.stop = stop or Stop()
        self.uncopied: dict[str, str] = {}  # name -> why the last checkpoint could not copy it
        self.path = path
        self.cwd = os.path.dirname(os.path.abspath(path))
        self.options = options
        self.progress = progress
        self.decide = decide
        self.original = copy.deepcopy(nb)  # for the plain Jupyter count
        self.poisoned: dict[str, int] = {}  # name -> the cell that failed to define it
        self.from_fix: dict[str, int] = {}  # name -> the applied fix (its cell) whose result it holds
        self.pointers: dict[str, tuple[str, ...]] = {}  # name, or `file:` path -> the Git LFS pointer files
        # its value was read from
        self.saved = SavedOutputs(self.original, options.saved_outputs)  # which saved outputs can check a fix
        self.decided: dict[int, tuple] = {}  # cell number -> (its saved output as a check, or None; why not)
        self.outcomes: list[CellOutcome] = []
        self.dead = False
        self.restarts: set[int] = set()  # the cells the notebook's kernel died in, restarted after each
        self.executed = 0
        self.touched: dict[int, set[str]] = {}  # cell number -> the files of its folder its runs here changed
        self.first_ran: dict[int, bool] = {}  # cell number -> its original's first run here did not raise
        self.check_error: str | None = None  # the running cell's error, when a check of it failed (it raised nothing)
        self.changes: dict[int, set[str]] = {}  # cell number -> names of what ran here instead of it
        self.workdir = tempfile.mkdtemp(prefix="fixloop-batch-")
        self.snapdir = scratch_dir(f"batch-{owner_tag()}-")  # the notebook kernel writes snapshots here
        loop = options.loop.with_(cwd=self.cwd).resolved()
        python, self.judged_note = judged_in(kernel_of(nb, options.kernel_name)[0], loop.gateway_url)
        self.loop_options = loop.with_(sandbox_python=python or None)  # the kernel's Python judges its repairs

    async def run(self) -> BatchResult:
        started = time.perf_counter()
        kernel = NotebookKernel(self.nb, self.cwd, self.options.cell_timeout, self.options.kernel_name, self.workdir)
        kernel.waiting = self.progress.waiting
        code_cells = [i for i, c in enumerate(self.nb.cells) if c.cell_type == "code" and c.source.strip()]
        self.progress.start(len(code_cells))
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    await _started(kernel.client, stack, self.options.kernel_env)
                except Exception as exc:
                    raise KernelError(f"could not start the notebook's kernel: {type(exc).__name__}: {exc}") from None
                self.stop.relisten()  # no await since nbclient put its own handlers in
                await kernel.start()
                from ..loop import warm_up

                warm_up(self.loop_options)
                for index in code_cells:
                    if self.dead and not await self._restarted(kernel, index):
                        self._add(self._skip(index, "the notebook's kernel died in an earlier cell"))
                        continue
                    if self.stop.why:
                        break
                    finished, outcome = await self.stop.until(self._cell(kernel, index))
                    if not finished:  # the cell under way ends now: a kernel asked to shut down mid-cell
                        await kernel.kill()  # writes its own traceback to the terminal
                        break
                    self._add(outcome)
            self.stop.relisten()  # nbclient took its handlers out, and ours with them
            plain, plain_how, unknown = self._plain()
        finally:
            self.progress.close()
            remove_tree(self.workdir)  # iterative: a 3,000-deep tree a cell wrote does not stop it
            remove_scratch(self.snapdir)
            self._unreached()
        return BatchResult(self.path, tuple(self.outcomes), time.perf_counter() - started,
                           self.loop_options.model, plain, plain_how, self.stop.why, len(code_cells), unknown,
                           kernel_of(self.nb, self.options.kernel_name)[1], self.judged_note)

    async def _restarted(self, kernel: NotebookKernel, index: int) -> bool:
        """After the notebook's kernel died in a cell, a new one, as plain Jupyter restarts it and runs the
        cells after it there: the names the cells above made are gone (a later failure on one is theirs, left as
        plain Jupyter leaves it), and the cell that died says so. False when no kernel would start again."""
        try:
            await kernel.restart()
        except Exception:
            return False
        self.dead = False
        died = self.outcomes[-1]
        self.restarts.add(died.number)
        said = "the kernel was restarted, as plain Jupyter restarts it, and the cells after it ran without what the " \
               "cells above made"
        self.outcomes[-1] = replace(died, reason=f"{died.reason}; {said}" if died.reason else said)
        for cell in self.nb.cells[:index]:
            if cell.cell_type == "code":
                plan = plan_or_none(cell.source)
                self._poison(cell_names(plan.code)[1] if plan is not None else (), died.number)
        return True

    def _unreached(self) -> None:
        """Cells the run did not finish (stopped, or an error ended it) are put back as they were in
        the notebook: nothing saved in them is lost."""
        done = {o.number for o in self.outcomes}
        for i, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code" and i + 1 not in done:
                self.nb.cells[i] = copy.deepcopy(self.original.cells[i])

    def _plain(self) -> tuple[int | None, str, int]:
        """How many cells plain Jupyter gets through, and how many this run cannot tell, counted from
        this run without running any cell again (batch/once.py says the rule): (count, how, unknown)."""
        if self.stop.why:
            return None, "not counted: the run was stopped", 0
        if not self.options.plain:
            return None, "not counted (--no-plain)", 0
        count = plain_count(self._as_ran(o) for o in self.outcomes)
        if count.first is None:
            return count.ran, "the same cells ran: no fix was applied", 0
        how = (f"counted from this run, nothing run again: the cells before cell {count.first} (the first one "
               "changed) ran as plain Jupyter runs them, a changed cell counts as its original ran, a later cell "
               "that reads nothing a change touched counts as it ran here")
        if count.unknown:
            how += (f"; {count.unknown} cell{'s' if count.unknown != 1 else ''} read what a change touched (or come "
                    "after a changed cell that wrote files), so plain Jupyter's outcome there is unknown and not "
                    "counted")
        return count.ran, how, count.unknown

    def _as_ran(self, outcome: CellOutcome) -> Cell:
        """One cell as this run left it, for plain Jupyter's count."""
        number = outcome.number
        original = plan_or_none(self.original.cells[number - 1].source)
        code = original.code if original is not None else ""
        unread = len(code.encode()) > BIG_CELL
        reads, binds = cell_names(code) if code and not unread else (set(), set())
        magic = original is not None and original.magic_line is not None
        return Cell(number, outcome.status in RAN or outcome.left is Left.CHECK_FAILED,
                    frozenset(reads), frozenset(self.changes.get(number) or may_change(code, binds)),
                    changed=number in self.changes or magic,
                    plain_ran=self._loads_fixloop(number) if magic else self.first_ran.get(number, False),
                    wrote=bool(self.touched.get(number)), unread=unread,
                    unreached=outcome.status == "skipped" and outcome.left is Left.KERNEL_DIED)

    def _loads_fixloop(self, number: int) -> bool:
        """Whether a cell above cell `number` loads fixloop (`%load_ext jupyter_fixloop`): then plain Jupyter
        runs a `%%fixloop` cell too; else IPython refuses it (a UsageError: "Cell magic not found")."""
        return any(c.cell_type == "code" and "%load_ext jupyter_fixloop" in c.source
                   for c in self.original.cells[:number - 1])

    def _add(self, outcome: CellOutcome) -> None:
        """Keep the outcome; number the cells that ran 1, 2, 3... as a clean top-to-bottom run would.
        A cell that failed says which names the checkpoint before it could not copy (its repair
        started from what the cell left in them)."""
        if outcome.error and self.uncopied and outcome.status != "skipped":
            why = ", ".join(f"`{n}` ({w})" for n, w in sorted(self.uncopied.items())[:6])
            more = f" and {len(self.uncopied) - 6} more" if len(self.uncopied) > 6 else ""
            outcome = replace(outcome, reason=f"{outcome.reason}; not copied before the cell, so a change it made "
                                              f"to them could not be undone: {why}{more}".lstrip("; "))
        self.uncopied = {}
        cell = self.nb.cells[outcome.number - 1]
        if cell.get("execution_count") is not None:
            self.executed += 1
            cell.execution_count = self.executed
        self.outcomes.append(outcome)
        self.progress.done(outcome)

    async def _cell(self, kernel: NotebookKernel, index: int) -> CellOutcome:
        cell = self.nb.cells[index]
        number, started = index + 1, time.perf_counter()
        self.progress.cell(number, len(self.outcomes))
        try:
            plan = parse_cell(cell.source)
        except UsageError as exc:
            return self._failed(index, cell.source, str(exc), "", started)
        if len(plan.code.encode()) > BIG_CELL:
            return await self._run_big(kernel, index, plan, started)
        unmade = self._not_generated(plan)
        if unmade and not plan.code.strip():
            return CellOutcome(number, "skipped", cell.source, seconds=time.perf_counter() - started,
                               reason=f"{unmade}; the cell has no code below its instruction to run")
        plan = replace(plan, instruction=None) if unmade else plan  # its code runs as written, a cell like any other
        reads, defines = cell_names(plan.code)
        try:
            outcome = await self._run_cell(kernel, index, plan, reads, defines, started)
            if outcome.left is None and outcome.error and outcome.error == self.check_error:
                outcome = replace(outcome, left=Left.CHECK_FAILED)  # what it is left with is that check's failure
            said = f"{unmade}; the code below the instruction ran as written"
            return replace(outcome, reason=f"{said}; {outcome.reason}".strip("; ")) if unmade else outcome
        except KernelDied as exc:
            self.dead = True
            return self._failed(index, cell.source, str(exc), "", started, defines, left=Left.KERNEL_DIED)

    async def _run_cell(self, kernel, index: int, plan: CellPlan, reads, defines, started: float) -> CellOutcome:
        """Checkpoint and run; on failure, blame an unfixed cell or repair (unless --cells leaves this cell alone)."""
        cell = self.nb.cells[index]
        number = index + 1
        self.uncopied = (await kernel.call("save", sorted(reads | defines), number)).get("why", {})
        error = "generation requested" if plan.instruction else await self._run_here(kernel, index, plan.code, plan)
        pointers = self._pointers(number, plan.code, reads, defines)
        checked = error is not None and not plan.instruction and kernel.check_failed  # it ran; a check failed
        self.first_ran[number] = error is None or checked
        self.check_error = error if checked else None
        if error is None:
            smell = chained_warning(cell.outputs)
            if smell and self._repairable(number):  # it runs, but pandas says an assignment did nothing
                await kernel.call("hold")
                await kernel.call("restore")
                return await self._repair(kernel, index, plan, smell, started, defines, looks_wrong=True)
            self._cleared(defines)
            differs, fix = self._after_fix(number, plan.code, reads, defines, cell.outputs)
            self.saved.ran(number, plan.code, reads, defines, cell.outputs)
            return CellOutcome(number, "ok", cell.source, reason=differs, seconds=time.perf_counter() - started,
                               disagrees=fix)
        example = self.saved.example(number, error)
        if example:  # the author saved this error: the cell shows it on purpose
            self._poison(defines, number)
            return CellOutcome(number, "example", cell.source, error=error, reason=example,
                               seconds=time.perf_counter() - started, left=Left.EXAMPLE)
        blamed, key = self._blamed(error, reads)
        if blamed:  # left as plain Jupyter leaves it: the failure is the earlier cell's
            self._poison(defines, self.poisoned[blamed])
            made = ("define" if error.startswith(("NameError", "UnboundLocalError")) else "make") + \
                (f" `{key}` of `{blamed}`" if key else f" `{blamed}`")
            because = (f"the kernel died in cell {self.poisoned[blamed]} and was restarted: `{blamed}`, made above "
                       "it, is gone, as in plain Jupyter" if self.poisoned[blamed] in self.restarts else
                       f"cell {self.poisoned[blamed]}, which was not fixed, did not {made}")
            return CellOutcome(number, "skipped", cell.source, error=error, seconds=time.perf_counter() - started,
                               reason=f"not repaired: it fails because {because}", blamed_cell=self.poisoned[blamed],
                               left=Left.BLAMED)
        if not self._repairable(number):
            return self._failed(index, cell.source, "not repaired: not among --cells", error, started, defines,
                                left=Left.NOT_SELECTED)
        for left, not_code in ((Left.NOT_INSTALLED, words.missing_package(error)), (Left.NO_PROGRAM,
                               words.missing_program(error)), (Left.NO_NETWORK, words.unreachable(error)),
                               (Left.NO_FILE, pointers and words.lfs_data(pointers))):
            if not_code:  # nothing a change to the cell can fix: no loop (a model would delete the import)
                return self._failed(index, cell.source, _kept(not_code), error, started, defines, left=left)
        failure = failing_module(kernel.traceback, self.cwd)
        if failure is not None:  # raised in a module of the notebook's folder: a diff of it, judged, not applied
            proposed = await self._module_repair(kernel, index, plan, failure, error, started, defines)
            if proposed is not None:
                return proposed
        await kernel.call("hold")
        await kernel.call("restore")
        return await self._repair(kernel, index, plan, error, started, defines)

    def _pointers(self, number: int, code: str, reads, defines) -> tuple[str, ...]:
        """The Git LFS pointer files the cell's data comes from: those it names, those the values it reads were
        read from, and those behind a file it names that a cell on their data wrote; what it defines, and the
        files it wrote, hold their data from now on (a name it defines from other data is cleared)."""
        named = words.named_files(code, self.cwd)
        files = [*words.lfs_pointers(code, self.cwd), *(f for n in sorted(reads) for f in self.pointers.get(n, ())),
                 *(f for path in named.values() for f in self.pointers.get(f"file:{path}", ()))]
        files = tuple(dict.fromkeys(files))
        for name in [*(defines - imported_names(code)), *(f"file:{p}" for p in self.touched.get(number, ()))]:
            if files:  # a module imported beside the read is no data of it
                self.pointers[name] = files
            else:
                self.pointers.pop(name, None)
        return files

    async def _run_here(self, kernel, index: int, code: str, plan: CellPlan | None) -> str | None:
        """Run `code` as cell `index` in the notebook's kernel (`kernel.run`); the files of the notebook's
        folder it changed are kept with the cell (`touched`): running it again would change them again."""
        try:
            return await kernel.run(index, self.nb.cells[index], code, plan)
        finally:
            if kernel.wrote:
                self.touched.setdefault(index + 1, set()).update(kernel.wrote)

    def _repeats(self, *numbers: int) -> str:
        """Words when running these cells again in the notebook's kernel would change files their runs there
        changed already (the user's code runs once: that is not done); "" when their runs changed none."""
        touched = [(n, sorted(self.touched[n])) for n in numbers if self.touched.get(n)]
        if not touched:
            return ""
        said = "; ".join(f"cell {n}: {files_words(names)}" for n, names in touched)
        return (f"not run in the notebook's kernel: its run there already changed files of the notebook's folder "
                f"({said}), and running the code again would change them twice")

    def _not_generated(self, plan: CellPlan) -> str:
        """The words for a `%%fixloop <instruction>` cell the built-in engine is to answer: it does not write
        code from an instruction, so the cell's code runs as written; "" for any other cell."""
        if not plan.instruction or (plan.model or self.loop_options.model) != BUILTIN:
            return ""
        return words.NOT_GENERATED
    async def _module_repair(self, kernel, index, plan: CellPlan, failure: ModuleFailure, error: str,
                             started: float, defines) -> CellOutcome | None:
        """The repair of the module the error was raised in, judged by running this cell in a sandbox holding
        the notebook kernel's state before it (`xbars` of a cell above), with the repaired module in place of
        the file; proposed as a diff (`module_diff`), the file and the cell left as they are. None when the
        built-in engine has no repair of the file or the cell still fails with it."""
        from ..loop import averify
        from ..rules import repair_module

        with open(failure.path, encoding="utf-8") as f:
            source = f.read()
        made = repair_module(source, error, failure.lineno, failure.line)
        if made is None:
            return None
        name, kind, fixed = made
        above = [c.source if c.cell_type == "code" else "" for c in self.nb.cells[:index]]
        imports, numbers = imports_of(above)
        cell = judged_cell(failure, fixed, plan.code, imports)
        snap = await self._state_before(kernel, index, cell, error)
        try:
            judged = await averify(cell, namespace=snap, options=self.loop_options)
        finally:
            if snap is not None:
                os.unlink(snap.path)
        held = ", holding the names it reads as the notebook's kernel held them before it" if snap else ""
        smells = [c.detail for c in judged.checks if not c.passed and c.source == "smell"]
        if not (judged.ok or (judged.ename is None and smells and all(
                c.passed or c.source == "smell" for c in judged.checks))):
            return None
        where = os.path.relpath(failure.path, self.cwd)
        cells = f"cell{'s' * (len(numbers) > 1)} {', '.join(map(str, numbers))}"
        after = f", after the imports of {cells}" if numbers else ""
        reason = (f"not repaired here: the error is raised in {where}, line {failure.lineno}, a module of the "
                  f"notebook's folder; a repair of that file ({name}, {kind}) is proposed as a diff, not applied: "
                  f"with it, this cell ran without error in a sandbox{held}{after} (the file itself was not "
                  f"changed)"
                  + (f"; a warning is left for review: {clipped(smells[0], 200)}" if smells else ""))
        outcome = self._failed(index, self.nb.cells[index].source, reason, error, started, defines)
        return replace(outcome, module_diff=module_diff(failure, self.cwd, fixed), module_file=where)

    async def _state_before(self, kernel, index: int, code: str, error: str) -> Snapshot | None:
        """The names `code` reads, as the notebook's kernel held them before cell `index` ran (a snapshot for
        the sandbox judging a module's repair); None when they cannot be written (the sandbox starts empty)."""
        number = index + 1
        share = {"code": [code, *self.later(number)], "instruction": None,
                 "missing": list(missing_names(*error.split(": ", 1)) if ": " in error else ()),
                 "share": list(self.loop_options.share), "policy": self.loop_options.share_policy}
        try:
            return await kernel.mirror(os.path.join(self.snapdir, f"module-{number}.bin"), share, before=number)
        except (HelperFailed, KeyError):
            return None

    def _repairable(self, number: int) -> bool:
        return self.options.cells is None or number in self.options.cells

    def model_for(self, number: int, model: str | None) -> str | None:
        """The model the repair of cell `number` may call: `model` (a `%%fixloop --model`, or None: the run's),
        or the built-in engine for a cell outside `BatchOptions.model_cells`."""
        return model if self.options.model_cells is None or number in self.options.model_cells else BUILTIN

    async def _run_big(self, kernel, index: int, plan: CellPlan, started: float) -> CellOutcome:
        """A cell over BIG_CELL runs as written, as plain Jupyter runs it: reading it for names, copying
        what it reaches and repairing it would each take longer than the cell itself."""
        cell, number = self.nb.cells[index], index + 1
        size = (f"{len(plan.code.encode()) / 1024**2:.1f} MB of source, over the {BIG_CELL / 1024**2:g} MB "
                "batch mode reads and repairs")
        defines = set(re.findall(r"^([A-Za-z_]\w*)\s*=", plan.code, re.MULTILINE))
        try:
            await kernel.call("save", sorted(defines), number)  # the names it binds: what a cause above undoes
            error = await self._run_here(kernel, index, plan.code, plan)
        except KernelDied as exc:
            self.dead = True
            return self._failed(index, cell.source, str(exc), "", started, defines, left=Left.KERNEL_DIED)
        if error is None:
            self._cleared(defines)
            self.saved.ran(number, "", set(), defines, cell.outputs)
            return CellOutcome(number, "ok", cell.source, reason=f"ran as written, not read: {size}",
                               seconds=time.perf_counter() - started)
        return self._failed(index, cell.source, _kept(f"not repaired: {size}"), error, started, defines,
                            left=Left.CHECK_FAILED if kernel.check_failed else None)

    def _blamed(self, error: str, reads) -> tuple[str | None, str | None]:
        """The name an unfixed cell should have defined that this failure is about, if any (read by
        the cell or by a function it calls), and the key of it the failure names when it is about one."""
        import re

        m = re.match(r"(?:NameError|UnboundLocalError): (?:name |cannot access local variable )?'(\w+)'", error)
        name = m and m.group(1)
        if name:
            return (name if name in self.poisoned else None), None
        # `lr.coef_` after the cell that should have fitted `lr` failed: an attribute fitting sets (one trailing
        # underscore, scikit-learn's convention) missing from an object an unfixed cell made or fitted
        m = re.match(r"AttributeError: .*?has no attribute '(\w+)'", error)
        fitted = m and m.group(1).endswith("_") and not m.group(1).endswith("__") and not m.group(1).startswith("_")
        made = sorted(n for n in reads if n in self.poisoned) if fitted else []
        if made:
            return made[0], None
        return self._key_blamed(error, reads) or (None, None)

    def _key_blamed(self, error: str, reads) -> tuple[str, str] | None:
        """`elements[["judge_goe"]]` after the cell assigning `elements["judge_goe"] = ...` failed: a KeyError
        naming a text key that the unfixed cell which changed a name this cell reads assigns on that name."""
        if not error.startswith("KeyError"):
            return None
        head = error.splitlines()[0]
        for name in sorted(n for n in reads if n in self.poisoned):
            keys = assigned_keys(self.nb.cells[self.poisoned[name] - 1].source)
            for key in sorted(keys.get(name, ())):
                if re.search(rf"(?<!\w){re.escape(key)}(?!\w)", head):
                    return name, key
        return None

    async def _repair(self, kernel, index, plan: CellPlan, error: str, started: float, defines,
                      looks_wrong: bool = False) -> CellOutcome:
        """Repair the cell in a sandbox holding the kernel's state before it; apply, propose or leave it.
        `looks_wrong`: the cell ran, and `error` is pandas' warning that an assignment did nothing; a
        repair of it is applied only when something verified it (or a person accepted it)."""
        cell = self.nb.cells[index]
        number = index + 1
        share = {"code": [plan.code, *plan.checks, *self.later(number)], "instruction": plan.instruction,
                 "missing": list(missing_names(*error.split(": ", 1)) if ": " in error else ()),
                 "share": [*self.loop_options.share, *plan.share], "policy": self.loop_options.share_policy}
        try:
            snap = await kernel.mirror(os.path.join(self.snapdir, f"cell-{number}.bin"), share)
        except HelperFailed as exc:  # left as plain Jupyter leaves it; the notebook goes on
            await kernel.call("resume")
            return self._failed(index, cell.source, f"not repaired: {exc}", error, started, defines)
        try:
            result, decision = await self._loop(plan, snap, cell.source, number, error, time.perf_counter() - started)
        except UsageError as exc:  # e.g. an --expect that is not an expression
            await kernel.call("resume")
            return self._failed(index, cell.source, str(exc), error, started, defines)
        finally:
            os.unlink(snap.path)
        if result.claimed and decision == "accept" and (
                not looks_wrong or result.status == "fixed" or self.decide is not accept_all):
            if result.status == "unverified" and not looks_wrong:  # nothing checked it: the cause comes first
                cause = await find_cause(self, kernel, index, plan, error)  # (the cell then runs as written)
                if cause is not None and cause.result.claimed and not self._cause_held(cause) and (
                        self._accepts_cause(cause, error)):
                    return await self._apply_cause(kernel, cause, plan, error, started, defines)
            repeats = self._repeats(number)
            if repeats and looks_wrong:
                await kernel.call("resume")
                _record(cell, result, "pending")
                return self._looks_wrong(number, plan, error, replace(result, reason=repeats), started, defines,
                                         "held")
            if repeats or self._unreviewed(result):
                return await self._propose(kernel, index, plan, error, result, started, defines, repeats)
            return await self._apply(kernel, index, plan, error, result, started, defines, looks_wrong)
        held = ""
        if not result.claimed and decision != "reject" and not looks_wrong:  # the cause in an earlier cell?
            cause = await find_cause(self, kernel, index, plan, error)
            held = self._cause_held(cause) if cause is not None else ""
            if cause is not None and not held and self._accepts_cause(cause, error):
                return await self._apply_cause(kernel, cause, plan, error, started, defines)
        await kernel.call("resume")  # the kernel as plain Jupyter leaves it after this cell
        _record(cell, result, "rejected" if decision == "reject" else "pending")
        if looks_wrong:
            return self._looks_wrong(number, plan, error, result, started, defines, decision)
        self._poison(defines, number)
        status = "rejected" if decision == "reject" else "failed"
        left, reason = (None, "the fix was rejected") if decision == "reject" else _why_unfixed(result, snap, error,
                                                                                              self.cwd)
        reason = f"{reason}; {held}" if held else reason
        return CellOutcome(number, status, cell.source, None, error, _kept(reason), result,
                           time.perf_counter() - started, left=left)

    def _looks_wrong(self, number: int, plan: CellPlan, warning: str, result: LoopResult, started: float, defines,
                     decision: str) -> CellOutcome:
        """A cell that runs but that pandas says assigns nothing, its repair not applied: proposed (in the
        report and the cell's record) when the loop has one. `decision`: "reject" (a person did), "failed"
        (it failed in the notebook's kernel: `result.reason` says how), "held" (running it would repeat what the
        cell's run did to files: `result.reason` says so), else the loop's."""
        source = self.nb.cells[number - 1].source
        self.saved.distrust(defines, f"cell {number} looks wrong")
        said = f"pandas says an assignment never reaches the frame ({clipped(warning, 160)})"
        if decision in ("reject", "failed", "held"):
            why = "the repair was rejected" if decision == "reject" else result.reason
        elif result.claimed:
            why = f"a repair is proposed, not applied: {self._verified(result, number)[1]}"
        else:
            why = words.saved_output_differs(result.rounds) or f"no repair verified: {result.reason}"
        patched = plan.source_with(result.patched) if result.claimed and decision not in ("reject", "failed") else None
        why = f"a repair is proposed, not applied: {why}" if decision == "held" else why
        return CellOutcome(number, "looks_wrong", source, patched, "", f"{said}; {why}", result,
                           time.perf_counter() - started)

    def _unreviewed(self, result: LoopResult) -> bool:
        """A fix holding lines a model wrote that no person accepted: it is not run in the notebook's kernel
        (which is not a sandbox) unless --accept-unreviewed. Read from who wrote each line, never from
        which step answered last: the rules' repair of a model's code is the model's code. A fix whose
        every changed line the built-in engine templated from the cell is applied."""
        if self.options.accept_unreviewed or self.decide is not accept_all:
            return False
        return result.model_written

    async def _propose(self, kernel, index, plan, error, result: LoopResult, started, defines,
                       repeats: str = "") -> CellOutcome:
        """Write the model's verified fix (or any fix whose run would repeat what the cell's run did to
        files: `repeats` says so) into the notebook (the cell's `fixloop` record, pending) and the report;
        the kernel keeps what the original cell did, as plain Jupyter would."""
        cell = self.nb.cells[index]
        number = index + 1
        await kernel.call("resume")
        _record(cell, result, "pending")
        self._poison(defines, number)
        verified_by, words = self._verified(result, number)
        why = (f"{repeats} (review it in the report or JupyterLab, and apply it there knowing that)" if repeats else
               "not run in the notebook's kernel: model-written code nobody reviewed (review it in the "
               "report or JupyterLab; --interactive or --accept-unreviewed to run it)")
        return CellOutcome(number, "proposed", cell.source, plan.source_with(result.patched), error,
                           f"{why}; {words}", result, time.perf_counter() - started, verified_by)

    async def _loop(self, plan: CellPlan, snap: Snapshot, source: str, number: int, error: str, took: float):
        """Run the loop; in interactive mode a hint starts it again. Returns (result, decision)."""
        from ..loop import afix, expecting

        defaults = self.loop_options
        hint = plan.hint or defaults.hint
        # a slow cell gets a longer sandbox run than the loop's default
        timeout = plan.timeout or min(self.options.cell_timeout, max(defaults.timeout, 3 * took))
        expect = expecting(self._expected(plan, number, error), self.later(number),
                           numbers=[n for n, _ in self.numbered_later(number)])  # what every run is judged against
        while True:
            options = defaults.with_(model=self.model_for(number, plan.model), max_rounds=plan.max_rounds,
                                     timeout=timeout, hint=hint)
            result = await afix(plan.code, checks=plan.checks, instruction=plan.instruction, namespace=snap,
                                expect=expect, hooks=self.progress.hooks(), options=options)
            if not result.claimed:
                return result, "none"
            if self._repeats(number):  # not run whatever is decided: nobody is asked (`_repair` says why)
                return result, "accept"
            pending = CellOutcome(number, result.status, source, plan.source_with(result.patched), error, result=result)
            decision, text = self.decide(pending, result)
            if decision != "hint":
                return result, decision
            hint = text

    def _expected(self, plan: CellPlan, number: int, error: str = "") -> str | None:
        """What the cell must print: its --expect-output, else the output saved in the notebook when it
        can check this cell (SavedOutputs.check: the cell and what it and a repair of its typo read are as
        they were saved; decided once, before the loop, and kept for the words)."""
        missing = missing_names(*error.split(": ", 1)) if ": " in error else ()
        self.decided[number] = self.saved.check(number, plan.code, cell_names(plan.code)[0], missing)
        return plan.expect_output if plan.expect_output is not None else self.decided[number][0]

    def _verified(self, result: LoopResult, number: int) -> tuple[str, str]:
        """(verified_by, words) for a verified fix: what checked it, read from the result's typed account
        (`LoopResult.account`: the source of each pass that checked its values), said plainly."""
        plan = parse_cell(self.original.cells[number - 1].source)
        saved, why = self.decided.get(number) or self.saved.check(number, plan.code, cell_names(plan.code)[0])
        last = result.rounds[-1].receipt if result.rounds else None
        matched = next((c for c in (last.checks if last else ()) if c.source == "saved" and c.passed), None)
        by = _checked_by(result)
        if plan.expect_output is None and matched is not None and by == "saved output":
            detail = f" ({matched.detail})" if matched.detail else ""
            return by, f"{SAVED_WORDS}{detail}; {result.reason}"
        if plan.expect_output is None and saved is not None:  # it ran, and the saved output decided nothing
            why = "the saved output is no check here, neither way (an old estimator repr: the receipt says why)"
        return by, result.reason if by == "check" else f"{result.reason}; {why}"

    def later(self, number: int) -> tuple[str, ...]:
        """The code of the notebook's cells after cell `number`: each candidate must leave them working."""
        return tuple(code for _, code in self.numbered_later(number))

    def numbered_later(self, number: int) -> tuple[tuple[int, str], ...]:
        """(cell number, code) of the notebook's cells after cell `number` that `later` gives: the receipts
        name each by its number in the notebook, as the report does."""
        later = []
        for n, cell in enumerate(self.nb.cells[number:], number + 1):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            try:
                plan = parse_cell(cell.source)
            except UsageError:
                continue
            if plan.code.strip() and not plan.instruction:
                later.append((n, plan.code))
        return tuple(later)

    async def _apply(self, kernel, index, plan, error, result: LoopResult, started, defines,
                     looks_wrong: bool = False) -> CellOutcome:
        """Run the verified fix in the notebook's kernel: its outputs are the ones saved. `looks_wrong`: the
        cell ran, and `error` is the warning that it did not do what it says."""
        cell = self.nb.cells[index]
        number = index + 1
        patched_reads, patched_defines = cell_names(result.patched)
        outputs, count = copy.deepcopy(cell.outputs), cell.get("execution_count")  # the original's run
        await kernel.call("save", sorted(patched_reads | patched_defines | defines), number, True)
        effect = result.rounds[-1].receipt.effect if result.rounds else None
        self.changes[number] = _touched(plan.code, result.first.effect if result.first else None) | _touched(
            result.patched, effect)
        failure = await self._run_here(kernel, index, result.patched, plan)
        if failure is not None:  # undo the fix: the kernel and the cell as the original's run left them
            await kernel.call("restore")
            await kernel.call("resume")
            cell.outputs, cell.execution_count = outputs, count
            _record(cell, result, "pending")
            failed = f"the fix passed in the sandbox but fails in the notebook's kernel: {failure}"
            if looks_wrong:
                return self._looks_wrong(number, plan, error, replace(result, reason=failed), started, defines,
                                         "failed")
            self._poison(defines | patched_defines, number)
            return CellOutcome(number, "failed", cell.source, None, error, _kept(failed), result,
                               time.perf_counter() - started)
        original = cell.source
        cell.source = plan.source_with(result.patched)
        _record(cell, result, "accepted")
        self._cleared(patched_defines)
        self.from_fix.update(dict.fromkeys(patched_defines, number))
        verified_by, words = self._verified(result, number)
        self.saved.ran(number, result.patched, patched_reads, patched_defines, cell.outputs,
                       checked=verified_by == "saved output")
        if looks_wrong:
            words = f"ran, but looked wrong (pandas: {clipped(error, 160)}); {words}"
        return CellOutcome(number, result.status, original, cell.source, "" if looks_wrong else error, words, result,
                           time.perf_counter() - started, verified_by)

    def plan_of(self, number: int) -> CellPlan | None:
        """Cell `number` (from 1) as batch mode runs it, None for a cell that is not code."""
        cell = self.nb.cells[number - 1]
        return plan_or_none(cell.source) if cell.cell_type == "code" and cell.source.strip() else None

    def _accepts_cause(self, cause: CauseFix, error: str) -> bool:
        """A change to an earlier cell is run in the notebook's kernel as a fix is: the built-in engine's,
        or one a person accepted (--interactive), or with --accept-unreviewed."""
        if self._unreviewed(cause.result):
            return False
        rerun = tuple((n, self.plan_of(n).code) for n in range(cause.number + 1, cause.failing + 1) if self.plan_of(n))
        outcome = CellOutcome(cause.number, cause.result.status, self.nb.cells[cause.number - 1].source,
                              cause.plan.source_with(cause.result.patched), error, result=cause.result, rerun=rerun)
        return self.decide(outcome, cause.result)[0] == "accept"

    def _cause_held(self, cause: CauseFix) -> str:
        """Words when applying a change at the cause would run cells again whose runs changed files (then it
        is only proposed: the earlier cell's record, pending); "" when it may be applied."""
        repeats = self._repeats(*range(cause.number, cause.failing + 1))
        if not repeats:
            return ""
        _record(self.nb.cells[cause.number - 1], cause.result, "pending")
        return (f"a change to cell {cause.number}, its cause, makes it run in a sandbox (proposed in cell "
                f"{cause.number}'s record); {repeats}")

    async def _apply_cause(self, kernel, cause: CauseFix, plan: CellPlan, error: str, started, defines) -> CellOutcome:
        """Run the changed earlier cell and every cell down to the failing one again, in the notebook's
        kernel, from the state before the earlier cell; the earlier cell's outcome becomes its fix."""
        await kernel.call("restore_before", cause.number)
        for number in range(cause.number, cause.failing + 1):
            step = cause.plan if number == cause.number else self.plan_of(number)
            if step is None:
                continue
            code = cause.result.patched if number == cause.number else step.code
            cell = self.nb.cells[number - 1]
            reads, binds = cell_names(code)
            self.from_fix.update(dict.fromkeys(binds, cause.number))  # what the changed cell's result passes on
            await kernel.call("save", sorted(reads | binds), number)
            self.changes[number] = set(may_change(code, binds)) | set(may_change(step.code, cell_names(step.code)[1]))
            count = cell.get("execution_count")
            failure = await self._run_here(kernel, number - 1, code, step)
            cell.execution_count = count  # numbered as in the top-to-bottom run
            if failure is not None:  # the sandbox and the kernel disagree: said, and left as Jupyter leaves it
                self._poison(defines, cause.failing)
                return CellOutcome(cause.failing, "failed", self.nb.cells[cause.failing - 1].source, None, error,
                                   _kept(f"a change to cell {cause.number} passed in the sandbox, but cell {number} "
                                         f"then failed in the notebook's kernel: {failure}"),
                                   cause.result, time.perf_counter() - started)
        self._fixed_cause(cause, error)
        self._cleared(defines)
        return CellOutcome(cause.failing, cause.result.status, self.nb.cells[cause.failing - 1].source, None, error,
                           f"the cause is in cell [{cause.number}], which was changed; this cell runs as written",
                           seconds=time.perf_counter() - started, verified_by=_checked_by(cause.result),
                           cause=cause.number)

    def _fixed_cause(self, cause: CauseFix, error: str) -> None:
        """The earlier cell's outcome, record and source, now that its change ran."""
        cell = self.nb.cells[cause.number - 1]
        original = cell.source
        cell.source = cause.plan.source_with(cause.result.patched)
        _record(cell, cause.result, "accepted")
        self.from_fix.update(dict.fromkeys(cell_names(cause.result.patched)[1], cause.number))
        at = next(i for i, o in enumerate(self.outcomes) if o.number == cause.number)
        self.outcomes[at] = CellOutcome(
            cause.number, cause.result.status, original, cell.source, error,
            f"the cause of cell {cause.failing}'s error ({error}): changed so that the cells below it run; "
            f"{cause.result.reason}", cause.result, cause.result.seconds, _checked_by(cause.result),
            caused=cause.failing)
        self.progress.done(self.outcomes[at])

    def _after_fix(self, number: int, code: str, reads, defines, outputs) -> tuple[str, int | None]:
        """A cell that ran as written and reads what an applied fix made (`from_fix`, passed on by the cells
        between): when it shows another output than the one saved, and that saved output is a check for it
        (batch/saved.py), the words that say so; the fix's outcome then says so too, and is `unverified`:
        whatever verified it, a later output the notebook saved does not agree (the fix, or the library's
        numbers since), and the fix's cell. ("", None) otherwise."""
        made = sorted((self.from_fix[n], n) for n in reads if n in self.from_fix)
        for name in defines:
            if made:
                self.from_fix[name] = made[-1][0]
            else:
                self.from_fix.pop(name, None)
        diff = self.saved.differs(number, code, reads, outputs) if made else []
        if not diff:
            # the names the fix made are in doubt for its own sake: the saved output here checks exactly them
            if made and self.saved.agrees(number, code, set(reads) - {n for _, n in made}, outputs):
                self._checked_later(number, *made[-1])
            return "", None
        fix, name = made[-1]
        shown = " | ".join(diff)
        at = next((i for i, o in enumerate(self.outcomes) if o.number == fix and o.status in ("fixed", "unverified")),
                  None)
        if at is not None and self.outcomes[at].disagrees is None:
            said = (f"not verified: cell {number}, which reads what it made (`{name}`), {words.DIFFERS} ({shown}): "
                    "the fix, or the library's numbers since")
            fixed = self.outcomes[at]
            self.outcomes[at] = replace(fixed, status="unverified", verified_by="", reason=f"{said}; {fixed.reason}",
                                        disagrees=number)
            record = self.nb.cells[fix - 1].metadata.get(METADATA_KEY)
            if isinstance(record, dict):
                record.update(status="unverified", reason=f"{said}; {record.get('reason', '')}")
        return f"{words.DIFFERS} ({shown}); it reads `{name}`, which the fix of cell {fix} made", fix

    def _checked_later(self, number: int, fix: int, name: str) -> None:
        """Cell `number`, which reads what the applied fix of cell `fix` made (`name`), shows the output saved
        in the notebook: a later cell that checks the values. An `unverified` fix (nothing checked its values,
        no warning of the library against it) becomes `fixed`, by that saved output, said so."""
        at = next((i for i, o in enumerate(self.outcomes) if o.number == fix and o.status == "unverified"
                   and o.disagrees is None), None)  # an output that disagreed before is not undone by one that agrees
        result = self.outcomes[at].result if at is not None else None
        if result is None or result.account is None or result.account.doubts or not result.claimed:
            return
        said = (f"fixed: cell {number}, which reads what it made (`{name}`), shows the output saved in the notebook "
                "(as the notebook's kernel showed it: unsigned)")
        fixed = self.outcomes[at]
        self.outcomes[at] = replace(fixed, status="fixed", verified_by="saved output", reason=f"{said}; {fixed.reason}")
        record = self.nb.cells[fix - 1].metadata.get(METADATA_KEY)
        if isinstance(record, dict):
            record.update(status="fixed", reason=f"{said}; {record.get('reason', '')}")

    def _failed(self, index, source, reason, error, started, defines=frozenset(), left: Left | None = None
                ) -> CellOutcome:
        self._poison(set(defines), index + 1)
        return CellOutcome(index + 1, "failed", source, None, error, reason, seconds=time.perf_counter() - started,
                           left=left)

    def _skip(self, index: int, reason: str) -> CellOutcome:
        """A cell that did not run (the kernel died before it): its old outputs go."""
        cell = self.nb.cells[index]
        cell.outputs, cell.execution_count = [], None
        return CellOutcome(index + 1, "skipped", cell.source, reason=reason, left=Left.KERNEL_DIED)

    def _poison(self, names, number: int) -> None:
        """Cell `number` failed and was not fixed: these names are not what it should have made."""
        for name in names:
            self.poisoned.setdefault(name, number)
        self.saved.distrust(names, f"cell {number} was not fixed")

    def _cleared(self, names) -> None:
        """A cell that ran defines these names afresh: later cells may read them again."""
        for name in names:
            self.poisoned.pop(name, None)


def _checked_by(result: LoopResult) -> str:
    """A fixed result's verified_by read from its typed account ("" when nothing checked its values)."""
    checked = result.account.checked if result.account is not None and result.status == "fixed" else ()
    if "saved" in checked:
        return "saved output"
    return "check" if set(checked) & {"user", "assert", "output", "stated"} else (
        "following cell" if "following" in checked else "")


def _touched(code: str, effect) -> set[str]:
    """The names running `code` binds or changes: what it assigns, and what its run in a sandbox (`effect`,
    receipt/effect.py) saw change; what the code may change (once.may_change) when its effect was not recorded
    in full."""
    binds = cell_names(code)[1]
    if effect is None or effect.error:
        return set(may_change(code, binds))
    return binds | {change.name for change in effect.changes}


def _kept(reason: str) -> str:
    return f"{reason}; the kernel kept what the cell did before it raised, as plain Jupyter does"


def _why_unfixed(result: LoopResult, snap: Snapshot, error: str = "", cwd: str = "") -> tuple[Left | None, str]:
    """Why no fix was applied: (as data, in words)."""
    runs = (result.first, *(r.receipt for r in result.rounds))
    failures = [f"{r.ename}: {r.evalue}" for r in runs if r is not None and r.ename]  # each run's own error
    differs = words.saved_output_differs(result.rounds) if result.status != "passed" else None
    for left, plain in ((Left.NO_FILE, words.missing_file(error, cwd)),
                        (Left.NO_NETWORK, words.network([error, *failures])), (Left.SAVED_OUTPUT, differs)):
        if plain:
            return left, plain
    if result.status == "passed":
        notes = "; ".join(snap.notes()) or "its state may not have been mirrored exactly"
        return None, f"the cell passes in a fresh sandbox but not in the notebook's kernel ({notes})"
    further = words.raised_instead(result.first, result.rounds)
    return None, f"{result.reason}; {further}" if further else result.reason


def _record(cell, result: LoopResult, decision: str) -> None:
    """The LoopSummary kept in a cell's metadata; `original` and `patched` are code without a `%%fixloop` line."""
    cell.metadata[METADATA_KEY] = loop_summary(result, cell_id=cell.get("id"), decision=decision,
                                               plain=split_magic(cell.source)[0] is None)


async def fix_notebook(nb, path: str, options: BatchOptions, progress=None, decide: Decide = accept_all,
                       stop: Stop | None = None) -> BatchResult:
    """Run and repair `nb` (changed in place: fixed sources, real outputs, `fixloop` cell metadata);
    `stop`, when set, ends the run after what was done so far (the result says so)."""
    from .terminal import QuietProgress

    return await BatchRun(nb, path, options, progress or QuietProgress(), decide, stop).run()

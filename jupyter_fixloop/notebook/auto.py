"""`%fixloop auto`: under the traceback of any ordinary cell, a repair tried at once and offered.

The hook is IPython's own exception hook (`shell.set_custom_exc`): the traceback is shown exactly as
IPython shows it, then the built-in rules' repair (with `auto = "model"`, the configured model's too)
runs in a sandbox from the state the cell started from, and is offered with the display `%%fixloop`
uses: the widget, or HTML and text. Nothing runs in the user's kernel until Accept; Accept first puts
back the state the cell started from (when no other cell ran since), so the lines that ran before the
error do not run twice. `%fixloop auto off` puts back IPython's handler exactly as it was.

The state a cell started from: while auto mode or the JupyterLab extension is on, a `Checkpoint`
(batch mode's, kernel/checkpoint.py through the wire: copy-on-write for pandas objects) is taken before each cell and
kept for the last cause.KEEP_CELLS cells (the cause of a later failure is judged on the state before
it, notebook/cause.py); a failure keeps it (`Failure`) for the loop, for `%fixloop last --model`, and
for the Fix button's request (`button`: an execute request marked as the button's, docs/protocol.md).
Each copy is bounded (KEEP_CAP bytes per cell), and so are all of them together (cause.KEEP_TOTAL): past
it, the oldest cells' copies go first, the last failure's never.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field, replace

from IPython.core.error import UsageError as IPythonUsageError

from ..cell import cell_names, written_names
from ..config import FixLoop
from ..errors import FixloopError, UsageError
from ..kernel import wire
from ..loop import Warned, looks_wrong
from ..model import check_model
from ..options import AUTO_MODES, BUILTIN
from ..sandbox import confine
from . import cause as causes, comm as frontends
from .view import LoopView, PlainCell, keep_result

KEEP_CAP = 256 * 1024**2  # bytes of pickled copies kept before one cell (pandas under CoW costs none)
KEEP_FAILURES = 8  # failed cells whose starting state is kept for a `fix` request (by cell id)
ERROR_CHARS = 2000  # characters of a failed cell's error text kept (eight 40 MB messages held 320M before)
STOPPED = "fixloop: stopped before the cell ran (Stop came while the state it starts from was being kept)"


def error_text(error: BaseException) -> str:
    """`Name: message`, within ERROR_CHARS; the error's `__str__` runs once here (IPython's traceback runs it
    too; fixloop adds no other call)."""
    try:
        text = str(error)
    except Exception as exc:  # its __str__ raised: the text is not read
        text = f"(its text could not be read: {type(exc).__name__})"
    if len(text) > ERROR_CHARS:
        text = f"{text[:ERROR_CHARS]}… ({len(text):,} characters in all)"
    return f"{type(error).__name__}: {text}"


class _StopCell(ast.NodeTransformer):
    """The cell whose pre-cell copy Stop interrupted raises KeyboardInterrupt before its first line: IPython's
    event loop swallows an interrupt in a `pre_run_cell` callback and runs the cell, and an AST transformer,
    for that one cell, is its only way to stop it. Removed after the cell (`_post_run_cell`)."""

    def __init__(self):
        self.armed = True

    def visit(self, node):
        if not self.armed:
            return node
        self.armed = False
        stop = ast.Call(ast.Name("KeyboardInterrupt", ast.Load()), [ast.Constant(STOPPED)], [])
        return ast.Module(body=[ast.Raise(exc=stop, cause=None)], type_ignores=[])


@dataclass(frozen=True)
class Failure:
    """A cell that raised, and the state it started from (None: it was not kept)."""

    source: str
    cell_id: str | None
    error: str
    checkpoint: object | None = None  # a kernel/checkpoint.py Checkpoint, from the wire (`checkpoint.keep`)
    changes: dict = field(default_factory=dict)  # Checkpoint.changes, read right after the cell raised
    count: int | None = None  # its execution count: In[count]
    unkept: str = "auto mode and the JupyterLab extension were off when it ran"  # why `checkpoint` is None
    left: object | None = None  # what a restore would overwrite, as the failed cell left it (its Fingerprint)

    def namespace(self, ns: dict) -> dict:
        """What the sandbox mirrors: the namespace as it was before the cell, where it was kept."""
        return ns if self.checkpoint is None else self.checkpoint.state(ns)

    def notes(self, ns: dict) -> tuple[str, ...]:
        """What every receipt says about the state the sandbox starts from."""
        if self.checkpoint is None:
            written = sorted(n for n in written_names(self.source) if n in ns)
            return ("The sandbox starts from the kernel as it is now: the state before this cell was not kept "
                    f"({self.unkept})"
                    + (f"; the failed run may already have changed {', '.join(written)}" if written else "") + ".",)
        notes = []
        undone = [*self.changes.get("changed", ()), *self.changes.get("created", ())]
        if undone:
            notes.append("The sandbox starts from the state before the cell ran: what the failed run had already "
                         f"changed ({', '.join(undone)}) is put back.")
        for name, why in sorted(self.changes.get("uncertain", {}).items()):
            notes.append(f"not put back: {name} (kept by reference only: {why}); the failed run may already have "
                         "changed it in place")
        return tuple(notes)


def fixloop_cell(source: str) -> bool:
    """A `%%fixloop` cell or a `%fixloop` line: it runs its own loop, nothing is offered under it."""
    return source.lstrip().startswith(("%%fixloop", "%fixloop"))


class AutoFix:
    """One kernel's auto mode: the exception hook, the checkpoint before each cell, the last failure."""

    def __init__(self, shell, config: FixLoop):
        self.shell, self.config = shell, config
        self.frontend = frontends.current()
        self.mode = "off"
        self.saved = None  # (CustomTB, custom_exceptions) as they were before auto mode took the hook
        self.installed = None  # the CustomTB auto mode set, to know it is still ours
        self.running: list = []  # ExecutionInfo of the cells running; more than one: a nested run_cell
        self.cell: tuple[str, str | None] = ("", None)  # the top-level cell running: source, cell id
        self.checkpoint = None  # before the running cell (`checkpoint.keep`)
        self.count: int | None = None  # the top-level cell running: its execution count
        self.ran: list[causes.Ran] = []  # the last KEEP_CELLS cells that ran while the state was kept
        self.last: Failure | None = None
        self.cause: causes.Proposal | None = None  # the last run's change to an earlier cell, if any
        self.failures: dict[str, Failure] = {}  # cell id -> its last failure, the last KEEP_FAILURES
        self.since = 0  # cells run since `last` failed (a `%fixloop` line does not count)
        self.warned = Warned()  # the warnings of the top-level cell running (auto mode on)
        shell.events.register("pre_run_cell", self._pre_run_cell)
        shell.events.register("post_run_cell", self._post_run_cell)
        config.observe(self._configured, names="auto")

    def close(self) -> None:
        """`%unload_ext`: IPython's handler back, no checkpoints."""
        self.set_mode("off")
        for event, callback in (("pre_run_cell", self._pre_run_cell), ("post_run_cell", self._post_run_cell)):
            try:
                self.shell.events.unregister(event, callback)
            except ValueError:
                pass
        self.config.unobserve(self._configured, names="auto")

    @property
    def keeping(self) -> bool:
        """Whether the state before each cell is kept: auto mode is on, or the JupyterLab extension is."""
        return self.mode != "off" or self.frontend.connected

    # ------------------------------------------------------------------ on and off

    def _configured(self, change) -> None:
        self.set_mode(change["new"])

    def set_mode(self, mode: str) -> str:
        """Turn auto mode to `mode` ("off", "rules" or "model"); returns what changed, in words."""
        if mode not in AUTO_MODES:
            raise UsageError(f"auto mode is one of {', '.join(AUTO_MODES)}, not {mode!r}")
        if mode == "off":
            return self._off()
        if self.mode == "off":
            self.saved = (self.shell.CustomTB, self.shell.custom_exceptions)
            self.shell.set_custom_exc((Exception,), self._handler)
            self.installed = self.shell.CustomTB
        self.mode = mode
        if self.config.auto != mode:
            self.config.auto = mode
        model = self.config.options().resolved().model
        by = "the built-in rules" + (" (no tokens)" if mode == "rules" or model == BUILTIN else f" and {model}")
        then = "; `%fixloop last --model` asks the model" if mode == "rules" else (
            " (no model is configured: FixLoop.model)" if model == BUILTIN else "")
        return (f"fixloop auto: on. Under each error, a repair by {by} is tried in a sandbox from the state the cell "
                f"started from, and offered{then}. Nothing runs here until you accept; `%fixloop auto off` stops it.")

    def _off(self) -> str:
        if self.mode == "off":
            return "fixloop auto: already off."
        words = "fixloop auto: off; IPython's error handler is back as it was."
        if self.shell.CustomTB is self.installed:
            self.shell.CustomTB, self.shell.custom_exceptions = self.saved
        else:  # someone set their own handler after ours: theirs stays
            words = "fixloop auto: off; another error handler replaced fixloop's since, and stays."
        self.mode, self.saved, self.installed = "off", None, None
        if self.config.auto != "off":
            self.config.auto = "off"
        self.checkpoint = None
        return words

    # ------------------------------------------------------------------ before and after each cell

    def _pre_run_cell(self, info) -> None:
        if self.running and getattr(info, "store_history", False) and len(self.running) > 8:
            self.running.clear()  # a run whose end never came: never let it hide every later cell
        self.running.append(info)
        try:
            self._keep_state(info)
        except KeyboardInterrupt:  # Stop while the state was kept: IPython's event loop would swallow it
            self.checkpoint = None
            self.shell.ast_transformers.append(_StopCell())

    def _keep_state(self, info) -> None:
        """Before a top-level cell: the state it can reach, kept (a Checkpoint) while auto mode or the
        extension is on."""
        if len(self.running) > 1 or not getattr(info, "store_history", True):
            return  # a nested run_cell (an accepted fix, a passing %%fixloop cell), the Fix button's request
        source = getattr(info, "raw_cell", "") or ""
        cell_id = getattr(info, "cell_id", None) or frontends.request_cell(self.shell)[0]
        self.cell, self.checkpoint = (source, cell_id), None
        self.count = getattr(self.shell, "execution_count", None)
        if not source.lstrip().startswith("%fixloop"):
            self.since += 1
        if self.mode != "off" and not fixloop_cell(source):
            self.warned.start()
        if not self.keeping or fixloop_cell(source):
            return
        checkpoint = wire.local("checkpoint.keep", KEEP_CAP)
        try:
            checkpoint.save(self.shell.user_ns, cell_names(source))
        except Exception:  # keeping the state must never stop the user's cell
            return
        self.checkpoint = checkpoint

    def _post_run_cell(self, result) -> None:
        self.shell.ast_transformers[:] = [t for t in self.shell.ast_transformers if not isinstance(t, _StopCell)]
        top = len(self.running) == 1 and getattr(self.running[0], "store_history", True)
        if self.running and (result is None or getattr(result, "info", None) is self.running[-1]):
            self.running.pop()
        if not top:
            return
        error = getattr(result, "error_in_exec", None)
        warned = self.warned.stop()
        if error is not None and self.checkpoint is not None:
            self._freeze(error)  # the Fix button may ask for it
        elif error is None and self.mode != "off" and not fixloop_cell(self.cell[0]):
            self._looks(getattr(result, "result", None), warned)
        self._ran(error is None)

    def _looks(self, shown, warned: list[str]) -> None:
        """A cell that ran without error but looks wrong (loop/looks.py): the loop on it, as for an error,
        from the state it started from; a repair offered under it. Never raises."""
        source, cell_id = self.cell
        try:
            why = looks_wrong(source, shown, self.shell.user_ns, warned, written_names(source))
            if not why:
                return
            ns, checkpoint = self.shell.user_ns, self.checkpoint
            changes = checkpoint.changes(ns) if checkpoint is not None else {}
            left = checkpoint.fingerprint(ns) if checkpoint is not None else None
            self.last = Failure(source, cell_id, f"looks wrong: {why}", checkpoint, changes, self.count, left=left)
            self.since = 0  # Accept puts back the state it started from, as for a cell that raised
            self.run(self.last, ask_model=self.mode == "model", looks=why)
        except BaseException as exc:  # the stop button, or a bad model setting: said, and the kernel goes on
            print(f"fixloop: no repair offered: {type(exc).__name__}: {exc}".rstrip(": "), file=sys.stderr)

    def _ran(self, ok: bool) -> None:
        """Keep the cell that ended and the state it started from, the last KEEP_CELLS cells: a later
        failure's cause is judged on the state before it. Older copies go (and any copy-on-write cost)."""
        source = self.cell[0]
        checkpoint = self.checkpoint if ok else (self.last.checkpoint if self.last and self.last.count == self.count
                                                  else None)
        self.checkpoint = None
        if not self.keeping or not isinstance(self.count, int):
            self.ran.clear()
            return
        self.ran = [r for r in self.ran if r.count < self.count][-(causes.KEEP_CELLS - 1):]
        self.ran.append(causes.Ran(self.count, source, checkpoint, ok))
        self._bound()

    def _bound(self) -> None:
        """All the copies kept (the cells run, the failed cells) within cause.KEEP_TOTAL bytes: the newest
        cells' are kept, the older ones' let go (a cause before them is then not judged on the state before
        it, and the Fix button on such a failed cell starts from the kernel as it is now: the words say so).
        The last failure's is always kept. A copy two of them share counts once."""
        last = self.last.checkpoint if self.last is not None else None
        total = last.nbytes if last is not None else 0
        seen = {id(last)}
        kept = [(r.count, r) for r in self.ran] + [(f.count, f) for f in self.failures.values()]
        for _, held in sorted(kept, key=lambda k: k[0] or 0, reverse=True):  # the newest first
            if held.checkpoint is None or id(held.checkpoint) in seen:
                continue
            seen.add(id(held.checkpoint))
            total += held.checkpoint.nbytes
            if total > causes.KEEP_TOTAL:
                self._let_go(held)

    def _let_go(self, held) -> None:
        """Drop the copy `held` (a Ran or a Failure) keeps: the total of auto mode's copies is over its bound."""
        for i, r in enumerate(self.ran):
            if r.checkpoint is held.checkpoint:
                self.ran[i] = replace(r, checkpoint=None)
        why = (f"auto mode let it go: the copies it keeps across cells stay within {causes.KEEP_TOTAL / 1024**2:g} "
               "MiB, the newest cells' first")
        for cell_id, f in self.failures.items():
            if f.checkpoint is held.checkpoint:
                self.failures[cell_id] = replace(f, checkpoint=None, changes={}, unkept=why, left=None)

    def _freeze(self, error: BaseException) -> Failure:
        """Keep the failed cell and the state it started from; what it changed is read now."""
        source, cell_id = self.cell
        checkpoint, self.checkpoint = self.checkpoint, None
        ns = self.shell.user_ns
        changes = checkpoint.changes(ns) if checkpoint is not None else {}
        left = checkpoint.fingerprint(ns) if checkpoint is not None else None
        self.last = Failure(source, cell_id, error_text(error), checkpoint, changes, self.count, left=left)
        self.since = 0
        if cell_id:
            self.failures.pop(cell_id, None)
            self.failures[cell_id] = self.last
            for old in list(self.failures)[:-KEEP_FAILURES]:
                del self.failures[old]
            self._bound()
        return self.last

    # ------------------------------------------------------------------ the exception hook

    def _handler(self, shell, etype, value, tb, tb_offset=None):
        """IPython's CustomTB: the usual traceback, then the repair offered under it. Never raises
        (IPython would drop the hook and print its own complaint)."""
        self._traceback(etype, value, tb, tb_offset)
        source = self.cell[0]
        if self.mode == "off" or len(self.running) != 1 or not getattr(self.running[0], "store_history", True) or (
                etype is IPythonUsageError or fixloop_cell(source)):
            return None
        try:
            self.run(self._freeze(value), ask_model=self.mode == "model")
        except BaseException as exc:  # the stop button, or a bad model setting: said, and the kernel goes on
            print(f"fixloop: no repair offered: {type(exc).__name__}: {exc}".rstrip(": "), file=sys.stderr)
        return None

    def _traceback(self, etype, value, tb, tb_offset) -> None:
        """The traceback as it would be shown without auto mode (by the handler before ours, if it covers it)."""
        before, covered = self.saved or (None, ())
        if covered and issubclass(etype, covered):
            before(etype, value, tb, tb_offset=tb_offset)
        else:
            self.shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)

    # ------------------------------------------------------------------ the loop

    def run(self, failure: Failure, ask_model: bool, following: tuple[str, ...] = (), model: str | None = None,
            looks: str = ""):
        """Repair `failure`'s cell in a sandbox from the state it started from; show or send the result.
        `looks`: the cell ran without error, and this is why it looks wrong (nothing shown when the sandbox's
        run of it passes: what looked wrong here is not confirmed there)."""
        from ..loop import expecting, fix  # the loop brings jupyter_client and the sandbox: `%load_ext` stays cheap

        options = self.config.options().with_(model=model).resolved()
        if not ask_model:
            options = replace(options, model=BUILTIN)
        check_model(options.model, options.api_base)
        plain = PlainCell(failure.source, failure.cell_id, lambda: self._put_back(failure),
                          lambda: self._changed_since(failure))
        view = LoopView(self.shell, "", failure.source, options.model, options.max_rounds, plain=plain)
        ns = self.shell.user_ns
        try:
            result = fix(failure.source, namespace=failure.namespace(ns), notes=failure.notes(ns),
                         expect=expecting(following=following), hooks=view.hooks(), options=options)
            look = not (result.claimed or result.status in ("passed", "error") or looks)
            unconfined = look and not options.gateway_url and confine.resolve(options.confinement) == "none"
            self.cause = self._cause(failure, options, following) if look and not unconfined else None
        except BaseException as exc:
            view.stopped(str(exc) if isinstance(exc, FixloopError) else f"{type(exc).__name__}: {exc}")
            raise
        keep_result(ns, result)
        if looks and result.status == "passed":
            view.finish_brief(result, f"fixloop: this cell looked wrong here ({looks}), but its run in a sandbox, "
                                      "from the state it started from, showed nothing wrong; nothing is offered.")
            return result
        brief = self._brief(result, looks) if not ask_model else ""
        if brief:
            view.finish_brief(result, brief)
        else:
            view.finish(result, retry=self._retrier(failure, following))
        if self.cause is not None or unconfined:
            from IPython.display import display

            display(self.cause.bundle() if self.cause is not None else {"text/plain": causes.UNCONFINED}, raw=True)
        return result

    def _cause(self, failure: Failure, options, following: tuple[str, ...]) -> causes.Proposal | None:
        """A change to an earlier cell of the session that makes the cells down to this one run (cause.py)."""
        from ..loop import expecting, fix

        history = list(getattr(getattr(self.shell, "history_manager", None), "input_hist_raw", None) or [])
        ns = self.shell.user_ns
        start = failure.checkpoint.state(ns) if failure.checkpoint is not None else None

        def run(source, namespace, downstream, notes):  # the rules only: up to 3 cells, no tokens
            return fix(source, namespace=namespace, expect=expecting(following=following, downstream=downstream),
                       notes=notes, options=replace(options, model=BUILTIN))

        cells = causes.earlier(history, self.ran, failure.count)
        return causes.find(cells, self.ran, failure.count, failure.source, start, ns, run)

    def _brief(self, result, looks: str = "") -> str:
        """One line instead of the result when the rules offer nothing ("" to show the result)."""
        if result.patched is not None:
            return ""
        model = self.config.options().resolved().model
        ask = ("`%fixloop last --model` asks " + model if model != BUILTIN
               else "a model may: `%fixloop last --model openai/NAME`, or set FixLoop.model")
        if looks and result.status not in ("error", "passed"):
            return (f"fixloop: this cell runs, but looks wrong: {looks}; the built-in rules have no repair for it; "
                    f"{ask}.")
        if result.status == "passed":
            return ("fixloop: from the state it started from, this cell runs without error in a sandbox, so there is "
                    "nothing to repair there: what failed here is outside what the sandbox has (files it cannot "
                    "write, the network, the clock, or a value it does not share).")
        if result.status == "error":
            return f"fixloop: no repair offered: {result.reason}"
        return f"fixloop: the built-in rules have no repair for this error; {ask}."

    def _retrier(self, failure: Failure, following: tuple[str, ...]):
        """The widget's Retry: the configured model (the rules too, beside it), with the user's hint."""
        from ..loop import expecting, fix

        def retry(hint, hooks):
            options = self.config.options().resolved()
            options = replace(options, hint="\n".join(h for h in (options.hint, hint) if h))
            ns = self.shell.user_ns
            result = fix(failure.source, namespace=failure.namespace(ns), notes=failure.notes(ns),
                         expect=expecting(following=following), hooks=hooks, options=options)
            keep_result(ns, result)
            return result

        return retry

    def _changed_since(self, failure: Failure) -> str:
        """What changed since `failure`'s cell failed outside any cell (a widget's callback, a thread, a comm
        message) that putting back the state it started from would overwrite, in words ("" for nothing)."""
        if failure.checkpoint is None or failure.left is None or self.last is not failure or self.since:
            return ""  # nothing is put back then (_put_back)
        moved = failure.left.moved(self.shell.user_ns)
        return f"{', '.join(moved)} changed after the cell failed, outside any cell" if moved else ""

    def _put_back(self, failure: Failure) -> str:
        """Before an accepted fix runs: the state the cell started from, back in the kernel (only when
        no cell ran since: theirs would be undone). Returns what was done, in words."""
        if failure.checkpoint is None:
            return ""
        if self.last is not failure or self.since:
            return ("Other cells ran since this one failed, so the fix ran on the kernel as it is now, not on the "
                    "state the cell started from.")
        failure.checkpoint.restore(self.shell.user_ns)
        undone = [*failure.changes.get("changed", ()), *failure.changes.get("created", ())]
        return (f"Before it ran, what the failed run had changed ({', '.join(undone)}) was put back as it was "
                "before the cell." if undone else "")

    def ask(self, model: str | None) -> None:
        """`%fixloop last --model [NAME]`: the model (and the rules beside it) on the last failed cell."""
        if self.last is None:
            raise UsageError("no cell has failed since `%fixloop auto` (or the JupyterLab extension) was on")
        if self.config.options().with_(model=model).resolved().model == BUILTIN:
            raise UsageError("no model is configured: `%fixloop last --model openai/NAME`, or "
                             "`%config FixLoop.model = \"...\"` first")
        self.run(self.last, ask_model=True, model=model)

    # ------------------------------------------------------------------ the Fix button (docs/protocol.md)

    def button(self, source: str, cell_id: str | None, following: tuple[str, ...]) -> None:
        """The Fix button's request (`%%fixloop --dry` over the code the cell ran, marked as the button's:
        comm.fix_request): the loop on that cell from the state it started from when it is the one kept
        for this cell id, else from the kernel as it is now (the receipts say so); the configured model
        with the rules beside it. On Accept the state before it is put back and the frontend reruns it."""
        kept = self.failures.get(cell_id) if cell_id else self.last
        failure = kept if kept is not None and kept.source == source else Failure(source, cell_id, "")
        self.run(failure, ask_model=True, following=following)

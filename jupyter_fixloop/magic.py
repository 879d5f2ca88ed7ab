"""`%%fixloop` and `%fixloop`: parse the cell and its arguments, run the loop, show the result.

The magic never runs a candidate in the user's kernel. When the cell as written already passes, it
runs the cell here so the notebook's state moves on as if the magic were not there (`--dry` skips
that). A fix is shown for the user to accept; nothing the user typed is ever replaced without it.
"""

from __future__ import annotations

import ast
import shlex

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from . import config as config_mod
from .confine import load_warning
from .errors import FixloopError, UsageError


AWAIT_NOTE = "the cell uses top-level await, which a cell magic cannot run in your kernel (IPython runs it only as a cell)"


def awaits_in_running_loop(shell, code: str) -> bool:
    """True when `code` needs top-level await and the kernel's event loop is running (ipykernel):
    run from inside a magic or a widget callback, it would fail with "event loop is already running"."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    try:
        transformed = shell.transform_cell(code)
        return bool(shell.should_run_async(code, transformed_cell=transformed, preprocessing_exc_tuple=None))
    except Exception:  # an IPython without autoawait, or code it cannot transform
        return False


@magics_class
class FixLoopMagics(Magics):
    """Holds the configuration (`FixLoop`) and the last result of this kernel."""

    def __init__(self, shell):
        super().__init__(shell)
        self.config_obj = config_mod.FixLoop(parent=shell)
        if hasattr(shell, "configurables"):
            shell.configurables.append(self.config_obj)  # so that `%config FixLoop.x = ...` reaches it
        self.last = None
        self.last_code = None  # set by the widget's Accept/Undo: what `%fixloop last` inserts

    @magic_arguments()
    @argument("--expect", "-e", action="append", default=[], metavar="EXPR",
              help="A Python expression that must be true after the cell runs (repeatable).")
    @argument("--expect-output", default=None, metavar="TEXT",
              help="What the cell must print (stdout; \\n for a new line), or the path of a file holding it.")
    @argument("--model", "-m", default=None, help="litellm model string; default FixLoop.model or the built-in engine.")
    @argument("--max-rounds", "-r", type=int, default=None, help="Model rounds before giving up (default 4).")
    @argument("--timeout", "-t", type=float, default=None, help="Seconds per sandbox run (default 30).")
    @argument("--max-tokens", type=int, default=None, help="Total model tokens for this loop.")
    @argument("--budget", type=float, default=None, help="Total model cost in USD for this loop.")
    @argument("--hint", default=None, help="Extra guidance added to the prompt.")
    @argument("--dry", action="store_true", help="Do not run the passing cell in this kernel.")
    @argument("instruction", nargs="*", help="Optional instruction: write or change the cell's code.")
    @cell_magic
    def fixloop(self, line, cell):
        """Run the cell in a sandbox kernel; if it fails, repair it with a model until its checks pass.

        Example::

            %%fixloop --expect "fib(6) == 8"
            def fib(n):
                a, b = 1, 1
                for _ in range(n):
                    a, b = b, a + b
                return a

        The proposed code is shown as a diff and kept in `_fixloop.patched`; `%fixloop last` inserts
        it as the next cell. With an instruction (`%%fixloop add a column with the total`) or a cell
        holding only an instruction, the model writes or changes the code, which is verified the
        same way.
        """
        args = self._parse(line)
        source, instruction = split_instruction(cell, " ".join(args.instruction).strip() or None)
        cfg = self.config_obj
        view = self._start_view(line, cell, args, cfg)
        try:
            result = self._run(source, args, instruction, cfg, on_event=view.on_event)
        except FixloopError as exc:
            view.stopped(str(exc))
            raise IPythonUsageError(str(exc)) from None
        except BaseException as exc:
            view.stopped(f"{type(exc).__name__}: {exc}")
            raise
        self.last = result
        self.last_code = None
        self.shell.user_ns["_fixloop"] = result
        self._show(result, view, retry=self._retrier(source, args, instruction, cfg))
        if result.status == "passed" and not args.dry:
            if awaits_in_running_loop(self.shell, source):
                print(f"fixloop: {AWAIT_NOTE}: run it without the %%fixloop line.")
            else:
                self.shell.run_cell(source, store_history=False)
        return None

    def _parse(self, line: str):
        try:
            return parse_argstring(self.fixloop, line)
        except (IPythonUsageError, SystemExit, ValueError) as exc:
            raise IPythonUsageError(f"%%fixloop: {exc}. Example: %%fixloop --expect \"f(2) == 4\" --max-rounds 3") from None

    def _run(self, source, args, instruction, cfg, on_event=None):
        from .loop import fix
        from .sandbox import SandboxSettings

        settings = SandboxSettings(confinement=cfg.confinement, memory_limit=cfg.memory_limit or None)
        return fix(
            source,
            checks=tuple(unquote(e) for e in args.expect),
            instruction=instruction,
            namespace=self.shell.user_ns,
            model=config_mod.resolve_model(args.model, cfg.model),
            max_rounds=args.max_rounds if args.max_rounds is not None else cfg.max_rounds,
            timeout=args.timeout if args.timeout is not None else cfg.timeout,
            max_tokens=args.max_tokens if args.max_tokens is not None else (cfg.max_tokens or None),
            budget=args.budget if args.budget is not None else (cfg.budget or None),
            wall_time=cfg.wall_time,
            hint=args.hint,
            api_base=cfg.api_base or None,
            settings=settings,
            pool_size=cfg.pool_size,
            pool_idle=cfg.pool_idle,
            snapshot_size_cap=cfg.snapshot_size_cap,
            on_event=on_event,
            expect_output=expected_output(args.expect_output),
            receipt_tokens=cfg.receipt_tokens,
        )

    def _start_view(self, line, cell, args, cfg):
        """Record the cell in the history before anything runs, and show the live header."""
        from .display import LoopView

        model = config_mod.resolve_model(args.model, cfg.model)
        max_rounds = args.max_rounds if args.max_rounds is not None else cfg.max_rounds
        return LoopView(self.shell, self, line, cell, model, max_rounds)

    def _retrier(self, source, args, instruction, cfg):
        """The widget's Retry: the same loop again, the user's hint joined to --hint."""
        import argparse

        def retry(hint, on_event):
            joined = "\n".join(h for h in (args.hint, hint) if h) or None
            result = self._run(source, argparse.Namespace(**{**vars(args), "hint": joined}), instruction, cfg, on_event)
            self.shell.user_ns["_fixloop"] = result
            return result

        return retry

    def _show(self, result, view=None, retry=None) -> None:
        """The widget where widgets work (with a kernel), else HTML and text; see display.py."""
        if view is not None:
            view.finish(result, retry)
            return
        from IPython.display import display

        from .diff import render_html, render_text

        display({"text/plain": render_text(result), "text/html": render_html(result)}, raw=True)

    @line_magic("fixloop")
    def fixloop_line(self, line):
        """`%fixloop last`: insert the last proposed (or accepted) code as the next cell. `%fixloop history [ID]`:
        list past loops, or show one with its original cell. `%fixloop config`: show settings."""
        words = shlex.split(line)
        command = words[0] if words else "last"
        if command == "last":
            return self._insert_last()
        if command == "history":
            from .history import get

            history = get(self.shell)
            print(history.show(words[1]) if len(words) > 1 else history.listing())
            return None
        if command == "config":
            cfg = self.config_obj
            names = sorted(cfg.trait_names(config=True))
            return "\n".join(f"FixLoop.{n} = {getattr(cfg, n)!r}" for n in names)
        raise IPythonUsageError(f"%fixloop: unknown command {command!r}; use `%fixloop last`, `%fixloop history` or `%fixloop config`")

    def _insert_last(self):
        result = self.last
        if result is None:
            raise IPythonUsageError("%fixloop last: no loop has run in this kernel yet")
        code = self.last_code or result.patched or (result.rounds[-1].candidate if result.rounds else None)
        if not code:
            raise IPythonUsageError("%fixloop last: the last loop proposed no code")
        self.shell.set_next_input(code.rstrip("\n"), replace=False)
        return None


def split_instruction(cell: str, instruction: str | None) -> tuple[str, str | None]:
    """A cell whose whole body is one line of prose is an instruction, not code."""
    body = cell.strip("\n")
    if instruction is None and body.strip() and "\n" not in body.strip() and looks_like_prose(body.strip()):
        return "", body.strip()
    return cell, instruction


def unquote(text: str) -> str:
    """IPython's magic argument parser keeps the quotes (`--expect "f(2) == 4"` arrives quoted): drop them."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and text[0] not in text[1:-1]:
        return text[1:-1]
    return text


def expected_output(value: str | None) -> str | None:
    """--expect-output: the path of a file holding the text, or the text itself (`\\n` is a new line)."""
    import os

    if value is None:
        return None
    value = unquote(value)
    if os.path.isfile(value):
        try:
            with open(value, encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--expect-output: cannot read {value!r} ({exc})") from None
    return value.replace("\\n", "\n")


def looks_like_prose(text: str) -> bool:
    try:
        ast.parse(text)
        return False
    except SyntaxError:
        pass
    words = text.split()
    return len(words) >= 3 and text[0].isalpha()


def load_ipython_extension(ipython) -> None:
    from .frontend import connect

    ipython.register_magics(FixLoopMagics(ipython))
    connect(ipython)  # hello to the frontend: can it replace cells in place?
    if warning := load_warning(config_mod.FixLoop(parent=ipython).confinement):  # e.g. no bwrap: say so now
        print(warning)


def unload_ipython_extension(ipython) -> None:
    magics = ipython.magics_manager.magics
    magics["cell"].pop("fixloop", None)
    magics["line"].pop("fixloop", None)


__all__ = ["FixLoopMagics", "UsageError", "load_ipython_extension", "split_instruction"]

"""`%%fixloop` and `%fixloop`: parse the cell and its arguments, run the loop, show the result.

The magic never runs a candidate in the user's kernel. When the cell as written already passes, it
runs the cell here so the notebook's state moves on as if the magic were not there (`--dry` skips
that). A fix is shown for the user to accept; nothing the user typed is ever replaced without it.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..cell import looks_like_prose, split_instruction, split_magic
from ..config import FixLoop, flag_arguments, with_flags
from ..errors import FixloopError, UsageError
from ..model import check_model
from ..sandbox import load_warning, sweep
from . import comm as frontends, history as histories
from .auto import AutoFix
from .comm import connect, following_code
from .kernelrun import AWAIT_NOTE, awaits_in_running_loop
from .view import LoopView, keep_result


def setting_arguments(magic):
    """Every FixLoop setting as a flag of the magic, from the one table (config.flag_arguments)."""
    for flags, keywords in reversed(flag_arguments()):  # IPython lists them in the reverse of application
        magic = argument(*flags, **keywords)(magic)
    return magic


@magics_class
class FixLoopMagics(Magics):
    """Holds the configuration (`FixLoop`); each cell's display and decisions are its LoopView's."""

    def __init__(self, shell):
        super().__init__(shell)
        self.config_obj = FixLoop(parent=shell)
        if hasattr(shell, "configurables"):
            shell.configurables.append(self.config_obj)  # so that `%config FixLoop.x = ...` reaches it
        self.auto = AutoFix(shell, self.config_obj)

    @magic_arguments()
    @argument("--expect", "-e", action="append", default=[], metavar="EXPR",
              help="A Python expression that must be true after the cell runs (repeatable).")
    @argument("--expect-output", default=None, metavar="TEXT",
              help="What the cell must print (stdout; \\n for a new line), or the path of a file holding it.")
    @argument("--hint", default=None, help="Extra guidance added to the prompt.")
    @setting_arguments
    @argument("--dry", action="store_true", help="Do not run the passing cell in this kernel.")
    @argument("--help", "-h", action="store_true", help="Show this help; the cell does not run.")
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
        following = following_code(self.shell)  # taken first: the frontend's list is for this run only
        args = self._parse(line)
        if args.help:  # what `%%fixloop?` shows (IPython writes the usage line with one %)
            print(self.fixloop.__doc__.replace("%fixloop [", "%%fixloop [", 1))
            return
        if frontends.fix_request(self.shell):  # the Fix button's: the failed cell, from the state it started from
            cell_id, code = frontends.request_cell(self.shell)
            try:  # the code as the cell ran it: the request's, exactly (IPython adds a newline to `cell`)
                return self.auto.button(split_magic(code or "")[1] or cell, cell_id, following)
            except FixloopError as exc:
                raise IPythonUsageError(str(exc)) from None
        source, instruction = split_instruction(cell, " ".join(args.instruction).strip() or None)
        try:
            options = self._options(args)
            check_model(options.model, options.api_base)
        except FixloopError as exc:
            raise IPythonUsageError(str(exc)) from None
        view = self._start_view(line, cell, options)
        try:
            result = self._run(source, args, instruction, options, following, hooks=view.hooks())
        except FixloopError as exc:
            view.stopped(str(exc))
            raise IPythonUsageError(str(exc)) from None
        except BaseException as exc:
            view.stopped(f"{type(exc).__name__}: {exc}")
            raise
        keep_result(self.shell.user_ns, result)
        view.finish(result, retry=self._retrier(source, args, instruction, options, following))
        if result.status == "passed" and not args.dry:
            if awaits_in_running_loop(self.shell, source):
                print(f"fixloop: {AWAIT_NOTE}: run it without the %%fixloop line.")
            else:
                self.shell.run_cell(source, store_history=False)

    def _parse(self, line: str):
        try:
            return parse_argstring(self.fixloop, line)
        except (IPythonUsageError, SystemExit, ValueError) as exc:
            raise IPythonUsageError(
                f'%%fixloop: {exc}. Example: %%fixloop --expect "f(2) == 4" --max-rounds 3'
            ) from None

    def _options(self, args):
        """FixLoop's configured values, overridden by this cell's arguments."""
        return with_flags(self.config_obj.options(), args).resolved()

    def _run(self, source, args, instruction, options, following=(), hooks=None):
        # imported here for start-up cost: the loop brings jupyter_client and the sandbox; `%load_ext` stays cheap
        from ..loop import expecting, fix

        expect = expecting(expected_output(args.expect_output), following)  # what every run is judged against
        return fix(source, checks=tuple(unquote(e) for e in args.expect), instruction=instruction,
                   namespace=self.shell.user_ns, expect=expect, hooks=hooks, options=options)

    def _start_view(self, line, cell, options):
        """Record the cell in the history before anything runs, and show the live header."""
        return LoopView(self.shell, line, cell, options.model, options.max_rounds)

    def _retrier(self, source, args, instruction, options, following):
        """The widget's Retry: the same loop again, the user's hint joined to --hint."""

        def retry(hint, hooks):
            joined = "\n".join(h for h in (options.hint, hint) if h)
            result = self._run(source, args, instruction, replace(options, hint=joined), following, hooks)
            keep_result(self.shell.user_ns, result)
            return result

        return retry

    @line_magic("fixloop")
    def fixloop_line(self, line):
        """`%fixloop last`: insert the last loop's code as the next cell (the accepted code, the original
        after Undo, else the proposal). `%fixloop auto [rules | model | off]`: under each error of an
        ordinary cell, the built-in rules' repair (with `model`, the configured model's too) is tried in
        a sandbox from the state the cell started from and offered; `off` puts IPython's handler back.
        `%fixloop last --model [NAME]`: ask the model about the last cell that failed in auto mode.
        `%fixloop history [ID]`: list past loops, or show one with its
        original cell. `%fixloop config [NAME | --help]`: the settings, where each value came from, and
        what a setting does. `%fixloop --help`: all of this and the `%%fixloop` options.
        `%fixloop INSTRUCTION` (`%fixloop add a column with the total`, options first if any): the
        model writes the code, as `%%fixloop` with that instruction and an empty cell."""
        words = shlex.split(line)
        command = words[0] if words else "last"
        if command in ("--help", "-h", "help"):
            print(self.fixloop_line.__doc__ + "\n\n" + self.fixloop.__doc__.replace("%fixloop [", "%%fixloop [", 1))
            return None
        if command not in ("last", "history", "config", "auto") and (command.startswith("-") or looks_like_prose(line)):
            return self.fixloop(line, "")  # an instruction (with options): a cell magic with no code
        if command == "auto":
            return self._auto(words[1:])
        if command == "last" and len(words) > 1:
            return self._ask_model(words[1:])
        if command == "last":
            return self._insert_last()
        if command == "history":
            history = histories.get(self.shell)
            print(history.show(words[1]) if len(words) > 1 else history.listing())
            return None
        if command == "config":
            try:
                print(self.config_obj.table(*words[1:]))
            except UsageError as exc:
                raise IPythonUsageError(f"%fixloop config: {exc}") from None
            return None
        raise IPythonUsageError(f"%fixloop: unknown command {command!r}; use `%fixloop last`, `%fixloop history`, "
                                "`%fixloop config`, an instruction (`%fixloop add a column with the total`) "
                                "or `%fixloop --help`")

    def _auto(self, words: list[str]) -> None:
        mode = words[0] if words else "rules"
        mode = {"on": "rules"}.get(mode, mode)
        try:
            print(self.auto.set_mode(mode))
        except UsageError as exc:
            raise IPythonUsageError(f"%fixloop auto: {exc}; e.g. `%fixloop auto`, `%fixloop auto model`, "
                                    "`%fixloop auto off`") from None

    def _ask_model(self, words: list[str]) -> None:
        if words[0] not in ("--model", "-m") or len(words) > 2:
            raise IPythonUsageError("%fixloop last: `%fixloop last` inserts the last loop's code; `%fixloop last "
                                    "--model [NAME]` asks the model about the last cell that failed in auto mode")
        try:
            self.auto.ask(words[1] if len(words) > 1 else None)
        except FixloopError as exc:
            raise IPythonUsageError(f"%fixloop last --model: {exc}") from None

    def _insert_last(self):
        entry = histories.get(self.shell).last()
        if entry is None:
            raise IPythonUsageError("%fixloop last: no loop has run in this kernel yet")
        code = histories.last_code(entry)
        if not code:
            raise IPythonUsageError("%fixloop last: the last loop proposed no code")
        self.shell.set_next_input(code.rstrip("\n"), replace=False)


def unquote(text: str) -> str:
    """IPython's magic argument parser keeps the quotes (`--expect "f(2) == 4"` arrives quoted): drop them."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and text[0] not in text[1:-1]:
        return text[1:-1]
    return text


def expected_output(value: str | None) -> str | None:
    """--expect-output: the path of a file holding the text, or the text itself (`\\n` is a new line)."""
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


def load_ipython_extension(ipython) -> None:
    magics = FixLoopMagics(ipython)
    ipython.register_magics(magics)
    sweep()  # sandbox and snapshot dirs of kernels that died mid-loop
    connect(ipython, magics.config_obj)  # hello to the frontend: can it replace cells in place? (and which model)
    configured = magics.config_obj.options().resolved()
    if not configured.gateway_url and (warning := load_warning(configured.confinement)):  # e.g. no bwrap: say so now
        print(warning)
    if configured.auto != "off":  # c.FixLoop.auto in a config file
        print(magics.auto.set_mode(configured.auto))


def unload_ipython_extension(ipython) -> None:
    magics = ipython.magics_manager.magics
    bound = magics["line"].get("fixloop")
    owner = getattr(bound, "__self__", None)
    if isinstance(owner, FixLoopMagics):
        owner.auto.close()  # IPython's error handler back, no checkpoints
    magics["cell"].pop("fixloop", None)
    magics["line"].pop("fixloop", None)


__all__ = ["FixLoopMagics", "UsageError", "load_ipython_extension", "split_instruction"]

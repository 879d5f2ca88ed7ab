"""The one way across the wall between the host and the code that runs inside a kernel.

The host (the user's kernel, batch mode, the bench) never writes code strings that reach into
`jupyter_fixloop.kernel`: it asks `call(entry, *args)` for the one line that calls a named entry
point, and a kernel runs it through `serve`, which refuses an entry that is not in `ENTRIES` and a
protocol version it does not speak. Arguments travel as Python literals (`repr`), and `NS` stands
for the kernel's own globals. The user's own kernel, where the loop runs, asks the entries that read
its namespace of itself (`local`: the same table, in-process). Everything here is stdlib and cheap:
it is imported in every kernel.
"""

from __future__ import annotations

import importlib
import json

VERSION = 1

# entry -> (module under jupyter_fixloop.kernel, function, answer encoded as JSON text)
ENTRIES: dict[str, tuple[str, str, bool]] = {
    "hello": ("wire", "hello", False),
    "load": ("runner", "load_request", False),
    "preprint": ("runner", "preprint_request", False),
    "run": ("runner", "run_request", False),
    "arun": ("runner", "arun_request", False),
    "follow": ("runner", "follow_request", False),
    "afollow": ("runner", "afollow_request", False),
    "judge": ("runner", "judge_request", False),
    "last": ("runner", "last_json", False),
    "check": ("runner", "evaluate_check", True),
    "before_run": ("limits", "before_run", False),
    "preload": ("snapshot", "preload", False),
    "upload.begin": ("upload", "begin", False),
    "upload.append": ("upload", "append", False),
    "upload.size": ("upload", "size", False),
    "upload.discard": ("upload", "discard", False),
    "checkpoint.save": ("checkpoint", "save", False),
    "checkpoint.restore": ("checkpoint", "restore", False),
    "checkpoint.hold": ("checkpoint", "hold", False),
    "checkpoint.resume": ("checkpoint", "resume", False),
    "checkpoint.mirror": ("checkpoint", "mirror", False),
    "checkpoint.kept_from": ("checkpoint", "kept_from", False),
    "checkpoint.restore_before": ("checkpoint", "restore_before", False),
    # asked by the user's own kernel of itself, in-process (`local`): its namespace read where it lives
    "checkpoint.keep": ("checkpoint", "Checkpoint", False),
    "namespace.describe": ("namespace", "described", False),
    "namespace.shared": ("namespace", "shared", False),
    "namespace.secrets": ("namespace", "secret_texts", False),
    "namespace.secret_name": ("namespace", "secret_name", False),
    "start.kernel": ("start", "kernel", False),  # a process's first line (kernel_command), not a call
    # the checks read from an instruction's words of the rows it asks for (loop/selection.py), run by the judge
    "selected.rows_hold": ("selected", "rows_hold", False),
    "selected.sorted_by": ("selected", "sorted_by", False),
    "selected.columns_shown": ("selected", "columns_shown", False),
    "selected.ends": ("selected", "ends", False),
    "selected.share": ("selected", "share", False),
    "selected.extremes": ("selected", "extremes", False),
    "selected.distinct": ("selected", "distinct", False),
    # the checks read from an instruction's words of a column it cleans (loop/cleaning.py), run by the judge
    "selected.cleaned": ("selected", "cleaned", False),
    "selected.typed": ("selected", "typed", False),
    "selected.columns_are": ("selected", "columns_are", False),
    "selected.rows_kept": ("selected", "rows_kept", False),
}
_SELF = "__import__('jupyter_fixloop.kernel.wire', fromlist=['wire'])"


class _Namespace:
    """The kernel's globals, as an argument: `call("checkpoint.save", NS, names)`."""

    def __repr__(self) -> str:
        return "globals()"


NS = _Namespace()


class Name:
    """A name of the kernel's globals, as an argument: `call("selected.distinct", Name("df"), ...)`."""

    def __init__(self, name: str):
        if not name.isidentifier():
            raise ValueError(f"not a name: {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return self.name


def call(entry: str, *args, awaited: bool = False) -> str:
    """The line a kernel runs to call `entry` with `args` (literals, or `NS`)."""
    if entry not in ENTRIES:
        raise KeyError(f"no kernel entry point {entry!r}")
    arglist = "".join(f", {arg!r}" for arg in args)
    line = f"{_SELF}.serve({VERSION}, {entry!r}{arglist})"
    return f"await {line}" if awaited else line


def kernel_command(python: str, lifeline: str, connection_file: str) -> list[str]:
    """The command line of a sandbox kernel (entry `start.kernel`): like ipykernel_launcher, it never
    imports from the working directory (the sandbox's scratch directory, which candidates write)."""
    line = f"import sys\nif sys.path[0] == '': del sys.path[0]\n{_SELF}.serve({VERSION}, 'start.kernel', sys.argv)"
    return [python, "-c", line, lifeline, "-f", connection_file]


def bootstrap(sources: dict[str, tuple[str, bool]]) -> str:
    """A gateway kernel's first request, before `jupyter_fixloop` can be imported there: it runs
    `start.py`'s source (one of `sources`, module name -> (source, is a package)) and its `install`,
    which serves the others. After it, `call` reaches every entry as in a local kernel."""
    start = sources["jupyter_fixloop.kernel.start"][0]
    name = "<fixloop:jupyter_fixloop.kernel.start>"
    return (f"_fixloop_start = {{'__name__': 'jupyter_fixloop.kernel.start'}}\n"
            f"exec(compile({start!r}, {name!r}, 'exec'), _fixloop_start)\n"
            f"_fixloop_start['install']({json.dumps(sources)!r})\n"
            "del _fixloop_start\n")


def serve(version: int, entry: str, *args):
    """In the kernel: run one entry point of `ENTRIES` (an `a…` entry returns its coroutine)."""
    if version != VERSION:
        raise RuntimeError(f"fixloop's kernel speaks wire version {VERSION}, the host {version}: restart the kernel")
    module, name, encoded = _entry(entry)
    answer = getattr(importlib.import_module(f"jupyter_fixloop.kernel.{module}"), name)(*args)
    return json.dumps(answer) if encoded else answer


def local(entry: str, *args, **kwargs):
    """An entry point run in this process, its answer as the function gives it: the user's own kernel
    (a `%%fixloop` cell, `%fixloop auto`) reading its namespace where it lives."""
    module, name, _ = _entry(entry)
    return getattr(importlib.import_module(f"jupyter_fixloop.kernel.{module}"), name)(*args, **kwargs)


def _entry(entry: str) -> tuple[str, str, bool]:
    if entry not in ENTRIES:
        raise KeyError(f"no kernel entry point {entry!r}")
    return ENTRIES[entry]


def hello() -> int:
    """The version this kernel speaks (the runner is imported by the first `load` or `run`)."""
    importlib.import_module("jupyter_fixloop.kernel.runner")
    return VERSION

"""What the benches that run loops share: the user-side kernel, the loop's arguments, one kernel for a run."""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import tempfile

from jupyter_fixloop.errors import FixloopError
from jupyter_fixloop.kernel import wire


class UserKernel:
    """A real kernel standing in for the user's: it runs `setup` and writes the snapshot the loop mirrors."""

    def __init__(self, cwd: str):
        from jupyter_client.manager import KernelManager

        # IPC sockets in the bench's private directory, as the sandboxes use (no TCP port)
        self.km = KernelManager(kernel_name="python3", transport="ipc",
                                connection_file=os.path.join(cwd, "user-kernel.json"))
        self.km.start_kernel(cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str, timeout: float) -> None:
        """Run code like a cell; raise FixloopError with the kernel's error if it fails or hangs."""
        try:
            reply = self.kc.execute_interactive(code, timeout=timeout, store_history=False,
                                                output_hook=lambda msg: None)
        except TimeoutError:
            self.recover()
            raise FixloopError(f"did not finish in {timeout:g} s") from None
        content = reply["content"]
        if content["status"] != "ok":
            raise FixloopError(f"{content.get('ename', 'error')}: {content.get('evalue', '')}")

    def snapshot(self, path: str, timeout: float, code: list[str]):
        """Mirror what `code` (the cell, the check) reads of the kernel's globals to `path`, by the
        rule a notebook session follows (sharing.py); returns the Snapshot."""
        from jupyter_fixloop.kernel import Snapshot

        share = {"code": code}
        expr = wire.call("checkpoint.mirror", wire.NS, path, share)
        reply = self.kc.execute_interactive("", timeout=timeout, store_history=False, user_expressions={"s": expr},
                                            output_hook=lambda msg: None)
        result = reply["content"]["user_expressions"]["s"]
        if result.get("status") != "ok":
            raise FixloopError(f"snapshot failed: {result.get('ename')}: {result.get('evalue')}")

        data = json.loads(ast.literal_eval(result["data"]["text/plain"]))
        return Snapshot(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})

    def reset(self, timeout: float) -> None:
        if not self.km.is_alive():
            self.recover()
        self.run("get_ipython().run_line_magic('reset', '-f')", timeout)

    def recover(self) -> None:
        """After a hang or a crash in a case's setup: a fresh kernel for the next case."""
        self.km.restart_kernel(now=True)
        self.kc.wait_for_ready(timeout=120)

    def close(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)



def add_loop_arguments(parser: argparse.ArgumentParser, unit: str) -> None:
    """The model and the loop's bounds, as every bench that runs loops takes them (`unit`: "case", "step")."""
    parser.add_argument("--model", "-m", default=None,
                        help="litellm model string (default: $FIXLOOP_MODEL or fixloop/builtin)")
    parser.add_argument("--api-base", default=None, help="base URL of an OpenAI-compatible server or litellm proxy")
    parser.add_argument("--max-rounds", "-r", type=int, default=4,
                        help=f"model rounds per {unit} in loop mode (default 4)")
    parser.add_argument("--timeout", "-t", type=float, default=10.0, help="seconds per sandbox run (default 10)")
    parser.add_argument("--samples", "-k", type=int, default=1, metavar="K",
                        help="loop mode: candidates per round, each run, the best carried on (1-8, default 1)")
    parser.add_argument("--resamples", type=int, default=None, metavar="K",
                        help="loop mode: candidates of a round asked after the model repeated itself (default 3)")
    parser.add_argument("--seed", type=int, default=None, metavar="N",
                        help="sent with each model call, so that a run can be repeated where the server honours it "
                        "(llama-server does; start it with --no-cache-prompt, whose reused prefix changes the numbers)")
    parser.add_argument("--no-rules", dest="rules", action="store_false",
                        help="loop mode: ask only the model, not also the built-in engine's rule repair (one-shot "
                        "mode asks only the model)")
    parser.add_argument("--model-slots", type=int, default=None, metavar="N",
                        help="loop mode: model calls a round makes at once (a server with N slots, llama-server's "
                        "--parallel; default 1: one after another)")
    parser.add_argument("--model-timeout", type=float, default=None, metavar="S",
                        help="seconds one model call may take (default 120)")
    parser.add_argument("--wall-time", type=float, default=None, metavar="S",
                        help=f"seconds for one {unit}'s whole loop (default 600; 0: no bound)")


def loop_options(opts, cwd: str):
    """The LoopOptions of a bench run, from its arguments; the sandboxes work in `cwd`."""
    from jupyter_fixloop.options import LoopOptions

    return LoopOptions(model=opts.model, api_base=opts.api_base or "", max_rounds=opts.max_rounds,
                       timeout=opts.timeout, cwd=cwd).with_(
        samples=getattr(opts, "samples", None), rules=getattr(opts, "rules", None),
        resamples=getattr(opts, "resamples", None), model_timeout=getattr(opts, "model_timeout", None),
        wall_time=getattr(opts, "wall_time", None), seed=getattr(opts, "seed", None),
        agreement_samples=getattr(opts, "agreement_samples", None),
        agreement_more=getattr(opts, "agreement_more", None),
        model_slots=getattr(opts, "model_slots", None)).resolved()


def run_each(items: list, opts, run_one, on_each=None) -> list:
    """`run_one(item, kernel, workdir)` for each item, with one user-side kernel and `opts.options` made
    from the arguments; `on_each(item, None)` before each and `on_each(item, result)` after."""
    workdir = tempfile.mkdtemp(prefix="fixloop-bench-")
    # the cases run in a folder of their own: under bwrap the working directory is a view fixed at
    # kernel start, so the snapshot (written later) must live beside it, not in it
    cwd = os.path.join(workdir, "cwd")
    os.mkdir(cwd)
    opts.options = loop_options(opts, cwd)
    kernel = UserKernel(cwd=cwd)
    results = []
    try:
        for item in items:
            if on_each:
                on_each(item, None)
            result = run_one(item, kernel, workdir)
            results.append(result)
            if on_each:
                on_each(item, result)
    finally:
        kernel.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return results

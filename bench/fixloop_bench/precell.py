"""`jupyter-fixloop speed --only precell`: what keeping the state before each cell costs.

While `%fixloop auto` (or the JupyterLab extension) is on, the kernel keeps, before each cell, what the
cell can reach (kernel/checkpoint.py: a copy-on-write copy of a pandas object, a pickle of other
mutable values) and drops it when the cell ends. Measured here through IPython itself: the same cells
run by one `InteractiveShell` with auto mode off and on, alternating, on a 1,000,000-row frame; the
overhead is printed as a ratio against the cell's own run: the time spent in auto mode's two hooks
(before and after the cell, timed directly), and the median difference between the two runs of a
pair made back to back (which also holds what the kept copy makes pandas copy later, and on a busy
machine mostly noise). Target: the hooks <= 5 % of the cell's run.

Three cells: one that replaces a column (`df['x'] = df['x'] * 2`: copy-on-write copies nothing), one
that only reads (a groupby), and one that writes into the frame in place (`df.loc[...] = ...`: the
kept copy shares the column's memory, so pandas copies that column's block before writing, a cost
the cell would not pay otherwise).
"""

from __future__ import annotations

import statistics
import time

CELLS = {
    "replace a column": "df['x'] = df['x'] * 2",
    "read (groupby)": "total = df.groupby('region')['amount'].sum()",
    "write in place": "df.loc[df['amount'] > 0.5, 'amount'] = 0.0",
}
TARGET = 0.05


def frame(rows: int):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "x": np.arange(rows, dtype="int64"), "amount": rng.random(rows), "price": rng.random(rows) * 100,
        "qty": rng.integers(1, 10, rows), "region": rng.choice(["north", "south", "east", "west"], rows),
        "name": pd.Series([f"item {i % 5000}" for i in range(rows)]),
    })


def bench_precell(rows: int, repeat: int) -> dict:
    """Per cell: the seconds of each run with auto mode off and on (same shell, alternating)."""
    from IPython.core.interactiveshell import InteractiveShell

    from jupyter_fixloop.config import FixLoop
    from jupyter_fixloop.notebook.auto import AutoFix

    shell = InteractiveShell.instance()
    auto = AutoFix(shell, FixLoop(parent=shell))
    hooks = _timed_hooks(shell, auto)
    try:
        shell.user_ns["df"] = frame(rows)
        runs = {name: {"off": [], "on": [], "hooks": []} for name in CELLS}
        for i in range(repeat * 6):
            for name, cell in CELLS.items():
                for mode in ("off", "on") if i % 2 else ("on", "off"):  # a pair, back to back
                    auto.set_mode("rules" if mode == "on" else "off")
                    shell.user_ns["df"] = shell.user_ns["df"].copy()  # no copy-on-write reference left from before
                    hooks.clear()
                    started = time.perf_counter()
                    result = shell.run_cell(cell, store_history=True)
                    runs[name][mode].append(time.perf_counter() - started)
                    if mode == "on":
                        runs[name]["hooks"].append(sum(hooks))
                    if not result.success:
                        raise RuntimeError(f"the benchmark cell failed: {result.error_in_exec!r}")
        kept = auto.checkpoint
        return {"rows": rows, "runs": runs, "mb": shell.user_ns["df"].memory_usage(deep=True).sum() / 1e6,
                "left": kept is not None}
    finally:
        auto.close()
        InteractiveShell.clear_instance()


def _timed_hooks(shell, auto) -> list[float]:
    """Time auto mode's own hooks: the list gets the seconds of each call (cleared by the caller)."""
    spent: list[float] = []
    for event, name in (("pre_run_cell", "_pre_run_cell"), ("post_run_cell", "_post_run_cell")):
        hook = getattr(auto, name)

        def timed(arg, hook=hook):
            started = time.perf_counter()
            hook(arg)
            spent.append(time.perf_counter() - started)

        shell.events.unregister(event, hook)
        shell.events.register(event, timed)
    return spent


def report_precell(r: dict) -> int:
    """The rows of section 7 of `jupyter-fixloop speed` (its title is speed.py's); returns targets missed."""
    missed = 0
    for name, runs in r["runs"].items():
        off, on, hooks = (statistics.median(runs[k]) for k in ("off", "on", "hooks"))
        paired = statistics.median(b - a for a, b in zip(runs["off"], runs["on"])) / off
        ok = hooks / off <= TARGET
        missed += not ok
        print(f"   {name:17} cell p50 {off * 1e3:6.1f} ms off, {on * 1e3:6.1f} ms on ({len(runs['on'])} pairs); "
              f"hooks {hooks * 1e3:.2f} ms = {hooks / off:.1%}; pairs differ by {paired:+.1%} (median); "
              f"target <= 5%: {'met' if ok else 'MISSED'}")
    print("   target judged on the hooks' own time; the pairs' difference also holds the copies pandas makes for a "
          "kept copy, and the machine's noise (see the load average above)")
    if r["left"]:
        print("   (a checkpoint was left after a cell that ran: it should be dropped)")
        missed += 1
    return missed

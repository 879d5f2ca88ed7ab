"""The loop's named hooks on a real loop (the built-in engine, real sandbox kernels): each hook gets
its typed value, in order; a hook that raises never breaks the loop; the live header and batch
mode's plain progress read the same values."""

import io

import pytest

from jupyter_fixloop import LoopHooks, UsageError, fix
from jupyter_fixloop.batch.terminal import PlainProgress, RichProgress
from jupyter_fixloop.hooks import LoopEnd, ReceiptReady, RoundStart, RunStart
from jupyter_fixloop.notebook.progress import Progress
from jupyter_fixloop.receipt.text import headline

CELL = "total = sum(monthly_sale)\n"  # the built-in engine repairs the name: monthly_sales
NS = {"monthly_sales": [120, 80, 100]}
CHECKS = ["total == 300"]


@pytest.fixture(scope="module")
def recorded():
    seen = []
    hooks = LoopHooks(on_run_start=lambda e: seen.append(("run", e)),
                      on_round_start=lambda e: seen.append(("round", e)),
                      on_receipt=lambda e: seen.append(("receipt", e)), on_end=lambda e: seen.append(("end", e)))
    result = fix(CELL, checks=CHECKS, namespace=NS, max_rounds=3, hooks=hooks)
    return result, seen


def test_each_named_hook_gets_its_typed_value_in_order(recorded):
    result, seen = recorded
    assert result.status == "fixed", result.reason
    assert [name for name, _ in seen] == ["run", "receipt", "round", "run", "receipt", "end"]
    (_, run0), (_, first), (_, ask), (_, run1), (_, receipt), (_, end) = seen
    assert run0 == RunStart(round=0, max_rounds=3) and ask == RoundStart(round=1, max_rounds=3)
    assert run1 == RunStart(round=1, max_rounds=3)
    assert isinstance(first, ReceiptReady) and first.round == 0 and first.usage is None
    assert first.receipt is result.first and first.receipt.ename == "NameError"
    (only,) = result.rounds
    assert receipt == ReceiptReady(round=1, max_rounds=3, receipt=only.receipt, usage=only.usage) and receipt.receipt.ok
    assert end == LoopEnd(result=end.result) and end.result.status == "fixed" and end.result.patched == result.patched


def test_a_hook_that_raises_does_not_break_the_loop(recorded):
    calls = []

    def boom(event):
        calls.append(type(event).__name__)
        raise RuntimeError("the display went away")

    result = fix(CELL, checks=CHECKS, namespace=NS, max_rounds=3, hooks=LoopHooks.every(boom))
    assert result.status == "fixed", result.reason
    assert result.patched == recorded[0].patched
    assert calls == ["RunStart", "ReceiptReady", "RoundStart", "RunStart", "ReceiptReady", "LoopEnd"]


def test_the_live_header_and_batch_progress_read_the_recorded_values(recorded):
    result, seen = recorded
    progress = Progress("fixloop/builtin", 4)
    activities = []
    for _, event in seen:
        progress.update(event)
        activities.append(progress.activity)
    assert activities[:3] == ["original cell: running the cell in a sandbox",
                              f"original cell: {headline(result.first)}", "round 1 of 3: asking the model"]
    assert activities[-1] == "finishing" and progress.round == 1 and progress.max_rounds == 3
    stream = io.StringIO()
    plain = PlainProgress(stream)
    plain.cell(2, 1)
    hooks = plain.hooks()
    assert hooks.on_run_start is None and hooks.on_receipt is not None  # it only reads receipts
    for _, event in seen:
        if isinstance(event, ReceiptReady):
            hooks.on_receipt(event)
    said = headline(result.rounds[0].receipt)
    assert stream.getvalue() == f"  cell 2, round 1: ok: {said}\n"  # round 0 is not a line


def test_the_rich_bar_names_the_round_from_the_recorded_values(recorded):
    from rich.console import Console
    from rich.progress import Progress as Bar

    rich = RichProgress(Bar(console=Console(file=io.StringIO())), label="nb")
    rich.start(3)
    rich.cell(2, 0)
    hooks = rich.hooks()
    described = []
    for _, event in recorded[1][:3]:  # the original's run and receipt, round 1 asking
        hook = {RunStart: hooks.on_run_start, ReceiptReady: hooks.on_receipt,
                RoundStart: hooks.on_round_start}[type(event)]
        hook(event)
        described.append(rich.bar.tasks[0].description)
    rich.close()
    assert described == ["nb: cell 2: repairing, original cell, running in a sandbox",
                         "nb: cell 2: repairing, original cell, reading the receipt",
                         "nb: cell 2: repairing, round 1/3, asking the model"]
    assert hooks.on_end is None and hooks.on_model_writing is None


def test_anything_but_loophooks_is_refused_with_a_short_error():
    with pytest.raises(UsageError, match="hooks must be a LoopHooks"):
        fix("x = 1\n", hooks=lambda kind, info: None)
    with pytest.raises(TypeError, match=r"on_event=\.\.\.\) is gone: pass hooks=LoopHooks"):
        fix("x = 1\n", on_event=lambda kind, info: None)


class _Proxy:
    """A user object whose `__class__` cannot be read (a lazy proxy whose target failed to load)."""

    @property
    def __class__(self):
        raise RuntimeError("the proxy's target failed to load")


def test_on_end_is_called_once_when_the_loop_raises_before_its_first_run():
    ended = []
    with pytest.raises(RuntimeError, match="failed to load"):
        fix(CELL, checks=CHECKS, namespace={**NS, "lazy": _Proxy()}, max_rounds=1,
            hooks=LoopHooks(on_end=ended.append))
    assert ended == [LoopEnd(result=None)]

"""Running code in the user's kernel from inside a magic or a widget callback, and the one case where
that cannot work: top-level await while the kernel's event loop is already running (ipykernel)."""

from __future__ import annotations

import asyncio

AWAIT_NOTE = (
    "the cell uses top-level await, which a cell magic cannot run in your kernel (IPython runs it only as a cell)"
)


def awaits_in_running_loop(shell, code: str) -> bool:
    """True when `code` needs top-level await and the kernel's event loop is running (ipykernel):
    run from inside a magic or a widget callback, it would fail with "event loop is already running"."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    try:
        transformed = shell.transform_cell(code)
        return bool(shell.should_run_async(code, transformed_cell=transformed, preprocessing_exc_tuple=None))
    except Exception:  # an IPython without autoawait, or code it cannot transform
        return False

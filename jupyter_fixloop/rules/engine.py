"""The built-in offline engine (`fixloop/builtin`): answers a prompt the way a model does.

It reads what a real model gets (the code that was run and the typed receipt of what happened, as
the loop holds them, never read back out of a prompt), applies the first repair from
`repairs.REPAIRS` that fits, and answers with a fenced code block. The loop cannot tell it from a
remote model, so the whole loop is exercised with no key and no network; it is called in-process
(model.py), without litellm.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..receipt.text import run_headline
from ..receipt.values import Receipt
from . import repairs
from .registry import DECLARED

GUESS_WORDS = "A guess (only a check can tell it is the one meant): "


def answer_run(code: str | None, receipt: Receipt | None, modules: Mapping[str, str] | None = None) -> str:
    """The reply for the last run as the loop holds it: the code it ran, its typed receipt and the
    names its namespace binds to modules (`{"pd": "pandas"}`). Neither is read back out of the
    prompt, whose receipt part is the sandbox's to write (an exception message holding a fenced
    block and a heading must not become the code repaired)."""
    if code is None or receipt is None:
        return (
            "The built-in engine repairs cells from their receipt; it cannot write code from an "
            "instruction. Configure a model (e.g. --model openai/gpt-4o-mini) for generation."
        )
    repair, fixed, doubt = repairs.propose(code if code.endswith("\n") else code + "\n", receipt, modules)
    if repair is None and doubt:
        return f"The built-in engine cannot tell how to fix this: {doubt}"
    if repair is None:
        return f"The built-in engine has no repair for: {run_headline(receipt)}"
    said = repair_words(repair)
    if repairs.KIND.get(repair) == repairs.GUESS:  # no guess without saying so
        said = f"{GUESS_WORDS}{said}"
    return f"{said}\n\n```python\n{fixed.rstrip()}\n```"


def repair_words(repair) -> str:
    """What a repair does, as it declared itself (registry.py: its docstring's first sentence, whole)."""
    return DECLARED[repair].words

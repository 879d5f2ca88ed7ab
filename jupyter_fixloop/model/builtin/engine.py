"""The built-in offline engine (`fixloop/builtin`): answers a prompt the way a model does.

It reads what a real model gets (the code that was run and the receipt of what happened: in the
loop the typed receipt, from a prompt its text), applies the first repair from `repairs.REPAIRS`
that fits, and answers with a fenced code block. The loop cannot tell it from a remote model, so
the whole loop is exercised with no key and no network; it is called in-process (model.py), without
litellm.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...receipt.text import run_headline
from ...receipt.values import Receipt
from ..prompt import CODE_HEADING, ORIGINAL_HEADING, RECEIPT_HEADING, SAME_AS_ORIGINAL
from . import repairs

BLOCK = re.compile(r"```python\n(.*?)\n```", re.DOTALL)
GUESS_WORDS = "A guess (only a check can tell it is the one meant): "


def answer_run(code: str | None, receipt: Receipt | None, modules: Mapping[str, str] | None = None) -> str:
    """The reply for the last run as the loop holds it: the code it ran, its typed receipt and the
    names its namespace binds to modules (`{"pd": "pandas"}`). Neither is read back out of the
    prompt, whose receipt part is the sandbox's to write (an exception message holding a fenced
    block and a heading must not become the code repaired)."""
    if code is None:
        return (
            "The built-in engine repairs cells from their receipt; it cannot write code from an "
            "instruction. Configure a model (e.g. --model openai/gpt-4o-mini) for generation."
        )
    return _repaired(code if code.endswith("\n") else code + "\n", receipt or "", modules)


def answer(prompt: str) -> str:
    """The reply text for one prompt (the bench's cases, written by us): a fenced cell, or a sentence
    saying why there is none. The loop calls `answer_run` instead: a prompt's receipt is untrusted text."""
    heading = CODE_HEADING if CODE_HEADING in prompt else ORIGINAL_HEADING
    if heading not in prompt or RECEIPT_HEADING not in prompt:
        return (
            "The built-in engine repairs cells from their receipt; it cannot write code from an "
            "instruction. Configure a model (e.g. --model openai/gpt-4o-mini) for generation."
        )
    code_part = prompt.rsplit(heading, 1)[1]  # the latest code that was run
    match = BLOCK.search(code_part)
    if not match:
        return "The built-in engine found no code in the prompt."
    code = match.group(1) + "\n"
    receipt_text = prompt.rsplit(RECEIPT_HEADING, 1)[1].split("\n### ", 1)[0].strip()
    if SAME_AS_ORIGINAL in receipt_text:  # the lines a later run shares with the original run are above, once
        original = prompt.split(RECEIPT_HEADING, 1)[1].split("\n### ", 1)[0].strip()
        receipt_text = receipt_text.replace(SAME_AS_ORIGINAL, "\n".join(original.splitlines()[1:]))
    return _repaired(code, receipt_text)


def _repaired(code: str, receipt: Receipt | str, modules: Mapping[str, str] | None = None) -> str:
    repair, fixed, doubt = repairs.propose(code, receipt, modules)
    if repair is None and doubt:
        return f"The built-in engine cannot tell how to fix this: {doubt}"
    if repair is None:
        headline = run_headline(receipt) if isinstance(receipt, Receipt) else (receipt.splitlines() or ["this"])[0]
        return f"The built-in engine has no repair for: {headline}"
    said = repair.__doc__.strip().splitlines()[0]
    if repairs.KIND.get(repair) == repairs.GUESS:  # no guess without saying so
        said = f"{GUESS_WORDS}{said}"
    return f"{said}\n\n```python\n{fixed.rstrip()}\n```"

"""The built-in offline engine, registered with litellm as the custom provider `fixloop`.

It reads the same prompt a real model gets (the code that was run and the receipt of what
happened), applies the first repair from `repairs.REPAIRS` that fits, and answers the way a
model does: a fenced code block. The loop cannot tell it from a remote model, so the whole
loop is exercised with no key and no network.
"""

from __future__ import annotations

import re
import time

from litellm import ModelResponse
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import Usage as LitellmUsage

from . import repairs
from ..engine import CODE_HEADING, RECEIPT_HEADING

BLOCK = re.compile(r"```python\n(.*?)\n```", re.DOTALL)


def answer(prompt: str) -> str:
    """The reply text for one prompt: a fenced cell, or a sentence saying why there is none."""
    if CODE_HEADING not in prompt or RECEIPT_HEADING not in prompt:
        return (
            "The built-in engine repairs cells from their receipt; it cannot write code from an "
            "instruction. Configure a model (e.g. --model openai/gpt-4o-mini) for generation."
        )
    code_part = prompt.split(CODE_HEADING, 1)[1]
    match = BLOCK.search(code_part)
    if not match:
        return "The built-in engine found no code in the prompt."
    code = match.group(1) + "\n"
    receipt_text = prompt.split(RECEIPT_HEADING, 1)[1].split("\n### ", 1)[0].strip()
    repair, fixed = repairs.first_repair(code, receipt_text)
    if repair is None:
        return f"The built-in engine has no repair for: {receipt_text.splitlines()[0] if receipt_text else 'this'}"
    return f"{repair.__doc__.strip().splitlines()[0]}\n\n```python\n{fixed.rstrip()}\n```"


class BuiltinEngine(CustomLLM):
    """litellm custom provider: `model="fixloop/builtin"`."""

    def completion(self, model, messages, api_base, custom_prompt_dict, model_response, *args, **kwargs):
        return self._respond(model, messages)

    async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, *args, **kwargs):
        return self._respond(model, messages)

    def _respond(self, model: str, messages: list[dict]) -> ModelResponse:
        prompt = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
        text = answer(prompt)
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4
        completion_tokens = len(text) // 4
        return ModelResponse(
            model=model,
            created=int(time.time()),
            choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            usage=LitellmUsage(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                total_tokens=prompt_tokens + completion_tokens,
            ),
        )

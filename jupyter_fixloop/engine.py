"""Models: the prompt, the call through litellm, and the code taken out of the reply.

Every model call goes through `litellm.acompletion`, including the built-in offline engine, which is
registered with litellm as the custom provider `fixloop` (model `fixloop/builtin`). litellm is
imported on first use only: it takes seconds to import.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import sys
import threading
import time
from dataclasses import dataclass

from .errors import ModelError
from .receipt import Receipt
from .result import Usage

BUILTIN = "fixloop/builtin"

SYSTEM_PROMPT = """\
You repair one Jupyter notebook cell. The cell was run in a sandbox kernel that holds the user's
live variables; what happened is in the receipt. Fix the cause of the failure so that the cell runs
and every check passes. Keep the cell's intent, its assert statements and the names it defines.
Never silence an error with try/except, never hard-code the value a check expects.
Reply with the complete corrected cell in exactly one ```python fenced block, and nothing else
after it. Do not include the %%fixloop line."""

GENERATE_PROMPT = """\
You write or modify one Jupyter notebook cell, following the user's instruction. The cell runs in a
kernel that already holds the user's variables. Reply with the complete cell in exactly one
```python fenced block."""

CODE_HEADING = "### Code that was run"
RECEIPT_HEADING = "### What happened"


@dataclass(frozen=True)
class Reply:
    """A model's answer: its raw text, the code in it (None when there is none), and its cost."""

    text: str
    code: str | None
    usage: Usage


# ---------------------------------------------------------------- the prompt


def build_messages(
    original: str,
    *,
    instruction: str | None = None,
    checks: tuple[str, ...] = (),
    history: list[tuple[str, Receipt]] = (),
    hint: str | None = None,
) -> list[dict]:
    """The conversation for one round: the cell, what the latest candidate did, earlier rounds in one line each.

    `history` is the list of (code that was run, its receipt), oldest first.
    """
    parts = []
    generating = bool(instruction) and not history
    if instruction:
        parts.append(f"Instruction: {instruction}")
    if history:
        latest_code, latest = history[-1]
        if latest_code != original:
            parts.append(f"### Original cell\n```python\n{original}\n```")
        parts.append(f"{CODE_HEADING}\n```python\n{latest_code}\n```")
        parts.append(f"{RECEIPT_HEADING}\n{latest.text}")
        if len(history) > 1:
            earlier = "\n".join(f"- round {i}: {r.headline}" for i, (_, r) in enumerate(history[:-1]))
            parts.append(f"### Earlier attempts (summarized)\n{earlier}")
    elif original.strip():
        parts.append(f"### Current cell\n```python\n{original}\n```")
    if checks:
        parts.append("### Checks that must pass after the cell runs\n" + "\n".join(f"- {c}" for c in checks))
    if hint:
        parts.append(f"### Hint from the user\n{hint}")
    parts.append(f"### Environment\n{environment(original)}")
    parts.append("Reply with the complete cell in one ```python block.")
    system = GENERATE_PROMPT if generating else SYSTEM_PROMPT
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def environment(source: str) -> str:
    """Python and the versions of the libraries the cell imports (APIs differ between versions)."""
    found = [f"Python {sys.version.split()[0]}"]
    for top in sorted(_imported_modules(source) | _alias_modules(source)):
        try:
            found.append(f"{top} {importlib.metadata.version(top)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(found)


ALIASES = {"pd": "pandas", "np": "numpy", "plt": "matplotlib", "sns": "seaborn", "sk": "sklearn"}


def _alias_modules(source: str) -> set[str]:
    words = set(re.findall(r"\b(pd|np|plt|sns)\.", source))
    return {ALIASES[w] for w in words}


def _imported_modules(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.add(node.module.split(".")[0])
    return mods


# ---------------------------------------------------------------- code out of the reply

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
PYTHON_TAGS = {"", "python", "py", "python3", "ipython", "ipython3", "jupyter"}


def extract_code(text: str) -> str | None:
    """The cell in a reply: the longest ```python block; bare code if the whole reply is Python.

    A reply whose only blocks are another language, or prose, has no code.
    """
    if not text or not text.strip():
        return None
    blocks = FENCE.findall(text)
    if blocks:
        python = [body for lang, body in blocks if lang.lower() in PYTHON_TAGS]
        if not python:
            return None
        code = max(python, key=len)
    else:
        code = text if _looks_like_code(text) else None
    return _clean(code) if code is not None else None


def _looks_like_code(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    # a sentence that happens to parse (`Sure`) is a lone Name expression
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, (ast.Name, ast.Constant))) for n in tree.body)


def _clean(code: str) -> str | None:
    lines = code.strip("\n").splitlines()
    while lines and lines[0].lstrip().startswith("%%fixloop"):
        lines.pop(0)
    lines = [line for line in lines if line.strip() not in ("```", "```python")]
    cleaned = "\n".join(line.rstrip() for line in lines).strip("\n")
    return cleaned + "\n" if cleaned.strip() else None


# ---------------------------------------------------------------- calling the model


_import_lock = threading.Lock()


def litellm():
    """Import litellm (once), offline-safe, with the built-in engine registered.

    Serialized: litellm builds pydantic models lazily, and two threads importing it at once (a
    warm-up thread and the loop) can see a half-built type."""
    with _import_lock:
        return _import_litellm()


def _import_litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as _litellm

    from .builtin.engine import BuiltinEngine

    if not any(p.get("provider") == "fixloop" for p in _litellm.custom_provider_map):
        _litellm.custom_provider_map = [
            *_litellm.custom_provider_map,
            {"provider": "fixloop", "custom_handler": BuiltinEngine()},
        ]
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
    _litellm.suppress_debug_info = True
    # litellm's background logging worker reports its own internal hiccups on stderr, inside the
    # user's notebook; model errors reach the user through ModelError instead.
    import logging

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return _litellm


async def propose(
    messages: list[dict],
    model: str,
    *,
    timeout: float = 120.0,
    max_tokens: int | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    num_retries: int = 2,
) -> Reply:
    """One model call. Transport and provider errors become a one-line `ModelError`."""
    lib = litellm()
    # retries are litellm's (retry_policy), never also the provider SDK's (max_retries=0)
    kwargs = dict(model=model, messages=messages, timeout=timeout, num_retries=num_retries,
                  retry_policy=retry_policy(num_retries), max_retries=0)
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    started = time.perf_counter()
    try:
        response = await lib.acompletion(**kwargs)
    except Exception as exc:
        raise ModelError(describe_model_error(exc, model)) from exc
    seconds = time.perf_counter() - started
    text = (response.choices[0].message.content or "") if response.choices else ""
    usage = getattr(response, "usage", None)
    prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
    completion_tokens = getattr(usage, "completion_tokens", 0) or 0
    cost = 0.0
    if not model.startswith("fixloop/"):
        try:
            cost = float(lib.completion_cost(completion_response=response) or 0.0)
        except Exception:
            cost = 0.0  # a model litellm has no price for (local, proxy): tokens are still counted
    return Reply(text=text, code=extract_code(text), usage=Usage(prompt_tokens, completion_tokens, cost, seconds))


def retry_policy(retries: int) -> dict:
    """litellm's per-error retry counts: retry what can pass on its own (rate limits, server errors,
    a dropped connection, one timeout), never what cannot (a bad key, a wrong model, a bad request).
    litellm backs off exponentially on 429 and retries server errors at once."""
    return {
        "AuthenticationErrorRetries": 0, "BadRequestErrorRetries": 0, "NotFoundErrorRetries": 0,
        "ContentPolicyViolationErrorRetries": 0, "RateLimitErrorRetries": retries,
        "InternalServerErrorRetries": retries, "ServiceUnavailableErrorRetries": retries,
        "TimeoutErrorRetries": min(retries, 1), "DefaultRetries": min(retries, 1),
    }


def describe_model_error(exc: Exception, model: str) -> str:
    """One line: which model, what went wrong, and what to do about it."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    text = re.sub(r"^(litellm\.)?\w+:\s*", "", text)
    text = re.sub(r"^\w+Error:\s*", "", text)
    text = re.sub(r"\s*LiteLLM Retried: \d+ times?.*$", "", text)
    if len(text) > 200:
        text = text[:197] + "..."
    hints = {
        401: "check the API key for this provider",
        403: "the key is not allowed to use this model",
        404: "check the model name",
        429: "rate limited or out of quota; try again later or set a smaller --max-rounds",
    }
    hint = hints.get(status, "")
    if status == 429:
        wait = _retry_after(exc)
        if wait:
            hint = f"rate limited; the server asks to wait {wait} s before trying again"
    if "Timeout" in name or status == 408:
        hint = "the model did not answer in time; a larger --timeout or a faster model may help"
    elif "Connection" in name or "connect" in text.lower():
        hint = "the model server could not be reached; check api_base / network, or use --model fixloop/builtin"
    elif "Missing credentials" in text or "api_key" in text:
        text, hint = "no API key for this provider", "set its key in the environment (e.g. OPENAI_API_KEY) or use --model fixloop/builtin"
    elif "LLM Provider NOT provided" in text:
        text, hint = "litellm does not know this provider", ("model names are provider/model, e.g. "
                                                             "openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama/llama3")
    elif "Expecting value" in text or "JSONDecodeError" in text:
        text, hint = "the server's reply was not valid JSON (empty or cut off)", "check api_base points at the model API"
    return f"model {model}: {name}{f' {status}' if status else ''}: {text}" + (f" ({hint})" if hint else "")


def _retry_after(exc: Exception) -> str:
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        return str(headers.get("retry-after") or "")
    except Exception:
        return ""

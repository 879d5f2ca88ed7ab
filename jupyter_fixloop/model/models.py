"""Calling a model: the built-in offline engine directly, any other model through litellm.

Both are a `Model` (as simonw/llm's models.py): `get_model(name)` returns a `BuiltinModel` or a
`LiteLLMModel`, and callers ask it what they need to know (is it deterministic, does the rules'
repair run beside it, who wrote its code: rules or a model) instead of comparing its name.

This is litellm's only home in the package; it is imported on first use of a litellm model (it
takes seconds), never for the built-in engine.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from ..errors import ModelError, UsageError
from ..options import BUILTIN
from ..receipt.values import Receipt, no_code, no_repair
from ..result import MODEL, RULES, Usage
from .prompt import cut_code, extract_code
from .scrub import scrub


@dataclass(frozen=True)
class Reply:
    """A model's answer: its raw text, the code in it (None when there is none), and its cost."""

    text: str
    code: str | None
    usage: Usage
    guess: str = ""  # the built-in engine's repair is a guess: what it did, in its words
    cut: int = 0  # the reply was stopped at this many tokens (`reply_tokens`); 0: it ended by itself
    choice: int = 0  # its place among one request's choices (n > 1): 0 carries the request's usage, or is a request


Progress = Callable[[int, float], None]  # (tokens written, tokens per second) while a reply streams


@dataclass(frozen=True)
class LastRun:
    """What the built-in engine repairs, as the loop holds it: the code that last ran (None before any),
    its typed receipt, and the names the namespace binds to modules (`{"pd": "pandas"}`: a repair
    writing `pd.` then adds no import)."""

    code: str | None
    receipt: Receipt | None
    modules: Mapping[str, str] = field(default_factory=dict)


class Model(Protocol):
    """One model the loop can ask. `propose` answers a prompt; the flags say how the loop treats it."""

    name: str
    deterministic: bool  # the same prompt gets the same answer: asking again cannot help
    rules_beside: bool  # the built-in engine's rule repair runs beside it each round
    author: str  # who wrote the lines of its answers: "rules" (templated from the code it repairs) or "model"

    async def propose(self, messages: list[dict], last: LastRun | None = None, *, timeout: float,
                      max_tokens: int | None = None, api_base: str | None = None, api_key: str | None = None,
                      num_retries: int = 2, temperature: float | None = None, seed: int | None = None,
                      stop: tuple[str, ...] = (), on_progress: Progress | None = None,
                      withhold: tuple[str, ...] = ()) -> Reply: ...

    async def propose_n(self, messages: list[dict], n: int, last: LastRun | None = None,
                        **call) -> tuple[Reply, ...]: ...

    def token_counter(self) -> Callable[[str], int]: ...

    def check(self, api_base: str | None = None) -> None: ...

    def warm_up(self) -> None: ...

    def without_code(self, text: str, cut: int = 0) -> Receipt: ...


@dataclass(frozen=True)
class BuiltinModel:
    """The offline engine (`fixloop/builtin`): answers in-process, the way a model does; no model is
    called, so no tokens, no key, no network, and no litellm."""

    name: str = BUILTIN
    deterministic = True
    rules_beside = False  # it is those rules
    author = RULES

    async def propose(self, messages: list[dict], last: LastRun | None = None, **_call) -> Reply:
        """With `last` (the code that last ran and its typed receipt, as the loop holds them) it repairs
        that code, never code read out of the prompt; without it, it has nothing to repair and says so."""
        return _builtin(messages, last)

    async def propose_n(self, messages: list[dict], n: int, last: LastRun | None = None, **_call) -> tuple[Reply, ...]:
        """Its one answer (it is deterministic: n of them would be n copies)."""
        return (_builtin(messages, last),)

    def token_counter(self) -> Callable[[str], int]:
        """litellm's default tokenizer, cl100k, read with tiktoken alone: the built-in engine must not wait
        seconds for litellm's import (a third of a second, and only for a receipt longer than its budget in bytes)."""
        return _cl100k_count

    def check(self, api_base: str | None = None) -> None:
        """Nothing to check: the built-in engine needs no key and no server."""

    def warm_up(self) -> None:
        """Nothing to import ahead."""

    def without_code(self, text: str, cut: int = 0) -> Receipt:
        """Its answer had no code: not a model's reply (no call was made), so `no_repair`, not `no_code`."""
        return no_repair(text)


@dataclass(frozen=True)
class LiteLLMModel:
    """Any model litellm can call (`provider/model`)."""

    name: str
    deterministic = False
    rules_beside = True
    author = MODEL  # a model wrote it: a person accepts it first (batch mode's --accept-unreviewed)

    async def propose(self, messages: list[dict], last: LastRun | None = None, **call) -> Reply:
        """`last` is not read: a model reads the prompt."""
        return (await _litellm_call(messages, self.name, **call))[0]

    async def propose_n(self, messages: list[dict], n: int, last: LastRun | None = None, **call) -> tuple[Reply, ...]:
        """n answers asked as one request (OpenAI's `n`; llama-server's `n_cmpl`, up to its slots): the prompt is
        read once, and the server samples each choice on its own (llama-server gives choice i the seed plus i).
        Fewer come back where the server returns fewer choices than asked; the caller asks the rest one by one."""
        return await _litellm_call(messages, self.name, n=n, **call)

    def token_counter(self) -> Callable[[str], int]:
        """Its tokenizer through litellm."""
        return lambda text: count_tokens(text, self.name)

    def check(self, api_base: str | None = None) -> None:
        _check_litellm_model(self.name, api_base)

    def warm_up(self) -> None:
        """Import litellm now (it takes seconds), so the first call waits less; an error here is reported
        by that first call."""
        try:
            litellm()
        except Exception:
            pass

    def without_code(self, text: str, cut: int = 0) -> Receipt:
        return no_code(text, cut)


BUILTIN_MODEL = BuiltinModel()


def get_model(name: str) -> Model:
    """The `Model` a model string names: the built-in engine for `fixloop/builtin`, litellm otherwise."""
    return BUILTIN_MODEL if name == BUILTIN else LiteLLMModel(name)


# ---------------------------------------------------------------- calling the model


_import_lock = threading.Lock()


def litellm():
    """Import litellm (once), offline-safe.

    Serialized: litellm builds pydantic models lazily, and two threads importing it at once (a
    warm-up thread and the loop) can see a half-built type."""
    with _import_lock:
        return _import_litellm()


def _import_litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as _litellm

    _litellm.suppress_debug_info = True
    # litellm's background logging worker reports its own internal hiccups on stderr, inside the
    # user's notebook; model errors reach the user through ModelError instead.
    import logging

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # a call cancelled (a sample passed, the stop button) while litellm builds its request in a worker
    # thread leaves the coroutine it built unawaited: nothing is lost, and the user need not read about it
    import warnings

    warnings.filterwarnings("ignore", message=r"coroutine '\w+\.acompletion' was never awaited",
                            category=RuntimeWarning)
    return _litellm


async def propose(messages: list[dict], model: str, *, run: LastRun | None = None, **call) -> Reply:
    """One call of the model named `model` (see `get_model`): `run` is its `last`; `call` the keywords of
    `Model.propose` (timeout, max_tokens, api_base, api_key, num_retries, temperature, seed, stop, on_progress,
    withhold)."""
    return await get_model(model).propose(messages, run, **call)


async def _litellm_call(
    messages: list[dict],
    model: str,
    *,
    timeout: float,  # LoopOptions.model_timeout: the one default
    max_tokens: int | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    num_retries: int = 2,
    temperature: float | None = None,
    seed: int | None = None,
    stop: tuple[str, ...] = (),
    on_progress: Progress | None = None,
    withhold: tuple[str, ...] = (),
    n: int = 1,
) -> tuple[Reply, ...]:
    """One litellm call, its messages scrubbed first (model/scrub.py: secrets, and the texts in `withhold`, become
    placeholders the reply gets back). Transport and provider errors become a one-line `ModelError`.

    `temperature`: None leaves the provider's default; a model that takes no temperature (some
    reasoning models) gets none (litellm's drop_params); so does `seed` (None or -1: none sent). `stop`: where the
    reply may end early. `n` > 1: that many choices asked in the one request (not streamed), a reply for each the
    server returned, in their order (`_shared`: the request's usage said once).
    `on_progress(tokens, tokens_per_second)`: the reply is streamed, and this is called as it is
    written (a few times a second at most)."""
    lib = litellm()
    scrubbed = scrub(messages, withhold)
    # retries are litellm's (retry_policy), never also the provider SDK's (max_retries=0)
    kwargs = dict(model=model, messages=scrubbed.messages, timeout=timeout, num_retries=num_retries,
                  retry_policy=retry_policy(num_retries), max_retries=0, drop_params=True)
    given = dict(temperature=temperature, seed=seed if seed is not None and seed >= 0 else None,
                 stop=list(stop) or None, max_tokens=max_tokens or None, api_base=api_base, api_key=api_key,
                 n=n if n > 1 else None)
    kwargs.update({k: v for k, v in given.items() if v is not None and v != ""})
    started = time.perf_counter()
    try:
        if on_progress is None or n > 1:
            response = await lib.acompletion(**kwargs)
        else:
            response = await _streamed(lib, kwargs, on_progress)
    except Exception as exc:
        raise ModelError(describe_model_error(exc, model)) from exc
    seconds = time.perf_counter() - started
    try:
        cost = float(lib.completion_cost(completion_response=response) or 0.0)
    except Exception:
        cost = 0.0  # a model litellm has no price for (local, proxy): tokens are still counted
    usage = _usage(response, cost, seconds)
    choices = sorted(response.choices or (), key=lambda c: getattr(c, "index", 0) or 0)[:max(n, 1)]
    if not choices:
        return (Reply(text=scrubbed.restore(""), code=extract_code(scrubbed.restore("")), usage=usage),)
    texts = [scrubbed.restore(c.message.content or "") for c in choices]
    first_only = isinstance(getattr(response, "timings", None), dict)  # llama-server: its first result's usage
    usages = _shared(usage, texts, model, first_only) if len(texts) > 1 else [usage]
    return tuple(_reply(text, c.finish_reason == "length", u, max_tokens, i)
                 for i, (text, c, u) in enumerate(zip(texts, choices, usages)))


def _reply(text: str, length: bool, usage: Usage, max_tokens: int | None, choice: int = 0) -> Reply:
    """A choice as a reply: its code (what there is of it when the reply was cut at `max_tokens`)."""
    return Reply(text=text, code=cut_code(text) if length else extract_code(text), usage=usage,
                 cut=(max_tokens or usage.completion_tokens) if length else 0, choice=choice)


def _shared(usage: Usage, texts: list[str], model: str, first_only: bool) -> list[Usage]:
    """One request's usage over its choices, counted once: the first choice carries the prompt (read once), the cost
    and the request's seconds; every other choice its own reply tokens, and nothing else. `first_only`: the server
    counted the first choice's reply tokens alone (llama-server returns its first result's usage, said by its
    `timings`); the others' are estimated from their text (litellm's count, in the first choice's tokens per counted
    token). Otherwise the server's count of all the replies is kept, split in proportion to the texts' counts."""
    counted = [max(1, count_tokens(text, model)) if text else 0 for text in texts]
    total = usage.completion_tokens
    if first_only:
        per = total / counted[0] if counted[0] and total else 1.0
        others = [round(c * per) for c in counted[1:]]
        return [usage, *(Usage(completion_tokens=c) for c in others)]
    others = [round(total * c / sum(counted)) if sum(counted) else 0 for c in counted[1:]]
    return [replace(usage, completion_tokens=total - sum(others)), *(Usage(completion_tokens=c) for c in others)]


def _usage(response, cost: float, seconds: float) -> Usage:
    """The call's usage as the server gave it: its tokens, those of the prompt it read from its prompt cache
    (`usage.prompt_tokens_details.cached_tokens`), and its seconds reading the prompt and writing the reply
    (llama-server's `timings.prompt_ms`, `timings.predicted_ms`, which litellm keeps on the response); 0 for what
    it does not say."""
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    timings = getattr(response, "timings", None)
    timings = timings if isinstance(timings, dict) else {}
    return Usage(_count(getattr(usage, "prompt_tokens", 0)), _count(getattr(usage, "completion_tokens", 0)), cost,
                 seconds, cached_tokens=_count(getattr(details, "cached_tokens", 0)),
                 prompt_seconds=_seconds(timings.get("prompt_ms")), reply_seconds=_seconds(timings.get("predicted_ms")))


def _seconds(ms) -> float:
    return ms / 1000 if isinstance(ms, (int, float)) and ms > 0 else 0.0


def _count(value) -> int:
    return value if isinstance(value, int) and value > 0 else 0


PROGRESS_EVERY = 0.25  # seconds between two progress calls while a reply streams


async def _streamed(lib, kwargs: dict, on_progress: Callable[[int, float], None]):
    """The reply streamed chunk by chunk (one token each on llama-server and most providers), put
    back together as one response (with usage: the server's when it sends it, else litellm's count)."""
    stream = await lib.acompletion(**kwargs, stream=True, stream_options={"include_usage": True})
    chunks, tokens, first, last = [], 0, None, 0.0
    async for chunk in stream:
        chunks.append(chunk)
        if not chunk.choices or not getattr(chunk.choices[0].delta, "content", None):
            continue
        tokens += 1
        now = time.perf_counter()
        first = first or now
        if now - last >= PROGRESS_EVERY:
            last = now
            on_progress(tokens, (tokens - 1) / (now - first) if now > first else 0.0)
    if tokens:
        now = time.perf_counter()
        on_progress(tokens, (tokens - 1) / (now - first) if first and now > first else 0.0)
    return lib.stream_chunk_builder(chunks, messages=kwargs["messages"])


def _builtin(messages: list[dict], last: LastRun | None = None) -> Reply:
    """The offline engine's answer (see `BuiltinModel.propose`)."""
    from ..rules.engine import GUESS_WORDS, answer_run

    started = time.perf_counter()
    text = answer_run(last.code, last.receipt, last.modules) if last is not None else answer_run(None, None)
    usage = Usage(0, 0, 0.0, time.perf_counter() - started)
    guess = text[len(GUESS_WORDS):].splitlines()[0] if text.startswith(GUESS_WORDS) else ""
    return Reply(text=text, code=extract_code(text), usage=usage, guess=guess)


def token_counter(model: str):
    """How receipts for the model named `model` count tokens (see `Model.token_counter`)."""
    return get_model(model).token_counter()


_cl100k: list = []


def _cl100k_count(text: str) -> int:
    if not _cl100k:
        with _import_lock:
            if not _cl100k:
                _cl100k.append(_cl100k_encoding())
    return len(_cl100k[0].encode(text, disallowed_special=()))


def _cl100k_encoding():
    """cl100k from the copy litellm ships (litellm sets the same cache dir for tiktoken): no network."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin:
        bundled = os.path.join(os.path.dirname(spec.origin), "litellm_core_utils", "tokenizers")
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", bundled)
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str, model: str = "") -> int:
    """Tokens of `text` by litellm's counter (the model's tokenizer when litellm knows it)."""
    lib = litellm()
    try:
        return int(lib.token_counter(model=model, text=text)) if model else int(lib.token_counter(text=text))
    except Exception:  # a model name litellm cannot map to a tokenizer
        return int(lib.token_counter(text=text))


EXAMPLES = "openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder, fixloop/builtin"


def check_model(model: str, api_base: str | None = None) -> None:
    """Reject a model string no provider can serve, or an `api_base` where no server answers,
    before anything runs (one line, with examples); the built-in engine needs nothing."""
    get_model(model).check(api_base)


def _check_litellm_model(model: str, api_base: str | None = None) -> None:
    """`check_model` for a litellm model: needs litellm's provider table, so it imports litellm."""
    check_server(api_base, model)
    if "/" not in model and not model.strip():
        raise UsageError(f"no model given; examples: {EXAMPLES}")
    if known_to_litellm(model) is False:  # refused from litellm's own tables, without importing it (seconds)
        raise _unknown(model)
    lib = litellm()
    try:
        lib.get_llm_provider(model)
    except Exception:
        raise _unknown(model) from None
    if missing := missing_key(model):
        local = f" (for a local server any value does: {missing[0]}=x)" if api_base else ""
        raise UsageError(f"model {model} needs {' or '.join(missing)} in the environment{local}; set it, "
                         "or use --model fixloop/builtin (no key, no network)")


def _unknown(model: str) -> UsageError:
    return UsageError(f"unknown model or provider {model!r}: model names are provider/model, e.g. {EXAMPLES}")


def known_to_litellm(model: str) -> bool | None:
    """Whether litellm knows `model`'s provider, read from the tables litellm ships (its providers, the
    OpenAI-compatible ones, its model list) without importing litellm, which takes seconds: True (the
    prefix is a provider, or a bare name is in its model list), False (neither), None (the tables are not
    there to read: ask litellm itself)."""
    known = _litellm_names()
    if known is None:
        return None
    providers, models = known
    prefix = model.split("/", 1)[0] if "/" in model else ""
    return prefix in providers or model in models or (not prefix and model.split(":", 1)[0] in models)


@functools.cache
def _litellm_names() -> tuple[frozenset[str], frozenset[str]] | None:
    """(provider prefixes, model names) from litellm's own data files; None when they cannot be read."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    root = os.path.dirname(spec.origin)
    try:
        with open(os.path.join(root, "types", "utils.py"), encoding="utf-8") as f:
            enum = f.read().split("class LlmProviders(", 1)[1].split("\nclass ", 1)[0]
        providers = set(re.findall(r'^\s+\w+ = "([^"]+)"', enum, re.MULTILINE))
        with open(os.path.join(root, "provider_endpoints_support_backup.json"), encoding="utf-8") as f:
            providers |= set(json.load(f)["providers"])
        with open(os.path.join(root, "llms", "openai_like", "providers.json"), encoding="utf-8") as f:
            providers |= set(json.load(f))
        with open(os.path.join(root, "model_prices_and_context_window_backup.json"), encoding="utf-8") as f:
            prices = json.load(f)
    except (OSError, ValueError, KeyError, IndexError):
        return None
    providers |= {v["litellm_provider"] for v in prices.values() if isinstance(v, dict) and "litellm_provider" in v}
    if len(providers) < 20:  # not the tables this reading expects: ask litellm itself
        return None
    return frozenset(p.split("/", 1)[0] for p in providers), frozenset(prices)


def missing_key(model: str) -> list[str]:
    """The API key variables `model`'s provider reads when none of them is set (litellm's
    `validate_environment` knows them), else []. Only `*_API_KEY` variables count: a provider that can
    find its credentials elsewhere (AWS profiles, Google's default credentials, Azure AD) is not refused,
    and a missing `OLLAMA_API_BASE` has a default."""
    try:
        found = litellm().validate_environment(model)
    except Exception:
        return []
    missing = list(found.get("missing_keys") or [])
    if found.get("keys_in_environment") or not missing or not all(k.endswith("_API_KEY") for k in missing):
        return []
    return missing


_reachable: set[str] = set()


def check_server(api_base: str | None, model: str = "", timeout: float = 3.0) -> None:
    """Whether a model server answers at `api_base`, asked once per process with one small request:
    `GET {api_base}/models`, the model list every OpenAI-compatible server serves (`/api/tags` for
    Ollama's own API). A 2xx answer in JSON is a model server; 401 and 403 are one that wants a key
    (the first call says which); any other answer is a web server that is not one (HTTP 404: a path
    without `/v1`). Nothing to check without an api_base (a provider's own endpoint). One line, before
    any round."""
    if not api_base or api_base in _reachable:
        return
    import urllib.error
    import urllib.request

    ollama = model.split("/", 1)[0] in ("ollama", "ollama_chat")
    url = api_base.rstrip("/") + ("/api/tags" if ollama else "/models")
    who = f"model {model}: " if model else ""
    wrong = f"is --api-base right ({'the server root, without /v1' if ollama else 'it usually ends in /v1'})?"
    try:
        request = urllib.request.Request(url, method="GET", headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = reply.read(1 << 20)
    except urllib.error.HTTPError as exc:
        exc.close()  # the error holds the answer's socket open until collected
        if exc.code not in (401, 403):
            raise UsageError(f"{who}not a model server at this URL (HTTP {exc.code} from GET {url}): {wrong}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UsageError(f"{who}the model server could not be reached at {api_base} ({reason}); start it "
                         "(`llama-server -m MODEL.gguf --port 8080`, `ollama serve`, `vllm serve MODEL`) or check "
                         "--api-base / c.FixLoop.api_base") from None
    else:
        try:
            json.loads(body)
        except ValueError:
            raise UsageError(f"{who}not a model server at this URL (GET {url} answered, but not in JSON): "
                             f"{wrong}") from None
    _reachable.add(api_base)


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
    # its first line whole (a line cut mid-word said less than it seemed to)
    hints = {
        401: "check the API key for this provider",
        403: "the key is not allowed to use this model",
        404: "check the model name, and that api_base is the API root (it usually ends in /v1)",
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
    elif "Missing credentials" in text or "api_key" in text:  # no server was asked: no status to show
        name, status = "no API key", None
        text, hint = (
            "the provider's key is not set",
            "set its key in the environment (e.g. OPENAI_API_KEY) or use --model fixloop/builtin",
        )
    elif "LLM Provider NOT provided" in text:
        text, hint = "litellm does not know this provider", f"model names are provider/model, e.g. {EXAMPLES}"
    elif "Expecting value" in text or "JSONDecodeError" in text:
        text, hint = (
            "the server's reply was not valid JSON (empty or cut off)",
            "check api_base points at the model API",
        )
    return f"model {model}: {name}{f' {status}' if status else ''}: {text}" + (f" ({hint})" if hint else "")


def _retry_after(exc: Exception) -> str:
    headers = (
        getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None) or {}
    )
    try:
        return str(headers.get("retry-after") or "")
    except Exception:
        return ""

"""Every knob of a loop in one frozen value, each default written once.

`config.FixLoop` (traitlets: `%config`, `jupyter_config.py`) produces a `LoopOptions`; the magic's
arguments, the CLI's flags and the widget's Retry override it with `dataclasses.replace`.
Stdlib only: the magic, batch mode and the benchmarks all import it.
"""

from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass, field, fields, replace

BUILTIN = "fixloop/builtin"  # the offline engine's model name
CONFINEMENTS = ("auto", "bwrap", "none")
SHARE_POLICIES = ("data", "named")
DATA_TO_MODEL = ("names", "samples")  # what of the user's values a model reads: names, types, shapes / and first values
AUTO_MODES = ("off", "rules", "model")  # `%fixloop auto`: no repair offered / the built-in rules' / also the model's


@dataclass(frozen=True)
class LoopOptions:
    """How one loop runs: which model, its bounds, and how its sandboxes are started."""

    model: str = ""  # litellm model string; "" is $FIXLOOP_MODEL, else the built-in engine
    api_base: str = ""  # an OpenAI-compatible server or litellm proxy
    max_rounds: int = 4  # model rounds before the loop gives up
    timeout: float = 30.0  # seconds one sandbox run may take
    following_time: float = 60.0  # seconds the notebook's later cells may take together after it (each `timeout`)
    model_timeout: float = 120.0  # seconds one model call may take
    max_tokens: int = 0  # model tokens for the whole loop (0: no bound)
    reply_tokens: int = 0  # most tokens one model reply may take (0: 1024 and half a token per character of the cell)
    budget: float = 0.0  # model cost in USD for the whole loop (0: no bound)
    wall_time: float = 600.0  # seconds for the whole loop, model and sandbox together (0: no bound)
    hint: str = ""  # extra guidance added to the prompt
    temperature: float = 0.2  # sampling temperature of each round's answer (low: the likeliest fix)
    resample_temperature: float = 0.8  # when an answer repeats code that already failed, asked again at this
    samples: int = 1  # candidates per round, run side by side, the best carried on (1..8)
    resamples: int = 3  # candidates of a round asked again after the model repeated code that failed (1..8)
    agreement_samples: int = 1  # with no check of the user's: answers asked per round, grouped by result (1: off)
    agreement_more: int = 2  # answers asked besides them where the two leading results tie (0: none)
    model_slots: int = 1  # model calls a round makes at once (a server with that many slots; 1: one after another)
    seed: int = -1  # sent with each model call, for answers that repeat where the provider honours it (-1: none)
    library_changes_in_prompt: bool = True  # what the libraries said they changed, for the failing names, in the prompt
    rules: bool = True  # with a litellm model, each round also runs the built-in engine's rule repair (no tokens)
    pool_size: int = 2  # sandbox kernels kept started ahead of need
    pool_idle: float = 900.0  # seconds without a loop before idle kernels close (0: keep them)
    confinement: str = "auto"  # "auto", "bwrap" or "none"
    memory_limit: int = 0  # bytes per sandbox kernel (0: half the machine's RAM)
    snapshot_size_cap: int = 2 * 1024**3  # bytes of user variables mirrored into a sandbox
    share: tuple[str, ...] = ()  # user variables shared with the sandboxes beyond what the cell and checks read
    share_policy: str = "data"  # "data": a data value a candidate reads is shared; "named": only what user code reads
    data_to_model: str = "samples"  # "samples": first values, scrubbed of secrets; "names": names, types, shapes
    receipt_tokens: int = 600  # most tokens one receipt may take
    auto: str = "off"  # a repair offered under every error: "off", "rules" (built-in, no tokens) or "model"
    cwd: str = ""  # the sandboxes' working directory ("": the current one)
    gateway_url: str = ""  # run sandboxes on this Kernel/Enterprise Gateway ("": $FIXLOOP_GATEWAY_URL, else locally)
    gateway_token: str = field(default="", repr=False)  # its auth token
    gateway_headers: str = field(default="", repr=False)  # extra HTTP headers, as JSON
    gateway_kernel: str = "python3"  # the gateway's kernelspec for sandboxes
    gateway_upload_cap: int = 512 * 1024**2  # bytes of mirrored variables sent to a gateway kernel
    sandbox_python: str = ""  # the interpreter sandbox kernels run ("": this process's); batch mode sets the
    # notebook kernel's when it imports this package's kernel wire (no setting of its own: not a FixLoop trait)

    def resolved(self) -> LoopOptions:
        """The model made explicit, the working directory fixed, each value checked."""
        options = replace(self, model=resolve_model(self.model), cwd=self.cwd or os.getcwd(),
                          gateway_url=self.gateway_url or os.environ.get("FIXLOOP_GATEWAY_URL", ""),
                          share=parse_share(self.share))
        options.check()
        return options

    def _check_times(self) -> None:
        from .errors import UsageError

        if self.timeout <= 0 or self.model_timeout <= 0:
            raise UsageError("timeout and model_timeout must be positive numbers of seconds")
        if not isinstance(self.following_time, (int, float)) or self.following_time < 0:
            raise UsageError(f"following_time must be 0 or more seconds (0: no later cell runs), "
                             f"not {self.following_time!r}")

    def check(self) -> None:
        from .errors import UsageError

        if self.max_rounds < 0:
            raise UsageError("max_rounds must be 0 or more")
        if not (0.0 <= self.temperature <= 2.0 and 0.0 <= self.resample_temperature <= 2.0):
            raise UsageError("temperature and resample_temperature must be between 0 and 2")
        if not isinstance(self.samples, int) or isinstance(self.samples, bool) or not 1 <= self.samples <= 8:
            raise UsageError(f"samples must be a whole number from 1 to 8 (candidates per round), not {self.samples!r}")
        if not isinstance(self.resamples, int) or isinstance(self.resamples, bool) or not 1 <= self.resamples <= 8:
            raise UsageError(f"resamples must be a whole number from 1 to 8, not {self.resamples!r}")
        if not isinstance(self.agreement_samples, int) or isinstance(self.agreement_samples, bool) \
                or not 1 <= self.agreement_samples <= 8:
            raise UsageError(f"agreement_samples must be a whole number from 1 to 8 (1: off), "
                             f"not {self.agreement_samples!r}")
        if not isinstance(self.agreement_more, int) or isinstance(self.agreement_more, bool) \
                or not 0 <= self.agreement_more <= 8:
            raise UsageError(f"agreement_more must be a whole number from 0 to 8, not {self.agreement_more!r}")
        if not isinstance(self.model_slots, int) or isinstance(self.model_slots, bool) \
                or not 1 <= self.model_slots <= 8:
            raise UsageError(f"model_slots must be a whole number from 1 to 8, not {self.model_slots!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < -1:
            raise UsageError(f"seed must be a whole number, 0 or more (-1: none), not {self.seed!r}")
        if not isinstance(self.reply_tokens, int) or isinstance(self.reply_tokens, bool) or self.reply_tokens < 0:
            raise UsageError(f"reply_tokens must be a whole number, 0 or more (0: by the cell's size), "
                             f"not {self.reply_tokens!r}")
        if not isinstance(self.rules, bool):
            raise UsageError(f"rules must be True or False, not {self.rules!r}")
        if self.auto not in AUTO_MODES:
            raise UsageError(f"auto must be one of {', '.join(AUTO_MODES)}, not {self.auto!r}")
        self._check_times()
        if self.share_policy not in SHARE_POLICIES:
            raise UsageError(f"share_policy must be one of {', '.join(SHARE_POLICIES)}, not {self.share_policy!r}")
        if self.data_to_model not in DATA_TO_MODEL:
            raise UsageError(f"data_to_model must be one of {', '.join(DATA_TO_MODEL)}, not {self.data_to_model!r}")
        # an unknown confinement is the sandbox's to refuse: the loop's result says so

    def reply_cap(self, cell: str) -> int:
        """The most tokens one model reply may take: `reply_tokens`, or by default REPLY_TOKENS and half a
        token per character of the cell it rewrites (a reply is that cell, whole, and a line or two)."""
        return self.reply_tokens or REPLY_TOKENS + len(cell or "") // 2

    def with_(self, **changes) -> LoopOptions:
        """`replace` that skips None (an option the caller did not give); an unknown name is a TypeError."""
        unknown = set(changes) - NAMES
        if unknown:
            raise TypeError(f"unknown loop option(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(NAMES))}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


REPLY_TOKENS = 1024  # a reply's tokens beside its cell's: a model that repeats a line stops here, not at its timeout
NAMES = frozenset(f.name for f in fields(LoopOptions))
DEFAULTS = LoopOptions()


def resolve_model(explicit: str | None = None) -> str:
    """The model given, else $FIXLOOP_MODEL, else the built-in engine."""
    return explicit or os.environ.get("FIXLOOP_MODEL") or BUILTIN


def parse_share(value) -> tuple[str, ...]:
    """`"a,b"`, `["a", "b c"]` or None -> ("a", "b", "c"): the names of --share, FixLoop.share, fix(share=...)."""
    if not value:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    return tuple(dict.fromkeys(w for item in items for w in re.split(r"[,\s]+", str(item)) if w))


def knob_signature(function) -> inspect.Signature:
    """`function`'s signature with its `**knobs` spelt out as every LoopOptions field (keyword-only,
    default None: "as in options"), so help(), IPython's completion and Shift-Tab show each knob."""
    signature = inspect.signature(function)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=f"{f.type} | None")
               for f in fields(LoopOptions)]
    return signature.replace(parameters=params)

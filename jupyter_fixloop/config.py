"""User knobs, as traitlets: `%config FixLoop.model = "..."` or `c.FixLoop.model` in jupyter_config.py.

Each trait's default is the `LoopOptions` default; `FixLoop.options()` is the one value a loop reads.
"""

from __future__ import annotations

import os
import re
import textwrap

from traitlets import Bool, Enum, Float, Integer, List, Unicode
from traitlets.config import Configurable

from .errors import UsageError
from .options import (
    AUTO_MODES,
    CONFINEMENTS,
    DATA_TO_MODEL,
    DEFAULTS,
    NAMES,
    SHARE_POLICIES,
    LoopOptions,
    resolve_model,
)

SECRETS = {"gateway_token", "gateway_headers"}  # never printed by `%fixloop config`

# The one table of knobs: every FixLoop setting is a keyword of fix(), and a flag of `%%fixloop` and
# `jupyter-fixloop run` named as the setting (`max_rounds` -> `--max-rounds`, default "as configured"),
# with these short forms, except the settings below and why.
SHORT_FLAGS = {"model": "-m", "max_rounds": "-r", "timeout": "-t", "samples": "-k"}
NOT_FLAGS = {
    "auto": "a mode of the whole kernel, not of one cell or run: `%fixloop auto rules|model|off`",
    "gateway_token": "a secret: a flag would leave it in the notebook or the shell's history; set it in a config file",
    "gateway_headers": "may hold secrets: a flag would leave them in the notebook or the shell's history",
}


class FixLoop(Configurable):
    """Defaults for every `%%fixloop` loop and `jupyter-fixloop run`; arguments override them per cell."""

    model = Unicode(
        DEFAULTS.model,
        help="litellm model string (e.g. 'openai/gpt-4o-mini', 'ollama/qwen2.5-coder'). Empty means "
        "$FIXLOOP_MODEL, or the built-in offline engine 'fixloop/builtin'.",
    ).tag(config=True)
    api_base = Unicode(DEFAULTS.api_base,
                       help="Base URL of an OpenAI-compatible server or litellm proxy.").tag(config=True)
    max_rounds = Integer(DEFAULTS.max_rounds, min=0, help="Model rounds before the loop gives up.").tag(config=True)
    timeout = Float(DEFAULTS.timeout, min=0.1,
                    help="Seconds one sandbox run may take before it is stopped.").tag(config=True)
    following_time = Float(DEFAULTS.following_time, min=0.0,
                           help="Seconds the notebook's later cells may take together in one sandbox run, after the "
                           "cell or a candidate (each within `timeout`): their outcomes tell a fix that breaks a "
                           "later cell. A later cell not run to its end in this time is not counted either way "
                           "(0: none runs).").tag(config=True)
    model_timeout = Float(DEFAULTS.model_timeout, min=1.0, help="Seconds one model call may take (a local model on a "
                          "small machine needs tens of seconds).").tag(config=True)
    max_tokens = Integer(DEFAULTS.max_tokens, min=0,
                         help="Total model tokens for one loop (0: no bound).").tag(config=True)
    reply_tokens = Integer(DEFAULTS.reply_tokens, min=0, help="Most tokens one model reply may take (0: 1024 and "
                           "half a token per character of the cell it rewrites). A small model that repeats a line "
                           "stops there, not at `model_timeout`; the cut reply has no complete cell and is said "
                           "so.").tag(config=True)
    budget = Float(DEFAULTS.budget, min=0.0,
                   help="Total model cost in USD for one loop (0: no bound).").tag(config=True)
    wall_time = Float(DEFAULTS.wall_time, min=0.0,
                      help="Total seconds for one loop, model and sandbox together (0: no bound).").tag(config=True)
    temperature = Float(
        DEFAULTS.temperature,
        min=0.0,
        max=2.0,
        help="Sampling temperature of each round's "
        "answer (low: the likeliest fix; at 0 a small model often echoes the cell unchanged).",
    ).tag(config=True)
    resample_temperature = Float(DEFAULTS.resample_temperature, min=0.0, max=2.0, help="When the model answers "
                                 "with code that already failed, it is told so and asked once more at this "
                                 "temperature; only a second repeat ends the loop. For an instruction with "
                                 "`agreement_samples`, after a round in which no answer ran to its end, a fresh "
                                 "answer (the first round's prompt, a seed of its own) is asked at it beside the "
                                 "round's answers.").tag(config=True)
    samples = Integer(DEFAULTS.samples, min=1, max=8, help="Candidates per round: K model calls at temperatures "
                      "spread from `temperature` up to `resample_temperature`, each run in its own sandbox, the best "
                      "carried on (all checks pass, then fewer failing checks, then no exception). Costs K times the "
                      "tokens; on a small local model 3 fixes more cells than 1.").tag(config=True)
    resamples = Integer(DEFAULTS.resamples, min=1, max=8, help="Candidates asked in a round that follows a "
                        "repeat (the model answered with code that already failed): K calls at temperatures from "
                        "`resample_temperature` up, each run, the best carried on. A small model stuck on its "
                        "answer often has a right one a little hotter.").tag(config=True)
    agreement_samples = Integer(DEFAULTS.agreement_samples, min=1, max=8, help="For a generation, or a repair with "
                                "no check of yours: K independent answers per round, each run in its own sandbox, "
                                "grouped by what they show and the data they change (not by their text); the "
                                "largest group's simplest answer is handed over, and the result says how many "
                                "agree ('3 of 4 independent answers give this result': a fact, not a check, so "
                                "it stays unverified; 'K of K agree' only of three answers or more, not all one "
                                "code). Where they differ, the next result is shown beside it. "
                                "Each answer is asked with a seed of its own (when a seed is set). Default 1 "
                                "(off): K answers cost K model calls, one after another, or one request of one "
                                "choice a slot where `model_slots` is 2 or more (the rest asked only where those "
                                "disagree), and on the local 1.5B model answers that all agree were right on only "
                                "some steps (docs/benchmarks.md, Generation)."
                                ).tag(config=True)
    agreement_more = Integer(DEFAULTS.agreement_more, min=0, max=8, help="With `agreement_samples`: where the two "
                             "leading results of a round's answers tie (1 against 1, 2 against 2), up to this many "
                             "more independent answers are asked, until one result leads; then the two leading "
                             "results are shown side by side as before. A round whose first answers already agree "
                             "by a majority of the K on a result that passes every check (two of three) asks no "
                             "more (its result says how many were asked and agree: '2 of 2', not 'K of K'). 0: none "
                             "asked again.").tag(config=True)
    model_slots = Integer(DEFAULTS.model_slots, min=1, max=8, help="Model calls a round makes at once (its "
                          "samples, its agreement's answers), for a server with that many slots (llama-server's "
                          "--parallel). Default 1, one after another: a round's answers share one prompt, which "
                          "llama-server's prompt cache then computes once; calls at once each compute it in a slot "
                          "of their own, and on one CPU thread three at once took longer than three one after "
                          "another (docs/benchmarks.md, Generation). A server with one slot queues the others, and "
                          "their time in the queue counts against the model timeout. With `agreement_samples` K "
                          "and this 2 or more, a round's first answers, one a slot (K at most), are one request of "
                          "that many choices (`n`, llama-server's `n_cmpl`, which it allows up to its slots): the "
                          "prompt is read once, the replies written together, at one temperature (the mean of the K "
                          "spread ones); the server samples each choice with a seed of its own. The rest of the K "
                          "are asked one by one, each at its own spread temperature, only where those do not "
                          "already agree by a majority of the K on a result that passes every check (of three on "
                          "two slots: the third only where the request's two differ); so are the rest "
                          "where the server returns fewer choices, or refuses the request."
                          ).tag(config=True)
    seed = Integer(DEFAULTS.seed, min=-1, help="Sent with each model call (OpenAI's `seed`, llama-server's too; "
                   "-1: none), so that the same prompt at the same temperature gets the same answer where the "
                   "provider honours it: a measurement that can be repeated. Providers that take no seed get "
                   "none.").tag(config=True)
    library_changes_in_prompt = Bool(DEFAULTS.library_changes_in_prompt, help="For a cell that failed, put in the "
                                     "model's prompt what the libraries it uses said they removed, deprecated or "
                                     "changed about the names of its error and code (the knowledge base of library "
                                     "changes, model/changes.json; within a token budget). False: the prompt "
                                     "leaves it out, to measure what it adds.").tag(config=True)
    rules = Bool(DEFAULTS.rules, help="With a litellm model, each round first runs the built-in engine's rule "
                 "repair when it has one (typos, missing imports, removed APIs: milliseconds, no tokens). One that "
                 "passes every check within 2 s ends the round and the model is not asked; a slower or failing one "
                 "runs beside the model's answer, and the better of the two is carried on.").tag(config=True)
    pool_idle = Float(DEFAULTS.pool_idle, min=0.0,
                      help="Seconds without a loop after which the idle sandbox kernels are closed (0: keep them); the "
                           "next loop starts new ones.").tag(config=True)
    pool_size = Integer(DEFAULTS.pool_size, min=0,
                        help="Sandbox kernels kept started ahead of need: two, so the kernel for a candidate is ready "
                             "even when the model answers at once (local sandboxes; a gateway keeps "
                             "one kernel at a time).").tag(config=True)
    confinement = Enum(
        list(CONFINEMENTS),
        DEFAULTS.confinement,
        help="How sandbox kernels are confined: 'auto' and 'bwrap' use bubblewrap and refuse to run candidates "
        "without it; 'none' runs them unconfined, only when set (see SECURITY.md, the threat model).",
    ).tag(config=True)
    memory_limit = Integer(
        DEFAULTS.memory_limit, min=0, help="Bytes of memory one sandbox kernel may use (0: half the machine's RAM)."
    ).tag(config=True)
    snapshot_size_cap = Integer(
        DEFAULTS.snapshot_size_cap, min=0,
                                help="Bytes of user variables mirrored into the sandbox; larger ones "
                                     "are named, not sent."
    ).tag(config=True)
    share = List(
        Unicode(), list(DEFAULTS.share),
        help="Names of your variables shared with the sandboxes besides those the cell, its checks and the "
        "following cells read: a secret or a live resource shared only because you name it here, or with "
        "%%fixloop --share NAME (under share_policy 'named', any other name too). IPython's history (_i1, Out, "
        "...) is shared only when named.",
    ).tag(config=True)
    share_policy = Enum(
        list(SHARE_POLICIES),
        DEFAULTS.share_policy,
        help="Which of your variables a candidate may read. 'data': any data value (frames, series, arrays, "
        "numbers, plain strings, containers of those, your functions and classes) is shared as soon as the "
        "code reads it, and summarised for the model; secrets (a password-like name on a string, a string "
        "shaped like a key) and live resources (connections, sockets, clients, open files) never are, unless "
        "named with `share`. 'named': only what the cell, its checks, the following cells and `share` name.",
    ).tag(config=True)
    data_to_model = Enum(
        list(DATA_TO_MODEL), DEFAULTS.data_to_model,
        help="How much of your data a litellm model reads. 'samples': the variables' names, types, shapes and "
        "first values, what a run printed and its value; 'names': names, types and shapes only (no value of "
        "your data, no printed output, no value trace). Either way every message is scrubbed of secrets "
        "right before it leaves the machine (keys, tokens, passwords, a URL's password, .env lines); the "
        "built-in engine reads everything locally.",
    ).tag(config=True)
    receipt_tokens = Integer(
        DEFAULTS.receipt_tokens, min=50,
                             help="Most tokens one receipt (what the model reads of a run) may take; "
                                  "longer ones are trimmed."
    ).tag(config=True)
    auto = Enum(
        list(AUTO_MODES), DEFAULTS.auto,
        help="Offer a repair under every error of an ordinary cell (`%fixloop auto` turns it on in one kernel): "
        "'rules' tries the built-in rules' repair at once in a sandbox, from the state the cell started from (no "
        "tokens), and asks the model only when you say so (`%fixloop last --model`, or the widget's Retry); "
        "'model' asks the configured model too; 'off' leaves IPython's error handler alone. Your traceback is "
        "shown unchanged, and nothing runs in your kernel until you accept.",
    ).tag(config=True)

    gateway_url = Unicode(
        DEFAULTS.gateway_url,
        help="Run sandbox kernels on this Jupyter Kernel Gateway or Enterprise "
        "Gateway (e.g. 'http://gateway:8888'); empty means $FIXLOOP_GATEWAY_URL, else local kernels.",
    ).tag(config=True)
    gateway_token = Unicode(DEFAULTS.gateway_token,
                            help="Auth token of the gateway (sent as 'Authorization: token ...').").tag(config=True)
    gateway_headers = Unicode(DEFAULTS.gateway_headers,
                              help="Extra HTTP headers for the gateway, as a JSON object.").tag(config=True)
    gateway_kernel = Unicode(
        DEFAULTS.gateway_kernel, help="The gateway's kernelspec for sandbox kernels (it needs cloudpickle)."
    ).tag(config=True)
    gateway_upload_cap = Integer(
        DEFAULTS.gateway_upload_cap,
        min=0,
        help="Bytes of mirrored variables sent to a gateway "
        "kernel (0: no cap); a larger snapshot ends the loop with a clear error.",
    ).tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._loaded = dict(self._section())  # what the config files (or the command line) set at start

    def options(self) -> LoopOptions:
        """The configured values as the one options value a loop reads."""
        values = {name: getattr(self, name) for name in self.trait_names(config=True) if name in NAMES}
        return LoopOptions(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})

    # ---------------------------------------------------------------- `%fixloop config`

    def _section(self) -> dict:
        return self.config.get(type(self).__name__, {})

    def origin(self, name: str) -> str:
        """Where the value of setting `name` came from: "default", "config file", "%config" or "set in code"."""
        section = self._section()
        value = getattr(self, name)
        if name in section and section[name] == value:
            return "config file" if name in self._loaded and self._loaded[name] == value else "%config"
        return "default" if value == self.trait_defaults(name) else "set in code"

    def _shown(self, name: str) -> str:
        """A setting's value as the table shows it (a secret hidden)."""
        value = getattr(self, name)
        return "(set, hidden)" if name in SECRETS and value else repr(value)

    def table(self, *words: str) -> str:
        """The settings as a table: each as `%config` takes it (`FixLoop.name = value`) and where its value
        came from; with `--help` each setting's help under it, with a NAME that setting alone."""
        cls = type(self).__name__
        names = sorted(self.trait_names(config=True))
        explain = "--help" in words or "-h" in words
        asked = [w.removeprefix(f"{cls}.") for w in words if not w.startswith("-")]
        unknown = [w for w in asked if w not in names]
        if unknown:
            raise UsageError(f"no setting {unknown[0]!r}; the settings are {', '.join(names)}")
        if asked:
            names, explain = asked, True
        rows = [(f"{cls}.{name} = {self._shown(name)}", self.origin(name)) for name in names]
        if "model" in names and not self.model:  # an empty model means another: say which
            at = names.index("model")
            rows[at] = (rows[at][0], f"{rows[at][1]}: {_empty_model()}")
        width = max(len(setting) for setting, _ in [("setting", ""), *rows])
        lines = [f"{'setting':{width}}  from"]
        for (setting, origin), name in zip(rows, names):
            lines.append(f"{setting:{width}}  {origin}")
            if explain:
                lines += [f"    {line}" for line in _wrap(self.class_traits()[name].help)] + [""]
        lines.append(f"Change one with %config {cls}.NAME = VALUE (this kernel) or c.{cls}.NAME in a "
                     f"Jupyter config file."
                     + ("" if explain else " `%fixloop config NAME` explains a setting, `%fixloop config --help` all."))
        return "\n".join(lines)


def flag_arguments() -> list[tuple[tuple[str, ...], dict]]:
    """Each setting as a flag: `(flags, keywords)` for argparse's `add_argument` (IPython's `argument`
    takes the same), in the order the settings are declared; each default is None, "as configured"."""
    arguments = []
    for name, trait in FixLoop.class_traits(config=True).items():
        if name in NOT_FLAGS:
            continue
        flag = "--" + name.replace("_", "-")
        first = re.split(r"(?<!e\.g)\. ", " ".join(trait.help.split()))[0].rstrip(".").replace("%", "%%")
        keywords = {"dest": name, "default": None, "help": f"{first} (FixLoop.{name}, {trait.default()!r})."}
        if isinstance(trait, Bool):  # a flag that says the other value than the default's
            flag = f"--no-{flag[2:]}" if trait.default() else flag
            keywords.update(action="store_const", const=not trait.default())
        elif isinstance(trait, List):
            keywords.update(action="append", metavar="NAMES")
        elif isinstance(trait, Enum):
            keywords.update(choices=list(trait.values))
        else:
            keywords.update(type={Integer: int, Float: float}.get(type(trait), str))
        arguments.append(((flag, *([SHORT_FLAGS[name]] if name in SHORT_FLAGS else [])), keywords))
    return arguments


def with_flags(configured: LoopOptions, args) -> LoopOptions:
    """`configured` overridden by the settings `args` gives (parsed from `flag_arguments`; None: not
    given); names given with --share are added to the configured ones."""
    given = {name: getattr(args, name, None) for name in NAMES if name not in NOT_FLAGS}
    if given.get("share"):
        given["share"] = (*configured.share, *given["share"])
    return configured.with_(**{name: value for name, value in given.items() if value not in (None, [])})


def load_config() -> FixLoop:
    """FixLoop as Jupyter configures it outside a kernel (batch mode): `jupyter_config.py` and
    `jupyter_fixloop_config.py` in the Jupyter config path (`jupyter --paths`), as a Jupyter app reads them."""
    from jupyter_core.application import JupyterApp

    class FixloopApp(JupyterApp):
        name = "jupyter-fixloop"
        config_file_name = "jupyter_fixloop_config"

    from traitlets import TraitError

    app = FixloopApp()
    try:
        app.load_config_file(suppress_errors=False)
        return FixLoop(config=app.config)
    except (TraitError, Exception) as exc:
        raise UsageError(
            f"cannot use the Jupyter config ({type(exc).__name__}: {exc}); see `jupyter --paths`"
        ) from None


def markdown() -> str:
    """docs/options.md: every setting with its default, its kind and the help `%fixloop config --help`
    prints, made from the traits (`python -m jupyter_fixloop.config --markdown > docs/options.md`)."""
    cls, traits = FixLoop.__name__, FixLoop.class_traits(config=True)
    names = sorted(traits)
    lines = ["# Options", "",
             "<!-- Generated from the FixLoop traits in jupyter_fixloop/config.py by "
             "`python -m jupyter_fixloop.config --markdown > docs/options.md`; do not edit. -->", "",
             *_wrap(FixLoop.__doc__ or ""), "",
             *_wrap(f"Set one with `%config {cls}.NAME = VALUE` in a notebook or `c.{cls}.NAME = VALUE` in "
                    f"`jupyter_config.py`. `%fixloop config` shows each value and where it came from, "
                    f"`%fixloop config --help` the same help as here."), "",
             "| setting | default | kind |", "|---|---|---|"]
    lines += [f"| [`{cls}.{name}`](#{cls.lower()}{name}) | `{traits[name].default()!r}` | {_kind(traits[name])} |"
              for name in names]
    for name in names:
        lines += ["", f"## `{cls}.{name}`", "", *_wrap(traits[name].help)]
    return "\n".join(lines) + "\n"


def _kind(trait) -> str:
    """What a setting takes, in words: its type and bounds."""
    if isinstance(trait, Enum):
        return "one of " + ", ".join(f"`{value!r}`" for value in trait.values)
    kind = {Bool: "True or False", Integer: "an integer", Float: "a number", List: "a list of names"}
    words = next((text for type_, text in kind.items() if isinstance(trait, type_)), "text")
    low, high = (bound if bound not in (None, float("inf")) else None
                 for bound in (getattr(trait, "min", None), getattr(trait, "max", None)))
    if low is not None and high is not None:
        return f"{words}, {low:g} to {high:g}"
    return f"{words}, at least {low:g}" if low is not None else words


def _wrap(text: str, width: int = 96) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width) or [""]


def _empty_model() -> str:
    """What an empty `model` setting means."""
    if os.environ.get("FIXLOOP_MODEL"):
        return f"uses $FIXLOOP_MODEL, {resolve_model()}"
    return f"uses the built-in engine, {resolve_model()}"


if __name__ == "__main__":  # python -m jupyter_fixloop.config --markdown > docs/options.md
    import sys

    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m jupyter_fixloop.config --markdown > docs/options.md")
    sys.stdout.write(markdown())

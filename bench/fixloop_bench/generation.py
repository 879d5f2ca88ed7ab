"""`jupyter-fixloop bench --generation FILE`: how often generation writes the right code, with numbers.

Each step of FILE (JSON lines: `id`, `setup`, `instruction`, `solution`; optional `group`, and
`names`, the variables whose values matter) is met the way a user meets it: `setup` (the earlier
steps' code) builds the user's namespace, and the model is asked to do `instruction` in it:

- `one-shot`: one model call given the loop's own round-1 prompt (the same namespace summary), its
  code not run;
- `loop`: `fix("", instruction=..., namespace=...)`, the loop as the magic runs it;
- `agreement`: the loop asking K independent answers a round (`--agreement-samples K`, default 3).

Each step runs its modes in a rotating order (the first step one-shot, loop, agreement; the next loop,
agreement, one-shot; ...), so that a machine's load, which changes by the minute, falls on every mode alike;
`--cold-cache` erases a llama-server's prompt cache before each mode of a step, so that no mode reads the
step's prompt from the cache another mode filled.

Scoring. The reference `solution` runs in a real user-side kernel after `setup` (it is the bench
file's own code): what it printed, its last expression's value and the variables it created or
changed are the oracle (oracle.py). The candidate runs in a fresh sandbox loaded with the
same namespace, every name shared, with two checks the model never sees, judged by the sandbox's
judge as the fix-rate bench's hidden checks are: the variables that matter hold the reference's
values (frames by pandas' own equality, tolerant of dtype-neutral differences), and the value the
code shows is the reference's (or what it prints reads as the reference's output). A step is
`right`, `wrong` (it ran, something differs), `crash` (it raised, timed out or killed its kernel)
or `none` (no code). Which variables matter: those of the setup the reference changed, the new
ones the instruction names, or the step's `names`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import asdict, dataclass, field

from jupyter_fixloop.errors import FixloopError
from jupyter_fixloop.model import LastRun, get_model
from jupyter_fixloop.receipt import text as receipt_text
from jupyter_fixloop.result import Agreement

from . import oracle
from .harness import UserKernel, add_loop_arguments, run_each
from .peers import MESSAGES as PEER_MESSAGES, PEERS

HERE = os.path.dirname(__file__)
DEV_STEPS = os.path.join(HERE, "generation.jsonl")
HELD_OUT_STEPS = os.path.join(HERE, "generation-heldout.jsonl")  # never read: its runs print totals only
HELD_OUT_STEPS2 = os.path.join(HERE, "generation-heldout2.jsonl")  # the second held-out set, never tuned on
HELD_OUT_STEPS3 = os.path.join(HERE, "generation-heldout3.jsonl")  # the third, written without reading the rules
# their runs print totals only by default
HELD_OUT_FILES = frozenset(os.path.abspath(p) for p in (HELD_OUT_STEPS, HELD_OUT_STEPS2, HELD_OUT_STEPS3))
MODES = ("loop", "one-shot")
AGREEMENT = "agreement"  # the loop with K answers a round (--agreement-samples, default AGREEMENT_K), beside the loop
AGREEMENT_K = 3
ALL_MODES = (*MODES, *PEERS)  # PEERS: the peers' prompts, one call each, scored as one-shot is (peers.py)
KNOWN_MODES = (*MODES, AGREEMENT, *PEERS)
VERDICTS = ("right", "wrong", "crash", "none")
CLAIMS = ("fixed", "unverified")  # what the loop says of the code it returns


@dataclass(frozen=True)
class Step:
    """One instruction of a generation bench file (its `solution` is the answer: never shown)."""

    id: str
    setup: str
    instruction: str
    solution: str
    group: str = "?"
    names: tuple[str, ...] | None = None  # the variables whose values matter (None: decided from the run)


@dataclass(frozen=True)
class Oracle:
    """What the reference did, as observe() reports it; `checks` are the judge's two checks."""

    stdout: str  # what the reference printed
    shows: bool  # its last value matters (not when it only shows a variable it changed)
    value_text: tuple[str, ...]  # that value printed (str, repr)
    names: tuple[str, ...]  # the variables whose values matter
    checks: tuple[str, str]  # the judge's: the variables, the value shown

    @property
    def printed(self) -> tuple[str, ...]:
        """What a candidate that prints rather than shows may print to be right."""
        return self.value_text if self.shows else ((self.stdout,) if self.stdout.strip() else ())


@dataclass(frozen=True)
class StepResult:
    """One step in one mode: what the mode produced, then how its code scored."""

    id: str
    group: str
    mode: str
    verdict: str  # right, wrong, crash, none; "error" when the step itself is broken
    status: str = ""  # the loop's status (fixed, unverified, gave_up, error); one-shot: answered, no_code
    reason: str = ""
    why: str = ""  # what the scoring found, when not right
    rounds: int = 0
    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0  # the mode's own time: model calls and the loop's runs, not the scoring
    code: str | None = None
    # where the model's time went, as the server says it (0 where it does not): the prompt tokens, those it read
    # from its prompt cache, its seconds reading prompts; and the seconds of the model calls, end to end
    prompt_tokens: int = 0
    cached_tokens: int = 0
    prompt_seconds: float = 0.0
    model_seconds: float = 0.0
    reply_tokens: int = 0  # the replies' tokens, and the server's seconds writing them (llama-server's `timings`)
    reply_seconds: float = 0.0
    run_seconds: float = 0.0  # the candidates' own runs in the sandbox (the code's run, not the kernel's start)
    position: int = 0  # where the mode ran among the step's modes (0: first)
    load: float = 0.0  # the machine's 1-minute load average when the mode started the step
    agreeing: int = 0  # loop with --agreement-samples: answers that give the result handed over (0: not asked)
    answers: int = 0  # and the round's independent answers
    planned: int = 0  # the answers the round was to ask (more than `answers`: it stopped once they agreed)
    groups: list = field(default_factory=list)  # the size of each group of answers that ran, the handed-over one first
    rival: str | None = None  # the next group's simplest code, shown beside the answer where the groups differ
    rival_verdict: str = ""  # its score ("" when there is none)
    spellings: int = 0  # the different codes among the agreeing answers (0: not recorded)
    read_failed: bool = False  # a check read from the instruction does not hold on the answer's group
    doubted: bool = False  # another check (a smell, the output the instruction states) does not hold on it

    @property
    def unanimous(self) -> bool:
        """"K of K agree" as the loop says it (`Agreement.unanimous`: three answers or more, all agreeing, not one
        code, no check failing on them, read from the instruction or other)."""
        return Agreement(self.agreeing, self.answers, spellings=self.spellings, read_failed=self.read_failed,
                         doubted=self.doubted).unanimous

    @property
    def two_of_two(self) -> bool:
        """"2 of 2" where "K of K" would be said of three: the round asked two answers (a third not asked: the two
        agree, a majority of three), two codes, no check failing on them. A claim of its own, not "K of K"."""
        return (self.answers == 2 and self.agreeing == 2 and self.spellings >= 2 and not self.read_failed
                and not self.doubted)

    @property
    def all_agree(self) -> bool:
        """Every answer asked, two or more, gave this result (a round that stopped at 2 of 2 too, one code or two)."""
        return self.answers > 1 and self.agreeing == self.answers

    @property
    def right(self) -> bool:
        return self.verdict == "right"


@dataclass
class Figures:
    """The figures of a set of results of one mode."""

    steps: int = 0
    verdicts: dict = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    errors: int = 0
    statuses: dict = field(default_factory=dict)  # status -> {verdict: count}
    tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    calls: int = 0
    rounds: int = 0
    unanimous: dict = field(default_factory=lambda: {"steps": 0, "right": 0})  # "K of K agree" answers
    all_agree: dict = field(default_factory=lambda: {"steps": 0, "right": 0})  # every answer asked agrees (2 or more)
    two_of_two: dict = field(default_factory=lambda: {"steps": 0, "right": 0})  # "2 of 2", two codes, no check failing
    # answers whose groups differ (a rival shown beside): how many, and how many of them have a right one of the two
    split: dict = field(default_factory=lambda: {"steps": 0, "right": 0, "rival_right": 0})
    times: list = field(default_factory=list)  # each step's seconds (the mode's own)
    loads: list = field(default_factory=list)  # each step's load average at its start
    prompt: dict = field(default_factory=lambda: dict.fromkeys(TIME_FIELDS, 0))

    def add(self, r: StepResult) -> None:
        self.steps += 1
        for kept, said in ((self.unanimous, r.unanimous), (self.all_agree, r.all_agree),
                           (self.two_of_two, r.two_of_two)):
            kept["steps"] += said
            kept["right"] += said and r.right
        if r.rival is not None:
            self.split["steps"] += 1
            self.split["right"] += r.right
            self.split["rival_right"] += r.rival_verdict == "right" and not r.right
        if r.verdict == "error":
            self.errors += 1
        else:
            self.verdicts[r.verdict] += 1
        by = self.statuses.setdefault(r.status or "-", {})
        by[r.verdict] = by.get(r.verdict, 0) + 1
        self.tokens += r.tokens
        self.cost += r.cost
        self.seconds += r.seconds
        self.times.append(r.seconds)
        self.calls += r.calls
        self.rounds += r.rounds
        for key in TIME_FIELDS:
            self.prompt[key] += getattr(r, key)
        self.loads.append(r.load)

    def figures(self) -> dict:
        n = max(self.steps, 1)
        claims = {s: sum(self.statuses.get(s, {}).values()) for s in CLAIMS}
        false = {s: claims[s] - self.statuses.get(s, {}).get("right", 0) for s in CLAIMS}
        return {"steps": self.steps, **self.verdicts, "errors": self.errors, "right_rate": self.verdicts["right"] / n,
                "claimed_fixed": claims["fixed"], "false_fixed": false["fixed"],
                "claimed_unverified": claims["unverified"], "unverified_not_right": false["unverified"],
                "by_status": self.statuses, "tokens": self.tokens, "cost": self.cost, "calls": self.calls,
                "rounds": self.rounds,
                "seconds": self.seconds, "seconds_per_step": self.seconds / n,
                "seconds_median": quantile(self.times, 0.5), "seconds_p90": quantile(self.times, 0.9),
                "unanimous": self.unanimous["steps"], "unanimous_right": self.unanimous["right"],
                "unanimous_precision": self.unanimous["right"] / self.unanimous["steps"]
                if self.unanimous["steps"] else None,
                "all_agree": self.all_agree["steps"], "all_agree_right": self.all_agree["right"],
                "two_of_two": self.two_of_two["steps"], "two_of_two_right": self.two_of_two["right"],
                "split": self.split["steps"], "split_right": self.split["right"],
                "split_rival_right": self.split["rival_right"],
                **self.prompt, "load_median": quantile(self.loads, 0.5), "load_max": max(self.loads, default=0.0)}


# the StepResult fields of where a mode's time went, summed over steps in its figures
TIME_FIELDS = ("prompt_tokens", "cached_tokens", "prompt_seconds", "model_seconds", "reply_tokens", "reply_seconds",
               "run_seconds")


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of `values`, linear between the nearest two (numpy's default); 0.0 of none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


# ---------------------------------------------------------------- reading steps


def read_steps(path: str) -> list[Step]:
    """Steps from a JSON-lines file; a malformed line is a one-line error naming it."""
    steps, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                names = raw.get("names")
                step = Step(str(raw["id"]), raw.get("setup", ""), raw["instruction"], raw["solution"],
                            raw.get("group", "?"), tuple(names) if names is not None else None)
                if not step.instruction.strip() or not step.solution.strip():
                    raise ValueError("empty instruction or solution")
            except (ValueError, KeyError, TypeError) as exc:
                raise FixloopError(f"{path}:{number}: not a generation step (needs id, setup, instruction, "
                                   f"solution; {type(exc).__name__}: {exc})") from None
            if step.id in seen:
                raise FixloopError(f"{path}:{number}: step id {step.id!r} appears twice")
            seen.add(step.id)
            steps.append(step)
    return steps


# ---------------------------------------------------------------- the oracle and the namespace


def observe(kernel: UserKernel, step: Step, timeout: float) -> Oracle:
    """Run the setup, then the reference, in the user-side kernel; the oracle of what it did."""
    kernel.reset(timeout)
    kernel.run(step.setup, timeout)
    expr = oracle.call("observe", step.solution)
    reply = kernel.kc.execute_interactive("", timeout=timeout, store_history=False, user_expressions={"o": expr},
                                          output_hook=lambda msg: None)
    answer = reply["content"]["user_expressions"]["o"]
    if answer.get("status") != "ok":
        raise FixloopError(f"the oracle failed: {answer.get('ename')}: {answer.get('evalue')}")
    seen = json.loads(ast.literal_eval(answer["data"]["text/plain"]))
    if seen["error"]:
        raise FixloopError(f"the reference solution fails: {seen['error']}")
    names = _names_that_matter(step, seen["changed"], seen["new"])
    missing = sorted(set(names) - set(seen["changed"]))
    if missing:
        raise FixloopError(f"`names` lists {', '.join(missing)}, which the reference does not create or change")
    shows = seen["has_value"] and seen["shows_name"] not in names
    checks = (oracle.call("changed", seen["blob"], list(names)), oracle.call("shown", seen["blob"], "_", shows))
    return Oracle(seen["stdout"], shows, tuple(seen["value_text"]) if shows else (), names, checks)


def _names_that_matter(step: Step, changed: list[str], new: list[str]) -> tuple[str, ...]:
    """The step's `names`; else the setup's variables the reference changed and the new ones the
    instruction names (a helper variable of the reference's own is not asked of the candidate)."""
    if step.names is not None:
        return step.names
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", step.instruction))
    return tuple(n for n in changed if n not in new or n in words)


def user_namespace(setup: str) -> dict:
    """The user's namespace after `setup`, in this process, as the magic holds the user's (the setup is
    the bench file's own code; what it prints is not shown)."""
    ns: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(setup, "<setup>", "exec"), ns)
    return ns


# ---------------------------------------------------------------- the modes


def one_shot(step: Step, ns: dict, opts, peer: str | None = None) -> dict:
    """One model call given the loop's round-1 prompt (or a peer's prompt, peers.py); the code is not run."""
    from jupyter_fixloop.errors import ModelError
    from jupyter_fixloop.loop import first_messages
    from jupyter_fixloop.model import STOP
    from jupyter_fixloop.sandbox import runtime

    if peer is None:
        messages = first_messages("", instruction=step.instruction, namespace=ns, options=opts.options)
    else:
        messages = PEER_MESSAGES[peer](step.instruction, ns)
    try:
        reply = runtime.run_sync(get_model(opts.options.model).propose(
            messages, LastRun(None, None), timeout=opts.options.model_timeout, api_base=opts.options.api_base or None,
            max_tokens=opts.options.reply_cap(""), temperature=opts.options.temperature, seed=opts.options.seed,
            stop=STOP))
    except ModelError as exc:
        return {"status": "error", "reason": str(exc), "calls": 1, "code": None}
    return {"status": "answered" if reply.code else "no_code", "reason": "one model call, not run",
            "rounds": 1, "calls": 1, "tokens": reply.usage.tokens, "cost": reply.usage.cost, "code": reply.code,
            **_model_time([reply.usage])}


def _model_time(usages) -> dict:
    """The StepResult fields of where the model's time went, from its calls' usage (and the rounds' runs)."""
    return {"prompt_tokens": sum(u.prompt_tokens for u in usages),
            "cached_tokens": sum(u.cached_tokens for u in usages),
            "prompt_seconds": sum(u.prompt_seconds for u in usages), "model_seconds": sum(u.seconds for u in usages),
            "reply_tokens": sum(u.completion_tokens for u in usages),
            "reply_seconds": sum(u.reply_seconds for u in usages), "run_seconds": sum(u.run_seconds for u in usages)}


def run_loop(step: Step, ns: dict, options) -> dict:
    """The loop, as `%%fixloop <instruction>` runs it; the code it returns (none when it gave up)."""
    from jupyter_fixloop.loop import fix

    result = fix("", instruction=step.instruction, namespace=ns, options=options)
    # a request's further choices (one request of n answers) are no call of their own
    calls = sum(max(1, len([s for s in r.samples if s.source != "rules" and not s.choice])) for r in result.rounds)
    a = result.agreement
    return {"status": result.status, "reason": result.reason, "rounds": len(result.rounds), "calls": calls,
            "tokens": result.tokens, "cost": result.cost, "code": result.patched if result.claimed else None,
            "agreeing": a.agreeing if a else 0, "answers": a.answers if a else 0, "planned": a.planned if a else 0,
            "groups": list(a.groups) if a else [], "rival": a.rival if a and result.claimed else None,
            "spellings": a.spellings if a else 0, "read_failed": a.read_failed if a else False,
            "doubted": a.doubted if a else False,
            **_model_time([r.usage for r in result.rounds])}


# ---------------------------------------------------------------- scoring


def score(code: str | None, seen: Oracle, ns: dict, options) -> tuple[str, str]:
    """(verdict, why): the code run in a fresh sandbox with every name of `ns` shared, judged against the oracle."""
    if code is None or not code.strip():
        return "none", "no code"
    from jupyter_fixloop.loop import verify

    receipt = verify(code, checks=list(seen.checks), namespace=ns, options=options)
    outcomes = {c.expr: c for c in receipt.checks}
    names, shown = outcomes.get(seen.checks[0]), outcomes.get(seen.checks[1])
    if names is None or shown is None:  # the judge never ran: the code itself failed
        return "crash", _found(receipt_text.headline(receipt), seen)
    if not names.passed:
        return "wrong", _found(names.detail, seen)
    if not shown.passed and not printed_as(receipt.stdout, list(seen.printed)):
        why = _found(shown.detail, seen)
        if receipt.stdout.strip() and why == "the code shows no value":  # it printed something else
            why = "it shows no value, and what it prints is not the reference's value"
        return "wrong", why
    if seen.stdout.strip() and seen.shows and not printed_as(receipt.stdout, [seen.stdout]):
        return "wrong", "it does not print what the reference prints"
    return "right", ""


def printed_as(stdout: str, texts: list[str]) -> bool:
    """Whether `stdout` holds one of `texts` (a value's str or repr, or what the reference printed)
    whole: the output equals it, or holds it with no letter, digit or dot on either side ("Total: 19"
    holds 19). Lines are compared without trailing spaces, as oracle.py's `normalized`."""
    out = _normalized(stdout)
    for text in texts:
        want = _normalized(text)
        if want and (out == want or re.search(rf"(?<![\w.]){re.escape(want)}(?![\w.])", out)):
            return True
    return False


def _normalized(text: str) -> str:
    return "\n".join(line.rstrip() for line in str(text).strip("\n").splitlines()).strip()


def _found(text: str, seen: Oracle) -> str:
    """What a check found, without its code (the oracle's blob is long and says nothing to a reader):
    the oracle raises `Differs` with it (oracle.py)."""
    found = re.search(r"raised Differs: (.*)", text, flags=re.S)
    if found:
        return found.group(1).strip()
    for check in seen.checks:
        text = text.replace(check, "<check>")
    return text


# ---------------------------------------------------------------- one step, every mode


def run_step(step: Step, kernel: UserKernel, opts, turn: int = 0) -> list[StepResult]:
    """The oracle and the namespace, then each mode's code, scored; the modes in the order `turn` rotates them to
    (`--cold-cache`: the server's prompt cache erased before each)."""
    try:
        seen = observe(kernel, step, opts.timeout * 4)
        ns = user_namespace(step.setup)
    except Exception as exc:  # a broken step (its setup or reference): said, not scored
        why = str(exc) if isinstance(exc, FixloopError) else f"setup failed: {type(exc).__name__}: {exc}"
        return [StepResult(step.id, step.group, mode, "error", reason=why) for mode in opts.modes]
    shared = tuple(n for n in ns if isinstance(n, str) and not n.startswith("__"))
    scoring = opts.options.with_(share=shared, max_rounds=0)  # the candidate gets every name of the setup
    results = {}
    for position, mode in enumerate(rotated(opts.modes, turn)):
        if opts.cold_cache:
            erase_prompt_cache(opts.api_base)
        load = os.getloadavg()[0]
        started = time.perf_counter()
        if mode in (*MODES, AGREEMENT) and mode != "one-shot":
            outcome = run_loop(step, ns, mode_options(opts, mode))
        else:
            outcome = one_shot(step, ns, opts, _peer(mode))
        seconds = time.perf_counter() - started
        verdict, why = score(outcome["code"], seen, ns, scoring)
        rival = score(outcome["rival"], seen, ns, scoring)[0] if outcome.get("rival") else ""
        results[mode] = StepResult(step.id, step.group, mode, verdict, why=why, seconds=seconds, rival_verdict=rival,
                                   position=position, load=load, **outcome)
    return [results[mode] for mode in opts.modes]


def rotated(modes: tuple[str, ...], turn: int) -> tuple[str, ...]:
    """The modes in the order the `turn`-th step runs them: each step starts one mode further on."""
    turn %= max(len(modes), 1)
    return (*modes[turn:], *modes[:turn])


def mode_options(opts, mode: str):
    """The loop's options in a mode: `agreement` asks K answers a round; beside it, `loop` asks one."""
    if mode == AGREEMENT:
        return opts.options.with_(agreement_samples=opts.agreement_samples or AGREEMENT_K)
    if AGREEMENT in opts.modes:
        return opts.options.with_(agreement_samples=1)
    return opts.options


def erase_prompt_cache(api_base: str | None) -> None:
    """Erase every slot of a llama-server (`POST /slots/ID?action=erase`; it must be started with
    `--slot-save-path`, and `--cache-ram 0` so that nothing is restored from memory): the next mode reads the
    step's prompt as the first to ask it did."""
    root = re.sub(r"/v1/?$", "", (api_base or "").rstrip("/"))
    try:
        with urllib.request.urlopen(f"{root}/slots", timeout=30) as reply:
            slots = [s["id"] for s in json.load(reply)]
        for slot in slots:
            request = urllib.request.Request(f"{root}/slots/{slot}?action=erase", data=b"{}", method="POST",
                                             headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=60).close()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        detail = exc.read().decode("utf-8", "replace")[:200] if isinstance(exc, urllib.error.HTTPError) else exc
        raise FixloopError(f"--cold-cache could not erase the prompt cache of {root} ({detail}): it needs a "
                           "llama-server started with --slot-save-path DIR and --cache-ram 0") from None


def _peer(mode: str) -> str | None:
    return mode if mode in PEERS else None


def run_bench(steps: list[Step], opts, on_step=None) -> list[StepResult]:
    """Every step with one user-side kernel (reset between steps); `on_step(step, results)` after each."""
    def after(step, done):
        if on_step and done is not None:
            on_step(step, done)

    turns = {step.id: n for n, step in enumerate(steps)}
    done = run_each(steps, opts, lambda step, kernel, workdir: run_step(step, kernel, opts, turns[step.id]), after)
    return [r for results in done for r in results]


# ---------------------------------------------------------------- figures and the report


def summarize(results: list[StepResult]) -> dict:
    """Per mode: overall and per group; and the loop's lead over one-shot, in points."""
    by_mode: dict[str, Figures] = {}
    by_group: dict[str, dict[str, Figures]] = {}
    for r in results:
        by_mode.setdefault(r.mode, Figures()).add(r)
        by_group.setdefault(r.mode, {}).setdefault(r.group, Figures()).add(r)
    figures = {"by_mode": {m: f.figures() for m, f in by_mode.items()},
               "by_group": {m: {g: f.figures() for g, f in sorted(groups.items())} for m, groups in by_group.items()}}
    rates = token_rates(results)
    if rates is not None:
        figures["rates"] = {"prompt_seconds_a_token": rates[0], "reply_seconds_a_token": rates[1]}
        for mode, f in figures["by_mode"].items():
            costs = [at_rates(r, rates) for r in results if r.mode == mode and r.verdict != "error"]
            f["at_rates_median"], f["at_rates_p90"] = quantile(costs, 0.5), quantile(costs, 0.9)
    one = figures["by_mode"].get("one-shot")
    for mode, f in figures["by_mode"].items():
        if one is not None and mode != "one-shot":
            figures[f"{mode}_minus_one_shot_points"] = round(100 * (f["right_rate"] - one["right_rate"]), 1)
            f["median_vs_one_shot"] = f["seconds_median"] / one["seconds_median"] if one["seconds_median"] else None
            if rates is not None and one["at_rates_median"]:
                f["at_rates_vs_one_shot"] = f["at_rates_median"] / one["at_rates_median"]
                f["one_round"] = _one_round(results, mode, rates)
    return figures


def _one_round(results: list[StepResult], mode: str, rates: tuple[float, float]) -> dict:
    """The mode's steps that ended in one round, each against one-shot on the same step at the run's rates: how
    much the mode adds where its first answer is handed over (the loop: its run; agreement: its other answers)."""
    one = {r.id: at_rates(r, rates) for r in results if r.mode == "one-shot" and r.verdict != "error"}
    ratios = [at_rates(r, rates) / one[r.id] for r in results
              if r.mode == mode and r.rounds == 1 and one.get(r.id)]
    outside = [max(0.0, r.seconds - r.model_seconds) for r in results if r.mode == mode and r.rounds == 1]
    return {"steps": len(ratios), "vs_one_shot_median": quantile(ratios, 0.5),
            "vs_one_shot_max": max(ratios, default=0.0), "outside_model_median": quantile(outside, 0.5)}


def token_rates(results: list[StepResult]) -> tuple[float, float] | None:
    """The run's seconds a prompt token read and a reply token written, over every mode's calls, as the server
    timed them (None where it did not): one rate for all modes, whatever the load was when each ran."""
    read = sum(r.prompt_tokens - r.cached_tokens for r in results)
    written = sum(r.reply_tokens for r in results)
    reading, writing = sum(r.prompt_seconds for r in results), sum(r.reply_seconds for r in results)
    if not (read > 0 and written > 0 and reading > 0 and writing > 0):
        return None
    return reading / read, writing / written


def at_rates(r: StepResult, rates: tuple[float, float]) -> float:
    """A step's seconds with its model calls costed at the run's rates (`token_rates`): the prompt tokens the server
    read and the reply tokens it wrote, and the mode's time outside model calls (its runs and sandboxes) as measured.
    The load's changes between modes are taken out; a request's several replies are costed as if written one by one
    (written side by side they cost less)."""
    return ((r.prompt_tokens - r.cached_tokens) * rates[0] + r.reply_tokens * rates[1]
            + max(0.0, r.seconds - r.model_seconds))


def print_report(console, results: list[StepResult], figures: dict, opts) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=f"generation, {opts.model}", box=box.SIMPLE_HEAD,
                  caption="right: the variables and the value shown are the reference's; wrong: it ran, something "
                  "differs; crash: it raised or timed out; none: no code. fixed, unverified: the loop's status, with "
                  "how many of those are not right (a 'fixed' that is not right is a false claim); s/step (mean), "
                  "median, p90: the mode's own seconds a step, scoring not counted")
    table.add_column("", no_wrap=True)
    for name in ("n", "right", "%", "wrong", "crash", "none", "fixed (false)", "unverified (not right)", "calls",
                 "tokens", "s/step", "median", "p90"):
        table.add_column(name, justify="right", no_wrap=True)

    def row(label, f, style=None):
        table.add_row(label, str(f["steps"]), str(f["right"]), f"{f['right_rate']:.0%}", str(f["wrong"]),
                      str(f["crash"]), str(f["none"]), f"{f['claimed_fixed']} ({f['false_fixed']})",
                      f"{f['claimed_unverified']} ({f['unverified_not_right']})", str(f["calls"]), str(f["tokens"]),
                      f"{f['seconds_per_step']:.1f}", f"{f['seconds_median']:.1f}", f"{f['seconds_p90']:.1f}",
                      style=style)

    for mode in opts.modes:
        for group, f in figures["by_group"].get(mode, {}).items():
            row(f"{mode}: {group}", f)
        row(f"{mode}: all", figures["by_mode"][mode], style="bold")
        table.add_section()
    console.print(table)
    if opts.totals_only:
        console.print("each step not shown: held out (--totals-only); the steps are in --json's OUT, not to be read",
                      markup=False)
    for r in results if not opts.totals_only else ():
        if not r.right:
            console.rule(f"{r.mode}: {r.id} - {r.verdict} ({r.status}: {r.reason})"[:200], style="red")
            if r.why:
                console.print(f"why: {r.why}", markup=False, highlight=False)
            if r.answers:
                console.print(f"agreement: {r.agreeing} of {r.answers} independent answers"
                              + (f"; the next result beside it: {r.rival_verdict}" if r.rival is not None else ""),
                              markup=False)
            if r.code:
                console.print(r.code, markup=False, highlight=False)
    _summary_lines(console, figures, opts)


def _summary_lines(console, figures: dict, opts) -> None:
    """Each mode's figures in a line or two; then the modes' seconds at the run's rates, and the points."""
    for mode in opts.modes:
        f = figures["by_mode"][mode]
        console.print(f"{mode}: {f['right']} of {f['steps']} right ({f['right_rate']:.0%}); wrong {f['wrong']}, "
                      f"crash {f['crash']}, none {f['none']}, broken steps {f['errors']}; seconds a step: median "
                      f"{f['seconds_median']:.1f}, p90 {f['seconds_p90']:.1f}", markup=False)
        console.print(_time_text(mode, f, figures["by_mode"].get("one-shot")), markup=False)
        if f["unanimous"]:
            console.print(f"{mode}: K of K independent answers agree on {f['unanimous']} step(s), "
                          f"{f['unanimous_right']} of them right ({f['unanimous_precision']:.0%})", markup=False)
        if f.get("two_of_two"):
            console.print(f"{mode}: 2 of 2 independent answers agree (two codes, no check failing; a third not asked) "
                          f"on {f['two_of_two']} step(s), {f['two_of_two_right']} of them right", markup=False)
        if f["all_agree"]:
            console.print(f"{mode}: every answer asked agrees (2 or more, one code or several) on {f['all_agree']} "
                          f"step(s), {f['all_agree_right']} of them right", markup=False)
        if f["split"]:
            console.print(f"{mode}: the answers' results differ on {f['split']} step(s) (the next result shown beside "
                          f"the answer): the answer right on {f['split_right']}, the one beside it right on "
                          f"{f['split_rival_right']} more", markup=False)
    if "rates" in figures:
        console.print(_rates_text(figures, opts.modes), markup=False)
    for mode in opts.modes:
        if f"{mode}_minus_one_shot_points" in figures:
            console.print(f"{mode} - one-shot: {figures[f'{mode}_minus_one_shot_points']:+.1f} points", markup=False)


def _rates_text(figures: dict, modes: tuple[str, ...]) -> str:
    """Each mode's seconds a step with its model calls costed at the run's rates (`at_rates`)."""
    rates = figures["rates"]
    each = []
    for mode in modes:
        f = figures["by_mode"][mode]
        ratio = f" ({f['at_rates_vs_one_shot']:.2f}x one-shot's)" if f.get("at_rates_vs_one_shot") else ""
        one = f.get("one_round") or {}
        first = (f" (on its {one['steps']} step(s) of one round {one['vs_one_shot_median']:.2f}x one-shot's there, "
                 f"at most {one['vs_one_shot_max']:.2f}x)") if one.get("steps") else ""
        each.append(f"{mode} median {f['at_rates_median']:.1f} s{ratio}, p90 {f['at_rates_p90']:.1f} s{first}")
    return (f"at the run's rates ({1000 * rates['prompt_seconds_a_token']:.0f} ms a prompt token read, "
            f"{1000 * rates['reply_seconds_a_token']:.0f} ms a reply token written, over every mode's calls; the "
            f"load's changes taken out): " + "; ".join(each))


def _time_text(mode: str, f: dict, one: dict | None) -> str:
    """Where the mode's seconds went, summed over its steps, as far as the server said: reading prompts (and how
    much of them it read from its prompt cache), writing replies, the rest of the model calls; the code's runs;
    the rest (sandboxes made ready, the loop's own work). And its median against one-shot's, from the same run."""
    n = max(f["steps"], 1)
    cached = f", {f['cached_tokens']} of them read from the server's prompt cache " \
             f"({f['cached_tokens'] / f['prompt_tokens']:.0%})" if f["prompt_tokens"] else ""
    said = f["prompt_seconds"] + f["reply_seconds"]
    rest = max(0.0, f["model_seconds"] - said)
    server = (f" (reading prompts {f['prompt_seconds']:.0f} s, writing replies {f['reply_seconds']:.0f} s, the rest "
              f"{rest:.0f} s: the way there and back, the wait for a slot)") if said else ""
    other = max(0.0, f["seconds"] - f["model_seconds"] - f["run_seconds"])
    ratio = f"; median {f['seconds_median'] / one['seconds_median']:.2f}x one-shot's" \
        if one is not None and mode != "one-shot" and one["seconds_median"] else ""
    return (f"{mode}: {f['seconds']:.0f} s over {f['steps']} step(s){ratio}: model calls {f['model_seconds']:.0f} s"
            f"{server}, the code's runs {f['run_seconds']:.0f} s, the rest "
            f"{other:.0f} s; {f['calls'] / n:.1f} model calls and "
            f"{f['rounds'] / n:.1f} rounds a step, {f['prompt_tokens'] / n:.0f} prompt tokens a step{cached}, "
            f"{f['reply_tokens'] / n:.0f} reply tokens a step; load average {f['load_median']:.1f} (median), "
            f"{f['load_max']:.1f} (most)")


def write_json(path: str, results: list[StepResult], figures: dict, opts) -> None:
    data = {"steps_file": opts.generation, "model": opts.model, "api_base": opts.api_base, "modes": list(opts.modes),
            "max_rounds": opts.max_rounds, "timeout": opts.timeout, "seed": opts.options.seed, "perfect": opts.perfect,
            **figures,
            "results": [asdict(r) for r in results]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)


# ---------------------------------------------------------------- the command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-fixloop bench --generation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--generation", nargs="?", const=DEV_STEPS, required=True, metavar="FILE",
                        help="JSON-lines file of steps (id, setup, instruction, solution; optional group, names); "
                        "default: the dev steps shipped with the package (from 100 pandas puzzles)")
    parser.add_argument("--perfect", action="store_true",
                        help="instead of --model: a stand-in server on 127.0.0.1 that answers each step with its "
                        "reference solution (what the harness itself loses)")
    parser.add_argument("--mode", default="both",
                        help="loop, one-shot (one call given the loop's round-1 prompt, not run), both (default); "
                        "agreement (the loop with --agreement-samples K, default 3); jupyter-ai or mito-ai (one call "
                        "given that peer's generation prompt, quoted in peers.py, scored as one-shot is); all: loop, "
                        "one-shot and the peers; or several, comma-separated (one-shot,loop,agreement): each step "
                        "runs them in a rotating order")
    parser.add_argument("--cold-cache", action="store_true",
                        help="erase the llama-server's prompt cache before each mode of each step, so that no mode "
                        "reads a prompt another mode's call left there (the server started with --slot-save-path "
                        "DIR and --cache-ram 0)")
    add_loop_arguments(parser, "step")
    parser.add_argument("--agreement-samples", type=int, default=None, metavar="K",
                        help="loop mode: K independent answers a round, grouped by result, the largest group's "
                        "simplest handed over (1-8; default 1: off; the agreement mode: 3); reports each step's "
                        "agreement and how many 'K of K agree' answers are right")
    parser.add_argument("--agreement-more", type=int, default=None, metavar="N",
                        help="with --agreement-samples: answers asked besides the K where the two leading results "
                        "tie, until one leads (0-8; default 2)")
    parser.add_argument("--totals-only", action="store_true",
                        help="print the totals, not each step that is not right (its id, reason and code): for "
                        "held-out steps, which nobody may read (the default for the held-out steps shipped with the "
                        "package)")
    parser.add_argument("--case", action="append", default=[], metavar="ID", help="only this step (repeatable)")
    parser.add_argument("--group", action="append", default=[], help="only steps of this group (repeatable)")
    parser.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                        help="write every figure and step to OUT (and each step, as it finishes, to OUT.steps.jsonl)")
    parser.add_argument("--resume", action="store_true",
                        help="with --json: keep the steps OUT.steps.jsonl already holds (every chosen mode of them) "
                        "and run the others; the figures are of both")
    return parser


def parse_args(argv: list[str]):
    from jupyter_fixloop.options import resolve_model

    opts = build_parser().parse_args(argv)
    if opts.perfect and opts.model:
        raise FixloopError("--perfect is a model of its own: give --perfect or --model, not both")
    opts.model = resolve_model(opts.model)
    opts.modes = _modes(opts.mode)
    opts.totals_only = opts.totals_only or os.path.abspath(opts.generation) in HELD_OUT_FILES
    if AGREEMENT in opts.modes and opts.agreement_samples is not None and opts.agreement_samples < 2:
        raise FixloopError("the agreement mode asks K answers a round: give --agreement-samples 2 or more")
    if opts.cold_cache and (opts.perfect or not opts.api_base):
        raise FixloopError("--cold-cache erases a llama-server's prompt cache: give its --api-base")
    if opts.resume and not opts.json_out:
        raise FixloopError("--resume takes back the steps of --json OUT: give --json too")
    return opts


def _modes(text: str) -> tuple[str, ...]:
    """The modes `--mode` names: both, all, one mode, or several comma-separated (each once)."""
    if text in ("both", "all"):
        return MODES if text == "both" else ALL_MODES
    modes = tuple(m.strip() for m in text.split(","))
    unknown = [m for m in modes if m not in KNOWN_MODES]
    if unknown or len(set(modes)) != len(modes):
        what = f"no mode {unknown[0]!r}" if unknown else "a mode given twice"
        raise FixloopError(f"--mode {text}: {what}; the modes: {', '.join(KNOWN_MODES)}, both, all (or several, "
                           "comma-separated)")
    return modes


def main(argv: list[str]) -> int:
    try:
        opts = parse_args(argv)
        steps = _chosen(read_steps(opts.generation), opts)
    except (OSError, FixloopError) as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        if opts.perfect:
            from .perfect import MODEL, PerfectModel

            server = stack.enter_context(PerfectModel({s.instruction: s.solution for s in steps}))
            opts.model, opts.api_base = MODEL, server.url
            os.environ.setdefault("OPENAI_API_KEY", "not-needed-by-the-stand-in")
        return _run(steps, opts)


def _chosen(steps: list[Step], opts) -> list[Step]:
    unknown = sorted(set(opts.case) - {s.id for s in steps})
    if unknown:
        raise FixloopError(f"no step {unknown[0]!r} in {opts.generation}")
    steps = [s for s in steps if (not opts.case or s.id in opts.case) and (not opts.group or s.group in opts.group)]
    if not steps:
        raise FixloopError("no steps to run")
    return steps


def _run(steps: list[Step], opts) -> int:
    from rich.console import Console

    from jupyter_fixloop.model import check_model

    try:
        check_model(opts.model, opts.api_base)  # one line, before any step runs
        if opts.cold_cache:
            erase_prompt_cache(opts.api_base)
    except FixloopError as exc:
        print(f"jupyter-fixloop bench: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    kept = _finished(opts.json_out + ".steps.jsonl", steps, opts.modes) if opts.resume else []
    done = {r.id for r in kept}
    todo = [s for s in steps if s.id not in done]
    results = kept + (_run_with_progress(todo, opts) if todo else [])
    figures = summarize(results)
    figures["wall_seconds"] = time.perf_counter() - started
    console = Console()
    print_report(console, results, figures, opts)
    if opts.json_out:
        write_json(opts.json_out, results, figures, opts)
        console.print(f"figures written to {opts.json_out}")
    return 0


def _finished(path: str, steps: list[Step], modes: tuple[str, ...]) -> list[StepResult]:
    """The results an earlier run wrote to `path` for the chosen steps, of the steps it finished in every
    chosen mode (the last line of a step and mode wins)."""
    chosen, found = {s.id for s in steps}, {}
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as f:
        for line in f:
            r = StepResult(**json.loads(line))
            if r.id in chosen and r.mode in modes:
                found[r.id, r.mode] = r
    whole = {i for i in chosen if all((i, m) in found for m in modes)}
    order = {s.id: n for n, s in enumerate(steps)}
    return sorted((r for (i, _), r in found.items() if i in whole), key=lambda r: (order[r.id], modes.index(r.mode)))


def _run_with_progress(steps: list[Step], opts) -> list[StepResult]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("right {task.fields[right]}"))
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(f"generation {opts.model}", total=len(steps), right="")
        right: dict[str, int] = dict.fromkeys(opts.modes, 0)

        def on_step(step, done):
            for r in done:
                right[r.mode] += r.right
            progress.update(task, advance=1, right=", ".join(f"{m} {n}" for m, n in right.items()))
            if opts.json_out:  # a long run stopped early keeps the steps it finished
                with open(opts.json_out + ".steps.jsonl", "a", encoding="utf-8") as f:
                    f.writelines(json.dumps(asdict(r)) + "\n" for r in done)

        return run_bench(steps, opts, on_step)

"""A scikit-learn estimator's repr saved by a version before 0.23, compared parameter by parameter.

scikit-learn printed every parameter of an estimator until 0.23 (`Perceptron(alpha=0.0001, ...,
n_iter=40, n_jobs=1, ...)`); since then it prints the ones set away from their default
(`print_changed_only=True`). A repaired cell shows the new repr, so its lines never match the saved
ones. The run also reports the repr scikit-learn prints with `print_changed_only=False` (the kernel's
runner: `estimator`), and the two are compared here by parameter:

- a parameter the run sets (in its changed-only repr) must have the saved value; one that differs is
  evidence against the fix;
- a parameter the run leaves at today's default is compared with the full repr; a saved value that
  differs there is scikit-learn's default that changed (`n_jobs=1` then, `None` now), said apart;
- a saved parameter that is gone and whose value a parameter the run sets now has is a rename (the
  repair's `n_iter=40` -> `max_iter=40`); one set by the run and not saved was added since;
- a saved parameter that is gone with nothing in its place, or one whose value cannot be seen (no full
  repr), leaves the comparison undecided: the saved output is then no evidence either way.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

_CALL = re.compile(r"([A-Za-z_]\w*)\((.*)\)", re.DOTALL)
_KEYWORD = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_NESTED = re.compile(r"[A-Za-z_]\w*\(")  # a call inside a value: a nested estimator
_OPEN, _CLOSE = "([{", ")]}"
REL_TOL = 1e-3  # as receipt/saved.py: printed numbers are rounded
MAX_NAMED = 4  # parameters named per kind in the words


@dataclass(frozen=True)
class EstimatorRepr:
    """`Name(key=value, ...)` as scikit-learn prints an estimator: its class name and its parameters,
    each value's text with its whitespace collapsed."""

    name: str
    params: tuple[tuple[str, str], ...]

    @property
    def keys(self) -> dict[str, str]:
        return dict(self.params)


@dataclass(frozen=True)
class Comparison:
    """What comparing a saved estimator repr with a run's found, parameter by parameter.

    `matches`: True (every parameter the run sets has its saved value, nothing saved unaccounted for),
    False (one the run sets differs: `differ`), None (undecided: `unseen` saved parameters whose value
    today cannot be seen or that are gone with nothing in their place)."""

    name: str
    full: bool  # the run's full repr was there to compare with
    same: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str, str], ...] = ()  # (saved name, name now, value)
    added: tuple[str, ...] = ()  # set by the run, not in the saved repr
    defaults: tuple[tuple[str, str, str], ...] = ()  # (name, saved, now): scikit-learn's default changed
    differ: tuple[tuple[str, str, str], ...] = ()  # (name, saved, now): set by the run to another value
    unseen: tuple[str, ...] = ()  # saved, and nothing here to compare it with

    @property
    def matches(self) -> bool | None:
        if self.differ:
            return False
        return None if self.unseen else True

    @property
    def words(self) -> str:
        """Exactly what was compared, for the receipt."""
        run = "this run's repr with print_changed_only=False" if self.full else "the parameters this run sets"
        parts = [f"{self.name}'s parameters compared one by one, the saved repr (scikit-learn < 0.23's, every "
                 f"parameter) with {run}: {len(self.same)} the same"]
        parts += [f"{old} saved = {new} now ({value})" for old, new, value in self.renamed[:MAX_NAMED]]
        if self.differ:
            parts.append("differ: " + _listed(f"{n} ({s} saved, {v} now)" for n, s, v in self.differ))
        if self.defaults:
            parts.append("scikit-learn's default changed, not compared: "
                         + _listed(f"{n} ({s} saved, {v} now)" for n, s, v in self.defaults))
        if self.added:
            parts.append("set here, not in the saved repr (added since): " + _listed(self.added))
        if self.unseen:
            parts.append("not comparable (gone, or not shown here): " + _listed(self.unseen))
        return "; ".join(parts)


def _listed(items) -> str:
    items = list(items)
    more = f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else ""
    return ", ".join(items[:MAX_NAMED]) + more


def parse(text: str) -> EstimatorRepr | None:
    """The estimator repr `text` is (`Perceptron(eta0=0.1, max_iter=40)`), or None when it is not one:
    a single call with keyword arguments only."""
    m = _CALL.fullmatch(" ".join(text.split()))
    if m is None:
        return None
    params, parts = [], _split(m.group(2))
    for part in parts if parts is not None else [""]:
        kw = _KEYWORD.fullmatch(part.strip())
        if kw is None:
            return None
        params.append((kw.group(1), kw.group(2).strip()))
    return EstimatorRepr(m.group(1), tuple(params))


def _split(args: str) -> list[str] | None:
    """`args` split at its top-level commas (not inside brackets or quotes); [] when empty, None when its
    brackets do not balance (`a=1) + g(b=2`)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(args):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            parts.append(args[start:i])
            start = i + 1
    tail = args[start:]
    if depth or quote:
        return None
    return parts + [tail] if tail.strip() or parts else parts


def same_value(saved: str, now: str) -> bool | None:
    """Whether two printed parameter values are the same: True for equal text or numbers within a
    tolerance, or a nested estimator whose parameters compare the same (`compare`); False when they
    differ; None when a nested estimator, alone or in a list, cannot be compared as a whole here."""
    if saved == now:
        return True
    inner_saved, inner_now = parse(saved), parse(now)
    if inner_saved and inner_now:
        return compare(inner_saved, inner_now, inner_now).matches
    if _NESTED.search(saved) or _NESTED.search(now):
        return None
    if _NUMBER.sub("#", saved) != _NUMBER.sub("#", now):
        return False
    return all(math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-12)
               for a, b in zip(_NUMBER.findall(saved), _NUMBER.findall(now)))


def compare(saved: EstimatorRepr, changed: EstimatorRepr, full: EstimatorRepr | None,
            passed: frozenset[str] | None = None) -> Comparison:
    """`saved` (every parameter, as scikit-learn < 0.23 printed it) against a run's `changed` repr (the
    parameters set away from today's default) and its `full` one (print_changed_only=False; None when the
    run did not say). A value is compared with its full form when there is one (nested estimators print
    every parameter). `passed`: the keywords the code (the user's cell and the run's) passes to the class,
    None when unknown; a value at today's default that differs from the saved one is scikit-learn's default
    that changed only when neither passes it (a cell passing `loss='hinge'`, saved `loss='log'`, differs)."""
    was, set_now = saved.keys, changed.keys
    every = full.keys if full is not None and full.name == changed.name else {}
    renamed = _renames(was, set_now, every) if full is not None else []  # gone or not: only the full repr says
    moved = {old for old, _, _ in renamed} | {new for _, new, _ in renamed}
    found: dict[str, list] = {"same": [], "defaults": [], "differ": [], "unseen": []}
    for key, value in saved.params:
        if key in moved:
            continue  # a rename, or the name a rename took (its saved value was the old default)
        now = every.get(key, set_now.get(key))
        same = None if now is None else same_value(value, now)
        kind = "same" if same else "unseen" if same is None else _differing(key, set_now, passed)
        found[kind].append((key, value, now or ""))
    added = tuple(k for k in set_now if k not in was and k not in moved)
    return Comparison(saved.name, full is not None, tuple(k for k, _, _ in found["same"]), tuple(renamed), added,
                      tuple(found["defaults"]), tuple(found["differ"]), tuple(k for k, _, _ in found["unseen"]))


def _differing(key: str, set_now: dict[str, str], passed: frozenset[str] | None) -> str:
    """What a saved value that differs from the run's is: set by the run ("differ"), scikit-learn's
    default that changed ("defaults": no code passes it), or not known ("unseen")."""
    if key in set_now or (passed is not None and key in passed):
        return "differ"
    return "unseen" if passed is None else "defaults"


def passed_keywords(codes, name: str) -> frozenset[str] | None:
    """The keywords `codes` pass to `name(...)` (a class called by name or as `module.name`), or None
    when that is not known: a code that does not parse, no such call, positional arguments or `**`."""
    found: set[str] = set()
    calls = 0
    for code in codes:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == name:
                if node.args or any(k.arg is None for k in node.keywords):
                    return None
                found.update(k.arg for k in node.keywords)
                calls += 1
    return frozenset(found) if calls else None


def _renames(was: dict[str, str], set_now: dict[str, str], every: dict[str, str]) -> list:
    """(saved name, name now, value) for each saved parameter that is gone (not a parameter today, as
    the full repr says) whose value, other than None, a parameter the run sets has, one the saved repr
    lacks or had at another value (0.19's `n_iter=40, max_iter=None` -> `max_iter=40`)."""
    found, taken = [], set()
    for key, value in was.items():
        if key in set_now or key in every or value == "None":
            continue
        for new, now in set_now.items():
            if new in taken or new in was and same_value(was[new], now) is not False:
                continue
            if same_value(value, now) is True:
                found.append((key, new, now))
                taken.add(new)
                break
    return found


def estimator_check(saved_text: str, shown: str | None, full: str | None, codes=()) -> Comparison | None:
    """The parameter-by-parameter comparison of a saved text that is an estimator's full repr with the
    run's repr of the same estimator (`shown`, `full`; `codes`: the user's cell and the code that ran),
    or None when either is not an estimator repr of the same class, or the saved one lists no more
    parameters than the run shows (not an old full repr)."""
    saved, changed = parse(saved_text), parse(shown or "")
    if saved is None or changed is None or saved.name != changed.name or not saved.params:
        return None
    if not set(saved.keys) - set(changed.keys):
        return None
    return compare(saved, changed, parse(full) if full else None, passed_keywords(codes, saved.name))

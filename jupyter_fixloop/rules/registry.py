"""Where the built-in engine's repairs declare themselves: `@repair(kind, turn)` on each, where it is defined.

A repair takes the code that was run and the parsed receipt and returns the repaired code or None. Its
declaration says what it is (`MECHANICAL`: the one right answer, a removed API, a missing import, a syntax
slip; `GUESS`: the likeliest of several readings, which only a check can confirm: the engine says so) and
when it is tried: its turn, a stage below plus its place in it, the most specific first. Repairs of one
turn are tried in the order they are defined (one module only: the generic rewriters). The words shown to
people are the first sentence of its docstring, unless it says other `words`.
`repairs.REPAIRS` and `repairs.KIND` are derived from these declarations.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

MECHANICAL = "mechanical"  # one right answer: a removed API, a missing import, a syntax slip
GUESS = "guess"  # the likeliest of several readings: only a check can say it is the meant one

# the stages, in the order they are tried (a repair's turn: its stage plus its place in it, gaps of 10)
FIRST = 1000  # what the run itself shows: code that does not compile, a write that never reached the frame,
# what a filter, merge or concat matched
NAMES = 2000  # a module or name the code lacks: an import, a misspelt name
DRIFT = 3000  # code written for an older library: the error's own words, the libraries' tables and knowledge
CALLS = 4000  # attributes and calls: a column read as an attribute, a method not called, a value thrown away
DATA = 5000  # data and indexes: dtypes, text read as numbers or dates, keys, masks, loops that overshoot
OUTPUTS = 6000  # a run without error whose output the values show wrong


@dataclass(frozen=True)
class Declared:
    """One repair as it declared itself."""

    function: Callable
    kind: str
    turn: int
    words: str
    order: int  # when it was declared: the order of repairs of one turn


DECLARED: dict[Callable, Declared] = {}


def repair(kind: str, turn: int, words: str = "", errors: tuple[str, ...] = ()):
    """Declare a repair where it is defined: its kind (`MECHANICAL` or `GUESS`), its turn (a stage plus
    its place in it), when its docstring's first sentence is not what people should read, its words, and
    when it answers only some errors, their names (`("IndexError",)`: None for any other receipt)."""
    if kind not in (MECHANICAL, GUESS):
        raise ValueError(f"a repair is {MECHANICAL!r} or {GUESS!r}, not {kind!r}")

    def declare(function: Callable) -> Callable:
        if errors:  # another error's receipt: None, before the repair reads it
            function = functools.wraps(function)(
                lambda code, receipt, answer=function: answer(code, receipt) if receipt.ename in errors else None)
        DECLARED[function] = Declared(function, kind, turn, words or docstring_words(function), len(DECLARED))
        return function

    return declare


def docstring_words(function: Callable) -> str:
    """What a repair does, in its own words: the first sentence of its docstring's first paragraph, on one
    line and whole (a docstring's first line alone may stop mid-sentence: "..., a single")."""
    paragraph = " ".join((function.__doc__ or function.__name__).strip().split("\n\n")[0].split())
    return re.split(r"(?<=[.;])\s", paragraph)[0].rstrip(";")


def in_order() -> list[Callable]:
    """The declared repairs in the order they are tried: by turn, then as declared. Repairs sharing a turn
    must come from one module (their order of definition); across modules it would be the order of import."""
    declared = sorted(DECLARED.values(), key=lambda d: (d.turn, d.order))
    for a, b in zip(declared, declared[1:]):
        if a.turn == b.turn and a.function.__module__ != b.function.__module__:
            raise ValueError(f"{a.function.__module__}.{a.function.__name__} and {b.function.__module__}."
                             f"{b.function.__name__} share turn {a.turn}: give one of them its own")
    return [d.function for d in declared]

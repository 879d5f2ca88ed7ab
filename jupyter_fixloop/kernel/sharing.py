"""Which of the user's variables a loop shares with its sandboxes, decided before any candidate runs.

The set is what the user's own code reads: the original cell, the checks and the following cells
(their free names), names close to the words of a generation instruction, close matches of a name
the original run found missing (`dff` -> `df`), the imported modules, and names given with
`--share`. A candidate never widens it: one that reads a name left out gets a receipt line naming
it (never its value), so a hostile candidate cannot pull `db_password` or IPython's `_i1` (the
history, maybe a pasted key) into the sandbox and from there into what the model reads.

Stdlib only: it also runs in batch mode's notebook kernel (`kernel/checkpoint.mirror`).
"""

from __future__ import annotations

import builtins
import difflib
import re
from collections.abc import Iterable

from .snapshot import free_names

# IPython's history and shell names: shared only when the cell, a check or --share names them
HISTORY = frozenset({"_", "__", "___", "_i", "_ii", "_iii", "_oh", "_ih", "_dh", "In", "Out", "exit", "quit",
                     "get_ipython"})
_HISTORY_NUMBERED = re.compile(r"_i?\d+")
INSTRUCTION_CUTOFF = 0.8  # instruction words name variables loosely ("the frame df")
MISSING_CUTOFF = 0.6  # a NameError's typo is often further off (`dff`, `prices_list`)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_history(name: str) -> bool:
    """IPython's `In`, `Out`, `_i1`, `_3`, `_ii`, ...: what was typed and shown, not the user's data."""
    return name in HISTORY or bool(_HISTORY_NUMBERED.fullmatch(name))


def shared_names(available: Iterable[str], *, code: Iterable[str] = (), instruction: str | None = None,
                 missing: Iterable[str] = (), modules: Iterable[str] = (), share: Iterable[str] = (),
                 withheld: Iterable[str] = ()) -> frozenset[str]:
    """The names of `available` (the user's namespace) a loop shares with its sandboxes.

    `code`: the original cell, the checks and the following cells; `missing`: names the original run
    reported undefined; `modules`: the names bound to modules; `share`: names the user gave;
    `withheld`: secrets and live resources (kernel/namespace.py), never shared for resembling a word
    of the instruction or a missing name, only when the user's code or `share` names them."""
    available = frozenset(n for n in available if isinstance(n, str))
    explicit = set(share)
    for source in code:
        explicit |= free_names(source)
    withheld = frozenset(withheld)
    data = sorted(n for n in available if not is_history(n) and n not in withheld)
    found = (explicit | set(modules)) & available
    for word in set(_WORD.findall(instruction or "")):
        found.update(difflib.get_close_matches(word, data, n=3, cutoff=INSTRUCTION_CUTOFF))
    for name in missing:
        found.update(difflib.get_close_matches(name, data, n=3, cutoff=MISSING_CUTOFF))
    return frozenset(n for n in found if not is_history(n) or n in explicit)


def undefined_names(source: str, available: Iterable[str]) -> tuple[str, ...]:
    """Names `source` reads that neither `available` nor the builtins hold: the NameErrors its run
    would report, known without running it (where the run cannot be watched first)."""
    known = set(available) | set(dir(builtins))
    return tuple(sorted(n for n in free_names(source) if n not in known))

"""Which of several near spellings was meant: the evidence that breaks a tie, or "cannot tell".

A misspelt name (`valz`) is often about as near to two names (`vals`, the builtin `eval`). What the
receipt and the cell show decides, strongest first: a value that can serve where the typo stands
(iterable inside `sum(...)`, subscriptable before `[...]`, callable before `(...)`) beats one that
cannot; a name the cell itself binds beats one from elsewhere; a user's name beats a builtin. Only
like candidates left after all three (two lists, both bound elsewhere) are a true tie: "cannot tell".
"""

from __future__ import annotations

import ast
import builtins
import difflib

from ..kernel import ipysyntax
from .edits import CannotTell, ParsedReceipt, on_line, parse
from .tables import ITERATING

TIE = 0.05  # two spellings whose likeness to the word differs by less than this are equally near


def likeness(word: str, other: str) -> float:
    return difflib.SequenceMatcher(None, word, other).ratio()


def slips(word: str, other: str) -> int:
    """How many keys apart two spellings are: letters added, dropped, changed or two swapped (the optimal string
    alignment distance); `sotr` -> `sort` is 1, `first` -> `hist` 2."""
    row = list(range(len(other) + 1))
    before: list[int] = []
    for i, a in enumerate(word, 1):
        now = [i]
        for j, b in enumerate(other, 1):
            now.append(min(row[j] + 1, now[j - 1] + 1, row[j - 1] + (a != b)))
            if i > 1 and j > 1 and a == other[j - 2] and word[i - 2] == b:
                now[j] = min(now[j], before[j - 2] + 1)
        before, row = row, now
    return row[-1]


def a_slip(word: str, other: str) -> bool:
    """Whether `other` is what `word` reads as once a slip of the keys is undone: one slip in a short name, one
    more per four letters (`lenght` -> `length`, `coef` -> `coef_`; not `first` -> `hist`, another word)."""
    return slips(word, other) <= max(1, len(word) // 4)


def one_nearest(word: str, first: str, others) -> None:
    """Raise CannotTell when another of `others` is about as near to the misspelt `word` as `first`."""
    near_first = likeness(word, first)
    for other in sorted(set(others) - {first, word}):
        if near_first - likeness(word, other) < TIE:
            raise CannotTell(f"{word!r} is as near to {first!r} as to {other!r}: which one was meant?")


def meant_name(code: str, receipt: ParsedReceipt, name: str, close: list[str]) -> str:
    """The one of the defined names `close` the misspelt `name` meant: the nearest, or among those about
    as near, the one the evidence favours; CannotTell when like candidates stay tied."""
    best = max(likeness(name, c) for c in close)
    group = sorted((c for c in close if best - likeness(name, c) < TIE), key=lambda c: -likeness(name, c))
    kinds = kinds_of(receipt, name)
    need = use_of(code, receipt.lineno, name)
    bound = bound_in(code)
    for favoured in (
        lambda c: need is None or c not in kinds or need in kinds[c],
        lambda c: c in bound,
        lambda c: not (kinds[c].startswith("builtin ") if c in kinds else c not in bound and hasattr(builtins, c)),
    ):
        narrowed = [c for c in group if favoured(c)]
        group = narrowed or group
    if len(group) > 1:
        raise CannotTell(f"{name!r} is as near to {group[0]!r} as to {group[1]!r}: which one was meant?")
    return group[0]


def kinds_of(receipt: ParsedReceipt, name: str) -> dict[str, str]:
    """What the sandbox said the names close to `name` are: {'vals': 'list: iterable, subscriptable'}."""
    prefix = f"what the names close to {name!r} are: "
    for line in receipt.context:
        if line.startswith(prefix):
            try:
                kinds = ast.literal_eval(line[len(prefix):])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return {}
            return {k: v for k, v in kinds.items() if isinstance(v, str)} if isinstance(kinds, dict) else {}
    return {}


def use_of(code: str, lineno: int | None, name: str) -> str | None:
    """What the cell does with `name` where it fails: calls it ('callable'), subscripts it
    ('subscriptable'), iterates over it ('iterable'); None when nothing says."""
    tree = parse(code)
    if tree is None:
        return None
    for parent in ipysyntax.walk(tree):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Name) and child.id == name and on_line(child, lineno):
                need = _need(parent, child)
                if need:
                    return need
    return None


def _need(parent: ast.AST, node: ast.Name) -> str | None:
    if isinstance(parent, ast.Call) and parent.func is node:
        return "callable"
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return "subscriptable"
    iterated = isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ITERATING \
        and node in parent.args or isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and (
            parent.iter is node) or isinstance(parent, ast.Starred)
    return "iterable" if iterated else None


def bound_in(code: str) -> set[str]:
    """The names the cell binds: assigned, looped over, imported, defined."""
    tree = parse(code)
    if tree is None:
        return set()
    found = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return found

"""Repairs of the built-in engine: small functions that each read a receipt and fix one cause.

Each repair takes the code that was run and the parsed receipt, and returns the repaired code or
None when it does not apply. They read only what a receipt says (the error, the failing line, the
context gathered in the sandbox) and general knowledge held in `tables` and `changed`, never a
benchmark's id or text. One repair per round: a cell with two bugs takes two rounds, and the loop
reruns everything after each. `REPAIRS` is the order they are tried in, the most specific first: each
repair declares its kind and turn where it is defined (`@repair`, registry.py), and both are derived here.

Where they live: `syntax` (code that does not compile), `names` (imports, names,
attributes, keys, removed APIs), `calls` (keywords, operators, loops, returns),
`data` (pandas/numpy data cleaning, writes that never reach the frame), `drift` (code written for an older
library, from the error's own words), `matches` (what a filter, merge or concat matched, read in the sandbox:
kernel/matches.py), `traced` (wrong outputs, from the values a receipt shows), `generic` (rewriters driven by the
knowledge base), `told` (what the raised error itself says to do), `patterns` (repairs written as data,
patterns.json); the tables they read are data too (tables.json, changed.json);
`edits` reads receipts and edits code safely.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..kernel import ipysyntax
from ..kernel.ipysyntax import readable
from ..receipt.smells import invisible_added
from ..receipt.values import Receipt
from . import calls, data, drift, exported, generic, matches, names, patterns, said, syntax, told, traced  # noqa: F401
from .edits import CannotTell, ParsedReceipt
from .registry import DECLARED, GUESS, MECHANICAL, in_order

__all__ = ["GUESS", "KIND", "MECHANICAL", "REPAIRS", "ParsedReceipt", "first_repair", "propose"]

# the families above declare their repairs where they are defined (registry.py): the order they are tried in
# and what each is (a guess never claims more than "runs" without a check: the engine says so) are derived
REPAIRS = in_order()
KIND = {function: declared.kind for function, declared in DECLARED.items()}


def first_repair(code: str, receipt: Receipt):
    """(repair, repaired code) of the first repair that changes the code, or (None, None)."""
    repair, fixed, _ = propose(code, receipt)
    return repair, fixed


def _with_strings(code: str) -> str:
    """`code` and the values of its string literals: `'\\ufeffid'` written as an escape holds a BOM too."""
    tree = ipysyntax.parsed(code)  # shared, read only
    if tree is None:
        return code
    return (
        code
        + "\n"
        + "\n".join(n.value for n in ipysyntax.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    )


def propose(code: str, receipt: Receipt, modules: Mapping[str, str] | None = None):
    """(repair, repaired code, '') of the first repair that changes the code; else (None, None, doubt),
    where `doubt` is what a repair that fits could not tell ('' when none fits). `receipt`: the typed
    receipt of the run, read from its fields (`ParsedReceipt.of`), never from its text.
    A cell with IPython syntax is repaired as Python, line for line (`ipysyntax.readable`): a magic or
    shell line stands as IPython's call, a `%timeit` statement or `%%time` body as itself.
    `modules`: the names the namespace binds to modules (`{"pd": "pandas"}`): a repair that writes `pd.`
    imports it only when the namespace lacks it."""
    return propose_parsed(code, ParsedReceipt.of(receipt, modules))


def propose_parsed(code: str, parsed: ParsedReceipt):
    """`propose` for a receipt already read into its parts (a module's error, read from batch mode's run)."""
    view = readable(code)
    if view is None:  # a `%%bash`-like cell: no Python to repair
        return None, None, ""
    doubt = ""
    for repair in REPAIRS:
        try:
            fixed = view.back(repair(view.python, parsed) or view.python)
        except CannotTell as exc:
            doubt = doubt or str(exc)
            fixed = None
        except Exception:  # noqa: BLE001 - one repair that cannot read this code must not stop the others
            fixed = None
        if fixed is not None and fixed.strip() != code.strip():
            hidden = invisible_added(_with_strings(code), _with_strings(fixed))
            if hidden:  # a name with a BOM or a zero-width space in it: the fix is in how the data is read
                doubt = doubt or (f"the fix would write an invisible character ({hidden}) into the code: the data's "
                                  "names hold it (a BOM: read the file with encoding='utf-8-sig'; "
                                  "else strip the names)")
                continue
            return repair, fixed, ""
    return None, None, doubt


def repair_module(source: str, error: str, lineno: int, line: str) -> tuple[str, str, str] | None:
    """(the repair's name, its kind, the repaired source) of a module of the notebook's own whose line
    `lineno` raised `error` ("ImportError: cannot import name ...", all its lines: the removed-API repairs read
    the replacement the library names, as for a cell), read as a cell's receipt; None when no repair fits."""
    first = error.splitlines()[0] if error else ""
    ename, _, message = (error or "").partition(": ")  # the whole message: numpy names the replacement on line 2
    parsed = ParsedReceipt(headline=first, ename=ename, evalue=first.partition(": ")[2], lineno=lineno,
                           line=line.strip(), text=f"{first}\n  at line {lineno} of the cell: {line.strip()}",
                           message=message)
    repair, fixed, _ = propose_parsed(source, parsed)
    return (repair.__name__, KIND.get(repair, GUESS), fixed) if repair is not None else None

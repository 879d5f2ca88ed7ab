"""Rewriters that do what the raised error itself tells: a name removed from a module imported as the one its
library says to use ("`np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead."), a value the message
says to try ("threshold must be non-NAN, try sys.maxsize"), a function it says to call instead ("use frombuffer
instead"), and a pandas extension array handed to another library that indexes it as an ndarray (pandas 3's
strings: `.values` is no ndarray; pandas says "use .to_numpy()"). Each reads the message, the library's own
`__getattr__` words or the frames it raised in, never a cell's text."""

from __future__ import annotations

import ast
import builtins
import re

from .edits import (
    ParsedReceipt,
    calls_on_line,
    imported_as,
    imports_from,
    insert_import,
    parse,
    replace_node,
    source_of,
)
from .names import import_optional
from .registry import DRIFT, MECHANICAL, repair
from .tables import CANNOT_IMPORT, REMOVED_ATTRIBUTES

USE_INSTEAD = re.compile(r"[Uu]se `(?:\w+\.)?(\w+)` instead")  # numpy 2's own words: "Use `np.nan` instead."
# numpy 1.24's: "`np.float` was a deprecated alias for the builtin `float`. ..., use `float` by itself."
BUILTIN_ALIAS = re.compile(r"alias for the builtin `(\w+)`.*\buse `\1` by itself", re.S)


def _refused(module, name: str) -> str:
    """What a module's `__getattr__` says of a name it lacks (its own words), or ''."""
    try:
        getattr(module, name)
    except AttributeError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - a module's __getattr__ may raise anything: then it said nothing
        return ""
    return ""


def said_instead(module: str, name: str) -> str | None:
    """The name of `module` that its library says to use for `name`, which it no longer has: the module's own
    `__getattr__` message (numpy 2: "Use `np.nan` instead."), else the table of removed attributes whose
    replacement is another attribute of that module (`np.NAN`, which numpy 2 removed without a word)."""
    found = import_optional(module)
    if found is None or hasattr(found, name):
        return None
    said = USE_INSTEAD.search(_refused(found, name))
    if said and hasattr(found, said.group(1)):
        return said.group(1)
    table = re.fullmatch(r"\{m\}\.(\w+)", REMOVED_ATTRIBUTES.get(module, {}).get(name, ""))
    return table.group(1) if table and hasattr(found, table.group(1)) else None


@repair(MECHANICAL, DRIFT + 235)
def removed_import(code: str, receipt: ParsedReceipt) -> str | None:
    """`from numpy import NaN, NAN`, names their library removed, imported as the names it says to use instead
    under the old names (`from numpy import nan as NaN, nan as NAN`): the library's own words, numpy 2's "Use
    `np.nan` instead."; one it says was an alias of the builtin of that name, left out for the builtin (`from
    numpy import random, float` -> `from numpy import random`: numpy 1.24's "`np.float` was a deprecated alias
    for the builtin `float`. ..., use `float` by itself")."""
    found = CANNOT_IMPORT.search(receipt.evalue) if receipt.ename == "ImportError" else None
    tree = parse(code)
    if not found or tree is None:
        return None
    module = found.group(2)
    for node in imports_from(tree, receipt.lineno, module):
        news = [said_instead(module, alias.name) for alias in node.names]
        builtin = [not a.asname and _builtin_alias(module, a.name) for a in node.names]
        if any(news) or any(builtin):
            names = ", ".join(imported_as(new or alias.name, alias) for new, alias, gone in zip(
                news, node.names, builtin) if not gone)
            return replace_node(code, node, f"from {module} import {names}" if names else "pass")
    return None


def _builtin_alias(module: str, name: str) -> bool:
    """Whether `module` no longer has `name` and says it was an alias of the builtin of that name."""
    found = import_optional(module)
    said = BUILTIN_ALIAS.search(_refused(found, name)) if found is not None and not hasattr(found, name) else None
    return bool(said) and said.group(1) == name and name in dir(builtins)


TRY_INSTEAD = re.compile(r"\b(\w+) must be [^,;.]+[,;] try ([A-Za-z_][\w.]*)")  # numpy: "threshold must be ..."


@repair(MECHANICAL, DRIFT + 236)
def message_try(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword's value the error refuses, as the value its message says to try: numpy's "threshold must be
    non-NAN, try sys.maxsize for untruncated representation" -> `threshold=sys.maxsize`."""
    said = TRY_INSTEAD.search(receipt.evalue) if receipt.ename in ("ValueError", "TypeError") else None
    tree = parse(code)
    if not said or tree is None:
        return None
    keyword, value = said.groups()
    root, _, attr = value.partition(".")
    if attr and not hasattr(import_optional(root), attr.split(".")[0]):
        return None
    for call in calls_on_line(tree, receipt.lineno):
        given = next((k for k in call.keywords if k.arg == keyword), None)
        if given is not None and source_of(code, given.value) != value:
            fixed = replace_node(code, given.value, value)
            imported = attr and not any(isinstance(n, ast.Import) and any(a.name == root and not a.asname
                                                                          for a in n.names) for n in ast.walk(tree))
            return insert_import(fixed, f"import {root}") if imported else fixed
    return None


USE_OTHER = re.compile(r"\buse `?([A-Za-z_]\w*)`?(?:\(\))? instead\b")  # "..., use frombuffer instead"


@repair(MECHANICAL, DRIFT + 238)
def message_use(code: str, receipt: ParsedReceipt) -> str | None:
    """A function whose error names it and says to call another of its module instead: numpy's "The binary mode of
    fromstring is removed, use frombuffer instead" -> `np.frombuffer(...)`, the same arguments."""
    said = USE_OTHER.search(receipt.evalue) if receipt.ename in ("ValueError", "TypeError") else None
    tree = parse(code)
    if not said or tree is None:
        return None
    new = said.group(1)
    for call in calls_on_line(tree, receipt.lineno):
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr != new
                and func.value.id in receipt.modules and re.search(rf"\b{func.attr}\b", receipt.evalue)):
            continue
        if callable(getattr(import_optional(receipt.modules[func.value.id]), new, None)):
            return replace_node(code, func, f"{func.value.id}.{new}")
    return None


EXTENSION_ARRAY = re.compile(r"^(\w+) = <\w+Array>$")  # kernel/facts.py's fact: `y = <ArrowStringArray>`


@repair(MECHANICAL, DRIFT + 237)
def extension_array_argument(code: str, receipt: ParsedReceipt) -> str | None:
    """A pandas array that is no ndarray (pandas 3's strings: `.values` gives an `ArrowStringArray`) handed to
    another library, which failed indexing it: given as `.to_numpy()`, the NumPy array pandas says to ask for.

    Only where the error says so: the call's first library frame is not pandas', and the error was raised
    inside pandas' arrays (the other library indexed the array as an ndarray)."""
    libraries = receipt.libraries
    if not libraries or libraries[0] == "pandas" or "pandas" not in libraries[1:]:
        return None
    arrays = {m.group(1) for m in map(EXTENSION_ARRAY.match, receipt.context) if m}
    tree = parse(code)
    if not arrays or tree is None:
        return None
    for call in calls_on_line(tree, receipt.lineno):
        given = [*call.args, *(k.value for k in call.keywords)]
        found = [a for a in given if isinstance(a, ast.Name) and a.id in arrays]
        for arg in sorted(found, key=lambda n: (n.lineno, n.col_offset), reverse=True):
            code = replace_node(code, arg, f"{arg.id}.to_numpy()")
        if found:
            return code
    return None

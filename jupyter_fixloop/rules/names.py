"""Built-in repairs for names: imports, misspelt names, attributes, columns and keys, removed APIs.

Each reads the receipt (the error, the failing line, the names and columns the sandbox reported
close by) and the tables in `repair_tables`, and fixes one cause.
"""

from __future__ import annotations

import ast
import difflib
import re
import sys

from ..kernel import ipysyntax
from .changed import (
    FORWARDED,
    METHODS_RENAMED,
    NUMPY_REMOVED,
    SCIPY_MOVED,
    SKLEARN_METHODS_RENAMED,
    SKLEARN_MODULES_MOVED,
    SKLEARN_MOVED,
    SKLEARN_NAMES_MOVED,
    TYPES_OF,
)
from .edits import (
    ParsedReceipt,
    calls_on_line,
    context_list,
    imported_as,
    imports_from,
    insert_import,
    on_line,
    parse,
    quoted,
    rename_names,
    replace_node,
    replace_nodes,
    replace_on_line,
    requoted,
    source_of,
    span,
    spliced,
    tree_of,
)
from .patterns import rewrite
from .registry import CALLS, DATA, DRIFT, GUESS, MECHANICAL, NAMES, repair
from .tables import (
    KERNEL_HELPERS,
    KNOWN_IMPORTS,
    MISSING_LABEL,
    MOVED_MODULES,
    MOVED_NAMES,
    NEAR_KEYS,
    PANDAS_LIKE,
    PY2_METHODS,
    QUOTED_HINT,
    REMOVED_ATTRIBUTES,
    REMOVED_CALLS,
    REMOVED_USE,
    RENAMED_METHODS,
    SUBMODULES,
)
from .ties import a_slip, meant_name, one_nearest


def module_aliases(code: str, module: str, receipt: ParsedReceipt | None = None, attr: str = "") -> set[str]:
    """Names the cell uses for `module`: `np` for numpy even without an import in the cell, and the
    name before `.attr` on the failing line (the message says that object is the module)."""
    found = {module, module.split(".")[0]}
    found |= {a for a, full in (("np", "numpy"), ("pd", "pandas")) if full == module}
    found |= {m.group(1) for m in re.finditer(rf"^\s*import\s+{re.escape(module)}\s+as\s+(\w+)", code, re.MULTILINE)}
    tree = parse(code) if receipt is not None else None
    if tree is not None:
        found |= {n.value.id for n in ipysyntax.walk(tree) if isinstance(n, ast.Attribute) and n.attr == attr
                  and isinstance(n.value, ast.Name) and on_line(n, receipt.lineno)}
    return found


def replace_attribute(code: str, owners: set[str], attr: str, new: str) -> str | None:
    """Replace every `owner.attr` (owner one of `owners`) by `new`, where `{m}` is that owner."""
    return _attributes(code, attr, new, lambda n: isinstance(n.value, ast.Name) and n.value.id in owners)


def _attributes(code: str, attr: str, new: str, where) -> str | None:
    """Every `x.attr` that `where` takes written as `new` (`{m}`: `x`); None when there is none."""
    tree = parse(code)
    nodes = [n for n in ipysyntax.walk(tree) if isinstance(n, ast.Attribute) and n.attr == attr and where(n)] if (
        tree) else []
    return replace_nodes(code, nodes, lambda n: new.format(m=source_of(code, n.value)))


# "module 'numpy' has no attribute 'float'", "'numpy.ndarray' object has no attribute 'append'"; scipy's own module
# `__getattr__` says "Module 'scipy' has no attribute 'randn'"
NO_ATTRIBUTE = re.compile(r"[Mm]odule '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'|"
                          r"'(?P<type>[\w.]+)' object has no attribute '(?P<attr>\w+)'")


def attribute_error(receipt: ParsedReceipt) -> tuple[str, str] | None:
    """(owner, attribute) of an AttributeError: owner is a type name or `module numpy`."""
    m = NO_ATTRIBUTE.search(receipt.evalue) if receipt.ename == "AttributeError" else None
    if m is None:
        return None
    return (f"module {m['module']}", m['name']) if m['module'] else (m['type'].rpartition(".")[2], m['attr'])


def replace_method(code: str, receipt: ParsedReceipt, attr: str, new: str) -> str | None:
    """`.attr` -> `.new` on the failing line (as an attribute, never inside a string)."""
    return _attributes(code, attr, "{m}." + new, lambda n: on_line(n, receipt.lineno))


@repair(MECHANICAL, NAMES + 20, errors=("NameError",))
def missing_import(code: str, receipt: ParsedReceipt) -> str | None:
    """Add the missing import of a well-known alias (`np`, `pd`, `re`, `Path`, `Counter`, ...)."""
    name = quoted(receipt.evalue)
    if not name:
        return None
    if name == "datetime":
        qualified = re.search(r"\bdatetime\.(datetime|date|timedelta|timezone|time)\b", code)
        return insert_import(code, "import datetime" if qualified else "from datetime import datetime")
    if name in KNOWN_IMPORTS:
        close = [c for c in context_list(receipt, "defined names close to") if c not in ("True", "False", "None")]
        if close and KNOWN_IMPORTS[name].startswith("from "):
            return None  # `product` next to a variable `products` is a typo, not itertools
        return insert_import(code, KNOWN_IMPORTS[name])
    if name in getattr(sys, "stdlib_module_names", ()) and re.search(rf"\b{re.escape(name)}\.\w", code):
        return insert_import(code, f"import {name}")
    return None


@repair(MECHANICAL, NAMES + 5, errors=("AttributeError", "ImportError"))
def forwarded(code: str, receipt: ParsedReceipt) -> str | None:
    """Call a removed function as its old version ran it: the one it handed its arguments to, its keywords
    renamed and its own defaults said (changed.FORWARDED: seaborn's `factorplot` ran `catplot` with
    `kind='point'`)."""
    tree, found = tree_of(code), attribute_error(receipt)
    m = re.search(r"cannot import name '(\w+)' from '(\w+)'", receipt.evalue)
    package, name = (found[0].removeprefix("module "), found[1]) if found else m.groups()[::-1] if m else (None, None)
    if (package, name) not in FORWARDED:
        return None
    new, renamed, defaults = FORWARDED[package, name]
    owners, edits = module_aliases(code, package, receipt, name), []
    calls = [c for c in ipysyntax.walk(tree) if isinstance(c, ast.Call) and (
        isinstance(c.func, ast.Attribute) and c.func.attr == name and getattr(c.func.value, "id", "") in owners)]
    for alias in (a for n in ipysyntax.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == package
                  for a in n.names if a.name == name):  # `from seaborn import factorplot [as fp]`
        edits.append(((span(code, alias)[0], span(code, alias)[0] + len(name)), new))
        calls += [c for c in ipysyntax.walk(tree) if isinstance(c, ast.Call) and getattr(
            c.func, "id", "") == (alias.asname or name)]
    for call in calls:
        if any(k.arg is None for k in call.keywords):  # `**options` may say any keyword: not rewritten
            return None
        end = span(code, call.func)[1]
        edits += [((end - len(name), end), new)] if name in (getattr(call.func, "attr", ""), getattr(
            call.func, "id", "")) else []
        edits += [((span(code, k)[0], span(code, k)[0] + len(k.arg)), renamed[k.arg]) for k in call.keywords
                  if k.arg in renamed]
        said = ", ".join(f"{k}={v}" for k, v in defaults.items() if k not in {
            renamed.get(k.arg, k.arg) for k in call.keywords})
        last = max((span(code, a)[1] for a in (*call.args, *call.keywords)), default=None)
        edits += [((last, last), f", {said}") if last else ((end + 1, end + 1), said)] if said else []
    return spliced(code, edits) if calls else None


@repair(MECHANICAL, NAMES + 10, errors=("ImportError", "ModuleNotFoundError"))
def moved_import(code: str, receipt: ParsedReceipt) -> str | None:
    """Import a name, or a module, from where it lives now (`json_normalize`, `collections.abc`, ...)."""
    tree = tree_of(code)
    m = re.search(r"No module named '([\w.]+)'", receipt.evalue)
    if m and m.group(1) in SAID_MOVED_MODULES:
        return _said_moved(code, tree, receipt.lineno, m.group(1))
    if m:
        moved = {f"{package}.{module}": home for (package, module), (_, home) in SKLEARN_MODULES_MOVED.items()}
        for old, new in {**MOVED_MODULES, **moved}.items():  # `sklearn.externals.six`: "use six directly"
            if m.group(1) == old or old.startswith(m.group(1) + "."):
                fixed = replace_on_line(code, receipt.lineno, old, new)
                if fixed is not None:
                    return fixed
        for node in imports_from(tree, receipt.lineno, m.group(1)):  # `from pandas.core.index import Index`: the
            homes = {_home_of(node.module, a.name) for a in node.names}  # package exports it
            if len(homes) == 1 and None not in homes:
                names = ", ".join(imported_as(a.name, a) for a in node.names)
                return replace_node(code, node, f"from {homes.pop()} import {names}")
        return None
    m = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", receipt.evalue)
    if not m:
        return None
    for node in imports_from(tree, receipt.lineno)[:1]:
        return _rewrite_import_from(code, node, m.group(2), m.group(1))
    return None


# the modules scikit-learn said moved (changed.SKLEARN_NAMES_MOVED): they decide, name by name
SAID_MOVED_MODULES = frozenset(module for module, _ in SKLEARN_NAMES_MOVED)


def _said_moved(code: str, tree: ast.Module, lineno: int | None, missing: str) -> str | None:
    """`from sklearn.cross_validation import train_test_split` from the module scikit-learn said it moved to,
    when every name imported is one it moved there with the same positional parameters (changed.
    SKLEARN_NAMES_MOVED); `KFold(n, n_folds)`, which is not `KFold(n_splits)`, is not. A module made private whose
    every name the table holds moved to its own package ("The corresponding classes / functions should instead be
    imported from sklearn.tree", scikit-learn 0.22, of `sklearn.tree.export`) moved whole: a name the table lacks
    (`export_text`) comes from that package when the package has it today."""
    whole = _moved_whole(missing)
    for node in imports_from(tree, lineno, missing):
        new = [SKLEARN_NAMES_MOVED.get((missing, a.name)) or (
            (whole, a.name) if whole and hasattr(import_optional(whole), a.name) else (None, None)) for a in node.names]
        homes = {home for home, _ in new}
        if len(homes) == 1 and None not in homes:
            names = ", ".join(imported_as(name, a) for (_, name), a in zip(new, node.names))
            return replace_node(code, node, f"from {homes.pop()} import {names}")
    return None


def _moved_whole(module: str) -> str | None:
    """The package of `module` (`sklearn.tree` of `sklearn.tree.export`) when every name of it the table holds moved
    there under its own name; else None (`sklearn.cross_validation` moved to another module, and not whole)."""
    moves = [(home, name) for (old, name_then), (home, name) in SKLEARN_NAMES_MOVED.items()
             if old == module and name == name_then]
    homes = {home for home, _ in moves}
    held = sum(old == module for old, _ in SKLEARN_NAMES_MOVED)
    return module.rpartition(".")[0] if homes == {module.rpartition(".")[0]} and len(moves) == held else None


def _rewrite_import_from(code: str, node: ast.ImportFrom, module: str, name: str) -> str | None:
    said = {**SKLEARN_NAMES_MOVED, **SKLEARN_MOVED, **SKLEARN_MODULES_MOVED, **SCIPY_MOVED}
    # what the old scikit-learn or scipy said to import instead (None: a package of its own), kept under the name
    # the cell uses; else the name's home now, its module's, or the package's that exports it
    new_module, new_name = said.get((node.module, name)) or said.get((module, name)) or (
        MOVED_NAMES.get((node.module, name)) or MOVED_NAMES.get((module, name)) or MOVED_MODULES.get(node.module)
        or _home_of(node.module, name) or "", name)
    if new_module == "":
        return None
    kept = [imported_as(a.name, a) for a in node.names if a.name != name]
    lines = [f"from {node.module} import {', '.join(kept)}"] if kept else []
    lines += [f"import {imported_as(name, a)}" if new_module is None else
              f"from {new_module} import {imported_as(new_name, a)}" for a in node.names if a.name == name]
    return replace_node(code, node, "\n".join(lines))


@repair(GUESS, NAMES + 40, errors=("NameError",))
def name_typo(code: str, receipt: ParsedReceipt) -> str | None:
    """Replace a misspelt name by the closest defined name.

    Of names about as near, the one the evidence favours (`ties.meant_name`)."""
    name = quoted(receipt.evalue)
    close = [c for c in context_list(receipt, "defined names close to") if c not in ("True", "False", "None")]
    if not name or not close:
        return None
    meant = meant_name(code, receipt, name, close)
    if not plausible_typo(name, meant):
        return None  # `undefined` is not a typo of `runfile`: "I cannot tell" beats a guess that runs
    return rename_names(code, name, meant)


def plausible_typo(name: str, candidate: str) -> bool:
    """Whether `name` reads as a slip of `candidate`: nearly the same letters (`totl`, `peek`), or
    one is the other with a piece added (`prices_list`, `lenght`)."""
    if candidate in KERNEL_HELPERS:
        return False
    short, long_ = sorted((name, candidate), key=len)
    if len(short) >= 3 and long_.startswith(short):
        return True
    return difflib.SequenceMatcher(None, name, candidate).ratio() >= 0.75


@repair(MECHANICAL, DRIFT + 10)
def message_hint(code: str, receipt: ParsedReceipt) -> str | None:
    """Follow an error message that names its replacement: "`np.NaN` was removed ... Use `np.nan` instead",
    "'M' is no longer supported for offsets. Please use 'ME' instead"."""
    quoted = QUOTED_HINT.search(receipt.message)
    if quoted:
        return _replace_literal(code, receipt.lineno, quoted.group(1), quoted.group(2))
    m = REMOVED_USE.search(receipt.message)
    if not m:
        return None
    old, new = m.group(1), m.group(2) or m.group(3)
    if "." in old:
        owner, attr = old.rsplit(".", 1)
        template = re.sub(rf"(?<![\w.]){re.escape(owner)}\.", "{m}.", new)
        template = f"({template})" if template.startswith("-") else template  # `-np.inf ** 2` is not `(-inf) ** 2`
        modules = {"np": "numpy", "pd": "pandas"}
        return replace_attribute(code, module_aliases(code, modules.get(owner, owner), receipt, attr) | {owner}, attr,
                                 template)
    return rename_names(code, old, new)


def _replace_literal(code: str, lineno: int | None, old: str, new: str) -> str | None:
    """The string literal a message names: on the failing line, else where it occurs only once."""
    lines = code.splitlines(keepends=True)
    for quote in ("'", '"'):
        literal = f"{quote}{old}{quote}"
        if lineno is not None and 1 <= lineno <= len(lines) and literal in lines[lineno - 1] or code.count(
                literal) == 1:
            return replace_on_line(code, lineno, literal, f"{quote}{new}{quote}")
    return None


@repair(MECHANICAL, DRIFT + 230)
def removed_attribute(code: str, receipt: ParsedReceipt) -> str | None:
    """Replace a module attribute removed in NumPy 2 / pandas 2 (`np.float`, `np.Inf`, `pd.datetime`), or one of
    scipy's aliases of numpy's functions (`sp.randn` -> `numpy.random.randn`, changed.SCIPY_MOVED)."""
    found = attribute_error(receipt)
    if not found or not found[0].startswith("module "):
        return None
    module, attr = found[0].split(" ", 1)[1], found[1]
    owners = module_aliases(code, module, receipt, attr)
    if (module, attr) in REMOVED_CALLS:
        return _replace_call(code, owners, attr, REMOVED_CALLS[module, attr])
    new = REMOVED_ATTRIBUTES.get(module, {}).get(attr) or (NUMPY_REMOVED.get(attr) if module == "numpy" else None)
    home, name = SCIPY_MOVED.get((module, attr), ("", "")) if new is None else ("", "")
    if home.split(".")[0] == "numpy":  # `sp.randn`: scipy's alias of numpy's, gone; numpy's, as scipy's notes said
        fixed = replace_attribute(code, owners, attr, f"{home}.{name}")
        bound = re.search(r"^import numpy\s*$", code, re.MULTILINE)
        return fixed if fixed is None or bound else "import numpy\n" + fixed
    home = _home_of(module, attr) if new is None else None  # else where the package keeps it now
    new = new or (f"{{m}}{home[len(module):]}.{attr}" if home else None)
    return replace_attribute(code, owners, attr, new) if new else None


def _home_of(module: str, name: str) -> str | None:
    """The public module of `module`'s package that has `name` (`pandas.errors` for SettingWithCopyWarning)."""
    top = module.split(".")[0]
    if top not in ("pandas", "numpy"):
        return None
    for candidate in (top, *(f"{top}.{sub}" for sub in SUBMODULES)):
        if candidate != module and hasattr(import_optional(candidate), name):
            return candidate
    return None


def _replace_call(code: str, owners: set[str], attr: str, template: str) -> str | None:
    tree = parse(code)
    calls = [c for c in ipysyntax.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
             and c.func.attr == attr and isinstance(c.func.value, ast.Name) and c.func.value.id in owners
             and len(c.args) == 1] if tree else []
    return replace_nodes(code, calls, lambda c: template.format(source_of(code, c.args[0])))


@repair(MECHANICAL, DRIFT + 260)
def renamed_method(code: str, receipt: ParsedReceipt) -> str | None:
    """A method under an old or borrowed name (`iteritems`, `ix`, `avg`, `sort_by`, Python 2's `has_key`), or
    one matplotlib or scikit-learn deprecated naming its alternative (changed.METHODS_RENAMED: `set_axis_bgcolor`;
    changed.SKLEARN_METHODS_RENAMED: `get_feature_names`, whose list is `list(get_feature_names_out())`)."""
    found = attribute_error(receipt)
    m = re.search(r"'(\w+)' is not a valid function for '(\w+)' object", receipt.evalue)
    if m and m.group(1) in RENAMED_METHODS:  # .agg("avg")
        return requoted(code, receipt.lineno, m.group(1), RENAMED_METHODS[m.group(1)])
    if not found:
        return None
    owner, attr = found
    if (owner, attr) in SKLEARN_METHODS_RENAMED:  # scikit-learn named it: `vec.get_feature_names()`
        return _sklearn_method(code, receipt, attr, *SKLEARN_METHODS_RENAMED[owner, attr])
    said = METHODS_RENAMED.get(attr)
    if said and owner in TYPES_OF[said[1]]:  # matplotlib named it: `ax.set_axis_bgcolor` -> `set_facecolor`
        return replace_method(code, receipt, attr, said[0])
    if (owner, attr) in PY2_METHODS:
        return replace_method(code, receipt, attr, PY2_METHODS[owner, attr])
    if (owner, attr) in (("dict", "has_key"), ("str", "decode")):  # written as data: patterns.json
        return rewrite(attr, code, receipt)
    if not re.match(PANDAS_LIKE, owner) or attr not in RENAMED_METHODS:
        return None
    return replace_method(code, receipt, attr, RENAMED_METHODS[attr]) or requoted(
        code, receipt.lineno, attr, RENAMED_METHODS[attr])


def _sklearn_method(code: str, receipt: ParsedReceipt, attr: str, new: str, wrap: str) -> str | None:
    """`.attr` -> `.new` on the failing line; with `wrap` "list", each call of it as `list(...)`: the old method
    returned a list, the new one returns an array."""
    fixed = code
    while wrap == "list":  # one call at a time, read again: a call inside another keeps its offsets right
        tree = parse(fixed)
        calls = [c for c in calls_on_line(tree, receipt.lineno, attr) if isinstance(c.func, ast.Attribute)] if (
            tree) else []
        if not calls:
            break
        arguments = source_of(fixed, calls[0])[len(source_of(fixed, calls[0].func)):]
        fixed = replace_node(fixed, calls[0], f"list({source_of(fixed, calls[0].func.value)}.{new}{arguments})")
    renamed = replace_method(fixed, receipt, attr, new)  # what is not called there (`f = vec.get_feature_names`)
    return renamed or (fixed if fixed != code else None)


@repair(GUESS, CALLS + 10)
def column_as_attribute(code: str, receipt: ParsedReceipt) -> str | None:
    """`df.Total_Sales` for a column named 'Total Sales' or 'total_sales': use `df["Total Sales"]`."""
    found = attribute_error(receipt)
    tree = parse(code)
    if not found or found[0] != "DataFrame" or tree is None:
        return None
    attr = found[1]
    for node in ipysyntax.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == attr and on_line(node, receipt.lineno)
                and isinstance(node.value, ast.Name)):
            continue
        columns = _columns_in_context(receipt, node.value.id)
        match = _column_match(attr, columns)
        if match is not None:
            return replace_node(code, node, f"{node.value.id}[{match!r}]")
    return None


def _columns_in_context(receipt: ParsedReceipt, name: str) -> list:
    text = receipt.values.get(name, "")
    m = re.search(r"columns=(\[.*?\])(?:\s|$)", text)
    if not m:
        return []
    try:
        return list(ast.literal_eval(m.group(1)))
    except (ValueError, SyntaxError):
        return []


def _all_columns(receipt: ParsedReceipt) -> list:
    """The columns of every frame the receipt shows."""
    return [c for name in receipt.values for c in _columns_in_context(receipt, name)]


def _column_match(attr: str, columns: list):
    """The column `attr` names but for case, spaces and underscores; else the one nearest in spelling; else None."""
    def norm(s):
        return re.sub(r"[\s_\-]+", "_", str(s).strip().lower())

    texts = [c for c in columns if isinstance(c, str)]
    return next((c for c in texts if norm(c) == norm(attr)), None) or next(
        iter(difflib.get_close_matches(attr, texts, n=1, cutoff=0.8)), None)


@repair(GUESS, CALLS + 20)
def attribute_typo(code: str, receipt: ParsedReceipt) -> str | None:
    """Replace a misspelt attribute or method by the closest one the object really has."""
    found = attribute_error(receipt)
    if not found:
        return None
    close = [c for c in context_list(receipt, "attributes of") if c != found[1]]
    if _fitted_name(found[1]):  # `coef_`: set by fitting; missing, the object was not fitted (or its fit failed):
        close = [c for c in close if _fitted_name(c)]  # a typo of it is another such name, never a parameter
    if not close or not a_slip(found[1], close[0]):  # another word (`fb.first` -> `hist`): no evidence of a typo
        return None
    if found[0].startswith("module ") and any(n(found[0].removeprefix("module "), found[1]) for n in NOTED):
        return None  # the library's notes are about this very name (seaborn's `lvplot`, renamed `boxenplot`)
    return replace_method(code, receipt, found[1], close[0])


# (module, name) -> whether the knowledge base has an entry about that name of that module's library; generic.py,
# which reads the knowledge base (and imports this module), adds it
NOTED: list = []


def _fitted_name(name: str) -> bool:
    """A name ending in one underscore (`coef_`, `classes_`): by scikit-learn's convention, and statsmodels'
    and others' after it, an attribute that fitting sets."""
    return name.endswith("_") and not name.endswith("__") and not name.startswith("_")


@repair(GUESS, DATA + 20, errors=("KeyError",))
def key_typo(code: str, receipt: ParsedReceipt) -> str | None:
    """Replace a dict key or DataFrame column that does not exist by its near match (case, spaces, spelling)."""
    for c in receipt.context:
        m = re.match(r"near matches for (?P<key>'.*?'|\".*?\"): (?P<first>'.*?'|\".*?\")", c)
        if not m:
            continue
        key, first = ast.literal_eval(m.group("key")), ast.literal_eval(m.group("first"))
        _one_nearest(key, c[m.start("first"):], _all_columns(receipt))
        # only where the key is read, when it is: `df['new'] = df['old']` keeps the column it assigns
        read = _read_keys(code, receipt.lineno, key)
        fixed = replace_nodes(code, read, lambda n, first=first: repr(first)) if read else requoted(
            code, receipt.lineno, key, first)
        if fixed is not None:
            return fixed
    return _key_in_message(code, receipt)


def _one_nearest(key: str, near: str, columns: list) -> None:
    """Raise CannotTell when the nearest key is a spelling and another key (of the near matches, or
    a column of a frame the receipt shows) is about as near (`'dept'`: `'dep_id'` or
    `'department'`?): either would run, and nothing in the receipt says which was meant."""
    found = NEAR_KEYS.findall(near)
    if not found or found[0][1] != "spelling":
        return
    others = [ast.literal_eval(q) for q, _ in found[1:]] + [c for c in columns if isinstance(c, str)]
    one_nearest(key, ast.literal_eval(found[0][0]), others)


def _read_keys(code: str, lineno: int | None, key: str) -> list[ast.Constant]:
    """The `key` literals on the failing line that subscript a value being read, not an assignment target."""
    tree = parse(code)
    if tree is None:
        return []
    return [n.slice for n in ipysyntax.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
            and on_line(n, lineno) and isinstance(n.slice, ast.Constant) and n.slice.value == key]


def _key_in_message(code: str, receipt: ParsedReceipt) -> str | None:
    """Column errors raised deep in pandas (groupby, agg): match the key against the frames' columns."""
    m = MISSING_LABEL.search(receipt.evalue)
    if not m:
        return None
    key = next(g for g in m.groups() if g)
    match = _column_match(key, _all_columns(receipt))
    return requoted(code, receipt.lineno, key, match) if match is not None and match != key else None


def import_optional(module: str):
    """The module, or None when it is not installed (knowledge about it then does not apply)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        return None



CASE_TWIN = re.compile(r"^the file '(.+)' is not here, but '(.+)' is: the names differ in case only$")


@repair(MECHANICAL, NAMES + 50)
def file_case_twin(code: str, receipt: ParsedReceipt) -> str | None:
    """A path the cell spells with other letter cases than the file here has, spelled as it is here (`'../data'`
    where the folder is `../Data`: the author's file system, macOS' or Windows', ignored case); only the
    strings of the cell that are whole parts of the path the error names (the kernel's fact says its twin)."""
    said = next((m for m in map(CASE_TWIN.match, receipt.context) if m), None)
    tree = parse(code)
    if said is None or tree is None or len(said.group(1)) != len(said.group(2)):
        return None
    path, twin = said.groups()
    formatted = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in formatted:
            at = _part_of(path, node.value)
            if at is not None and twin[at:at + len(node.value)] != node.value:
                found.append((node, twin[at:at + len(node.value)]))
    for node, new in sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset), reverse=True):
        written = source_of(code, node)  # its quotes kept
        code = replace_node(code, node, written.replace(node.value, new) if written.count(node.value) == 1
                            else repr(new))
    return code if found else None


def _part_of(path: str, text: str) -> int | None:
    """Where `text` is whole parts of `path` (`../data` of `../data/x.csv`, `x.csv`), when it is so once only."""
    path, text = path.replace("\\", "/"), text.replace("\\", "/")
    at = [i for i in range(len(path) - len(text) + 1) if text and path.startswith(text, i)
          and (i == 0 or path[i - 1] == "/" or text.startswith("/"))
          and (i + len(text) == len(path) or path[i + len(text)] == "/" or text.endswith("/"))]
    return at[0] if len(at) == 1 else None

"""Generic rewriters that write what a library's notes say to write instead of a removed spelling, when that is
more than a new name: an indexer (`df[string]` on dates: "use df.loc[string]"), a module moved whole
(`sklearn.cross_validation`: "moved to model_selection"); an operator (`Index.contains`: "use key in index") and a
method its argument named are generic.py's `said_method`'s. Each declares itself (registry.py) and fires only when
an entry of `model/changes.json` says so.

And the keywords of a call, one rewriter per shape, from changed.json's tables and the notes alike (the library's
words they read are tables.json's `messages`): `keyword_only_now` names arguments passed by position (pandas 2.0:
"Disallow passing non-keyword arguments to :meth:`DataFrame.set_index` except ``keys``"), `keyword_gone` renames a
keyword, leaves it out or calls a method on the result instead, `old_value` writes a keyword's value anew;
`_keyword_edit` is their one edit of a keyword (calls.py's `bad_keyword`, a guess, makes it too).
"""

from __future__ import annotations

import ast
import inspect
import re

from .changed import (
    EQUIVALENT_VALUES,
    KEYWORD_EXTRAS,
    KEYWORD_ONLY_NOW,
    NO_EFFECT_KEYWORDS,
    RENAMED_CALL_KEYWORDS,
    RENAMED_KEYWORDS,
    SKLEARN_NAMES_MOVED,
    STILL_POSITIONAL,
    STRING_AS_LIST,
)
from .drift import _without_keyword
from .edits import (
    CannotTell,
    ParsedReceipt,
    call_name,
    calls_on_line,
    has_keyword,
    on_line,
    parse,
    replace_node,
    replace_nodes,
    source_of,
    span,
    spliced,
    tree_of,
)
from .generic import (  # the knowledge base is read through generic.py: the one crossing up to model/
    IMPORTED_AS,
    TURN as GENERIC_TURN,
    Change,
    changes,
    class_named,
    entries,
    replacement_of,
    today,
)
from .names import NO_ATTRIBUTE, attribute_error, import_optional
from .registry import DRIFT, GUESS, MECHANICAL, repair
from .tables import (
    CALL_AFTER,
    CANNOT_IMPORT,
    COLOR_ARGUMENT,
    IMPORTED,
    INVALID_PARAMETER,
    MULTIPLE_DATA,
    MUST_BE_SEQUENCE,
    NO_EFFECT_NOW,
    NO_EFFECT_SAID,
    NO_MODULE,
    NOW_KEYWORD_ONLY,
    OBJECT,
    ONLY_DATA,
    POSITIONAL,
    SAYS_KEYWORD,
    SCALE_CALLS,
    STAY,
    STAYS,
    UNEXPECTED_KEYWORD,
    UNORDERED_SLICE,
    WRITTEN_INSTEAD,
)

TURN = GENERIC_TURN + 6  # after generic.py's and exported.py's rewriters (registry.py)
LATER = TURN + 2  # after patterns.json's whole_column_set and missing_labels (DRIFT+277)


@repair(MECHANICAL, TURN)
def said_kept_elsewhere(code: str, receipt: ParsedReceipt) -> str | None:
    """A module's function the library removed where its notes say the same function of another module stays
    (matplotlib 3.6: "The `matplotlib.pyplot.get_cmap` function will stay available for backward compatibility",
    beside `matplotlib.cm.get_cmap`'s deprecation): `plt.cm.get_cmap('RdYlBu', 3)` -> `plt.get_cmap('RdYlBu', 3)`,
    through the name the cell's namespace has that module as."""
    said, tree = attribute_error(receipt), parse(code)
    if not said or not said[0].startswith("module ") or tree is None:
        return None
    module, name = said[0].removeprefix("module "), said[1]
    modules = {**_imported(tree), **receipt.modules}
    for change in entries(name):
        kept = [n.rpartition(".")[0] for n in change.names if n.rpartition(".")[2] == name and "." in n]
        home = kept[0] if len(kept) == 1 and STAYS.search(change.words) and kept[0] != module else None
        alias = next((a for a, m in modules.items() if m == home), None)
        if alias is None or not callable(getattr(import_optional(home), name, None)):
            continue
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == name
                 and on_line(n, receipt.lineno) and _names_module(source_of(code, n.value), module, modules)]
        if found:
            return spliced(code, [(span(code, n), f"{alias}.{name}") for n in found])
    return None


def _imported(tree: ast.Module) -> dict[str, str]:
    """The names the cell's own imports bind to modules (`import matplotlib.pyplot as plt`: `plt`), which the
    namespace before the cell does not have; only the libraries' (a module of the user's is never imported here)."""
    libraries = {IMPORTED_AS.get(c.library, c.library) for c in changes()}
    found = {}
    for node in ast.walk(tree):
        for alias in node.names if isinstance(node, ast.Import) else []:
            root = alias.name.split(".")[0]
            if root in libraries:
                found[alias.asname or root] = alias.name if alias.asname else root
    return found


def _names_module(text: str, module: str, modules: dict[str, str]) -> bool:
    """Whether `text` (`plt.cm`, `cm`, `matplotlib.cm`) is the module the error names, as the cell writes it."""
    head, *rest = text.split(".")
    found = import_optional(modules[head]) if head in modules else None  # a library's: never the user's own
    for part in rest:
        found = getattr(found, part, None)
    return found is not None and getattr(found, "__name__", None) == module


ROW_OF_INDEX = "is a label of {name}'s index (a row), not a column"  # kernel/facts.py, read in the sandbox


@repair(MECHANICAL, TURN)
def rows_by_string(code: str, receipt: ParsedReceipt) -> str | None:
    """`df['2018-Q1']` on a frame indexed by dates: rows by a date-like string, which pandas 1.2 deprecated ("use
    df.loc[string]") and 2.0 removed -> `df.loc['2018-Q1']`, when the sandbox saw the key is a row of `df`."""
    key = receipt.evalue.strip("'\"") if receipt.ename == "KeyError" else ""
    tree = parse(code)
    if not key or tree is None or not _datelike(key):
        return None
    if not any(c.library == "pandas" and "df[string]" in c.names and replacement_of(c) == "df.loc[string]"
               for c in entries("string")):
        return None
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and on_line(n, receipt.lineno)
             and isinstance(n.slice, ast.Constant) and n.slice.value == key
             and any(ROW_OF_INDEX.format(name=source_of(code, n.value)) in f for f in receipt.context)]
    return replace_nodes(code, found, lambda n: f"{source_of(code, n.value)}.loc[{source_of(code, n.slice)}]")


@repair(MECHANICAL, TURN)
def unordered_slice(code: str, receipt: ParsedReceipt) -> str | None:
    """`df['1980':]` on dates not in order, which pandas 2.0 refuses ("Disallow partial slicing on an non-monotonic
    :class:`DatetimeIndex` with keys which are not in Index"), as pandas 1.x sliced it: the rows, in their order,
    from the first moment of the first string's period to the last of the second's
    (`df[df.index >= pd.Period('1980').start_time]`)."""
    tree = parse(code)
    if receipt.ename != "KeyError" or not UNORDERED_SLICE.search(receipt.evalue) or tree is None:
        return None
    if not any(c.library == "pandas" and "KeyError" in c.names for c in entries("DatetimeIndex")):
        return None
    pd = next((a for a, m in receipt.modules.items() if m == "pandas"), None) or "pd"
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and on_line(n, receipt.lineno)
             and isinstance(n.slice, ast.Slice) and n.slice.step is None and _plain(n.value) and all(
                 b is None or isinstance(b, ast.Constant) and isinstance(b.value, str) and _datelike(b.value)
                 for b in (n.slice.lower, n.slice.upper))]

    def masked(node: ast.Subscript) -> str:
        owner = node.value.value if isinstance(node.value, ast.Attribute) and node.value.attr == "loc" else node.value
        frame = source_of(code, owner)
        bounds = [f"{frame}.index {op} {pd}.Period({b.value!r}).{end}" for b, op, end in (
            (node.slice.lower, ">=", "start_time"), (node.slice.upper, "<=", "end_time")) if b is not None]
        mask = " & ".join(f"({b})" for b in bounds) if len(bounds) > 1 else bounds[0]
        return f"{source_of(code, node.value)}[{mask}]"

    fixed = replace_nodes(code, found, masked)
    return fixed if fixed is None or pd in receipt.modules else f"import pandas as {pd}\n" + fixed


def _datelike(text: str) -> bool:
    """Whether pandas reads `text` as a date or a period ('2018-09', '2018-Q1', '2014-08-01 00:00')."""
    pd = import_optional("pandas")
    for read in (getattr(pd, "Timestamp", None), getattr(pd, "Period", None)):
        try:
            read(text)
            return True
        except (ValueError, TypeError, OverflowError):
            continue
    return False


@repair(MECHANICAL, TURN)
def moved_module(code: str, receipt: ParsedReceipt) -> str | None:
    """`from sklearn import cross_validation`, a module its library moved whole (scikit-learn 0.18: "moved to
    model_selection"), as the module it moved to under the old name, when every name the cell reads of it moved
    there with the same positional parameters (changed.SKLEARN_NAMES_MOVED; `KFold(n, n_folds)` did not)."""
    found = CANNOT_IMPORT.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "ImportError" or not found or tree is None:
        return None
    name, package = found.groups()
    for node in ast.walk(tree):
        moved = [a for a in node.names if a.name == name] if (
            isinstance(node, ast.ImportFrom) and node.module == package and on_line(node, receipt.lineno)) else []
        if not moved:
            continue
        bound = moved[0].asname or name
        read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == bound}
        homes = {SKLEARN_NAMES_MOVED.get((f"{package}.{name}", a), (None, None)) for a in read}
        if not read or len(homes) != 1 or any(h[0] is None or h[1] not in read for h in homes):
            return None
        parent, _, last = next(iter(homes))[0].rpartition(".")
        kept = [a.name + (f" as {a.asname}" if a.asname else "") for a in node.names if a.name != name]
        lines = [f"from {package} import {', '.join(kept)}"] if kept else []
        lines.append(f"from {parent} import {last} as {bound}" if parent else f"import {last} as {bound}")
        return replace_node(code, node, "\n".join(lines))
    return None


def _moves() -> list[Change]:
    """The modules and functions a library said moved, as code (IPython 4.0's shims and its "has moved to"
    warnings, pandas' `pandas.tools.plotting`), the longest old name first."""
    return sorted((c for c in changes() if c.kind in ("module", "function") and c.names and "." in c.names[0]
                   and c.replacement_is == "code" and IMPORTED.match(c.replacement)), key=lambda c: -len(c.names[0]))


def _moved(dotted: str, moves: list[Change]) -> tuple[str, Change] | None:
    """Where `dotted` (a module, a module's name) is now by the first move of `moves` it is or is inside."""
    return next(((c.replacement + dotted[len(c.names[0]):], c) for c in moves
                 if dotted == c.names[0] or dotted.startswith(c.names[0] + ".")), None)


def _bound(new: str, name: str) -> str:
    """An import binding `name` to the module or name `new`."""
    parent, _, last = new.rpartition(".")
    if parent:
        return f"from {parent} import {last}" + (f" as {name}" if name != last else "")
    return f"import {new}" + (f" as {name}" if name != new else "")


@repair(MECHANICAL, TURN)
def said_package(code: str, receipt: ParsedReceipt) -> str | None:
    """A module or function its library said moved (IPython 4.0's shims: "`IPython.html.widgets` has moved to
    `ipywidgets`", "The `IPython.parallel` package has been deprecated. You should import from ipyparallel
    instead."; its warnings: "get_ipython_package_dir has moved to the IPython.paths module"), imported from its
    new home, in each form of import: `from IPython.html.widgets import interact` -> `from ipywidgets import
    interact`, `import IPython.nbformat as nbf` -> `import nbformat as nbf`, `import IPython.nbconvert` ->
    `import nbconvert` (its chains in the cell `nbconvert.X`), `from IPython import parallel` -> `import ipyparallel
    as parallel`, `from IPython.utils.path import get_ipython_package_dir` -> `from IPython.paths import ...`.
    Where the new home is installed here it must have every name imported; where it is not, the run says: a new
    home the kernel lacks (`No module named 'ipyparallel'` after the move) is said with the package to install."""
    missing, cannot, tree = NO_MODULE.search(receipt.evalue), CANNOT_IMPORT.search(receipt.evalue), parse(code)
    gone = NO_ATTRIBUTE.search(receipt.evalue) if receipt.ename == "AttributeError" and tree is not None else None
    if gone and gone.group("module"):
        return _chain_moved(code, tree, receipt, gone.group("module"), gone.group("name"))
    if receipt.ename not in ("ImportError", "ModuleNotFoundError") or not (missing or cannot) or tree is None:
        return None
    moves = _moves()
    if missing and "." not in missing.group(1):  # the new home itself is missing (after the move): said
        _said_missing(missing.group(1), moves)
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and on_line(n, receipt.lineno)]
    for node in imports:
        if isinstance(node, ast.ImportFrom):
            fixed = _from_moved(code, node, missing, cannot, moves)
            if fixed is not None:
                return fixed
            continue
        for old in [a.name for a in node.names] if missing and len(node.names) == 1 else []:
            found = _moved(old, moves) if (old + ".").startswith(missing.group(1) + ".") else None
            if found is None or not _home_has(found[0], []):
                continue
            if node.names[0].asname:
                return replace_node(code, node, f"import {found[0]} as {node.names[0].asname}")
            chains = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and source_of(code, n) == old]
            top = old.split(".")[0]  # `import IPython.nbconvert` bound `IPython` too: kept where read otherwise
            others = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == top]
            first = f"import {found[0]}" + (f"\nimport {top}" if len(others) > len(chains) else "")
            return spliced(code, [(span(code, node), first), *((span(code, n), found[0]) for n in chains)])
    return None


def _chain_moved(code: str, tree: ast.Module, receipt: ParsedReceipt, module: str, name: str) -> str | None:
    """`IPython.parallel.Client` where `IPython.parallel` moved (AttributeError "module 'IPython' has no attribute
    'parallel'"): each such chain of the cell written from the new home, imported at the cell's top."""
    found = _moved(f"{module}.{name}", _moves())
    if found is None or not _home_has(found[0], []):
        return None
    new, change = found
    modules = {**_imported(tree), **receipt.modules}

    def named(value: ast.expr) -> str:  # `ip.utils.path` after `import IPython as ip`: `IPython.utils.path`
        head, dot, rest = source_of(code, value).partition(".")
        return modules.get(head, head) + dot + rest

    chains = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == name and named(n.value) == module]
    home = new if change.kind == "module" else new.rpartition(".")[0]
    return spliced(code, [((0, 0), f"import {home}\n"), *((span(code, n), new) for n in chains)]) if chains else None


def _from_moved(code: str, node: ast.ImportFrom, missing, cannot, moves: list[Change]) -> str | None:
    """`from OLD import a, b` where OLD (or OLD.a) moved: each name that moved of its own (`from IPython import
    parallel`: `IPython.parallel`) bound from its new home, the others imported from OLD's new home (OLD is gone)
    or from OLD (only a name is gone)."""
    module = node.module or ""
    if not (missing and (module + ".").startswith(missing.group(1) + ".") or cannot and module == cannot.group(2)):
        return None
    whole = _moved(module, moves) if missing else None
    lines, rest = [], []
    for alias in node.names:
        own = _moved(f"{module}.{alias.name}", moves)
        if own is not None and len(own[1].names[0]) > len(module) and _home_has(own[0], []):
            lines.append(_bound(own[0], alias.asname or alias.name))
        else:
            rest.append(alias)
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in rest)
    if rest and whole is not None and _home_has(whole[0], [a.name for a in rest]):
        lines.insert(0, f"from {whole[0]} import {names}")
    elif rest and cannot and len(rest) < len(node.names):
        lines.insert(0, f"from {module} import {names}")
    elif rest and whole is not None and import_optional(whole[0]) is not None:
        change, lacks = whole[1], [a.name for a in rest if not hasattr(import_optional(whole[0]), a.name)]
        raise CannotTell(f"{change.library} {change.version} moved `{change.names[0]}` to `{change.replacement}` "
                         f"(\"{change.words}\"), and today's `{whole[0]}` has no `{'`, `'.join(lacks)}`: where it "
                         "went, it does not say")
    elif rest or not lines:
        return None
    return replace_node(code, node, "\n".join(lines))


def _home_has(new: str, names: list[str]) -> bool:
    """Whether the module `new` (or the module holding the name `new`) has each name, as installed here; True
    when its package is not installed here: the run in the kernel says whether it is there."""
    import importlib.util

    try:
        if importlib.util.find_spec(new.split(".")[0]) is None:
            return True
    except (ImportError, ValueError):
        return True
    home = import_optional(new)
    if home is None and not names:  # a name moved into a module: `IPython.paths.get_ipython_package_dir`
        parent, _, last = new.rpartition(".")
        return parent != "" and hasattr(import_optional(parent), last)
    return home is not None and all(n == "*" or hasattr(home, n) for n in names)


def _said_missing(package: str, moves: list[Change]) -> None:
    """A package that is the new home of a move out of another package, not installed: said with the move's words,
    never guessed."""
    said = min((c for c in moves if c.replacement.split(".")[0] == package != c.names[0].split(".")[0]), default=None,
               key=lambda c: (c.replacement != package, len(c.names[0])))  # the move of the whole package first
    if said is not None:
        raise CannotTell(f"`{package}` is not installed in this environment: `pip install {package}` (or `%pip "
                         f"install {package}` in the notebook), then rerun; it is where {said.library} {said.version} "
                         f"moved `{said.names[0]}`: \"{said.words}\"")


@repair(MECHANICAL, DRIFT + 60, errors=("TypeError",))
def keyword_only_now(code: str, receipt: ParsedReceipt) -> str | None:
    """Arguments a library made keyword-only, passed by position: named as its old signature or its notes say.

    By the table comparing the old versions' signatures with today's (changed.KEYWORD_ONLY_NOW, tools/drift_tables.py),
    in the order the old ones took them: `ldata.pivot('date', 'item', 'value')` -> `pivot(index='date',
    columns='item', values='value')`, `SVC(1.0, 'linear')` -> `SVC(C=1.0, kernel='linear')`; a seaborn function's by
    its module's entry (0.9's order): `sns.scatterplot('a', 'b', 'c', data=df)` -> `x='a', y='b', hue='c'`. By the
    notes: as today's signature names its keyword-only parameters, in their order, where pandas' deprecation made them
    keyword-only where they stood (2.0: "Disallow passing non-keyword arguments to :meth:`DataFrame.set_index`
    except ``keys``": `df.set_index('b', False)` -> `drop=False`; not where a keyword of it was removed since:
    `keyword_only_guess`); seaborn's `x` and `y`, now that `data` is its only positional argument (0.12; 0.11: "The
    parameter names for the positional variables are now ``x`` and ``y``": `sns.lmplot('a', 'b', data=df)` ->
    `x='a', y='b'`); a parameter matplotlib made keyword-only where one added since stands and refuses the value
    (3.4: "The *minor* parameter in `.Axis.set_ticks` [...] is now keyword-only", 3.5's `labels` second:
    `ax.set_xticks(ticks, 10)` raises "labels=10 must be a sequence" -> `minor=10`); as the error itself writes
    the call (pandas' "Use `Series.plot(kind='barh')` instead of `Series.plot('barh',)`"))."""
    tree = tree_of(code)
    return (_table_named(code, tree, receipt) or _module_named(code, tree, receipt)
            or _keywords_named(code, tree, receipt, removed=False)
            or _variables_named(code, tree, receipt) or _displaced(code, tree, receipt)
            or _written_named(code, tree, receipt))


def _table_named(code: str, tree: ast.Module, receipt: ParsedReceipt) -> str | None:
    """Named by changed.KEYWORD_ONLY_NOW, for the callable the error names or, where it names none (a signature's
    bind: "too many positional arguments"), for each call on the line past the arguments it still takes by position."""
    m = POSITIONAL.search(receipt.evalue)
    method = bool(m) and "." in m.group(1)  # the error counts `self`
    found = [(m.group(1), int(m.group(2)) - method, int(m.group(3)) - method)] if m else [
        (key, STILL_POSITIONAL[key], len(c.args)) for c in calls_on_line(tree, receipt.lineno)
        for key in [call_name(c) if call_name(c) in KEYWORD_ONLY_NOW else f"{call_name(c)}.__init__"]
        if key in KEYWORD_ONLY_NOW and len(c.args) > STILL_POSITIONAL[key]
    ] if receipt.evalue.strip() == "too many positional arguments" else []
    for key, allowed, given in found:
        names = KEYWORD_ONLY_NOW.get(key, ())[:given - allowed]
        fixed = named(code, tree, receipt.lineno, _callee(key), given, allowed, list(names), method="." in key,
                      attribute="." in key and not key.endswith(".__init__")) if (
            names and len(names) == given - allowed) else None
        if fixed is not None:
            return fixed
    return None


def _module_named(code: str, tree: ast.Module, receipt: ParsedReceipt) -> str | None:
    """Named by changed.KEYWORD_ONLY_NOW's entry for the function of the module a call on the line is made on
    (`sns.lmplot('a', 'b', df)`: `seaborn.lmplot`, its 0.9 order `x, y, data`), past those it keeps by position."""
    found = POSITIONAL.search(receipt.evalue) or MULTIPLE_DATA.search(receipt.evalue)
    modules = {**_imported(tree), **receipt.modules} if found else {}
    taken = {a.asname or a.name: f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and n.module for a in n.names}  # `from seaborn import jointplot` in the cell
    for call in calls_on_line(tree, receipt.lineno, found.group(1)) if found else []:
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        key = f"{modules.get(owner.id)}.{call.func.attr}" if isinstance(owner, ast.Name) else \
            taken.get(call.func.id, "") if isinstance(call.func, ast.Name) else ""
        kept = STILL_POSITIONAL.get(key, len(call.args))
        names = KEYWORD_ONLY_NOW.get(key, ())[:len(call.args) - kept]
        fixed = _named_call(code, call, kept, names) if names and len(names) == len(call.args) - kept else None
        if fixed is not None:
            return fixed
    return None


def named(code: str, tree: ast.AST, lineno: int | None, name: str, args: int, kept: int, names: list[str],
          method: bool, attribute: bool = False) -> str | None:
    """The calls to `name` on the line with `args` arguments by position, those past the first `kept` named `names`;
    of a function, only values written out (`pd.concat(a, b)` is a list forgotten, `pd.concat(frames, 1)` an axis);
    `attribute`: only its calls as a method (`ldata.pivot(...)`)."""
    for call in calls_on_line(tree, lineno, name):
        if len(call.args) != args or attribute and not isinstance(call.func, ast.Attribute) or (
                not method and not all(isinstance(a, ast.Constant) for a in call.args[kept:])):
            continue
        fixed = _named_call(code, call, kept, names)
        if fixed is not None:
            return fixed
    return None


def _named_call(code: str, call: ast.Call, kept: int, names) -> str | None:
    """`call`'s arguments by position past the first `kept` named `names`; None where it passes `*args` or one of
    `names` by name already."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(has_keyword(call, n) for n in names):
        return None
    return spliced(code, [(span(code, arg), f"{keyword}={source_of(code, arg)}")
                          for arg, keyword in zip(call.args[kept:], names)])


@repair(GUESS, TURN)
def keyword_only_guess(code: str, receipt: ParsedReceipt) -> str | None:
    """`keyword_only_now` by the notes where the library also removed a keyword of that callable (`to_excel`'s
    `encoding`, `fillna`'s `method`): today's order is the old one only if the removed keyword stood after the
    arguments named, which nothing here says, so a guess the run and the saved output judge, and of one argument
    only (`df.to_excel('x.xlsx', 'Sheet1')` -> `sheet_name='Sheet1'`; `fillna(0, None, 0)` is left: `method`, gone,
    stood second)."""
    found = POSITIONAL.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or tree is None or not found or int(found.group(3)) - int(found.group(2)) != 1:
        return None
    return _keywords_named(code, tree, receipt, removed=True)


def _keywords_named(code: str, tree: ast.Module, receipt: ParsedReceipt, removed: bool) -> str | None:
    found = POSITIONAL.search(receipt.evalue)
    if not found:
        return None
    owner, _, name = found.group(1).rpartition(".")
    allowed, given = int(found.group(2)), int(found.group(3))
    for change in changes():
        function = _said_of(change, found.group(1)) if SAYS_KEYWORD.search(change.words) else None
        names = _keyword_only(function, change, allowed, given - allowed) if function else None
        if names and bool(_removed_keywords(name, set(inspect.signature(function).parameters))) == removed:
            fixed = named(code, tree, receipt.lineno, name, given - bool(owner), allowed - bool(owner), names,
                          method=bool(owner))
            if fixed is not None:
                return fixed
    return None


def _said_of(change: Change, said: str):
    """Today's callable the error names (`NDFrame.to_csv`, `concat`) when the entry names it, as itself or as
    the method of a class that has it (`DataFrame.to_csv`); else None."""
    function, name = today(change, said), said.rpartition(".")[2]
    return function if callable(function) and any(
        n.rpartition(".")[2] == name and today(change, n) is function for n in change.names) else None


def _keyword_only(function, change: Change, allowed: int, extra: int) -> list[str] | None:
    """The first `extra` keyword-only parameters of `function` today, when it takes `allowed` arguments by
    position (the error's count) and those are the ones the entry says stay (``keys``)."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
    stay = STAY.search(change.words)
    if len(positional) != allowed or len(keyword) < extra or (
            stay and not set(re.findall(r"``(\w+)``", stay.group(1))) <= set(positional)):
        return None
    return keyword[:extra]


def _removed_keywords(name: str, today: set[str]) -> list[str]:
    """The keywords of `name` the knowledge base says were removed or deprecated that it no longer has, but those
    renamed to one it has (`line_terminator` -> `lineterminator` stands where it stood)."""
    return sorted({key for change in entries(name) if change.kind == "keyword"
                   and change.change in ("removed", "deprecated") for key in change.keys
                   if key != name and key not in today and key.isidentifier() and key.islower()
                   and replacement_of(change) not in today})


def _variables_named(code: str, tree: ast.Module, receipt: ParsedReceipt) -> str | None:
    """seaborn's variables by position (at most `x` and `y`) named, now that `data` is the only positional argument
    of the function the error names (seaborn 0.12: "so that `x` and `y` can be positional" again one day)."""
    found = POSITIONAL.search(receipt.evalue) or MULTIPLE_DATA.search(receipt.evalue)
    if not found:
        return None
    name, modules = found.group(1), {**_imported(tree), **receipt.modules}
    for change in changes():
        said = ONLY_DATA.search(change.words)
        module = IMPORTED_AS.get(change.library, change.library) if said else None
        try:
            params = list(inspect.signature(getattr(import_optional(module), name)).parameters.values())
        except (AttributeError, TypeError, ValueError):
            continue
        keywords = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
        if params[0].name != "data" or not set(said.groups()) <= keywords:
            continue
        for call in calls_on_line(tree, receipt.lineno, name):
            owner = call.func.value if isinstance(call.func, ast.Attribute) else None
            fixed = _named_call(code, call, 0, said.groups()) if (
                isinstance(owner, ast.Name) and modules.get(owner.id) == module and 0 < len(call.args) <= 2) else None
            if fixed is not None:
                return fixed
    return None


def _written_named(code: str, tree: ast.Module, receipt: ParsedReceipt) -> str | None:
    """The arguments by position named as the library's error writes the call with keywords instead (pandas:
    "Use `Series.plot(kind='barh', ax=<Axes: >)` instead of `Series.plot('barh', <Axes: >)`", its own names in its
    own order), on the call of that name on the line with as many arguments by position; where the error's keywords
    cannot be told from the values it writes (a value holding `, name=`) or the values written out differ, none."""
    said = WRITTEN_INSTEAD.search(receipt.evalue)
    names = re.findall(r"(?:^|, )([A-Za-z_]\w*)=", said.group(2)) if said else []
    for call in calls_on_line(tree, receipt.lineno, said.group(1).rpartition(".")[2]) if names else []:
        values = [a.value for a in call.args if isinstance(a, ast.Constant)]
        if len(call.args) == len(names) and (len(values) < len(names) or str(tuple(values))[1:-1] == said.group(3)):
            fixed = _named_call(code, call, 0, names)
            if fixed is not None:
                return fixed
    return None


def _displaced(code: str, tree: ast.Module, receipt: ParsedReceipt) -> str | None:
    """The last argument by position, where matplotlib's notes say the parameter it stood for is keyword-only now
    and the one there today, the error says, refuses it; on a method that is the entry's today or hands its
    arguments to it (`Axes.set_xticks` to `Axis.set_ticks`, matplotlib's own wrapper)."""
    said = MUST_BE_SEQUENCE.search(receipt.evalue)
    if not said:
        return None
    for module in sorted(set(receipt.modules.values())):
        if module.partition(".")[0] in receipt.libraries:
            import_optional(module)  # the modules the notebook imported, whose classes the values name (pyplot's)
    for call in calls_on_line(tree, receipt.lineno):
        func = call.func
        owner = OBJECT.match(receipt.values.get(func.value.id, "")) if (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) else None
        if owner is None or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        for change in changes():
            keyword = _displaced_by(change, class_named(change.library, owner.group(1)), func.attr, said.group(1),
                                    len(call.args))
            if keyword:
                return _named_call(code, call, len(call.args) - 1, [keyword])
    return None


@repair(MECHANICAL, DRIFT + 110)
def keyword_gone(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword the library took away, as its old version or its notes said: renamed, left out, or a method called
    on the result.

    Renamed as the old version's deprecation said: `OneHotEncoder(sparse=False)` -> `sparse_output=False`
    (changed.RENAMED_KEYWORDS); `Perceptron(n_iter=40)` -> `max_iter=40, tol=None`, as scikit-learn 0.19 ran it when
    it deprecated `n_iter` (changed.KEYWORD_EXTRAS); matplotlib's by the called name (`hist(normed=True)` ->
    `density=True`, whatever the error names: "Rectangle.set() got an unexpected keyword argument 'normed'";
    changed.RENAMED_CALL_KEYWORDS), and a scale's, which 3.3 named once for both axes ("The 'linthreshy' parameter
    of __init__() has been renamed 'linthresh'", 'basex' 'base', 'nonposy' 'nonpositive' through its renamed
    `nonpos`): `plt.yscale('symlog', linthreshy=0.05)` -> `linthresh=0.05`, where the scale class the error names
    takes the name without the axis now, in a call that sets that axis's scale. Renamed as the notes said
    (`read_excel(skip_footer=1)` -> `skipfooter=1`, an entry of `model/changes.json`, also where it names the
    function late: seaborn 0.9's `size` -> `height` "along with functions that use them"); an old keyword that took
    a function passing on the value the new one is named after gives that value (`date_parser=lambda x:
    pd.to_datetime(x, format=f)` -> `date_format=f`). Left out where the old version
    said it had no effect any more ("The parameter 'presort' is deprecated and has no effect", scikit-learn 0.22:
    changed.NO_EFFECT_KEYWORDS), or the library's error says so and to leave it to its default ("Setting a
    random_state has no effect since shuffle is False. You should leave random_state to its default (None), or set
    shuffle=True.", 0.24's KFold, which ignored it before), or the notes say it has no effect or that what it turned
    on is the default now (pandas 2.0: "Deprecated argument ``infer_datetime_format`` in :func:`to_datetime` [...],
    as a strict version of it is now the default": `pd.to_datetime(s, infer_datetime_format=True)` ->
    `pd.to_datetime(s)`). The method the notes said to call on the result
    instead (pandas 1.4: "Users should squeeze the :class:`DataFrame` afterwards with ``.squeeze("columns")``
    instead"): `pd.read_csv(f, squeeze=True)` -> `pd.read_csv(f).squeeze("columns")`."""
    tree = tree_of(code)
    return next(filter(None, (_keyword_edit(code, *gone) for gone in _keywords_gone(tree, receipt))), None)


def _keywords_gone(tree: ast.Module, receipt: ParsedReceipt):
    """(the calls, a keyword gone, what it is now: a new name, '' (none) or a method to call on the result, the
    keywords the old version set with it) for each way the tables and the notes say the error's keyword went."""
    m = UNEXPECTED_KEYWORD.search(receipt.evalue) if receipt.ename == "TypeError" else None
    key = (m.group(1), m.group(2)) if m else None
    line = calls_on_line(tree, receipt.lineno)
    called = calls_on_line(tree, receipt.lineno, _callee(m.group(1))) if m else []
    if key in RENAMED_KEYWORDS:
        yield called, key[1], RENAMED_KEYWORDS[key], KEYWORD_EXTRAS.get(key, ())
    if key in RENAMED_CALL_KEYWORDS:  # a constructor the call on the line passes it to
        yield line, key[1], RENAMED_CALL_KEYWORDS[key], ()
    for call in line if receipt.ename in ("TypeError", "AttributeError") else []:
        for kw in call.keywords:
            new = RENAMED_CALL_KEYWORDS.get((call_name(call), kw.arg))
            if new and (f"'{kw.arg}'" in receipt.evalue or f"'{new}'" in receipt.evalue):
                yield [call], kw.arg, new, ()
    if m:
        scaled = [c for c in line if call_name(c) in SCALE_CALLS.get(key[1][-1:], ())]
        yield scaled, key[1], _scale_keyword(*key) if scaled else None, ()
    if key in NO_EFFECT_KEYWORDS:
        yield called, key[1], "", ()
    said = NO_EFFECT_NOW.search(receipt.evalue) if receipt.ename in ("ValueError", "TypeError") else None
    if said and said.group(1) == said.group(2):
        yield line, said.group(2), "", ()
    for change in entries(key[1], _callee(key[0])) + _renamed_in(key[1], _callee(key[0])) if m else []:
        new = replacement_of(change)
        if change.kind == "keyword" and change.replacement_is == "none" and NO_EFFECT_SAID.search(change.words):
            yield called, key[1], "", ()  # pandas 2.0: "as a strict version of it is now the default"
        if change.kind in ("keyword", "function", "method") and new and new.isidentifier() and new != key[1]:
            yield called, key[1], new, (), True  # the notes' rename: a function's value by its new name's keyword
        then = CALL_AFTER.fullmatch(change.replacement) if change.replacement_is == "code" else None
        if then and then.group(1) == key[1] and "afterwards" in change.words:
            yield [c for c in called if any(k.arg == key[1] and isinstance(k.value, ast.Constant)
                                            and isinstance(k.value.value, bool) for k in c.keywords)], key[1], (
                "." + then.group(0).lstrip(".")), ()


def _keyword_edit(code: str, calls: list[ast.Call], old: str, new: str | None, extras=(),
                  valued: bool = False) -> str | None:
    """The one call of `calls` passing `old` (and not `new`) with `old` renamed `new`, its value as written (or,
    `valued`, as `_value_for` says), adding `extras` (a keyword and the constant the old version set it to) where
    the call passes none; left out (`new` ''); or left out for the method `new` (`.squeeze("columns")`) called on
    the result, where its value was True."""
    passing = [c for c in calls if has_keyword(c, old) and not has_keyword(c, new)]
    if new is None or len(passing) != 1:
        return None
    kw = next(k for k in passing[0].keywords if k.arg == old)
    if new.isidentifier():
        added = "".join(f", {name}={value}" for name, value in extras if not has_keyword(passing[0], name))
        value = _value_for(code, kw, new) if valued else source_of(code, kw.value)
        return replace_node(code, kw, f"{new}={value}{added}")
    then = new if isinstance(kw.value, ast.Constant) and kw.value.value is True else ""
    return replace_node(code, passing[0], _without_keyword(code, passing[0], kw) + then)


def _renamed_in(keyword: str, function: str) -> list[Change]:
    """The keyword renames that name `function` past their first names (seaborn 0.9: "Renamed the ``size``
    parameter to ``height`` in multi-plot grid objects (...) along with functions that use them (``factorplot``,
    :func:`lmplot`, ...)")."""
    return [c for c in entries(keyword) if c.kind == "keyword" and c.names[0] == keyword
            and function not in c.keys and any(n.rpartition(".")[2] == function for n in c.names)]


def _value_for(code: str, kw: ast.keyword, new: str) -> str:
    """What the renamed keyword takes: the old value; or, where the old keyword took a function that passes its
    argument on with the keyword the new one is named after (`date_parser=lambda x: pd.to_datetime(x,
    format=f)` -> `date_format`), that keyword's value."""
    if not isinstance(kw.value, ast.Lambda):
        return source_of(code, kw.value)
    body = kw.value.body
    passed = [k for k in body.keywords if k.arg and new.endswith("_" + k.arg)] if isinstance(body, ast.Call) else []
    if len(passed) != 1 or len(body.args) != 1:
        raise CannotTell(f"`{kw.arg}` took a function and `{new}` takes a value: what the function does decides it")
    return source_of(code, passed[0].value)


def _scale_keyword(callee: str, old: str) -> str | None:
    """The name of a scale's parameter `old` ('linthreshy') without its axis, or as matplotlib renamed that
    ('nonpos' -> 'nonpositive'), where the scale class the error names (`SymmetricalLogScale.__init__`) takes it."""
    scale = import_optional("matplotlib.scale")
    cls = getattr(scale, callee.removesuffix(".__init__"), None) if scale and callee.endswith(".__init__") else None
    if not isinstance(cls, type):
        return None
    takes = inspect.signature(cls.__init__).parameters
    return next((name for name in [old[:-1], *(new for (_, was), new in RENAMED_CALL_KEYWORDS.items()
                                               if was == old[:-1])] if name in takes), None)


def _callee(name: str) -> str:
    """The called name in a TypeError's name for a callable: `Perceptron` of `Perceptron.__init__`."""
    return name.split(".")[-2] if name.endswith(".__init__") else name.rsplit(".", 1)[-1]


@repair(MECHANICAL, DRIFT + 180)
def old_value(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword's value the library refuses now, as the one it said to write instead.

    A string of one-letter colors that matplotlib read as that many colors until 3.3 (`c=''`: no color, hollow
    markers; `c='rg'`: red, green) and rejects now ("'c' argument must be a color, ..., not ''"): the explicit list
    its 3.2 deprecation said to use instead (changed.STRING_AS_LIST), `c=[]`, `c=['r', 'g']`, wherever the cell
    passes that string as that argument. A value scikit-learn renamed, saying the new one "is equivalent" (1.0's
    "Criterion 'mse' was deprecated in v1.0 ... Use `criterion='squared_error'` which is equivalent",
    changed.EQUIVALENT_VALUES), refused now by its parameter validation ("The 'criterion' parameter of
    RandomForestRegressor must be a str among {...}. Got 'mse' instead."), wherever the cell passes the old one to
    that class. These two may be raised by a later cell, calling a function the cell defines or fitting what it
    made (a failed following cell: this cell is its cause). Values pandas replaced one for one, as its notes said
    "respectively" (2.0: "disallowing passing ``True`` and ``False`` into ``inclusive`` in :meth:`Series.between`
    in favor of ``"both"`` and ``"neither"`` respectively"), on the failing line: `s.between(1, 2, inclusive=True)`
    -> `inclusive='both'`."""
    tree = tree_of(code)
    texts = [*([receipt.message] if receipt.ename in ("ValueError", "InvalidParameterError") else []), *receipt.failed]
    colors = next(filter(None, map(COLOR_ARGUMENT.search, texts)), None)
    invalid = next(filter(None, map(INVALID_PARAMETER.search, texts)), None)
    wanted = {}
    if colors and all(ch in "".join(letters for letters, _ in STRING_AS_LIST.values()) for ch in colors.group(2)):
        wanted[None, colors.group(1), colors.group(2)] = "[" + ", ".join(repr(ch) for ch in colors.group(2)) + "]"
    if invalid and (invalid.group(2), invalid.group(1), invalid.group(3)) in EQUIVALENT_VALUES:
        wanted[invalid.group(2), invalid.group(1), invalid.group(3)] = repr(EQUIVALENT_VALUES[
            invalid.group(2), invalid.group(1), invalid.group(3)])
    said = receipt.ename in ("ValueError", "TypeError", "KeyError", "InvalidParameterError")
    passed = {}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        for kw in (k for k in call.keywords if isinstance(k.value, ast.Constant)):
            new = wanted.get((None, kw.arg, kw.value.value), wanted.get((call_name(call), kw.arg, kw.value.value)))
            if new is None and said and on_line(call, receipt.lineno):
                new = _value_instead(call_name(call), kw)
                new = None if new is None else repr(new)
            if new is not None:
                passed[kw.value] = new
    return replace_nodes(code, passed, passed.get)


MASKED = ("first", "last")  # pandas 2.1: "Deprecated :meth:`Series.first` ...; create a mask and filter using .loc"


@repair(MECHANICAL, TURN)
def said_mask(code: str, receipt: ParsedReceipt) -> str | None:
    """`obj.first('1W')` and `obj.last('3D')` (removed in pandas 3.0; 2.1 said "create a mask and filter using
    ``.loc`` instead"), as the mask pandas' own methods computed: `last` kept the rows after the last date less
    the offset; `first` those before the first date plus a fixed offset (`'3D'`; a day was one then), or up to the
    first date rolled forward to an anchored one (`'1W'`: the Sunday that ends its week), plus its further periods."""
    said = attribute_error(receipt)
    tree = parse(code)
    if not said or said[1] not in MASKED or said[0] not in ("DataFrame", "Series") or tree is None:
        return None
    if not any(c.library == "pandas" and replacement_of(c) == "loc" for c in entries(said[1])):
        return None
    alias = next((a for a, m in receipt.modules.items() if m == "pandas"), None) or "pd"
    calls = [c for c in calls_on_line(tree, receipt.lineno, said[1]) if isinstance(c.func, ast.Attribute)
             and len(c.args) == 1 and not c.keywords and isinstance(c.args[0], ast.Constant)
             and isinstance(c.args[0].value, str)]
    fixed = replace_nodes(code, calls, lambda c: _masked(code, c, said[1], alias))
    return fixed if fixed is None or alias in receipt.modules else f"import pandas as {alias}\n" + fixed


def _masked(code: str, call: ast.Call, method: str, pd: str) -> str:
    """The `.loc` filter `obj.first(offset)` or `obj.last(offset)` made, with `obj` written once."""
    pandas = import_optional("pandas")
    alias = call.args[0].value
    try:
        offset = pandas.tseries.frequencies.to_offset(alias)
    except ValueError:
        raise CannotTell(f"`{alias}` is no offset pandas reads today: which span `{method}` took") from None
    owner = call.func.value
    d = source_of(code, owner) if _plain(owner) else "d"
    if method == "last":
        mask = f"{d}.loc[{d}.index > {d}.index[-1] - {pd}.tseries.frequencies.to_offset({alias!r})]"
    elif isinstance(offset, (pandas.tseries.offsets.Tick, pandas.tseries.offsets.Day)):  # a Tick when it ran
        mask = f"{d}.loc[{d}.index < {d}.index[0] + {pd}.Timedelta({alias!r})]"
    else:  # pandas: the first date less the offset's one period when on it, plus the offset: rolled forward
        end = f"{pd}.tseries.frequencies.to_offset({alias!r})"
        more = f" + {offset.n - 1} * {end}.base" if offset.n != 1 else ""
        mask = f"{d}.loc[:{end}.rollforward({d}.index[0]){more}]"
    return mask if _plain(owner) else f"{source_of(code, owner)}.pipe(lambda d: {mask})"


def _plain(node: ast.expr) -> bool:
    """A name or a chain of attributes of one (`fb`, `self.prices`): written again, it is the same object."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _value_instead(function: str, kw: ast.keyword):
    """The value an entry says replaced `kw`'s, one for one with the old values it names; else None."""
    old = str(kw.value.value)
    for change in (c for c in changes() if {kw.arg, function} <= {n.rpartition(".")[2] for n in c.names}):
        news = [ast.literal_eval(v) if v[:1] in "\"'" else v for v in change.replacement.split(" or ")]
        olds = [n for n in change.names if n not in (kw.arg, function) and "." not in n]
        if ("respectively" in change.words and change.replacement_is == "code" and len(news) == len(olds) > 1
                and old in olds):
            return news[olds.index(old)]
    return None


@repair(MECHANICAL, LATER)
def said_none(code: str, receipt: ParsedReceipt) -> str | None:
    """Never a repair: a name its library removed naming nothing to use instead (scikit-learn 1.0: "Deprecates
    `datasets.load_boston` in 1.0 and it will be removed in 1.2", no replacement named, nor by a deprecation) is
    said so, with the library's words, rather than guessed at; tried after every repair that could fit."""
    said, tree = attribute_error(receipt), parse(code)
    if said and said[0].startswith("module "):
        gone = [(said[0].removeprefix("module "), said[1])]
    elif receipt.ename == "ImportError" and tree is not None:  # scikit-learn's own `__getattr__` words it its way
        libraries = {IMPORTED_AS.get(c.library, c.library) for c in changes()}  # never the user's own module
        gone = [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                and n.module.split(".")[0] in libraries and on_line(n, receipt.lineno)
                for a in n.names if not _has(n.module, a.name)]
    else:
        return None
    for module, name in gone:
        about = [c for c in entries(name) if IMPORTED_AS.get(c.library, c.library) == module.split(".")[0]
                 and c.names[0].rpartition(".")[2] == name]
        named = [c for c in about if replacement_of(c)]  # an earlier release said what it became
        for change in [c for c in about if c.replacement_is == "none" and not c.deprecation_replacement]:
            if named:
                raise CannotTell(f"{change.library} {change.version} {change.change} `{name}`; {named[0].library} "
                                 f"{named[0].version} had said: \"{named[0].words}\"")
            raise CannotTell(f"{change.library} {change.version} {change.change} `{name}` and named no "
                             f"replacement: \"{change.words}\"")
    return None


def _has(module: str, name: str) -> bool:
    """Whether a library module has `name` today (a module's `__getattr__` may raise anything for one it lacks)."""
    try:
        return hasattr(import_optional(module), name)
    except Exception:  # noqa: BLE001 - scikit-learn raises ImportError for `load_boston`
        return False


@repair(MECHANICAL, TURN)
def said_class_method(code: str, receipt: ParsedReceipt) -> str | None:
    """A function its library removed, as the class method its words name to call instead that takes the
    arguments the cell passes (scikit-learn 1.0: "`plot_confusion_matrix` is deprecated in favor of these two
    class methods", `ConfusionMatrixDisplay.from_estimator` and `from_predictions`): `plot_confusion_matrix(clf, X,
    y)` -> `ConfusionMatrixDisplay.from_estimator(clf, X, y)`, imported from the same module."""
    tree = parse(code)
    found = CANNOT_IMPORT.search(receipt.evalue) if receipt.ename == "ImportError" else None
    said = attribute_error(receipt)
    if found:
        name, module = found.groups()
    elif said and said[0].startswith("module "):
        module, name = said[0].removeprefix("module "), said[1]
    else:
        return None
    home = import_optional(module) if tree is not None else None
    if home is None or _has(module, name):
        return None
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == module
               and any(a.name == name for a in n.names)] if found else []
    bound = next((a.asname or a.name for n in imports for a in n.names if a.name == name), None)
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and (
        isinstance(c.func, ast.Name) and c.func.id == bound if found else
        isinstance(c.func, ast.Attribute) and c.func.attr == name and _names_module(
            source_of(code, c.func.value), module, {**_imported(tree), **receipt.modules}))]
    if not calls or found and not (len(imports) == 1 and on_line(imports[0], receipt.lineno)):
        return None
    for change in entries(name):
        if IMPORTED_AS.get(change.library, change.library) != module.split(".")[0]:
            continue
        fits = [(cls, method) for cls, method in _class_methods(change, home)
                if all(_takes(getattr(getattr(home, cls), method), call) for call in calls)]
        if len(fits) > 1:
            raise CannotTell(f"{change.library} said to call one of {', '.join(f'{c}.{m}' for c, m in fits)} "
                             f"instead of `{name}`, and the cell's arguments fit each")
        if not fits:
            continue
        cls, method = fits[0]
        edits = [(c.func, f"{cls}.{method}" if found else f"{source_of(code, c.func.value)}.{cls}.{method}")
                 for c in calls]
        for node in imports:
            names = [cls if a.name == name else a.name + (f" as {a.asname}" if a.asname else "") for a in node.names]
            edits.append((node, f"from {module} import {', '.join(dict.fromkeys(names))}"))
        return spliced(code, [(span(code, node), text) for node, text in edits])
    return None


def _class_methods(change: Change, home) -> list[tuple[str, str]]:
    """(class, method) of each replacement an entry names (`metrics.ConfusionMatrixDisplay.from_estimator`) that
    the module the cell imports from has today as a class's method."""
    said = change.replacement if change.replacement_is == "code" else change.deprecation_replacement or ""
    found = []
    for new in (part.strip().rstrip("()") for part in said.split(" or ")):
        owner, _, method = new.rpartition(".")
        cls = getattr(home, owner.rpartition(".")[2], None) if owner else None
        if isinstance(cls, type) and inspect.ismethod(getattr(cls, method, None)):  # a class method: bound to it
            found.append((cls.__name__, method))
    return found


def _takes(function, call: ast.Call) -> bool:
    """Whether `function` takes the arguments of `call` as it passes them (by position and by keyword)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False  # `*args`, `**kwargs`: what they hold decides
    try:
        inspect.signature(function).bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except (TypeError, ValueError):
        return False
    return True


def _displaced_by(change: Change, cls: type | None, method: str, taken: str, given: int) -> str | None:
    """The keyword-only parameter `change` names, when `cls.method` is (or hands its arguments to) a callable the
    change names, whose parameter by position number `given` (after self) is `taken` today."""
    words = NOW_KEYWORD_ONLY.search(change.words)
    function = getattr(cls, method, None) if words and cls is not None else None
    if function is None:
        return None
    keyword = words.group(1)
    for said in change.names:
        target = today(change, said) if "." in said.lstrip(".") else None
        if target is None or not (function is target or _hands_to(function, said.rpartition(".")[2])):
            continue
        params = list(inspect.signature(target).parameters.values())[1:]
        if (len(params) > given and params[given - 1].name == taken
                and any(p.name == keyword and p.kind == p.KEYWORD_ONLY for p in params)):
            return keyword
    return None


def _hands_to(function, name: str) -> bool:
    """Whether `function` is a wrapper that calls the method `name` of one of its attributes (matplotlib's
    `_axis_method_wrapper`: `Axes.set_xticks` calls `self.xaxis.set_ticks`), as its closure says."""
    cells = getattr(function, "__closure__", None) or ()
    for cell in cells:
        try:
            held = cell.cell_contents
        except ValueError:
            continue
        if type(held).__name__ == "attrgetter" and repr(held).endswith(f".{name}')"):
            return True
    return False

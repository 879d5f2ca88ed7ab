"""Generic rewriters that write what a library's notes say to write instead of a removed spelling, when that is
more than a new name: an operator (`Index.contains`: "use key in index"), an indexer (`df[string]` on dates:
"use df.loc[string]"), a module moved whole (`sklearn.cross_validation`: "moved to model_selection"), the
arguments a call may no longer pass by position (pandas 2.0: "Disallow passing non-keyword arguments to
:meth:`DataFrame.set_index` except ``keys``"), named. Each declares itself (registry.py) and fires only when an
entry of `model/changes.json` says so.
"""

from __future__ import annotations

import ast
import inspect
import re

from .changed import SKLEARN_NAMES_MOVED
from .drift import UNEXPECTED_KEYWORD as UNEXPECTED, _without_keyword, named
from .edits import CannotTell, ParsedReceipt, call_name, calls_on_line, on_line, parse, replace_node, source_of
from .generic import (  # the knowledge base is read through generic.py: the one crossing up to model/
    IMPORTED_AS,
    TURN as GENERIC_TURN,
    Change,
    changes,
    class_named,
    entries,
    family,
    replacement_of,
)
from .names import attribute_error, import_optional
from .registry import GUESS, MECHANICAL, repair

TURN = GENERIC_TURN + 6  # after generic.py's and exported.py's rewriters (registry.py)
LATER = TURN + 2  # after patterns.json's whole_column_set and missing_labels (DRIFT+277)
MEMBERSHIP = re.compile(r"^(\w+) in (\w+)$")  # "key in index"


@repair(MECHANICAL, TURN)
def said_operator(code: str, receipt: ParsedReceipt) -> str | None:
    """A method whose removal says to write an operator: `idx.contains(key)` ("use key in index", pandas 1.0)
    -> `key in idx`."""
    said, tree = attribute_error(receipt), parse(code)
    if not said or said[0].startswith("module ") or tree is None:
        return None
    owner, old = said
    for change in entries(old):
        form = MEMBERSHIP.match(change.replacement if change.replacement_is == "code"
                                else change.deprecation_replacement or "")
        cls = class_named(change.library, owner) if form else None
        if cls is None or not any(n.rpartition(".")[2] == old and family(cls, n.rpartition(".")[0])
                                  for n in change.names):
            continue
        for call in calls_on_line(tree, receipt.lineno, old):
            if isinstance(call.func, ast.Attribute) and len(call.args) == 1 and not call.keywords:
                text = f"{source_of(code, call.args[0])} in {source_of(code, call.func.value)}"
                return replace_node(code, call, text if _alone(tree, call) else f"({text})")
    return None


def _alone(tree: ast.Module, node: ast.expr) -> bool:
    """Whether `node` is a whole statement's value (`x = node`, `node`): no parentheses needed."""
    return any(isinstance(s, (ast.Expr, ast.Assign)) and s.value is node for s in ast.walk(tree))


STAYS = re.compile(r"\bwill\s+stay\s+available\b|\bremains?\s+available\b", re.IGNORECASE)


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
        for node in sorted(found, key=lambda n: (n.lineno, n.col_offset), reverse=True):
            code = replace_node(code, node, f"{alias}.{name}")
        if found:
            return code
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
    for node in sorted(found, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        code = replace_node(code, node, f"{source_of(code, node.value)}.loc[{source_of(code, node.slice)}]")
    return code if found else None


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
    found = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", receipt.evalue)
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


@repair(MECHANICAL, TURN)
def said_package(code: str, receipt: ParsedReceipt) -> str | None:
    """A package its library said moved to another whole (IPython 4.0's shims: "`IPython.html.widgets` has moved to
    `ipywidgets`"), imported from there: `from IPython.html.widgets import interact` -> `from ipywidgets import
    interact`, when that package is installed and has every name imported; the longest old name said first."""
    missing = re.search(r"No module named '([\w.]+)'", receipt.evalue)
    tree = parse(code)
    if receipt.ename not in ("ImportError", "ModuleNotFoundError") or not missing or tree is None:
        return None
    moves = sorted(((c.names[0], c.replacement) for c in changes() if c.kind == "module" and c.names
                    and c.replacement_is == "code" and IMPORTED.match(c.replacement)), key=lambda m: -len(m[0]))
    for node in ast.walk(tree):
        if not (isinstance(node, (ast.Import, ast.ImportFrom)) and on_line(node, receipt.lineno)):
            continue
        olds = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
        for old in olds:
            new = next((new + old[len(src):] for src, new in moves if old == src or old.startswith(src + ".")), None)
            if new is None or not (old + ".").startswith(missing.group(1) + "."):
                continue
            home = import_optional(new)
            if isinstance(node, ast.ImportFrom) and home is not None and all(
                    a.name == "*" or hasattr(home, a.name) for a in node.names):
                names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
                return replace_node(code, node, f"from {new} import {names}")
            if isinstance(node, ast.Import) and home is not None and len(node.names) == 1 and node.names[0].asname:
                return replace_node(code, node, f"import {new} as {node.names[0].asname}")  # `IPython.x.y` bare: no
    return None


IMPORTED = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$")


TAKES = re.compile(r"^([\w.]+)\(\) takes (?:from \d+ to )?(\d+) positional arguments? but (\d+) (?:were|was) given")
SAYS_KEYWORD = re.compile(r"non-keyword argument|positional argument|keyword[- ]only", re.IGNORECASE)
STAY = re.compile(r"\bexcept(?: for)? ((?:``\w+``(?:,| and| or|\s)*)+)")


@repair(MECHANICAL, TURN)
def said_keyword_only(code: str, receipt: ParsedReceipt) -> str | None:
    """Arguments passed by position to a callable its library made keyword-only past its first ones (pandas 2.0:
    "Disallow passing non-keyword arguments to :meth:`DataFrame.set_index` except ``keys``"), named as today's
    signature of the installed library names its keyword-only parameters, in their order: pandas' deprecation
    made them keyword-only where they stood (`df.set_index('b', False)` -> `df.set_index('b', drop=False)`).
    Not when the knowledge base says a keyword of it was removed since (`keyword_only_guess`)."""
    return _keywords_named(code, receipt, removed=False)


@repair(GUESS, TURN)
def keyword_only_guess(code: str, receipt: ParsedReceipt) -> str | None:
    """`said_keyword_only` where the library also removed a keyword of that callable (`to_excel`'s `encoding`,
    `fillna`'s `method`): today's order is the old one only if the removed keyword stood after the arguments
    named, which nothing here says, so a guess the run and the saved output judge, and of one argument only
    (`df.to_excel('x.xlsx', 'Sheet1')` -> `sheet_name='Sheet1'`; `fillna(0, None, 0)` is left: `method`, gone,
    stood second)."""
    found = TAKES.search(receipt.evalue)
    if not found or int(found.group(3)) - int(found.group(2)) != 1:
        return None
    return _keywords_named(code, receipt, removed=True)


def _keywords_named(code: str, receipt: ParsedReceipt, removed: bool) -> str | None:
    found = TAKES.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
        return None
    owner, _, name = found.group(1).rpartition(".")
    allowed, given = int(found.group(2)), int(found.group(3))
    for change in changes():
        function = _said_of(change, owner, name) if SAYS_KEYWORD.search(change.words) else None
        names = _keyword_only(function, change, allowed, given - allowed) if function else None
        if names and bool(_removed_keywords(name, set(inspect.signature(function).parameters))) == removed:
            fixed = named(code, tree, receipt.lineno, name, given - bool(owner), allowed - bool(owner), names,
                           method=bool(owner))
            if fixed is not None:
                return fixed
    return None


def _said_of(change: Change, owner: str, name: str):
    """Today's callable the error names (`NDFrame.to_csv`, `concat`) when the entry names it, as itself or as
    the method of a class that has it (`DataFrame.to_csv`); else None."""
    root = import_optional(IMPORTED_AS.get(change.library, change.library))
    cls = class_named(change.library, owner) if owner else None
    function = getattr(cls, name, None) if owner else getattr(root, name, None)
    if root is None or not callable(function):
        return None
    for said in change.names:
        said_owner, _, said_name = said.lstrip(".").rpartition(".")
        if said_name != name:
            continue
        said_cls = class_named(change.library, said_owner) if said_owner else None
        if getattr(said_cls, name, None) is function if said_owner else getattr(root, name, None) is function:
            return function
    return None


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


ONLY_DATA = re.compile(r"`data` is the first and only positional argument.*so that `(\w+)` and `(\w+)` can be "
                       r"positional", re.DOTALL)  # seaborn 0.12's words
MULTIPLE = re.compile(r"^([\w.]+)\(\) got multiple values for argument 'data'")


@repair(MECHANICAL, TURN)
def said_positional_variables(code: str, receipt: ParsedReceipt) -> str | None:
    """The variables a library's functions took by position, named as `x` and `y` now that `data` is their only
    positional argument: `sns.lmplot('a', 'b', data=df)` -> `sns.lmplot(x='a', y='b', data=df)`.

    seaborn 0.12: "`data` is the first and only positional argument", "so that `x` and `y` can be positional" again
    one day; 0.11: "The parameter names for the positional variables are now ``x`` and ``y``" (`sns.kdeplot(s, t)`
    -> `x=s, y=t`)."""
    found = TAKES.search(receipt.evalue) or MULTIPLE.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
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
            if (isinstance(owner, ast.Name) and modules.get(owner.id) == module and 0 < len(call.args) <= 2
                    and not any(isinstance(a, ast.Starred) for a in call.args)
                    and not any(k.arg in said.groups() for k in call.keywords)):
                for arg, keyword in reversed(list(zip(call.args, said.groups()))):
                    code = replace_node(code, arg, f"{keyword}={source_of(code, arg)}")
                return code
    return None


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
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset), reverse=True):
        code = replace_node(code, call, _masked(code, call, said[1], alias))
    if not calls:
        return None
    return code if alias in receipt.modules else f"import pandas as {alias}\n" + code


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


METHOD_NAMED = re.compile(r"^obj\.(\w+)\(\)(?: or obj\.(\w+)\(\))*$")


@repair(MECHANICAL, TURN)
def method_by_value(code: str, receipt: ParsedReceipt) -> str | None:
    """A method removed whose `method` argument named the method to call instead (pandas 2.1: "Deprecated the
    ``method`` and ``limit`` keywords on ... :meth:`.Resampler.fillna`, use ``obj.bfill()`` or ``obj.ffill()``
    instead"): `r.fillna('nearest')` -> `r.nearest()`, where today's class has that method."""
    said = attribute_error(receipt)
    tree = parse(code)
    if not said or said[0].startswith("module ") or tree is None:
        return None
    owner, old = said
    for change in entries(old):
        if "method" not in change.keys or change.replacement_is != "code" or not METHOD_NAMED.match(
                change.replacement):
            continue
        cls = class_named(change.library, owner)
        if cls is None or not any(n.rpartition(".")[2] == old and family(cls, n.rpartition(".")[0].lstrip("."))
                                  for n in change.names):
            continue
        for call in calls_on_line(tree, receipt.lineno, old):
            value = _method_value(call)
            if value and isinstance(call.func, ast.Attribute) and inspect.isfunction(
                    inspect.getattr_static(cls, value, None)):
                rest = [source_of(code, k) for k in call.keywords if k.arg != "method"]
                return replace_node(code, call, f"{source_of(code, call.func.value)}.{value}({', '.join(rest)})")
    return None


def _method_value(call: ast.Call) -> str | None:
    """The method name a call passes as its first argument or as `method=`, written out (`'nearest'`)."""
    given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "method")]
    if len(given) != 1 or len(call.args) > 1 or not isinstance(given[0], ast.Constant):
        return None
    value = given[0].value
    return value if isinstance(value, str) and value.isidentifier() else None


@repair(MECHANICAL, LATER)
def said_value(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword's values the library replaced one for one, as its notes said "respectively" (pandas 2.0: "disallowing
    passing ``True`` and ``False`` into ``inclusive`` in :meth:`Series.between` in favor of ``"both"`` and
    ``"neither"`` respectively"): `s.between(1, 2, inclusive=True)` -> `inclusive='both'`."""
    tree = parse(code)
    if receipt.ename not in ("ValueError", "TypeError", "KeyError", "InvalidParameterError") or tree is None:
        return None
    for call in calls_on_line(tree, receipt.lineno):
        for kw in call.keywords:
            new = _value_instead(call_name(call), kw) if isinstance(kw.value, ast.Constant) else None
            if new is not None:
                return replace_node(code, kw.value, repr(new))
    return None


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
def keyword_as_call(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword removed for a method to call on the result, as the notes said (pandas 1.4: "Users should squeeze the
    :class:`DataFrame` afterwards with ``.squeeze("columns")`` instead"): `pd.read_csv(f, squeeze=True)` ->
    `pd.read_csv(f).squeeze("columns")`."""
    found = UNEXPECTED.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not found or tree is None:
        return None
    function, keyword = found.group(1).rpartition(".")[2], found.group(2)
    for change in entries(keyword, function):
        then = re.fullmatch(r"\.?(\w+)\((.*)\)", change.replacement) if change.replacement_is == "code" else None
        if then is None or then.group(1) != keyword or "afterwards" not in change.words:
            continue
        for call in calls_on_line(tree, receipt.lineno, function):
            kw = next((k for k in call.keywords if k.arg == keyword), None)
            if kw is None or not isinstance(kw.value, ast.Constant) or not isinstance(kw.value.value, bool):
                continue
            kept = _without_keyword(code, call, kw)
            return replace_node(code, call, f"{kept}.{then.group(0).lstrip('.')}" if kw.value.value else kept)
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
        for change in entries(name):
            if (IMPORTED_AS.get(change.library, change.library) != module.split(".")[0]
                    or change.replacement_is != "none" or change.deprecation_replacement
                    or change.names[0].rpartition(".")[2] != name):
                continue
            raise CannotTell(f"{change.library} {change.version} {change.change} `{name}` and named no "
                             f"replacement: \"{change.words}\"")
    return None


def _has(module: str, name: str) -> bool:
    """Whether a library module has `name` today (a module's `__getattr__` may raise anything for one it lacks)."""
    try:
        return hasattr(import_optional(module), name)
    except Exception:  # noqa: BLE001 - scikit-learn raises ImportError for `load_boston`
        return False


CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")


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
        for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
            code = replace_node(code, node, text)
        return code
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


MUST_BE = re.compile(r"^(\w+)=(.+) must be a sequence")  # matplotlib 3.5's set_ticks: "labels=10 must be a sequence"
NOW_KEYWORD_ONLY = re.compile(r"The \*(\w+)\* parameter in (.+?) (?:is|are) now keyword-only")
OBJECT = re.compile(r"^<(\w+)\b")  # the receipt's value of a name: `ax = <Axes: >`


@repair(MECHANICAL, TURN)
def said_keyword_only_displaced(code: str, receipt: ParsedReceipt) -> str | None:
    """An argument given by position where a parameter stood that its library's notes say is now keyword-only,
    which a parameter added since now takes and refuses: matplotlib 3.4's "The *minor* parameter in
    `.Axis.set_ticks` [...] is now keyword-only", and 3.5's `labels`, second today, so `ax.set_xticks(ticks, 10)`
    (`minor=10` in matplotlib before 3.5) raises "labels=10 must be a sequence": given as `minor=10`. Only the
    last argument by position, on the parameter the error names, of a method that is the entry's today or
    hands its arguments to it (`Axes.set_xticks` to `Axis.set_ticks`, matplotlib's own wrapper)."""
    said = MUST_BE.search(receipt.evalue) if receipt.ename == "TypeError" else None
    tree = parse(code)
    if not said or tree is None:
        return None
    taken = said.group(1)
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
            keyword = _displaced_by(change, class_named(change.library, owner.group(1)), func.attr, taken,
                                    len(call.args))
            if keyword:
                last = call.args[-1]
                return replace_node(code, last, f"{keyword}={source_of(code, last)}")
    return None


def _displaced_by(change: Change, cls: type | None, method: str, taken: str, given: int) -> str | None:
    """The keyword-only parameter `change` names, when `cls.method` is (or hands its arguments to) a callable the
    change names, whose parameter by position number `given` (after self) is `taken` today."""
    words = NOW_KEYWORD_ONLY.search(change.words)
    function = getattr(cls, method, None) if words and cls is not None else None
    if function is None:
        return None
    keyword = words.group(1)
    for said in change.names:
        said_owner, _, said_name = said.lstrip(".").rpartition(".")
        target = getattr(class_named(change.library, said_owner), said_name, None) if said_owner else None
        if target is None or not (function is target or _hands_to(function, said_name)):
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

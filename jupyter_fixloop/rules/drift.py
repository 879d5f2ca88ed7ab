"""Built-in repairs for API drift: code written for an older library, repaired from the error's own
words or from what the library says it has now.

- `did_you_mean`: a string the error rejects and names the replacement of ("Invalid frequency: H.
  Did you mean h?", "'M' is no longer supported ... use 'ME' instead"), multipliers kept (`'4M'`); a
  frequency of several units (`'1H30T'`) or a rolling window (`'2H'`) rewritten unit by unit, each
  unit's name now asked of pandas (`'1h30min'`).
- patterns.json (rules/patterns.py) holds more, as data: `reduction_level` (`s.sum(level=0)`), `join_axes`,
  `period_fields`, `resample_keyword` (`loffset=`, `kind=`), `removed_method` (`is_lexsorted`, `mad`, `swapaxes`),
  `keyword_unspecified` (a keyword the error says "must be unspecified": `stack(dropna=False)`, left out),
  `keyword_value_hint` ("Use header=None for ...": that value for the keyword the failing call passes),
  `scalar_as_2d` (one number where scikit-learn wants rows of features: `[[x]]`, as its error's two reshapes
  both say for one number), `concat_sorted` (`sort=True`, where the output differs: pandas before 1.0 sorted).
- `style_name`: a matplotlib style that was renamed: the nearest name of `style.available`.
- `groupby_axis`: `groupby(..., axis=1)` groups the transpose (`df.T.groupby(...).sum().T`).
- `setitem_upcast`: a float set into integers (`s[mask] = 13.6`): cast to floats first, as pandas 1 did.
- `moved_function`: `pd.core.reshape.util.cartesian_product` where the library defines that name now.
- `method_now_function`: a method numpy took off its arrays (`arr.ptp()`) where it keeps the function
  of that name (`np.ptp(arr)`).
- `changed_default`: a default scikit-learn changed that today's error names (`Solver lbfgs supports only
  'l2' ...`): the old one passed (`LogisticRegression(penalty='l1', solver='liblinear')`).
- said.py holds the keywords and values changed.json's tables know (`keyword_only_now`, `keyword_gone`,
  `old_value`), beside what the libraries' notes say of them.
"""

from __future__ import annotations

import ast
import difflib
import re

from .changed import CHANGED_DEFAULTS, REDUCERS_BY_NAME, SETTERS_REMOVED
from .edits import (
    ParsedReceipt,
    add_keyword,
    call_name,
    calls_on_line,
    has_keyword,
    insert_before,
    insert_import,
    on_line,
    parse,
    replace_node,
    replace_nodes,
    source_of,
    span,
    spliced,
    tree_of,
)
from .names import attribute_error, import_optional
from .registry import DRIFT, GUESS, MECHANICAL, OUTPUTS, repair
from .tables import (
    AGGREGATING,
    DID_YOU_MEAN,
    DID_YOU_MEAN_NESTED,
    FREQUENCY_PART,
    LIBRARY_OBJECT,
    MULTIPLE_KEYS,
    NO_SETTER,
    OPTION_CALLS,
    QUOTED_HINT,
    STACK_SEQUENCE,
    STACKING,
    UNIT,
    WINDOW,
)


@repair(MECHANICAL, DRIFT + 20, errors=("ValueError", "KeyError", "TypeError"))
def did_you_mean(code: str, receipt: ParsedReceipt) -> str | None:
    """A string the library rejects and names the replacement of: 'H' -> 'h', '4M' -> '4ME'. A frequency
    of several units ('1H30T') is rewritten unit by unit, each as pandas names it now ('1h30min')."""
    # `rolling('2H')`: the window is a frequency; `pd.to_timedelta(x, unit='T')`: a unit is named as its frequency
    # is now ('T' -> 'min'); the error does not say its name now
    said = WINDOW.search(receipt.message) or UNIT.search(receipt.message)
    if said:
        now = frequency_now(said.group(1))
        return _replace_in_string(code, receipt.lineno, said.group(1), now) if now and now != said.group(1) else None
    for old, new in suggested(receipt.message):
        if len(FREQUENCY_PART.findall(old)) > 1:  # several units: never collapsed to one unit's name
            new = frequency_now(old)
            if new is None:
                continue
        fixed = _replace_in_string(code, receipt.lineno, old, new)
        if fixed is not None:
            return fixed
    return None


def suggested(message: str) -> list[tuple[str, str]]:
    """(name, the name an error says to use instead) as it words it ("Did you mean h?", "Please use 'ME' instead")."""
    return [found for pattern in (DID_YOU_MEAN, QUOTED_HINT, DID_YOU_MEAN_NESTED) for found in pattern.findall(message)]


def frequency_now(value: str) -> str | None:
    """`value`, a pandas frequency of one or more units with their multiples ('2H', '1H30T', 'W-SUN'),
    with each unit pandas rejects replaced by the one its error names; asked of pandas unit by unit,
    so that no unit is lost. None when pandas cannot say, or does not take the result."""
    frequencies = import_optional("pandas.tseries.frequencies")
    parts = FREQUENCY_PART.findall(value)
    if frequencies is None or not parts or "".join(n + unit for n, unit in parts) != value:
        return None
    now = []
    for multiple, unit in parts:
        for _ in range(3):  # 'A-JUN' -> 'Y-JUN' -> 'YE-JUN': each name pandas gives, until it takes one
            try:
                frequencies.to_offset(unit)
                break
            except ValueError as exc:
                unit = next((new for _, new in suggested(str(exc))), None)
                if unit is None or not FREQUENCY_PART.fullmatch(unit):
                    return None
        now.append(multiple + unit)
    try:
        frequencies.to_offset("".join(now))
    except ValueError:
        return None
    return "".join(now)


def _replace_in_string(code: str, lineno: int | None, old: str, new: str) -> str | None:
    """Replace the string constant `old` (or `<n>old`, an offset with a multiplier) on the failing
    line, else where exactly one such string is in the cell."""
    tree = tree_of(code)
    wanted = re.compile(rf"^(-?\d*){re.escape(old)}$")
    strings = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and wanted.match(n.value)]
    here = [n for n in strings if on_line(n, lineno)] if lineno is not None else []
    targets = here or (strings if len(strings) == 1 else [])
    return replace_nodes(code, targets, lambda n: _quote(code, n) + wanted.match(n.value).group(1) + new
                         + _quote(code, n))


def _quote(code: str, node: ast.Constant) -> str:
    """The quote a string literal is written with."""
    text = source_of(code, node)
    return text[-1] if text[-1] in "'\"" else "'"


def _axis(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant):
        return {0: 0, 1: 1, "index": 0, "rows": 0, "columns": 1}.get(node.value)
    return None


@repair(GUESS, DRIFT + 220)
def style_name(code: str, receipt: ParsedReceipt) -> str | None:
    """A matplotlib style that is not there any more (`seaborn-whitegrid`): the nearest of `style.available`."""
    m = re.search(r"'([^']+)' is not a valid package style", receipt.message)
    if not m:
        return None
    style = import_optional("matplotlib.style")
    available = list(getattr(style, "available", []) or [])
    close = difflib.get_close_matches(m.group(1), available, n=1, cutoff=0.6)
    if not close:
        return None
    return _replace_in_string(code, receipt.lineno, m.group(1), close[0])


def _chained_call(tree: ast.AST, inner: ast.Call) -> ast.Call | None:
    """The call made on `inner`'s result: `inner.mean()` for `ts.resample('ME').mean()`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.value is inner:
            return node
    return None


def _without_keyword(code: str, call: ast.Call, kw: ast.keyword) -> str:
    """The source of `call` without the keyword `kw` (and its comma)."""
    start, end = span(code, call)
    kw_start, kw_end = span(code, kw)
    head, tail = code[start:kw_start], code[kw_end:end]
    if tail.lstrip().startswith(","):
        tail = tail.lstrip()[1:].lstrip()
    else:
        head = head.rstrip().rstrip(",")
    return head + tail


@repair(GUESS, DRIFT + 90)
def groupby_axis(code: str, receipt: ParsedReceipt) -> str | None:
    """`df.groupby(key, axis=1).sum()` (removed in pandas 3) is `df.T.groupby(key).sum().T`, as pandas's
    deprecation said; a grouped object assigned and then aggregated in the same cell likewise."""
    if receipt.ename != "TypeError" or not re.search(r"groupby\(\) got an unexpected keyword argument 'axis'",
                                                     receipt.evalue):
        return None
    tree = tree_of(code)
    for call in calls_on_line(tree, receipt.lineno, "groupby"):
        kw = next((k for k in call.keywords if k.arg == "axis"), None)
        if kw is None or not isinstance(call.func, ast.Attribute) or _axis(kw.value) != 1:
            continue
        owner = call.func.value
        outer = _chained_call(tree, call)  # `df.groupby(...).sum()`, or `g = df.groupby(...)` then `g.sum()`
        target = _assigned_name(tree, call) if outer is None else None
        uses = [outer] if outer is not None else _aggregations_of(tree, target, call) if target is not None else []
        if not uses:
            return None
        edits = [((span(code, u)[1], span(code, u)[1]), ".T") for u in uses]
        start, end = span(code, call)
        grouped = _without_keyword(code, call, kw)
        owner_text = source_of(code, owner)
        owner_text = owner_text if isinstance(owner, (ast.Name, ast.Attribute, ast.Subscript)) else f"({owner_text})"
        grouped = owner_text + ".T" + grouped[span(code, owner)[1] - start:]
        return spliced(code, [*edits, ((start, end), grouped)])
    return None


def _assigned_name(tree: ast.AST, value: ast.AST) -> str | None:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and node.value is value
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            return node.targets[0].id
    return None


def _aggregations_of(tree: ast.AST, name: str, after: ast.AST) -> list[ast.Call]:
    """The calls `name.agg(...)` below `after`, when that is every later read of `name` in the cell."""
    calls, reads = [], 0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Load)
            and node.lineno > after.end_lineno
        ):
            reads += 1
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and node.lineno > after.end_lineno
        ):
            calls.append(node)
    return calls if calls and len(calls) == reads else []


@repair(MECHANICAL, DRIFT + 140)
def setitem_upcast(code: str, receipt: ParsedReceipt) -> str | None:
    """`s[mask] = 13.6` into integers: pandas 1 turned `s` into floats, pandas 3 raises ("Invalid value
    '13.6' for dtype 'int64'"); cast first, as its deprecation said: `s = s.astype('float64')`."""
    m = re.search(r"Invalid value '([^']*)' for dtype '(u?int\d*|bool)'", receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not m or tree is None or receipt.lineno is None:
        return None
    try:
        float(m.group(1))
    except ValueError:
        return None  # text into numbers: not an upcast pandas 1 made
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and node.lineno == receipt.lineno and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Subscript) and isinstance(node.targets[0].value, ast.Name)):
            name = node.targets[0].value.id
            return insert_before(code, node.lineno, f"{name} = {name}.astype('float64')")
    return None


@repair(GUESS, DRIFT + 290)
def moved_function(code: str, receipt: ParsedReceipt) -> str | None:
    """`pd.core.reshape.util.cartesian_product(...)` when `pandas.core.reshape` has no `util` any more:
    the one module of the same library that defines a function or class of that name now."""
    found = attribute_error(receipt)
    tree = parse(code)
    if not found or not found[0].startswith("module ") or tree is None:
        return None
    module, missing = found[0][len("module "):], found[1]
    top = module.split(".")[0]
    for node in ast.walk(tree):
        chain = _dotted(node) if isinstance(node, ast.Attribute) and on_line(node, receipt.lineno) else None
        if not chain or len(chain) < 3 or chain[-2] != missing or chain[1:-2] != module.split(".")[1:]:
            continue
        homes = _defined_in(top, chain[-1])
        if len(homes) != 1:
            return None
        return replace_node(code, node, ".".join([chain[0], *homes[0].split(".")[1:], chain[-1]]))
    return None


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _defined_in(top: str, name: str) -> list[str]:
    """The modules of package `top` (as imported here) that define `name` themselves."""
    import sys

    if import_optional(top) is None:
        return []
    homes = []
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith(top + ".") or ".tests" in mod_name:
            continue
        obj = getattr(mod, name, None)
        if callable(obj) and getattr(obj, "__module__", None) == mod_name and getattr(obj, "__name__", None) == name:
            homes.append(mod_name)
    return homes


@repair(MECHANICAL, DRIFT + 160)
def method_now_function(code: str, receipt: ParsedReceipt) -> str | None:
    """`arr.ptp()` where numpy 2 took the method off its arrays but keeps the function of that name:
    `np.ptp(arr)`, the function asked of the library (it must be there, and not a class)."""
    m = LIBRARY_OBJECT.search(receipt.evalue) if receipt.ename == "AttributeError" else None
    tree = parse(code)
    if not m or tree is None:
        return None
    module, attr = m.group(1), m.group(3)
    library = import_optional(module)
    function = getattr(library, attr, None)
    if library is None or not callable(function) or isinstance(function, type):
        return None
    alias = next((name for name, full in receipt.modules.items() if full == module), None)
    alias = alias or next(iter(re.findall(rf"^\s*import {module} as (\w+)", code, re.MULTILINE)), None)
    for call in calls_on_line(tree, receipt.lineno, attr):
        if not isinstance(call.func, ast.Attribute) or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        args = [source_of(code, call.func.value)] + [source_of(code, a) for a in (*call.args, *call.keywords)]
        fixed = replace_node(code, call, f"{alias or module}.{attr}({', '.join(args)})")
        return fixed if alias else insert_import(fixed, f"import {module}")
    return None


@repair(MECHANICAL, DRIFT + 200)
def changed_default(code: str, receipt: ParsedReceipt) -> str | None:
    """A default scikit-learn changed, named by today's error as the value it ran with (0.22's `solver` of
    `LogisticRegression`, 'liblinear' -> 'lbfgs', changed.CHANGED_DEFAULTS: "Solver lbfgs supports only 'l2' or
    None penalties, got l1 penalty."): the old default passed, as the code ran when it was written
    (`LogisticRegression(penalty='l1', solver='liblinear')`), in each call of that class in the cell that passes
    neither that parameter nor anything by position or by `**`. The error may be raised when the estimator is
    fitted, in a later cell (a failed following cell: this cell is its cause)."""
    said = [receipt.message] if receipt.ename in ("InvalidParameterError", "ValueError") else []
    texts = [*said, *receipt.failed]
    tree = parse(code)
    if not texts or tree is None:
        return None
    changed = False
    while tree is not None:  # one call at a time, the last first, read again: nested calls' spans hold
        found = [(call, added) for call in ast.walk(tree) if isinstance(call, ast.Call)
                 for added in [_old_defaults(call, texts)] if added]
        if not found:
            break
        call, added = max(found, key=lambda f: span(code, f[0]))
        code, changed = add_keyword(code, call, ", ".join(added)), True
        tree = parse(code)
    return code if changed else None


def _old_defaults(call: ast.Call, texts: list[str]) -> list[str]:
    """`parameter=old default` for each default of the called class that changed to a string one text of
    `texts` names as a word (`lbfgs`, `'lbfgs'`) beside the parameter's own name ("Solver lbfgs supports only
    ..."; a common word such as 'auto' alone says nothing), where the call passes no such parameter and nothing
    by position."""
    if call.args or any(kw.arg is None for kw in call.keywords):
        return []
    return [f"{parameter}={old!r}" for (owner, parameter), (old, new) in sorted(CHANGED_DEFAULTS.items())
            if owner == call_name(call) and isinstance(new, str) and not has_keyword(call, parameter)
            and any(re.search(rf"(?<![\w.-]){re.escape(new)}(?![\w-])", text)
                    and re.search(rf"\b{re.escape(parameter)}\b", text, re.I) for text in texts)]


@repair(MECHANICAL, DRIFT + 210)
def stack_sequence(code: str, receipt: ParsedReceipt) -> str | None:
    """A generator of arrays passed to numpy's stacking functions (`np.column_stack((v[:, i] for i in ...))`),
    which numpy 1.16 deprecated and now refuses, saying to pass "a "sequence" type such as list or tuple": the
    same items as a list, wherever the cell passes one (in a function it defines too: the error may be a later
    cell's that calls it)."""
    said = [receipt.message] if receipt.ename == "TypeError" else []
    tree = parse(code)
    if tree is None or not any(STACK_SEQUENCE.search(text) for text in [*said, *receipt.failed]):
        return None
    passed = {arg: call for call in ast.walk(tree) if isinstance(call, ast.Call) and call_name(call) in STACKING
              for arg in call.args[:1] if isinstance(arg, ast.GeneratorExp)}
    return replace_nodes(code, passed, lambda arg: _listed(code, arg, passed[arg]))


def _listed(code: str, arg: ast.GeneratorExp, call: ast.Call) -> str:
    """The generator `arg` of `call` as a list of the same items, its own lines kept (`(v[:, i]\n for i in ...)`);
    in parentheses where it was the call's own (`f(x for x in y)`)."""
    written = source_of(code, arg)
    listed = f"[{written[1:-1]}]" if written[:1] == "(" and written[-1:] == ")" else f"[{written}]"
    return f"({listed})" if span(code, arg)[0] == span(code, call.func)[1] else listed


@repair(GUESS, OUTPUTS + 50)
def reducer_by_name(code: str, receipt: ParsedReceipt) -> str | None:
    """A numpy reducer handed to pandas as a callable (`grouped.agg(np.var)`, `aggfunc=np.std`, in a list of
    `(name, function)` pairs, directly or through a name) that pandas before 3.0 ran as its own method of that
    name, and that gives another result used directly as pandas 3 does (changed.REDUCERS_BY_NAME: numpy's `var`
    has ddof 0, pandas' 1): where the output differs from the one expected or saved, each becomes the method's
    name (`'var'`), as pandas 2.1's warning said to write it."""
    tree = parse(code)
    if tree is None or not receipt.output_differs:
        return None
    assigned = {t.id: n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
    todo = [arg for n in ast.walk(tree) if isinstance(n, ast.Call) and call_name(n) in AGGREGATING
            for arg in [*n.args, *(kw.value for kw in n.keywords)]]
    found, seen = [], set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            todo += node.elts
        elif isinstance(node, ast.Dict):
            todo += node.values
        elif isinstance(node, ast.Name) and node.id in assigned and node.id not in REDUCER_NAMES:
            todo.append(assigned[node.id])
        else:
            name = _reducer(node, receipt.modules)
            if name:
                found.append((node, name))
    names = dict(found)
    return replace_nodes(code, names, lambda n: repr(names[n]))


REDUCER_NAMES = {path.split(".", 1)[1] for path in REDUCERS_BY_NAME if path.startswith("builtins.")}


def _reducer(node: ast.AST, modules) -> str | None:
    """The pandas method a callable written as `np.var` (or the builtin `sum`) ran as before pandas 3."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        module = modules.get(node.value.id) or ("numpy" if node.value.id in ("np", "numpy") else "")
        return REDUCERS_BY_NAME.get(f"{module}.{node.attr}")
    if isinstance(node, ast.Name):
        return REDUCERS_BY_NAME.get(f"builtins.{node.id}")
    return None


@repair(MECHANICAL, DRIFT + 240)
def removed_setter(code: str, receipt: ParsedReceipt) -> str | None:
    """A property pandas no longer sets in place, whose old setter said which method to use instead
    (changed.SETTERS_REMOVED: "Setting categories in-place is deprecated ... Use rename_categories instead"):
    `s.cat.categories = names` -> `s = s.cat.rename_categories(names)` (the accessor's method returns a new
    Series), `c.categories = names` -> `c = c.rename_categories(names)`, on the failing line."""
    m = NO_SETTER.search(receipt.message) if receipt.ename == "AttributeError" else None
    method = m and SETTERS_REMOVED.get((m.group(2), m.group(1)))
    tree = parse(code)
    if not method or tree is None:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and on_line(node, receipt.lineno) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Attribute) and target.attr == m.group(1)):
            continue
        owner = target.value  # `s.cat` or the Categorical itself
        holder = owner.value if isinstance(owner, ast.Attribute) and owner.attr == "cat" else owner
        if not isinstance(holder, (ast.Name, ast.Subscript, ast.Attribute)):
            return None
        new = f"{source_of(code, holder)} = {source_of(code, owner)}.{method}({source_of(code, node.value)})"
        return replace_node(code, node, new)
    return None


@repair(GUESS, DRIFT + 300)
def option_key(code: str, receipt: ParsedReceipt) -> str | None:
    """A pandas option named by its last part (`pd.set_option('max_columns', 50)`), which now matches several
    keys (pandas 1.3 added `styler.render.max_columns` beside `display.max_columns`): the one key under
    `display.` it matches, as pandas lists them (`describe_option`); a guess the run then checks."""
    if receipt.ename != "OptionError" or not MULTIPLE_KEYS.search(receipt.message):
        return None
    tree = tree_of(code)
    edits = []
    for call in calls_on_line(tree, receipt.lineno):
        step = OPTION_CALLS.get(call_name(call))
        if step is None:
            continue
        for arg in call.args[::step] if step else call.args[:1]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                shown = [k for k in _option_keys(arg.value) if k.startswith("display.")]
                if len(shown) == 1 and shown[0] != arg.value:
                    quote = source_of(code, arg)[-1]
                    edits.append((span(code, arg), f"{quote}{shown[0]}{quote}"))
    return spliced(code, set(edits))


def _option_keys(pattern: str) -> list[str]:
    """The keys of pandas' options `pattern` matches, as `pd.describe_option` prints them; [] when pandas is
    not installed here or matches none."""
    import contextlib
    import io
    import warnings

    pandas = import_optional("pandas")
    if pandas is None:
        return []
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pandas.describe_option(pattern)
    except Exception:  # noqa: BLE001 - an option pattern pandas cannot read: no key to name
        return []
    keys = re.findall(r"^([A-Za-z_][\w.]*) : ", said.getvalue(), re.MULTILINE)
    return keys if len(keys) > 1 else []

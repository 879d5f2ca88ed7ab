"""Built-in repairs for calls, operators and loops: keywords, text and numbers mixed, indexes, returns.

Each reads the receipt and the AST of the cell, and makes the edit a person would make on the
failing line (or on the loop or function the failing line is in).
"""

from __future__ import annotations

import ast
import builtins
import difflib
import inspect
import re

from .edits import (
    CannotTell,
    ParsedReceipt,
    as_text,
    calls_on_line,
    column_dtypes,
    on_line,
    parse,
    replace_node,
    replace_nodes,
    source_of,
    span,
    tree_of,
    value_kind,
)
from .names import import_optional, module_aliases
from .patterns import ENTRIES
from .registry import CALLS, DATA, FIRST, GUESS, MECHANICAL, repair
from .said import _keyword_edit
from .tables import (
    ACCESSORS,
    INVALID_KEYWORD,
    KEYWORD_FIXES,
    METHOD_ATTRIBUTE,
    METHOD_OPERAND,
    METHODS_USED_AS_VALUES,
    SCALAR_CALLS,
    SCALAR_METHODS,
    STR_CONCAT,
    TEXT_DTYPES,
    TEXT_STR_METHODS,
    UNEXPECTED_KEYWORD,
)


@repair(GUESS, DATA + 50)
def bad_keyword(code: str, receipt: ParsedReceipt) -> str | None:
    """A keyword the function does not take: its synonym (`digits` -> `ndigits`), or its closest parameter."""
    m = INVALID_KEYWORD.search(receipt.evalue) or UNEXPECTED_KEYWORD.search(receipt.evalue)
    tree = parse(code)
    if receipt.ename != "TypeError" or not m or tree is None:
        return None
    keyword, func = (m.group(1), m.group(2)) if "invalid" in m.group(0) else (m.group(2), m.group(1))
    for call in calls_on_line(tree, receipt.lineno):
        kw = next((k for k in call.keywords if k.arg == keyword), None)
        fixed = _apply_keyword_fix(code, tree, call, kw, _parameters(code, call, func)) if kw else None
        if fixed is not None:
            return fixed
    return None


def _apply_keyword_fix(code: str, tree: ast.Module, call: ast.Call, kw: ast.keyword, params: list[str]) -> str | None:
    value = source_of(code, kw.value).strip("'\"")
    if kw.arg == "method" and value in ("ffill", "bfill", "pad", "backfill") and isinstance(call.func, ast.Attribute) \
            and not call.args and not any(k.arg in ("to_replace", "value") and not (
                isinstance(k.value, ast.Constant) and k.value.value is None) for k in call.keywords):
        # fillna(method="ffill") was removed in pandas 3: the method is its own call; not where values are
        # given too (`replace([0], method='pad')` filled only those: another meaning)
        rest = [source_of(code, k) for k in call.keywords if k is not kw and k.arg != "value"]
        method = {"pad": "ffill", "backfill": "bfill"}.get(value, value)
        return replace_node(code, call, f"{source_of(code, call.func.value)}.{method}({', '.join(rest)})")
    for (wrong, right), how in KEYWORD_FIXES.items():
        if wrong != kw.arg or right is not None and (params and right not in params or not params and right not in (
                "ndigits", "reverse", "ascending", "columns")):
            continue
        if right is None or how == "same":
            return _keyword_edit(code, [call], kw.arg, right or "")
        negated = f"not {source_of(code, kw.value)}" if not isinstance(kw.value, ast.Constant) else repr(
            not kw.value.value)
        return replace_node(code, kw, f"{right}={negated}")
    close = difflib.get_close_matches(kw.arg, params, n=1, cutoff=0.6)
    if close and close[0] == "inplace" and any(isinstance(n, ast.Assign) and n.value is call for n in ast.walk(tree)):
        return _keyword_edit(code, [call], kw.arg, "")  # `x = df.dropna(inplace=True)` would leave None in x
    return _keyword_edit(code, [call], kw.arg, close[0]) if close else None


def _parameters(code: str, call: ast.Call, func: str) -> list[str]:
    """The keyword parameters of the called function, looked up in builtins, numpy or pandas."""
    func_of = call.func
    found = [getattr(builtins, func_of.id, None)] if isinstance(func_of, ast.Name) else [
        getattr(import_optional(module), func_of.attr, None) for module in ("numpy", "pandas")
        if isinstance(func_of, ast.Attribute) and isinstance(func_of.value, ast.Name)
        and func_of.value.id in module_aliases(code, module)]
    owner, _, name = func.rpartition(".")
    found += [getattr(getattr(import_optional(module), cls, None), name, None)
              for module, cls in (("pandas", owner), ("pandas", "DataFrame"), ("numpy", owner)) if owner]
    try:
        sig = inspect.signature(next(f for f in found if f is not None))
    except (StopIteration, TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


@repair(GUESS, DATA + 70)
def str_concat(code: str, receipt: ParsedReceipt) -> str | None:
    """Text and numbers mixed with `+`: a number column becomes text with `.astype(str)`, a single
    number with `str()`; when it cannot tell which one an operand is, it says so instead of guessing."""
    if not receipt.ename.endswith(("TypeError", "LoopError")) or not STR_CONCAT.search(receipt.evalue) \
            or receipt.lineno is None:
        return None
    tree = tree_of(code)
    dtypes = {expr: dtype for expr, (dtype, _) in column_dtypes(receipt).items()}
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and on_line(node, receipt.lineno):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if _stringy(other, receipt, code, dtypes) and not _stringy(side, receipt, code, dtypes):
                    targets.append(side)
    if not targets:
        return None
    edits = []
    for node in targets:
        kind = _operand_kind(node, receipt, code, tree, dtypes)
        if kind == "?":
            raise CannotTell(f"`{source_of(code, node)}` is added to text, and I cannot tell whether it is a column "
                             "(use .astype(str)) or a single value (use str()); a model, or a hint, can say which")
        edits.append((node, kind))
    kinds = dict(edits)
    return replace_nodes(code, kinds, lambda n: as_text(_grouped(n, source_of(code, n)), receipt, source_of(code, n))
                         if kinds[n] == "column" else f"str({source_of(code, n)})")


def _grouped(node: ast.AST, text: str) -> str:
    return text if isinstance(node, (ast.Name, ast.Subscript, ast.Attribute, ast.Call)) else f"({text})"


def _norm(code: str, node: ast.AST) -> str:
    return ast.unparse(node).replace('"', "'")


def _operand_kind(node: ast.AST, receipt: ParsedReceipt, code: str, tree: ast.Module, dtypes: dict) -> str:
    """"column" (a Series or array), "scalar" (one value) or "?" (the receipt and the code do not say)."""
    if _norm(code, node) in dtypes:
        return "column"
    if isinstance(node, ast.Constant):
        return "scalar"
    if isinstance(node, ast.Call):  # `len(x)`, `x.sum()`: one value; `x.round()`: what `x` is
        if getattr(node.func, "id", None) in SCALAR_CALLS or getattr(node.func, "attr", None) in SCALAR_METHODS:
            return "scalar"
        if getattr(node.func, "attr", None) in ("round", "abs", "fillna", "astype", "clip"):
            return _operand_kind(node.func.value, receipt, code, tree, dtypes)
        return "?"
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        root = node.value
        while isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        if isinstance(root, ast.Name) and value_kind(receipt, root.id) == "DataFrame" and not _positional(node):
            return "column"
        return "?"
    if isinstance(node, ast.Name):
        kind = value_kind(receipt, node.id)
        if kind in ("Series", "ndarray"):
            return "column"
        if kind in ("int", "float", "bool", "complex") or re.match(r"^np\.(int|float|uint|bool)\w*\(",
                                                                   receipt.values.get(node.id, "")):
            return "scalar"
        assigned = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)]
        if len(assigned) == 1:
            return _operand_kind(assigned[0], receipt, code, tree, dtypes)
        return "?"
    if isinstance(node, ast.BinOp):
        kinds = {
            _operand_kind(node.left, receipt, code, tree, dtypes),
            _operand_kind(node.right, receipt, code, tree, dtypes),
        }
        return "column" if "column" in kinds else "scalar" if kinds == {"scalar"} else "?"
    return "?"


def _positional(node: ast.AST) -> bool:
    """`df.iloc[0, 1]`, `df.at[0, 'a']`: one value, not a column."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr in (
        "iloc", "loc", "at", "iat")


def _stringy(node: ast.AST, receipt: ParsedReceipt, code: str = "", dtypes: dict | None = None) -> bool:
    if dtypes and _norm(code, node) in dtypes:
        return dtypes[_norm(code, node)] in TEXT_DTYPES
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _stringy(node.left, receipt, code, dtypes) or _stringy(node.right, receipt, code, dtypes)
    if isinstance(node, ast.Call):  # `str(x)`, `', '.join(xs)`, `df['name'].str.title()`, `x.astype(str)`
        name, attr = getattr(node.func, "id", None), getattr(node.func, "attr", None)
        return name in ("str", "repr", "format") or attr in ("join", "format", "upper", "lower", "strip") or (
            attr in TEXT_STR_METHODS and getattr(node.func.value, "attr", None) == "str") or (
            attr == "astype" and bool(node.args) and ast.unparse(node.args[0]) in ("str", "'str'", "'string'"))
    if isinstance(node, ast.Name) and node.id in receipt.values:
        return receipt.values[node.id][:1] in ("'", '"')
    return False


@repair(GUESS, FIRST + 10)
def column_repr(code: str, receipt: ParsedReceipt) -> str | None:
    """A column turned into text with `str(df['x'])` prints the whole column into each row: `.astype(str)`
    (when that smell is all that failed)."""
    if receipt.smelled != ("whole_repr",) or len(receipt.failed) != 1:
        return None
    tree = tree_of(code)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == "str" and len(n.args) == 1 and isinstance(n.args[0], (ast.Subscript, ast.Attribute))
             and not _positional(n.args[0])]
    return replace_nodes(code, calls, lambda c: as_text(source_of(code, c.args[0]), receipt,
                                                        source_of(code, c.args[0])))


@repair(GUESS, DATA + 240)
def float_as_index(code: str, receipt: ParsedReceipt) -> str | None:
    """A float used as an index or a count (`xs[n / 2]`, `range(n / 2)`): use floor division `//`."""
    if receipt.ename != "TypeError" or not re.search(
            r"'float' object cannot be interpreted as an integer|indices must be integers|slice "
            r"indices must be integers",
            receipt.evalue):
        return None
    tree = tree_of(code)
    divisions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and on_line(n, receipt.lineno)
    ]
    if divisions:
        node = divisions[0]
        counted = {id(a) for c in calls_on_line(tree, receipt.lineno, "range") for a in c.args}
        if id(node) in counted and isinstance(node.left, ast.Call) and getattr(node.left.func, "id", "") == "len":
            raise CannotTell(f"`range({source_of(code, node)})` counts chunks: floor division drops a last, partial "
                             "chunk, rounding up (math.ceil) keeps it; the cell does not say which")
        return replace_node(code, node, f"{source_of(code, node.left)} // {source_of(code, node.right)}")
    for call in calls_on_line(tree, receipt.lineno, "range"):
        if isinstance(call.func, ast.Name):
            args = ", ".join(f"int({source_of(code, a)})" for a in call.args)
            return replace_node(code, call, f"range({args})")
    return None


@repair(GUESS, DATA + 250, errors=("IndexError",))
def index_off_by_one(code: str, receipt: ParsedReceipt) -> str | None:
    """`x[i + 1]` in `for i in range(len(x))` runs past the end: loop to `len(x) - 1`."""
    tree = tree_of(code)
    for loop in _range_len_loops(tree):
        var, rng, _end = loop
        shift = _max_offset(tree, var, receipt.lineno)
        if shift:
            length = rng.args[-1]
            return replace_node(code, length, f"{source_of(code, length)} - {shift}")
    for _var, rng, _target in _range_len_loops(tree, plus=True):  # range(len(x) + 1)
        if on_line(rng, receipt.lineno) or _loop_covers(tree, rng, receipt.lineno):
            length = rng.args[-1]
            return replace_node(code, length, source_of(code, length.left))
    for node in ast.walk(tree):  # x[len(x)], df.iloc[len(df)]: the last one is len - 1
        s = node.slice if isinstance(node, ast.Subscript) else None
        if (on_line(node, receipt.lineno) and isinstance(s, ast.Call) and isinstance(s.func, ast.Name)
                and s.func.id == "len"):
            return replace_node(code, s, f"{source_of(code, s)} - 1")
    return None


def _range_len_loops(tree: ast.Module, plus: bool = False):
    """(loop variable, the range(...) call, its end) of `for i in range(len(x))` loops;
    with `plus`, of `range(len(x) + k)` loops instead."""
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.comprehension))]
    for loop in loops:
        it, target = loop.iter, loop.target
        if not (isinstance(target, ast.Name) and isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "range" and 1 <= len(it.args) <= 2):
            continue
        end = it.args[-1]
        if plus and isinstance(end, ast.BinOp) and isinstance(end.op, ast.Add) and isinstance(end.right, ast.Constant):
            end = end.left
        elif plus:
            continue
        if isinstance(end, ast.Call) and isinstance(end.func, ast.Name) and end.func.id == "len":
            yield target.id, it, end


def _loop_covers(tree: ast.Module, rng: ast.Call, lineno: int | None) -> bool:
    """Whether the failing line is inside the body of the loop that iterates over `rng`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and node.iter is rng:
            return on_line(node, lineno)
    return False


def _max_offset(tree: ast.Module, var: str, lineno: int | None) -> int:
    """The largest k in `...[var + k]` on the failing line."""
    best = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and on_line(node, lineno):
            s = node.slice
            if (isinstance(s, ast.BinOp) and isinstance(s.op, ast.Add) and isinstance(s.left, ast.Name)
                    and s.left.id == var and isinstance(s.right, ast.Constant) and isinstance(s.right.value, int)):
                best = max(best, s.right.value)
    return best


@repair(MECHANICAL, DATA + 260)
def int_not_iterable(code: str, receipt: ParsedReceipt) -> str | None:
    """`for i in len(x)` / `for i in n`: an int is not iterable, `range(...)` was meant."""
    if receipt.ename != "TypeError" or not re.search(r"'(int|numpy\.int64)' object is not iterable", receipt.evalue):
        return None
    tree = tree_of(code)
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and on_line(node.iter, receipt.lineno):
            it = node.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
                continue
            if isinstance(it, (ast.Call, ast.Name, ast.Constant, ast.BinOp)):
                return replace_node(code, it, f"range({source_of(code, it)})")
    return None


@repair(GUESS, DATA + 270, errors=("Timeout",))
def loop_overshoot(code: str, receipt: ParsedReceipt) -> str | None:
    """A `while x != end` loop that steps past `end` never stops: compare with `>` / `<` instead."""
    tree = tree_of(code)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.While) and on_line(node, receipt.lineno) and isinstance(node.test, ast.Compare)
                and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.NotEq)
                and isinstance(node.test.left, ast.Name)):
            continue
        step = _step_of(node, node.test.left.id)
        if step is not None:
            op = ">" if step == "down" else "<"
            test = node.test
            return replace_node(code, test, f"{source_of(code, test.left)} {op} {source_of(code, test.comparators[0])}")
    return None


def _step_of(loop: ast.While, name: str) -> str | None:
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            if isinstance(node.op, ast.Sub):
                return "down"
            if isinstance(node.op, ast.Add):
                return "up"
    return None


@repair(GUESS, CALLS + 50)
def missing_return(code: str, receipt: ParsedReceipt) -> str | None:
    """A function of the cell computes its result but never returns it (None arrives): return it."""
    if "NoneType" not in receipt.evalue:
        return None
    tree = tree_of(code)
    called = {c.func.id for c in calls_on_line(tree, receipt.lineno) if isinstance(c.func, ast.Name)}
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name in called):
            continue
        if any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn)):
            continue
        last = fn.body[-1]
        if isinstance(last, ast.Expr) and not (
            isinstance(last.value, ast.Call) and getattr(last.value.func, "id", "") == "print"
        ):
            return replace_node(code, last, f"return {source_of(code, last.value)}")
        if isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], ast.Name):
            return (
                code[: span(code, last)[1]]
                + f"\n{' ' * last.col_offset}return {last.targets[0].id}"
                + code[span(code, last)[1] :]
            )
    return None


@repair(GUESS, CALLS + 60)
def unpack_loop(code: str, receipt: ParsedReceipt) -> str | None:
    """`for k, v in d` over a dict wants `d.items()`; `for i, x in xs` over a list wants `enumerate(xs)`."""
    if not re.search(r"values to unpack|cannot unpack non-iterable", receipt.evalue):
        return None
    tree = parse(code)
    for loop in ast.walk(tree) if tree else []:
        if not (isinstance(loop, (ast.For, ast.comprehension)) and isinstance(loop.target, ast.Tuple)
                and len(loop.target.elts) == 2 and isinstance(loop.iter, ast.Name)
                and (on_line(loop.iter, receipt.lineno) or isinstance(loop, ast.comprehension))):
            continue
        kind, name = value_kind(receipt, loop.iter.id), loop.iter.id
        new = {"dict": f"{name}.items()", "DataFrame": f"{name}.iterrows()"}.get(kind, f"enumerate({name})")
        if kind in ("dict", "DataFrame", "list", "tuple", "Series", "ndarray", "str", "range"):
            return replace_node(code, loop.iter, new)
    return None


def _used_as_value(tree: ast.Module, call: ast.Call) -> bool:
    """Whether the call's result is used (subscripted, iterated, passed on), not just a statement."""
    return not any(isinstance(n, ast.Expr) and n.value is call for n in ast.walk(tree))


@repair(MECHANICAL, CALLS + 30)
def none_from_inplace(code: str, receipt: ParsedReceipt) -> str | None:
    """`df = df.dropna(inplace=True)` leaves None behind: drop `inplace=True`, keep the assignment."""
    if "'NoneType'" not in receipt.evalue:
        return None
    tree = tree_of(code)
    for call in calls_on_line(tree, receipt.lineno):  # xs.sort()[0]: sort works in place, sorted returns
        if (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in ("sort", "reverse")
            and _used_as_value(tree, call)
        ):
            items = source_of(code, call.func.value)
            if call.func.attr == "reverse":
                return replace_node(code, call, f"list(reversed({items}))")
            rest = "".join(f", {source_of(code, k)}" for k in call.keywords)
            return replace_node(code, call, f"sorted({items}{rest})")
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            kw = next((k for k in node.value.keywords if k.arg == "inplace"), None)
            if kw is not None and receipt.lineno and node.lineno < receipt.lineno:
                return _keyword_edit(code, [node.value], "inplace", "")
            if (
                isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr in ("sort", "append", "extend", "reverse")
                and receipt.lineno
                and node.lineno < receipt.lineno
                and len(node.targets) == 1
            ):
                return replace_node(code, node, source_of(code, node.value))
    return None


@repair(MECHANICAL, CALLS + 40)
def thrown_away(code: str, receipt: ParsedReceipt) -> str | None:
    """`df['city'].fillna('Unknown')` on a line of its own changes nothing (the smell says so): assign
    the result back to what it was made from (`xs = sorted(xs)`, `df['d'] = pd.to_datetime(df['d'])`)."""
    if not receipt.dropped:
        return None
    tree = tree_of(code)
    lineno = receipt.dropped[0]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Expr) and node.lineno == lineno and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if isinstance(call.func, ast.Attribute):
            target = call.func.value
            if isinstance(target, ast.Attribute) and target.attr in ACCESSORS:
                target = target.value  # `df['e'].str.strip()` makes a new column from df['e']
        else:
            target = call.args[0] if len(call.args) == 1 else None  # sorted(xs); concat([a, b]) has no one source
        if not _assignable(target):
            return None
        return replace_node(code, node, f"{source_of(code, target)} = {source_of(code, call)}")
    return None


def _assignable(node) -> bool:
    """A name, `df['col']` or `obj.attr` made of names and constants: what `x = ...` can rebind."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Subscript):
        return _assignable(node.value) and isinstance(node.slice, (ast.Constant, ast.Name))
    if isinstance(node, ast.Attribute):
        return _assignable(node.value) and node.attr not in ACCESSORS
    return False


PROPERTIES = set(ENTRIES["not_callable"]["templates"][0]["where"]["ATTR"].split("|"))
"""Attributes that are values, not methods: `df.shape()` calls a tuple (the template `not_callable` drops the call)."""


@repair(MECHANICAL, CALLS + 80)
def method_not_called(code: str, receipt: ParsedReceipt) -> str | None:
    """`df["x"].mean * 2`, or `n = s.nunique` used later: the method itself, not its result, was
    used; call it. The method may have been taken on an earlier line, so those are searched too,
    nearest first."""
    uses_method = (receipt.ename == "TypeError" and METHOD_OPERAND.search(receipt.evalue)) or (
        receipt.ename == "AttributeError" and METHOD_ATTRIBUTE.search(receipt.evalue))
    if not uses_method:
        return None
    lines = list(range(receipt.lineno, 0, -1)) if receipt.lineno else [None]
    tree = tree_of(code)
    called = {id(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call)}
    for lineno in lines:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and on_line(node, lineno) and id(node) not in called
                    and isinstance(node.ctx, ast.Load) and not node.attr.startswith("_")
                    and (node.attr not in PROPERTIES or "builtin_function_or_method" in receipt.evalue)
                    and isinstance(node.value, (ast.Subscript, ast.Name, ast.Attribute, ast.Call))
                    and node.attr in METHODS_USED_AS_VALUES):
                return replace_node(code, node, f"{source_of(code, node)}()")
    return None



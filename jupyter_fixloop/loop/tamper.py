"""Rules of the guard (guard.py) against tampering with how the checks judge, and constant folding.

Each rule reads the candidate's AST (and the original's, so that what the user wrote is never held
against a candidate) and returns the reason to reject, or None:
- monkey-patching a function or attribute a check reads (`math.isclose = lambda *a, **k: True`);
- redefining a helper a check calls that the cell did not define (it comes from the user's namespace);
- a class whose comparison or truth dunder always returns the same constant (`__eq__` → True);
- touching fixloop's own code, or reaching it through `sys.modules`, frames or the garbage collector.
`fold(node)` is the value of an expression built only from constants (`4 * 2`, `int('8')`), so
that a value the check expects is recognised however it is written.
"""

from __future__ import annotations

import ast
import builtins
import copy
import math
import operator

from ..kernel import ipysyntax

COMPARISON_DUNDERS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__",
                      "__contains__", "__hash__"}
PURE_BUILTINS = {"int": int, "float": float, "str": str, "bool": bool, "abs": abs, "round": round, "len": len,
                 "min": min, "max": max, "sum": sum, "list": list, "tuple": tuple, "sorted": sorted, "complex": complex}
REACH_IN = {"sys.modules", "sys._getframe", "inspect.currentframe", "inspect.stack", "gc.get_objects",
            "gc.get_referrers", "sys.settrace", "sys.setprofile"}
OURS = ("fixloop", "_last_json", "run_request", "evaluate_check")
MAX_FOLD = 10**12  # numbers and lengths folded stay small: folding must never be the slow part

NOT = object()


# ---------------------------------------------------------------- constant folding


def fold(node: ast.AST):
    """The value of a constant expression, or NOT (names, attributes, big numbers, other calls)."""
    try:
        value = _fold(node)
    except Exception:
        return NOT
    return value


def _fold(node: ast.AST):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_fold(e) for e in node.elts]
        if any(i is NOT for i in items):
            return NOT
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp):
        operand = _fold(node.operand)
        if operand is NOT:
            return NOT
        ops = {ast.USub: lambda v: -v, ast.UAdd: lambda v: +v, ast.Not: lambda v: not v, ast.Invert: lambda v: ~v}
        return _small(ops[type(node.op)](operand))
    if isinstance(node, ast.BinOp):
        left, right = _fold(node.left), _fold(node.right)
        if left is NOT or right is NOT:
            return NOT
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > MAX_FOLD):
            return NOT
        if isinstance(node.op, ast.Mult) and isinstance(left, (str, list, tuple)) != isinstance(
            right, (str, list, tuple)
        ):
            count = right if isinstance(right, int) else left
            if isinstance(count, int) and count > 10_000:
                return NOT
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
               ast.Pow: lambda a, b: a ** b}
        return _small(ops[type(node.op)](left, right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS:
        if node.keywords:
            return NOT
        args = [_fold(a) for a in node.args]
        if any(a is NOT for a in args):
            return NOT
        return _small(PURE_BUILTINS[node.func.id](*args))
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.JoinedStr)):
        return _fold_more(node)
    return NOT  # names, other calls; `a if c else b`: each branch is looked at on its own (guard._literal_branches)


def _fold_more(node: ast.Compare | ast.BoolOp | ast.JoinedStr):
    """`0 > 1`, `1 < 2 < 3`, `0 or 2`: comparisons and `and`/`or` of constants (a dead branch's test);
    `f"{3 * 2:>4}"`: an f-string of constants (a printed literal)."""
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value, spec = _fold(part.value), _fold(part.format_spec) if part.format_spec else ""
                if value is NOT or spec is NOT:
                    return NOT
                value = {115: str, 114: repr, 97: ascii}.get(part.conversion, lambda v: v)(value)
                parts.append(format(value, spec))
            else:
                parts.append(_fold(part))
        return _small("".join(parts)) if all(isinstance(p, str) for p in parts) else NOT
    if isinstance(node, ast.Compare):
        values = [_fold(node.left), *(_fold(c) for c in node.comparators)]
        if any(v is NOT for v in values):
            return NOT
        return all(COMPARE[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:], strict=False))
    values = [_fold(v) for v in node.values]
    if any(v is NOT for v in values):
        return NOT
    stop = (lambda v: not v) if isinstance(node.op, ast.And) else bool
    return next((v for v in values[:-1] if stop(v)), values[-1])


COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _small(value):
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_FOLD:
        return NOT
    if isinstance(value, float) and math.isinf(value):
        return NOT
    if isinstance(value, (str, list, tuple)) and len(value) > 10_000:
        return NOT
    return value


def printed_constants(tree: ast.Module) -> str:
    """What the code shows that it writes as constants: each `print(...)`, `display(...)` or `.write(...)`
    whose arguments fold (`print(3 * 2)`, `print(f"total: {6}")`, `x = 6` then `print(x)`), and the
    cell's last expression when it folds (the notebook shows its repr), one line each, in the code's order."""
    known = _Constants(_bound_once_to_constants(tree))
    out = []
    for node in ipysyntax.walk(tree):
        if not isinstance(node, ast.Call) or node.keywords and not _only_sep(node):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name not in ("print", "display", "write") or not node.args:
            continue
        values = [known.fold(a) for a in node.args]
        if all(v is not NOT for v in values):
            sep = fold(node.keywords[0].value) if node.keywords else " "
            out.append((node.lineno, node.col_offset, (sep if isinstance(sep, str) else " ").join(map(str, values))))
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and not isinstance(last.value, ast.Call):
        value = known.fold(last.value)
        if value is not NOT:
            out.append((last.lineno, last.col_offset, repr(value)))
    return "\n".join(text for _, _, text in sorted(out))


def _bound_once_to_constants(tree: ast.Module) -> dict[str, object]:
    """Names the code binds exactly once, to a value that folds (`x = 3 * 2`)."""
    bound: dict[str, int] = {}
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            for name in [getattr(node, "name", None), *((a.asname or a.name) for a in getattr(node, "names", ()))]:
                if name:
                    bound[name] = bound.get(name, 0) + 2
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, fold(stmt.value)
            if bound.get(name) == 1 and value is not NOT:
                out[name] = value
    return out


class _Constants(ast.NodeTransformer):
    """Folds an expression with the names bound once to constants read as those constants."""

    def __init__(self, values: dict[str, object]):
        self.values = values

    def fold(self, node: ast.AST):
        if not self.values:
            return fold(node)
        return fold(self.visit(copy.deepcopy(node)))

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(self.values[node.id]) if node.id in self.values else node


def _only_sep(call: ast.Call) -> bool:
    return len(call.keywords) == 1 and call.keywords[0].arg == "sep"


def data_independent(node: ast.AST) -> bool:
    """An expression that reads no data: constants, builtins and names it binds itself
    (`[int(x) for x in ['1', '2']]`). A fallback like that invents its value."""
    if fold(node) is not NOT:
        return True
    bound = {n.id for n in ipysyntax.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ipysyntax.walk(node) if isinstance(n, ast.Lambda) for a in n.args.args}
    read = {n.id for n in ipysyntax.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if any(isinstance(n, ast.Attribute) for n in ipysyntax.walk(node)):
        return False
    return not (read - bound - set(dir(builtins)))


# ---------------------------------------------------------------- the rules


def patched_check_functions(tree: ast.Module, original: ast.Module, checks: list[ast.AST]) -> str | None:
    """`math.isclose = ...` or `setattr(math, 'isclose', ...)` when a check reads `math.isclose`."""
    read = {ast.unparse(n) for c in checks for n in ipysyntax.walk(c) if isinstance(n, ast.Attribute)}
    patched = (_assigned_attributes(tree) - _assigned_attributes(original)) & read
    if patched:
        name = min(patched)
        return (f"the candidate replaces `{name}`, which a check calls, so the check no longer judges the "
                "results; fix the code, not the check's tools")
    return None


def redefined_helpers(tree: ast.Module, original: ast.Module, checks: list[ast.AST],
                      namespace: frozenset[str] | None = None) -> str | None:
    """A function a check calls that the cell did not define, a helper of the user's namespace
    (`namespace`: its names; None when not known), defined or assigned anew by the candidate."""
    called = {
        n.func.id for c in checks for n in ipysyntax.walk(c) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    called -= set(dir(builtins))
    if namespace is not None:
        called &= namespace
    redefined = (called & _defined(tree)) - _defined(original) - _imported(original)
    if redefined:
        name = min(redefined)
        return (f"the candidate redefines `{name}`, which a check calls and which the cell did not define "
                "(it comes from your notebook); a check must judge with the helpers it was written with")
    return None


def always_equal_classes(tree: ast.Module, original: ast.Module) -> str | None:
    """A new class whose `__eq__` (or another comparison or truth dunder) returns a constant."""
    before = _constant_dunders(original)
    for found in _constant_dunders(tree):
        if found not in before:
            cls, dunder, value = found
            return (f"the candidate defines class `{cls}` whose `{dunder}` always returns {value}, which makes "
                    "comparisons pass whatever the value; compute the real result")
    return None


def special_cases(
    tree: ast.Module, original: ast.Module, expectations: list[tuple[str, set[str], object]]
) -> str | None:
    """`if n == 6:` in `fib` when a check expects a value of `fib(6)`: the input of a check, handled apart."""
    inputs = []
    for check, _, _ in expectations:
        try:
            expr = ast.parse(check, mode="eval").body
        except SyntaxError:
            continue
        for call in (n for n in ipysyntax.walk(expr) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            for position, arg in enumerate(call.args):
                value = fold(arg)
                if value is not NOT and not _trivial_input(value):
                    inputs.append((call.func.id, position, value, check))
    if not inputs:
        return None
    before = _input_tests(original)
    for function, param, value, test in _input_tests(tree):
        if (function, param, repr(value), test) in {(f, p, repr(v), t) for f, p, v, t in before}:
            continue
        for name, position, expected, check in inputs:
            if name == function and position == param and repr(value) == repr(expected):
                return (f"the candidate special-cases the input of the check `{check}` (`{test}` in `{function}`); "
                        "compute the result for every input")
    return None


def _trivial_input(value) -> bool:
    return value in (None, True, False, 0, 1, -1, "", 0.0, 1.0) and not isinstance(value, (list, tuple))


def _input_tests(tree: ast.AST) -> list[tuple[str, int, object, str]]:
    """(function, parameter position, value, test) for each `if param == value` inside a function."""
    found = []
    for fn in ipysyntax.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for node in ipysyntax.walk(fn):
            if not isinstance(node, (ast.If, ast.IfExp, ast.While)):
                continue
            for test in ipysyntax.walk(node.test):
                if not (
                    isinstance(test, ast.Compare)
                    and len(test.ops) == 1
                    and isinstance(test.ops[0], (ast.Eq, ast.Is, ast.In))
                ):
                    continue
                for side, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                    if isinstance(side, ast.Name) and side.id in params:
                        value = fold(other)
                        values = (
                            value if isinstance(test.ops[0], ast.In) and isinstance(value, (list, tuple)) else [value]
                        )
                        for v in values:
                            if v is not NOT:
                                found.append((fn.name, params.index(side.id), v, ast.unparse(test)))
    return found


def touches_fixloop(tree: ast.Module, original: ast.Module) -> str | None:
    """Any mention of fixloop's modules or runner, or a way to reach them (sys.modules, frames, gc)."""
    found = _reaches(tree) - _reaches(original)
    if found:
        return (f"the candidate touches fixloop's own machinery (`{min(found)}`), which runs the checks; "
                "change only the cell's own code")
    return None


# ---------------------------------------------------------------- reading code


def assignment_targets(tree: ast.AST):
    """Every node inside the target of an assignment (`=`, `+=`, annotated) in `tree`."""
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            yield from ipysyntax.walk(target)


def _assigned_attributes(tree: ast.AST) -> set[str]:
    found = {ast.unparse(part) for part in assignment_targets(tree)
             if isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Store)}
    for node in ipysyntax.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.add(f"{ast.unparse(node.args[0])}.{node.args[1].value}")
    return found


def _defined(tree: ast.AST) -> set[str]:
    names = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return names


def _imported(tree: ast.AST) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for n in ipysyntax.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}


def _constant_dunders(tree: ast.AST) -> set[tuple[str, str, str]]:
    found = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                for dunder, values in _dunder_returns(item):
                    if dunder in COMPARISON_DUNDERS and values and all(v is not NOT for v in values) \
                            and len({repr(v) for v in values}) == 1:
                        found.add((node.name, dunder, repr(values[0])))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
                and len(node.args) == 3 and isinstance(node.args[2], ast.Dict):
            for key, value in zip(node.args[2].keys, node.args[2].values):
                if isinstance(key, ast.Constant) and key.value in COMPARISON_DUNDERS and isinstance(value, ast.Lambda):
                    folded = fold(value.body)
                    if folded is not NOT:
                        name = ast.unparse(node.args[0])
                        found.add((name, key.value, repr(folded)))
    return found


def _dunder_returns(item: ast.stmt) -> list[tuple[str, list]]:
    """(dunder, the values its returns fold to) for a method or a `__eq__ = lambda ...` in a class body."""
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        returns = [fold(n.value) if n.value is not None else None for n in ipysyntax.walk(item)
                   if isinstance(n, ast.Return)]
        return [(item.name, returns)]
    if isinstance(item, ast.Assign) and isinstance(item.value, ast.Lambda):
        return [(t.id, [fold(item.value.body)]) for t in item.targets if isinstance(t, ast.Name)]
    return []


def _reaches(tree: ast.AST) -> set[str]:
    found = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = ast.unparse(node)
            if dotted in REACH_IN:
                found.add(dotted)
            if any(word in node.attr.lower() for word in OURS):
                found.add(dotted)
        elif isinstance(node, ast.Name) and any(word in node.id.lower() for word in OURS):
            found.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] + (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            )
            found |= {m for m in modules if "fixloop" in m.lower()}
            if isinstance(node, ast.ImportFrom) and node.module in ("sys", "inspect", "gc"):
                found |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in REACH_IN}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "fixloop" in node.value.lower():
            found.add(repr(node.value)[:60])
    return found

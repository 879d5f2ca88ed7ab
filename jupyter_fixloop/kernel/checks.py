"""Checks, judged inside the sandbox after the cell: an expression, or a block of statements.

A block (`assert ...` lines, helper assignments) runs statement by statement in the cell's
namespace; the first failing `assert` is the check's failure. A failing check says the values that
decided it, the way pytest's assertion rewriting does: the expression is evaluated once with every
sub-expression recorded, so `abs(area(3) - 28.274) < 0.01` reports `area(3) = 12.42` without calling
`area` twice. It also names the cell lines that produced the names the check reads.
Stdlib only: imported in every sandbox.
"""

from __future__ import annotations

import ast
import copy

from jupyter_fixloop.kernel.facts import short_repr, written

CHECK_FILE = "<check>"
RECORDER = "__fixloop_value__"
MAX_VALUES = 4  # `where` values under a failing check
MAX_PRODUCERS = 3  # cell lines that produced what the check reads
MAX_LATER = 2  # later failing asserts of a block, after the first
MAX_REPR = 160
OPAQUE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr, ast.NamedExpr,
          ast.Await, ast.Yield, ast.YieldFrom)
NAMESPACE_CALLS = ("globals()", "locals()", "vars()")


def evaluate(check: str, ns: dict, raise_errors: bool = False, cell: str = "") -> dict:
    """Judge one check in `ns`: {"expr", "passed", "detail"}, and for a block whose assert failed, "failing":
    that assert (`assert n == 4`), the detail saying why. With `raise_errors`, an exception other than a failed
    assert propagates, carrying the statement it came from as `check_line`."""
    text = check.strip()
    try:
        tree = ast.parse(text, CHECK_FILE, mode="eval")
        body: list[ast.stmt] | None = None
    except SyntaxError:
        try:
            body = ast.parse(text, CHECK_FILE, mode="exec").body
        except SyntaxError as exc:
            return {"expr": check, "passed": False, "detail": f"the check is not Python: {exc.msg}"}
    failing: ast.Assert | None = None
    try:
        if body is None:
            passed, detail = assess(tree.body, ns)
            failed_node = tree.body
        else:
            passed, detail, failing = _run_block(body, ns)
            failed_node = failing.test if failing is not None else None
    except BaseException as exc:
        if raise_errors:
            raise
        return {"expr": check, "passed": False, "detail": f"raised {type(exc).__name__}: {_short(exc)}",
                "raised": type(exc).__name__, "message": _short(exc)}
    if passed:
        return {"expr": check, "passed": True, "detail": ""}
    lines = producers(failed_node, cell, body or []) if cell and failed_node is not None else []
    out = {"expr": check, "passed": False, "detail": "\n".join([detail, *lines])}
    return {**out, "failing": _assert_text(failing)} if failing is not None else out


def _run_block(body: list[ast.stmt], ns: dict):
    """Statements in order; (passed, why it failed, the failing assert) at the first failing assert.

    After a failing assert the rest of the block still runs, quietly, to say which later asserts
    fail too and why (`working['age'].tolist() returned [25, 40], expected [18, 25, 40, 64]` often
    tells more than the first failure)."""
    for at, stmt in enumerate(body):
        try:
            if isinstance(stmt, ast.Assert):
                passed, detail = assess(stmt.test, ns)
                if not passed:
                    return False, _why(stmt, detail, ns) + _later_failures(body[at + 1:], ns), stmt
            else:
                exec(compile(ast.Module([stmt], []), CHECK_FILE, "exec"), ns)
        except BaseException as exc:
            try:
                exc.check_line = ast.unparse(stmt).splitlines()[0]
            except Exception:
                pass
            raise
    return True, "", None


def _assert_text(stmt: ast.Assert) -> str:
    return f"assert {ast.unparse(stmt.test)}"


def _why(stmt: ast.Assert, detail: str, ns: dict) -> str:
    """Why an assert failed: the values that decided it, and its message when that says more."""
    message = _message(stmt, ns)
    said = f" (its message: {message})" if message and message not in detail else ""
    return f"{detail}{said}"


def _later_failures(rest: list[ast.stmt], ns: dict) -> str:
    found = []
    for stmt in rest:
        try:
            if isinstance(stmt, ast.Assert):
                passed, detail = assess(stmt.test, ns)
                if not passed:
                    found.append(f"{_assert_text(stmt)} failed: {_why(stmt, detail, ns)}")
            else:
                exec(compile(ast.Module([stmt], []), CHECK_FILE, "exec"), ns)
        except Exception:
            break
        if len(found) >= MAX_LATER:
            break
    return "".join(f"\nalso failing: {f}" for f in found)


def _message(stmt: ast.Assert, ns: dict) -> str:
    if stmt.msg is None:
        return ""
    try:
        return _clip(str(eval(compile(ast.Expression(stmt.msg), CHECK_FILE, "eval"), ns)), MAX_REPR)
    except Exception:
        return ""


# ---------------------------------------------------------------- one evaluation, every value recorded


def assess(node: ast.expr, ns: dict) -> tuple[bool, str]:
    """Whether the expression holds, and when it does not, the values that decided it."""
    recorded = Recorded(node)
    value = recorded.evaluate(ns)
    if truth(value):
        return True, ""
    return False, recorded.explain(ns)


class Recorded:
    """An expression instrumented so that one evaluation records the value of each sub-expression."""

    def __init__(self, node: ast.expr):
        self.sources: list[str] = []
        self.kinds: list[ast.expr] = []
        self.children: list[list[int]] = []
        self.values: dict[int, object] = {}
        self._open: list[list[int]] = [[]]
        self.tree = ast.fix_missing_locations(ast.Expression(self._visit(_copy(node))))
        self.top = len(self.sources) - 1

    def evaluate(self, ns: dict):
        code = compile(self.tree, CHECK_FILE, "eval")
        had, before = RECORDER in ns, ns.get(RECORDER)
        ns[RECORDER] = self._record
        try:
            return eval(code, ns)
        finally:
            if had:
                ns[RECORDER] = before
            else:
                ns.pop(RECORDER, None)

    def _record(self, index: int, value):
        self.values[index] = value
        return value

    def _visit(self, node):
        if not isinstance(node, ast.expr) or isinstance(node, (ast.Slice, ast.Starred)):
            return self._children(node)
        if isinstance(node, ast.Constant) or not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            return node
        source, pristine = ast.unparse(node), copy.deepcopy(node)
        self._open.append([])
        if isinstance(node, OPAQUE):
            new = node
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):  # record the object, not the bound method
                node.func = ast.Attribute(self._visit(func.value), func.attr, ast.Load())
            elif not isinstance(func, ast.Name):
                node.func = self._visit(func)
            node.args = [self._visit(a) for a in node.args]
            for kw in node.keywords:
                kw.value = self._visit(kw.value)
            new = node
        else:
            new = self._children(node)
        children = self._open.pop()
        index = len(self.sources)
        self.sources.append(source)
        self.kinds.append(pristine)
        self.children.append(children)
        self._open[-1].append(index)
        return ast.Call(ast.Name(RECORDER, ast.Load()), [ast.Constant(index), new], [])

    def _children(self, node):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, name, [self._visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self._visit(value))
        return node

    # ------------------------------------------------------------ saying why it failed

    def explain(self, ns: dict) -> str:
        focus = self._focus(self.top)
        node = self.kinds[focus]
        shown: set[int] = set()
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and len(self.children[focus]) >= 1:
            left, right = self._operand(focus, node.left), self._operand(focus, node.comparators[0])
            if left is not None and right is not None and left in self.values and right in self.values:
                head = operand_detail(node.left, self.values[left], node.ops[0], node.comparators[0],
                                      self.values[right])
                head += self._closeness(left)
                shown |= {left, right}
            else:
                head = f"{self.sources[focus]} is {_repr(self.values.get(focus))}"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and self.children[focus]:
            inner = self.children[focus][0]
            head = f"{self.sources[inner]} is {_repr(self.values.get(inner))}"
            shown.add(inner)
        else:
            head = f"{self.sources[focus]} is {_repr(self.values.get(focus))}"
        shown.add(focus)
        where = []
        for index in self._below(focus):
            if len(where) >= MAX_VALUES:
                break
            if index in shown or index not in self.values or not self._worth_showing(index, ns):
                continue
            text = _repr(self.values[index])
            if text == self.sources[index] or _opaque(text):
                continue
            where.append(f"{self.sources[index]} = {text}")
        return head + (f"; where {'; '.join(where)}" if where else "")

    def _closeness(self, index: int) -> str:
        """`abs(a - b) < tol` failed: how a differs from b, as for `a == b` (` (a ... vs b: ...)`)."""
        node = self.kinds[index]
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "abs"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.BinOp)
            and isinstance(node.args[0].op, ast.Sub)
        ):
            return ""
        sub = next((c for c in self.children[index] if isinstance(self.kinds[c], ast.BinOp)), None)
        if sub is None:
            return ""
        a = self._operand(sub, node.args[0].left)
        b = self._operand(sub, node.args[0].right)
        if a is None or b is None or a not in self.values or b not in self.values:
            return ""
        said = difference(self.values[a], self.values[b])
        return (
            f" ({self.sources[a]} is {_repr(self.values[a])}, expected {_repr(self.values[b])}: {said})" if said else ""
        )

    def _focus(self, index: int) -> int:
        """Into a failing `and`: the operand that was false (the last one evaluated)."""
        node = self.kinds[index]
        while isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            evaluated = [c for c in self.children[index] if c in self.values]
            if not evaluated:
                break
            index = evaluated[-1]
            node = self.kinds[index]
        return index

    def _operand(self, parent: int, node: ast.expr) -> int | None:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        source = ast.unparse(node)
        for child in self.children[parent]:
            if self.sources[child] == source:
                return child
        return None

    def _constant(self, node: ast.Constant) -> int:
        self.sources.append(ast.unparse(node))
        self.kinds.append(node)
        self.children.append([])
        index = len(self.sources) - 1
        self.values[index] = node.value
        return index

    def _below(self, index: int) -> list[int]:
        """Sub-expressions, outermost first (breadth-first)."""
        order, queue = [], list(self.children[index])
        while queue:
            child = queue.pop(0)
            order.append(child)
            queue.extend(self.children[child])
        return order

    def _worth_showing(self, index: int, ns: dict) -> bool:
        value = self.values[index]
        if value is ns or self.sources[index] in NAMESPACE_CALLS:
            return False
        if isinstance(self.kinds[index], ast.Name) and (callable(value) or type(value).__name__ == "module"):
            return False
        return True


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body


def producers(node: ast.expr, cell: str, block: list[ast.stmt] = ()) -> list[str]:
    """Cell lines that produced what a failing check reads: the last top-level assignment of each
    name it reads (through the check block's own assignments, `a = globals().get("ages")`), and the
    `return` lines of the cell's functions it calls."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return []
    lines = cell.splitlines()
    wanted = _read_names(node)
    for stmt in reversed(list(block)):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            if written(stmt, calls=False) & wanted:
                wanted |= _read_names(stmt.value)
    found: dict[int, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in wanted:
            for ret in ast.walk(stmt):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    found[ret.lineno] = stmt.name
            continue
        for name in written(stmt, calls=False) & wanted:
            for key in [k for k, v in found.items() if v == name]:
                del found[key]  # only the last binding counts
            found[stmt.lineno] = name
    out = []
    for lineno in sorted(found)[:MAX_PRODUCERS]:
        if 0 < lineno <= len(lines):
            out.append(f"from line {lineno} of the cell: {_clip(lines[lineno - 1].strip(), MAX_REPR)}")
    return out


def _read_names(node: ast.expr) -> set[str]:
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    for call in ast.walk(node):  # globals().get("x"), globals()["x"]
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "get":
            if ast.unparse(call.func.value) in NAMESPACE_CALLS and call.args and isinstance(call.args[0], ast.Constant):
                names.add(str(call.args[0].value))
        if isinstance(call, ast.Subscript) and ast.unparse(call.value) in NAMESPACE_CALLS:
            if isinstance(call.slice, ast.Constant):
                names.add(str(call.slice.value))
    return names


# ---------------------------------------------------------------- comparing, briefly


def truth(value) -> bool:
    """`bool()`, but an elementwise comparison (numpy, pandas) passes only if every element does."""
    for _ in range(3):  # DataFrame -> Series -> scalar
        if getattr(value, "shape", ()) == () or not callable(getattr(value, "all", None)):
            break
        value = value.all()
    return bool(value)


def operand_detail(lnode, left, op, rnode, right) -> str:
    lsrc, rsrc = ast.unparse(lnode), ast.unparse(rnode)
    verb = "returned" if isinstance(lnode, ast.Call) else "is"
    if isinstance(op, ast.Eq):
        said = difference(left, right)
        said = f" ({said})" if said else ""
        if isinstance(rnode, ast.Constant) or rsrc == _repr(right):
            return f"{lsrc} {verb} {_repr(left)}, expected {_repr(right)}{said}"
        return f"{lsrc} {verb} {_repr(left)}, expected {rsrc} = {_repr(right)}{said}"
    opname = ast.unparse(ast.Compare(ast.Name("a"), [op], [ast.Name("b")]))[2:-2]
    rdesc = _repr(right) if isinstance(rnode, ast.Constant) else f"{rsrc} = {_repr(right)}"
    return f"{lsrc} {verb} {_repr(left)}, which is not {opname} {rdesc}"


def _opaque(text: str) -> bool:
    """A default repr (`<...DatetimeProperties object at 0x7f...>`): it tells nothing, and costs tokens."""
    return text.startswith("<") and " object at 0x" in text


def _repr(value) -> str:
    return " | ".join(short_repr(value, MAX_REPR).splitlines())


def _short(exc: BaseException, limit: int = MAX_REPR) -> str:
    return _clip(str(exc), limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- expected vs actual, as data

MAX_DIFFS = 3


def difference(actual, expected) -> str:
    """Where `actual` differs from `expected`, as pytest says it for lists and dicts: the positions,
    keys, rows or columns, and by how much for numbers; '' when there is nothing short to say."""
    try:
        if _number(actual) and _number(expected):
            return _number_difference(actual, expected)
        if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
            return _sequence_difference(list(actual), list(expected))
        if isinstance(actual, dict) and isinstance(expected, dict):
            return _dict_difference(actual, expected)
        if isinstance(actual, (set, frozenset)) and isinstance(expected, (set, frozenset)):
            return _parts(
                [("missing", sorted(expected - actual, key=repr)), ("unexpected", sorted(actual - expected, key=repr))]
            )
        if type(actual).__name__ == "Series" and type(expected).__name__ == "Series":
            return _dict_difference(actual.to_dict(), expected.to_dict(), "label")
        if type(actual).__name__ == "DataFrame" and type(expected).__name__ == "DataFrame":
            return _frame_difference(actual, expected)
        if isinstance(actual, str) and isinstance(expected, str) and min(len(actual), len(expected)) > 20:
            at = next((i for i, (a, b) in enumerate(zip(actual, expected)) if a != b), min(len(actual), len(expected)))
            shown = _clip(repr(actual[at:at + 12]), 30), _clip(repr(expected[at:at + 12]), 30)
            return f"first difference at character {at}: {shown[0]} vs {shown[1]}"
    except Exception:
        return ""
    return ""


def _number(value) -> bool:
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return False
    return isinstance(value, (int, float)) or (
        type(value).__module__ == "numpy" and getattr(value, "shape", None) == ()
    )


def _number_difference(actual, expected) -> str:
    gap = actual - expected
    text = f"actual - expected = {_g(gap)}"
    if expected and actual:
        ratio = actual / expected
        for power in (-3, -2, -1, 1, 2, 3):
            if abs(ratio - 10.0 ** power) < 1e-9 * abs(10.0 ** power):
                return text + f"; actual = expected x {_g(10.0 ** power)}"
    return text


def _g(x) -> str:
    return f"{float(x):.6g}" if isinstance(x, float) or type(x).__name__.startswith("float") else str(x)


def _sequence_difference(actual: list, expected: list) -> str:
    if len(actual) == len(expected):
        if _multiset_equal(actual, expected):
            return "the same items in another order"
        at = [i for i, (a, b) in enumerate(zip(actual, expected)) if not _same(a, b)]
        shown = ", ".join(f"[{i}] {_short_item(actual[i])} vs {_short_item(expected[i])}" for i in at[:MAX_DIFFS])
        more = f" and {len(at) - MAX_DIFFS} more" if len(at) > MAX_DIFFS else ""
        return f"{len(at)} of {len(actual)} positions differ: {shown}{more}"
    missing, extra = _minus(expected, actual), _minus(actual, expected)
    parts = [f"{len(actual)} items, expected {len(expected)}"]
    said = _parts([("missing", missing), ("unexpected", extra)])
    return "; ".join(parts + ([said] if said else []))


def _dict_difference(actual: dict, expected: dict, what: str = "key") -> str:
    missing = [k for k in expected if k not in actual]
    extra = [k for k in actual if k not in expected]
    changed = [k for k in expected if k in actual and not _same(actual[k], expected[k])]
    parts = []
    if changed:
        shown = ", ".join(f"{_short_item(k)}: {_short_item(actual[k])} vs {_short_item(expected[k])}"
                          + (f" ({_g(actual[k] - expected[k])})" if _number(actual[k]) and _number(expected[k]) else "")
                          for k in changed[:MAX_DIFFS])
        more = f" and {len(changed) - MAX_DIFFS} more" if len(changed) > MAX_DIFFS else ""
        parts.append(f"{what}s with other values: {shown}{more}")
    said = _parts([(f"missing {what}s", missing), (f"unexpected {what}s", extra)])
    return "; ".join(parts + ([said] if said else []))


def _frame_difference(actual, expected) -> str:
    parts = []
    if actual.shape != expected.shape:
        parts.append(f"shape {actual.shape}, expected {expected.shape}")
    said = _parts([("missing columns", [c for c in expected.columns if c not in actual.columns]),
                   ("unexpected columns", [c for c in actual.columns if c not in expected.columns])])
    if said:
        parts.append(said)
    if len(actual) == len(expected):
        for column in [c for c in expected.columns if c in actual.columns]:
            a, e = actual[column].tolist(), expected[column].tolist()
            rows = [i for i, (x, y) in enumerate(zip(a, e)) if not _same(x, y)]
            if rows:
                shown = ", ".join(f"row {i}: {_short_item(a[i])} vs {_short_item(e[i])}" for i in rows[:2])
                parts.append(f"column {column!r} differs in {len(rows)} row(s): {shown}")
            if len(parts) >= 4:
                break
    return "; ".join(parts)


def _parts(named: list) -> str:
    out = []
    for name, items in named:
        if items:
            shown = ", ".join(_short_item(i) for i in items[:MAX_DIFFS + 1])
            out.append(
                f"{name} {shown}" + (f" and {len(items) - MAX_DIFFS - 1} more" if len(items) > MAX_DIFFS + 1 else "")
            )
    return "; ".join(out)


def _minus(a: list, b: list) -> list:
    """Items of `a` not in `b`, counted as a multiset."""
    rest, out = list(b), []
    for item in a:
        for i, other in enumerate(rest):
            if _same(item, other):
                del rest[i]
                break
        else:
            out.append(item)
    return out


def _multiset_equal(a: list, b: list) -> bool:
    return not _minus(a, b) and not _minus(b, a)


def _same(a, b) -> bool:
    try:
        if a != a and b != b:  # nan
            return True
        return bool(a == b)
    except Exception:
        return False


def _short_item(value) -> str:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)) and getattr(value, "shape", None) == ():
        value = value.item()
    return _clip(repr(value), 40)

"""The anti-overfit guard: candidates that make a check pass by cheating are rejected, not run.

A rejected candidate still costs a round, and its receipt says why, so the model can try again.
What counts as cheating, each rule one function returning the reason (or None):
- removing, changing or disarming an `assert` of the original cell (reach.py: under a dead branch,
  in a function nothing calls, after a return or exit, under a handler of AssertionError);
- touching a check: a `%%fixloop` line, rebinding a builtin a check uses, patching `__eq__` & co;
- silencing the failure: a new try/except (or `suppress`) around the failing line whose handler
  swallows it (pass, continue, a constant), or deleting what the failing line did;
- hard-coding the value a check expects (`return 8`, `return 4 * 2`, `if n == 6:` when the check is
  `fib(6) == 8`);
- characters a reader cannot see (hidden.py: ESC, CR, bidi overrides, zero-width) the cell has not:
  a diff could not show the person reviewing it what runs;
- tampering with how the checks judge (tamper.py): patching a function a check calls, redefining a
  helper of the user's namespace a check calls, a class whose `__eq__` always says yes, reaching
  into fixloop's own code.
The rules read only the code and the last receipt; they err on the side of letting honest fixes run.
"""

from __future__ import annotations

import ast
import builtins
import difflib
from collections import Counter

from ..cell import LINE_MAGIC, MAGIC, asks_to_make
from ..hidden import added, clipped
from ..kernel import ipysyntax
from ..kernel.ipysyntax import readable
from ..receipt import saved, values as receipts
from ..receipt.values import Receipt
from . import reach, tamper
from .verdict import normalized

TRIVIAL = (None, True, False, 0, 1, -1, "", 0.0, 1.0)
COMPARISON_DUNDERS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__",
                      "__contains__", "__hash__", "__repr__", "__str__"}
SIMILAR_LINE = 0.6
SUBSTANTIAL = 8  # an expected output this long inside a literal is no coincidence; a shorter one ('6') must
# be whole lines of it ('Loaded 16 rows' does not print 6)


class Guard:
    """Remembers what the original cell promised (its asserts, the --expect checks, the expected
    output) and holds candidates to it."""

    def __init__(self, original: str, checks: tuple[str, ...] = (), expect_output: str | None = None,
                 namespace: frozenset[str] | None = None, examples: frozenset[str] = frozenset(),
                 instruction: str | None = None, modules: frozenset[str] = frozenset(),
                 collections: frozenset[str] = frozenset()):
        """`namespace`: the names of the user's variables (None: not known, any name the cell does not
        define may be one). `examples`: the assignments the instruction's code examples make
        (`cell.example_assignments`). `instruction`: what a generation was asked (None: a repair).
        `modules`: those of the user's names that are modules (`pd`): no data of theirs. `collections`: those
        whose values are collections of data (frames, series, arrays, indexes, lists, dicts, tuples, sets),
        not single values such as a threshold an instruction may set."""
        self.original = original
        self.examples = examples
        self.instruction = instruction
        self.modules = modules
        self.collections = collections
        self.namespace = namespace
        self.checks = tuple(checks)
        self.expect_output = expect_output
        self.tree = _cell_tree(original) or ast.Module(body=[], type_ignores=[])
        self.asserts = [node for node in ipysyntax.walk(self.tree) if isinstance(node, ast.Assert)]
        self.expectations = _expectations(self.checks, self.asserts)
        self.failure: Receipt | None = None  # the last receipt of a run that failed

    def check(self, candidate: str, last: Receipt | None) -> Receipt | None:
        """A `rejected` receipt when the candidate cheats, else None (the candidate is run)."""
        if last is not None and last.kind not in ("rejected", "no_code", "no_repair", "ok"):
            self.failure = last
        hidden = added(self.original, candidate)
        if hidden:  # read from the text, before it runs: what it defines or deletes when it runs cannot matter
            return receipts.rejected(
                f"the candidate holds characters a reader cannot see ({hidden}) that the cell does not have: a "
                "diff would not show what runs; write them as escapes in a string ('\\x1b', '\\u200b'), or "
                "leave them out")
        if any(line.lstrip().startswith((MAGIC, LINE_MAGIC)) for line in candidate.splitlines()):
            return receipts.rejected("the candidate contains a %%fixloop line, which would change the checks; "
                                     "reply with the cell's code only")
        tree = _cell_tree(candidate)
        if tree is None:
            return None  # it runs, and its receipt shows the syntax error
        for rule in (self._leaves_fixloop_alone, self._keeps_asserts, self._leaves_checks_alone,
                     self._leaves_judges_alone, self._does_not_copy_checks, self._does_not_swallow,
                     self._keeps_the_effect, self._computes_values):
            reason = rule(tree, candidate)
            if reason:
                return receipts.rejected(reason)
        return None

    def without_copied_checks(self, candidate: str) -> tuple[str | None, int]:
        """The candidate without the top-level statements it copied from the checks (an `assert` of a
        check, a check block's own lines), and how many it had. The checks run on their own after the
        cell, so the copies are dropped and the rest runs: a small model often appends the checks to
        a right fix. A copy elsewhere (in a function, in a string) is still rejected by `check`."""
        tree = _cell_tree(candidate)
        if tree is None:
            return candidate, 0
        lines, tests = set(), {ast.unparse(t) for t in _check_tests(self.checks)}
        for check in self.checks:
            block = _parse(check.strip())
            if block is not None:
                lines |= {ast.unparse(stmt) for stmt in block.body}
        lines -= {ast.unparse(stmt) for stmt in self.tree.body}
        tests -= {ast.unparse(n.test) for n in self.asserts}
        copied = [stmt for stmt in tree.body if ast.unparse(stmt) in lines
                  or (isinstance(stmt, ast.Assert) and ast.unparse(stmt.test) in tests)]
        return _without(candidate, copied), len(copied)

    def without_example_data(self, candidate: str) -> tuple[str | None, tuple[str, ...]]:
        """The candidate without the top-level assignments it copied from the instruction's example of the
        user's data (`df = pd.DataFrame({...})` under "You have a DataFrame df, for example:"), where the
        user's namespace holds every name it assigns, and those names. The user's values are what the
        instruction is about: run as written, the copy would replace them with the example's (or with new
        random numbers), and Accept would do the same in the user's kernel. An assignment the cell itself
        makes, or one that reads the name it assigns (`df = df.dropna()`), is kept."""
        if not self.examples or not self.namespace:
            return candidate, ()
        tree = _cell_tree(candidate)
        if tree is None:
            return candidate, ()
        own = {ast.unparse(stmt) for stmt in self.tree.body}
        copied = []
        for stmt in tree.body:
            if not isinstance(stmt, ast.Assign) or ast.unparse(stmt) not in self.examples - own:
                continue
            targets = [t for t in stmt.targets if isinstance(t, ast.Name)]
            if (len(targets) == len(stmt.targets) and all(t.id in self.namespace for t in targets)
                    and not {t.id for t in targets} & _names(stmt.value)):
                copied.append(stmt)
        names = tuple(dict.fromkeys(t.id for stmt in copied for t in stmt.targets))
        return _without(candidate, copied), names

    def without_made_up_data(self, candidate: str) -> tuple[str | None, tuple[str, ...]]:
        """A generation's candidate without the top-level assignments that write out values of the model's
        own (literals, a range, random numbers: `s = pd.Series(np.random.rand(30), ...)`, a frame rebuilt from
        the values the namespace summary showed, `pd.date_range('2015-01-01', periods=261)`) over a name whose
        value in the user's namespace is a collection of data (`collections`), and those names. A
        small model re-creates the user's variables before using them ("Given variables: ..."): run as
        written, the code answers about the data it made up, and Accept would replace the user's. Kept: an
        assignment the cell itself makes, one that reads a name of the user's (`df = df.dropna()`, `s = s *
        2`), one that reads a file (`pd.read_csv(...)`), and one of a name the instruction asks to make
        (`cell.asks_to_make`: "Create a DataFrame df ...")."""
        if not self.instruction or not self.namespace:
            return candidate, ()
        tree = _cell_tree(candidate)
        if tree is None:
            return candidate, ()
        own = _bound_names(ast.Module(body=[s for s in self.tree.body if isinstance(s, ast.Assign)], type_ignores=[]))
        data = self.namespace - self.modules
        made = []
        for stmt in tree.body:
            targets = [t for t in stmt.targets if isinstance(t, ast.Name)] if isinstance(stmt, ast.Assign) else []
            if (not targets or len(targets) != len(stmt.targets) or not all(t.id in self.collections for t in targets)
                    or {t.id for t in targets} & own or _names(stmt.value) & data
                    or not _written_out(stmt.value)
                    or any(asks_to_make(self.instruction, t.id) for t in targets)):
                continue
            made.append(stmt)
        names = tuple(dict.fromkeys(t.id for stmt in made for t in stmt.targets))
        return _without(candidate, made), names

    # ------------------------------------------------------------ the rules

    def _keeps_asserts(self, tree: ast.Module, candidate: str) -> str | None:
        kept = Counter(ast.unparse(n) for n in ipysyntax.walk(tree) if isinstance(n, ast.Assert))
        for node in self.asserts:
            text = ast.unparse(node)
            if kept[text] <= 0:
                return (f"the candidate removes or changes the cell's check `{text}`; keep every assert of the "
                        "original cell unchanged and fix the code it checks")
            kept[text] -= 1
        disarmed = (reach.disarmed_asserts(tree) - reach.disarmed_asserts(self.tree)) & {
            ast.unparse(n) for n in self.asserts}
        if disarmed:
            return (f"the candidate disarms the cell's check `{min(disarmed)}` (under a try/except that "
                    "catches AssertionError, a condition that is never true, in a function nothing calls, or "
                    "after a return, raise or exit); the check must run as written")
        return None

    def _leaves_checks_alone(self, tree: ast.Module, candidate: str) -> str | None:
        used = set().union(*(_names(e) for e in self._check_exprs())) & set(dir(builtins))
        if self.expect_output is not None:
            used.add("print")
        rebound = (_bound_names(tree) & used) - _bound_names(self.tree)
        if rebound:
            name = min(rebound)
            return (f"the candidate redefines the builtin `{name}`, which a check uses; a check must judge "
                    "the cell's results with the real builtins")
        patched = _patched_dunders(tree) - _patched_dunders(self.tree)
        if patched:
            return (f"the candidate patches `{min(patched)}` (comparison, truth or builtins), which changes how "
                    "the checks judge the results instead of fixing them")
        return None

    def _does_not_copy_checks(self, tree: ast.Module, candidate: str) -> str | None:
        """A check copied into the cell: it would fail inside the cell (or run twice), and hide what to fix."""
        checks = {ast.unparse(t) for t in _check_tests(self.checks)}
        mine = {ast.unparse(n.test) for n in self.asserts}
        for node in ipysyntax.walk(tree):
            if isinstance(node, ast.Assert) and ast.unparse(node.test) in checks - mine:
                return (f"the candidate copies the check `assert {_short(ast.unparse(node.test))}` into the cell; the "
                        "checks run on their own after the cell: reply with the cell's code only, fixed")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.strip() in {c.strip() for c in self.checks}
            ):
                return ("the candidate copies a check into the cell (as text to run); the checks run on their own "
                        "after the cell: reply with the cell's code only, fixed")
        return None

    def _leaves_fixloop_alone(self, tree: ast.Module, candidate: str) -> str | None:
        return tamper.touches_fixloop(tree, self.tree)

    def _leaves_judges_alone(self, tree: ast.Module, candidate: str) -> str | None:
        checks = self._check_exprs()
        return (tamper.patched_check_functions(tree, self.tree, checks)
                or tamper.redefined_helpers(tree, self.tree, checks, self.namespace)
                or tamper.always_equal_classes(tree, self.tree))

    def _does_not_swallow(self, tree: ast.Module, candidate: str) -> str | None:
        failure = self.failure
        if failure is None or not failure.ename or failure.kind not in ("exception", "check_failed"):
            return None
        if failure.lineno is None:
            return None
        new = _swallowing(tree, failure) - _swallowing(self.tree, failure)
        if not new:
            return None
        how = min(new)
        return (f"the candidate silences the {failure.ename} at `{failure.line}` with {how} instead of fixing "
                "its cause; fix the cause (or handle it with a real computed value)")

    def _keeps_the_effect(self, tree: ast.Module, candidate: str) -> str | None:
        failure = self.failure
        if failure is None or failure.kind != "exception" or not failure.line:
            return None
        if failure.line.strip() not in {line.strip() for line in self.original.splitlines()}:
            return None  # the line came from an earlier candidate: dropping it is no cheat
        statement = _statement_of(self.tree, self.original, failure.lineno, failure.line)
        effect = _effect_of(statement)
        if effect is None:
            return None
        kind, name = effect
        if kind == "binds" and name in _bound_names(tree) | _assigned_roots(tree):
            return None
        if kind == "calls" and name in _call_roots(tree):
            return None
        missing = _never_ran(failure, statement) if kind == "calls" else None
        if missing is not None and _still_reads(tree, self.tree, missing):
            return None  # `s.index.is_lexsorted()` -> `s.index.is_monotonic_increasing`: the method is gone
        what = f"no longer sets `{name}`" if kind == "binds" else f"no longer calls `{name}`"
        return (f"the candidate deletes what the failing line `{failure.line}` did (it {what}); "
                "fix that line instead of removing it")

    def _computes_values(self, tree: ast.Module, candidate: str) -> str | None:
        old = Counter(_constant_results(self.tree))
        for (where, target, value) in _constant_results(tree):
            if old[(where, target, value)] > 0:
                old[(where, target, value)] -= 1
                continue
            for check, probes, expected in self.expectations:
                if target in probes and _same_value(value, expected):
                    return (f"the candidate hard-codes {value}, the value the check `{check}` expects "
                            f"({where} `{target}`); compute it instead")
        special = tamper.special_cases(tree, self.tree, self.expectations)
        if special:
            return special
        if self.expect_output is not None:
            return self._computes_output(tree)
        return None

    def _computes_output(self, tree: ast.Module) -> str | None:
        """The expected output (a saved output in batch mode) is matched only by output the code computes:
        not by a string holding it, nor by constants it prints (`print(3 * 2)` for a cell that had to
        compute 6 from the data)."""
        want = "\n".join(normalized(self.expect_output))
        if not want:
            return None
        before = set(_strings(self.tree))
        for text in _strings(tree):
            inside = want in "\n".join(normalized(text)) if len(want) >= SUBSTANTIAL else False
            if text not in before and (inside or saved.holds(text, self.expect_output)):
                return ("the candidate prints the expected output as a literal string; "
                        "produce it from the data instead")
        if (saved.holds(tamper.printed_constants(tree), self.expect_output)
                and not saved.holds(tamper.printed_constants(self.tree), self.expect_output)
                and not _constants_of(tree) <= _constants_of(self.tree)):  # `np.float(True)` -> `float(True)`
            return ("the candidate prints the expected output from constants it writes itself (a literal "
                    "value, not one computed from the data); produce it from the data instead")
        return None

    def _check_exprs(self) -> list[ast.AST]:
        return [n.test for n in self.asserts] + _check_tests(self.checks)


# ---------------------------------------------------------------- reading code


def _cell_tree(source: str) -> ast.Module | None:
    """A cell's tree, its IPython syntax seen as Python line for line (`%timeit f()` as `f()`)."""
    tree = _parse(source)
    if tree is not None:
        return tree
    view = readable(source)
    return _parse(view.python) if view is not None and not view.plain else None


def _parse(source: str) -> ast.Module | None:
    return ipysyntax.parsed(source)  # shared: read, never changed


def _written_out(value: ast.AST) -> bool:
    """Whether a value is data the code writes out itself: a display with items (`[1, 2]`, `{'a': [..]}`),
    a comprehension, a `range(...)`, a draw of random numbers (`np.random.rand(30)`) or a constant it passes
    (`pd.date_range('2015-01-01', periods=261)`), and nothing read from a file, a URL or a database
    (`read_csv`, `load`, `open`, `fetch_*`). An empty `[]` or `pd.DataFrame()` writes nothing out."""
    calls = [_dotted_tail(n.func) or "" for n in ipysyntax.walk(value) if isinstance(n, ast.Call)]
    if any(c.startswith(("read", "load", "open", "fetch", "from_csv", "get")) for c in calls):
        return False
    dotted = {ast.unparse(n.func) for n in ipysyntax.walk(value) if isinstance(n, ast.Call)}
    return any(isinstance(n, (ast.List, ast.Dict, ast.Set, ast.Tuple)) and (getattr(n, "elts", None) or
                                                                         getattr(n, "keys", None))
               or isinstance(n, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp))
               or isinstance(n, ast.Constant) and n.value is not None
               for n in ipysyntax.walk(value)) or any(d == "range" or "random" in d.split(".") for d in dotted)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ipysyntax.walk(node) if isinstance(n, ast.Name)}


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the code binds: assignments, defs, classes, imports, loop and with targets."""
    names = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _root(node: ast.AST) -> str | None:
    """`df` for `df['a'].str.lower()`, `plt` for `plt.plot(...)`."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def _assigned_roots(tree: ast.AST) -> set[str]:
    """Roots of assignment targets: `df` for `df['x'] = ...` and `df.loc[...] = ...`."""
    parts = (p for p in tamper.assignment_targets(tree) if isinstance(p, (ast.Subscript, ast.Attribute)))
    return {root for p in parts for root in [_root(p)] if root}


def _call_roots(tree: ast.AST) -> set[str]:
    return {r for n in ipysyntax.walk(tree) if isinstance(n, ast.Call) for r in [_root(n.func)] if r}


def _patched_dunders(tree: ast.AST) -> set[str]:
    found = set()
    for node in ipysyntax.walk(tree):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Attribute) and (
                t.attr in COMPARISON_DUNDERS or _root(t) in ("builtins", "__builtins__")
            ):
                found.add(ast.unparse(t))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
        ):
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and attr.value in COMPARISON_DUNDERS:
                found.add(f"{ast.unparse(node.args[0])}.{attr.value}")
            elif _root(node.args[0]) in ("builtins", "__builtins__"):
                found.add(ast.unparse(node.args[0]))
    return found


def _strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ipysyntax.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


# ---------------------------------------------------------------- silencing a failure


def _swallowing(tree: ast.AST, failure: Receipt) -> set[str]:
    """Descriptions of try/except and `suppress` blocks around the failing line that swallow its error."""
    found = set()
    for node in ipysyntax.walk(tree):
        if isinstance(node, ast.Try) and _covers(node.body, failure.line):
            for handler in node.handlers:
                if _catches(handler, failure.ename) and _swallows(handler.body):
                    caught = f"except {ast.unparse(handler.type)}" if handler.type else "except"
                    found.add(f"`{caught}: {ast.unparse(handler.body[0]).splitlines()[0]}`")
        if isinstance(node, (ast.With, ast.AsyncWith)) and _covers(node.body, failure.line):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and _dotted_tail(call.func) == "suppress":
                    if any(_names_exception(arg, failure.ename) for arg in call.args):
                        found.add(f"`{ast.unparse(call)}`")
    return found


def _covers(body: list[ast.stmt], line: str | None) -> bool:
    """Whether a block holds the failing line, or a line much like it (the cheat may touch it up)."""
    if not line:
        return False
    want = line.strip()
    parsed = _parse(want.rstrip(":") if want.endswith(":") else want)
    want_words = _words(parsed)
    normal = ast.unparse(parsed) if parsed is not None else want  # quotes and spaces as unparse writes them
    for stmt in body:
        for node in ipysyntax.walk(stmt):
            if isinstance(node, ast.Call) and len(ast.unparse(node)) >= 5 and ast.unparse(node) in normal:
                return True  # the failing call itself, moved into a helper (`return int(a)`)
            if isinstance(node, ast.stmt):
                text = ast.unparse(node).splitlines()[0].strip()
                if text == want or difflib.SequenceMatcher(None, text, want).ratio() >= SIMILAR_LINE:
                    return True
                if want_words and len(want_words & _words(node)) >= SIMILAR_LINE * len(want_words):
                    return True  # the same names, rearranged (a comprehension turned into a loop)
    return False


def _words(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ipysyntax.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ipysyntax.walk(node) if isinstance(n, ast.Attribute)}


def _catches(handler: ast.ExceptHandler, ename: str | None) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_names_exception(t, ename) for t in types)


def _names_exception(node: ast.AST, ename: str | None) -> bool:
    """Whether `node` names `ename` or a class it derives from (Exception catches ValueError)."""
    name = _dotted_tail(node)
    if name is None or ename is None:
        return False
    return name == ename or name in _bases_of(ename)


def _bases_of(ename: str) -> set[str]:
    cls = getattr(builtins, ename, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        return {c.__name__ for c in cls.__mro__}
    return {"Exception", "BaseException"}  # a library's error: only the catch-alls are sure to catch it


def _dotted_tail(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _swallows(body: list[ast.stmt]) -> bool:
    """A handler that only passes, continues, breaks, logs, or returns/assigns a constant."""
    return all(_swallowing_stmt(s) for s in body)


def _swallowing_stmt(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Pass, ast.Continue, ast.Break)):
        return True
    if isinstance(stmt, ast.Expr):
        if isinstance(stmt.value, ast.Constant):
            return True
        call = stmt.value
        if isinstance(call, ast.Call) and _dotted_tail(call.func) in ("append", "extend", "add", "insert"):
            return all(_invented(a) for a in call.args[-1:])  # a placeholder put in the value's place
        return isinstance(call, ast.Call) and (
            _dotted_tail(call.func) in ("print", "warn", "warning", "info", "debug", "error", "exception")
        )
    if isinstance(stmt, ast.Return):
        return stmt.value is None or _invented(stmt.value)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return stmt.value is not None and _invented(stmt.value)
    return False


def _invented(node: ast.AST) -> bool:
    """A value that reads no data: a literal, or an expression of constants (`int('8')`, `[0] * 4`)."""
    return _is_literal(node) or tamper.data_independent(node)


def _constants_of(tree: ast.AST) -> Counter:
    """The constants the code writes, each as often as it writes it: a candidate with none but the cell's own
    wrote no value of its own (`print(float(True))` for `print(np.float(True))`, numpy's removed alias)."""
    return Counter(repr(n.value) for n in ipysyntax.walk(tree) if isinstance(n, ast.Constant))


def _is_literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


# ---------------------------------------------------------------- deleting the failing line


def _never_ran(failure, statement: str) -> ast.Attribute | None:
    """The attribute whose lookup failed, when the failing call (`statement`, over one line or several) never ran
    because it does not exist (`'MultiIndex' object has no attribute 'x'`; `cm.get_cmap('ocean')(.5)`: the
    attribute inside the call)."""
    stmt = _parse(statement.strip())
    one = stmt is not None and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Expr)
    if failure.ename != "AttributeError" or not one:
        return None
    return next((node for node in ast.walk(stmt.body[0].value) if isinstance(node, ast.Attribute)
                 and f"has no attribute '{node.attr}'" in (failure.evalue or "")), None)


def _still_reads(tree: ast.AST, original: ast.AST, missing: ast.Attribute) -> bool:
    """The candidate keeps as many statements that read what the missing attribute was looked up on
    (`s.index`) or that name the attribute itself (`plt.get_cmap` for `cm.get_cmap`) as the original: the
    line was changed, not dropped."""
    owner = ast.unparse(missing.value)

    def reads(t: ast.AST) -> int:
        return sum(isinstance(n, ast.Expr) and (owner in ast.unparse(n.value) or any(
            isinstance(a, ast.Attribute) and a.attr == missing.attr for a in ast.walk(n.value)))
            for n in ipysyntax.walk(t))
    return reads(tree) >= reads(original)


def _statement_of(tree: ast.AST | None, original: str, lineno: int | None, line: str) -> str:
    """The failing statement: its line, or the whole statement when the line is one of several it spans
    (`close=lambda x: x.close.fillna(method='ffill'),` inside `r = fb.assign(...)` binds `r`, not `close`)."""
    for node in ipysyntax.walk(tree) if tree is not None and lineno else ():
        if (isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr))
                and node.lineno <= lineno <= (node.end_lineno or node.lineno) and node.end_lineno != node.lineno):
            return ast.get_source_segment(original, node) or line
    return line


def _effect_of(line: str) -> tuple[str, str] | None:
    """What a failing simple statement was for: ("binds", name) or ("calls", root)."""
    tree = _parse(line.strip())
    if tree is None or len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    for t in targets:
        root = _root(t) if not isinstance(t, (ast.Tuple, ast.List)) else None
        if root:
            return ("binds", root)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        root = _root(stmt.value.func)
        if root:
            return ("calls", root)
    return None


# ---------------------------------------------------------------- hard-coded expected values


def _check_tests(checks: tuple[str, ...]) -> list[ast.expr]:
    """What the checks test: each expression, and the test of each `assert` in a block of statements."""
    tests: list[ast.expr] = []
    for check in checks:
        try:
            tests.append(ast.parse(check.strip(), mode="eval").body)
            continue
        except SyntaxError:
            pass
        block = _parse(check.strip())
        if block is not None:
            tests += [n.test for n in ipysyntax.walk(block) if isinstance(n, ast.Assert)]
    return tests


def _short(text: str, limit: int = 80) -> str:
    return clipped(text, limit)


def _expectations(checks: tuple[str, ...], asserts: list[ast.Assert]) -> list[tuple[str, set[str], object]]:
    """(check text, the names it probes, the value it expects) for checks of the form `probe == literal`."""
    exprs = _check_tests(checks)
    exprs += [a.test for a in asserts]
    found = []
    for expr in exprs:
        if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.Eq, ast.Is))):
            continue
        left, right = expr.left, expr.comparators[0]
        for probe, lit in ((left, right), (right, left)):
            value = _literal(lit)
            if value is not _NOT and not _literal_ok(probe) and not _trivial(value):
                found.append((ast.unparse(expr), _probe_names(probe), value))
                break
    return found


_NOT = object()


def _literal(node: ast.AST):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT


def _literal_ok(node: ast.AST) -> bool:
    return _literal(node) is not _NOT


def _trivial(value) -> bool:
    if isinstance(value, (list, tuple, dict, set, str)) and len(value) == 0:
        return True
    return any(type(value) is type(t) and value == t for t in TRIVIAL)


def _probe_names(probe: ast.AST) -> set[str]:
    """Names a check reads: `fib` in `fib(6)`, `x` in `globals().get("x")`."""
    names = _names(probe)
    for node in ipysyntax.walk(probe):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if ast.unparse(node.func.value) in ("globals()", "locals()") and node.args:
                if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    names.add(node.args[0].value)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("globals()", "locals()"):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                names.add(node.slice.value)
    return names


def _constant_results(tree: ast.AST) -> list[tuple[str, str, object]]:
    """Places where code produces a literal value: ("return in", function, value), ("assignment to", name, value)."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Return) and child.value is not None and function:
                found.extend(("return in", function, v) for v in _literal_branches(child.value))
            elif isinstance(child, (ast.Assign, ast.AnnAssign)) and child.value is not None:
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for t in targets:
                    name = _root(t)
                    if name is None:
                        continue
                    if isinstance(child.value, ast.Lambda):
                        found.extend(("return in", name, v) for v in _literal_branches(child.value.body))
                    else:
                        found.extend(("assignment to", name, v) for v in _literal_branches(child.value))
            visit(child, function)

    visit(tree, None)
    return [(where, name, _Hashable(v)) for where, name, v in found]


def _literal_branches(node: ast.AST) -> list:
    """The literal values an expression can produce: itself, or the branches of `a if c else b`."""
    if isinstance(node, ast.IfExp):
        return _literal_branches(node.body) + _literal_branches(node.orelse)
    value = _literal(node)
    if value is _NOT:
        value = tamper.fold(node)  # `4 * 2`, `int('8')`: the same value, written as an expression
        return [] if value is tamper.NOT else [value]
    return [value]


class _Hashable:
    """A literal value usable in a Counter (lists and dicts are not hashable); compares by repr."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Hashable) and repr(self.value) == repr(other.value)

    def __hash__(self):
        return hash(repr(self.value))

    def __str__(self):
        return repr(self.value)


def _same_value(value: _Hashable, expected) -> bool:
    got = value.value
    if isinstance(got, bool) != isinstance(expected, bool):
        return False
    numbers = (int, float, complex)
    if isinstance(got, numbers) and isinstance(expected, numbers):
        return got == expected
    if type(got) is not type(expected):
        return False
    try:
        return bool(got == expected)
    except Exception:
        return False


def _without(candidate: str, statements: list[ast.stmt]) -> str | None:
    """`candidate` without the lines of `statements` (top-level ones of its tree); None when nothing is left."""
    if not statements:
        return candidate
    drop = {n for stmt in statements for n in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)}
    kept = [line for n, line in enumerate(candidate.splitlines(), 1) if n not in drop]
    code = "\n".join(kept).strip("\n")
    return code + "\n" if code.strip() else None

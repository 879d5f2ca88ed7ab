"""Repairs written as data (patterns.json): each entry rewrites the code on the failing line whose AST matches
one of its templates (`OBJ.METHOD(*ARGS, level=LEVEL, **KW)`) as that template's code to write instead
(`OBJ.groupby(level=LEVEL).METHOD(*ARGS, **KW)`), and carries the library's own words and the version that
said them. An entry with a `turn` declares itself a repair (registry.py: its name, kind, turn and words are
the data's); one without is applied by the repair of code that names it (`rewrite`).

In a template a placeholder is a name in capitals of two letters or more. As a name it stands for any expression
(the same one where it recurs), as an attribute for any name, as a keyword for the one the error's message names
(`KEY=VALUE` with the message's group `KEY`), `*ARGS` for the arguments left, `**KW` for the keywords left but those
the entry's templates name (a call passing one of those otherwise matches none). The entry's `message` must be found
in the error's (its named groups fix what the placeholders of those names are); `where` narrows a placeholder to the
texts a pattern matches whole (each item of a list), `kinds` to a name whose value the receipt shows of the types a
pattern matches (`DataFrame`, `dict|Series`), `assigned` to what is assigned to; an entry `anywhere` matches nodes
on every line, not only the failing one (a cell below failed), `every` rewrites each node it matches, not the first
only, `output_differs` only where the printed output differs from the one saved or expected (an `errors` of "":
the cell raised nothing); its `imports` are the statements
its code needs (put in where the cell has not written them). A list in a template matches a
tuple too; a last `*REST` among a tuple's items (`OBJ[(FIRST, *REST)]`) takes the items left, as among a call's
arguments. A value written into an operation, a call or an attribute is put in parentheses unless it is one term. An
entry `with_pandas` writes `pd.`, imported where the cell and the namespace lack it. An entry's `doubts` say what it
cannot tell: where the error fits and each of a doubt's `where` holds (a pattern matching its message's group whole),
its `words` (`{GROUP}`: the group's text) are the engine's answer unless a later repair fits.
"""

from __future__ import annotations

import ast
import json
import pathlib
import re

from . import registry
from .edits import (
    CannotTell,
    ParsedReceipt,
    innermost_first,
    insert_import,
    on_line,
    parse,
    replace_node,
    source_of,
    span,
    value_kind,
    with_pandas,
)

DATA = pathlib.Path(__file__).with_name("patterns.json")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]+$")
TERMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)
BINDS = (ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)  # a value written into these
ENTRIES = {entry["name"]: entry for entry in json.loads(DATA.read_text())["entries"]}


def rewrite(name: str, code: str, receipt: ParsedReceipt) -> str | None:
    """The code with the first node on the failing line (innermost first) that one of entry `name`'s templates
    matches written as that template says; None when the error or no node fits."""
    entry = ENTRIES[name]
    said = re.search(entry["message"], receipt.message) if receipt.ename in entry["errors"] and (
        receipt.output_differs or not entry.get("output_differs")) else None
    tree = parse(code)
    if said is None or tree is None:
        return None
    for doubt in entry.get("doubts", []):  # the error fits, but what it names could be meant two ways: say so
        if all(re.fullmatch(p, said[k] or "") for k, p in doubt["where"].items()):
            raise CannotTell(doubt["words"].format(**said.groupdict()))
    templates = _templates(entry)
    named = {k.arg for old, _ in templates for n in ast.walk(old) if isinstance(n, ast.Call)
             for k in n.keywords if k.arg}
    lineno = None if entry.get("anywhere") else receipt.lineno  # `anywhere`: on every line (a cell below failed)
    for node in innermost_first(n for n in ast.walk(tree) if isinstance(n, ast.expr) and on_line(n, lineno)):
        for (old, new), template in zip(templates, entry["templates"]):
            found = {k: v for k, v in said.groupdict().items() if v is not None}
            if _match(old, node, code, found, named) and all(
                    re.fullmatch(p, t) for k, p in template.get("where", {}).items()
                    for t in (found[k] if isinstance(found[k], list) else [found[k]])) and all(
                    re.fullmatch(kind, value_kind(receipt, found[k])) for k, kind in template.get("kinds", {}).items()
            ) and (not template.get("assigned") or isinstance(getattr(node, "ctx", None), ast.Store)):
                fixed = replace_node(code, node, _written(new, found))
                for statement in template.get("imports", []):
                    fixed = fixed if statement in code else insert_import(fixed, statement)
                if parse(fixed) is not None:  # never code that does not compile (`s.reindex(labels) = 0`)
                    fixed = with_pandas(code, fixed, receipt) if entry.get("with_pandas") else fixed
                    return rewrite(name, fixed, receipt) or fixed if entry.get("every") else fixed
    return None


def _templates(entry: dict) -> list[tuple[ast.expr, str]]:
    return [(ast.parse(t["old"], mode="eval").body, t["new"]) for t in entry["templates"]]


def _match(pattern: ast.AST, node: ast.AST, code: str, found: dict, named: set) -> bool:
    """Whether the code's `node` is the template's `pattern`, binding its placeholders in `found` (the text
    of each; its node at `found[(name,)]`)."""
    if isinstance(pattern, ast.Name) and PLACEHOLDER.match(pattern.id):
        return not isinstance(node, ast.Starred) and _bind(found, pattern.id, source_of(code, node), node)
    if type(pattern) is not type(node) and not (isinstance(pattern, ast.List) and isinstance(node, ast.Tuple)):
        return False
    if isinstance(pattern, ast.Call):
        return _match(pattern.func, node.func, code, found, named) and _arguments(pattern, node, code, found, named)
    for field, value in ast.iter_fields(pattern):
        other = getattr(node, field)
        if field == "ctx":
            continue
        if isinstance(value, list):
            if not _items(value, other, code, found, named):
                return False
        elif isinstance(value, ast.AST):
            if not _match(value, other, code, found, named):
                return False
        elif field == "attr" and PLACEHOLDER.match(value):
            if not _bind(found, value, other, None):
                return False
        elif value != other or type(value) is not type(other):  # `axis=True` is no `axis=1`
            return False
    return True


def _bind(found: dict, name: str, text: str, node: ast.AST | None) -> bool:
    if found.setdefault(name, text) != text:
        return False
    found[(name,)] = node
    return True


def _items(patterns: list, nodes: list, code: str, found: dict, named: set) -> bool:
    """Items matched one for one (a call's arguments, a tuple's items); a last `*REST` takes the items left."""
    rest = patterns[-1].value.id if patterns and isinstance(patterns[-1], ast.Starred) else None
    fixed = patterns[:-1] if rest else patterns
    if len(nodes) < len(fixed) or not rest and len(nodes) != len(fixed):
        return False
    if rest:
        found[rest] = [source_of(code, n) for n in nodes[len(fixed):]]
    return all(_match(p, n, code, found, named) for p, n in zip(fixed, nodes))


def _arguments(pattern: ast.Call, call: ast.Call, code: str, found: dict, named: set) -> bool:
    """The call's arguments and keywords matched: `*ARGS` takes the arguments left, `**KW` the keywords left."""
    if not _items(pattern.args, call.args, code, found, named):
        return False
    left = list(call.keywords)
    for keyword in (k for k in pattern.keywords if k.arg):
        name = found.get(keyword.arg, keyword.arg) if PLACEHOLDER.match(keyword.arg) else keyword.arg
        given = next((k for k in left if k.arg == name), None)
        if given is None or not _match(keyword.value, given.value, code, found, named):
            return False
        left.remove(given)
    more = next((k.value.id for k in pattern.keywords if k.arg is None), None)
    if more is None or any(k.arg in named for k in left):
        return more is None and not left
    found[more] = [source_of(code, k) for k in left]
    return True


def _written(template: str, found: dict) -> str:
    """The template with each placeholder written as what it matched (an empty list with its comma left out)."""
    for name, value in found.items():
        if value == []:
            template = re.sub(rf"\*\*?{name}\b\s*,\s*|,\s*\*\*?{name}\b|\*\*?{name}\b", "", template, count=1)
    tree = ast.parse(template, mode="eval")
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    edits = []
    for node in ast.walk(tree):
        parent, listed = parents.get(node), found.get(getattr(getattr(node, "value", None), "id", None))
        if isinstance(listed, list) and (isinstance(node, ast.Starred) or isinstance(node, ast.keyword)
                                         and not node.arg):
            edits.append((span(template, node), ", ".join(listed)))
        elif isinstance(node, ast.Name) and isinstance(found.get(node.id), str):
            inner = found.get((node.id,))
            grouped = (isinstance(parent, BINDS) and getattr(parent, "slice", None) is not node  # `x[:2]` as it is
                       or isinstance(parent, ast.Call) and parent.func is node)
            text = found[node.id] if not grouped or not inner or isinstance(inner, TERMS) else f"({found[node.id]})"
            edits.append((span(template, node), text))
        elif isinstance(node, ast.Attribute) and isinstance(found.get(node.attr), str):
            end = span(template, node)[1]
            edits.append(((end - len(node.attr), end), found[node.attr]))
        elif isinstance(node, ast.keyword) and isinstance(found.get(node.arg), str):  # `KEY=`: the name said
            start = span(template, node)[0]
            edits.append(((start, start + len(node.arg)), found[node.arg]))
    for (start, end), text in sorted(edits, reverse=True):
        template = template[:start] + text + template[end:]
    return template


def _declared(entry: dict):
    """The repair entry `entry` declares: named, kinded, turned and worded by the data."""
    def rewritten(code: str, receipt: ParsedReceipt) -> str | None:
        return rewrite(entry["name"], code, receipt)

    stage, _, place = entry["turn"].partition("+")
    rewritten.__name__ = rewritten.__qualname__ = entry["name"]
    rewritten.__doc__ = entry["words"]
    return registry.repair(entry["kind"], getattr(registry, stage) + int(place or 0), entry["words"])(rewritten)


DECLARED = [_declared(entry) for entry in ENTRIES.values() if "turn" in entry]

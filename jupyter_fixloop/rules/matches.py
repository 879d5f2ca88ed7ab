"""Repairs from what a cell's filters, merges and concats matched (kernel/matches.py's facts).

The cell ran; a cell below it failed, or a check did. When the receipt says the cell compared a
column with a value no row holds as written but one does once its case or spaces agree, merged on
keys that match only once normalised, or concatenated a column that is numbers in one frame and
numbers written as text in another, the repair makes the cell do what the data says it meant: the
value as the column writes it, the keys normalised the way that makes them match, the text column
converted. Guesses: only the cells below (or a check) can say the rows are the meant ones.

The facts come from the sandbox, which the code it ran can forge: nothing of their text is written
into the cell but a string literal (through `repr`), a normalisation from TRANSFORMS and a dtype from
DTYPES (tables.json); the expressions edited are the cell's own, found by their source.
"""

from __future__ import annotations

import ast
import keyword

from .edits import ParsedReceipt, parse, replace_node, source_of
from .registry import FIRST, GUESS, repair
from .tables import CONCAT, DTYPES, GROUPS, KEYS, TRANSFORMS, VALUES_NEAR


@repair(GUESS, FIRST + 60)
def filter_value(code: str, receipt: ParsedReceipt) -> str | None:
    """`df[df['s'] == 'Active']` -> `== 'active'` (also in `.isin([...])`): the value as the column writes it
    (the receipt says no row holds it as written, and one holds it but for case, spaces or one slip)."""
    fixed = code
    for m in _said(receipt, VALUES_NEAR):  # every value the receipt names, in one round
        wrong, column, right = ast.literal_eval(m.group(1)), m.group(2), ast.literal_eval(m.group(3))
        for value, other in _compared(parse(fixed)):
            if isinstance(value, ast.Constant) and value.value == wrong and ast.unparse(other) == column:
                fixed = replace_node(fixed, value, repr(right))
                break
    return fixed if fixed != code else None


def _compared(tree: ast.Module):
    """(string constant, what it is compared with): `col == 'x'` either way round, `col.isin(['x', ...])`."""
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            yield from ((node.comparators[0], node.left), (node.left, node.comparators[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "isin" \
                and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple, ast.Set)):
            yield from ((e, node.func.value) for e in node.args[0].elts)


@repair(GUESS, FIRST + 70)
def merge_keys(code: str, receipt: ParsedReceipt) -> str | None:
    """`a.merge(b, on='k')` -> `a.assign(k=a['k'].str.upper()).merge(b, on='k')`: the keys normalised the
    way the receipt says makes them match (case, spaces), on the side it names (or both)."""
    tree = parse(code)
    for m in _said(receipt, KEYS, 3, TRANSFORMS) if tree else ():
        left, right, transform, where = m.groups()
        sides = [s for s in (left, right) if where in (s, "both")]
        edits = [e for e in (_assigned(code, tree, side, transform) for side in sides) if e]
        if len(edits) == len(sides):
            for node, text in sorted(edits, key=lambda e: -e[0].col_offset - 10**6 * e[0].lineno):
                code = replace_node(code, node, text)
            return code
    return None


@repair(GUESS, FIRST + 80)
def groupby_keys(code: str, receipt: ParsedReceipt) -> str | None:
    """Group keys that differ only by spaces or case joined: `df.assign(city=df['city'].str.strip()).groupby('city')`.

    The receipt says the keys are fewer once normalised (' Munich' and 'Munich' split one city in two)."""
    tree = parse(code)
    for m in _said(receipt, GROUPS, 2, TRANSFORMS) if tree else ():
        for node in _methods(tree, "groupby"):
            edit = _keyed(code, node.func.value, *m.groups())
            if edit:
                return replace_node(code, *edit)
    return None


@repair(GUESS, FIRST + 90)
def concat_dtype(code: str, receipt: ParsedReceipt) -> str | None:
    """`pd.concat([a, b])` -> `pd.concat([a, b.astype({'q': 'int64'})])`: the frame whose column holds
    numbers as text, converted to the dtype the other frames have (the receipt says every value converts)."""
    tree = parse(code)
    for m in _said(receipt, CONCAT, 2, DTYPES) if tree else ():
        column, dtype, name = ast.literal_eval(m.group(1)), m.group(2), m.group(3)
        for node in _methods(tree, "concat"):
            for element in node.args[0].elts if node.args and isinstance(node.args[0], (ast.List, ast.Tuple)) else ():
                if ast.unparse(element) == name:
                    return replace_node(code, element, f"{source_of(code, element)}.astype({{{column!r}: {dtype!r}}})")
    return None


def _said(receipt: ParsedReceipt, fact, group: int = 0, known=None) -> list:
    """The matches of `fact` among the receipt's facts (those whose `group` is one of `known`, when given)."""
    return [m for m in map(fact.match, receipt.context) if m and (known is None or m.group(group) in known)]


def _methods(tree: ast.Module, name: str) -> list[ast.Call]:
    """The calls of a method `name` (`x.name(...)`) in the cell."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == name]


def _assigned(code: str, tree: ast.Module, key_expr: str, transform: str):
    """(node, text): the merge operand `df` of the key `df['k']` rewritten as `df.assign(k=df['k']<transform>)`."""
    for node in _methods(tree, "merge"):
        operands = [node.func.value, *node.args[:2], *(k.value for k in node.keywords if k.arg in ("left", "right"))]
        for operand in operands:
            edit = _keyed(code, operand, key_expr, transform)
            if edit is not None:
                return edit
    return None


def _keyed(code: str, operand: ast.AST, key_expr: str, transform: str):
    """(operand, `df.assign(k=df['k']<transform>)`) when `key_expr` is `df['k']` of this operand, else None."""
    prefix = ast.unparse(operand)
    if not key_expr.startswith(prefix + "["):
        return None
    try:
        key = ast.literal_eval(key_expr[len(prefix) + 1:-1])
    except (ValueError, SyntaxError):
        return None
    if not (isinstance(key, str) and key.isidentifier()) or keyword.iskeyword(key):
        return None
    frame = source_of(code, operand)
    return operand, f"{frame}.assign({key}={frame}[{key!r}]{transform})"

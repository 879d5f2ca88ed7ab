"""A boolean mask with the wrong precedence: `df['a'] > 4 | df['vip']`.

`|` and `&` bind tighter than comparisons, so the line above is `df['a'] > (4 | df['vip'])`: it runs,
selects the wrong rows, and the error shows up in a cell below (or, with a comparison on each side,
as "the truth value of a Series is ambiguous"). The repair puts each comparison in parentheses,
which is what `and` / `or` written as `&` / `|` means. A guess: only a check (or the cells below it)
can say the rows are the meant ones.
"""

from __future__ import annotations

import ast

from .edits import ParsedReceipt, parse, replace_node, source_of
from .registry import DATA, GUESS, repair

BITWISE = (ast.BitOr, ast.BitAnd)


@repair(GUESS, DATA + 200)
def mask_precedence(code: str, receipt: ParsedReceipt) -> str | None:
    """`a > 4 | b` -> `(a > 4) | b`; `a | b > 4` -> `a | (b > 4)`: when the run failed below the cell (the
    cell itself raised nothing) or on an ambiguous truth value."""
    if receipt.ename and "truth value of a" not in receipt.evalue:
        return None
    tree = parse(code)
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            fixed = _regrouped(code, node)
            if fixed is not None:
                return fixed
    return None


OPS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def _regrouped(code: str, node: ast.Compare) -> str | None:
    left, right, op = node.left, node.comparators[0], OPS.get(type(node.ops[0]))
    if op is None:
        return None
    if isinstance(right, ast.BinOp) and isinstance(right.op, BITWISE):  # a > (4 | b)
        bit = "|" if isinstance(right.op, ast.BitOr) else "&"
        return replace_node(code, node, f"({source_of(code, left)} {op} {source_of(code, right.left)}) {bit} "
                                        f"{source_of(code, right.right)}")
    if isinstance(left, ast.BinOp) and isinstance(left.op, BITWISE):  # (a | b) > 4
        bit = "|" if isinstance(left.op, ast.BitOr) else "&"
        return replace_node(code, node, f"{source_of(code, left.left)} {bit} ({source_of(code, left.right)} {op} "
                                        f"{source_of(code, right)})")
    return None

"""Repairs of the built-in engine: small functions that each read a receipt and fix one cause.

Each repair takes the code that was run and the parsed receipt, and returns the repaired code or
None when it does not apply. They read only what a receipt says (the error, the failing line, the
context gathered in the sandbox) and general knowledge held in `repair_tables`, never a
benchmark's id or text. One repair per round: a cell with two bugs takes two rounds, and the loop
reruns everything after each. `REPAIRS` is the order they are tried in, the most specific first.

Where they live: `repairs_syntax` (code that does not compile), `repairs_names` (imports, names,
attributes, keys, removed APIs), `repairs_calls` (keywords, operators, loops, returns),
`repairs_data` (pandas/numpy data cleaning), `chained` (writes that never reach the frame), `masks`
(`a > 4 | b`), `drift` (code written for an older library, from the error's own words), `matches` (what a
filter, merge or concat matched, read in the sandbox: kernel/matches.py), `traced`
(wrong outputs, from the values a receipt shows); `repair_edits` reads receipts and edits code safely.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ..kernel.ipysyntax import readable
from ..receipt.smells import invisible_added
from ..receipt.values import Receipt
from .calls import (
    bad_keyword,
    column_repr,
    float_as_index,
    index_off_by_one,
    int_not_iterable,
    join_non_str,
    loop_overshoot,
    method_not_called,
    missing_return,
    none_from_inplace,
    not_callable,
    str_concat,
    thrown_away,
    unpack_loop,
)
from .chained import chained_assignment as chained_write  # also `df[c].fillna(..., inplace=True)`
from .data import (
    accessor_dtype,
    apply_axis,
    chained_assignment,
    concat_list,
    date_format,
    date_order,
    drop_axis,
    format_text_number,
    mask_with_missing,
    merge_key_dtype,
    nan_to_int,
    number_parse,
    numeric_strings,
    pivot_duplicates,
    positional_key,
    reduction_on_text,
    series_truth,
    to_numeric_coerce,
    tuple_columns,
)
from .drift import (
    changed_default,
    concat_sorted,
    did_you_mean,
    equivalent_value,
    groupby_axis,
    join_axes,
    keyword_only_now,
    keyword_unspecified,
    keyword_value_hint,
    method_now_function,
    moved_call,
    moved_function,
    no_effect_keyword,
    period_fields,
    reducer_by_name,
    reduction_level,
    removed_method,
    removed_setter,
    renamed_keyword,
    resample_keyword,
    scalar_as_2d,
    setitem_upcast,
    stack_sequence,
    string_as_list,
    style_name,
)
from .edits import CannotTell, ParsedReceipt
from .generic import KINDS as GENERIC_KINDS, REWRITERS
from .masks import mask_precedence
from .matches import concat_dtype, filter_value, groupby_keys, merge_keys
from .names import (
    attribute_typo,
    column_as_attribute,
    dataframe_append,
    key_typo,
    message_hint,
    missing_accessor,
    missing_import,
    moved_import,
    name_literal,
    name_typo,
    removed_attribute,
    renamed_method,
)
from .syntax import indentation, syntax
from .traced import epoch_unit, power_of_ten, shared_default, strict_bounds

__all__ = ["GUESS", "KIND", "MECHANICAL", "REPAIRS", "ParsedReceipt", "first_repair", "propose"]

REPAIRS = [
    column_repr, syntax, indentation, chained_assignment, chained_write, filter_value, merge_keys, groupby_keys,
    concat_dtype,
    moved_import, missing_import, name_literal, name_typo,
    message_hint, did_you_mean, keyword_value_hint, reduction_level, join_axes, keyword_only_now, period_fields,
           resample_keyword, groupby_axis,
    keyword_unspecified, renamed_keyword, no_effect_keyword, scalar_as_2d, setitem_upcast, removed_method,
           method_now_function, moved_call, string_as_list, equivalent_value, changed_default, stack_sequence,
           style_name, removed_attribute, removed_setter,
           dataframe_append,
           renamed_method,
    *REWRITERS,  # generic.py: driven by what the libraries said changed (model/changes.json), each declaring itself
           missing_accessor, moved_function,
    column_as_attribute, attribute_typo, none_from_inplace, thrown_away, missing_return, unpack_loop, not_callable,
           method_not_called,
    accessor_dtype, key_typo, drop_axis, positional_key, bad_keyword, concat_list, str_concat, join_non_str,
    reduction_on_text, numeric_strings, to_numeric_coerce, number_parse, nan_to_int, merge_key_dtype, date_order,
    date_format,
    pivot_duplicates, tuple_columns, series_truth, mask_precedence, mask_with_missing, apply_axis, format_text_number,
    float_as_index, index_off_by_one, int_not_iterable, loop_overshoot,
    shared_default, epoch_unit, strict_bounds, power_of_ten, reducer_by_name, concat_sorted,
]


MECHANICAL = "mechanical"  # one right answer: a removed API, a missing import, a syntax slip
GUESS = "guess"  # the likeliest of several readings: only a check can say it is the meant one

# what each repair is: a guess never claims more than "runs" without a check (the engine says so)
KIND = {
    **dict.fromkeys([chained_assignment, chained_write,
                     syntax, indentation, moved_import, missing_import, name_literal, message_hint, removed_attribute,
                     dataframe_append, renamed_method, missing_accessor, none_from_inplace, thrown_away, not_callable,
                     method_not_called, drop_axis, concat_list, join_non_str, tuple_columns, series_truth,
                     int_not_iterable, did_you_mean, keyword_value_hint, reduction_level, join_axes, removed_method,
                     keyword_only_now, period_fields, resample_keyword, keyword_unspecified,
                     setitem_upcast, method_now_function, renamed_keyword, no_effect_keyword, moved_call,
                     scalar_as_2d, string_as_list, equivalent_value, changed_default, stack_sequence,
                     removed_setter, date_order],
                    MECHANICAL),
    **dict.fromkeys([column_repr, name_typo, column_as_attribute, attribute_typo, missing_return, unpack_loop,
                     accessor_dtype, key_typo, positional_key, bad_keyword, str_concat, reduction_on_text,
                     numeric_strings, to_numeric_coerce, number_parse, nan_to_int, merge_key_dtype, date_format,
                     pivot_duplicates, mask_precedence, mask_with_missing, apply_axis, format_text_number,
                     float_as_index,
                     index_off_by_one, loop_overshoot, style_name, groupby_axis, moved_function, shared_default,
                     epoch_unit, strict_bounds, reducer_by_name, concat_sorted,
                     power_of_ten, filter_value, merge_keys, groupby_keys, concat_dtype], GUESS),
    **GENERIC_KINDS,
}


def first_repair(code: str, receipt: Receipt):
    """(repair, repaired code) of the first repair that changes the code, or (None, None)."""
    repair, fixed, _ = propose(code, receipt)
    return repair, fixed


def _with_strings(code: str) -> str:
    """`code` and the values of its string literals: `'\\ufeffid'` written as an escape holds a BOM too."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    return (
        code
        + "\n"
        + "\n".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    )


def propose(code: str, receipt: Receipt, modules: Mapping[str, str] | None = None):
    """(repair, repaired code, '') of the first repair that changes the code; else (None, None, doubt),
    where `doubt` is what a repair that fits could not tell ('' when none fits). `receipt`: the typed
    receipt of the run, read from its fields (`ParsedReceipt.of`), never from its text.
    A cell with IPython syntax is repaired as Python, line for line (`ipysyntax.readable`): a magic or
    shell line stands as IPython's call, a `%timeit` statement or `%%time` body as itself.
    `modules`: the names the namespace binds to modules (`{"pd": "pandas"}`): a repair that writes `pd.`
    imports it only when the namespace lacks it."""
    return propose_parsed(code, ParsedReceipt.of(receipt, modules))


def propose_parsed(code: str, parsed: ParsedReceipt):
    """`propose` for a receipt already read into its parts (a module's error, read from batch mode's run)."""
    view = readable(code)
    if view is None:  # a `%%bash`-like cell: no Python to repair
        return None, None, ""
    doubt = ""
    for repair in REPAIRS:
        try:
            fixed = view.back(repair(view.python, parsed) or view.python)
        except CannotTell as exc:
            doubt = doubt or str(exc)
            fixed = None
        except Exception:  # noqa: BLE001 - one repair that cannot read this code must not stop the others
            fixed = None
        if fixed is not None and fixed.strip() != code.strip():
            hidden = invisible_added(_with_strings(code), _with_strings(fixed))
            if hidden:  # a name with a BOM or a zero-width space in it: the fix is in how the data is read
                doubt = doubt or (f"the fix would write an invisible character ({hidden}) into the code: the data's "
                                  "names hold it (a BOM: read the file with encoding='utf-8-sig'; "
                                  "else strip the names)")
                continue
            return repair, fixed, ""
    return None, None, doubt


def repair_module(source: str, error: str, lineno: int, line: str) -> tuple[str, str, str] | None:
    """(the repair's name, its kind, the repaired source) of a module of the notebook's own whose line
    `lineno` raised `error` ("ImportError: cannot import name ..."), read as a cell's receipt; None when no
    repair fits."""
    first = error.splitlines()[0] if error else ""
    ename, _, evalue = first.partition(": ")
    parsed = ParsedReceipt(headline=first, ename=ename, evalue=evalue, lineno=lineno, line=line.strip(),
                           text=f"{first}\n  at line {lineno} of the cell: {line.strip()}", message=evalue)
    repair, fixed, _ = propose_parsed(source, parsed)
    return (repair.__name__, KIND.get(repair, GUESS), fixed) if repair is not None else None

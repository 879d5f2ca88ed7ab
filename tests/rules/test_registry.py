"""The built-in engine's repairs declare themselves where they are defined (rules/registry.py): the order
they are tried in and their kinds are derived from those declarations, and are what they were when they
were three lists kept by hand in rules/repairs.py (written out here once, on 2026-11-29)."""

import pytest

from jupyter_fixloop.rules import registry, repairs
from jupyter_fixloop.rules.engine import repair_words

ORDER = [  # the hand-kept `REPAIRS` list of 2026-11-29 (module.function), the generic rewriters in its middle
    "calls.column_repr", "syntax.syntax", "syntax.indentation", "data.chained_assignment",
    "matches.filter_value", "matches.merge_keys", "matches.groupby_keys",
    "matches.concat_dtype",
    "names.forwarded",  # added since: a removed function called as its old version ran it (changed.FORWARDED)
    "names.moved_import", "names.missing_import", "patterns.name_literal", "names.name_typo",
    "names.file_case_twin",  # added since: a path spelled in other cases than the file here
    "names.message_hint", "drift.did_you_mean", "patterns.keyword_value_hint", "patterns.reduction_level",
    "patterns.join_axes", "patterns.bad_lines",  # added since: pandas 1.3's words, as data
    "patterns.search_iid", "patterns.search_iid_weighted", "patterns.linear_normalize",  # added since, as data
    "patterns.matrix_as_array",
    "said.keyword_only_now",  # drift.keyword_only_now, with said.said_keyword_only, said_positional_variables and
    # said_keyword_only_displaced merged in since: one rewriter naming arguments passed by position (and
    # patterns.seaborn_data_third, since changed.json has seaborn 0.9.1's signatures)
    "patterns.index_set_operator",
    "patterns.concat_moot_keys", "patterns.period_fields", "patterns.resample_keyword",
    "drift.groupby_axis", "patterns.keyword_unspecified",
    "said.keyword_gone",  # drift.renamed_keyword and no_effect_keyword, said.keyword_as_call merged since
    "patterns.scalar_as_2d", "drift.setitem_upcast", "patterns.removed_method", "drift.method_now_function",
    "said.old_value",  # drift.string_as_list and equivalent_value, said.said_value merged since
    # drift.moved_call was here: said.said_kept_elsewhere does it now
    "drift.changed_default",
    "drift.stack_sequence", "drift.style_name", "names.removed_attribute",
    "told.removed_import", "told.message_try", "told.extension_array_argument",
    "told.message_use", "patterns.positional_loc_slice",  # added since: the error's own words
    "drift.removed_setter",
    "patterns.dataframe_append", "names.renamed_method", "generic.ix_indexer", "generic.said_method",
    "generic.said_keyword_method", "generic.said_keywords_paired",  # added since (generic.said_keyword, merged
    # into said.keyword_gone since)
    "generic.keywords_into_dtype",
    "exported.exported_name", "exported.library_name",  # generic rewriters added since, each module at its turn
    "said.said_kept_elsewhere", "said.rows_by_string", "said.unordered_slice",
    "said.moved_module",  # said.said_operator was first: said_method writes the operator since
    "said.said_package",
    "said.keyword_only_guess", "said.said_mask",  # said.method_by_value: generic.said_method since
    "said.said_class_method",  # added since: a removed function as the class method its words name
    "patterns.whole_column_set", "patterns.missing_labels", "said.said_none",
    "patterns.missing_accessor", "drift.moved_function", "drift.option_key",
    "names.column_as_attribute", "names.attribute_typo", "calls.none_from_inplace", "calls.thrown_away",
    "calls.missing_return", "calls.unpack_loop", "patterns.not_callable", "calls.method_not_called",
    "data.accessor_dtype", "names.key_typo", "patterns.drop_axis", "patterns.positional_key", "data.position_below",
    "calls.bad_keyword",
    "patterns.concat_list", "calls.str_concat", "patterns.join_non_str", "data.reduction_on_text",
    "data.numeric_strings", "patterns.to_numeric_coerce", "data.number_parse", "patterns.nan_to_int",
    "data.merge_key_dtype", "data.date_order",
    "data.date_format", "data.pivot_duplicates", "patterns.tuple_columns", "patterns.series_truth",
    "patterns.mask_precedence",
    "patterns.mask_with_missing", "patterns.apply_axis", "data.format_text_number", "calls.float_as_index",
    "calls.index_off_by_one", "calls.int_not_iterable", "calls.loop_overshoot", "traced.shared_default",
    "traced.epoch_unit", "traced.strict_bounds", "traced.power_of_ten", "drift.reducer_by_name",
    "patterns.concat_sorted",
]  # missing_accessor, positional_key, series_truth, mask_precedence, concat_sorted: patterns.json's (issue 55)
GUESSES = {  # the hand-kept `KIND` of that day: these are guesses, the others mechanical
    "patterns.search_iid_weighted", "patterns.linear_normalize",  # added since: guesses by their words
    "calls.column_repr", "matches.filter_value", "matches.merge_keys", "matches.groupby_keys",
    "matches.concat_dtype", "names.name_typo", "drift.groupby_axis", "drift.style_name", "drift.moved_function",
    "names.column_as_attribute", "names.attribute_typo", "calls.missing_return", "calls.unpack_loop",
    "data.accessor_dtype", "names.key_typo", "patterns.positional_key", "data.position_below", "calls.bad_keyword",
    "calls.str_concat",
    "data.reduction_on_text", "data.numeric_strings", "patterns.to_numeric_coerce", "data.number_parse",
    "patterns.nan_to_int", "data.merge_key_dtype", "data.date_format", "data.pivot_duplicates",
    "patterns.mask_precedence",
    "patterns.mask_with_missing", "patterns.apply_axis", "data.format_text_number", "calls.float_as_index",
    "calls.index_off_by_one", "calls.loop_overshoot", "traced.shared_default", "traced.epoch_unit",
    "traced.strict_bounds", "traced.power_of_ten", "drift.reducer_by_name", "patterns.concat_sorted",
    "exported.library_name",  # added since: a name used bare may be the notebook's own
    "drift.option_key",  # added since: the `display.` key of the several a bare option name matches
    "said.keyword_only_guess",  # added since: today's order of keywords, where the library removed one too
}


def _name(function) -> str:
    return f"{function.__module__.rpartition('.')[2]}.{function.__name__}"


def test_the_derived_order_is_the_order_the_hand_kept_list_had():
    assert [_name(f) for f in repairs.REPAIRS] == ORDER


def test_the_derived_kinds_are_the_kinds_the_hand_kept_lists_had():
    assert {_name(f) for f, kind in repairs.KIND.items() if kind == repairs.GUESS} == GUESSES
    assert {_name(f) for f, kind in repairs.KIND.items() if kind == repairs.MECHANICAL} == set(ORDER) - GUESSES
    assert set(repairs.KIND) == set(repairs.REPAIRS)


def test_a_repair_says_its_docstrings_first_sentence_whole():
    said = {_name(f): repair_words(f) for f in repairs.REPAIRS}
    assert said["names.missing_import"] == ("Add the missing import of a well-known alias (`np`, `pd`, `re`, `Path`, "
                                            "`Counter`, ...).")
    assert said["data.date_order"] == ("Dates read as the data writes them: day first as pandas inferred (a first "
                                       "field over 12), ISO as ISO.")
    assert all(words and "\n" not in words for words in said.values())


def test_a_repair_may_say_other_words_than_its_docstring(monkeypatch):
    monkeypatch.setattr(registry, "DECLARED", {})

    @registry.repair(registry.GUESS, registry.DATA, words="Read the dates day first.")
    def dates(code, receipt):
        """Dates; day first."""

    @registry.repair(registry.MECHANICAL, registry.FIRST)
    def commas(code, receipt):
        """Commas, where the error says; nothing else."""

    assert registry.in_order() == [commas, dates]
    said = [registry.DECLARED[f].words for f in (dates, commas)]
    assert said == ["Read the dates day first.", "Commas, where the error says"]


def test_two_repairs_of_one_turn_from_two_modules_are_refused(monkeypatch):
    monkeypatch.setattr(registry, "DECLARED", dict(registry.DECLARED))

    @registry.repair(registry.GUESS, registry.OUTPUTS + 10)  # traced.shared_default's turn
    def clash(code, receipt):
        """Clash."""

    with pytest.raises(ValueError, match="share turn 6010"):
        registry.in_order()


def test_a_kind_other_than_mechanical_or_guess_is_refused():
    with pytest.raises(ValueError, match="'mechanical' or 'guess'"):
        registry.repair("sure", registry.DATA)

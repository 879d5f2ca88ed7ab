"""Built-in repairs for data-cleaning crashes: numbers stored as text, merges, dates, text columns.

Each reads the error message (which quotes the offending value) and the failing line, and makes the
edit a person would: strip separators before converting, coerce placeholders to NaN, cast a merge
key, parse day-first dates, keep text columns out of a numeric reduction.
"""

from __future__ import annotations

import ast
import re

from .edits import (
    CannotTell,
    ParsedReceipt,
    add_keyword,
    as_text,
    call_name,
    calls_on_line,
    column_dtypes,
    has_keyword,
    insert_before,
    on_line,
    parse,
    replace_node,
    replace_nodes,
    shown_values,
    source_of,
    span,
    spliced,
    tree_of,
    value_kind,
    with_pandas,
)
from .generic import entries
from .registry import DATA, FIRST, GUESS, MECHANICAL, repair
from .tables import (
    AGGREGATION_WORDS,
    COMMA_NUMBER,
    DATE_MISMATCH,
    DATE_TEXT,
    DATES_FACT,
    DECIMAL_COMMA,
    MERGE_DTYPES,
    NUMBER,
    REDUCTIONS,
    SEPARATORS,
    TEXT_ARITHMETIC,
    TEXT_MINUS_TEXT,
    TEXT_REDUCTION,
)


def _key(node: ast.AST) -> str:
    """`df["a"]` as the receipt writes it: `df['a']`."""
    return ast.unparse(node).replace('"', "'")


def _is_column(node: ast.AST) -> bool:
    """`df["col"]` (a name subscripted by a string)."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute))
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str))


def _textual(node: ast.AST, receipt: ParsedReceipt) -> bool:
    """An operand that may hold numbers as text: a column (of text, when the receipt says its dtype),
    a str, or a Series of text."""
    if _is_column(node):
        known = column_dtypes(receipt).get(_key(node))
        return known is None or _is_text(known[0])
    if isinstance(node, ast.Name):
        kind = value_kind(receipt, node.id)
        text = receipt.values.get(node.id, "")
        return kind == "str" or (kind == "Series" and re.search(r"dtype=(object|str|string)", text) is not None)
    return False


@repair(GUESS, DATA + 45)
def position_below(code: str, receipt: ParsedReceipt) -> str | None:
    """`coef[0]` inside a function this cell defines, which a later cell's call raised `KeyError: 0` through (the
    cause loop, batch/upstream.py): pandas 3 "Changed behavior of :meth:`Series.__getitem__` [...] to always treat
    integer keys as labels, never as positional" (2.1 said use ``ser.iloc``) -> `coef.iloc[0]`, each integer key of
    the one name the cell's functions read with the key the error names."""
    ename, key = receipt.below
    tree = parse(code)
    if receipt.ename or ename != "KeyError" or not re.fullmatch(r"-?\d+", key.strip()) or tree is None:
        return None
    if not any("never as positional" in c.words for c in entries("__getitem__", library="pandas")):
        return None
    read = [n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.Lambda)) for n in ast.walk(f)
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Load)
            and isinstance(n.slice, ast.Constant) and type(n.slice.value) is int]
    names = {n.value.id for n in read if n.slice.value == int(key)}
    found = {n for n in read if n.value.id in names} if len(names) == 1 else ()
    return replace_nodes(code, found, lambda n: f"{n.value.id}.iloc[{n.slice.value}]")


@repair(GUESS, DATA + 90)
def reduction_on_text(code: str, receipt: ParsedReceipt) -> str | None:
    """A mean/sum/corr over text columns: convert a single column with pd.to_numeric, else pass numeric_only=True.

    Also where the cell ran and a later cell raised it, inside a function this cell defines (the cause loop,
    batch/upstream.py): then on the cell's one call of the reduction the error names."""
    tree = tree_of(code)
    ename, evalue, lineno = receipt.ename, receipt.evalue, receipt.lineno
    if not ename:
        (ename, evalue), lineno = receipt.below, None
    # pandas 3's own words, or pyarrow's where pandas hands a text column to it (`quantile`): "Function
    # 'quantile' has no kernel matching input types (large_string)", an ArrowNotImplementedError
    m = TEXT_REDUCTION.search(evalue) if ename in ("TypeError", "ArrowNotImplementedError") else None
    if m:
        op = next((g for g in m.groups() if g), None)
    elif ename == "ValueError" and "could not convert string to float" in evalue and lineno is not None:
        names = {c.func.attr if isinstance(c.func, ast.Attribute) else "" for c in calls_on_line(tree, lineno)}
        if names & {"astype", "to_numeric"} or names.isdisjoint(REDUCTIONS):
            return None  # a conversion failed, not a reduction: number_parse's case
        op = None  # df.corr() in pandas 3 says only which text it met
    else:
        return None
    calls = calls_on_line(tree, lineno, op) if lineno is None else calls_on_line(tree, lineno)
    for call in calls if lineno is not None or len(calls) == 1 else []:
        name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        fixed = _whole_call(code, call, name, op)
        if fixed:
            return fixed
        if name != op and not (op is None and name in REDUCTIONS):
            continue
        receiver = call.func.value
        if isinstance(receiver, ast.Name) and receiver.id in ("np", "numpy") and call.args:
            receiver = call.args[0]  # np.mean(df["x"])
            if not _is_column(receiver):
                continue
        if _is_column(receiver):
            return with_pandas(code, replace_node(code, receiver, f"pd.to_numeric({source_of(code, receiver)})"),
                               receipt)
        if not has_keyword(call, "numeric_only"):
            return add_keyword(code, call, "numeric_only=True")
    return None


def _whole_call(code: str, call: ast.Call, name: str, op: str | None) -> str | None:
    """A call that is not the reduction itself but runs the one the error names over every column: a
    `pivot_table` or an `agg`."""
    if name == "pivot_table" and op:
        return _pivot_numeric(code, call)
    return _agg_numeric(code, call, op) if name in ("agg", "aggregate") and op else None


def _agg_numeric(code: str, call: ast.Call, op: str) -> str | None:
    """`grouped.agg(np.mean)`, the one function the error names (pandas calls its own `mean` for NumPy's, and
    said so from 2.1: "To keep current behavior pass the string "mean" instead"), given as that string with
    numeric_only=True: the columns pandas before 2.0 dropped as nuisance columns, left out as its 2.0 notes say
    ("specify ``numeric_only=True``"). A list, a dict, a lambda or other keywords: left."""
    if len(call.args) != 1 or call.keywords:
        return None
    arg = call.args[0]
    numpy = (isinstance(arg, ast.Attribute) and arg.attr == op and isinstance(arg.value, ast.Name)
             and arg.value.id in ("np", "numpy"))
    if not (numpy or (isinstance(arg, ast.Constant) and arg.value == op)):
        return None
    return replace_node(code, call, f"{source_of(code, call.func)}({op!r}, numeric_only=True)")


def _pivot_numeric(code: str, call: ast.Call) -> str | None:
    """`pivot_table` with no `values` aggregated every other column, and pandas before 2.0 dropped those its
    function could not take (its "nuisance" columns; numeric_only is False since 2.0, and pivot_table has no such
    keyword): the numeric and boolean columns that are not its `index` or `columns`, named as `values`."""
    function = isinstance(call.func.value, ast.Name) and call.func.value.id in ("pd", "pandas")  # pd.pivot_table(df)
    data = (call.args[0] if call.args else None) if function else call.func.value
    if data is None or has_keyword(call, "values") or len(call.args) > (1 if function else 0):
        return None
    keys = []
    for kw in call.keywords:
        if kw.arg in ("index", "columns"):
            items = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
            if not all(isinstance(i, ast.Constant) for i in items):
                return None
            keys += [i.value for i in items]
    if not keys:
        return None
    frame = source_of(code, data)
    return add_keyword(code, call, f'values=[c for c in {frame}.select_dtypes(["number", "bool"]).columns '
                                   f'if c not in {keys!r}]')


@repair(GUESS, DATA + 100)
def numeric_strings(code: str, receipt: ParsedReceipt) -> str | None:
    """Arithmetic on numbers stored as text: wrap the text operand in pd.to_numeric (or float for a str)."""
    if receipt.ename != "TypeError" or not TEXT_ARITHMETIC.search(receipt.evalue):
        return None
    tree = tree_of(code)
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.AugAssign, ast.Compare)) and on_line(node, receipt.lineno):
            sides = _operands(node)
            targets += [s for s in sides if _textual(s, receipt)]
        if isinstance(node, ast.Call) and on_line(node, receipt.lineno) and getattr(node.func, "id", "") == "sum":
            targets += [a for a in node.args[:1] if _is_column(a)]  # sum(df["x"])
    if not targets:
        return None
    # text minus text is usually dates written as text, when the error or its context shows dates
    dates = TEXT_MINUS_TEXT.search(receipt.evalue) is not None and any(map(DATE_TEXT.search, shown_values(receipt)))
    seen, fixed = set(), code
    for node in sorted(targets, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        key = (node.lineno, node.col_offset)
        if key in seen or isinstance(node.ctx, ast.Store):
            continue
        seen.add(key)
        text = source_of(fixed, node)
        wrapper = "float" if isinstance(node, ast.Name) and value_kind(receipt, node.id) == "str" else "pd.to_numeric"
        examples = column_dtypes(receipt).get(_key(node), ("", ""))[1] if _is_column(node) else ""
        if (dates and not examples) or DATE_TEXT.search(examples):
            wrapper = "pd.to_datetime"
        fixed = replace_node(fixed, node, f"{wrapper}({text})")
    return with_pandas(code, fixed, receipt) if fixed != code else None


def _operands(node) -> tuple:
    if isinstance(node, ast.BinOp):
        return node.left, node.right
    if isinstance(node, ast.AugAssign):
        return node.target, node.value
    return (node.left, *node.comparators)


def _separators(value: str) -> str | None:
    """The decoration to strip so `value` reads as a number ('1,200' -> ','), or None."""
    extra = "".join(sorted(set(value) - set("0123456789.-+eE")))
    if not extra or not set(extra) <= set(SEPARATORS):
        return None
    return extra if NUMBER.match(value.translate({ord(ch): None for ch in extra})) else None


BAD_VALUE = re.compile(r"could not convert string to float: '(?P<float>.*)'|invalid literal for int\(\) with base 10: "
                       r"'(?P<int>.*)'|Unable to parse string \"?'?(?P<numeric>.*?)\"?'? at position")


def _bad_value(receipt: ParsedReceipt) -> tuple[str, str] | None:
    """(kind, value) of a failed text-to-number conversion quoted by the message."""
    m = BAD_VALUE.search(receipt.evalue)
    return next((kind, value) for kind, value in m.groupdict().items() if value is not None) if m else None


@repair(GUESS, DATA + 120, errors=("ValueError",))
def number_parse(code: str, receipt: ParsedReceipt) -> str | None:
    """Text that is a number in disguise: strip separators ('1,200'), go through float ('27.0' for int)."""
    found = _bad_value(receipt)
    tree = parse(code)
    if not found or tree is None:
        return None
    kind, value = found
    strip = _separators(value.strip())
    if strip and "," in strip and _decimal_comma(value.strip(), receipt):  # '4,99' -> '4.99', not a separator
        decimal = "{}.str.replace(',', '.', regex=False)"
        return _converted(code, tree, receipt, {"astype": decimal, "to_numeric": decimal,
                                                "float": "{}.replace(',', '.')"})
    if strip:
        pattern = "[" + re.escape(strip).replace("'", "\\'") + "]"
        stripped, each = f"{{}}.str.replace(r'{pattern}', '', regex=True)", "{}" + "".join(
            f".replace({c!r}, '')" for c in strip)
        return _converted(code, tree, receipt, {"astype": stripped, "to_numeric": stripped, "float": each, "int": each})
    if kind == "int" and NUMBER.match(value.strip()):
        return _converted(code, tree, receipt, {"int": "float({})", "astype": "{}.astype(float)"})
    if kind in ("float", "int") and not re.search(r"\d", value):
        return _coerce_placeholders(code, tree, receipt)
    return None


def _converted(code: str, tree, receipt: ParsedReceipt, ways: dict[str, str]) -> str | None:
    """The text that the first conversion on the failing line that `ways` names converts (`s` of `s.astype(int)`,
    `pd.to_numeric(s)`, `float(s)`), written as `ways` says for that conversion (`{}`: the text)."""
    for call in calls_on_line(tree, receipt.lineno):
        name = call_name(call)
        if name == "astype" and isinstance(call.func, ast.Attribute):
            node = call.func.value
        elif name == "to_numeric" and call.args or isinstance(call.func, ast.Name) and len(call.args) == 1:
            node = call.args[0]
        else:
            continue
        if name in ways:
            return replace_node(code, node, ways[name].format(source_of(code, node)))
    return None


def _decimal_comma(value: str, receipt: ParsedReceipt) -> bool:
    """Whether the comma of `value` is a decimal comma ('4,99'), not a thousands separator ('1,200'):
    a comma followed by exactly 1 or 2 digits in every such number the error and its context show. When
    the numbers disagree ('4,99' beside '1,200') it cannot tell, and says so."""
    shown = [v for said in shown_values(receipt) for v in COMMA_NUMBER.findall(said) if "," in v] or [value]
    decimal = [bool(DECIMAL_COMMA.match(v)) for v in (*shown, value)]
    if all(decimal):
        return True
    if any(decimal):
        raise CannotTell(f"the numbers hold a comma read two ways ({', '.join(sorted(set(shown))[:4])}): a decimal "
                         "comma or a thousands separator? Say which (a hint), or pass "
                         "decimal=','/thousands=',' when reading")
    return False


def _coerce_placeholders(code: str, tree, receipt: ParsedReceipt) -> str | None:
    for call in calls_on_line(tree, receipt.lineno, "astype"):
        if isinstance(call.func, ast.Attribute) and len(call.args) == 1:
            series = source_of(code, call.func.value)
            return with_pandas(code, replace_node(code, call, f"pd.to_numeric({series}, errors='coerce')"), receipt)
    return None


@repair(GUESS, DATA + 140)
def merge_key_dtype(code: str, receipt: ParsedReceipt) -> str | None:
    """Merge keys of different dtypes (int vs text): cast the text side's key before merging."""
    m = MERGE_DTYPES.search(receipt.evalue) if receipt.ename == "ValueError" else None
    tree = parse(code)
    if not m or tree is None or receipt.lineno is None:
        return None
    left_dtype, right_dtype, key = m.groups()
    for call in calls_on_line(tree, receipt.lineno, "merge"):
        frames = _merge_frames(call)
        if frames is None:
            continue
        left, right = frames
        textual = (
            [(left, right_dtype)] if _is_text(left_dtype) else [(right, left_dtype)] if _is_text(right_dtype) else []
        )
        for frame, dtype in textual:
            if not isinstance(frame, ast.Name):
                continue
            col = f"{frame.id}[{key!r}]"
            cast = f"pd.to_numeric({col})" if dtype.startswith(("int", "float", "uint")) else f"{col}.astype({dtype!r})"
            return with_pandas(code, insert_before(code, _statement_line(tree, call), f"{col} = {cast}"), receipt)
    return None


def _is_text(dtype: str) -> bool:
    return dtype in ("object", "str", "string") or dtype.startswith("string")


def _merge_frames(call: ast.Call):
    if isinstance(call.func, ast.Attribute) and call.args:
        if isinstance(call.func.value, ast.Name) and call.func.value.id in ("pd", "pandas"):
            return (call.args[0], call.args[1]) if len(call.args) > 1 else None
        return call.func.value, call.args[0]
    return None


def _statement_line(tree, node) -> int:
    """The first line of the statement that holds `node` (where a new statement can go)."""
    return max((s.lineno for s in ast.walk(tree) if isinstance(s, ast.stmt)
                and s.lineno <= node.lineno <= (s.end_lineno or s.lineno)  # the innermost that holds it, not a block
                and (not isinstance(s, (ast.For, ast.While, ast.If, ast.With, ast.FunctionDef, ast.Try))
                     or s.lineno == node.lineno)), default=node.lineno)


@repair(MECHANICAL, DATA + 150)
def date_order(code: str, receipt: ParsedReceipt) -> str | None:
    """Dates read as the data writes them: day first as pandas inferred (a first field over 12), ISO as ISO.

    The `dates:` fact (kernel/facts.py) counts the column's ways: day first when some first field exceeds
    12 and no second field does (or pandas inferred %d first and warned); a column that holds both, or
    none over 12, is left to `date_format` (a guess). ISO dates beside them are read by their own format,
    the others rewritten as ISO first: `format='mixed', dayfirst=True` would swap the ISO dates' month
    and day too."""
    m = DATE_MISMATCH.search(receipt.evalue) if receipt.ename == "ValueError" else None
    fact = next((f for f in map(DATES_FACT.match, receipt.context) if f), None)
    tree = parse(code)
    if not m or fact is None or tree is None or len(fact["sep"]) != 1:
        return None
    first, second, iso = int(fact["first"]), int(fact["second"]), int(fact["iso"])
    if (first or m.group(2).startswith("%d")) and not second:
        order = r"\3-\2-\1"  # day first: what pandas inferred from a first field over 12, and warned of
    elif second and not first:
        order = r"\3-\1-\2"
    else:  # both ways in the data, or no field over 12: which way is a guess (date_format's)
        return None
    sep = re.escape(fact["sep"])
    for call in calls_on_line(tree, receipt.lineno, "to_datetime"):
        if not call.args or has_keyword(call, "format") or has_keyword(call, "dayfirst"):
            continue
        if not iso:  # one way of writing: pandas reads it given the order
            day, month = ("%d", "%m") if order.endswith("1") else ("%m", "%d")
            return add_keyword(code, call, f"format='{day}{fact['sep']}{month}{fact['sep']}%Y'")
        arg = ast.get_source_segment(code, call.args[0]) or ""
        rewritten = f"{arg}.str.replace(r'^(\\d{{1,2}}){sep}(\\d{{1,2}}){sep}(\\d{{4}})$', r'{order}', regex=True)"
        return replace_node(add_keyword(code, call, "format='ISO8601'"), call.args[0], rewritten)
    return None


@repair(GUESS, DATA + 160)
def date_format(code: str, receipt: ParsedReceipt) -> str | None:
    """Dates that do not parse: day-first ones (31/01/2024) get dayfirst=True, mixed ones format='mixed'.

    Also where the cell ran and a later cell raised it, inside a function this cell defines (the cause loop,
    batch/upstream.py): then on the cell's one `to_datetime` call given no format."""
    ename, evalue, lineno = receipt.ename, receipt.evalue, receipt.lineno
    if not ename:
        (ename, evalue), lineno = receipt.below, None
    m = DATE_MISMATCH.search(evalue) if ename == "ValueError" else None
    tree = parse(code)
    if not m or tree is None:
        return None
    value, fmt = m.groups()
    parts = re.split(r"[/.\-]", value.strip())
    dayfirst = len(parts) >= 3 and parts[0].isdigit() and int(parts[0]) > 12 and fmt.startswith("%m")
    calls = calls_on_line(tree, lineno, "to_datetime")
    if lineno is None:  # raised below: the cell's one call given no format, or none (which one, nothing says)
        calls = [c for c in calls if not has_keyword(c, "format")]
        calls = calls if len(calls) == 1 else []
    for call in calls:
        given = next((k for k in call.keywords if k.arg == "format"), None)
        position = re.search(r"at position (\d+)", evalue)
        if given is not None and (position and int(position.group(1)) > 0 or len(_sample_formats(receipt)) > 1):
            # the column mixes formats (the one given read the rows before, or the samples differ):
            # swapping one format for another would fail on the other rows next
            return replace_node(code, given.value, "'mixed'")
        if given is not None:  # the format given is not the data's: read it off the value
            return replace_node(code, given.value, repr(infer_format(value) or "mixed"))
        if dayfirst and not has_keyword(call, "dayfirst"):
            return add_keyword(code, call, "dayfirst=True")
        if not dayfirst:
            return add_keyword(code, call, "format='mixed'")
    return None


def _sample_formats(receipt: ParsedReceipt) -> set[str]:
    """The formats of the sample dates the receipt's `dtypes:` fact shows (`(e.g. '2024-02-05', '03/02/2024')`)."""
    return {fmt for fact in receipt.context if fact.startswith("dtypes: ")
            for fmt in map(infer_format, re.findall(r"'(\d[\d/.\-]+\d)'", fact)) if fmt}


def infer_format(value: str) -> str | None:
    """A strptime format for a plain numeric date (`2024/01/05`, `31.01.2024`), or None."""
    m = re.fullmatch(r"(\d{1,4})([/.\-])(\d{1,2})\2(\d{1,4})", value.strip())
    if not m:
        return None
    first, sep, middle, last = m.groups()
    if len(first) == 4:
        return f"%Y{sep}%m{sep}%d"
    if len(last) != 4:
        return None
    # a field over 12 is the day; else ambiguous: 01/02 is usually American, 01.02 and 01-02 European
    day_first = int(first) > 12 or int(middle) <= 12 and sep != "/"
    return f"%d{sep}%m{sep}%Y" if day_first else f"%m{sep}%d{sep}%Y"


@repair(GUESS, DATA + 10)
def accessor_dtype(code: str, receipt: ParsedReceipt) -> str | None:
    """`.dt` on text dates, `.str` on numbers: convert the column first (pd.to_datetime / astype(str))."""
    m = re.search(r"Can only use \.(dt|str) accessor with", receipt.evalue) if (
        receipt.ename == "AttributeError") else None
    tree = parse(code)
    if not m or tree is None:
        return None
    accessor = m.group(1)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == accessor and on_line(node, receipt.lineno):
            inner = source_of(code, node.value)
            new = f"pd.to_datetime({inner})" if accessor == "dt" else as_text(inner, receipt, _key(node.value))
            return with_pandas(code, replace_node(code, node.value, new), receipt)
    return None


@repair(GUESS, DATA + 170)
def pivot_duplicates(code: str, receipt: ParsedReceipt) -> str | None:
    """`pivot` cannot put two values in one cell: `pivot_table` aggregates them."""
    if receipt.ename != "ValueError" or "duplicate entries, cannot reshape" not in receipt.evalue:
        return None
    tree = parse(code)
    for call in calls_on_line(tree, receipt.lineno, "pivot") if tree else []:
        if isinstance(call.func, ast.Attribute):
            how = _aggregation_said(code)
            if how is None:
                raise CannotTell("pivot found several values for one cell: sum them or average them? pivot_table "
                                 "takes the mean unless told (aggfunc='sum'); the cell does not say which")
            fixed = replace_node(code, call.func, f"{source_of(code, call.func.value)}.pivot_table")
            return add_keyword(fixed, calls_on_line(parse(fixed), receipt.lineno, "pivot_table")[0], f"aggfunc={how!r}")
    return None


def _aggregation_said(code: str) -> str | None:
    """The aggregation a cell names in its own words (`totals = ...` -> "sum"), or None when it names none
    or several."""
    said = {how for how, words in AGGREGATION_WORDS.items() if re.search(rf"(?i)(?:\b|_)(?:{words})", code)}
    return said.pop() if len(said) == 1 else None


@repair(GUESS, DATA + 230)
def format_text_number(code: str, receipt: ParsedReceipt) -> str | None:
    """A number format (`:.2f`) applied to text: convert the value with float() first."""
    if receipt.ename != "ValueError" or not re.search(r"Unknown format code '\w' for object of type 'str'",
                                                      receipt.evalue):
        return None
    tree = parse(code)
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None and on_line(node, receipt.lineno):
            return replace_node(code, node.value, f"float({source_of(code, node.value)})")
    for call in calls_on_line(tree, receipt.lineno, "format") if tree else []:
        if call.args:
            start, end = span(code, call.args[0])[0], span(code, call.args[-1])[1]
            wrapped = ", ".join(f"float({source_of(code, a)})" for a in call.args)
            return code[:start] + wrapped + code[end:]
    return None


@repair(MECHANICAL, FIRST + 40)
def chained_assignment(code: str, receipt: ParsedReceipt) -> str | None:
    """`df['b'][mask] = v` sets a copy (pandas says so: ChainedAssignmentError): one step on the frame,
    `df.loc[mask, 'b'] = v`; `df['b'].fillna(0, inplace=True)` changes a copy: `df['b'] = df['b'].fillna(0)`
    (pandas' own advice). Only where pandas said so: its warning, in the run or as a smell a check failed on."""
    if "lost_assignment" not in (*receipt.smelled, *receipt.warned):
        return None
    tree = parse(code)
    found = []
    for node in ast.walk(tree) if tree else []:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AugAssign) else []
        for target in targets:
            one_step = _one_step(code, target)
            if one_step is not None:
                found.append((span(code, target), one_step))
        assigned = _inplace_on_column(code, node)
        if assigned is not None:
            found.append((span(code, node), assigned))
    return spliced(code, found)


def _inplace_on_column(code: str, node: ast.AST) -> str | None:
    """`column = column.method(...)` for a statement `frame['b'].method(..., inplace=True)`; else None."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and has_keyword(call, "inplace")):
        return None
    column = call.func.value
    if not (isinstance(column, ast.Subscript) and isinstance(column.value, ast.Name) and _is_label(column.slice)
            and not isinstance(column.slice, ast.List)):
        return None
    inplace = next(k for k in call.keywords if k.arg == "inplace")
    if not (isinstance(inplace.value, ast.Constant) and inplace.value.value is True):
        return None
    args = [source_of(code, a) for a in call.args] + [source_of(code, k) for k in call.keywords if k is not inplace]
    target = source_of(code, column)
    return f"{target} = {target}.{call.func.attr}({', '.join(args)})"


def _one_step(code: str, target: ast.AST) -> str | None:
    """`frame.loc[rows, column]` for a chained assignment target: `frame[column][rows]`, `frame.column[rows]`,
    `frame[mask][column]` or `frame.loc[rows][column]`; None for any other target. Rows given as a slice are left alone
    (`s[1:3]` counts positions, `.loc[1:3]` labels)."""
    if not isinstance(target, ast.Subscript) or not isinstance(target.value, (ast.Subscript, ast.Attribute)):
        return None
    inner = target.value
    if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Attribute) and inner.value.attr == "loc":
        frame, rows, column = inner.value.value, inner.slice, target.slice  # frame.loc[rows][column]
        column_text = source_of(code, column) if _is_label(column) else None
    elif isinstance(inner, ast.Subscript) and _is_label(inner.slice):
        frame, rows, column_text = inner.value, target.slice, source_of(code, inner.slice)  # frame[column][rows]
    elif isinstance(inner, ast.Subscript) and isinstance(inner.slice, (ast.Compare, ast.BoolOp, ast.BinOp,
                                                                       ast.UnaryOp, ast.Call)):
        frame, rows, column = inner.value, inner.slice, target.slice  # frame[mask][column]
        column_text = source_of(code, column) if _is_label(column) else None
    elif isinstance(inner, ast.Attribute) and inner.attr not in ("loc", "iloc", "at", "iat", "str", "dt", "cat",
                                                                   "values", "index", "columns"):
        frame, rows, column_text = inner.value, target.slice, repr(inner.attr)  # frame.column[rows]
    else:
        return None
    if column_text is None or not isinstance(frame, ast.Name) or isinstance(rows, (ast.Slice, ast.Tuple)):
        return None
    return f"{frame.id}.loc[{source_of(code, rows)}, {column_text}]"


def _is_label(node: ast.AST) -> bool:
    """A column label: a text or number literal, or a list of them."""
    items = node.elts if isinstance(node, ast.List) else [node]
    return bool(items) and all(isinstance(n, ast.Constant) and isinstance(n.value, (str, int)) for n in items)

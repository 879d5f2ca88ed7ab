"""What a selection the instruction states holds of the value the code shows: the read checks' own tests.

loop/derived.py reads from an instruction the properties of the rows it asks for ("the rows where the age is
missing", "where the number of visits is greater than 3", "sorted by age, descending", "the unique values of
city") and writes each as a check that calls one function here with the value the code showed (`SHOWN`: the value
of its last expression, or the one value its last line printed or displayed, as the runner keeps it) and the user's
frame. Each reads values, never text, and never raises (a check that raises would be said as the cell's error):
anything it cannot read is a property that does not hold. Not evidence of a right answer: the loop strips these
checks from what verifies a result. Imported in the sandbox kernel and in its judge: stdlib only at import.
"""

from __future__ import annotations

import string

SHOWN = "_fixloop_shown"  # the runner's name for the value a cell's last line showed, printed or displayed


def _pandas():
    import pandas
    return pandas


def _rows(shown, frame):
    """The frame the code handed over: the frame it showed, else the user's frame (a selection assigned back)."""
    pd = _pandas()
    if isinstance(shown, (pd.DataFrame, pd.Series)):
        return shown
    return frame if isinstance(frame, pd.DataFrame) else None


def _column(rows, frame, column):
    """The values of `column` in the rows handed over: their own column, else the user's frame read at their
    labels (rows shown without that column); None when neither can be read."""
    pd = _pandas()
    if isinstance(rows, pd.DataFrame) and column in rows.columns:
        values = rows[column]
        return values if isinstance(values, pd.Series) else None
    if isinstance(rows, pd.Series) and rows.name == column:
        return rows
    if (isinstance(frame, pd.DataFrame) and column in frame.columns and frame.index.is_unique
            and rows.index.isin(frame.index).all()):
        values = frame.loc[rows.index, column]
        return values if isinstance(values, pd.Series) else None
    return None


def holds(values, op: str, operand):
    """Which of `values` meet (op, operand): a boolean Series."""
    pd = _pandas()
    if op == "missing":
        return values.isna()
    if op == "present":
        return values.notna()
    if op == "between":
        low, high = operand
        return pd.to_numeric(values, errors="coerce").between(low, high)
    if op in ("==", "!="):
        same = values.astype(object).map(lambda v: v == operand or (isinstance(v, str) and isinstance(operand, str)
                                                                    and v.lower() == operand.lower()))
        return same.astype(bool) if op == "==" else ~same.astype(bool)
    if op.startswith("year"):  # the year of a date: a date column, or text read as dates
        dates = values if values.dtype.kind == "M" else pd.to_datetime(values, errors="coerce")
        years, op = dates.dt.year, op[4:]
        return {"==": years == operand, ">=": years >= operand, "<=": years <= operand, "<": years < operand,
                ">": years > operand}[op]
    numbers = pd.to_numeric(values, errors="coerce")
    return {">": numbers > operand, ">=": numbers >= operand, "<": numbers < operand, "<=": numbers <= operand}[op]


def rows_hold(shown, frame, conditions, some: bool = False) -> bool:
    """Every row the code handed over meets every condition, (column, op, operand), and there is one at least
    where `some` (the user's frame has rows that meet them all)."""
    try:
        rows = _rows(shown, frame)
        if rows is None:
            return False
        for column, op, operand in conditions:
            values = _column(rows, frame, column)
            if values is None or not bool(holds(values, op, operand).all()):
                return False
        return bool(len(rows)) or not some
    except Exception:
        return False


def columns_shown(shown, frame, names) -> bool:
    """The frame the code handed over holds the columns `names` and no other (a Series: the one named)."""
    try:
        rows = _rows(shown, frame)
        pd = _pandas()
        if isinstance(rows, pd.Series):
            return list(names) == [rows.name]
        return isinstance(rows, pd.DataFrame) and sorted(map(str, rows.columns)) == sorted(map(str, names)) and \
            len(rows.columns) == len(names)
    except Exception:
        return False


def sorted_by(shown, frame, keys, ascending) -> bool:
    """The frame the code handed over is in the order of `keys` (each ascending or not), ties in any order."""
    try:
        rows = _rows(shown, frame)
        pd = _pandas()
        if not isinstance(rows, pd.DataFrame) or not all(k in rows.columns for k in keys) or not len(rows):
            return False
        table = rows[list(keys)].reset_index(drop=True)
        order = table.sort_values(list(keys), ascending=list(ascending), kind="mergesort").index
        again = table.loc[order].reset_index(drop=True)
        return bool(again.equals(table))
    except Exception:
        return False


def ends(shown, frame, n: int, last: bool) -> bool:
    """The rows the code showed are the user's frame's first (`last`: last) `n`, in its order (their labels)."""
    try:
        pd = _pandas()
        if not isinstance(shown, (pd.DataFrame, pd.Series)) or not isinstance(frame, pd.DataFrame):
            return False
        wanted = frame.index[-n:] if last else frame.index[:n]
        return len(shown) == min(n, len(frame)) and bool(shown.index.equals(wanted))
    except Exception:
        return False


def extremes(shown, frame, column, n: int, largest: bool) -> bool:
    """The rows the code showed are `n` holding the `n` largest (else smallest) values of the user's `column`
    (ties: any of the rows tied), read of their own column, else of the user's frame at their labels."""
    try:
        pd = _pandas()
        rows = shown if isinstance(shown, (pd.DataFrame, pd.Series)) else None
        values = _column(rows, frame, column) if rows is not None else None
        if values is None or len(rows) != min(n, int(frame[column].notna().sum())):
            return False
        best = frame[column].nlargest(n) if largest else frame[column].nsmallest(n)
        return sorted(pd.to_numeric(values).tolist()) == sorted(pd.to_numeric(best).tolist())
    except Exception:
        return False


def share(shown, frame) -> bool:
    """The code showed one number between 0 and 1 (a share, a fraction), not a count nor a table of them; printed
    as text, the one number in it ("27.3%" read as 0.273)."""
    try:
        pd = _pandas()
        value = shown.squeeze() if isinstance(shown, (pd.Series, pd.DataFrame)) else shown
        if isinstance(value, str):
            import re

            numbers = re.findall(r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)\s*(%?)", value)
            if len(numbers) != 1:
                return False
            value = float(numbers[0][0]) / (100 if numbers[0][1] else 1)
        if isinstance(value, (bool, bytes)) or type(value).__name__ == "bool_":
            return False
        number = float(value)
        return 0.0 <= number <= 1.0
    except Exception:
        return False


def distinct(shown, frame, column) -> bool:
    """The values the code showed are each a value of the user's `column`, none twice."""
    try:
        pd = _pandas()
        if shown is None or isinstance(shown, (str, bytes, pd.DataFrame)):
            return False
        values = pd.Series(list(shown), dtype=object)
        if not len(values) or values.duplicated().any():
            return False
        return bool(values.dropna().isin(frame[column].astype(object)).all())
    except Exception:
        return False


# ---------------------------------------------------------------- a column cleaned in place (loop/cleaning.py)

MISSING_WORDS = ("", "n/a", "na", "nan", "none", "null", "-", "--", "?", "unknown", "missing")  # text meaning no value


def _target(shown, frame, columns):
    """The frame the code handed over with `columns`: the frame it showed when it holds them all, else the
    user's frame (a column cleaned in place)."""
    pd = _pandas()
    if isinstance(shown, pd.DataFrame) and all(c in shown.columns for c in columns):
        return shown
    return frame if isinstance(frame, pd.DataFrame) else None


def _squeezed(value) -> str:
    """A text value with its case and every space taken out: what a change of case or spacing keeps."""
    return "".join(str(value).split()).casefold()


def _form_holds(value, how: str) -> bool:
    """A value after cleaning is in the form `how` asks for (a missing value is in every form)."""
    if not isinstance(value, str):
        return how not in ("stripped", "collapsed") or value is None or value != value
    if how in ("stripped", "collapsed"):
        return value == value.strip() and (how == "stripped" or "  " not in value)
    if how in ("lower", "upper"):
        return value == (value.lower() if how == "lower" else value.upper())
    titled = (value.title(), string.capwords(value))
    return how in ("title", "capitalized") and value in (titled if how == "title" else (*titled, value.capitalize()))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value) or \
        type(value).__name__ in ("NAType", "NaTType")


def _aligned(values, labels, before):
    """(after, before) pairs of the column's values: by the index labels the loop sent (rows dropped or reordered
    since are read at their labels), else by position when the rows are as many; None when neither can be read."""
    if labels is not None and values.index.is_unique:
        at = dict(zip(labels, before))
        if all(label in at for label in values.index):
            return [(v, at[label]) for label, v in zip(values.index, values)]
    if len(values) == len(before):
        return list(zip(values, before))
    return None


def cleaned(shown, frame, column, how, before=None, labels=None, operand=None) -> bool:
    """The column the code handed over is cleaned as `how` asks, and nothing else of it changed (`before`: the
    column's values before, None when too many to send): "stripped", "collapsed" (no double space), "lower",
    "upper", "title", "capitalized" -> every text value is in that form, and each is the old one but for case and
    spacing; "filled" -> no value missing, those not missing before unchanged, the ones filled `operand` when given."""
    try:
        rows = _target(shown, frame, [column])
        values = rows[column] if rows is not None and column in rows.columns else None
        if values is None or getattr(values, "ndim", 1) != 1:
            return False
        if how == "filled":
            return _filled(values, before, labels, operand)
        if not all(_form_holds(v, how) for v in values):
            return False
        pairs = [] if before is None else _aligned(values, labels, before)
        return pairs is not None and all(_missing(old) == _missing(new) and (_missing(old) or
                                                                            _squeezed(old) == _squeezed(new))
                                         for new, old in pairs)
    except Exception:
        return False


def _filled(values, before, labels, operand) -> bool:
    if bool(values.isna().any()) or (before is not None and len(values) != len(before)):  # rows dropped: not filled
        return False
    pairs = [] if before is None else _aligned(values, labels, before)
    if pairs is None:
        return False
    for new, old in pairs:
        if _missing(old):
            if operand is not None and not (new == operand or str(new) == str(operand)):
                return False
        elif not (new == old or str(new) == str(old)):
            return False
    return True


def typed(shown, frame, columns, kind: str, missing: int | None = None) -> bool:
    """Each of `columns` the code handed over is of `kind` ("numeric", "datetime", "bool") and, where `missing`
    is given (the values missing before, text that means none counted), as many are missing: no value lost
    ('$1.50' made NaN), none made up ('n/a' made 0)."""
    try:
        rows = _target(shown, frame, columns)
        if rows is None or not all(c in rows.columns for c in columns):
            return False
        kinds = {"numeric": "iufc", "datetime": "M", "bool": "b"}[kind]
        for c in columns:
            values = rows[c]
            if getattr(values, "ndim", 1) != 1 or values.dtype.kind not in kinds:
                return False
            if missing is not None and int(values.isna().sum()) != missing:  # none lost, none made up
                return False
        return True
    except Exception:
        return False


def columns_are(shown, frame, present, absent, others=None) -> bool:
    """The frame the code handed over (the one it showed, else the user's) has every column of `present` and
    none of `absent`; `others`: columns it must still have (those the instruction did not ask to drop)."""
    try:
        pd = _pandas()
        rows = shown if isinstance(shown, pd.DataFrame) and all(c in shown.columns for c in present) and \
            not any(c in shown.columns for c in absent) else frame
        if not isinstance(rows, pd.DataFrame):
            return False
        have = set(rows.columns)
        return all(c in have for c in present) and not any(c in have for c in absent) and \
            all(c in have for c in (others or ()))
    except Exception:
        return False


def rows_kept(shown, frame, column, present: int) -> bool:
    """The rows missing `column` were dropped and only they: the frame the code handed over has no such row, and
    the `present` rows that had it."""
    try:
        rows = _target(shown, frame, [column])
        if rows is None or column not in rows.columns:
            return False
        values = rows[column]
        return not bool(values.isna().any()) and len(rows) == present
    except Exception:
        return False

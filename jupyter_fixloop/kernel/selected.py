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

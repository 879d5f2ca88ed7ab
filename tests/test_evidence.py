"""Issue 52: "fixed" means the values were checked. A later cell that merely runs now (it failed before
the fix) shows the fix is compatible, not right; the library's warnings about its own result are evidence
against; dates are read the way the data writes them. On a data-cleaning notebook of our own
(tests/notebooks/orders_cleaning.ipynb), with a 200-row orders CSV written here."""

import random
import re
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.batch import cli as batch_cli

NOTEBOOK = Path(__file__).parent / "notebooks" / "orders_cleaning.ipynb"
CITIES = ["Munich", " Munich", "Berlin ", "Hamburg", "Cologne", " Hamburg "]


def orders_csv(path: Path, rows: int = 200) -> list[tuple[int, str]]:
    """A 200-row export: 190 orders and 10 exported twice; cities with stray spaces; amounts as "$1,364.05";
    every other date day-first dd/mm/yyyy, the others ISO (the first row ISO). Returns (order id, date as
    written) of the day-first rows whose day and month are both <= 12: where a guess of the order matters."""
    rng = random.Random(52)
    lines, ambiguous = ["order_id,city,amount,order_date"], []
    for i in range(rows - 10):
        day, month = rng.randint(1, 28), rng.randint(1, 12)
        if i % 2:
            written = f"{day:02d}/{month:02d}/2024"
            if day <= 12 and day != month:
                ambiguous.append((1000 + i, written))
        else:
            written = f"2024-{month:02d}-{day:02d}"
        amount = rng.uniform(5, 2500)
        lines.append(f'{1000 + i},{CITIES[i % len(CITIES)]},"${amount:,.2f}",{written}')
    lines += lines[1:11]  # exported twice
    path.write_text("\n".join(lines) + "\n")
    return ambiguous


@pytest.fixture(scope="module")
def cleaned(tmp_path_factory):
    """The notebook run in batch mode: (exit code, the report's text, the notebook written, the ambiguous rows)."""
    folder = tmp_path_factory.mktemp("orders")
    src = folder / NOTEBOOK.name
    shutil.copy(NOTEBOOK, src)
    ambiguous = orders_csv(folder / "orders.csv")
    out, report = folder / "orders.fixed.ipynb", folder / "orders.md"
    code = batch_cli.main([str(src), "-o", str(out), "--report", str(report)])
    return code, report.read_text(), nbformat.read(str(out), as_version=4), ambiguous, folder


def _outcome(report: str, cell: int) -> str:
    found = re.search(rf"^## Cell {cell}: .*?(?=^## |\Z)", report, re.M | re.S)
    assert found, report[:3000]
    return found.group(0)


def _expected_months(folder: Path) -> str:
    """The month counts of the orders read right: ISO dates as ISO, the others day first."""
    orders = pd.read_csv(folder / "orders.csv").drop_duplicates()
    text = orders["order_date"]
    iso = pd.to_datetime(text.where(text.str.contains("-")), format="%Y-%m-%d")
    dates = iso.fillna(pd.to_datetime(text.where(text.str.contains("/")), format="%d/%m/%Y"))
    return str(dates.dt.month.value_counts().sort_index())


def test_batch_mode_calls_no_repair_fixed_that_only_a_later_running_cell_supports(cleaned):
    """The amounts' repair is `fixed`: cell 9 asserts the amounts and failed before it. The dates' repair is
    `unverified`: cell 7 failed before and runs now, but checks no values (later cells run now: a fact),
    and cell 6's sum, which ran before the fix too, is no evidence either."""
    code, report, nb, _, _ = cleaned
    assert code == 3, report[:2000]
    amounts, dates = _outcome(report, 4), _outcome(report, 5)
    assert "fixed" in amounts.splitlines()[0] and "following cell 9 (`assert orders['amount']" in amounts
    assert "and its asserts pass" in amounts
    assert "runs now, unverified" in dates.splitlines()[0], dates[:800]
    assert "later cells run now: following cell 7 (`orders['order_date'].dt.month" in dates
    assert "- repairs run, by what verified them: 1 a later cell that asserts, 1 nothing" in report
    records = {i + 1: c.metadata["fixloop"]["status"] for i, c in enumerate(nb.cells) if "fixloop" in c.metadata}
    assert records == {4: "fixed", 5: "unverified"}


def test_the_date_repair_reads_the_days_first_as_the_data_writes_them(cleaned):
    """pandas read the first date as ISO and stopped at '17/08/2024'; the `dates:` fact counts the column's
    ways (45 first fields over 12, none second): day first, the ISO dates by their own format (not
    `format='mixed'`, which reads '05/03/2024' as March 5). The effect shows the rows where the order matters."""
    _, report, nb, ambiguous, folder = cleaned
    dates = _outcome(report, 5)
    assert "dates: orders['order_date'] (190 values): 95 ISO; 95 d/m or m/d with '/': 45 with a first field > 12" \
           " (day first, e.g. '17/08/2024'), 0 with a second field > 12" in report
    fixed = nb.cells[4].source
    assert "format='ISO8601'" in fixed and r"r'\3-\2-\1'" in fixed and "format='mixed'" not in fixed, fixed
    assert "a guess" not in dates.split("- loop:")[0]  # the data says which way: no guess
    _, written = ambiguous[0]
    day, month, year = written.split("/")
    assert f"where day and month could swap, read as {written!r} → {year}-{month}-{day}" in dates, dates[:1500]
    months = "".join(o.get("data", {}).get("text/plain", "") for o in nb.cells[6].outputs)
    assert months.split("Name:")[0].split() == _expected_months(folder).split("Name:")[0].split()


def test_a_date_repair_the_data_cannot_decide_stays_a_guess_and_says_its_rows():
    """No first or second field over 12: which way is a guess (format='mixed', said as one), and the
    effect shows the rows where the guess matters, not only the first rows."""
    df = pd.DataFrame({"d": ["2024-01-20", "2024-02-21", "2024-03-22", "03/05/2024", "04/06/2024"]})
    result = fix("df['d'] = pd.to_datetime(df['d'])\n", namespace={"df": df, "pd": pd})
    assert result.status == "unverified" and "a guess" in result.reason, result.reason
    assert "format='mixed'" in result.patched
    assert "where day and month could swap, read as '03/05/2024' → 2024-03-05" in result.effect.text


def test_a_sum_of_text_is_a_smell_in_a_value_and_in_a_column():
    from jupyter_fixloop.receipt.effect import Change, Column
    from jupyter_fixloop.receipt.smells import find, glued

    assert glued("'$1,528.19$1,085.32$89.96'") and glued("'1528.191085.32'")
    assert not glued("'$1,528.19'") and not glued("'2024-01-02'") and not glued("'12.50'")
    total = Change("total", "new", "", "'$1,528.19$1,085.32$89.96'", "", "str")
    (said,) = find(_effect(total), None)
    assert said.kind == "glued" and said.text.startswith("total holds numbers written as text glued end to end"), said
    by_city = Change("by_city", "new", "", "Series 2 (str)", "", "Series",
                     columns=(Column("", "new", "str", samples=("'$1,528.19$89.96'", "'$1,085.32$12.00'")),))
    assert "a sum of text concatenates" in find(_effect(by_city), None)[0].text


def _effect(*changes):
    from jupyter_fixloop.receipt.effect import Effect

    return Effect(changes)


AUTO_FRAME = ("import pandas as pd\norders = pd.DataFrame({'city': ['Munich', ' Munich', 'Berlin'], "
              "'amount': ['$1,528.19', '$1,085.32', '$89.96'], 'qty': [1, 0, 2]})")


def _executed(*cells: str) -> list:
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=True).execute()
    return nb.cells


def _offers(cell) -> list[str]:
    return [o.data["text/plain"] for o in cell.outputs if o.output_type == "display_data"
            and "application/vnd.jupyter.fixloop+json" in o.data]


def test_auto_mode_offers_a_repair_under_a_cell_that_runs_but_looks_wrong():
    """No error: pandas' chained-assignment warning gets the rules' repair under the cell, as an error
    would; a sum that glues text and a column made all NaN are said under theirs. A plain cell gets nothing."""
    cells = _executed("%load_ext jupyter_fixloop", "%fixloop auto", AUTO_FRAME,
                      "orders[orders['qty'] == 0]['qty'] = 1",
                      "total = orders['amount'].sum()\ntotal",
                      "orders['rate'] = pd.to_numeric(orders['amount'], errors='coerce')",
                      "orders['n'] = orders['qty'] * 2")
    (chained,) = _offers(cells[3])
    assert "pandas warns the assignment may not reach the frame" in chained, chained
    assert "orders.loc[orders['qty'] == 0, 'qty'] = 1" in chained, chained
    (text_sum,) = _offers(cells[4])
    assert "looks wrong: its result holds numbers written as text glued end to end" in text_sum, text_sum
    (all_nan,) = _offers(cells[5])
    assert "looks wrong: `orders`['rate'] is all NaN after the cell" in all_nan, all_nan
    assert _offers(cells[6]) == []
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]


def test_the_cause_search_finds_group_keys_that_differ_by_spaces():
    """A groupby on ' Munich' and 'Munich' splits one city in two; the cell below asserts Munich's total and
    fails. The earlier cell is the cause: its keys are joined (the sandbox's fact says how), and the
    change is offered under the failure, verified by the failing cell's own assert."""
    import ast

    from jupyter_fixloop.kernel import matches

    frame = pd.DataFrame({"city": ["Munich", " Munich", "Berlin", "Berlin ", "munich"], "amount": [1, 2, 3, 4, 5]})
    tree = ast.parse("by_city = orders.groupby('city')['amount'].sum()")
    assert matches.gather(tree, {"orders": frame}) == [
        "groupby keys: orders['city'] holds 5 values that are 2 with .str.strip().str.lower() (' Munich' and 'Munich')"]
    cells = _executed("%load_ext jupyter_fixloop", "%fixloop auto",
                      "import pandas as pd\norders = pd.DataFrame({'city': ['Munich', ' Munich', 'Berlin', 'Berlin ', "
                      "'Munich '], 'amount': [10.0, 20.0, 5.0, 7.0, 1.0]})",
                      "by_city = orders.groupby('city')['amount'].sum()",
                      "assert by_city['Munich'] == 31.0, by_city.to_dict()")
    said = "\n".join(o.get("data", {}).get("text/plain", "") for o in cells[4].outputs)
    assert "the cause is in cell [4]" in said and "its asserts pass" in said, said
    assert "+by_city = orders.assign(city=orders['city'].str.strip()).groupby('city')['amount'].sum()" in said

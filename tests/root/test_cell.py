"""A `%%fixloop` cell as text (cell.py), the LoopSummary (result.py), and the small decisions of the
notebook tier that need no kernel: where widgets render, what `%fixloop last` inserts."""

from __future__ import annotations

import pathlib
import re

import pytest

from jupyter_fixloop.cell import MAGIC, join_magic, looks_like_prose, magic_arguments, split_instruction, split_magic
from jupyter_fixloop.notebook import comm
from jupyter_fixloop.notebook.history import Entry, FixLoopHistory, last_code
from jupyter_fixloop.notebook.view import renders_widgets
from jupyter_fixloop.receipt.values import Receipt
from jupyter_fixloop.result import LoopResult, Round, loop_summary

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- the magic line


@pytest.mark.parametrize("source, line, body", [
    ("%%fixloop\nx = 1", "%%fixloop", "x = 1"),
    ("%%fixloop --expect 'x == 1'  \nx = 1\n", "%%fixloop --expect 'x == 1'  ", "x = 1\n"),  # exactly as typed
    ("%%fixloop\tadd a column", "%%fixloop\tadd a column", ""),
    ("%%fixloop", "%%fixloop", ""),
    ("x = 1\n%%fixloop", None, "x = 1\n%%fixloop"),  # not the first line: no magic
    ("%%fixloopy\nx = 1", None, "%%fixloopy\nx = 1"),  # another magic
    ("%fixloop last", None, "%fixloop last"),
])
def test_split_magic_and_join_it_back(source, line, body):
    assert split_magic(source) == (line, body)
    assert join_magic(line, body) == (source if "\n" in source or line is None else source + "\n")


def test_magic_arguments():
    assert magic_arguments("%%fixloop --expect 'x == 1' -r 2 ") == "--expect 'x == 1' -r 2"
    assert join_magic(f"{MAGIC} -r 2", "x") == "%%fixloop -r 2\nx"


# ---------------------------------------------------------------- code or instruction

BROKEN_CODE = [
    "df.groupby('a'].sum()",
    'print("x"',
    "total = sum(monthly_sale",
    "total = sum(x for x in range(10)",
    "for i in range(3) print(i)",
    "while True print(1)",
    "if x == 1 print(x)",
    "def f(x) return x",
    "x = [1, 2, 3",
    "return x +",
    "import numpy as",
    "from math import",
    "df['total'] = df['a'] + df['b'",
    "result = df.merge(other, on='id' how='left')",
    "sales.plot(kind='bar'",
    "print 'hello world'",
    "lambda x: x +",
]
PROSE = [
    "add a column with the total",
    "write a function that adds two numbers",
    "plot sales by region as a bar chart",
    "use df.groupby('region') to sum the amount column",
    "Sort the data by date, newest first.",
    "rename the column 'Price' to 'price'",
    "make a histogram of ages with 20 bins",
    "load data.csv into a dataframe",
    "drop rows where price < 0",
    "First, remove duplicates",
    "don't drop the first row",
]


@pytest.mark.parametrize("text", BROKEN_CODE)
def test_code_that_fails_to_parse_is_code_to_repair(text):
    assert not looks_like_prose(text)
    assert split_instruction(text + "\n", None) == (text + "\n", None)


@pytest.mark.parametrize("text", PROSE)
def test_a_line_of_prose_is_an_instruction(text):
    assert looks_like_prose(text)
    assert split_instruction(f"\n{text}\n", None) == ("", text)


def test_valid_code_and_short_lines_are_never_instructions():
    for text in ("x = 1", "fix it", "total", "sum(x)"):
        assert not looks_like_prose(text)
    assert split_instruction("add a column with the total", "do it") == ("add a column with the total", "do it")
    assert split_instruction("add a column\nwith the total", None) == ("add a column\nwith the total", None)


# ---------------------------------------------------------------- the LoopSummary


def _result(**changes) -> LoopResult:
    fields = dict(status="fixed", source="n = len(monthly_sale)", patched="n = len(monthly_sales)\n",
                  rounds=[Round(1, "n = len(monthly_sales)\n", Receipt("ok", "ok"))], reason="fixed",
                  model="fixloop/builtin", max_rounds=4, loop_id="loop-1",
                  first=Receipt("exception", "NameError: name 'monthly_sale' is not defined"))
    fields.update(changes)
    return LoopResult(**fields)


def test_one_summary_builder_mirrors_the_labextension():
    summary = loop_summary(_result(), cell_id="c1", decision="accepted")
    interface = re.search(r"export interface ILoopSummary \{(.*?)\}",
                          (ROOT / "labextension/src/summary.ts").read_text(),
                          re.S).group(1)
    assert set(summary) == set(re.findall(r"^\s*(\w+):", interface, re.M))
    assert summary["original"] == "n = len(monthly_sale)" and summary["decision"] == "accepted"
    assert summary["rounds"][0]["receipt"] == {"kind": "ok", "text": "ok"} and summary["created"]
    # a history entry's summary: the body without the %%fixloop line, and the entry's own decision
    entry = Entry(cell_source="%%fixloop -r 4\nn = len(monthly_sale)", cell_id="c2", result=_result(),
                  decision="undone")
    assert entry.summary() == {**loop_summary(_result(), cell_id="c2", original="n = len(monthly_sale)",
                                              created=entry.created, decision="undone")}
    assert entry.accepted_source() == "%%fixloop -r 4\nn = len(monthly_sales)"
    assert not hasattr(comm, "loop_summary") and not hasattr(comm, "summary_of")  # comm.py is the comm only


# ---------------------------------------------------------------- `%fixloop last` from the history


def test_fixloop_last_reads_this_kernels_latest_loop_and_decision(tmp_path):
    history = FixLoopHistory(directory=str(tmp_path))
    assert history.last() is None
    first = Entry(cell_source="%%fixloop\nn = len(monthly_sale)", cell_id="c1")
    history.start(first, "m")
    first.result = _result(loop_id="loop-1")
    history.loop(first, first.summary())
    assert last_code(history.last()) == "n = len(monthly_sales)\n"  # pending: the proposal
    history.decision(first, "accepted")
    assert last_code(history.last()) == "n = len(monthly_sales)\n"  # accepted: the accepted code
    history.decision(first, "undone")
    assert last_code(history.last()) == "%%fixloop\nn = len(monthly_sale)"  # undone: the exact original cell
    gave_up = Entry(cell_source="%%fixloop\ny = f(", cell_id="c2")
    history.start(gave_up, "m")
    gave_up.result = _result(loop_id="loop-2", status="gave_up", patched=None, source="y = f(",
                             rounds=[Round(1, "y = f()\n", Receipt("exception", "NameError"))])
    history.loop(gave_up, gave_up.summary())
    history.start(Entry(cell_source="%%fixloop\nwhile True: pass"), "m")  # still running: not "last"
    assert history.last()["loop_id"] == "loop-2" and last_code(history.last()) == "y = f()\n"  # the last candidate
    other_kernel = FixLoopHistory(directory=str(tmp_path))  # the same file, another kernel session
    assert other_kernel.last() is None and len(other_kernel.entries()) == 3


# ---------------------------------------------------------------- where widgets render


class _Kernel:
    def __init__(self, metadata):
        self.metadata = metadata

    def get_parent(self, channel):
        return {"header": {"msg_type": "execute_request"}, "metadata": self.metadata, "content": {"code": "x"}}


class _Shell:
    def __init__(self, kernel=None):
        self.kernel = kernel


@pytest.mark.parametrize("kernel, state, expected", [
    (None, "absent", False),  # terminal IPython: HTML and text
    (_Kernel({}), "waiting", False),  # nbclient / nbconvert: no answer, no cellId
    (_Kernel({"cellId": "c1"}), "waiting", True),  # a live frontend that has not answered yet
    (_Kernel({}), "connected", True),  # the extension answered
    (_Kernel({}), "absent", True),  # a frontend without the extension closed the comm
])
def test_widgets_only_where_a_frontend_renders_them(kernel, state, expected):
    frontend = comm.Frontend()
    frontend.state = state
    assert renders_widgets(_Shell(kernel), frontend) is expected


# ---------------------------------------------------------------- `%fixloop config`


def test_the_config_table_says_where_each_value_came_from_and_hides_secrets():
    from traitlets.config import Config

    from jupyter_fixloop.config import FixLoop

    loaded = Config()
    loaded.FixLoop.timeout = 12.0
    loaded.FixLoop.gateway_token = "s3cret-token"
    settings = FixLoop(config=loaded)
    settings.update_config(Config({"FixLoop": {"max_rounds": 2}}))  # what `%config` does
    settings.budget = 1.5
    rows = {line.split(" = ")[0]: line.split(" = ")[1].split() for line in settings.table().splitlines()[1:-1]}
    assert rows["FixLoop.timeout"] == ["12.0", "config", "file"] and rows["FixLoop.max_rounds"] == ["2", "%config"]
    assert rows["FixLoop.budget"] == ["1.5", "set", "in", "code"] and rows["FixLoop.pool_size"] == ["2", "default"]
    assert rows["FixLoop.gateway_token"][:2] == ["(set,", "hidden)"] and "s3cret" not in settings.table("--help")
    assert settings.table().count("FixLoop.max_rounds = 2") == 1  # each row as `%config` takes it


def test_a_replys_code_keeps_the_cells_lines_as_the_cell_writes_them_trailing_spaces_too():
    from jupyter_fixloop.cell import with_line_ends_of

    cell = "plt.scatter(x, \n            c='',   \n            alpha=0.6, \n            label=1)\n"
    reply = "plt.scatter(x,\n            c=[],\n            alpha=0.6,\n            label=1)\n"  # stripped by the model
    kept = "plt.scatter(x, \n            c=[],\n            alpha=0.6, \n            label=1)\n"
    assert with_line_ends_of(cell, reply) == kept
    assert with_line_ends_of("", reply) == reply and with_line_ends_of(cell, "") == ""

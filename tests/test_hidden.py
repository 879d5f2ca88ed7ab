"""What the user reviews is what runs (issue 41, item 2): terminal escapes, CR, BS, bidi overrides and
zero-width characters in a candidate are shown as visible escapes in every diff (a real terminal
under tmux, the text and HTML results, the widget, the batch report), and a candidate holding any
that the cell has not is rejected before it runs, whatever it defines or deletes when it runs."""

import html
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_fixloop import fix
from jupyter_fixloop.batch import report
from jupyter_fixloop.batch.run import BatchResult, CellOutcome
from jupyter_fixloop.batch.terminal import QuietProgress, make_asker
from jupyter_fixloop.hidden import code_lines, visible
from jupyter_fixloop.loop.guard import Guard
from jupyter_fixloop.receipt.values import Receipt
from jupyter_fixloop.render import diff_html, render_html, render_text, side_by_side_html
from jupyter_fixloop.result import LoopResult, Round, unified_diff

CELL = "y = len(values) - 1\n"
RIGHT = "y = len(values)"
NS = {"values": [1, 2, 3]}
ERASE = "\x1b[2K\x1b[1A"  # erase the line, cursor up: each hidden line takes itself off the screen
HIDDEN_LINES = [f"open('/tmp/h{i}', 'w').write('line {i}')" for i in range(13)]
PAYLOADS = {
    "csi": RIGHT + "\n" + "".join(f"{line}  # {ERASE}\n" for line in HIDDEN_LINES),
    "osc": RIGHT + "  # \x1b]8;;http://x\x1b\\see\x1b]8;;\x1b\\\x1b]52;c;ZWNobyBwd25lZA==\x07\n",
    "bidi": "access = 'user'\nif access != 'none\u202e \u2066# admin only\u2069 \u2066':\n    " + RIGHT + "\n",
    "zero-width": RIGHT + "\ny\u200b = 3\n",
    "cr": RIGHT + "  # harmless\rimport os; os.environ['CR_RAN'] = '1'\n",
    "bs": RIGHT + "  # ok" + "\b" * 12 + "import os\n",
}
SEEN = {"csi": "\\x1b[2K\\x1b[1A", "osc": "\\x1b]52;c;", "bidi": "\\u202e", "zero-width": "\\u200b",
        "cr": "\\r", "bs": "\\x08"}


def _result(patched: str) -> LoopResult:
    receipt = Receipt("ok", f"ran without error; 1 check(s) passed {patched[-8:]}")
    return LoopResult("fixed", CELL, patched, [Round(1, patched, receipt, reply=patched, authors=("model",))],
                      reason="after 1 round(s): its 1 check passes", model="openai/scripted", max_rounds=4)


def _text(page: str) -> str:
    """What a browser shows of an HTML page's text (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _shown(text: str) -> bool:
    """Nothing a terminal or a browser would act on: no control, format or bidi character at all."""
    return not any(ch not in "\n\t" and visible(ch) != ch for ch in text)


def _reported(result: LoopResult, patched: str, tmp_path):
    """`result` as batch mode and the widget show it: (the batch, its Markdown and HTML reports, the widget)."""
    from jupyter_fixloop.notebook.widget import DiffWidget

    outcome = CellOutcome(1, "fixed", CELL, patched, error="NameError: x", reason=result.reason, result=result)
    batch = BatchResult("a.ipynb", (outcome,), 1.0, "openai/scripted")
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    report.write_report(batch, str(md), "out.ipynb")
    report.write_report(batch, str(page), "out.ipynb")
    widget = DiffWidget(on_decide=lambda word: None)
    widget.show_result(result, (CELL, patched))  # the cell as it ran, what Accept writes
    return batch, md, page, widget


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_every_diff_and_result_shows_hidden_characters_as_escapes(name, tmp_path):
    patched = PAYLOADS[name]
    result = _result(patched)
    batch, md, page, widget = _reported(result, patched, tmp_path)
    widget.view.value = "side"
    shown = {"diff": unified_diff(CELL, patched), "text": render_text(result), "html": render_html(result),
             "diff_html": diff_html(CELL, patched), "side": side_by_side_html(CELL, patched),
             "report.md": md.read_text(), "report.html": page.read_text(),
             "widget": widget.diff.value + widget.header.value + "".join(c.value for c in widget.rounds.children),
             "summary": report.summary_text(batch, "out.ipynb", str(md), None)}
    for where, text in shown.items():
        assert _shown(text), (where, [ch for ch in text if visible(ch) != ch and ch not in "\n\t"][:5])
        if where != "summary":
            assert SEEN[name] in _text(text), (where, text[:2000])
    if name == "csi":  # every hidden line is a line of the diff, each with its escapes in sight
        diff = shown["diff"]
        assert all(f"+{line}  # \\x1b[2K\\x1b[1A" in diff for line in HIDDEN_LINES), diff
    if name == "cr":  # Python runs what follows a lone CR as a line of its own: the diff shows it as one
        assert f"+{RIGHT}  # harmless\\r\n+import os; os.environ['CR_RAN'] = '1'" in shown["diff"]


def test_code_lines_are_pythons_lines():
    code = "a = 1\r\nb = 2\rc = 3\x0cd\u2028e\x85f\n"
    assert code_lines(code) == ["a = 1", "b = 2\\r", "c = 3\\x0cd\\u2028e\\x85f"]
    ns = {}
    exec(code.replace("d\u2028e\x85f", ""), ns)
    assert (ns["a"], ns["b"], ns["c"]) == (1, 2, 3)


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_the_guard_rejects_hidden_characters_whatever_the_candidate_defines_or_deletes(name):
    guard = Guard(CELL, ("y == 3",))
    for tail in ("", "del effect\n", "effect = None\n", "import sys\nsys.modules.pop('jupyter_fixloop', None)\n"):
        receipt = guard.check(PAYLOADS[name] + tail, None)
        assert receipt is not None and receipt.kind == "rejected", (name, tail)
        assert "characters a reader cannot see" in receipt.text and _shown(receipt.text), receipt.text
    assert guard.check(RIGHT + "\r\n", None) is None  # a Windows line end is a line end
    assert Guard("s = 'a\u00a0b'\n").check("s = 'a\u00a0b'.replace('\u00a0', ' ')\n", None) is not None
    assert Guard("s = 'a\u00a0b'\ns = s\n").check("s = 'a\u00a0b'\ns = s.strip()\n", None) is None  # the cell's own


def test_a_candidate_holding_terminal_escapes_never_runs(fake_model, tmp_path):
    """The attack through the real loop: the model's reply erases its own lines on a terminal; it is
    rejected before any sandbox runs it, and said so, and the next (honest) answer is the fix."""
    marker = tmp_path / "ran"
    attack = RIGHT + "\n" + f"open({str(marker)!r}, 'w').write('x')  # {ERASE}\ndel effect\n"
    server = fake_model(f"```python\n{attack}```", f"```python\n{RIGHT}\n```")
    result = fix(CELL, checks=["y == 3"], namespace=NS, model="openai/scripted", api_base=server.url, max_rounds=2,
                 rules=False,
                 confinement="none")
    first, second = result.rounds
    assert first.receipt.kind == "rejected" and "U+001B ESCAPE at line 2" in first.receipt.text, first.receipt.text
    assert not marker.exists()  # not run, not even in a sandbox
    assert result.status == "fixed" and result.patched == RIGHT + "\n" and second.receipt.ok
    assert "\x1b" not in render_text(result) + render_html(result)
    assert "+open(" in _text(render_html(result)) and "\\x1b[2K" in _text(render_html(result))  # its round's diff


TERMINAL_SCRIPT = """
import io, sys
sys.path.insert(0, {tests!r})
from test_hidden import CELL, PAYLOADS, _result
from jupyter_fixloop.batch.run import CellOutcome
from jupyter_fixloop.batch.terminal import QuietProgress, make_asker
patched = PAYLOADS["csi"]
result = _result(patched)
outcome = CellOutcome(1, "fixed", CELL, patched, error="NameError: x", reason=result.reason, result=result)
print(make_asker(QuietProgress(), stdin=io.StringIO("r\\n"))(outcome, result))
open({done!r}, "w").write("done")
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_interactive_review_on_a_real_terminal_shows_every_line(tmp_path):
    """`--interactive` on a real terminal (tmux): the 13 lines that erase themselves are on the screen,
    each with its escapes written out, and the answer read is the one typed (reject)."""
    done, script = tmp_path / "done", tmp_path / "review.py"
    script.write_text(TERMINAL_SCRIPT.format(tests=str(Path(__file__).parent), done=str(done)))
    session = f"fixloop-hidden-{os.getpid()}"
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"}
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "80",
                    f"{sys.executable} {script}; sleep 60"], check=True, env=env)
    try:
        for _ in range(600):
            if done.exists():
                break
            time.sleep(0.1)
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session, "-S", "-200"], capture_output=True,
                                text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert done.exists(), screen
    for line in HIDDEN_LINES:
        assert f"+{line}  # \\x1b[2K\\x1b[1A" in screen, screen
    assert "('reject', '')" in screen and f"+{RIGHT}" in screen


def test_the_asker_writes_no_control_character_to_its_stream():
    patched = PAYLOADS["osc"] + PAYLOADS["bidi"]
    result = _result(patched)
    outcome = CellOutcome(1, "fixed", CELL, patched, error="NameError: \x1b]0;title\x07", reason=result.reason,
                          result=result)
    out = io.StringIO()
    assert make_asker(QuietProgress(), stdin=io.StringIO("a\n"), stdout=out)(outcome, result) == ("accept", "")
    assert _shown(out.getvalue()) and "\\u202e" in out.getvalue() and "\\x1b]0;title" in out.getvalue()


def test_what_a_candidate_prints_or_raises_is_shown_with_its_hidden_characters_as_escapes(fake_model, tmp_path):
    """The guard reads a candidate's code before it runs; what the run prints it cannot read. A candidate
    that raises, then one that prints, a right-to-left override and a zero-width space (made with `chr`, so
    their code holds neither) get receipts that show both as escapes wherever a person reads them: each
    receipt block of the HTML result on its own, the whole result, the widget, the batch report, the
    history."""
    from jupyter_fixloop.notebook.history import Entry, FixLoopHistory
    from jupyter_fixloop.receipt.text import for_people
    from jupyter_fixloop.render import _receipt_html, receipt_block, rounds_html

    raising = RIGHT + "\nraise ValueError('admin' + chr(0x202e) + 'only' + chr(0x200b))\n"
    printing = RIGHT + "\nprint('total ' + chr(0x202e) + '3 = y' + chr(0x200b))\n"
    server = fake_model(f"```python\n{raising}```", f"```python\n{printing}```")
    server.repeat_last = False
    result = fix(CELL, checks=["y == 3"], namespace=NS, model="openai/scripted", api_base=server.url, max_rounds=2,
                 rules=False, confinement="none")
    first, second = result.rounds
    assert first.receipt.kind == "exception" and second.receipt.ok, (first.receipt.text, second.receipt.text)
    assert "\u202e" in first.receipt.evalue and "\u202e3 = y\u200b" in second.receipt.stdout  # as the run made them

    _, md, page, widget = _reported(result, printing, tmp_path)
    history = FixLoopHistory(directory=str(tmp_path))
    entry = Entry(cell_source="%%fixloop\n" + CELL, cell_id="c1", result=result)
    history.start(entry, result.model)
    history.loop(entry, entry.summary())
    shown = {"history": history.show(entry.loop_id), "receipt 1": _receipt_html("round 1", for_people(first.receipt)),
             "receipt 2": _receipt_html("round 2", for_people(second.receipt)),
             "rounds": rounds_html(result), "html": render_html(result), "text": render_text(result),
             "block": receipt_block(second.receipt), "report.md": md.read_text(), "report.html": page.read_text(),
             "widget": "".join(c.value for c in widget.rounds.children)}
    for where, text in shown.items():
        assert _shown(text), (where, [ch for ch in text if visible(ch) != ch and ch not in "\n\t"][:5])
        read = _text(text)
        if where not in ("receipt 2", "block"):
            assert "admin\\u202eonly\\u200b" in read, (where, read[:3000])
        if where not in ("receipt 1", "history"):  # the history file keeps no printed text (test_history.py)
            assert "total \\u202e3 = y\\u200b" in read, (where, read[:3000])


def test_a_reason_is_cut_after_a_whole_word_and_marked_and_every_display_cut_uses_that_one_helper():
    """Issue 52: "a regression c...", "not evid...", "it failed after the original cell and )"."""
    import pathlib
    import re

    from jupyter_fixloop.hidden import clipped

    reason = ("after 1 round(s): its 1 check passes (following cell 2 (`print(v39999, v20000)`): it failed after "
              "the original cell and runs now); it is the sandbox's own report, unsigned")
    short = clipped(reason, 120)
    assert len(short) <= 120 and short.endswith("…") and reason.startswith(short[:-1])
    k = len(short) - 1
    assert not (reason[k - 1].isalnum() and reason[k].isalnum())  # not inside a word
    assert clipped("a regression check failed", 14) == "a regression…"
    assert clipped("short", 80) == "short"
    package = pathlib.Path(__file__).resolve().parent.parent / "jupyter_fixloop"
    for name in ("batch/terminal.py", "batch/report.py", "batch/run.py", "render.py", "receipt/smells.py",
                 "receipt/values.py", "loop/looks.py", "loop/guard.py", "notebook/history.py", "notebook/view.py",
                 "notebook/magic.py", "notebook/auto.py"):
        source = (package / name).read_text()
        # a reason, an error, a warning or a headline sliced for display: only through `clipped` (also the
        # magic's warnings, auto mode's "looks wrong", the guard's words and the history's list)
        sliced = (r"(reason|error|warning|headline\(.*?\)|line|shown|text|first|lost|strip\(\))\)?\[:\d{2,3}\]"
                  r"|\"\[:\d{2,3}\]")
        assert not re.search(sliced, source), name

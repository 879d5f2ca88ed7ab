"""The loop history: JSONL records that outlive the kernel, folded back into one entry per loop."""

import json
import os
import subprocess
import sys
import textwrap

from fakelab import MIME, WIDGET_MIME

from jupyter_fixloop.notebook.history import Entry, FixLoopHistory
from jupyter_fixloop.result import LoopResult

# The kernel-restart test is in test_widget.py (it reuses that module's warm kernel).


def test_records_fold_into_one_entry_per_loop(tmp_path):
    history = FixLoopHistory(directory=str(tmp_path))
    done = Entry(cell_source="%%fixloop\nx = 1 +", cell_id="c1")
    history.start(done, "fixloop/builtin")
    done.result = LoopResult(status="fixed", source="x = 1 +", patched="x = 1 + 1", rounds=[], model="fixloop/builtin",
                             max_rounds=4, loop_id="loop-a")
    history.loop(done, {"loop_id": "loop-a", "cell_id": "c1", "status": "fixed", "rounds": [], "max_rounds": 4,
                        "model": "fixloop/builtin", "patched": "x = 1 + 1", "decision": "pending"})
    history.decision(done, "accepted", via="button")
    with open(history.path, "a") as f:
        f.write('{"event": "decision", "loop_id": "loop-a", "deci\n')  # a line cut short by a crash
    crashed = Entry(cell_source="%%fixloop\nwhile True: pass", cell_id="c2")
    history.start(crashed, "fixloop/builtin")  # the kernel died during this loop
    history.decision(done, "undone", via="sidebar")

    entries = FixLoopHistory(directory=str(tmp_path)).entries()  # a new process reads the file
    assert [e["loop_id"] for e in entries] == ["loop-a", crashed.run]
    assert entries[0]["decision"] == "undone" and entries[0]["original"] == "%%fixloop\nx = 1 +"
    assert entries[1]["status"] == "unfinished" and entries[1]["original"] == "%%fixloop\nwhile True: pass"
    listing = FixLoopHistory(directory=str(tmp_path)).listing()
    assert "loop-a" in listing and "undone" in listing and "unfinished" in listing and "while True: pass" in listing
    with open(history.path) as f:
        lines = [json.loads(line) for line in f if line.strip().endswith("}")]
    assert all("ts" in rec for rec in lines)


def test_an_unwritable_directory_keeps_records_in_memory_and_says_so(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    history = FixLoopHistory(directory=str(blocker / "sub"))
    history.start(Entry(cell_source="%%fixloop\nx = 1"), "m")
    assert history.records and "history not saved" in history.error
    assert "x = 1" in history.listing() and "history not saved" in history.listing()


def test_plain_ipython_shows_text_and_records_history(tmp_path):
    """No kernel (terminal IPython): no widget, no comm; the HTML/text display and the history stay.
    The magic's display path runs for real on a finished result (the loop itself is tested elsewhere)."""
    script = textwrap.dedent("""
        import json
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.core.displaypub import DisplayPublisher
        from jupyter_fixloop.receipt.values import Receipt
        from jupyter_fixloop.result import LoopResult, Round
        shown = []
        class Recorder(DisplayPublisher):
            def publish(self, data, metadata=None, **kwargs):
                shown.append(data)
        shell = InteractiveShell.instance()
        shell.display_pub = Recorder(shell=shell)
        shell.run_line_magic("load_ext", "jupyter_fixloop")
        magics = shell.magics_manager.registry["FixLoopMagics"]
        args = magics._parse("")
        view = magics._start_view("", "n = len(monthly_sale)", magics._options(args))
        result = LoopResult(status="fixed", source="n = len(monthly_sale)", patched="n = len(monthly_sales)",
                            rounds=[Round(1, "n = len(monthly_sales)", Receipt("ok", "ok"))], reason="fixed",
                            model="fixloop/builtin", max_rounds=4, loop_id="plain-loop",
                            first=Receipt("exception", "NameError: name 'monthly_sale' is not defined"))
        view.finish(result, retry=None)
        print(json.dumps(shown))
    """)
    env = dict(os.environ, FIXLOOP_DATA_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=240,
                         check=False)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(shown) == 1 and WIDGET_MIME not in shown[0]
    assert "fixloop: fixed" in shown[0]["text/plain"] and "fixloop-diff" in shown[0]["text/html"]
    assert shown[0][MIME]["loop_id"] == "plain-loop" and shown[0][MIME]["cell_id"] is None
    with open(tmp_path / "history.jsonl") as f:
        records = [json.loads(line) for line in f]
    assert [r["event"] for r in records] == ["start", "loop"]
    assert records[0]["original"] == "%%fixloop\nn = len(monthly_sale)"


def test_a_loop_with_nothing_to_decide_shows_no_pending_decision(tmp_path):
    history = FixLoopHistory(directory=str(tmp_path))
    gave_up = Entry(cell_source="%%fixloop\nx = 1 / 0", cell_id="c1")
    history.start(gave_up, "fixloop/builtin")
    gave_up.result = LoopResult(status="gave_up", source="x = 1 / 0", patched=None, rounds=[], model="fixloop/builtin",
                                max_rounds=4, loop_id="loop-g")
    history.loop(gave_up, {"loop_id": "loop-g", "cell_id": "c1", "status": "gave_up", "rounds": [], "max_rounds": 4,
                           "model": "fixloop/builtin", "patched": None, "decision": "pending"})
    shown = history.show("loop-g")
    assert "gave_up" in shown.splitlines()[0] and "pending" not in shown
    assert "pending" not in history.listing()


def test_loops_are_listed_by_start_a_refused_request_is_none_and_a_stopped_one_says_so(tmp_path):
    """Issue 52: a refused --expect listed as an unfinished pending loop; loops out of time order; "cell None"."""
    history = FixLoopHistory(directory=str(tmp_path))
    slow = Entry(cell_source="%%fixloop\nslow = 1 +", created="2026-11-29T06:00:00+00:00")
    quick = Entry(cell_source="%%fixloop\nquick = 2 +", created="2026-11-29T06:00:05+00:00")
    refused = Entry(cell_source="%%fixloop --expect 'x ==' \nx = 1", created="2026-11-29T06:00:07+00:00")
    stopped = Entry(cell_source="%%fixloop\nwhile True: pass", created="2026-11-29T06:00:09+00:00")
    for entry in (slow, quick, refused, stopped):
        history.start(entry, "fixloop/builtin")
    for entry, loop_id in ((quick, "loop-quick"), (slow, "loop-slow")):  # the later one finished first
        history.loop(entry, {"loop_id": loop_id, "status": "fixed", "rounds": [], "max_rounds": 4,
                             "model": "fixloop/builtin", "patched": "x = 1", "decision": "pending"})
    history.record("refused", run=refused.run, error="--expect 'x ==' is not an expression")
    history.record("stopped", run=stopped.run, error="KeyboardInterrupt")

    entries = FixLoopHistory(directory=str(tmp_path)).entries()
    assert [e["loop_id"] for e in entries] == ["loop-slow", "loop-quick", stopped.run]
    assert entries[2]["status"] == "stopped" and entries[2]["decision"] == ""
    listing = FixLoopHistory(directory=str(tmp_path)).listing()
    assert "unfinished" not in listing and "pending" in listing and "x ==" not in listing
    shown = FixLoopHistory(directory=str(tmp_path)).show(stopped.run)
    assert "cell None" not in shown and "stopped: KeyboardInterrupt" in shown


def test_the_history_file_is_yours_alone_and_keeps_no_printed_text(tmp_path):
    """Round four, low: the history file was 0644 and kept what candidates printed (a candidate can print any
    of your data it was given). Now it is 0600, an older 0644 file is made 0600, and printed text is counted."""
    from jupyter_fixloop import fix

    older = tmp_path / "history.jsonl"
    older.write_text("")
    os.chmod(older, 0o644)
    result = fix("print('CANARY-' + token)\ntotal = sum(monthly_sale)",
                 namespace={"token": "p4ss", "monthly_sales": [1]})
    assert result.patched is not None and "CANARY-p4ss" in result.rounds[-1].receipt.stdout
    history = FixLoopHistory(directory=str(tmp_path / "new"))
    for h in (history, FixLoopHistory(directory=str(tmp_path))):
        entry = Entry(cell_source="%%fixloop\n" + result.source, cell_id="c1", result=result)
        h.start(entry, result.model)
        h.loop(entry, entry.summary())
        assert os.stat(h.path).st_mode & 0o777 == 0o600
        with open(h.path) as f:
            text = f.read()
        assert "CANARY-p4ss" not in text and "stdout: 1 line(s), not shown" in text
        assert "total = sum(monthly_sales)" in text  # the code proposed is kept
        assert "CANARY-p4ss" not in h.show(result.loop_id)
    assert os.stat(tmp_path / "new").st_mode & 0o777 == 0o700
    assert "CANARY-p4ss" in entry.summary()["rounds"][-1]["receipt"]["text"]  # the widget and the comm show it

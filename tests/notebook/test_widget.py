"""The diff widget's Python side in a real kernel: buttons clicked by comm message, the fixloop comm
played by a fake JupyterLab (tests/fakelab.py), the built-in engine (no key, no network)."""

import os
import re
import signal
import threading
import time

import pytest
from fakelab import MIME, WIDGET_MIME, FakeLab, result_bundle
from kernel import UserKernel

CELL = "%%fixloop --expect 'total == 300'  \ntotal = sum(monthly_sale)\nprint('the total is', total)"
FIXED = "total = sum(monthly_sales)\nprint('the total is', total)"


@pytest.fixture(scope="module")
def kernel():
    k = UserKernel()  # its history goes to $FIXLOOP_DATA_DIR, a scratch folder (conftest.py)
    yield k
    k.close()


@pytest.fixture(scope="module")
def lab(kernel):
    lab = FakeLab(kernel, answer="hello")
    _, reply = lab.execute("%load_ext jupyter_fixloop\nmonthly_sales = [120, 80, 100]")
    assert reply["content"]["status"] == "ok"
    # %load_ext stays cheap: the hello comm is open, ipywidgets is not imported until a result shows
    assert lab.kernel.run("import sys; print('ipywidgets' in sys.modules)").text.strip() == "False"
    return lab


def run_loop(lab, cell=CELL, cell_id="cell-1"):
    """Run a %%fixloop cell; returns (the widget's root comm id, its LoopSummary, all iopub msgs)."""
    msgs, reply = lab.execute(cell, cell_id=cell_id)
    assert reply["content"]["status"] == "ok", msgs
    bundle = result_bundle(msgs)
    root = bundle[WIDGET_MIME]["model_id"]
    assert "fixloop-widget" in lab.state(root)["_dom_classes"]
    return root, bundle[MIME], msgs


def test_hello_live_header_and_summary(lab):
    # the hello names the model a loop started now uses (the extension's Fix button says it)
    assert lab.fixloop_inbox[0] == {"action": "hello", "protocol": 1, "model": "fixloop/builtin"}
    root, summary, msgs = run_loop(lab)
    # live header: the progress display was updated while the loop ran
    updates = [m["content"]["data"].get("text/html", "") for m in msgs if m["msg_type"] == "update_display_data"]
    assert any("asking the model" in u for u in updates) and any("running the candidate" in u for u in updates)
    assert any("round 1 of 4" in u for u in updates)
    # the result bundle: widget, HTML and text for other frontends, and the LoopSummary
    bundle = result_bundle(msgs)
    assert "fixloop: fixed" in bundle["text/plain"] and "fixloop-box" in bundle["text/html"]
    assert summary["status"] == "fixed" and summary["cell_id"] == "cell-1" and summary["decision"] == "pending"
    assert summary["original"] == CELL.split("\n", 1)[1]
    assert summary["patched"].rstrip("\n") == FIXED
    assert summary["rounds"][0]["receipt"]["kind"] == "ok" and summary["max_rounds"] == 4
    assert lab.fixloop_messages("loop")[-1]["loop"]["loop_id"] == summary["loop_id"]
    # header, pending state, mode, buttons with tooltips and keyboard focus
    text = lab.texts(root)
    assert "1/4 rounds" in text and "fixloop/builtin" in text and "tokens" in text
    assert "Pending" in text and "Connected to jupyterlab" in text
    # which confinement the candidates ran under is said in the widget and in the plain HTML
    assert "sandbox: " in text and "sandbox: " in bundle["text/html"]
    for name in ("accept", "reject", "retry", "undo"):
        button = lab.state(lab.find(f"fixloop-{name}", root))
        assert button["tooltip"] and button["tabbable"] is True
    assert lab.state(lab.find("fixloop-accept", root))["disabled"] is False
    assert lab.state(lab.find("fixloop-undo", root))["disabled"] is True
    # rounds: collapsed, one section per run with the candidate's diff and its receipt
    accordion = next(c for c in lab.descendants(root) if lab.state(c)["_model_name"] == "AccordionModel")
    assert lab.state(accordion)["selected_index"] is None
    assert [t.split(":")[0] for t in lab.state(accordion)["titles"]] == ["original run", "round 1"]
    assert "NameError" in lab.state(accordion)["titles"][0]
    # the diff: unified first, side by side on the toggle
    toggle = next(c for c in lab.descendants(root) if lab.state(c)["_model_name"] == "ToggleButtonsModel")
    diff_before = lab.texts(root)
    # rows are blocks with nothing between them (a newline between rows drew blank gaps)
    assert '<span class="fixloop-add">+' in diff_before and "</span>\n<span" not in diff_before
    assert 'class="fixloop-diff fixloop-side"' not in diff_before
    lab.set_value(toggle, 1, key="index")  # "Side by side"
    side = lab.texts(root)
    assert 'class="fixloop-diff fixloop-side"' in side and '<td class="fixloop-num">1</td>' in side


def test_accept_replaces_the_cell_runs_it_and_undo_restores_the_exact_original(lab):
    root, summary, _ = run_loop(lab, cell_id="cell-2")
    before = len(lab.fixloop_messages("replace"))
    msgs = lab.click("fixloop-accept", root)
    replace = lab.fixloop_messages("replace")[before]
    assert replace["cell_id"] == "cell-2" and replace["decision"] == "accepted"
    assert replace["source"] == "%%fixloop --expect 'total == 300'  \n" + FIXED  # the %%fixloop line kept as typed
    assert replace["loop"]["loop_id"] == summary["loop_id"] == replace["loop_id"]
    assert replace["expected"] == CELL  # lets the frontend refuse to overwrite later edits
    assert lab.fixloop_messages("decision")[-1] == {"action": "decision", "loop_id": summary["loop_id"],
                                                    "decision": "accepted", "via": "button"}
    # the accepted code ran in the user's kernel, its output captured by the widget's Output
    click_id = msgs[0]["parent_header"]["msg_id"]
    streams = [m["content"]["text"] for m in msgs if m["msg_type"] == "stream"]
    assert "the total is 300\n" in streams
    output = [cid for cid in lab.descendants(root) if lab.state(cid)["_model_name"] == "OutputModel"][0]
    assert lab.state(output)["msg_id"] in ("", click_id)  # set to the click while it ran, then reset
    assert any(m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == output
               and m["content"]["data"]["state"].get("msg_id") == click_id for m in msgs)
    assert lab.execute("print(total)")[0][-1]["content"]["text"] == "300\n"
    # the frontend answers: replaced
    lab.send_comm(lab.fixloop_comm, {"action": "replaced", "request_id": replace["request_id"], "ok": True,
                                     "error": None})
    assert "the cell now holds the fixed code" in lab.texts(root)
    assert lab.state(lab.find("fixloop-undo", root))["disabled"] is False
    # undo: the exact original, trailing spaces and all
    lab.click("fixloop-undo", root)
    undo = lab.fixloop_messages("replace")[-1]
    assert undo["source"] == CELL and undo["decision"] == "undone" and undo["cell_id"] == "cell-2"
    assert undo["expected"] == replace["source"]
    assert lab.fixloop_messages("decision")[-1]["decision"] == "undone"
    history = lab.execute("%fixloop history")[0]
    listing = "".join(m["content"]["text"] for m in history if m["msg_type"] == "stream")
    line = [row for row in listing.splitlines() if summary["loop_id"] in row][0]
    assert "fixed" in line and "undone" in line and "total = sum(monthly_sale)" in line


def test_reject_changes_nothing_and_says_so(lab):
    root, _, _ = run_loop(lab, cell_id="cell-3")
    before = len(lab.fixloop_messages("replace"))
    lab.click("fixloop-reject", root)
    assert len(lab.fixloop_messages("replace")) == before
    assert lab.fixloop_messages("decision")[-1]["decision"] == "rejected"
    assert "Rejected</b>: nothing changed" in lab.texts(root)
    assert lab.state(lab.find("fixloop-reject", root))["disabled"] is True
    assert lab.state(lab.find("fixloop-accept", root))["disabled"] is False  # a mis-click can be taken back


def test_running_the_cell_again_closes_its_pending_loop(lab):
    root, first, _ = run_loop(lab, cell_id="cell-7")
    run_loop(lab, cell_id="cell-7")
    assert {"action": "decision", "loop_id": first["loop_id"], "decision": "rejected", "via": "rerun"} \
        in lab.fixloop_inbox
    assert "the cell ran again" in lab.texts(root)
    assert lab.state(lab.find("fixloop-accept", root))["disabled"] is False  # still acceptable, if it shows
    history = lab.execute("%fixloop history")[0]
    listing = "".join(m["content"]["text"] for m in history if m["msg_type"] == "stream")
    assert "rejected" in [row for row in listing.splitlines() if first["loop_id"] in row][0]


def test_sidebar_decide_acts_like_the_button(lab):
    root, summary, _ = run_loop(lab, cell_id="cell-4")
    lab.send_comm(lab.fixloop_comm, {"action": "decide", "loop_id": summary["loop_id"], "decision": "accept"})
    replace = lab.fixloop_messages("replace")[-1]
    assert replace["loop_id"] == summary["loop_id"] and replace["cell_id"] == "cell-4"
    assert lab.fixloop_messages("decision")[-1]["decision"] == "accepted"
    assert lab.state(lab.find("fixloop-undo", root))["disabled"] is False  # the widget followed
    # the frontend could not find the cell: the widget falls back to showing the code to copy
    lab.send_comm(lab.fixloop_comm, {"action": "replaced", "request_id": replace["request_id"], "ok": False,
                                     "error": "no cell with id cell-4"})
    assert "could not change the cell: no cell with id cell-4" in lab.texts(root)
    assert "fixloop-code" in lab.texts(root) and "sum(monthly_sales)" in lab.texts(root)
    lab.send_comm(lab.fixloop_comm, {"action": "decide", "loop_id": "no-such-loop", "decision": "reject"})
    answer = lab.fixloop_messages("decision")[-1]
    assert answer["loop_id"] == "no-such-loop" and answer["decision"] == "unknown" and "no loop" in answer["error"]


def test_the_sidebar_reaches_the_cells_view_and_the_widget_only_renders(lab):
    """The comm's `loops` hold each cell's LoopView (the lifecycle owner); the widget knows no magic and no view."""
    _, summary, _ = run_loop(lab, cell_id="cell-11")
    msgs, _ = lab.execute("from jupyter_fixloop.notebook import comm as _c, widget as _w\n"
                          f"print(type(_c.current().loops[{summary['loop_id']!r}]).__name__)\n"
                          "print(sorted(m for m in ('magic', 'view') if hasattr(_w, m) or f'.{m} import' in "
                          "open(_w.__file__).read()))")
    printed = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream").split()
    assert printed == ["LoopView", "[]"], printed


def test_retry_with_a_hint_puts_the_hint_in_the_prompt(lab, fake_model):
    wrong = "```python\ntotal = sum(monthly_sale) + 0\n```"
    server = fake_model(wrong, "```python\ntotal = sum(monthly_sales)\n```")
    lab.execute(f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n%config FixLoop.api_base = '{server.url}'")
    try:
        root, first, _ = run_loop(lab,
                                  "%%fixloop -m openai/scripted --no-rules -r 1 -e 'total == 300'\n"
                                  "total = sum(monthly_sale)",
                                  cell_id="cell-5")
        assert first["status"] == "gave_up", first["reason"]
        assert lab.state(lab.find("fixloop-accept", root))["disabled"] is True
        lab.set_value(lab.find("fixloop-hint", root), "the list is called monthly_sales")
        msgs = lab.click("fixloop-retry", root)
        assert "the list is called monthly_sales" in server.prompt(1)
        assert "the list is called monthly_sales" not in server.prompt(0)
        # the widget now shows the new loop; the old one is closed as rejected, the new one announced
        assert any("asking the model" in m["content"]["data"].get("state", {}).get("value", "")
                   for m in msgs if m["msg_type"] == "comm_msg")  # the header was live during the retry
        new = lab.fixloop_messages("loop")[-1]["loop"]
        assert new["loop_id"] != first["loop_id"] and new["status"] == "fixed" and new["cell_id"] == "cell-5"
        assert {"action": "decision", "loop_id": first["loop_id"], "decision": "rejected", "via": "retry"} \
            in lab.fixloop_inbox, [
            (
                d["action"],
                d.get("loop", d).get("loop_id"),
                d.get("loop", d).get("cell_id"),
                d.get("loop", d).get("decision"),
            )
            for d in lab.fixloop_inbox
        ]
        assert "fixloop: fixed" in lab.texts(root) and "Pending" in lab.texts(root)
        assert lab.state(lab.find("fixloop-accept", root))["disabled"] is False
    finally:
        lab.execute("%config FixLoop.api_base = ''")


def test_live_header_ticks_while_the_model_thinks(lab, fake_model):
    from fake_model import Scripted

    server = fake_model(Scripted("```python\ntotal = sum(monthly_sales)\n```", delay=3.5))
    lab.execute(f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n%config FixLoop.api_base = '{server.url}'")
    try:
        msgs, _ = lab.execute("%%fixloop -m openai/scripted --no-rules -r 1 -e 'total == 300'\n"
                              "total = sum(monthly_sale)",
                              cell_id="cell-8")
        root = result_bundle(msgs)[WIDGET_MIME]["model_id"]
        retried = lab.click("fixloop-retry", root)  # the widget's own header ticks during a Retry too
    finally:
        lab.execute("%config FixLoop.api_base = ''")
    headers = [m["content"]["data"]["state"]["value"] for m in retried if m["msg_type"] == "comm_msg"
               and "asking the model" in m["content"]["data"].get("state", {}).get("value", "")]
    assert len({re.search(r"([0-9.]+) s</div>", h).group(1) for h in headers}) >= 3, headers
    assert "fixloop: fixed" in lab.texts(root)
    waiting = [m["content"]["data"]["text/html"] for m in msgs if m["msg_type"] == "update_display_data"
               and "asking the model" in m["content"]["data"].get("text/html", "")]
    elapsed = [float(re.search(r"([0-9.]+) s</div>", h).group(1)) for h in waiting]
    assert len(elapsed) >= 3 and elapsed[-1] - elapsed[0] >= 2.0, elapsed  # one refresh a second, no event needed
    assert result_bundle(msgs)[MIME]["status"] == "fixed"
    # the header stepped aside for good: nothing refreshed it after the result was shown
    last_update = max(i for i, m in enumerate(msgs) if m["msg_type"] == "update_display_data")
    shown = max(i for i, m in enumerate(msgs) if m["msg_type"] == "display_data" and MIME in m["content"]["data"])
    assert msgs[last_update]["content"]["data"]["text/plain"] == "" and last_update < shown


def test_stopping_a_retry_leaves_the_widget_usable(lab, fake_model):
    from fake_model import Scripted

    server = fake_model("```python\ntotal = sum(monthly_sales)\n```",
                        Scripted("```python\ntotal = sum(monthly_sales) + 0\n```", delay=5))
    lab.execute(f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n%config FixLoop.api_base = '{server.url}'")
    try:
        root, _, _ = run_loop(lab,
                              "%%fixloop -m openai/scripted --no-rules -r 2 -e 'total == 300'\n"
                              "total = sum(monthly_sale)",
                              cell_id="cell-9")

        def stop_when_asked_again():
            deadline = time.monotonic() + 120
            while len(server.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(lab.kernel.pid(), signal.SIGINT)  # the stop button, during the Retry's model call

        threading.Thread(target=stop_when_asked_again, daemon=True).start()
        lab.click("fixloop-retry", root)
        assert "Retry stopped: KeyboardInterrupt" in lab.texts(root)
        for name in ("retry", "accept", "hint"):  # not stuck busy
            assert lab.state(lab.find(f"fixloop-{name}", root))["disabled"] is False, name
        time.sleep(6)
        assert len(server.requests) == 2  # and the stopped loop asked nothing more
    finally:
        lab.execute("%config FixLoop.api_base = ''")


def test_the_cells_below_sent_by_jupyterlab_are_regression_checks(lab, fake_model):
    """JupyterLab sends the cells below a `%%fixloop` cell that ran without error just before it runs
    (`following`): a candidate that breaks one of them fails, and its receipt names that cell."""
    breaks_below = (
        "```python\nmonthly_sales = [str(v) for v in monthly_sales]\ngrand = sum(int(v) for v in monthly_sales)\n```"
    )
    server = fake_model(breaks_below, "```python\ngrand = sum(monthly_sales)\n```")
    lab.execute(f"import os\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n%config FixLoop.api_base = '{server.url}'")
    cell = "%%fixloop -m openai/scripted --no-rules -r 2\ngrand = sum(monthly_sale)"
    try:
        lab.send_comm(lab.fixloop_comm, {"action": "following", "cell_id": "cell-10",
                                         "cells": ["half = monthly_sales[0] / 2\n", "print(half)\n"]})
        _, summary, _ = run_loop(lab, cell, cell_id="cell-10")
        # the cells below ran after the original cell too and do not read `grand`: regression checks, not
        # evidence (issue 38), so the fix that keeps them running is unverified
        assert summary["status"] == "unverified", summary["reason"]
        assert summary["patched"].rstrip("\n") == "grand = sum(monthly_sales)"
        first = summary["rounds"][0]["receipt"]
        assert first["kind"] == "check_failed"
        assert "following cell 1 (`half = monthly_sales[0] / 2`)" in first["text"] and "TypeError" in first["text"]
        assert summary["reason"].endswith("; 2 later cells still run, but ran after the original cell too and read "
                                          "nothing the code wrote: a regression check, not evidence")
        assert "following cell 1" in server.prompt(1)
        # taken once: the same cell run again without a new message has no cells below
        _, again, _ = run_loop(lab, "%%fixloop\ngrand = sum(monthly_sales)", cell_id="cell-10")
        assert again["status"] == "passed" and "no checks were given" in again["reason"]
    finally:
        lab.execute("%config FixLoop.api_base = ''")


def test_a_following_message_of_the_wrong_shape_is_ignored(lab):
    passing = "%%fixloop\nsmall = 1"
    lab.send_comm(lab.fixloop_comm, {"action": "following", "cell_id": "cell-11", "cells": ["assert small == 1"]})
    for bad in ({"cells": "assert small == 1"}, {"cells": [1, 2]}, {"cells": ["x = 1"] * 21},
                {"cells": ["x" * 20_001]}, {"cells": ["x = 1\n" * 3000] * 7}, {}):
        msgs = lab.send_comm(lab.fixloop_comm, {"action": "following", "cell_id": "cell-11", **bad})
        assert not [m for m in msgs if m["msg_type"] in ("error", "stream")], msgs
    for bad_id in (None, 7, ""):
        lab.send_comm(lab.fixloop_comm, {"action": "following", "cell_id": bad_id, "cells": ["assert small == 2"]})
    # the last word on cell-11 was a bad list: the good one before it is dropped too
    _, summary, _ = run_loop(lab, passing, cell_id="cell-11")
    assert summary["status"] == "passed" and "no checks were given" in summary["reason"]
    # a list for another cell is not taken by this one, and stays for its own cell
    lab.send_comm(lab.fixloop_comm, {"action": "following", "cell_id": "cell-12", "cells": ["assert small == 1"]})
    _, other, _ = run_loop(lab, passing, cell_id="cell-13")
    assert "no checks were given" in other["reason"]
    _, own, _ = run_loop(lab, passing, cell_id="cell-12")
    assert own["reason"].endswith("its 1 check passes (following cell 1 (`assert small == 1`): it reads `small`, "
                                  "which the code wrote, and its asserts pass); it is the sandbox's own report, "
                                  "unsigned"), own["reason"]


PLAIN = "total = sum(monthly_sale)\nprint('the total is', total)"


def run_fix_button(lab, cell_id: str, source: str = PLAIN):
    """What the extension's Fix button sends for a plain cell that failed (docs/protocol.md, "The Fix button")."""
    msgs, reply = lab.execute(f"%%fixloop --dry\n{source}", cell_id=cell_id, metadata={"fixloop": "fix"},
                              store_history=False)
    assert reply["content"]["status"] == "ok", msgs
    bundle = result_bundle(msgs)
    return bundle[WIDGET_MIME]["model_id"], bundle[MIME], msgs


def test_the_fix_button_loop_proposes_the_code_alone_and_the_frontend_reruns_the_cell(lab):
    root, summary, _ = run_fix_button(lab, "plain-1")
    assert summary["status"] == "unverified" and summary["cell_id"] == "plain-1"
    assert summary["original"] == PLAIN and summary["patched"].rstrip("\n") == FIXED
    assert "in place and runs it" in lab.texts(root)
    before = len(lab.fixloop_messages("replace"))
    msgs = lab.click("fixloop-accept", root)
    replace = lab.fixloop_messages("replace")[before]
    # the plain cell gets the code alone (no %%fixloop line) and the frontend runs it: the kernel did not
    assert replace["source"] == FIXED and replace["expected"] == PLAIN and replace["run"] is True
    assert not [m for m in msgs if m["msg_type"] == "stream"], msgs
    assert lab.fixloop_messages("decision")[-1]["via"] == "button"
    lab.send_comm(lab.fixloop_comm, {"action": "replaced", "request_id": replace["request_id"], "ok": True,
                                     "error": None})
    assert "runs again" in lab.texts(root)
    lab.send_comm(lab.fixloop_comm, {"action": "decide", "loop_id": summary["loop_id"], "decision": "undo"})
    undo = lab.fixloop_messages("replace")[-1]
    assert undo["source"] == PLAIN and undo["decision"] == "undone" and "run" not in undo
    assert lab.fixloop_messages("decision")[-1] == {"action": "decision", "loop_id": summary["loop_id"],
                                                    "decision": "undone", "via": "sidebar"}


def test_a_fix_button_loop_whose_cell_was_edited_shows_the_code_and_runs_nothing(lab):
    root, _, _ = run_fix_button(lab, "plain-2")
    lab.click("fixloop-accept", root)
    replace = lab.fixloop_messages("replace")[-1]
    msgs = lab.send_comm(lab.fixloop_comm, {"action": "replaced", "request_id": replace["request_id"], "ok": False,
                                            "error": "the cell was edited since; not overwriting it"})
    assert not [m for m in msgs if m["msg_type"] == "stream"], msgs
    text = lab.texts(root)
    assert "the cell was edited since" in text and "fixloop-code" in text and "sum(monthly_sales)" in text


def test_the_frontend_hears_which_model_the_fix_button_uses(lab):
    lab.execute("%config FixLoop.model = 'openai/gpt-4o-mini'")
    try:
        assert lab.fixloop_messages("model")[-1] == {"action": "model", "model": "openai/gpt-4o-mini"}
    finally:
        lab.execute("%config FixLoop.model = ''")
    assert lab.fixloop_messages("model")[-1] == {"action": "model", "model": "fixloop/builtin"}


def test_degraded_mode_shows_the_code_and_fixloop_last_inserts_it(lab):
    lab.close_comm(lab.fixloop_comm)  # the frontend has no extension: it closes the hello comm
    root, _, _ = run_loop(lab, cell_id="cell-6")
    assert "Degraded mode" in lab.texts(root)
    before = len(lab.fixloop_inbox)
    lab.click("fixloop-accept", root)
    assert len(lab.fixloop_inbox) == before  # nothing is sent on a closed comm
    text = lab.texts(root)
    assert "fixloop last" in text and "sum(monthly_sales)" in text and "fixloop-code" in text
    reply = lab.execute("%fixloop last")[1]
    payload = reply["content"]["payload"]
    assert payload and payload[0]["source"] == "set_next_input"
    assert payload[0]["text"] == FIXED
    # undo in degraded mode: `%fixloop last` now gives back the exact original cell
    lab.click("fixloop-undo", root)
    assert lab.execute("%fixloop last")[1]["content"]["payload"][0]["text"] == CELL
    # %load_ext again opens a new hello comm, and an answer switches the mode back
    lab.execute("%reload_ext jupyter_fixloop")
    assert "Connected to jupyterlab" in lab.texts(root)



def test_where_independent_answers_differ_the_user_picks_the_other_result(lab, fake_model):
    same, other = "euro12[euro12.Goals > 6]", "euro12[euro12.Goals >= 4]"
    server = fake_model(*(f"```python\n{code}\n```" for code in (same, other, "euro12.query('Goals > 6')")))
    lab.execute("import os, pandas as pd\nos.environ['OPENAI_API_KEY'] = 'sk-test'\n"
                f"%config FixLoop.api_base = '{server.url}'\n"
                "euro12 = pd.DataFrame({'Team': ['Croatia', 'Denmark', 'Spain'], 'Goals': [4, 4, 12]})")
    try:
        root, first, _ = run_loop(lab, "%%fixloop -m openai/scripted --no-rules -r 1 --agreement-samples 3\n"
                                       "Which teams scored more than 6 goals?", cell_id="cell-agree")
        assert first["status"] == "unverified" and first["agreement"]["agreeing"] == 2, first["reason"]
        assert first["patched"].strip() == same and "2 of 3 independent answers give this result" in lab.texts(root)
        assert lab.state(lab.find("fixloop-pick", root))["disabled"] is False
        lab.click("fixloop-pick", root)
        picked = lab.fixloop_messages("loop")[-1]["loop"]
        assert picked["loop_id"] == first["loop_id"] and picked["patched"].strip() == other
        assert picked["status"] == "unverified" and picked["agreement"]["agreeing"] == 1
        assert "you picked the next result" in lab.texts(root)
        lab.click("fixloop-accept", root)
        assert lab.fixloop_messages("replace")[-1]["source"].endswith(other)
    finally:
        lab.execute("%config FixLoop.api_base = ''")


def _lines(diff_html: str, cls: str) -> list[str]:
    """The lines of class `cls` ("add", "del") of a drawn diff, as text."""
    import html as html_module

    rows = re.findall(rf'<span class="fixloop-{cls}">(.*?)</span>(?=<span class="fixloop-|</div>)', diff_html)
    return [html_module.unescape(re.sub(r"<[^>]+>", "", row))[1:] for row in rows]


def test_the_widget_draws_the_cell_against_exactly_what_accept_writes_and_runs(lab):
    """Round four, high: what you review is what runs. The widget's diff is drawn from the cell as it ran and
    the code Accept writes (the replace's source) and runs, not from a text kept beside them."""
    root, summary, _ = run_loop(lab, cell_id="cell-review")
    # the drawn diff, not the style block (sets iterate by hash)
    diff = next(lab.state(c)["value"] for c in lab.descendants(root)
                if '<pre class="fixloop-diff"' in lab.state(c).get("value", "")
                and lab.state(c)["_model_name"] == "HTMLModel")
    before = len(lab.fixloop_messages("replace"))
    lab.click("fixloop-accept", root)
    written = lab.fixloop_messages("replace")[before]["source"].split("\n", 1)[1]  # below the %%fixloop line
    assert _lines(diff, "add") == [line for line in written.splitlines() if line not in CELL.splitlines()]
    assert _lines(diff, "del") == [line for line in CELL.splitlines()[1:] if line not in written.splitlines()]
    assert _lines(diff, "add") == ["total = sum(monthly_sales)"]


def test_history_survives_a_kernel_restart(kernel, lab):
    """Last in this module: it restarts the shared kernel."""
    cell = "%%fixloop --expect 'n == 3'\nn = len(monthly_sale)"
    root, summary, _ = run_loop(lab, cell, cell_id="cell-r")
    lab.click("fixloop-reject", root)
    kernel.km.restart_kernel(now=True)
    kernel.kc.wait_for_ready(timeout=60)
    assert kernel.run("%load_ext jupyter_fixloop").ok
    listing = kernel.run("%fixloop history").text
    row = [line for line in listing.splitlines() if summary["loop_id"] in line]
    assert row and "fixed" in row[0] and "rejected" in row[0], listing
    assert os.environ["FIXLOOP_DATA_DIR"] in listing  # the test's scratch folder, not the user's
    detail = kernel.run(f"%fixloop history {summary['loop_id']}").text
    assert "%%fixloop --expect 'n == 3'\nn = len(monthly_sale)\n" in detail  # the exact original cell
    assert "proposed code:\nn = len(monthly_sales)" in detail


def test_the_widget_says_what_the_fix_does_to_the_data(lab):
    cell = ("%%fixloop\nimport pandas as pd\norders = pd.DataFrame({'qty': [1, 2, 3], 'price': [2.0, 3.0, 4.0]})\n"
            "orders['total'] = orders['qty'] * orders['prise']")
    root, summary, _ = run_loop(lab, cell, cell_id="cell-effect")
    assert summary["status"] == "unverified"  # no check: the header says nothing checked it
    text = lab.texts(root)
    assert "runs now — unverified" in text and "nothing checked it; read what it does to your data" in text
    assert "what it does to your data" in text and "orders: new DataFrame 3×3" in text  # shape, then its first rows


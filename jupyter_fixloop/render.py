"""Showing a loop's result without widgets: plain text and HTML with a highlighted diff.

The widget (widget.py) builds on these; frontends without widgets (nbconvert, a terminal) get the
HTML or the text. Colours use CSS variables of JupyterLab with fallbacks, so they read in light and
dark themes.
"""

from __future__ import annotations

import difflib
import html

from .hidden import clipped, code_lines, visible
from .hooks import ChecksRead, LoopEnd, LoopEvent, ModelWriting, RoundStart, RunStart
from .receipt.text import for_people, headline
from .result import LoopResult, unified_diff, written_aside

STATUS_TEXT = {
    "passed": "already passes",
    "fixed": "fixed",
    "unverified": "runs now — unverified",
    "gave_up": "gave up",
    "error": "error",
}


def escaped(text: str) -> str:
    """Text for HTML that may hold what a sandbox or a model wrote (stdout, a traceback, code, a reason quoting
    them): hidden characters as escapes first (hidden.py: a bidi override or a zero-width space is shown, not
    obeyed), then HTML-escaped. Each piece escapes its own text, whoever assembles the page."""
    return html.escape(visible(text))


def status_label(status: str, unchecked: bool = False) -> str:
    """The status in words; a cell that ran as written with nothing to check it (`unchecked`, from the
    result's account: LoopResult.unchecked) "already runs": it does not "pass" anything."""
    if status == "passed" and unchecked:
        return "already runs"
    return STATUS_TEXT.get(status, status)


def status_words(status: str, reason: str, unchecked: bool = False) -> str:
    """"fixed (after 1 round(s): its 1 check passes)", or for an unverified repair the header the issue
    asks for: "runs now — unverified: nothing checked it; read what it does to your data (...)"."""
    label = status_label(status, unchecked)
    if not reason:
        return label
    return f"{label}: {reason}" if status == "unverified" else f"{label} ({reason})"


def cost_text(cost: float) -> str:
    """A cost as every view shows it: "free" when nothing was paid (the built-in engine, a local model)."""
    return f"${cost:.4f}" if cost else "free"


def tokens_text(tokens: int) -> str:
    return f"{tokens} tokens" if tokens else "no tokens"


def usage_text(usage) -> str:
    """One round's or call's usage: tokens and model time when a model was called, and the sandbox run."""
    model = f"{usage.tokens} tokens, model {usage.seconds:.1f} s" if usage.tokens else "no tokens"
    return f"{model}, run {usage.run_seconds:.2f} s"


def summary_line(result: LoopResult) -> str:
    rounds = f"{len(result.rounds)}/{result.max_rounds} rounds"
    return (
        f"fixloop: {status_words(result.status, result.reason, result.unchecked)} — {rounds}, "
        f"model {result.model}, {tokens_text(result.tokens)}, {cost_text(result.cost)}, {result.seconds:.1f} s"
    )


NOT_APPLIED = "not applied: `%fixloop last` inserts it as the next cell"


def proposes(result: LoopResult) -> bool:
    """Whether the result holds code that differs from the cell: a fix the user has yet to apply."""
    return result.patched is not None and result.patched != result.source


def effect_lines(result: LoopResult) -> list[str]:
    """What the proposed code (or the cell, when it passed) does to the user's data, in a few lines."""
    effect = result.effect
    if effect is None or result.status not in ("passed", "fixed", "unverified"):
        return []
    return ["what it does to your data:"] + ["  " + line for line in effect.lines()]


OUTPUT_LINES = 8  # lines of what generated code printed, head


def output_lines(result: LoopResult) -> list[str]:
    """What generated code printed and the value of its last line, from the run that verified it:
    what a generation was asked for is often exactly that (`How many teams scored more than 6?`)."""
    if not result.instruction or result.status not in ("fixed", "unverified") or not result.rounds:
        return []
    receipt = result.rounds[-1].receipt
    out = []
    printed = receipt.stdout.rstrip("\n").splitlines()
    if printed:
        more = len(printed) - OUTPUT_LINES
        out += ["it printed:"] + ["  " + line for line in printed[:OUTPUT_LINES]]
        out += [f"  ... {more} more line(s)"] if more > 0 else []
    if receipt.value:
        out += ["its value:", "  " + receipt.value]
    return out


def read_check_lines(result: LoopResult) -> list[str]:
    """The checks read from the instruction, as shown before use, each with how the code did and how to make it
    the user's own; and how many independent answers agree (a fact about the samples, not a check)."""
    out = []
    for c in result.read_checks:
        out += [c.text, f"  yours, as evidence, with: --expect {c.expr!r}"]
    if result.agreement is not None:
        asking = f"; {result.agreement.asking}" if result.agreement.asking else ""
        out.append(f"agreement: {result.agreement.text} (a fact about the answers, not a check){asking}")
    return out


# each source of a pass that checks values (CheckOutcome.source), in words: (one, two or more); as the sidebar
# says them (labextension/src/account.ts)
SOURCE_WORDS = {
    "user": ("your check (--expect)", "your checks (--expect)"),
    "assert": ("an assert of your cell", "asserts of your cell"),
    "output": ("the expected output (--expect-output)", "the expected output (--expect-output)"),
    "saved": ("the output saved in the notebook", "the outputs saved in the notebook"),
    "stated": ("the output your instruction states", "the outputs your instruction states"),
    "following": ("a later cell's asserts", "later cells' asserts"),
}
BOUND_WORDS = {"rounds": "its rounds (max rounds)", "tokens": "its token bound", "budget": "its budget",
               "time": "its time bound", "repeated": "the model giving the same answer again"}


def checked_words(checked: tuple[str, ...]) -> str:
    """"checked by: 2 asserts of your cell; the output saved in the notebook", in the order first met."""
    counts: dict[str, int] = {}
    for source in checked:
        counts[source] = counts.get(source, 0) + 1
    parts = [SOURCE_WORDS.get(s, (s, s))[0] if n == 1 else f"{n} {SOURCE_WORDS.get(s, (s, s))[1]}"
             for s, n in counts.items()]
    return "checked by: " + "; ".join(parts)


def _kept_words(result: LoopResult) -> str:
    """What the loop kept: the code handed over (which round's, who wrote it), or the cell as it was."""
    if result.patched is None or not result.claimed:
        return "kept: the cell as written (no candidate is handed over)"
    for r in reversed(result.rounds):
        if r.candidate is not None and r.candidate.strip() == result.patched.strip():
            return f"kept: round {r.index}'s candidate, by {r.writer}"
    return "kept: the code handed over"


def account_lines(result: LoopResult) -> list[str]:
    """What the result rests on, from its account (LoopResult.account): what checked its values (or that nothing
    did, for a claim), the later cells that only run now, the library's warnings, what the guard took out of the
    code handed over, what was kept, and which bound ended a loop that gave up. [] without an account."""
    a = result.account
    if a is None:
        return []
    out = [checked_words(a.checked)] if a.checked else (
        ["checked by: nothing of yours checked its values"] if result.claimed else [])
    if a.runs_now:
        out.append(f"runs now, checks no values (no evidence): {'; '.join(a.runs_now)}")
    out += [f"the library warns about its result (evidence against): {d.said}" for d in a.doubts]
    g = a.guarded
    removed = [f"{g.checks} statement{'' if g.checks == 1 else 's'} copied from your checks"] if g.checks else []
    removed += [f"the model's example copy of {_names(g.examples)}"] if g.examples else []
    removed += [f"the model's own values for {_names(g.made_up)}"] if g.made_up else []
    if removed:
        out.append("the guard took out: " + "; ".join(removed))
    if result.status != "passed":
        out.append(_kept_words(result))
    if a.bound:
        out.append(f"stopped by: {BOUND_WORDS.get(a.bound, a.bound)}")
    return out


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def candidate_lines(r) -> list[str]:
    """Every candidate of round `r` (the model's answers, the rules' repair) and how each ended, the one carried
    on marked; [] when the round had one candidate (its receipt says how it ended). Whole lines: the report is
    where a reason is read in full."""
    if len(r.samples) < 2:
        return []
    out = []
    for s in r.samples:
        who = s.writer + (f" at T={s.temperature:g}" if s.temperature is not None and s.source != "rules" else "")
        who += f" (choice {s.choice + 1} of the request above)" if s.choice else ""
        carried = " (carried on)" if s.code is not None and (s.code or "").strip() == (r.candidate or "").strip() \
            and s.kind == r.receipt.kind else ""
        how = s.kind or "not run"
        verdict = " ".join(s.verdict.split())
        out.append(f"{who}{carried}: {how}" + (f": {verdict}" if verdict and verdict != how else ""))
    return out


def _rival_heading(result: LoopResult, who: str) -> str:
    """The heading of an unverified result's rival: the next result of the answers grouped, or another candidate."""
    a = result.agreement
    if a is not None and len(a.groups) > 1:
        return (f"the next result, which {a.groups[1]} of {a.answers} independent answers give ({who}); "
                "the two differ, pick one:")
    return f"another candidate that also runs ({who}), nothing tells which is right:"


def alternative_lines(result: LoopResult) -> list[str]:
    """An unverified repair's rivals: other candidates of its round that also ran, their code and effect."""
    out = []
    for s in result.alternatives:
        who = s.writer
        out += ["", _rival_heading(result, who)]
        out += ["  " + line for line in unified_diff(result.source, s.code or "", "original", who).splitlines()]
        if s.effect:
            out += ["  what it does to your data:"] + ["    " + line for line in s.effect.splitlines()]
    return out


def alternatives_html(result: LoopResult) -> str:
    parts = []
    for s in result.alternatives:
        who = s.writer
        effect = (f'<div>what it does to your data:</div><pre class="fixloop-receipt">{escaped(s.effect)}</pre>'
                  if s.effect else "")
        parts.append(f'<div class="fixloop-alternative"><b>{escaped(_rival_heading(result, who))}</b>'
                     f"{diff_html(result.source, s.code or '')}{effect}</div>")
    return "".join(parts)


def read_checks_html(result: LoopResult) -> str:
    """`read_check_lines` as HTML (the widget and the plain HTML result)."""
    lines = read_check_lines(result)
    return "".join(f'<div class="fixloop-note">{escaped(line.strip())}</div>' for line in lines)


def effect_html(result: LoopResult) -> str:
    """What the code printed (a generation) and what it does to the data, as HTML."""
    parts = []
    for lines in (_sections(output_lines(result)), [effect_lines(result)]):
        for block in lines:
            if block:
                parts.append(f'<div class="fixloop-effect"><b>{escaped(block[0])}</b><pre class="fixloop-receipt">'
                             f'{escaped(chr(10).join(line[2:] for line in block[1:]))}</pre></div>')
    return "".join(parts)


def _sections(lines: list[str]) -> list[list[str]]:
    """Lines split where an unindented heading starts (`it printed:`, `its value:`)."""
    blocks: list[list[str]] = []
    for line in lines:
        if not line.startswith(" ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks


def render_text(result: LoopResult) -> str:
    """What a terminal or a plain-text frontend shows."""
    out = [summary_line(result)]
    if proposes(result):
        out.append(NOT_APPLIED)
    out += read_check_lines(result)
    out += output_lines(result)
    out += effect_lines(result)
    out += alternative_lines(result)
    if result.first is not None and result.status != "passed":
        out.append("")
        out.append("original run:")
        out += ["  " + line for line in for_people(result.first).splitlines()]
    for r in result.rounds:
        out.append("")
        out.append(f"{round_title(r)} ({usage_text(r.usage)})")
        if r.samples:
            out.append("  " + samples_line(r))
        out += ["  " + line for line in for_people(r.receipt).splitlines()]
    if result.diff:
        out.append("")
        out.append(result.diff.rstrip("\n"))
    for note in result.notes:
        out.append(note)
    return visible("\n".join(out))  # a sandbox's text and the code as escapes: a terminal acts on neither


def diff_html(before: str, after: str) -> str:
    """A unified diff as HTML: added and removed lines on coloured backgrounds, code highlighted."""
    text = unified_diff(before, after)
    if not text:
        return '<pre class="fixloop-diff fixloop-nodiff">(no change)</pre>'
    rows = []
    for line in text.splitlines():
        cls = "ctx"
        if line.startswith("+++") or line.startswith("---"):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        rows.append(f'<span class="fixloop-{cls}">{_highlight_line(line, cls)}</span>')
    # block rows, no newlines between them: a newline after an inline-block row in <pre> drew a gap
    return f'<pre class="fixloop-diff"><div class="fixloop-rows">{"".join(rows)}</div></pre>'


def _highlight_line(line: str, cls: str) -> str:
    if cls not in ("add", "del", "ctx") or not line:
        return html.escape(line)
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    body = highlight(line[1:], PythonLexer(), HtmlFormatter(nowrap=True)).rstrip("\n")
    return html.escape(line[0]) + body


STYLE = """<style>
.fixloop-box{font-family:var(--jp-ui-font-family,sans-serif);font-size:var(--jp-ui-font-size1,13px);
 color:var(--jp-ui-font-color1,inherit);border:1px solid var(--jp-border-color2,#ccc);border-radius:4px;
 padding:6px 10px}
.fixloop-diff{font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px);
 background:var(--jp-layout-color1,transparent);padding:4px;margin:4px 0;overflow-x:auto}
.fixloop-rows{display:inline-block;min-width:100%}
.fixloop-rows>span{display:block;white-space:pre;min-height:1.2em}
.fixloop-note{color:var(--jp-ui-font-color2,#666);font-size:var(--jp-ui-font-size0,11px)}
.fixloop-add{background:var(--jp-diff-added-color, rgba(46,160,67,.22))}
.fixloop-del{background:var(--jp-diff-deleted-color, rgba(248,81,73,.22))}
.fixloop-hunk{color:var(--jp-ui-font-color2,#888)}
.fixloop-file{color:var(--jp-ui-font-color2,#888);font-weight:bold}
.fixloop-status-fixed,.fixloop-status-passed{color:var(--jp-success-color1,#2e7d32);font-weight:bold}
.fixloop-status-unverified{color:var(--jp-warn-color1,#e65100);font-weight:bold}
.fixloop-status-gave_up,.fixloop-status-error{color:var(--jp-error-color1,#c62828);font-weight:bold}
.fixloop-diff .k,.fixloop-diff .kn,.fixloop-diff .kc,.fixloop-diff .kd,.fixloop-diff .kr,.fixloop-diff .ow
 {color:var(--jp-mirror-editor-keyword-color,#008000);font-weight:bold}
.fixloop-diff .nb,.fixloop-diff .bp{color:var(--jp-mirror-editor-builtin-color,#008000)}
.fixloop-diff .s,.fixloop-diff .s1,.fixloop-diff .s2,.fixloop-diff .sd,
.fixloop-diff .sa,.fixloop-diff .se,.fixloop-diff .si
 {color:var(--jp-mirror-editor-string-color,#ba2121)}
.fixloop-diff .m,.fixloop-diff .mi,.fixloop-diff .mf,.fixloop-diff .mh,.fixloop-diff .mo
 {color:var(--jp-mirror-editor-number-color,#080)}
.fixloop-diff .c,.fixloop-diff .c1,.fixloop-diff .cm
 {color:var(--jp-mirror-editor-comment-color,#408080);font-style:italic}
.fixloop-diff .o{color:var(--jp-mirror-editor-operator-color,#aa22ff)}
.fixloop-diff .nf,.fixloop-diff .fm,.fixloop-diff .nc{color:var(--jp-mirror-editor-def-color,#00f)}
.fixloop-receipt
 {font-family:var(--jp-code-font-family,monospace);white-space:pre-wrap;font-size:12px;margin:2px 0 6px 0}
</style>"""


def render_html(result: LoopResult) -> str:
    """The whole result as one HTML block (used where widgets are not available)."""
    parts = [STYLE, '<div class="fixloop-box">']
    status = status_label(result.status, result.reason)
    sep = ":" if result.status == "unverified" else " —"
    parts.append(f'<div><span class="fixloop-status-{result.status}">fixloop: {escaped(status)}</span>{sep} '
                 f"{escaped(result.reason)}</div>")
    parts.append(f"<div>{len(result.rounds)}/{result.max_rounds} rounds · model "
                 f"<code>{escaped(result.model)}</code>"
                 f" · {tokens_text(result.tokens)} · {cost_text(result.cost)} · {result.seconds:.1f} s</div>")
    parts.append(notes_html(result.notes))
    if proposes(result):
        parts.append(f"<div><b>{html.escape(NOT_APPLIED)}</b></div>")
    parts.append(read_checks_html(result))
    parts.append(effect_html(result))
    if result.patched is not None and result.patched != result.source:
        parts.append(diff_html(result.source, result.patched))
    parts.append(alternatives_html(result))
    parts.append(rounds_html(result))
    parts.append("</div>")
    return visible("\n".join(parts))  # bidi overrides and zero-width characters shown as escapes, not obeyed


def notes_html(notes) -> str:
    """Notes on how the loop ran (which confinement the candidates had): small, under the header."""
    return "".join(f'<div class="fixloop-note">{escaped(note)}</div>' for note in notes)


def round_title(r) -> str:
    """"round 2: check_failed", and who wrote the candidate when it was not the model."""
    return f"round {r.index}{written_aside(r.source, r.model_written)}: {r.receipt.kind}"


def samples_line(r) -> str:
    """A round's samples in one line (those asked: one that passes ends the asking), each one's temperature
    and how its run went."""
    each = ", ".join(f"{'rules' if s.source == 'rules' else f'T={s.temperature:g}'} {s.kind or '?'}" for s in r.samples)
    return f"samples: {each}"


def rounds_html(result: LoopResult, candidates: bool = False) -> str:
    """The original run and each round, collapsed; a loop that gave up shows the original run open (it says why).
    `candidates`: each round lists every candidate and how it ended (`candidate_lines`; the report's)."""
    items, shown = [], ""
    if result.first is not None and result.status != "passed":
        original = _receipt_html("original run", for_people(result.first))
        if result.status == "gave_up":
            shown = original
        else:
            items.append(original)
    previous = result.source
    for r in result.rounds:
        title = round_title(r) + (f" ({samples_line(r)})" if r.samples else "")
        body = ""
        if r.candidate is not None:
            if (previous, r.candidate) != (result.source, result.patched):  # else the diff shown above, again
                body = diff_html(previous, r.candidate)
            previous = r.candidate
        every = candidate_lines(r) if candidates else []
        items.append(_receipt_html(title, for_people(r.receipt), body) + (
            "<div>every candidate of this round, and how it ended:</div><ul>"
            + "".join(f"<li>{escaped(line)}</li>" for line in every) + "</ul>" if every else ""))
    if not items:
        return shown
    return shown + "<details><summary>rounds and receipts</summary>" + "".join(items) + "</details>"


def _receipt_html(title: str, text: str, diff: str = "") -> str:
    """A receipt under its title: what the sandbox reported, hidden characters as escapes (`escaped`)."""
    return (f"<div><b>{escaped(title)}</b>{diff}"
            f'<pre class="fixloop-receipt">{escaped(text)}</pre></div>')


# ---------------------------------------------------------------- pieces of the widget (widget.py)


def receipt_block(receipt) -> str:
    """A receipt as people read it (every detail, hidden characters escaped), as the widget shows it."""
    return f'<pre class="fixloop-receipt">{escaped(for_people(receipt))}</pre>'


def widget_header_html(result: LoopResult) -> str:
    """The widget's header of a loop's result (hidden characters escaped)."""
    return STYLE + WIDGET_STYLE + visible(result_header_html(result))


def widget_effect_html(result: LoopResult) -> str:
    """What the fix did to the data and the other candidates, as the widget shows them (hidden characters escaped)."""
    return visible(read_checks_html(result) + effect_html(result) + alternatives_html(result))


def original_section_title(receipt) -> str:
    """The title of the widget's section on the original cell's run: its headline (hidden characters escaped)."""
    return visible(f"original run: {headline(receipt)}")


def round_section_title(r) -> str:
    """The title of a round's section in the widget: the round, and its receipt's headline (hidden characters
    escaped)."""
    return visible(f"{round_title(r)} — {clipped(headline(r.receipt), 80)}")


WIDGET_STYLE = """<style>
.fixloop-side{border-collapse:collapse;width:100%;font-family:var(--jp-code-font-family,monospace);
 font-size:var(--jp-code-font-size,12px);table-layout:fixed}
.fixloop-side td{white-space:pre-wrap;overflow-wrap:anywhere;padding:0 4px;vertical-align:top}
.fixloop-side td.fixloop-num{width:2.5em;text-align:right;color:var(--jp-ui-font-color2,#888);user-select:none}
.fixloop-side td.fixloop-sign{padding:0 2px;user-select:none}
.fixloop-side th{text-align:left;color:var(--jp-ui-font-color2,#888);font-weight:normal}
.fixloop-head{line-height:1.6}
.fixloop-activity{color:var(--jp-ui-font-color2,#666);font-style:italic}
.fixloop-state{padding:4px 8px;margin:4px 0;border-left:4px solid var(--jp-border-color1,#999)}
.fixloop-state-pending{border-left-color:var(--jp-warn-color1,#e65100)}
.fixloop-state-accepted{border-left-color:var(--jp-success-color1,#2e7d32)}
.fixloop-state-rejected,.fixloop-state-undone{border-left-color:var(--jp-border-color1,#999)}
.fixloop-state-running{border-left-color:var(--jp-brand-color1,#1976d2)}
.fixloop-mode{color:var(--jp-ui-font-color2,#666);font-size:var(--jp-ui-font-size0,11px)}
.fixloop-code{font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px);
 white-space:pre;overflow-x:auto;padding:4px;border:1px dashed var(--jp-border-color1,#999);user-select:all}
</style>"""


def header_html(*, status: str, reason: str = "", rounds: int = 0, max_rounds: int = 0, model: str = "",
                tokens: int = 0, cost: float = 0.0, seconds: float = 0.0, activity: str = "",
                unchecked: bool = False) -> str:
    """The widget's header: status, rounds used of max, model, tokens, cost, elapsed; live while running."""
    label = "running" if status == "running" else status_label(status, unchecked)
    why = f"{':' if status == 'unverified' else ' —'} {escaped(reason)}" if reason else ""
    now = (
        f'<div class="fixloop-activity" role="status" aria-live="polite">{escaped(activity)}</div>'
        if activity
        else ""
    )
    return (f'<div class="fixloop-head"><span class="fixloop-status-{html.escape(status)}">fixloop: '
            f'{escaped(label)}</span>{why}'
            f"<div>{rounds}/{max_rounds} rounds · model <code>{escaped(model)}</code> · {tokens_text(tokens)} · "
            f"{cost_text(cost)} · {seconds:.1f} s</div>{now}</div>")


def result_header_html(result: LoopResult) -> str:
    return header_html(status=result.status, reason=result.reason, rounds=len(result.rounds),
                       max_rounds=result.max_rounds, model=result.model, tokens=result.tokens, cost=result.cost,
                       seconds=result.seconds, unchecked=result.unchecked) + notes_html(result.notes)


def activity_text(event: LoopEvent) -> str:
    """What a loop event means, in words ('round 2 of 4: asking the model')."""
    if isinstance(event, LoopEnd):
        return "finishing"
    if isinstance(event, ChecksRead):
        return "; ".join(c.text for c in event.checks)
    k = event.round
    where = "original cell" if k == 0 else f"round {k} of {event.max_rounds}"
    if isinstance(event, RoundStart):
        return f"{where}: asking the model"
    if isinstance(event, ModelWriting):
        rate = f", {event.rate:.1f} tokens/s)" if event.rate else ")"
        return f"{where}: the model is writing ({event.tokens} tokens{rate}"
    if isinstance(event, RunStart):
        return f"{where}: running {'the cell' if k == 0 else 'the candidate'} in a sandbox"
    return f"{where}: {headline(event.receipt)}"


def side_by_side_html(before: str, after: str) -> str:
    """Original left, proposed right; changed lines marked -/+ as well as coloured, code highlighted."""
    a, b = code_lines(before), code_lines(after)
    if a == b:
        return '<pre class="fixloop-diff fixloop-nodiff">(no change)</pre>'
    rows = ['<tr><th></th><th></th><th>original</th><th></th><th></th><th>proposed</th></tr>']
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            left = i1 + k if i1 + k < i2 else None
            right = j1 + k if j1 + k < j2 else None
            changed = tag != "equal"
            rows.append("<tr>" + _side_cells(a, left, "del" if changed else "ctx")
                        + _side_cells(b, right, "add" if changed else "ctx") + "</tr>")
    cols = '<col style="width:3em"><col style="width:1.6em"><col>' * 2
    return f'<table class="fixloop-diff fixloop-side"><colgroup>{cols}</colgroup>{"".join(rows)}</table>'


def _side_cells(lines: list[str], index: int | None, cls: str) -> str:
    if index is None:
        return '<td class="fixloop-num"></td><td class="fixloop-sign"></td><td></td>'
    sign = {"del": "-", "add": "+"}.get(cls, " ")
    code = _highlight_line(" " + lines[index], "ctx")[1:] if lines[index] else ""
    return (f'<td class="fixloop-num">{index + 1}</td><td class="fixloop-sign fixloop-{cls}">{sign}</td>'
            f'<td class="fixloop-{cls}">{code}</td>')

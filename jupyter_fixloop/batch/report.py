"""What batch mode hands back to a person: the report (Markdown or HTML), the terminal summary, and
the `fixloop` record kept in each repaired cell's metadata (a LoopSummary, see docs/protocol.md).

The report is for review: every change with its diff and the receipts that justified it, so a fix
can be checked without rerunning anything.
"""

from __future__ import annotations

import html
import os

from ..hidden import clipped, visible
from ..receipt import text as receipt_text
from ..render import (
    STYLE,
    account_lines,
    candidate_lines,
    cost_text,
    diff_html,
    effect_html,
    effect_lines,
    read_check_lines,
    round_title,
    rounds_html,
    status_label,
    tokens_text,
)

ICON = {"ok": "ok", "fixed": "fixed", "unverified": "runs now, unverified", "looks_wrong": "runs, but looks wrong",
        "proposed": "fix proposed, not run", "example": "raised when saved too (the author's example)",
        "failed": "FAILED", "rejected": "rejected", "skipped": "skipped"}
STATUSES = ("ok", "fixed", "unverified", "looks_wrong", "proposed", "example", "failed", "rejected", "skipped")
COUNTED = {"looks_wrong": "looking wrong", "example": "raising as saved (the author's examples)"}


def headline(batch) -> str:
    """One sentence: did every cell run, and how the cells went."""
    counts = ", ".join(f"{batch.count(s)} {COUNTED.get(s, s)}" for s in STATUSES if batch.count(s))
    doubts = [words for status, words in (("unverified", "nothing checked some repairs"),
                                          ("looks_wrong", "some cells look wrong")) if batch.count(status)]
    verdict = "some cells could not be fixed" if not batch.ok else (
        "every cell runs" if not doubts else f"every cell runs, but {' and '.join(doubts)}")
    if batch.ok and batch.count("example"):
        verdict = verdict.replace("every cell runs", "every cell runs or raises as saved", 1)
    if batch.stopped:
        verdict = (f"stopped by {batch.stopped} after {len(batch.outcomes)} of {batch.code_cells} code cells "
                   "(the cells after them did not run and are kept as they were)")
    cost = f", ${batch.cost:.4f}" if batch.cost else ""
    return (f"{verdict}: {counts} ({len(batch.outcomes)} code cells, {batch.seconds:.1f} s, "
            f"model {batch.model}, {batch.tokens} tokens{cost}); {cells_run(batch)}")


def stopped_line(batch, output: str, report: str | None) -> str:
    """The one line a stopped run prints: where what was done so far went."""
    where = f"{output}" + (f", report {report}" if report else "")
    return (f"jupyter-fixloop run: {batch.path}: stopped by {batch.stopped} after {len(batch.outcomes)} of "
            f"{batch.code_cells} code cells; what was done so far is written: {where} (the cells not reached are "
            "kept as they were)")


def cells_run(batch) -> str:
    """"N cells run (plain Jupyter: M)": cells that ran without error, here and in a plain run."""
    plain = "not counted" if batch.plain is None else str(batch.plain)
    unknown = f"; {batch.plain_unknown} unknown" if batch.plain is not None and batch.plain_unknown else ""
    return f"{batch.cells_run} cells run (plain Jupyter: {plain}{unknown})"


def verified_by(batch) -> str:
    """"repairs run, by what verified them: 2 the saved output, ..." ("" when no repair ran)."""
    fixes = [o for o in batch.outcomes if o.status in ("fixed", "unverified")]
    if not fixes:
        return ""
    counts = [(sum(o.verified_by == by and o.status == "fixed" for o in fixes), words) for by, words in (
        ("saved output", "the output saved in the notebook"), ("following cell", "a later cell that asserts"),
        ("check", "a check"))]
    counts.append((sum(o.status == "unverified" or not o.verified_by for o in fixes), "nothing"))
    return "repairs run, by what verified them: " + ", ".join(f"{n} {words}" for n, words in counts if n)


def summary_text(batch, output: str, report: str | None, backup: str | None) -> str:
    """What the command prints when it is done."""
    lines = [f"fixloop run {batch.path}: {headline(batch)}"]
    if batch.judged_note:  # said once, beside the headline: no word of it claims more than was verified
        lines.append(f"  note: {batch.judged_note}")
    for o in batch.outcomes:
        if o.status != "ok" or o.reason:
            lines.append(f"  {o.title} -- {ICON[o.status]}" + (f": {_one_line(o.reason)}" if o.reason else ""))
    if backup:
        lines.append(f"backup of the original: {backup}")
    lines.append(f"patched notebook: {output}")
    if report:
        lines.append(f"report: {report}")
    return visible("\n".join(lines))


def write_report(batch, path: str, output: str) -> None:
    """Markdown or HTML, by the extension of `path`."""
    text = html_report(batch, output) if path.lower().endswith((".html", ".htm")) else markdown_report(batch, output)
    with open(path, "w", encoding="utf-8") as f:
        f.write(visible(text))  # read in a terminal (`cat`) or a browser: hidden characters as escapes


# ---------------------------------------------------------------- Markdown


def markdown_report(batch, output: str) -> str:
    out = [f"# fixloop report: {os.path.basename(batch.path)}", "",
           f"**{headline(batch)}**", "",
           f"- notebook: `{batch.path}`", f"- patched notebook: `{output}`",
           f"- {cells_run(batch)}: cells that ran without error; plain Jupyter's count {batch.plain_how}",
           *([f"- {batch.kernel_note}"] if batch.kernel_note else []),
           *([f"- {batch.judged_note}"] if batch.judged_note else []),
           *([f"- {verified_by(batch)}"] if verified_by(batch) else []), "",
           "| cell | status | rounds | tokens | cost | time | code |", "|---|---|---|---|---|---|---|"]
    for o in batch.outcomes:
        r = o.result
        rounds = f"{len(r.rounds)}/{r.max_rounds}" if r else ""
        tokens = str(r.tokens) if r else ""
        cost = cost_text(r.cost) if r else ""
        first = o.title.split(": ", 1)[1]
        out.append(f"| {o.number} | {ICON[o.status]} | {rounds} | {tokens} | {cost} | {o.seconds:.1f} s | "
                   f"{_md_cell(first)} |")
    for o in batch.outcomes:
        if o.status != "ok" or o.reason:
            out += ["", *_md_section(o)]
    return "\n".join(out) + "\n"


def _md_section(o) -> list[str]:
    out = [f"## Cell {o.number}: {ICON[o.status]}", ""]
    if o.error:
        out.append(f"- {_failed_with(o)}: `{_one_line(o.error)}`")
    if o.reason:
        out.append(f"- {_whole_line(o.reason)}")
    r = o.result
    if r is not None:
        out.append(f"- loop: {status_label(r.status, r.unchecked)}, {len(r.rounds)}/{r.max_rounds} rounds, "
                   f"model `{r.model}`, {tokens_text(r.tokens)}, {cost_text(r.cost)}, {r.seconds:.1f} s")
        out += [f"- {line.strip()}" for line in read_check_lines(r)]  # checks read from an instruction, agreement
        out += [f"- {line}" for line in account_lines(r)]  # what its status rests on, as its account holds it
    effect = effect_lines(r) if r is not None else []
    if effect:
        out += ["", f"- {effect[0]}", "", *_md_block("\n".join(line[2:] for line in effect[1:]))]
    if o.module_diff:
        out += ["", f"The repair of `{o.module_file}` proposed (not applied; written beside the output notebook):",
                "", "```diff", o.module_diff.rstrip("\n"), "```"]
    if o.patched is not None and o.patched != o.source:
        out += ["", "```diff", _cell_diff(o.source, o.patched).rstrip("\n"), "```"]
    elif o.status != "skipped":
        out += ["", "```python", o.source.rstrip("\n"), "```"]
    if r is not None:
        out += ["", "Receipts:"]
        if r.first is not None:
            out += ["", "- original cell, in the sandbox:", "", *_md_block(receipt_text.for_people(r.first))]
        for rnd in r.rounds:
            out += ["", f"- {round_title(rnd)} ({tokens_text(rnd.usage.tokens)}, {cost_text(rnd.usage.cost)})",
                    "", *_md_block(receipt_text.for_people(rnd.receipt)), *_candidates(rnd)]
    return out


def _candidates(rnd) -> list[str]:
    """Every candidate of a round and how each ended (render.candidate_lines), not only the one carried on."""
    lines = candidate_lines(rnd)
    return ["", "  every candidate of this round, and how it ended:", "", *(f"  - {line}" for line in lines)] \
        if lines else []


def _failed_with(o) -> str:
    return "raised in the notebook, as when it was saved" if o.status == "example" else "failed in the notebook with"


def _md_block(text: str) -> list[str]:
    fence = "````" if "```" in text else "```"
    return ["  " + fence + "text", *("  " + line for line in text.rstrip("\n").splitlines()), "  " + fence]


def _md_cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`" if text else ""


def _one_line(text: str) -> str:
    return clipped(_whole_line(text), 300)


def _whole_line(text: str) -> str:
    """A cell's reason in its own section of the report: on one line, whole (the terminal and the summary
    list cut it at a word; this is where the rest is read)."""
    return " ".join(text.split())


def _cell_diff(before: str, after: str) -> str:
    from ..result import unified_diff

    return unified_diff(before, after, "original", "fixed")


# ---------------------------------------------------------------- HTML


def html_report(batch, output: str) -> str:
    return _html_document(f"fixloop report: {os.path.basename(batch.path)}", _html_body(batch, output, 1))


def combined_report(items, path: str) -> None:
    """One report for several notebooks (`items`: (BatchResult, output path)), Markdown or HTML by `path`."""
    ok = sum(batch.ok for batch, _ in items)
    title = f"fixloop report: {len(items)} notebooks, {ok} running in full"
    if path.lower().endswith((".html", ".htm")):
        text = _html_document(title, f"<h1>{html.escape(title)}</h1>\n" + "\n".join(
            _html_body(batch, output, 2) for batch, output in items))
    else:
        parts = [f"# {title}", ""] + [f"- `{batch.path}`: {headline(batch)}" for batch, _ in items]
        for batch, output in items:
            parts += [
                "",
                markdown_report(batch, output)
                .replace("\n# ", "\n## ")
                .replace("# fixloop report", "## fixloop report", 1),
            ]
        text = "\n".join(parts) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(visible(text))


def _html_document(title: str, body: str) -> str:
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
{STYLE}
<style>
body{{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}
.s-ok,.s-fixed{{color:#2e7d32;font-weight:bold}}
.s-unverified,.s-looks_wrong,.s-proposed{{color:#e65100;font-weight:bold}} .s-example{{color:#1565c0}}
.s-failed,.s-rejected,.s-skipped{{color:#c62828;font-weight:bold}}
</style></head><body>
{body}
</body></html>
"""


def _html_body(batch, output: str, level: int) -> str:
    esc = html.escape
    rows = []
    for o in batch.outcomes:
        r = o.result
        rows.append(
            f"<tr><td>{o.number}</td><td class='s-{o.status}'>{ICON[o.status]}</td>"
            f"<td>{f'{len(r.rounds)}/{r.max_rounds}' if r else ''}</td><td>{r.tokens if r else ''}</td>"
            f"<td>{cost_text(r.cost) if r else ''}</td><td>{o.seconds:.1f} s</td>"
            f"<td><code>{esc(o.title.split(': ', 1)[1])}</code></td></tr>")
    sections = [_html_section(o) for o in batch.outcomes if o.status != "ok" or o.reason]
    return f"""<h{level}>fixloop report: {esc(os.path.basename(batch.path))}</h{level}>
<p><b>{esc(headline(batch))}</b></p>
<ul><li>notebook: <code>{esc(batch.path)}</code></li><li>patched notebook: <code>{esc(output)}</code></li>
<li>{esc(cells_run(batch))}: cells that ran without error; plain Jupyter's count {esc(batch.plain_how)}</li>
{f"<li>{esc(batch.kernel_note)}</li>" if batch.kernel_note else ""}\
{f"<li>{esc(batch.judged_note)}</li>" if batch.judged_note else ""}\
{f"<li>{esc(verified_by(batch))}</li>" if verified_by(batch) else ""}</ul>
<table><tr><th>cell</th><th>status</th><th>rounds</th><th>tokens</th><th>cost</th><th>time</th><th>code</th></tr>
{chr(10).join(rows)}
</table>
{chr(10).join(sections)}"""


def _html_section(o) -> str:
    esc = html.escape
    parts = [f"<h2>Cell {o.number}: <span class='s-{o.status}'>{ICON[o.status]}</span></h2>", "<ul>"]
    if o.error:
        parts.append(f"<li>{_failed_with(o)}: <code>{esc(_one_line(o.error))}</code></li>")
    if o.reason:
        parts.append(f"<li>{esc(_whole_line(o.reason))}</li>")
    r = o.result
    if r is not None:
        parts.append(f"<li>loop: {esc(status_label(r.status, r.unchecked))}, {len(r.rounds)}/{r.max_rounds} rounds, "
                     f"model <code>{esc(r.model)}</code>, {tokens_text(r.tokens)}, {cost_text(r.cost)}, "
                     f"{r.seconds:.1f} s</li>")
        parts += [f"<li>{esc(line.strip())}</li>" for line in read_check_lines(r)]
        parts += [f"<li>{esc(line)}</li>" for line in account_lines(r)]
    parts.append("</ul>")
    if r is not None:
        parts.append(effect_html(r))
    if o.patched is not None and o.patched != o.source:
        parts.append(diff_html(o.source, o.patched))
    elif o.status != "skipped":
        parts.append(f"<pre class='fixloop-diff'>{esc(o.source)}</pre>")
    if r is not None:
        parts.append(rounds_html(r, candidates=True).replace("<details>", "<details open>"))
    return "\n".join(parts)

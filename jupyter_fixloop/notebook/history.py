"""The history of every loop: what the user typed, what the loop proposed, what the user decided.

Nothing the user typed may be lost to a crash, a kernel restart or a mis-click, so each step is one
appended JSON line, written and flushed as it happens: `start` (the exact cell, before the loop
runs), `loop` (the LoopSummary with every round's receipt), `decision` (accept, reject, undo,
retry). Reading folds the lines back into one entry per loop. The file lives under the Jupyter data
dir; `FIXLOOP_DATA_DIR` or `%config FixLoopHistory.directory` moves it (tests use that). It is
readable by you alone (0600), and what candidates printed is not written to it (counted in lines).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field

from traitlets import Unicode, default
from traitlets.config import Configurable

from ..cell import join_magic, split_magic
from ..render import clipped, visible
from ..result import LoopResult, loop_summary, now, round_summaries, written_aside


@dataclass
class Entry:
    """One loop as the user sees it: the exact cell it came from, its result, and the decision.

    Mutable on purpose: the decision changes as the user clicks, and a retry brings a new result.
    """

    cell_source: str
    cell_id: str | None = None
    result: LoopResult | None = None
    decision: str = "pending"
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: str = field(default_factory=now)
    plain: bool = False  # no `%%fixloop` line (`%fixloop auto`, the Fix button): Accept writes the code alone

    @property
    def magic_line(self) -> str | None:
        """The cell's `%%fixloop` line; None for a plain cell (the extension's Fix button)."""
        return split_magic(self.cell_source)[0]

    @property
    def body(self) -> str:
        """The cell without its `%%fixloop` line (the protocol's `original`)."""
        return self.cell_source if self.plain else split_magic(self.cell_source)[1]

    @property
    def loop_id(self) -> str:
        return self.result.loop_id if self.result is not None else self.run

    def accepted_body(self) -> str:
        """The code Accept writes below the `%%fixloop` line (all of a plain cell) and runs."""
        return (self.result.patched or "").rstrip("\n")

    def accepted_source(self) -> str:
        """The cell after Accept: the same `%%fixloop` line, then the verified code (the code alone in a plain cell)."""
        code = self.accepted_body()
        return code if self.plain else join_magic(self.magic_line, code)

    def summary(self) -> dict:
        """Its LoopSummary (docs/protocol.md), with the decision as it stands."""
        return loop_summary(self.result, cell_id=self.cell_id, original=self.body, created=self.created,
                            decision=self.decision, plain=self.plain)


class FixLoopHistory(Configurable):
    """Appends history records to a JSONL file and keeps this kernel's records in memory."""

    directory = Unicode(
        help="Folder of history.jsonl. Default: $FIXLOOP_DATA_DIR, else <jupyter data dir>/fixloop."
    ).tag(config=True)

    @default("directory")
    def _default_directory(self):
        from jupyter_core.paths import jupyter_data_dir

        return os.environ.get("FIXLOOP_DATA_DIR") or os.path.join(jupyter_data_dir(), "fixloop")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.records: list[dict] = []
        self.error = ""  # why the file could not be written; the records stay in memory

    @property
    def path(self) -> str:
        return os.path.join(self.directory, "history.jsonl")

    def record(self, event: str, **fields) -> dict:
        """Append one record; the file is yours alone (0600, in a 0700 folder when fixloop makes it)."""
        rec = {"event": event, "ts": now(), **fields}
        self.records.append(rec)
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with open(fd, "a", encoding="utf-8") as f:
                os.fchmod(fd, 0o600)  # a file an older version made 0644
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
            self.error = ""
        except OSError as exc:
            self.error = f"history not saved to {self.path}: {exc}"
        return rec

    def start(self, entry: Entry, model: str = "") -> None:
        self.record("start", run=entry.run, cell_id=entry.cell_id, original=entry.cell_source, model=model,
                    created=entry.created)

    def loop(self, entry: Entry, summary: dict) -> None:
        """The finished loop; its receipts without what the candidates printed (counted in lines only): a
        candidate can print any of your data it was given, and the file outlives the kernel."""
        if entry.result is not None:
            summary = {**summary, "rounds": round_summaries(entry.result, printed=False)}
        self.record("loop", run=entry.run, cell_source=entry.cell_source, **summary)

    def decision(self, entry: Entry, decision: str, **extra) -> None:
        self.record("decision", loop_id=entry.loop_id, decision=decision, **extra)

    # ------------------------------------------------------------------ reading

    def read(self) -> list[dict]:
        """Every record in the file (a damaged line is skipped); this kernel's records if unreadable."""
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.readlines()
        except FileNotFoundError:
            return list(self.records)
        except OSError:
            return list(self.records)
        out = []
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
        return out

    def entries(self) -> list[dict]:
        """One dict per loop, oldest first: start + loop + the latest decision folded together."""
        return fold(self.read())

    def last(self) -> dict | None:
        """The last loop this kernel finished (from its own records, not the file's), with its latest decision."""
        finished = [e for e in fold(self.records) if e.get("status") != "unfinished"]
        return finished[-1] if finished else None

    def listing(self, limit: int = 20) -> str:
        """What `%fixloop history` prints: newest last, one line each."""
        entries = self.entries()
        if not entries:
            return f"fixloop history: no loops yet ({self.path})"
        shown = entries[-limit:]
        lines = [f"fixloop history: {len(entries)} loop(s), last {len(shown)} shown ({self.path})"]
        for e in shown:
            rounds = f"{len(e.get('rounds') or [])}/{e.get('max_rounds', 0)}"
            decision = _decision(e) or "-"
            first = _first_code_line(e.get("original", ""))
            lines.append(f"{(e.get('created') or '')[:19]:19}  {e['loop_id']:12}  {e.get('status', ''):10} "
                         f"{rounds:>5} rounds  {decision:9} {e.get('model', '')}  | {first}")
        lines.append("`%fixloop history LOOP_ID` shows a loop's original cell and proposed code.")
        if self.error:
            lines.append(self.error)
        return visible("\n".join(lines))

    def show(self, loop_id: str) -> str:
        """One loop in full: the exact original cell, the proposed code, each round's receipt."""
        for e in reversed(self.entries()):
            if e["loop_id"].startswith(loop_id):
                decision = f", decision {_decision(e)}" if _decision(e) else ""
                cell = f", cell {e['cell_id']}" if e.get("cell_id") else ""  # a terminal has no cell ids
                out = [f"loop {e['loop_id']} ({e.get('created')}{cell}, model {e.get('model')}): "
                       f"{e.get('status')}{decision}", "", "original cell:", e.get("original", "")]
                if e.get("status") == "stopped" and e.get("reason"):
                    out[0] += f": {e['reason']}"
                if e.get("patched"):
                    out += ["", "proposed code:", e["patched"]]
                if (e.get("effect") or {}).get("text"):
                    out += ["", "what it does to your data:", e["effect"]["text"]]
                for r in e.get("rounds") or []:
                    by = written_aside(r.get("source", ""), bool(r.get("model_written")))
                    out += ["", f"round {r['index']}{by}: {r['receipt']['kind']}", r["receipt"]["text"]]
                return visible("\n".join(out))  # receipts and code as escapes: printed, a bidi override is obeyed
        return f"fixloop history: no loop {loop_id!r} in {self.path}"


def _decision(e: dict) -> str:
    """A loop's decision, "" when there was nothing to decide (no fix, or the cell already passed)."""
    decision = e.get("decision", "")
    if decision == "pending" and not e.get("patched") and e.get("status") != "unfinished":
        return ""
    return decision


def fold(records: list[dict]) -> list[dict]:
    """History records folded into one dict per loop, oldest first: start + loop + the latest decision."""
    by_key: dict[str, dict] = {}
    for rec in records:
        event = rec.get("event")
        if event == "start":
            by_key[rec.get("run", "")] = {"loop_id": rec.get("run", ""), "status": "unfinished", "decision": "pending",
                                          "created": rec.get("created", rec.get("ts")), "cell_id": rec.get("cell_id"),
                                          "model": rec.get("model", ""), "original": rec.get("original", ""),
                                          "rounds": [], "max_rounds": 0, "patched": None, "order": len(by_key)}
        elif event == "loop":
            entry = by_key.pop(rec.get("run", ""), {})
            entry.update({k: v for k, v in rec.items() if k not in ("event", "ts", "run", "cell_source", "original")})
            entry["original"] = rec.get("cell_source", entry.get("original", ""))
            by_key[rec["loop_id"]] = entry
        elif event == "decision" and rec.get("loop_id") in by_key:
            by_key[rec["loop_id"]]["decision"] = rec.get("decision", "pending")
        elif event == "refused":  # the request was refused (a bad --expect): no loop ran
            by_key.pop(rec.get("run", ""), None)
        elif event == "stopped" and rec.get("run", "") in by_key:  # raised or interrupted before a result
            by_key[rec["run"]].update(status="stopped", decision="", reason=rec.get("error", ""))
    # by when each loop started (a loop that finished first is not listed first)
    return sorted(by_key.values(), key=lambda e: (e.get("created") or "", e.get("order", 0)))


def last_code(entry: dict) -> str | None:
    """What `%fixloop last` inserts for a history entry: the accepted code if accepted, the exact original
    cell if undone, else the proposal (the verified code, or the last candidate tried)."""
    if entry.get("decision") == "undone":
        return entry.get("original") or None
    rounds = entry.get("rounds") or []
    return entry.get("patched") or (rounds[-1].get("candidate") if rounds else None) or None


def _first_code_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip() and split_magic(line)[0] is None:
            return clipped(line.strip(), 60)  # cut at a word, marked
    return ""


_history: FixLoopHistory | None = None


def get(shell=None) -> FixLoopHistory:
    """This kernel's history (configurable with `%config FixLoopHistory.directory = ...`)."""
    global _history
    if _history is None:
        _history = FixLoopHistory(parent=shell)
        if shell is not None and _history not in getattr(shell, "configurables", []):
            shell.configurables.append(_history)
    return _history

# Kernel side of the jupyter_fixloop comm, faked for the UI tests of the
# labextension alone (docs/protocol.md). Pasted into a notebook cell.
import uuid

from comm import create_comm


class FakeFixloop:
    """Opens the comm like `%load_ext jupyter_fixloop` and answers `decide`."""

    def __init__(self):
        self.received = []
        self.loops = {}
        self.comm = create_comm(target_name="jupyter_fixloop", data={"action": "hello", "protocol": 1})
        self.comm.on_msg(self._on_msg)

    def _on_msg(self, msg):
        data = msg["content"]["data"]
        self.received.append(data)
        if data.get("action") == "decide":
            loop = self.loops[data["loop_id"]]
            decision = {"accept": "accepted", "reject": "rejected", "undo": "undone"}[data["decision"]]
            if decision != "rejected":
                body = loop["patched"] if decision == "accepted" else loop["original"]
                self.replace(loop, "%%fixloop\n" + body, decision)
            self.comm.send({"action": "decision", "loop_id": loop["loop_id"], "decision": decision})

    def loop(self, summary):
        self.loops[summary["loop_id"]] = summary
        self.comm.send({"action": "loop", "loop": summary})

    def replace(self, loop, source, decision, expected=None):
        self.comm.send({"action": "replace", "request_id": uuid.uuid4().hex, "cell_id": loop["cell_id"],
                        "source": source, "loop_id": loop["loop_id"], "decision": decision,
                        "loop": dict(loop, decision=decision), "expected": expected})

    def actions(self):
        return [(d.get("action"), d.get("decision") or d.get("frontend") or d.get("ok")) for d in self.received]


def summary(cell_id, loop_id="L1"):
    original = "total = df['prise'].sum()\ntotal\n"
    patched = "total = df['price'].sum()\ntotal\n"
    return {
        "loop_id": loop_id, "cell_id": cell_id, "status": "fixed", "reason": "KeyError: 'prise'",
        "model": "builtin", "original": original, "patched": patched,
        "diff": "--- original\n+++ patched\n@@ -1,2 +1,2 @@\n-total = df['prise'].sum()\n+total = df['price'].sum()\n total\n",
        "max_rounds": 4, "tokens": 0, "cost": 0.0, "seconds": 0.8, "created": "2026-11-22T10:00:00+00:00",
        "decision": "pending",
        "rounds": [{"index": 1, "candidate": patched, "receipt": {"kind": "passed", "text": "total == 6"},
                    "tokens": 0, "cost": 0.0, "seconds": 0.4}],
    }

"""The frontend's half of the conversation, played by a test over a real kernel's channels.

It keeps every widget model the kernel opens (by comm id, with its state as updated), answers the
`jupyter_fixloop` hello like the JupyterLab extension (or closes it like a frontend without one),
and clicks buttons the way a browser does: a `custom` comm message `{"event": "click"}`.
"""

from __future__ import annotations

import uuid

from kernel import UserKernel

TARGET = "jupyter_fixloop"
MIME = "application/vnd.jupyter.fixloop+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class FakeLab:
    def __init__(self, kernel: UserKernel, answer: str = "hello"):
        self.kernel = kernel
        self.answer = answer  # "hello" (extension present), "close" (no extension), "none" (silent)
        self.models: dict[str, dict] = {}
        self.fixloop_comm: str | None = None
        self.fixloop_inbox: list[dict] = []  # data of every fixloop comm message from the kernel

    # ------------------------------------------------------------------ talking to the kernel

    def execute(self, code: str, cell_id: str | None = None, timeout: float = 240,
                metadata: dict | None = None, store_history: bool = True) -> tuple[list[dict], dict]:
        """An execute request as JupyterLab sends it (`cellId` in its metadata, with `metadata` added; the
        Fix button's has `store_history` false)."""
        kc = self.kernel.kc
        msg = kc.session.msg("execute_request", {
            "code": code, "silent": False, "store_history": store_history, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": store_history,
        }, metadata={**({"cellId": cell_id} if cell_id else {}), **(metadata or {})})
        kc.shell_channel.send(msg)
        return self._collect(msg, timeout), self._reply(msg, timeout)

    def send_comm(self, comm_id: str, data: dict, timeout: float = 240) -> list[dict]:
        """A comm message from the frontend; returns the kernel's iopub messages caused by it."""
        kc = self.kernel.kc
        msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        kc.shell_channel.send(msg)
        return self._collect(msg, timeout)

    def open_comm(self, target: str, data: dict, timeout: float = 240) -> list[dict]:
        """A comm the frontend opens to a target the kernel registered (a widget library's callback)."""
        kc = self.kernel.kc
        msg = kc.session.msg("comm_open", {"comm_id": uuid.uuid4().hex, "target_name": target, "data": data})
        kc.shell_channel.send(msg)
        return self._collect(msg, timeout)

    def close_comm(self, comm_id: str) -> None:
        kc = self.kernel.kc
        msg = kc.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
        kc.shell_channel.send(msg)
        self._collect(msg, 60)

    def _reply(self, msg: dict, timeout: float) -> dict:
        while True:
            reply = self.kernel.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                return reply

    def _collect(self, msg: dict, timeout: float) -> list[dict]:
        msg_id, out, answers = msg["header"]["msg_id"], [], []
        while True:
            io = self.kernel.kc.get_iopub_msg(timeout=timeout)
            if io["parent_header"].get("msg_id") != msg_id:
                continue
            kind = io["msg_type"]
            if kind == "status" and io["content"]["execution_state"] == "idle":
                break
            out.append(io)
            answer = self._observe(io)
            if answer:
                answers.append(answer)
        for comm_id, data in answers:  # after idle, as a browser would answer
            if data is None:
                self.close_comm(comm_id)
            else:
                self.send_comm(comm_id, data)
        return out

    def _observe(self, io: dict):
        kind, content = io["msg_type"], io["content"]
        if kind == "comm_open" and content["target_name"] == "jupyter.widget":
            self.models[content["comm_id"]] = dict(content["data"]["state"])
        elif kind == "comm_open" and content["target_name"] == TARGET:
            self.fixloop_comm = content["comm_id"]
            self.fixloop_inbox.append(content["data"])
            if self.answer == "hello":
                return content["comm_id"], {"action": "hello", "protocol": 1, "frontend": "jupyterlab",
                                            "version": "test"}
            if self.answer == "close":
                return content["comm_id"], None
        elif kind == "comm_msg" and content["comm_id"] in self.models:
            data = content["data"]
            if data.get("method") in ("update", "echo_update"):
                self.models[content["comm_id"]].update(data.get("state", {}))
        elif kind == "comm_msg" and content["comm_id"] == self.fixloop_comm:
            self.fixloop_inbox.append(content["data"])
        return None

    # ------------------------------------------------------------------ widgets

    def find(self, css_class: str, after: str | None = None) -> str:
        """Comm id of the newest widget model carrying `css_class` (optionally inside widget `after`)."""
        ids = [cid for cid, s in self.models.items() if css_class in s.get("_dom_classes", ())]
        if after is not None:
            inside = self.descendants(after)
            ids = [cid for cid in ids if cid in inside]
        assert ids, f"no widget with class {css_class}"
        return ids[-1]

    def descendants(self, comm_id: str) -> set[str]:
        seen, todo = set(), [comm_id]
        while todo:
            cid = todo.pop()
            if cid in seen or cid not in self.models:
                continue
            seen.add(cid)
            for child in self.models[cid].get("children", ()):
                todo.append(child.removeprefix("IPY_MODEL_"))
        return seen

    def state(self, comm_id: str) -> dict:
        return self.models[comm_id]

    def click(self, css_class: str, root: str | None = None) -> list[dict]:
        return self.send_comm(self.find(css_class, root), {"method": "custom", "content": {"event": "click"}})

    def set_value(self, comm_id: str, value, key: str = "value") -> list[dict]:
        """What a user's edit sends (`key` is "index" for selection widgets such as ToggleButtons)."""
        self.models[comm_id][key] = value
        return self.send_comm(comm_id, {"method": "update", "state": {key: value}, "buffer_paths": []})

    def texts(self, root: str) -> str:
        """Every HTML `value` and description under widget `root`, joined (what a reader would see)."""
        parts = []
        for cid in self.descendants(root):
            s = self.models[cid]
            if s.get("_model_name") == "HTMLModel":
                parts.append(s.get("value", ""))
        return "\n".join(parts)

    def fixloop_messages(self, action: str) -> list[dict]:
        return [d for d in self.fixloop_inbox if d.get("action") == action]


def displayed(msgs: list[dict]) -> list[dict]:
    """The data of every display_data message (not updates) in `msgs`."""
    return [m["content"]["data"] for m in msgs if m["msg_type"] == "display_data"]


def result_bundle(msgs: list[dict]) -> dict:
    bundles = [d for d in displayed(msgs) if MIME in d]
    assert bundles, "no fixloop result was displayed"
    return bundles[-1]

"""A real user-side kernel for tests: run cells, collect outputs and the execute reply."""

from __future__ import annotations

from dataclasses import dataclass, field

from jupyter_client.manager import KernelManager


@dataclass
class CellRun:
    reply: dict
    outputs: list = field(default_factory=list)

    @property
    def text(self) -> str:
        parts = []
        for msg_type, content in self.outputs:
            if msg_type == "stream":
                parts.append(content["text"])
            elif msg_type in ("display_data", "execute_result"):
                parts.append(content["data"].get("text/plain", ""))
            elif msg_type == "error":
                parts.append(f"{content['ename']}: {content['evalue']}")
        return "\n".join(parts)

    @property
    def ok(self) -> bool:
        return self.reply["content"]["status"] == "ok"


class UserKernel:
    def __init__(self, cwd: str | None = None):
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 180, metadata: dict | None = None) -> CellRun:
        msg = self.kc.session.msg("execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True,
        }, metadata=metadata or {})
        self.kc.shell_channel.send(msg)
        msg_id = msg["header"]["msg_id"]
        outputs = []
        while True:
            io = self.kc.get_iopub_msg(timeout=timeout)
            if io["parent_header"].get("msg_id") != msg_id:
                continue
            kind = io["msg_type"]
            if kind == "status" and io["content"]["execution_state"] == "idle":
                break
            if kind in ("stream", "display_data", "execute_result", "error", "update_display_data"):
                outputs.append((kind, io["content"]))
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return CellRun(reply, outputs)

    def pid(self) -> int:
        return self.km.provisioner.process.pid

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

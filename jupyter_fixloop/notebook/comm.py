"""The kernel side of the `jupyter_fixloop` comm (docs/protocol.md).

Replacing a cell's source is something only the frontend can do, so the kernel asks: `%load_ext`
opens a comm with `hello`; a frontend with the extension answers it, one without closes it. Until an
answer arrives the kernel assumes *degraded* mode, where Accept shows the code to copy instead.
Only the frontend also knows which cells below a `%%fixloop` cell ran: it sends them (`following`)
just before that cell's execute request, and they wait here until its run takes them. The
extension's Fix button runs a failed plain cell's code as a `%%fixloop --dry` request marked as the
button's (`fix_request`; auto.py's `button` runs it from the state the cell started from); the hello
and `model` messages tell the button which model it will use.
Only the `comm` package is used here (no ipywidgets), so `%load_ext` stays cheap. What a loop's
summary holds is result.py's (`loop_summary`); what a decision does is the LoopView's (view.py), which `decide`
reaches through `loops`.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable

from ..options import resolve_model

TARGET = "jupyter_fixloop"
PROTOCOL = 1

# the caps of a `following` message (labextension/src/following.ts sends within them)
FOLLOWING_CELLS, FOLLOWING_CELL_CHARS, FOLLOWING_TOTAL_CHARS = 20, 20_000, 100_000
FOLLOWING_KEPT = 32  # lists kept for cells whose run has not started yet

DECIDE_WORDS = {"accept": "accepted", "reject": "rejected", "undo": "undone"}
FIX_REQUEST = "fix"  # execute request metadata `fixloop` of the Fix button's request


class Frontend:
    """This kernel's comm to the frontend, and what the frontend said on it.

    `state` is "waiting" (hello sent, no answer yet), "connected" (the extension answered) or
    "absent" (no kernel, the comm was closed, or the protocol differs).
    """

    def __init__(self):
        self.comm = None
        self.state = "absent"
        self.info: dict = {}
        self.loops: dict[str, object] = {}  # loop_id -> the LoopView that owns it (decide, supersede)
        self.watchers: list[Callable[[], None]] = []
        self._replies: dict[str, Callable[[dict], None]] = {}
        self._following: OrderedDict[str, tuple[str, ...]] = OrderedDict()  # cell id -> the cells below it
        self._config = None  # the FixLoop whose model the hello and `model` messages name

    # ------------------------------------------------------------------ connection

    def open(self) -> None:
        from comm import create_comm

        self.state = "waiting"
        hello = {"action": "hello", "protocol": PROTOCOL}
        if self._config is not None:
            hello["model"] = self.model
        self.comm = create_comm(target_name=TARGET, data=hello)
        self.comm.on_msg(self._on_msg)
        self.comm.on_close(self._on_close)

    def follow_config(self, config) -> None:
        """Name `config`'s model in the hello, and tell the frontend when it changes (`%config FixLoop.model`)."""
        if self._config is not None:
            self._config.unobserve(self._model_changed, names="model")
        self._config = config
        config.observe(self._model_changed, names="model")

    @property
    def model(self) -> str:
        """The model a loop started now uses (FixLoop.model, else $FIXLOOP_MODEL, else the built-in engine)."""
        return resolve_model(self._config.model if self._config is not None else None)

    def _model_changed(self, change) -> None:
        self.send({"action": "model", "model": self.model})

    @property
    def connected(self) -> bool:
        return self.state == "connected" and self.comm is not None

    @property
    def mode(self) -> str:
        """'jupyterlab' when cells can be replaced in place, 'degraded' otherwise."""
        return "jupyterlab" if self.connected else "degraded"

    def describe(self) -> str:
        """One sentence for the widget: which mode is active and what Accept does in it."""
        if self.connected:
            name = self.info.get("frontend", "frontend")
            version = self.info.get("version", "")
            return f"Connected to {name} {version}".rstrip() + ": Accept replaces the cell in place."
        why = (
            "no answer from the fixloop extension yet"
            if self.state == "waiting"
            else "no fixloop extension in this frontend"
        )
        return f"Degraded mode ({why}): Accept shows the code to copy; `%fixloop last` inserts it as a new cell."

    def _on_close(self, msg) -> None:
        self.comm = None
        self.state = "absent"
        self._notify()

    def _notify(self) -> None:
        for watcher in list(self.watchers):
            try:
                watcher()
            except Exception:
                pass  # a closed widget must not stop the others

    # ------------------------------------------------------------------ messages

    def send(self, data: dict) -> bool:
        if self.comm is None:
            return False
        self.comm.send(data)
        return True

    def send_loop(self, summary: dict) -> None:
        self.send({"action": "loop", "loop": summary})

    def send_decision(self, loop_id: str, decision: str, via: str) -> None:
        """`via`: "button", "sidebar", "retry" (Retry closed it) or "rerun" (its cell ran `%%fixloop` again)."""
        self.send({"action": "decision", "loop_id": loop_id, "decision": decision, "via": via})

    def replace(self, cell_id: str, source: str, summary: dict, decision: str,
                on_reply: Callable[[dict], None], expected: str | None = None, run: bool = False) -> str | None:
        """Ask the frontend to set the cell's source; `on_reply` gets its `replaced` answer later.

        `expected` is what the kernel believes the cell holds now, so that a frontend can refuse
        rather than overwrite edits the user made after the loop ran. `run`: the frontend then runs
        the cell (a Fix button's loop, or its Accept: the kernel does not run the code itself).
        """
        if not self.connected or not cell_id:
            return None
        request_id = uuid.uuid4().hex
        self._replies[request_id] = on_reply
        self.send({"action": "replace", "request_id": request_id, "cell_id": cell_id, "source": source,
                   "loop_id": summary["loop_id"], "decision": decision, "loop": summary, "expected": expected,
                   **({"run": run} if run or decision == "accepted" else {})})  # said on every accept
        return request_id

    def _on_msg(self, msg) -> None:
        data = msg.get("content", {}).get("data") or {}
        action = data.get("action")
        if action == "hello":
            self._on_hello(data)
        elif action == "replaced":
            reply = self._replies.pop(data.get("request_id") or "", None)
            if reply is not None:
                reply(data)
        elif action == "decide":
            self._on_decide(data)
        elif action == "following":
            self._on_following(data)

    def _on_hello(self, data: dict) -> None:
        if data.get("protocol") == PROTOCOL:
            self.state, self.info = "connected", dict(data)
        else:
            self.state, self.info = "absent", {}
        self._notify()

    def _on_decide(self, data: dict) -> None:
        loop_id, word = data.get("loop_id"), data.get("decision")
        target = self.loops.get(loop_id)
        if target is None or word not in DECIDE_WORDS:
            error = (
                f"no loop {loop_id!r} in this kernel (restarted?)" if target is None else f"unknown decision {word!r}"
            )
            self.send({"action": "decision", "loop_id": loop_id, "decision": "unknown", "error": error})
            return
        target.decide(word, via="sidebar")

    def _on_following(self, data: dict) -> None:
        """Keep the cells below a `%%fixloop` cell until its run takes them (it arrives just before)."""
        cell_id = data.get("cell_id")
        if not isinstance(cell_id, str) or not cell_id:
            return
        self._following.pop(cell_id, None)  # a newer word on this cell: an older list is stale either way
        cells = valid_following(data.get("cells"))
        if cells is None:
            return
        self._following[cell_id] = cells
        while len(self._following) > FOLLOWING_KEPT:
            self._following.popitem(last=False)

    def take_following(self, cell_id: str | None) -> tuple[str, ...]:
        """The cells below cell `cell_id` that the frontend sent for this run, once; () without."""
        return self._following.pop(cell_id, ()) if cell_id else ()


def valid_following(cells) -> tuple[str, ...] | None:
    """`cells` as a tuple when it is a list of strings within the caps, else None (ignored)."""
    if not isinstance(cells, list) or len(cells) > FOLLOWING_CELLS:
        return None
    if not all(isinstance(c, str) and len(c) <= FOLLOWING_CELL_CHARS for c in cells):
        return None
    if sum(len(c) for c in cells) > FOLLOWING_TOTAL_CHARS:
        return None
    return tuple(cells)


_current: Frontend | None = None


def connect(shell, config=None) -> Frontend:
    """Open the hello comm once per kernel (`%load_ext`); plain IPython gets an absent frontend.

    `config` (the magics' FixLoop) names the model the extension's Fix button will use.
    """
    frontend = current()
    if config is not None:
        frontend.follow_config(config)
    if frontend.comm is None and getattr(shell, "kernel", None) is not None:
        frontend.open()  # the same object: widgets already shown follow its new state
    return frontend


def current() -> Frontend:
    global _current
    if _current is None:
        _current = Frontend()
    return _current


def following_code(shell) -> tuple[str, ...]:
    """The cells below the cell being run, as the JupyterLab extension sent them; () without it."""
    cell_id, _ = request_cell(shell)
    return current().take_following(cell_id)


def request_cell(shell) -> tuple[str | None, str | None]:
    """(cellId, exact source) of the execute request being run, when the frontend sent them."""
    parent = _execute_request(shell)
    cell_id = (parent.get("metadata") or {}).get("cellId")
    code = (parent.get("content") or {}).get("code")
    return (cell_id if isinstance(cell_id, str) and cell_id else None), (code if isinstance(code, str) else None)


def fix_request(shell) -> bool:
    """Whether the execute request being run is the extension's Fix button's: `%%fixloop --dry` over
    the code a plain cell ran, which holds that code alone (docs/protocol.md, "The Fix button")."""
    return (_execute_request(shell).get("metadata") or {}).get("fixloop") == FIX_REQUEST


def _execute_request(shell) -> dict:
    """The execute request being run ({} when none: plain IPython, a comm message, ...)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent("shell") or {}
    except Exception:
        return {}
    return parent if parent.get("header", {}).get("msg_type") == "execute_request" else {}


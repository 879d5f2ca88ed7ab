"""Sandbox kernels on a Jupyter Kernel Gateway or Enterprise Gateway, through jupyter_server's
gateway client (REST to start, interrupt and shut down; the kernel protocol over a WebSocket).

No filesystem is shared: the code that runs inside the sandbox (`kernel/`, the snapshot loader,
the in-kernel limits) is sent as source over the kernel protocol at start, and each snapshot part
travels as base64 chunks, up to `FixLoop.gateway_upload_cap`. A stock `python3` kernelspec with
cloudpickle (and the user's libraries) is all the gateway needs. This is the only home of
jupyter_server; it is imported when a gateway sandbox starts.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import importlib
import json
import logging
import os
import pathlib
import queue
import re
import textwrap
import time

from ..errors import SandboxError
from ..kernel import wire
from .confine import make_undumpable
from .manager import CHANNEL_CAPS, MAX_LISTED, START_TIMEOUT, Sandbox, SandboxSettings, _written_notes

PACKAGE = pathlib.Path(__file__).resolve().parent.parent  # jupyter_fixloop/
CHUNK = 1024 * 1024  # raw bytes per execute request (about 1.4 MB of base64)
LIVENESS_EVERY = 2.0  # seconds between REST checks that the kernel still exists


def kernel_sources() -> dict[str, tuple[str, bool]]:
    """module name -> (source, is a package): what a gateway kernel needs of jupyter_fixloop."""
    sources = {"jupyter_fixloop": ("", True), "jupyter_fixloop.kernel": ("", True)}
    for path in sorted((PACKAGE / "kernel").glob("*.py")):
        if path.name != "__init__.py":
            sources[f"jupyter_fixloop.kernel.{path.stem}"] = (path.read_text(encoding="utf-8"), False)
    sources["jupyter_fixloop.sandbox"] = ("", True)  # for the in-kernel limits (stdlib at import)
    sources["jupyter_fixloop.sandbox.confine"] = ((PACKAGE / "sandbox" / "confine.py").read_text(encoding="utf-8"),
                                                  False)
    return sources


def install_code() -> str:
    """A gateway kernel's first request: `jupyter_fixloop`'s in-kernel modules made importable there."""
    return wire.bootstrap(kernel_sources())


def configure(url: str, token: str = "", headers: str = "") -> None:
    """Point jupyter_server's (process-wide) gateway client at `url`."""
    from jupyter_server.gateway.gateway_client import GatewayClient

    client = GatewayClient.instance()
    url = url.rstrip("/")
    client.url = url
    client.ws_url = "ws" + url[len("http"):] if url.startswith("http") else url
    client.auth_token = token or None
    if headers:
        client.headers = headers
    client.allowed_envs = ""  # the sandbox's environment is the gateway's, never the user's
    # jupyter_server logs a failed launch on "ServerApp" (a warm-up cut short at exit, say); the
    # loop reports its own errors
    logging.getLogger("ServerApp").setLevel(logging.CRITICAL)


_CLIENT = "jupyter_fixloop.sandbox.gateway.AuthenticatedClient"


def __getattr__(name: str):
    """`AuthenticatedClient`, built on first use: jupyter_server is imported only for a gateway."""
    if name == "AuthenticatedClient":
        globals()[name] = cls = _authenticated_client()
        return cls
    raise AttributeError(name)


def _authenticated_client():
    from threading import Thread

    import websocket
    from jupyter_core.utils import ensure_async
    from jupyter_server.gateway.gateway_client import GatewayClient
    from jupyter_server.gateway.managers import GatewayKernelClient
    from jupyter_server.utils import url_escape, url_path_join

    class AuthenticatedClient(GatewayKernelClient):
        """jupyter_server's client opens the channels' WebSocket without the headers its REST calls
        send (the auth token among them): a gateway that wants a token refuses it with 401."""

        async def start_channels(self, shell=True, iopub=True, stdin=True, hb=True, control=True):
            client = GatewayClient.instance()
            headers = dict(client.load_connection_args().get("headers") or {})
            if not client.auth_token:
                headers.pop(client.auth_header_key, None)  # "token None"
            url = url_path_join(client.ws_url or "", client.kernels_endpoint, url_escape(self.kernel_id), "channels")
            self.channel_socket = websocket.create_connection(
                url, timeout=client.KERNEL_LAUNCH_TIMEOUT, enable_multithread=True,
                header=[f"{k}: {v}" for k, v in headers.items()], skip_utf8_validation=True,  # json.loads checks it
                sslopt={"ca_certs": client.ca_certs, "certfile": client.client_cert, "keyfile": client.client_key})
            # what the sandbox sends is bounded as on a local sandbox's sockets (manager.CHANNEL_CAPS)
            self.channel_socket.frame_buffer = _bounded_frames()(self.channel_socket._recv)
            await ensure_async(super(GatewayKernelClient, self).start_channels(
                shell=shell, iopub=iopub, stdin=stdin, hb=hb, control=control))
            self.response_router = Thread(target=self._route_responses, name="fixloop-gateway-router", daemon=True)
            self.response_router.start()

        def _route_responses(self):
            """jupyter_server's router, bounded (`_route`, `_bounded_frames`): what goes over a cap is dropped."""
            socket_ = self.channel_socket
            try:
                while not self._channels_stopped:
                    opcode, data = socket_.recv_data()
                    if opcode == websocket.ABNF.OPCODE_CLOSE:
                        break
                    _route(data, self._channel_queues or {}, socket_.frame_buffer)
            except Exception:  # closed (shut down, or `stop_channels`'s abort), or a broken stream
                pass
            for channel_queue in list((self._channel_queues or {}).values()):
                channel_queue.response_router_finished = True

        def stop_channels(self):
            """Stop at once, whatever the router is reading: the socket is shut down under it first."""
            self._channels_stopped = True
            socket_ = self.channel_socket
            if socket_ is not None:
                socket_.abort()
            super(GatewayKernelClient, self).stop_channels()
            if self.response_router is not None:
                self.response_router.join(5)
            if socket_ is not None:
                socket_.shutdown()
            self._channel_queues = None

    return AuthenticatedClient


_LARGEST = max(size for size, _ in CHANNEL_CAPS.values())


def _route(data: bytes, queues: dict, frames=None) -> None:
    """One message from the gateway into its channel's queue, if within that channel's caps (`frames`:
    the bounded reader, which dropped it when it was over the largest)."""
    if frames is not None and frames.dropping:
        _dropped(bytes(frames.head), frames.held, queues)
        return
    try:
        msg = json.loads(data)
        channel = msg["channel"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return  # not a message: dropped
    size, queued = CHANNEL_CAPS.get(channel, CHANNEL_CAPS["iopub"])
    if len(data) > size or (channel == "iopub" and msg.get("msg_type") != "status"):
        return
    channel_queue = queues.get(channel)
    if channel_queue is None:
        return
    channel_queue.maxsize = queued  # a queue.Queue's bound, read at each put
    try:
        channel_queue.put_nowait(msg)
    except queue.Full:
        pass


HEAD = 4096  # bytes of a dropped message read for its type and the request it answers
_REPLY = re.compile(rb'"msg_type":\s*"execute_reply"')
_PARENT = re.compile(rb'"parent_header":\s*\{[^{}]*?"msg_id":\s*"([^"\\]{1,200})"')


def _dropped(head: bytes, size: int, queues: dict) -> None:
    """A message over the caps was read through and dropped: when its head says it is an execute reply,
    the request it answers gets a reply saying so (`dropped`: its size), so the run ends as a crash at
    once, as locally, not as a timeout."""
    parent = _PARENT.search(head)
    channel_queue = queues.get("shell")
    if parent is None or not _REPLY.search(head) or channel_queue is None:
        return
    try:
        channel_queue.put_nowait({"channel": "shell", "msg_id": "", "msg_type": "execute_reply",
                                  "header": {"msg_id": "", "msg_type": "execute_reply"}, "metadata": {},
                                  "parent_header": {"msg_id": parent.group(1).decode("ascii", "replace")},
                                  "content": {"status": "error", "user_expressions": {}}, "dropped": size})
    except queue.Full:
        pass


@functools.cache
def _bounded_frames():
    """websocket-client's frame reader, bounded (made on first use: websocket is imported for a gateway)."""
    from websocket import ABNF, frame_buffer

    data_frames = (ABNF.OPCODE_TEXT, ABNF.OPCODE_BINARY, ABNF.OPCODE_CONT)

    class BoundedFrames(frame_buffer):
        """A message over the largest channel size (in one frame or several) is read through in small
        pieces and dropped, never held: its frames come back empty and `dropping` is set until the
        next message starts."""

        def __init__(self, recv):
            super().__init__(recv, skip_utf8_validation=True)
            self.held, self.dropping, self.head = 0, False, bytearray()  # head: a message's first HEAD bytes

        def recv_frame(self):
            with self.lock:
                if self.needs_header():
                    self.recv_header()
                if self.needs_length():
                    self.recv_length()
            fin, rsv1, rsv2, rsv3, opcode, _, _ = self.header
            if opcode not in data_frames:  # close, ping, pong: at most 125 bytes
                return super().recv_frame()
            if opcode != ABNF.OPCODE_CONT:  # a new message
                self.held, self.dropping, self.head = 0, False, bytearray()
            self.held += self.length
            self.dropping = self.dropping or self.held > _LARGEST
            if not self.dropping:
                frame = super().recv_frame()
                self.head += frame.data[:HEAD - len(self.head)]
                return frame
            with self.lock:
                if self.needs_mask():
                    self.recv_mask()
                left = self.length
                while left > 0:
                    piece = self.recv(min(2**16, left))  # raises when the connection closes
                    self.head += piece[:HEAD - len(self.head)]
                    left -= len(piece)
                self.clear()
            return ABNF(fin, rsv1, rsv2, rsv3, opcode, 0, b"")

    return BoundedFrames


class GatewaySandbox(Sandbox):
    """One kernel on the gateway; the same life as a local Sandbox (start, load, run once, close)."""

    def __init__(self, settings: SandboxSettings):  # no local directory, process or lifeline
        self.settings = settings
        self.km = None
        self.kc = None
        self.loaded: dict = {}
        self.loaded_files: tuple[str, ...] = ()
        self.snapshot = None
        self.confinement = f"gateway ({settings.gateway_url})"
        self._stderr = None  # the kernel's stderr stays on the gateway
        self._last_check = 0.0
        self._fresh_judge()

    async def _start(self) -> None:
        # jupyter_server takes seconds to import (a minute on a loaded machine): off the event loop, which
        # keeps the loop's time bound (and everything else on the loop) running meanwhile
        await asyncio.to_thread(importlib.import_module, "jupyter_server.gateway.managers")
        from jupyter_server.gateway.managers import GatewayKernelManager

        # a gateway on this host runs its kernels as processes of its user, often the user's own:
        # as on the "none" path, they must not read this process's environment or memory
        make_undumpable()
        configure(self.settings.gateway_url, self.settings.gateway_token, self.settings.gateway_headers)
        km = GatewayKernelManager(kernel_name=self.settings.gateway_kernel, client_class=_CLIENT)
        try:
            await km.start_kernel(kernel_id=await self._create())
        except Exception as exc:
            refused = getattr(exc, "status_code", None) in (401, 403) or getattr(exc, "code", None) in (401, 403)
            hint = ("check FixLoop.gateway_token (and gateway_headers)" if refused else
                    "check FixLoop.gateway_url and that the gateway is running")
            raise SandboxError(f"the kernel gateway at {self.settings.gateway_url} could not start a "
                               f"'{self.settings.gateway_kernel}' kernel ({_why(exc)}); {hint}") from None
        self.km = km
        self.kc = km.client()
        try:
            await self.kc.start_channels()
            await self.kc.wait_for_ready(timeout=START_TIMEOUT)
        except Exception as exc:
            raise SandboxError(f"the gateway kernel did not answer ({_why(exc)})") from None
        reply = await self._request(install_code(), START_TIMEOUT)
        if reply is None or reply["content"]["status"] != "ok":
            error = (reply or {}).get("content", {}).get("evalue", "no reply")
            raise SandboxError(f"the gateway kernel could not take fixloop's runner ({error}); it needs "
                               "Python 3.10+ with cloudpickle")

    async def _create(self) -> str:
        """POST a new kernel with an empty environment: jupyter_server's manager would forward the
        user's `KERNEL_*` variables, and nothing of the user's environment goes to a sandbox."""
        from jupyter_server.gateway.gateway_client import GatewayClient, gateway_request

        client = GatewayClient.instance()
        url = client.url.rstrip("/") + "/" + client.kernels_endpoint.strip("/")
        body = json.dumps({"name": self.settings.gateway_kernel, "env": {}})
        response = await gateway_request(url, method="POST", headers={"Content-Type": "application/json"}, body=body)
        return json.loads(response.body)["id"]

    async def _place(self, path: str) -> str:
        """Send one snapshot part to the kernel, chunk by chunk; returns its path there."""
        size = os.path.getsize(path)
        cap = self.settings.gateway_upload_cap
        if cap and size > cap:
            raise SandboxError(f"the mirrored variables take {size / 1e6:.0f} MB, more than FixLoop.gateway_upload_cap "
                               f"({cap / 1e6:.0f} MB) allows to send to the gateway; raise it, or mirror less "
                               "(FixLoop.snapshot_size_cap)")
        remote = await self._expression(wire.call("upload.begin"))
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                await self._expression(wire.call("upload.append", remote, base64.b64encode(chunk).decode()))
        if await self._expression(wire.call("upload.size", remote)) != size:
            raise SandboxError("a snapshot part arrived incomplete at the gateway kernel")
        return remote

    async def _placed(self, remote: str) -> None:
        await self._expression(wire.call("upload.discard", remote))

    async def _expression(self, code: str):
        """Run `code` in the kernel and return its value (a Python literal), raising on an error."""
        import ast

        msg_id = self.kc.execute("", silent=True, store_history=False, allow_stdin=False, user_expressions={"v": code})
        self._pending = msg_id
        reply = await self._wait_reply(msg_id, START_TIMEOUT)
        value = reply["content"].get("user_expressions", {}).get("v", {})
        if value.get("status") != "ok":
            raise SandboxError(f"the gateway kernel refused a transfer: {value.get('ename')}: {value.get('evalue')}")
        return ast.literal_eval(value["data"]["text/plain"])

    async def _died(self) -> bool:
        """The gateway restarts a kernel that died: its status says so on iopub; a kernel that is gone
        is a 404 on REST (asked every few seconds, not at every poll)."""
        while True:
            try:
                msg = await self.kc.get_iopub_msg(timeout=0)
            except (queue.Empty, asyncio.TimeoutError):
                break
            except Exception:
                return True
            if msg.get("msg_type") == "status" and msg["content"].get("execution_state") in ("restarting", "dead"):
                return True
        if time.monotonic() - self._last_check < LIVENESS_EVERY:
            return False
        self._last_check = time.monotonic()
        return not await self.alive()

    async def alive(self) -> bool:
        if self.km is None or not self.km.has_kernel:
            return False
        try:
            return bool(await self.km.refresh_model())
        except Exception:
            return False

    async def _death_message(self) -> str:
        return "the kernel died on the gateway (the gateway restarted or removed it)"

    def _stderr_tail(self, limit: int = 1500) -> str:
        return ""  # the kernel's stderr stays on the gateway

    def _file_notes(self, result: dict) -> tuple[str, ...]:
        names = [n for n in result.get("new_files") or [] if isinstance(n, str)][:MAX_LISTED]
        return _written_notes(names, "on the gateway, discarded with its kernel (as the sandbox reports it, unsigned)")

    async def close(self) -> None:
        try:
            if self.kc is not None:  # in a thread: it waits (briefly) for the router to end
                try:
                    await asyncio.to_thread(self.kc.stop_channels)
                except RuntimeError:  # at interpreter exit no thread can start
                    self.kc.stop_channels()
        except Exception:
            pass
        if self.km is None or not self.km.has_kernel:
            return
        try:
            await self.km.shutdown_kernel(now=True)
        except Exception:  # at interpreter exit tornado's resolver has no executor left: plain HTTP then
            _delete(self.km.kernel_url, self.settings)


def _delete(url: str, settings: SandboxSettings) -> None:
    """DELETE a kernel with the standard library (blocking; used only when tornado cannot)."""
    import urllib.request

    headers = json.loads(settings.gateway_headers) if settings.gateway_headers else {}
    if settings.gateway_token:
        headers["Authorization"] = f"token {settings.gateway_token}"
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE", headers=headers), timeout=10).close()
    except Exception:
        pass  # the gateway's culling (cull_idle_timeout) is the backstop


def _why(exc: Exception) -> str:
    """The error's type and the first line of its words, within 200 characters cut after a whole word
    (a single longer token is kept whole: never cut inside a word)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if not text:
        return type(exc).__name__
    name = type(exc).__name__
    short = textwrap.shorten(text, max(40, 198 - len(name)), placeholder=" …")
    return f"{name}: {short if short.strip(' …') else text}"


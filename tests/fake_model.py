"""An OpenAI-compatible chat server on 127.0.0.1 with scripted replies, for real litellm calls in tests.

Each request takes the next item of the script: a string (the reply's content), or a `Scripted`
(status code, raw body, delay, headers) to play a fault. Every request body is recorded. A request
with `"stream": true` gets the content as server-sent events, a few characters a chunk. With `prompt_cache`
set, a reply says what a server with a prompt cache (llama-server) says: the prompt tokens it read from its cache
(those of the longest start the prompt shares with an earlier request's) and its milliseconds reading the rest and
writing the reply; and it has llama-server's slots (`GET /slots`, `POST /slots/ID?action=erase`): an erase forgets
every prompt asked before it.
A request asking `n` choices gets that many (up to `choices` when set: a server that returns fewer), each the next
item of the script; its usage counts every choice's reply tokens (OpenAI), or the first's alone with
`usage_of_first` (llama-server returns its first result's usage).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Scripted:
    content: str | None = None
    status: int = 200
    body: bytes | None = None
    delay: float = 0.0
    headers: dict = field(default_factory=dict)


class FakeModelServer:
    def __init__(self, script=()):
        self.script = list(script)
        self.requests: list[dict] = []
        self.repeat_last = True
        self.prompt_cache = False  # say cached prompt tokens and prompt milliseconds, as llama-server does
        self.erased = 0  # slot erases asked (`POST /slots/ID?action=erase`); the cache holds requests after the last
        self._cache_from = 0
        self.choices: int | None = None  # the most choices a request gets (None: as many as its `n` asks)
        self.usage_of_first = False  # a reply of several choices counts the first's reply tokens alone
        # replies held until `together` requests are in flight at once (0: none held; a request held longer than
        # `hold` seconds is answered anyway), and the most requests that were in flight at once
        self.together, self.hold = 0, 10.0
        self.in_flight = self.most_in_flight = 0
        self._flight = threading.Condition()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.startswith("/slots/"):
                    self._slots(self.path.endswith("action=erase"))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                server.requests.append(body)
                cached = server._cached(body)
                server._arrive()
                try:
                    self._answer(body, cached)
                finally:
                    server._leave()

            def _answer(self, body, cached=None):
                item = server._next()
                if item.delay:
                    time.sleep(item.delay)
                streaming = body.get("stream") and item.status == 200 and item.body is None
                if streaming:
                    payload = _event_stream(item.content or "", body)
                else:
                    answer = self._choices(item, body, cached) if item.body is None else None
                    payload = item.body if item.body is not None else json.dumps(answer).encode()
                self.send_response(item.status)
                self.send_header("Content-Type", "text/event-stream" if streaming else "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in item.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def _choices(self, item, body, cached) -> dict:
                """The completion: `item` its first choice, the next items of the script the others `n` asks for."""
                reply = _completion(item.content or "", body, cached)
                n = body.get("n") if isinstance(body.get("n"), int) else 1
                for index in range(1, min(n, server.choices or n)):
                    more = _completion(server._next().content or "", body)
                    reply["choices"].append(more["choices"][0] | {"index": index})
                    if not server.usage_of_first:
                        reply["usage"]["completion_tokens"] += more["usage"]["completion_tokens"]
                        reply["usage"]["total_tokens"] += more["usage"]["completion_tokens"]
                if server.usage_of_first:  # as llama-server says it, beside its `timings`
                    reply.setdefault("timings", {"predicted_n": reply["usage"]["completion_tokens"]})
                return reply

            def _slots(self, erase: bool):
                status, answer = server.slot_action(erase)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # the model list, as an OpenAI-compatible server answers `GET /v1/models`; its slots
                found, answer = server.listing(self.path.rstrip("/"))
                payload = json.dumps(answer).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def slot_action(self, erase: bool) -> tuple[int, dict]:
        """llama-server's slot actions, with a prompt cache: erase forgets the prompts asked so far."""
        if not (erase and self.prompt_cache):
            return 501, {"error": {"code": 501, "message": "no slot actions"}}
        self.erased += 1
        self._cache_from = len(self.requests)
        return 200, {"id_slot": 0, "n_erased": 1}

    def listing(self, path: str) -> tuple[bool, object]:
        """(found, body) of a GET: the model list; with a prompt cache, llama-server's two slots."""
        if path.endswith("/v1/models"):
            return True, {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
        if path == "/slots" and self.prompt_cache:
            return True, [{"id": 0}, {"id": 1}]
        return False, {"error": "not found"}

    def _arrive(self) -> None:
        with self._flight:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self._flight.notify_all()
            if self.together:
                self._flight.wait_for(lambda: self.in_flight >= self.together, timeout=self.hold)

    def _leave(self) -> None:
        with self._flight:
            self.in_flight -= 1

    def _next(self) -> Scripted:
        if not self.script:
            return Scripted("I cannot help with that.")
        item = self.script.pop(0) if (len(self.script) > 1 or not self.repeat_last) else self.script[0]
        return item if isinstance(item, Scripted) else Scripted(content=item)

    def _cached(self, body: dict) -> int | None:
        """With `prompt_cache`: the prompt tokens (4 characters each) of the longest start this request's prompt
        shares with an earlier one's, as a prompt cache keeps them; None without it."""
        if not self.prompt_cache:
            return None
        text = _prompt_text(body)
        earlier = self.requests[self._cache_from:-1]
        return max((len(os.path.commonprefix([text, _prompt_text(r)])) for r in earlier), default=0) // 4

    def prompt(self, i: int) -> str:
        """All message contents of request `i`, joined."""
        return "\n".join(str(m.get("content")) for m in self.requests[i].get("messages", []))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class _QuietServer(ThreadingHTTPServer):
    """A client that gives up (a timeout test) breaks the pipe; that is the test working, not an error."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def closed_port_url() -> str:
    """The URL of a port nothing listens on (connection refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _prompt_text(request: dict) -> str:
    """A request's messages as one text, roles included, in order: what a server's prompt is made of."""
    return "".join(f"<{m.get('role')}>{m.get('content', '')}" for m in request.get("messages", []))


def _completion(content: str, request: dict, cached: int | None = None) -> dict:
    """The reply as an OpenAI chat completion (4 characters a token), cut at the request's `max_tokens` as a
    server cuts it (`finish_reason` "length"); `cached` (not None): the prompt tokens read from a cache, said in
    the usage and llama-server's `timings` (a millisecond a token read, two a token written)."""
    prompt_chars = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
    cap = request.get("max_tokens")
    finish = "length" if cap and len(content) // 4 > cap else "stop"
    content = content[:cap * 4] if finish == "length" else content
    reply = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4,
                  "total_tokens": prompt_chars // 4 + len(content) // 4},
    }
    if cached is not None:
        cached = min(cached, prompt_chars // 4)
        reply["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
        reply["timings"] = {"cache_n": cached, "prompt_n": prompt_chars // 4 - cached,
                            "prompt_ms": float(prompt_chars // 4 - cached), "predicted_n": len(content) // 4,
                            "predicted_ms": 2.0 * (len(content) // 4)}
    return reply


def _event_stream(content: str, request: dict) -> bytes:
    """The reply as an OpenAI chat stream: content chunks, the finish, the usage, then [DONE]."""
    full = _completion(content, request)
    content, finish = full["choices"][0]["message"]["content"], full["choices"][0]["finish_reason"]
    base = {k: full[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    pieces = [content[i:i + 4] for i in range(0, len(content), 4)]
    events = [base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": p}, "finish_reason": None}]}
              for p in pieces]
    events.append(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    events.append(base | {"choices": [], "usage": full["usage"]})
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"

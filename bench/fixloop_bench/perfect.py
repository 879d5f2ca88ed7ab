"""A perfect model for the generation bench: an OpenAI-compatible server on 127.0.0.1 that answers
each step with its reference solution.

It finds the step by its instruction: the longest instruction of the bench file whose words occur,
in order and whole, in the request's messages (the prompt carries the instruction as the user wrote
it). A request that holds none gets an answer without code. `bench --generation FILE --perfect`
measures what the harness itself loses (sharing, prompts, scoring) when the model makes no mistake.
Stdlib only.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "openai/perfect-stand-in"
NO_MATCH = "I cannot tell which step this is."


def _words(text: str) -> str:
    return " ".join(text.split())


class PerfectModel:
    """`with PerfectModel({instruction: solution, ...}) as server:` ... `server.url`; `server.requests`
    holds each request's body, `server.answered` the instruction each was answered for (None: no match)."""

    def __init__(self, answers: dict[str, str]):
        self.answers = sorted(((_words(i), s) for i, s in answers.items() if i.strip()), key=lambda a: -len(a[0]))
        self.requests: list[dict] = []
        self.answered: list[str | None] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                payload, kind = owner._reply(body)
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # the model list, as an OpenAI-compatible server answers `GET /v1/models`
                found = self.path.rstrip("/").endswith("/v1/models")
                payload = json.dumps({"object": "list", "data": [{"id": "perfect-stand-in", "object": "model"}]}
                                     if found else {"error": "not found"}).encode()
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, prompt: str) -> str:
        """The reply to a prompt: the matching step's solution in a ```python block."""
        text = _words(prompt)
        for instruction, solution in self.answers:
            if re.search(rf"(?<!\w){re.escape(instruction)}(?!\w)", text):
                self.answered.append(instruction)
                return f"```python\n{solution.strip()}\n```"
        self.answered.append(None)
        return NO_MATCH

    def _reply(self, body: dict) -> tuple[bytes, str]:
        self.requests.append(body)
        messages = body.get("messages") or []
        content = self.answer("\n".join(str(m.get("content", "")) for m in messages))
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                 "total_tokens": prompt_tokens + len(content) // 4}
        head = {"id": "chatcmpl-perfect", "created": int(time.time()), "model": body.get("model", "perfect")}
        if not body.get("stream"):
            choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            return json.dumps(head | {"object": "chat.completion", "choices": [choice], "usage": usage}).encode(), \
                "application/json"
        chunk = head | {"object": "chat.completion.chunk"}
        events = [chunk | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": content},
                                        "finish_reason": None}]},
                  chunk | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                  chunk | {"choices": [], "usage": usage}]
        return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n", \
            "text/event-stream"

    def __enter__(self) -> PerfectModel:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

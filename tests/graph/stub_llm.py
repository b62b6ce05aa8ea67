"""A stub OpenAI-compatible chat server on loopback that speaks the real protocol
(``POST /v1/chat/completions``) and answers from a script, recording each request."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import serve_loopback


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the assistant message text
    raw: str | None = None  # a raw body instead of a completion


@dataclass
class StubLLM:
    url: str = ""
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    default: Reply | None = None
    respond: Callable[[dict[str, Any]], Reply] | None = None  # answers from the request body, after the script


@contextmanager
def stub_llm() -> Iterator[StubLLM]:
    stub = StubLLM()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            stub.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            reply = stub.script.pop(0) if stub.script else stub.respond(body) if stub.respond else stub.default
            if self.path != "/v1/chat/completions" or reply is None:
                self.send_response(404)
                self.end_headers()
                return
            if reply.raw is not None:
                payload = reply.raw.encode()
            elif reply.status == 200:
                payload = json.dumps({
                    "id": "chatcmpl-stub", "object": "chat.completion", "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.content}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
                }).encode()
            else:
                payload = json.dumps({"error": {"message": reply.content or "error"}}).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    with serve_loopback(Handler) as base:
        stub.url = f"{base}/v1"
        yield stub

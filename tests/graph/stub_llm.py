"""A stub OpenAI-compatible chat server on loopback that speaks the real protocol
(``POST /v1/chat/completions``) and answers from a script, recording each request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


@contextmanager
def stub_llm() -> Iterator[StubLLM]:
    stub = StubLLM()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            stub.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            reply = stub.script.pop(0) if stub.script else stub.default
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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

"""A stub OpenAI-compatible chat server on loopback that speaks the real protocol
(``POST /v1/chat/completions``, a JSON body, or server-sent events when the request says
``stream: true``) and answers from a script, recording each request.

Timing is part of the script: ``first_token_s`` (prefill) and ``total_s`` (the whole answer),
so a slow local model can be played at any speed. The stub notes when the client hung up
before the answer ended, and how many requests it was working on at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from memory_substrate.tokens import count_tokens
from tests.loopback import serve_loopback

CHUNK_CHARS = 24


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the assistant message text
    raw: str | None = None  # a raw body instead of a completion
    finish_reason: str = "stop"
    first_token_s: float = 0.0  # before the first chunk (prefill)
    total_s: float = 0.0  # until the last chunk


@dataclass
class StubLLM:
    url: str = ""
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    default: Reply | None = None
    respond: Callable[[dict[str, Any]], Reply] | None = (
        None  # answers from the request body, after the script
    )
    in_flight: int = 0
    max_in_flight: int = 0
    client_gone: int = 0  # answers the client hung up on before their end
    lock: threading.Lock = field(default_factory=threading.Lock)


def _usage(body: dict[str, Any], content: str) -> dict[str, int]:
    """Prompt tokens as the stub counts them (the project's WordPiece count), for measurements."""
    prompt = sum(count_tokens(m.get("content") or "") for m in body.get("messages") or [])
    return {
        "prompt_tokens": prompt,
        "completion_tokens": count_tokens(content),
        "total_tokens": prompt + count_tokens(content),
    }


@contextmanager
def stub_llm() -> Iterator[StubLLM]:
    stub = StubLLM()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with stub.lock:
                stub.requests.append(
                    {
                        "path": self.path,
                        "body": body,
                        "auth": self.headers.get("Authorization"),
                        "at": time.monotonic(),
                    }
                )
                stub.in_flight += 1
                stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
            try:
                self._answer(body)
            except (BrokenPipeError, ConnectionResetError):
                with stub.lock:
                    stub.client_gone += 1
            finally:
                with stub.lock:
                    stub.in_flight -= 1

        def _answer(self, body: dict[str, Any]) -> None:
            reply = (
                stub.script.pop(0) if stub.script else stub.respond(body) if stub.respond else stub.default
            )
            if self.path != "/v1/chat/completions" or reply is None:
                self._send(404, b"")
                return
            if reply.status == 200 and reply.raw is None and body.get("stream"):
                self._stream(body, reply)
                return
            time.sleep(reply.total_s)
            if reply.raw is not None:
                payload = reply.raw.encode()
            elif reply.status == 200:
                payload = json.dumps(
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": reply.finish_reason,
                                "message": {"role": "assistant", "content": reply.content},
                            }
                        ],
                        "usage": _usage(body, reply.content or ""),
                    }
                ).encode()
            else:
                payload = json.dumps({"error": {"message": reply.content or "error"}}).encode()
            self._send(reply.status, payload)

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, body: dict[str, Any], reply: Reply) -> None:
            content = reply.content or ""
            chunks = [content[i : i + CHUNK_CHARS] for i in range(0, len(content), CHUNK_CHARS)] or [""]
            gap = max(0.0, reply.total_s - reply.first_token_s) / max(1, len(chunks))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.flush()
            time.sleep(reply.first_token_s)
            for i, text in enumerate(chunks):
                last = i == len(chunks) - 1
                event = {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion.chunk",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"content": text},
                            "finish_reason": reply.finish_reason if last else None,
                        }
                    ],
                }
                self._event(json.dumps(event))
                if not last:
                    time.sleep(gap)
            if (body.get("stream_options") or {}).get("include_usage"):
                self._event(
                    json.dumps(
                        {
                            "id": "chatcmpl-stub",
                            "object": "chat.completion.chunk",
                            "choices": [],
                            "usage": _usage(body, content),
                        }
                    )
                )
            self._event("[DONE]")

        def _event(self, data: str) -> None:
            self.wfile.write(f"data: {data}\n\n".encode())
            self.wfile.flush()

    with serve_loopback(Handler) as base:
        stub.url = f"{base}/v1"
        yield stub

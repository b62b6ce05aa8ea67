"""A scripted model-API stub on loopback: the part both stubs share.

A stub answers each model request with the next reply of its script (or a default reply once the
script is spent) and records every request body it received, so a test can assert on what reached
the model. The subclasses speak the wire protocol (Anthropic Messages, OpenAI Responses).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

R = TypeVar("R")


class ScriptedStub(Generic[R]):
    """Loopback HTTP server; subclasses implement :meth:`handle` and name their model endpoint."""

    endpoint = ""  # the path of the model requests ("/v1/messages")
    text_keys: tuple[str, ...] = ()  # the body keys holding what the model reads
    default_model = ""
    default_reply: R  # what a request gets once the script is spent

    def __init__(
        self,
        script: Iterable[R | Callable[[dict[str, Any]], R]] = (),
        default: R | None = None,
        model: str | None = None,
    ) -> None:
        self.model = model or self.default_model
        self._default = default if default is not None else self.default_reply
        self._script: list[R | Callable[[dict[str, Any]], R]] = list(script)
        # (predicate, script): a request the predicate accepts takes its reply from that script
        # first; a subagent runs its own conversation beside the main one, in no fixed order.
        self._routes: list[tuple[Callable[[dict[str, Any]], bool], list[R]]] = []
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []  # {"method", "path", "headers", "body"} in arrival order
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # -- script -------------------------------------------------------------------------------
    def add(self, *replies: R | Callable[[dict[str, Any]], R]) -> None:
        """Append replies to the script (for a later session against the same stub)."""
        with self._lock:
            self._script.extend(replies)

    def route(self, predicate: Callable[[dict[str, Any]], bool], replies: Iterable[R]) -> None:
        """Answer the requests ``predicate`` accepts from ``replies`` (then from the main script)."""
        with self._lock:
            self._routes.append((predicate, list(replies)))

    def next_reply(self, body: dict[str, Any]) -> R:
        with self._lock:
            item: R | Callable[[dict[str, Any]], R] | None = None
            for predicate, replies in self._routes:
                if replies and predicate(body):
                    item = replies.pop(0)
                    break
            else:
                item = self._script.pop(0) if self._script else None
        if item is None:
            return self._default
        return item(body) if callable(item) else item

    @property
    def remaining(self) -> int:
        """Replies not yet given, routed ones included."""
        return len(self._script) + sum(len(r) for _, r in self._routes)

    # -- what reached the model ---------------------------------------------------------------
    def is_model_request(self, record: dict[str, Any]) -> bool:
        return bool(record["method"] == "POST" and record["path"].split("?")[0] == self.endpoint)

    @property
    def model_requests(self) -> list[dict[str, Any]]:
        """Bodies of the model requests in arrival order: the agent loop's (and subagents') turns."""
        return [r["body"] for r in self.requests if self.is_model_request(r)]

    def received_text(self, index: int | None = None) -> str:
        """All text of one model request (or every one): system prompt, instructions, messages, results."""
        bodies = self.model_requests if index is None else [self.model_requests[index]]
        return "\n".join(all_text({k: b.get(k) for k in self.text_keys}) for b in bodies)

    # -- server -------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _dispatch(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with stub._lock:
                    stub.requests.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": body,
                        }
                    )
                stub.handle(self, body)

            do_GET = do_POST = do_HEAD = _dispatch

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- protocol -----------------------------------------------------------------------------
    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        raise NotImplementedError


def send_json(h: BaseHTTPRequestHandler, payload: Any, status: int = 200) -> None:
    data = json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    if h.command != "HEAD":
        h.wfile.write(data)


def start_sse(h: BaseHTTPRequestHandler) -> None:
    # No Content-Length: the stream ends when the connection closes.
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()
    h.close_connection = True


def send_event(h: BaseHTTPRequestHandler, event: str, data: dict[str, Any]) -> None:
    h.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
    h.wfile.flush()


def all_text(value: Any) -> str:
    """Every string inside a request body, joined: what a test greps for "did X reach the model"."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    return "\n".join(out)


def tokens(body: dict[str, Any]) -> int:
    """A rough token count of a request, for the usage fields the clients read."""
    return max(1, len(json.dumps(body)) // 4)


def pieces(value: str, size: int = 40) -> list[str]:
    """``value`` in several deltas, as the real streams send it, so the client's accumulation is exercised."""
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]

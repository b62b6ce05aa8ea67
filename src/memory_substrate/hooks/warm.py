"""The hook's warm path: hand the memory work of an event to a running ``serve --transport http``.

With ``MEMORY_SUBSTRATE_HOOK_URL`` set (``http://127.0.0.1:8765``, or a team server's address)
and ``MEMORY_SUBSTRATE_HOOK_TOKEN`` (a token of the project's namespace, ``token create``), an
event's compile or capture is posted to ``URL/hooks/CLIENT`` (mcp/hooks_route.py), which holds
the store and the models warm. Everything else stays here: the transcript is read, the session's
state kept and the namespace computed on this machine, as on the cold path.

Any failure (no server listening, a refusal, a timeout, an answer that is not the route's) gives
None, and the caller does the work cold: the warm path can make a hook faster, never break it.
Imports only the standard library's sockets (and its HTTP client for https), so a hook that takes
the warm path loads neither the store nor numpy.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from memory_substrate.hooks.capture import IngestTarget
    from memory_substrate.json_types import JsonObject

URL_ENV = "MEMORY_SUBSTRATE_HOOK_URL"
TOKEN_ENV = "MEMORY_SUBSTRATE_HOOK_TOKEN"
EXTRA = "memory_substrate"  # the key added to the event (mcp/hooks_route.py)
# A server on this machine answers a compile in tens of milliseconds and refuses a connection at
# once when it is down; the limits bound a server that hangs, leaving the cold path its time.
CONTEXT_TIMEOUT = 3.0
CAPTURE_TIMEOUT = 20.0
MAX_ANSWER = 4_000_000

Log = Callable[[str], None]


@dataclass(frozen=True)
class WarmInjection:
    """What the server compiled: the text to hand over, and the ids it holds (as ``inject.Injection``)."""

    text: str
    ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class WarmContext:
    """The server's answer to a context event: ``injection`` None means print nothing."""

    injection: WarmInjection | None


def configured(environ: Mapping[str, str] | None = None) -> bool:
    return bool((environ if environ is not None else os.environ).get(URL_ENV, "").strip())


def context(
    client: str,
    event: Mapping[str, object],
    *,
    namespace: str,
    budget: int,
    given: set[str] | list[str],
    own: set[str] | list[str],
    timeout: float = CONTEXT_TIMEOUT,
    log: Log | None = None,
    environ: Mapping[str, str] | None = None,
) -> WarmContext | None:
    """The server's compile for a SessionStart or UserPromptSubmit ``event``; None: do it cold."""
    body: JsonObject = {
        **event,
        EXTRA: {"namespace": namespace, "budget": budget, "given": sorted(given), "own": sorted(own)},
    }
    answer = post(client, body, namespace, timeout=timeout, log=log, environ=environ)
    if answer is None:
        return None
    found = answer.get("injection")
    if found is None and answer.get("output") == "":
        return WarmContext(None)
    if (
        isinstance(found, dict)
        and isinstance(found.get("text"), str)
        and isinstance(found.get("ids"), list)
        and all(isinstance(i, str) for i in found["ids"])
    ):
        return WarmContext(WarmInjection(found["text"], list(found["ids"])))
    _say(log, "warm path: the server's answer is not a hook answer; doing it here")
    return None


def ingest(
    client: str,
    event: Mapping[str, object],
    namespace: str,
    mode: str,
    input_data: JsonObject,
    options: JsonObject | None = None,
    *,
    timeout: float = CAPTURE_TIMEOUT,
    log: Log | None = None,
    environ: Mapping[str, str] | None = None,
) -> JsonObject | None:
    """The server's ingest of a capture; None: do it cold."""
    body: JsonObject = {
        **event,
        EXTRA: {
            "namespace": namespace,
            "ingest": {"mode": mode, "input_data": input_data, "options": options or {}},
        },
    }
    answer = post(client, body, namespace, timeout=timeout, log=log, environ=environ)
    if answer is None:
        return None
    result = answer.get("result")
    if not isinstance(result, dict):
        _say(log, "warm path: the server's answer holds no ingest result; doing it here")
        return None
    return result


def memory_factory(
    client: str,
    event: Mapping[str, object],
    cold: Callable[[str], IngestTarget],
    *,
    log: Log | None = None,
) -> Callable[[str], IngestTarget]:
    """What ``hooks.capture`` takes as ``memory``: ``factory(ns).ingest(...)`` goes to the server
    and, when that fails, to ``cold(ns)`` (whose store is opened only then)."""
    return lambda namespace: _FallbackMemory(client, event, namespace, cold, log)


class _FallbackMemory:
    def __init__(
        self,
        client: str,
        event: Mapping[str, object],
        namespace: str,
        cold: Callable[[str], IngestTarget],
        log: Log | None,
    ) -> None:
        self.client, self.event, self.namespace, self.cold, self.log = client, event, namespace, cold, log

    def ingest(self, mode: str, input_data: JsonObject, options: JsonObject | None = None) -> JsonObject:
        result = ingest(self.client, self.event, self.namespace, mode, input_data, options, log=self.log)
        if result is not None:
            return result
        return dict(self.cold(self.namespace).ingest(mode, input_data, options))


def post(
    client: str,
    body: JsonObject,
    namespace: str,
    *,
    timeout: float,
    log: Log | None = None,
    environ: Mapping[str, str] | None = None,
) -> JsonObject | None:
    """POST ``body`` to ``URL/hooks/CLIENT``; the answer's JSON object, or None (said in ``log``)."""
    env = environ if environ is not None else os.environ
    url = env.get(URL_ENV, "").strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        _say(log, f"warm path: {URL_ENV} is not an http(s) URL: {url!r}")
        return None
    path = parts.path.rstrip("/") + f"/hooks/{client}"
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-Memory-Substrate-Namespace": namespace,
    }
    token = env.get(TOKEN_ENV, "").strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    exchange = _exchange_tls if parts.scheme == "https" else _exchange_plain
    try:
        status, raw = exchange(parts.hostname, parts.port, path, payload, headers, timeout)
    except (OSError, ValueError) as exc:  # refused, reset, timed out, not HTTP
        _say(
            log,
            f"warm path: {parts.hostname}:{parts.port or ''} unreachable ({type(exc).__name__}: {exc}); doing it here",
        )
        return None
    if status != 200:
        _say(log, f"warm path: the server answered {status}{_error_code(raw)}; doing it here")
        return None
    try:
        answer = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_ANSWER else None
    except (UnicodeDecodeError, ValueError):
        answer = None
    if not isinstance(answer, dict):
        _say(log, "warm path: the server's answer is not a JSON object; doing it here")
        return None
    return answer


def _exchange_plain(
    host: str, port: int | None, path: str, payload: bytes, headers: dict[str, str], timeout: float
) -> tuple[int, bytes]:
    """One HTTP/1.0 request over a socket: ``(status, body)``. The standard library's client
    imports its e-mail parser and TLS, about 20 ms of every hook; a request to our own route
    needs neither. HTTP/1.0 asks the server to close the connection after a body sent whole
    (never chunked), so the answer is what arrives before the close, up to a Content-Length."""
    import socket
    import time

    deadline = time.monotonic() + timeout
    lines = [f"POST {path or '/'} HTTP/1.0", f"Host: {host}:{port or 80}", f"Content-Length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
    chunks: list[bytes] = []
    received = 0
    with socket.create_connection((host, port or 80), timeout=timeout) as sock:
        sock.sendall(request)
        while received <= MAX_ANSWER + 65_536:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no whole answer within the timeout")
            sock.settimeout(left)
            chunk = sock.recv(65_536)
            if not chunk:
                break
            chunks.append(chunk)
            received += len(chunk)
    head, sep, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    if not sep or not version.startswith("HTTP/") or not rest[:3].isdigit():
        raise ValueError(f"not an HTTP answer: {status_line[:80]!r}")
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
            if len(body) < length:
                raise ValueError(f"the answer ended after {len(body)} of {length} bytes")
            body = body[:length]
    return int(rest[:3]), body


def _exchange_tls(
    host: str, port: int | None, path: str, payload: bytes, headers: dict[str, str], timeout: float
) -> tuple[int, bytes]:
    """The same request over TLS (a team server), through the standard library's client."""
    import http.client

    conn = http.client.HTTPSConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", path or "/", body=payload, headers=headers)
        response = conn.getresponse()
        return response.status, response.read(MAX_ANSWER + 1)
    except http.client.HTTPException as exc:  # a peer that does not speak HTTP
        raise ValueError(str(exc)) from None
    finally:
        conn.close()


def _error_code(raw: bytes) -> str:
    try:
        code = json.loads(raw.decode("utf-8"))["error"]["code"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return ""
    return f" {code}" if isinstance(code, str) else ""


def _say(log: Log | None, line: str) -> None:
    if log is not None:
        log(line)

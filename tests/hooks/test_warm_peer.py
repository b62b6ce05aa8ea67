"""The warm path's request (hooks/warm.py) against loopback peers that answer in every way a
server, a proxy or something else on the port can: what reaches the peer is one well-formed
request, and anything but a whole JSON answer from our route leaves the work to the cold path
(None), within the timeout, with the reason in the log."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest

from memory_substrate.hooks import warm

Answer = Callable[[socket.socket, bytes], None]


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


@contextmanager
def _peer(answer: Answer) -> Iterator[tuple[str, list[bytes]]]:
    """A loopback listener that hands each connection's request to ``answer``; yields its URL
    and the requests it got."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            if stop.is_set():
                conn.close()
                return
            with conn:
                request = _read_request(conn)
                seen.append(request)
                with suppress(OSError):
                    answer(conn, request)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/base/", seen
    finally:
        stop.set()
        socket.create_connection(("127.0.0.1", port)).close()  # wakes the accept
        thread.join(timeout=5)
        listener.close()


def _reply(raw: bytes) -> Answer:
    return lambda conn, _request: conn.sendall(raw)


def _http(status: str, body: bytes, *headers: str) -> bytes:
    head = "\r\n".join([f"HTTP/1.1 {status}", *headers])
    return head.encode() + b"\r\n\r\n" + body


def _context(url: str, timeout: float = 2.0) -> tuple[warm.WarmContext | None, list[str]]:
    said: list[str] = []
    got = warm.context(
        "claude-code",
        {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/p", "prompt": "héllo"},
        namespace="proj-1",
        budget=100,
        given={"b", "a"},
        own=set(),
        timeout=timeout,
        log=said.append,
        environ={warm.URL_ENV: url, warm.TOKEN_ENV: "tok-123"},
    )
    return got, said


ANSWER = json.dumps({"injection": {"text": "ctx ü", "ids": ["x1"]}}).encode()


def test_a_whole_answer_is_read_and_the_request_is_well_formed() -> None:
    with _peer(_reply(_http("200 OK", ANSWER, f"Content-Length: {len(ANSWER)}"))) as (url, seen):
        got, said = _context(url)
    assert got is not None and got.injection == warm.WarmInjection("ctx ü", ["x1"]) and said == []
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0] == "POST /base/hooks/claude-code HTTP/1.0"
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert headers["authorization"] == "Bearer tok-123"
    assert headers["x-memory-substrate-namespace"] == "proj-1"
    assert int(headers["content-length"]) == len(body)
    sent = json.loads(body.decode("utf-8"))
    assert sent["prompt"] == "héllo" and sent[warm.EXTRA]["given"] == ["a", "b"]


def test_an_answer_delimited_by_the_close_is_read_whole() -> None:
    with _peer(_reply(_http("200 OK", ANSWER))) as (url, _):
        got, _said = _context(url)
    assert got is not None and got.injection is not None and got.injection.text == "ctx ü"


def test_nothing_to_give_is_an_answer_too() -> None:
    empty = json.dumps({"injection": None, "output": ""}).encode()
    with _peer(_reply(_http("200 OK", empty, f"Content-Length: {len(empty)}"))) as (url, _):
        got, said = _context(url)
    assert got == warm.WarmContext(None) and said == []


@pytest.mark.parametrize(
    "raw,reason",
    [
        (_http("401 Unauthorized", b'{"error": {"code": "unauthorized"}}'), "answered 401 unauthorized"),
        (_http("200 OK", b"[1, 2]"), "not a JSON object"),
        (_http("200 OK", b"<html>proxy</html>"), "not a JSON object"),
        (_http("200 OK", ANSWER[:10], f"Content-Length: {len(ANSWER)}"), "unreachable"),  # cut short
        (b"SSH-2.0-OpenSSH_9.6\r\n", "unreachable"),  # not HTTP at all
        (b"", "unreachable"),  # closed without a word
        (_http("200 OK", b'{"something": "else"}'), "not a hook answer"),
    ],
)
def test_anything_else_leaves_the_work_to_the_cold_path(raw: bytes, reason: str) -> None:
    with _peer(_reply(raw)) as (url, _):
        got, said = _context(url)
    assert got is None
    assert len(said) == 1 and reason in said[0], said


def test_a_peer_that_trickles_is_given_up_at_the_timeout() -> None:
    def trickle(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        for _ in range(40):
            time.sleep(0.1)
            conn.sendall(b"X-Pad: 1\r\n")

    started = time.monotonic()
    with _peer(trickle) as (url, _):
        got, said = _context(url, timeout=0.5)
        took = time.monotonic() - started
    assert got is None and "unreachable" in said[0]
    assert took < 2.0


def test_https_to_a_plain_peer_fails_over_quickly() -> None:
    with _peer(_reply(_http("200 OK", ANSWER))) as (url, _):
        started = time.monotonic()
        got, said = _context(url.replace("http://", "https://"), timeout=0.5)
    assert got is None and "unreachable" in said[0] and time.monotonic() - started < 2.0


def test_a_capture_answer_is_its_result() -> None:
    result: dict[str, Any] = {"result": {"status": "completed", "source_id": "src:1"}}
    body = json.dumps(result).encode()
    with _peer(_reply(_http("200 OK", body))) as (url, seen):
        said: list[str] = []
        got = warm.ingest(
            "codex",
            {"hook_event_name": "Stop", "session_id": "s"},
            "proj-1",
            "conversation",
            {"messages": []},
            log=said.append,
            environ={warm.URL_ENV: url},
        )
    assert got == result["result"] and said == []
    assert seen[0].startswith(b"POST /base/hooks/codex HTTP/1.0\r\n")
    assert b"authorization" not in seen[0].lower()  # no token configured: none sent

"""web capture against a real HTTP server on loopback, and the address guard."""

from __future__ import annotations

import ipaddress
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memory_substrate.ingest.adapters import web
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.adapters.html_text import decode_html, extract_main_text
from memory_substrate.ingest.adapters.web import capture_web, is_blocked_address

ARTICLE = """<!doctype html>
<html><head><title>Context Packs | Example Docs</title><script>var tracking = "SCRIPT_TEXT";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">NAV_LINK_TEXT</a></nav>
<article>
<h1>Context Packs</h1>
<p>A context pack bundles the memory an agent needs before starting a task. It is assembled from
durable knowledge, recent activity and open work items, ranked by relevance to the task.</p>
<h2>Building one</h2>
<p>The builder queries the graph, expands neighbours, and trims the result to a token budget so that
the pack fits in the prompt without crowding out the task itself.</p>
<p>Packs are cached by task fingerprint and invalidated when any contributing memory changes.</p>
</article>
<footer>FOOTER_TEXT copyright</footer>
</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012 - shared on purpose, reset per server

    def log_message(self, format: str, *args: object) -> None:  # silence test output
        pass

    def _send(self, status: int, ctype: str, body: bytes, *, length: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        _Handler.hits.append(self.path)
        if self.path == "/article":
            self._send(200, "text/html; charset=utf-8", ARTICLE.encode())
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/article")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/to-private":
            self.send_response(301)
            self.send_header("Location", "http://10.1.2.3/internal")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/plain":
            self._send(200, "text/plain", b"line one\nline two\n\nsecond paragraph\n")
        elif self.path == "/image":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n")
        elif self.path == "/declared-big":
            self._send(200, "text/html", b"<p>" + b"a" * 5000 + b"</p>")
        elif self.path == "/streamed-big":
            # No Content-Length: the cap must hold while reading.
            self._send(200, "text/html", b"<p>" + b"b" * 50_000 + b"</p>", length=False)
        elif self.path == "/slow":
            time.sleep(1.5)
            self._send(200, "text/html", b"<p>late</p>")
        elif self.path == "/empty":
            self._send(200, "text/html", b"<html><body><script>x()</script></body></html>")
        else:
            self._send(404, "text/plain", b"missing")


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.hits = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _code(url: str, **kwargs: object) -> str:
    with pytest.raises(CaptureError) as info:
        capture_web(url, **kwargs)  # type: ignore[arg-type]
    assert info.value.code == f"memory_capture_{info.value.reason}"
    return info.value.reason


def test_article_main_text_is_captured(server: str) -> None:
    src = capture_web(f"{server}/article", allow_private=True)
    text = "\n".join(s.text for s in src.segments)
    assert "bundles the memory an agent needs" in text
    assert "invalidated when any contributing memory changes" in text
    for noise in ("SCRIPT_TEXT", "NAV_LINK_TEXT", "FOOTER_TEXT"):
        assert noise not in text
    assert src.kind == "web" and src.title and "Context Packs" in src.title
    assert src.origin_classification == "web" and src.adapter_name == "web_adapter"
    p = src.payload
    assert p["url"] == p["final_url"] == f"{server}/article"
    content_hash, fetched_at = p["content_hash"], p["fetched_at"]
    assert p["status_code"] == 200 and p["content_type"] == "text/html"
    assert isinstance(content_hash, str) and len(content_hash) == 64
    assert isinstance(fetched_at, str) and fetched_at.endswith("+00:00")
    for seg in src.segments:
        assert seg.locator["kind"] == "line" and seg.locator["url"] == p["final_url"]
        start, end = seg.locator["line_start"], seg.locator["line_end"]
        assert isinstance(start, int) and isinstance(end, int) and 1 <= start <= end


def test_redirect_is_followed_and_recorded(server: str) -> None:
    src = capture_web(f"{server}/moved", allow_private=True)
    assert src.payload["final_url"] == f"{server}/article"
    assert src.payload["redirects"] == [f"{server}/article"]
    assert src.uri == f"{server}/moved"
    assert _Handler.hits == ["/moved", "/article"]


def test_loopback_is_refused_before_any_request(server: str) -> None:
    assert _code(f"{server}/article") == "web_blocked_address"
    assert _code(server.replace("127.0.0.1", "localhost") + "/article") == "web_blocked_address"
    assert _Handler.hits == []


def test_every_redirect_hop_is_rechecked(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Let the loopback test server count as public, so only the redirect target is judged.
    real = web.is_blocked_address
    monkeypatch.setattr(web, "is_blocked_address", lambda ip: False if ip.is_loopback else real(ip))
    assert _code(f"{server}/to-private") == "web_blocked_address"
    assert _Handler.hits == ["/to-private"]


def test_plain_text_page(server: str) -> None:
    src = capture_web(f"{server}/plain", allow_private=True)
    assert src.payload["extractor"] == "plain_text"
    assert [(s.locator["line_start"], s.locator["line_end"]) for s in src.segments] == [(1, 4)]


@pytest.mark.parametrize(
    ("path", "kwargs", "code"),
    [
        ("/image", {}, "web_unsupported_content"),
        ("/declared-big", {"max_bytes": 1000}, "web_too_large"),
        ("/streamed-big", {"max_bytes": 10_000}, "web_too_large"),
        ("/missing", {}, "web_fetch_failed"),
        ("/loop", {}, "web_fetch_failed"),
        ("/slow", {"timeout_s": 0.3}, "web_fetch_failed"),
        ("/empty", {}, "web_no_text"),
    ],
)
def test_fetch_failures_are_typed(server: str, path: str, kwargs: dict[str, object], code: str) -> None:
    assert _code(f"{server}{path}", allow_private=True, **kwargs) == code


def test_streamed_body_under_cap_is_fine(server: str) -> None:
    src = capture_web(f"{server}/streamed-big", allow_private=True, max_bytes=100_000)
    size = src.payload["size_bytes"]
    assert isinstance(size, int) and size > 50_000


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "not a url", "http:///nohost"])
def test_invalid_urls(url: str) -> None:
    assert _code(url) == "web_invalid_url"


@pytest.mark.parametrize(
    ("address", "blocked"),
    [
        ("127.0.0.1", True),
        ("10.0.0.1", True),
        ("172.16.5.4", True),
        ("192.168.1.1", True),
        ("169.254.169.254", True),
        ("100.64.0.1", True),
        ("0.0.0.0", True),
        ("224.0.0.1", True),
        ("::1", True),
        ("fe80::1", True),
        ("fc00::1", True),
        ("::ffff:127.0.0.1", True),
        ("64:ff9b::a00:1", True),
        ("8.8.8.8", False),
        ("2606:4700:4700::1111", False),
    ],
)
def test_address_classification(address: str, blocked: bool) -> None:
    assert is_blocked_address(ipaddress.ip_address(address)) is blocked


def test_fallback_extractor_when_trafilatura_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # makes "import trafilatura" fail
    out = extract_main_text(ARTICLE)
    assert out.extractor == "html_fallback" and out.title == "Context Packs | Example Docs"
    assert "# Context Packs" in out.text and "## Building one" in out.text
    assert "bundles the memory an agent needs" in out.text
    assert "SCRIPT_TEXT" not in out.text and "NAV_LINK_TEXT" not in out.text and "FOOTER_TEXT" not in out.text


def test_trafilatura_is_used_when_installed() -> None:
    pytest.importorskip("trafilatura")
    out = extract_main_text(ARTICLE)
    assert out.extractor == "trafilatura"
    assert "Building one" in out.text and "NAV_LINK_TEXT" not in out.text


def test_charset_decoding() -> None:
    assert decode_html("<meta charset='iso-8859-1'><p>caf\xe9</p>".encode("latin-1"), None).endswith(
        "café</p>"
    )
    assert decode_html("café".encode(), "utf-8") == "café"
    assert decode_html(b"caf\xe9", None) == "café"  # not UTF-8, no declaration: cp1252

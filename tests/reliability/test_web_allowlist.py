"""Web capture allowlist (issue 23): private hosts stay refused unless listed, and the list is
checked against each hop's resolved address at connect time, not only the name.

A loopback stub server plays the intranet page; ``web_allow_hosts`` through the ingest mode
(both backends) admits it by CIDR, and nothing else: not a redirect to another private address,
not a listed *name* that resolves to loopback or link-local (cloud metadata).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.ingest.adapters.web import allowlisted, resolve_host
from tests.loopback import send_page, send_redirect, serve_loopback

PAGE = b"<html><body><article><h1>Wiki</h1><p>The intranet wiki says deploys happen on Tuesdays.</p></article></body></html>"


class _Wiki(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/escape":
            send_redirect(self, "http://127.0.0.2:9/")  # another loopback address, not listed
            return
        send_page(self, PAGE)


@pytest.fixture
def wiki() -> Iterator[str]:
    with serve_loopback(_Wiki) as url:
        yield url


def _ingest(memory: Memory, url: str) -> dict[str, Any]:
    try:
        return memory.ingest("web", {"url": url})
    except Exception as exc:
        return {"error": getattr(exc, "code", repr(exc))}


def test_private_hosts_need_the_allowlist(make_settings: Any, namespace: str, wiki: str) -> None:
    port = wiki.rsplit(":", 1)[1]
    closed = Memory(make_settings(), namespace=namespace)
    listed = Memory(make_settings(web_allow_hosts=[f"127.0.0.1/32:{port}"]), namespace=namespace)
    by_name = Memory(make_settings(web_allow_hosts=["localhost", "127.0.0.1.nip.io"]), namespace=namespace)
    try:
        assert _ingest(closed, f"{wiki}/page") == {"error": "memory_capture_web_blocked_address"}
        ok = _ingest(listed, f"{wiki}/page")
        assert ok.get("status") == "completed", ok
        assert _ingest(listed, f"{wiki}/escape") == {"error": "memory_capture_web_blocked_address"}
        # A name entry never admits loopback: the resolved address decides.
        assert _ingest(by_name, f"http://localhost:{port}/page") == {
            "error": "memory_capture_web_blocked_address"
        }
    finally:
        for m in (closed, listed, by_name):
            m.close()


@pytest.mark.parametrize(
    ("address", "host", "allow", "admitted"),
    [
        ("10.1.2.3", "wiki.corp", ("wiki.corp",), True),
        ("10.1.2.3", "docs.corp", (".corp",), True),
        ("10.1.2.3", "wiki.corp.evil", (".corp",), False),
        ("10.1.2.3", "other", ("wiki.corp",), False),
        ("127.0.0.1", "wiki.corp", ("wiki.corp",), False),
        ("169.254.169.254", "wiki.corp", ("wiki.corp",), False),
        ("::ffff:127.0.0.1", "wiki.corp", ("wiki.corp",), False),
        ("10.9.0.7", "anything", ("10.9.0.0/16",), True),
        ("10.10.0.7", "anything", ("10.9.0.0/16",), False),
        ("::ffff:10.9.0.7", "anything", ("10.9.0.0/16",), True),
        ("fd00::5", "wiki.corp", ("wiki.corp",), True),
    ],
)
def test_allowlist_checks_the_resolved_address(
    address: str, host: str, allow: tuple[str, ...], admitted: bool
) -> None:
    assert allowlisted(ipaddress.ip_address(address), host, allow) is admitted


def test_off_by_default() -> None:
    with pytest.raises(Exception, match="non-public"):
        resolve_host("10.0.0.1", 80, allow_private=False)
    assert resolve_host("10.0.0.1", 80, allow_private=False, allow=("10.0.0.0/8",)) == ["10.0.0.1"]

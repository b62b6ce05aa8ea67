"""An allowlisted address admits the port its entry names, else 80 and 443 only (issue 37, item 8).

Web capture with ``MEMORY_SUBSTRATE_WEB_ALLOW_HOSTS=["127.0.0.1"]`` used to fetch every port of
that address, the server's own ``/healthz`` among them. Now a bare entry admits the web's ports
only, and ``127.0.0.1:PORT`` (or ``[fd00::1]:PORT``, ``10.0.0.0/8:PORT``, ``wiki.corp:PORT``)
admits that port.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.ingest.adapters.web import allowlisted
from tests.http.helpers import call_tools, cli, http_server, server_env
from tests.loopback import serve_loopback
from tests.reliability.test_web_allowlist import _Wiki


@pytest.fixture
def wiki() -> Iterator[str]:
    with serve_loopback(_Wiki) as url:
        yield url


def _code(memory: Memory, url: str) -> str:
    try:
        return str(memory.ingest("web", {"url": url})["status"])
    except MemorySubstrateError as exc:
        return exc.code


def test_a_bare_address_does_not_admit_other_ports(make_settings: Any, namespace: str, wiki: str) -> None:
    port = int(wiki.rsplit(":", 1)[1])
    bare = Memory(make_settings(web_allow_hosts=["127.0.0.1"]), namespace=namespace)
    with_port = Memory(make_settings(web_allow_hosts=[f"127.0.0.1:{port}"]), namespace=namespace)
    other_port = Memory(make_settings(web_allow_hosts=[f"127.0.0.1:{port + 1}"]), namespace=namespace)
    try:
        assert _code(bare, f"{wiki}/page") == "memory_capture_web_blocked_address"
        assert _code(other_port, f"{wiki}/page") == "memory_capture_web_blocked_address"
        assert _code(with_port, f"{wiki}/page") == "completed"
    finally:
        for m in (bare, with_port, other_port):
            m.close()


def test_web_capture_cannot_fetch_the_servers_own_port(tmp_path: Path) -> None:
    env = server_env(tmp_path / "root")
    env["MEMORY_SUBSTRATE_WEB_ALLOW_HOSTS"] = '["127.0.0.1"]'
    token = cli(env, "token", "create", "--namespace", "tenant-a").strip()
    with http_server(env, tmp_path / "server.log") as url:
        own = url.replace("/mcp", "/healthz")
        [answer] = call_tools(url, token, [("memory_ingest", "web", {"url": own})])
    assert answer.get("error", {}).get("code") == "memory_capture_web_blocked_address", answer


@pytest.mark.parametrize(
    ("address", "port", "allow", "admitted"),
    [
        ("127.0.0.1", 80, ("127.0.0.1",), True),
        ("127.0.0.1", 443, ("127.0.0.1",), True),
        ("127.0.0.1", 8765, ("127.0.0.1",), False),
        ("127.0.0.1", 8765, ("127.0.0.1:8765",), True),
        ("10.1.2.3", 8080, ("10.0.0.0/8",), False),
        ("10.1.2.3", 8080, ("10.0.0.0/8:8080",), True),
        ("fd00::1", 8080, ("fd00::1",), False),
        ("fd00::1", 443, ("fd00::1",), True),
        ("fd00::1", 8080, ("[fd00::1]:8080",), True),
        ("fd00::1", 8080, ("[fd00::/8]:8080",), True),
        ("10.1.2.3", 8080, ("wiki.corp",), False),
        ("10.1.2.3", 8080, ("wiki.corp:8080",), True),
        ("10.1.2.3", 443, (".corp",), True),
    ],
)
def test_allowlist_ports(address: str, port: int, allow: tuple[str, ...], admitted: bool) -> None:
    assert allowlisted(ipaddress.ip_address(address), "wiki.corp", allow, port) is admitted

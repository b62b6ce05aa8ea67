"""Every HTTP surface answers only to its own names (issue 37, items 2 and 8).

DNS rebinding: ``curl -H 'Host: attacker.example:P' http://127.0.0.1:P/ns/A/search?q=...`` used to
answer the standalone inspector's 200 with namespace A's data. The real commands run here, on
loopback: ``memory-substrate inspect`` and ``serve --transport http --inspector``. A foreign Host
gets 421 on every route; the bound address, ``localhost`` and ``--allowed-host`` names answer.
``serve --host '[::1]'`` binds (it used to pass the loopback check, then exit 3).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from memory_substrate import Memory
from memory_substrate.hosts import HostRule
from tests.http.helpers import cli, free_port, server_env

FOREIGN = "attacker.example"


@contextmanager
def _process(env: dict[str, str], log: Path, args: list[str], probe: str) -> Iterator[None]:
    """Run the CLI with ``args`` until ``probe`` (a URL) answers anything; SIGTERM it after."""
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memory_substrate.cli.main", *args],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"exited early ({proc.returncode}): {log.read_text()}")
            try:
                httpx2.get(probe, timeout=1)
                break
            except httpx2.HTTPError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"did not start: {log.read_text()}") from None
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _get(url: str, host: str, **headers: str) -> httpx2.Response:
    return httpx2.get(url, headers={"Host": host, **headers}, timeout=10)


def _seed(env: dict[str, str], namespace: str) -> None:
    memory = Memory.open(root=env["MEMORY_SUBSTRATE_ROOT"], namespace=namespace, embedder="none")
    memory.remember(
        "knowledge",
        {
            "kind": "fact",
            "title": "Rebinding canary",
            "summary": "canary secret text",
            "reason": "test",
            "memory_source": "user_declared",
            "scope_refs": ["scope:project"],
        },
    )
    memory.close()


def test_the_standalone_inspector_refuses_a_foreign_host(tmp_path: Path) -> None:
    env = server_env(tmp_path / "root")
    _seed(env, "tenant-a")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with _process(env, tmp_path / "inspect.log", ["inspect", "--port", str(port)], f"{base}/"):
        for path in ("/", "/ns/tenant-a/search?q=canary", "/ns/tenant-a/sources"):
            refused = _get(base + path, f"{FOREIGN}:{port}")
            assert refused.status_code == 421, (path, refused.status_code)
            assert "canary" not in refused.text and "tenant-a" not in refused.text
        assert _get(base + "/", FOREIGN).status_code == 421
        for good in (f"127.0.0.1:{port}", f"localhost:{port}"):
            answer = _get(base + "/ns/tenant-a/search?q=canary", good)
            assert answer.status_code == 200 and "canary" in answer.text.lower(), good
        # A page of a foreign origin cannot use a trusted Host either (a browser sends Origin).
        assert _get(base + "/", f"127.0.0.1:{port}", Origin=f"http://{FOREIGN}:{port}").status_code == 403


def test_serve_refuses_a_foreign_host_on_every_route(tmp_path: Path) -> None:
    env = server_env(tmp_path / "root")
    _seed(env, "tenant-a")
    token = cli(env, "token", "create", "--namespace", "tenant-a").strip()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = ["serve", "--transport", "http", "--port", str(port), "--inspector"]
    auth = {"Authorization": f"Bearer {token}"}
    with _process(env, tmp_path / "serve.log", args, f"{base}/healthz"):
        for path in ("/inspect/ns/tenant-a/search?q=canary", "/inspect/", "/healthz"):
            refused = _get(base + path, f"{FOREIGN}:{port}", **auth)
            assert refused.status_code == 421, (path, refused.status_code)
            assert "canary" not in refused.text
        mcp = httpx2.post(
            f"{base}/mcp",
            content=b"{}",
            timeout=10,
            headers={
                "Host": f"{FOREIGN}:{port}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **auth,
            },
        )
        assert mcp.status_code == 421
        page = _get(base + "/inspect/ns/tenant-a/search?q=canary", f"127.0.0.1:{port}", **auth)
        assert page.status_code == 200 and "canary" in page.text.lower()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_serve_binds_a_bracketed_ipv6_loopback(tmp_path: Path) -> None:
    env = server_env(tmp_path / "root")
    port = free_port()
    args = ["serve", "--transport", "http", "--host", "[::1]", "--port", str(port)]
    with _process(env, tmp_path / "serve.log", args, f"http://[::1]:{port}/healthz"):
        assert httpx2.get(f"http://[::1]:{port}/healthz", timeout=10).status_code == 200
        assert _get(f"http://[::1]:{port}/healthz", f"{FOREIGN}:{port}").status_code == 421
    assert "[::1]" in (tmp_path / "serve.log").read_text()


@pytest.mark.parametrize(
    ("bound", "names", "host", "trusted"),
    [
        ("127.0.0.1", (), "127.0.0.1:8765", True),
        ("127.0.0.1", (), "localhost:8765", True),
        ("127.0.0.1", (), "[::1]:8765", True),
        ("127.0.0.1", (), "attacker.example:8765", False),
        ("127.0.0.1", (), "127.0.0.1.nip.io:8765", False),
        ("127.0.0.1", (), "", False),
        ("[::1]", (), "[::1]:9", True),
        ("10.0.0.5", (), "10.0.0.5:8765", True),
        ("10.0.0.5", (), "10.0.0.6:8765", False),
        ("10.0.0.5", (), "localhost:8765", False),
        ("0.0.0.0", (), "192.0.2.7:8765", True),
        ("0.0.0.0", (), "attacker.example", False),
        ("0.0.0.0", ("mem.example.com",), "MEM.example.com.:443", True),
        ("0.0.0.0", ("mem.example.com:443",), "mem.example.com:8443", False),
        ("0.0.0.0", ("mem.example.com:443",), "mem.example.com:443", True),
        ("mem.local", (), "mem.local:8765", True),
        ("mem.local", (), "other.local:8765", False),
    ],
)
def test_the_host_rule(bound: str, names: tuple[str, ...], host: str, trusted: bool) -> None:
    assert HostRule(bound, names).trusts(host) is trusted


@pytest.mark.parametrize("where", ["option", "setting"])
def test_configured_names_are_answered(tmp_path: Path, where: str) -> None:
    env = server_env(tmp_path / "root")
    _seed(env, "tenant-a")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = ["inspect", "--port", str(port)]
    if where == "option":
        args += ["--allowed-host", "mem.example.com", "--allowed-host", f"other.example:{port}"]
    else:
        env["MEMORY_SUBSTRATE_ALLOWED_HOSTS"] = f'["mem.example.com", "other.example:{port}"]'
    with _process(env, tmp_path / "inspect.log", args, f"{base}/"):
        for good in ("mem.example.com", f"mem.example.com:{port}", f"other.example:{port}"):
            answer = _get(base + "/ns/tenant-a/search?q=canary", good)
            assert answer.status_code == 200 and "canary" in answer.text.lower(), good
        for bad in (FOREIGN, "other.example", f"other.example:{port + 1}"):
            assert _get(base + "/", bad).status_code == 421, bad

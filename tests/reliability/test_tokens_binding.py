"""Binding and tokens (issue 23): no public bind by accident; tokens listed, revoked, rotated, expired.

Revocation is checked against a running server: the request right after ``token revoke`` (run by
another process, as an operator would) gets 401; so does a rotated-out token and an expired one,
while the token ``rotate`` printed works. ``token list`` never prints a token.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.http.helpers import cli, free_port, http_server, post_status, server_env

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
).encode()


def _status(url: str, token: str) -> int:
    return post_status(url, {"Authorization": f"Bearer {token}"}, INIT)


def _run(env: dict[str, str], *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_substrate.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("backend_kind", ["sqlite", "postgres"])
def test_revoked_rotated_and_expired_tokens_get_401_on_the_next_request(
    backend_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend_kind == "postgres" else None
    env = server_env(tmp_path / "store", url)
    ns = f"tok-{time.monotonic_ns()}"
    keep = cli(env, "token", "create", "--namespace", ns, "--label", "keep").strip()
    drop = cli(env, "token", "create", "--namespace", ns, "--label", "drop").strip()
    old = cli(env, "token", "create", "--namespace", ns, "--label", "rotated").strip()
    short = cli(env, "token", "create", "--namespace", ns, "--label", "short", "--expires-in", "20s").strip()
    listed = cli(env, "token", "list", "--namespace", ns)
    for value in (keep, drop, old, short):
        assert value not in listed
    rows = {r["label"]: r for r in json.loads(listed)}
    assert set(rows) == {"keep", "drop", "rotated", "short"}
    assert rows["short"]["expires_at"] and rows["keep"]["expires_at"] is None

    with http_server(env, tmp_path / "server.log") as mcp_url:
        for value in (keep, drop, old, short):
            assert _status(mcp_url, value) == 200
        revoked = json.loads(cli(env, "token", "revoke", rows["drop"]["token_id"]))
        assert revoked["revoked"] == 1
        assert _status(mcp_url, drop) == 401  # the very next request
        new = cli(env, "token", "rotate", rows["rotated"]["token_id"]).strip()
        assert new.startswith("mst_") and new != old
        assert _status(mcp_url, old) == 401
        assert _status(mcp_url, new) == 200
        expires = datetime.fromisoformat(rows["short"]["expires_at"])
        time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds() + 0.2))
        assert _status(mcp_url, short) == 401
        assert _status(mcp_url, keep) == 200
    after = json.loads(cli(env, "token", "list", "--namespace", ns))
    assert {r["label"] for r in after} == {"keep", "rotated", "short"}
    assert next(r for r in after if r["label"] == "short")["expired"] is True
    bad = _run(env, "token", "revoke", "zz")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_public_bind_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    env = server_env(tmp_path / "store")
    port = str(free_port())
    done = _run(env, "serve", "--transport", "http", "--host", "0.0.0.0", "--port", port)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs at least one token" in lines[0], done.stderr
    done = _run(env, "inspect", "--host", "0.0.0.0", "--port", port)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--require-token" in done.stderr
    done = _run(env, "inspect", "--host", "0.0.0.0", "--port", port, "--require-token")
    assert done.returncode != 0 and "needs at least one token" in done.stderr, done.stderr


def test_public_bind_with_a_token_says_so_in_one_line(tmp_path: Path) -> None:
    env = server_env(tmp_path / "store")
    cli(env, "token", "create", "--namespace", "team")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memory_substrate.cli.main",
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        lines = [
            proc.stderr.readline() for _ in range(2)
        ]  # the serving line (store, how to stop), the bind line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    public = [line for line in lines if "non-loopback" in line]
    assert len(public) == 1, lines
    assert "non-loopback 0.0.0.0" in public[0] and "1 token(s)" in public[0] and "TLS" in public[0]

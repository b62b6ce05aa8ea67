"""Tokens, redirects, secrets and namespace names (issue 37, item 6): every bad input is a clear
typed refusal, never ``memory_internal_error``, and nothing is lost or leaked.

* ``token rotate`` keeps the expiry of a token made with ``--expires-in`` (both backends);
  ``--expires-in 999999w`` is a usage error (exit 2), not an ``OverflowError``.
* A redirect to ``http://0177.0.0.2/`` (an IPv4 address in octal) is ``web_invalid_url``.
* ``password=Sup3rS3cretPass!``-style assignments are redacted in stored text and in the ingest
  answer, beside the AWS key on the same line (both backends).
* One rule for namespace names on every surface: the CLI's ``--namespace``, ``token create``,
  ``Memory``, the graph tools' ``owner_id`` over MCP and the inspector's ``/ns/<name>/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from starlette.testclient import TestClient

from memory_substrate import Memory
from memory_substrate.errors import MemorySubstrateError, ValidationError
from memory_substrate.inspector import build_inspector
from memory_substrate.mcp.server import build_server
from tests.loopback import serve_loopback
from tests.reliability.common import child_env, cli

BAD_NAMES = ["../x", "a/b", "x" * 5000, "ab\u202ecd", "ab\u200bcd", "bell\x07", "", " spaced "]
PASSWORD = "Sup3rS3cretPass!"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


def _env(tmp_path: Path, request: pytest.FixtureRequest, backend: str) -> dict[str, str]:
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    return child_env(tmp_path / "store", url, "default")


def _tokens(env: dict[str, str], namespace: str) -> list[dict[str, Any]]:
    done = cli(env, "token", "list", "--namespace", namespace)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def test_rotate_keeps_the_expiry(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str, namespace: str
) -> None:
    env = _env(tmp_path, request, backend)
    made = cli(env, "token", "create", "--namespace", namespace, "--expires-in", "30d")
    assert made.returncode == 0, made.stderr
    [old] = _tokens(env, namespace)
    assert old["expires_at"]
    rotated = cli(env, "token", "rotate", old["token_id"])
    assert rotated.returncode == 0, rotated.stderr
    [new] = _tokens(env, namespace)
    assert new["token_id"] != old["token_id"]
    assert new["expires_at"] == old["expires_at"], (old, new)
    # An explicit --expires-in still sets a new one.
    again = cli(env, "token", "rotate", new["token_id"], "--expires-in", "1d")
    assert again.returncode == 0, again.stderr
    [last] = _tokens(env, namespace)
    assert last["expires_at"] < new["expires_at"]


@pytest.mark.parametrize("value", ["999999w", "99999999d", "4000d"])
def test_an_expiry_too_far_is_a_usage_error(tmp_path: Path, value: str) -> None:
    env = child_env(tmp_path / "store", None, "default")
    done = cli(env, "token", "create", "--namespace", "a", "--expires-in", value)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--expires-in" in done.stderr and "internal" not in done.stderr and "Traceback" not in done.stderr
    assert json.loads(cli(env, "token", "list").stdout) == []


class _Redirector(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", "http://0177.0.0.2/")
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def redirector() -> Iterator[str]:
    with serve_loopback(_Redirector) as url:
        yield url


def test_a_redirect_to_an_octal_address_is_refused_clearly(
    make_settings: Any, namespace: str, redirector: str
) -> None:
    # an allowlist entry admits the port it names (a bare address admits 80 and 443 only)
    port = redirector.rsplit(":", 1)[1].split("/", 1)[0]
    memory = Memory(make_settings(web_allow_hosts=[f"127.0.0.1/32:{port}"]), namespace=namespace)
    try:
        with pytest.raises(MemorySubstrateError) as info:
            memory.ingest("web", {"url": f"{redirector}/start"})
    finally:
        memory.close()
    assert info.value.code == "memory_capture_web_invalid_url", info.value.to_dict()
    assert "0177.0.0.2" in info.value.message


def test_password_assignments_are_redacted_like_keys(memory: Memory, tmp_path: Path) -> None:
    config = tmp_path / "deploy.md"
    config.write_text(
        "# Deploy\n\n"
        f"password={PASSWORD} aws={AWS_KEY}\n"
        "DB_PASSWD: hunter22x\n"
        '"api_key": "k3y-v4lue-here"\n'
        "token: str  # a type annotation, not a secret\n"
    )
    answer = memory.ingest("markdown", {"path": str(config)})
    with memory.runtime.read_with_expired() as s:
        stored = "\n".join(seg.text for seg in s.get_segments(answer["source_id"]))
    shown = json.dumps(answer) + stored
    for secret in (PASSWORD, AWS_KEY, "hunter22x", "k3y-v4lue-here"):
        assert secret not in shown, secret
    assert "[REDACTED:secret_assignment]" in stored and "[REDACTED:aws_access_key]" in stored
    assert "token: str" in stored
    kinds = {w["kind"] for w in answer.get("withheld", [])}
    assert {"secret_assignment", "aws_access_key"} <= kinds, answer.get("withheld")
    assert memory.query("search", {"query": PASSWORD})["count"] == 0


@pytest.mark.parametrize("name", BAD_NAMES[:6], ids=range(6))  # each CLI run is a process start
def test_one_namespace_rule_on_the_cli(tmp_path: Path, name: str) -> None:
    env = child_env(tmp_path / "store", None, "default")
    for args in (["--namespace", name, "status"], ["token", "create", "--namespace", name]):
        done = cli(env, *args)
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert "letters, digits" in done.stderr and "Traceback" not in done.stderr
    env["MEMORY_SUBSTRATE_NAMESPACE"] = name
    done = cli(env, "status")
    assert done.returncode == 2, (done.returncode, done.stderr)


def test_one_namespace_rule_in_process_over_mcp_and_in_the_inspector(memory: Memory) -> None:
    for name in BAD_NAMES:
        with pytest.raises(ValidationError, match="letters, digits"):
            Memory(memory.settings, namespace=name)
        with pytest.raises(ValidationError):
            memory.for_namespace(name)
    memory.ingest("conversation", {"messages": [{"role": "user", "content": "hello"}]})

    async def graph_calls() -> list[dict[str, Any]]:
        out = []
        async with Client(build_server(memory, "graph")) as c:
            for name in BAD_NAMES[:-1]:  # owner_id "" and " spaced " alike: one of them is enough
                result = await c.call_tool(
                    "create_node", {"text": "a fact", "owner_id": name, "auto_link": False}
                )
                out.append(json.loads(result.content[0].text))  # type: ignore[union-attr]
        return out

    import anyio

    for err in anyio.run(graph_calls):
        assert err["code"] == "memory_validation_error", err
    assert not set(BAD_NAMES) & set(memory.store.namespaces())
    client = TestClient(build_inspector(memory), base_url="http://127.0.0.1")  # the Host it answers to
    for name in ("..%2Fx", "ab%E2%80%AEcd", "x" * 300):
        assert client.get(f"/ns/{name}/").status_code == 404

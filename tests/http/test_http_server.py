"""The HTTP transport, end to end: real ``serve --transport http`` processes, the SDK's HTTP client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.http.helpers import call_tools, cli, http_server, knowledge, post_status, server_env

CLAIM = {"subject": "node:service", "predicate": "runs_on", "value": "postgres"}


@pytest.mark.postgres
def test_two_servers_share_one_postgres(postgres_url: str, tmp_path: Path, namespace: str) -> None:
    env = server_env(tmp_path / "root", postgres_url)
    other = namespace + "-other"
    token_a = cli(env, "token", "create", "--namespace", namespace, "--label", "agent-a").strip()
    token_b = cli(env, "token", "create", "--namespace", other).strip()
    assert token_a != token_b and len(token_a) > 40

    with http_server(env, tmp_path / "s1.log") as url1, http_server(env, tmp_path / "s2.log") as url2:
        # Write through server 1.
        written = call_tools(
            url1,
            token_a,
            [
                ("memory_remember", "knowledge", knowledge("Service runs on PostgreSQL", payload=CLAIM)),
                (
                    "memory_ingest",
                    "conversation",
                    {
                        "title": "Standup notes",
                        "messages": [
                            {"role": "user", "content": "The zeppelin migration finishes on Thursday."}
                        ],
                    },
                ),
            ],
        )
        knowledge_id = written[0]["object_id"]
        source_id = written[1]["source_id"]

        # Read through server 2: both writes are visible there.
        read = call_tools(
            url2,
            token_a,
            [
                ("memory_query", "search", {"query": "service postgresql"}),
                ("memory_query", "search", {"query": "zeppelin migration"}),
                ("memory_query", "page", {"id": knowledge_id}),
                # Governance holds across processes: the same claim through server 2 is a duplicate.
                (
                    "memory_remember",
                    "knowledge",
                    knowledge("Service runs on PostgreSQL again", payload=CLAIM),
                ),
            ],
        )
        assert knowledge_id in [i["id"] for i in read[0]["items"]]
        assert source_id in [i["id"] for i in read[1]["items"]]
        assert read[2]["object"]["id"] == knowledge_id
        assert read[2]["object"]["payload"]["predicate"] == "runs_on"
        assert read[3]["error"]["code"] == "memory_duplicate"

        # A token of another namespace sees nothing of namespace A, on either server.
        for url in (url1, url2):
            seen = call_tools(
                url,
                token_b,
                [
                    ("memory_query", "search", {"query": "service postgresql zeppelin"}),
                    ("memory_query", "page", {"id": knowledge_id}),
                    ("memory_query", "recent", {}),
                ],
            )
            assert seen[0]["items"] == []
            assert seen[1]["error"]["code"] == "memory_not_found"
            assert seen[2]["items"] == []

        # Missing, malformed and wrong tokens are refused before anything runs.
        for url in (url1, url2):
            assert post_status(url, {}) == 401
            assert post_status(url, {"Authorization": "Bearer mst_not-a-real-token"}) == 401
            assert post_status(url, {"Authorization": f"Basic {token_a}"}) == 401


def test_http_server_on_sqlite(tmp_path: Path, namespace: str) -> None:
    env = server_env(tmp_path / "root")
    token_a = cli(env, "token", "create", "--namespace", namespace).strip()
    token_b = cli(env, "token", "create", "--namespace", namespace + "-b").strip()
    with http_server(env, tmp_path / "server.log") as url:
        written = call_tools(
            url, token_a, [("memory_remember", "knowledge", knowledge("Lighthouse keeper schedule"))]
        )
        object_id = written[0]["object_id"]
        found = call_tools(url, token_a, [("memory_query", "search", {"query": "lighthouse"})])
        assert object_id in [i["id"] for i in found[0]["items"]]
        hidden = call_tools(url, token_b, [("memory_query", "search", {"query": "lighthouse"})])
        assert hidden[0]["items"] == []
        assert post_status(url, {}) == 401
        assert post_status(url, {"Authorization": "Bearer wrong"}) == 401
        # Oversized bodies are refused (4 MiB limit), and the server keeps serving.
        assert post_status(url, {"Authorization": f"Bearer {token_a}"}, b"x" * (4 * 1024 * 1024 + 1)) == 413
        again = call_tools(url, token_a, [("memory_query", "search", {"query": "lighthouse"})])
        assert object_id in [i["id"] for i in again[0]["items"]]
    # The CLI sees what the HTTP server wrote (same SQLite file, the token's namespace).
    status = cli(env, "--namespace", namespace, "status")
    assert '"objects": 1' in status

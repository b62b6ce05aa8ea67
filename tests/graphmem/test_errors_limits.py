"""Every spec-002 error code and every validation limit, through the MCP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory, Settings
from memory_substrate.mcp.server import build_server
from tests.graphmem.conftest import err, ok, tool

pytestmark = pytest.mark.anyio


async def test_validation_errors(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        fact = (await ok(c, "create_node", text="a fact", auto_link=False))["node"]
        out = await err(c, "create_node", "memory_validation_error", text="x" * 10_001)
        assert out["error"] == "Text too long (max 10000 chars)" and out["code"] == "memory_validation_error"
        await ok(c, "create_node", text="x" * 10_000, auto_link=False)
        await err(c, "create_node", "memory_validation_error", text=None)
        await err(c, "create_node", "memory_validation_error", text="   ")
        big = {"blob": "y" * 100_000}
        await err(c, "create_node", "memory_validation_error", text="t", metadata=big)
        await ok(c, "create_node", text="t", metadata={"blob": "y" * 99_000}, auto_link=False)
        for ttl in (0, -1, 3650.5):
            await err(c, "create_node", "memory_validation_error", text="t", ttl_days=ttl)
        out = await err(c, "create_node", "memory_validation_error", text="t", ttl_days=3650.001)
        assert out["error"].endswith("(got 3650.001)"), out
        assert (await ok(c, "create_node", text="t", ttl_days=3650, auto_link=False))["node"][
            "ttl_days"
        ] == 3650
        await err(c, "create_node", "memory_validation_error", text="t", expires_at=1000)  # in the past
        for owner in ("bad owner", "a/b", "x" * 200, ""):
            await err(c, "get_stats", "memory_validation_error", owner_id=owner)
        await ok(c, "get_stats", owner_id="team_a-1@example")
        for rel_type in ("has space", "dash-ed", ""):
            await err(
                c,
                "create_relation",
                "memory_validation_error",
                from_id=fact["id"],
                to_id=fact["id"],
                relation_type=rel_type,
            )
        await err(c, "create_node", "memory_validation_error", text="t", node_type="Thing")
        await err(c, "create_node", "memory_validation_error", text="t", status="deleted")
        await err(
            c,
            "create_node",
            "memory_validation_error",
            text="t",
            links=[{"node_id": "know:missing", "relation_type": "RELATED_TO"}],
        )
        await err(
            c,
            "create_node",
            "memory_validation_error",
            text="t",
            links=[{"node_id": fact["id"], "relation_type": "bad type"}],
        )
        await err(c, "update_node", "memory_validation_error", node_id=fact["id"])  # nothing to update
        await err(c, "update_node", "memory_validation_error", node_id=fact["id"], entity_type="PERSON")
        await err(c, "update_node", "memory_validation_error", node_id=fact["id"], text="z" * 10_001)
        await err(c, "create_triplet", "memory_validation_error", subject="", predicate="p", object_value="o")
        for pred in ("p!", "bad-pred", "works at", ""):  # as create_relation refuses such a relation_type
            await err(
                c, "create_triplet", "memory_validation_error", subject="s", predicate=pred, object_value="o"
            )
            await err(
                c,
                "create_relation",
                "memory_validation_error",
                from_id=fact["id"],
                to_id=fact["id"],
                relation_type=pred,
            )
        await err(
            c,
            "create_triplet",
            "memory_validation_error",
            subject="s",
            predicate="p",
            object_value="o",
            fact_id="know:missing",
        )
        await err(c, "create_summary_fact", "memory_validation_error", fact_ids=[], summary_text="s")
        await err(
            c, "create_summary_fact", "memory_validation_error", fact_ids=["know:missing"], summary_text="s"
        )
        await err(c, "search", "memory_validation_error", query="q", limit=0)
        await err(c, "search", "memory_validation_error", query="q", node_types=["Widget"])
        await err(c, "get_context", "memory_validation_error", node_id=fact["id"], depth=9)
        await err(
            c, "get_trace", "memory_validation_error", from_id=fact["id"], to_id=fact["id"], max_paths=0
        )
        # Nothing was written by any refused call.
        assert (await ok(c, "get_stats"))["stats"]["facts"] == 4


async def test_a_missing_required_argument_is_a_validation_error_naming_it(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        for name, args, missing in [
            ("get_context", {}, "node_id"),
            ("get_trace", {"from_id": "know:a"}, "to_id"),
            ("create_node", {}, "text"),
        ]:
            out = await err(c, name, "memory_validation_error", **args)
            assert f"{missing}: Field required" in out["error"], out


async def test_not_found_errors(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        fact = (await ok(c, "create_node", text="a fact", auto_link=False))["node"]
        for name, args in [
            ("get_node", {"node_id": "know:nope"}),
            ("update_node", {"node_id": "know:nope", "text": "x"}),
            ("delete_node", {"node_id": "know:nope"}),
            ("get_node_change_history", {"node_id": "know:nope"}),
            ("mark_outdated", {"fact_id": "know:nope"}),
            ("find_similar", {"fact_id": "know:nope"}),
            ("get_context", {"node_id": ""}),
            ("get_context", {"node_id": "ent:nope"}),
            ("get_trace", {"from_id": fact["id"], "to_id": "know:nope"}),
            ("create_relation", {"from_id": fact["id"], "to_id": "know:nope", "relation_type": "RELATED_TO"}),
        ]:
            await err(c, name, "memory_not_found", **args)
        # A source is not a graph node.
        src = gmem.ingest("conversation", {"title": "t", "messages": [{"role": "user", "content": "hi"}]})[
            "source_id"
        ]
        await err(c, "get_node", "memory_not_found", node_id=src)


async def test_service_and_connection_errors_carry_no_traceback(
    make_settings: Any, namespace: str, backend: str
) -> None:
    mem = Memory(make_settings(), namespace=namespace)
    server = build_server(mem, "graph")
    async with Client(server) as c:
        await ok(c, "test_connection")
        mem.store.close()  # the store goes away under a running server
        if backend == "sqlite":  # ... and cannot be reopened: its file became a directory
            path = mem.settings.sqlite_path
            for f in path.parent.glob(path.name + "*"):
                f.unlink()
            path.mkdir()
        out = await err(c, "get_stats", "memory_service_error")
        assert "incident" in out["error"]
        await err(c, "test_connection", "connection_error")
        health = await ok(c, "health_check")  # health_check never fails: it reports
        assert health["falkordb"] is False and health["vector_index"] is False


def _memory(make_settings: Any, namespace: str) -> Memory:
    """A Memory built now: the limits are settings, read when the settings are built."""
    return Memory(make_settings(embedder="static"), namespace=namespace)


async def test_limits_come_from_the_environment_prefixed_first(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_TEXT_LENGTH", "50")
    monkeypatch.setenv("MEMORY_SUBSTRATE_MAX_TEXT_LENGTH", "40")
    monkeypatch.setenv("MAX_METADATA_SIZE", "30")
    monkeypatch.setenv("MIN_TTL_DAYS", "1")
    monkeypatch.setenv("MAX_TTL_DAYS", "10")
    monkeypatch.setenv("CACHE_SEARCH_MAXSIZE", "7")
    monkeypatch.setenv("CACHE_SEARCH_TTL", "5")
    monkeypatch.setenv("MEMORY_SUBSTRATE_CACHE_EMBEDDINGS_ENABLED", "false")
    async with Client(build_server(_memory(make_settings, namespace), "graph")) as c:
        out = await err(c, "create_node", "memory_validation_error", text="x" * 41)
        assert out["error"] == "Text too long (max 40 chars)"
        await ok(c, "create_node", text="x" * 40, auto_link=False)
        await err(c, "create_node", "memory_validation_error", text="t", metadata={"k": "v" * 30})
        await ok(c, "create_node", text="t", metadata={"k": "v"}, auto_link=False)
        await err(c, "create_node", "memory_validation_error", text="t", ttl_days=1)
        await err(c, "create_node", "memory_validation_error", text="t", ttl_days=10.5)
        await ok(c, "create_node", text="t", ttl_days=10, auto_link=False)
        cache = (await ok(c, "health_check"))["cache"]
        assert cache["search"]["maxsize"] == 7 and cache["search"]["ttl"] == 5
        assert cache["embeddings"]["enabled"] is False


async def test_limits_are_read_from_dot_env_in_the_working_directory(
    make_settings: Any, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text("# spec 002 limits\nMAX_TEXT_LENGTH=25\nMAX_TTL_DAYS=5\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("MAX_TTL_DAYS", "7")  # the environment wins over the file
    async with Client(build_server(_memory(make_settings, namespace), "graph")) as c:
        assert (await err(c, "create_node", "memory_validation_error", text="x" * 26))[
            "error"
        ] == "Text too long (max 25 chars)"
        await err(c, "create_node", "memory_validation_error", text="t", ttl_days=7.5)
        await ok(c, "create_node", text="t", ttl_days=7, auto_link=False)


async def test_a_bad_limit_value_is_answered_not_a_dead_server(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_TEXT_LENGTH", "abc")
    async with Client(build_server(_memory(make_settings, namespace), "graph")) as c:
        out = await err(c, "create_node", "memory_validation_error", text="t")
        assert "MAX_TEXT_LENGTH='abc' is not a valid int" in out["error"], out
        health = await ok(c, "health_check")  # still answers, and says why
        assert "MAX_TEXT_LENGTH='abc'" in health["details"]["config"]
        await ok(c, "test_connection")


def test_limits_refuse_bad_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused limit keeps its default and ``config_error`` names it; other settings load."""
    monkeypatch.chdir(tmp_path)  # no .env here
    clean = Settings(root=tmp_path)
    assert (
        clean.config_error is None and clean.max_text_length == 10_000 and clean.cache_search_enabled is True
    )
    monkeypatch.setenv("MAX_TEXT_LENGTH", "many")
    monkeypatch.setenv("CACHE_SEARCH_ENABLED", "perhaps")
    monkeypatch.setenv("MEMORY_SUBSTRATE_MAX_TTL_DAYS", "-3")
    monkeypatch.setenv("MEMORY_SUBSTRATE_NAMESPACE", "kept")
    bad = Settings(root=tmp_path)
    assert bad.namespace == "kept" and bad.max_text_length == 10_000 and bad.cache_search_enabled is True
    assert bad.max_ttl_days == 3650.0
    assert bad.config_error is not None
    for why in (
        "MAX_TEXT_LENGTH='many' is not a valid int",
        "CACHE_SEARCH_ENABLED='perhaps' is not a valid bool",
        "MAX_TTL_DAYS must not be negative",
    ):
        assert why in bad.config_error, bad.config_error


def test_only_the_limits_are_read_from_dot_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text(
        "MEMORY_SUBSTRATE_NAMESPACE=from-file\nMEMORY_SUBSTRATE_SEARCH_DEFAULT_LIMIT=3\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMORY_SUBSTRATE_NAMESPACE", raising=False)
    settings = Settings(root=tmp_path)
    assert settings.search_default_limit == 3 and settings.namespace == "default"


async def test_argument_type_errors_answer_in_the_graph_envelope(gmem: Memory) -> None:
    """Spec 002: every failure, the SDK's own argument validation included, is
    {"success": false, "error", "error_code"} (never the spec-001 error document)."""
    async with Client(build_server(gmem, "graph")) as c:
        for name, args, field in (
            ("search", {"query": "q", "limit": "abc"}, "limit"),
            ("get_node", {"node_id": 123}, "node_id"),
            ("create_node", {"text": ["a"]}, "text"),
            ("create_relation", {"from_id": "a"}, "to_id"),
        ):
            out = await err(c, name, "memory_validation_error", **args)
            assert field in out["error"] and "pydantic" not in out["error"], out
        out = await tool(c, "search", query="q")
        assert out["success"] is True


async def test_an_unreadable_dot_env_is_answered_not_a_dead_process(
    make_settings: Any, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``.env`` in the working directory that is not UTF-8 (another tool's file) must not stop the
    settings from loading: every other command works, and the graph toolset answers why (f2967fb
    raised a typed error in the graph toolset only)."""
    (tmp_path / ".env").write_bytes(b"MAX_TEXT_LENGTH=\xff\xfe12\n")
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path)
    assert settings.max_text_length == 10_000
    assert (
        settings.config_error is not None
        and "cannot read" in settings.config_error
        and ".env" in settings.config_error
    )
    async with Client(build_server(_memory(make_settings, namespace), "graph")) as c:
        out = await err(c, "create_node", "memory_validation_error", text="t")
        assert "cannot read" in out["error"], out


def test_settings_load_in_a_working_directory_that_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.env`` is looked for in the working directory; when that directory was removed (a shell
    left in a deleted folder) the settings still load, as they did before they read ``.env``."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    settings = Settings(root=tmp_path)
    assert settings.max_text_length == 10_000 and settings.config_error is None

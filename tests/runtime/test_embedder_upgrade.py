"""A store written before the default embedder changed keeps the model its vectors were made with
(embed/choice.py), says so, and switches once reindexed with the new default; an explicit setting
always wins. Through the Python API, the MCP in-process client and the CLI entry point."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory, Settings
from memory_substrate.mcp.server import build_server
from tests.helpers import call, entry_point

STATEMENT = "The mechanic fixed the brakes of my automobile last Tuesday."
OTHERS = ["We baked sourdough bread with rye flour.", "Flights to Lisbon were cheaper in spring."]
# No word in common with STATEMENT: only the vector stream can find it.
QUERY = {"query": "car garage vehicle"}
SEARCH = {"detail": "full", "result_unit": "segment", "max_items": 3}
EXE = entry_point()


@pytest.fixture
def settings_for(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """Settings for this backend with the embedder left unset unless given (the env var removed)."""
    monkeypatch.delenv("MEMORY_SUBSTRATE_EMBEDDER", raising=False)
    monkeypatch.delenv("MEMORY_SUBSTRATE_EMBEDDER_MODEL", raising=False)
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None

    def build(**overrides: Any) -> Settings:
        base: dict[str, Any] = {"root": tmp_path / "store", **({"database_url": url} if url else {})}
        return Settings(**{**base, **overrides})

    return build


def _write_before_upgrade(settings: Settings, namespace: str) -> None:
    with Memory(settings, namespace=namespace) as mem:
        mem.ingest(
            "conversation",
            {
                "title": "chat",
                "messages": [{"role": "user", "content": text} for text in [STATEMENT, *OTHERS]],
            },
        )


def _found_by_vector(result: dict[str, Any]) -> bool:
    first = (result.get("items") or [{}])[0]
    found: bool = first.get("excerpt") == STATEMENT and first.get("retrieval_sources") == ["semantic"]
    return found


def test_a_store_written_with_static_keeps_it_by_default(settings_for: Any, namespace: str) -> None:
    _write_before_upgrade(settings_for(embedder="static"), namespace)
    with Memory(settings_for(), namespace=namespace) as mem:
        found = mem.query("search", QUERY, SEARCH)
        assert _found_by_vector(found), found.get("items")
        semantic = found["semantic_backend"]
        assert semantic["provider"] == "static" and semantic["dimensions"] == 256
        assert semantic["kept"]["configured"] == "use-gated"
        assert "made by 'static'" in semantic["kept"]["reason"]
        assert semantic["kept"]["switch"].startswith("MEMORY_SUBSTRATE_EMBEDDER=use-gated memory-substrate")
        structure = mem.maintain("structure", {}, {})["semantic_backend"]
        assert structure["configured"] == "use-gated" and structure["provider"] == "static"
        assert structure["kept"] == semantic["kept"]
        vectors = mem.maintain("repair", {}, {})["derived_indexes"]["vectors"]
        assert (
            vectors["objects_stale_model"] == vectors["segments_stale_model"] == 0
        )  # nothing to reindex for
        # Writes after the upgrade embed with the kept model too: the namespace stays consistent.
        mem.ingest(
            "conversation",
            {"title": "later", "messages": [{"role": "user", "content": "Tulips bloom in April."}]},
        )
        assert mem.maintain("repair", {}, {})["derived_indexes"]["vectors"]["segments_stale_model"] == 0


def test_a_store_written_with_the_previous_default_keeps_it(settings_for: Any, namespace: str) -> None:
    """Round 6's default (the static distillation of the encoder, gated) is kept like ``static``;
    a namespace holding vectors of both earlier defaults keeps the newer one."""
    with Memory(settings_for(embedder="static"), namespace=namespace) as mem:
        mem.ingest(
            "conversation", {"title": "older", "messages": [{"role": "user", "content": t} for t in OTHERS]}
        )
    _write_before_upgrade(settings_for(embedder="static-multilingual"), namespace)
    with Memory(settings_for(), namespace=namespace) as mem:
        found = mem.query("search", QUERY, SEARCH)
        semantic = found["semantic_backend"]
        assert semantic["provider"] == "static-multilingual" and semantic["dimensions"] == 400
        assert semantic["kept"]["configured"] == "use-gated"
        assert "made by 'static-multilingual'" in semantic["kept"]["reason"]
        assert (
            semantic["kept"]["vectors_model"].startswith("gated:static:")
            and "use-m3-static" in semantic["kept"]["vectors_model"]
        )
        assert any(
            i.get("retrieval_sources") == ["semantic"] and i.get("excerpt") == STATEMENT
            for i in found["items"]
        )
        vectors = mem.maintain("repair", {}, {})["derived_indexes"]["vectors"]
        assert vectors["segments_stale_model"] == 2  # the first write's static vectors
        mem.maintain("reindex", {}, {"apply": True})
    with Memory(settings_for(), namespace=namespace) as mem:  # reindexed, as by default: static-multilingual
        assert mem.query("search", QUERY, SEARCH)["semantic_backend"]["provider"] == "static-multilingual"
    with Memory(settings_for(embedder="use-gated"), namespace=namespace) as mem:
        mem.maintain("reindex", {}, {"apply": True})
    with Memory(settings_for(), namespace=namespace) as mem:  # reindexed with the new default: it is used
        found = mem.query("search", QUERY, SEARCH)
        assert (
            found["semantic_backend"]["provider"] == "use-gated" and "kept" not in found["semantic_backend"]
        )
        assert _found_by_vector(found)


def test_an_explicit_embedder_wins(settings_for: Any, namespace: str) -> None:
    _write_before_upgrade(settings_for(embedder="static"), namespace)
    with Memory(settings_for(embedder="use-gated"), namespace=namespace) as mem:
        found = mem.query("search", QUERY, SEARCH)
        assert not _found_by_vector(found)  # the stale vectors: what the diagnostics report
        assert found["semantic_backend"]["provider"] == "use-gated"
        assert "kept" not in found["semantic_backend"]
        vectors = mem.maintain("repair", {}, {})["derived_indexes"]["vectors"]
        assert vectors["segments_stale_model"] == 3


def test_a_new_store_uses_the_default(settings_for: Any, namespace: str) -> None:
    _write_before_upgrade(settings_for(), namespace)
    with Memory(settings_for(), namespace=namespace) as mem:
        semantic = mem.query("search", QUERY, SEARCH)["semantic_backend"]
        assert semantic["provider"] == "use-gated" and semantic["dimensions"] == 256 + 512 + 16
        assert "kept" not in semantic
        assert "kept" not in mem.maintain("structure", {}, {})["semantic_backend"]


def test_each_namespace_keeps_its_own_vectors_model(settings_for: Any, namespace: str) -> None:
    _write_before_upgrade(settings_for(embedder="static"), namespace)
    _write_before_upgrade(settings_for(), namespace + "-new")
    with Memory(settings_for(), namespace=namespace + "-new") as mem:
        assert mem.query("search", QUERY, SEARCH)["semantic_backend"]["provider"] == "use-gated"
        old = mem.for_namespace(namespace)
        found = old.query("search", QUERY, SEARCH)
        assert found["semantic_backend"]["provider"] == "static" and _found_by_vector(found)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_over_mcp_search_and_structure_say_why(settings_for: Any, namespace: str) -> None:
    _write_before_upgrade(settings_for(embedder="static"), namespace)
    with Memory(settings_for(), namespace=namespace) as mem:
        async with Client(build_server(mem)) as client:
            found = await call(client, "memory_query", "search", QUERY, SEARCH)
            assert _found_by_vector(found) and found["semantic_backend"]["provider"] == "static"
            structure = await call(client, "memory_maintain", "structure", {}, {})
            assert "made by 'static'" in structure["semantic_backend"]["kept"]["reason"]


def _cli(settings: Settings, *args: str, **env: str) -> dict[str, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    base["MEMORY_SUBSTRATE_ROOT"] = str(settings.root)
    if settings.database_url:
        base["MEMORY_SUBSTRATE_DATABASE_URL"] = settings.database_url
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    out = subprocess.run([*cmd, *args], capture_output=True, text=True, env={**base, **env}, timeout=300)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def test_cli_doctor_says_why_and_the_documented_switch_works(settings_for: Any, namespace: str) -> None:
    settings = settings_for()
    _write_before_upgrade(settings_for(embedder="static"), namespace)
    doctor = _cli(settings, "--namespace", namespace, "doctor")
    kept = doctor["semantic_backend"]["kept"]
    assert doctor["ok"] and doctor["semantic_backend"]["provider"] == "static"
    # The exact command the report gives, run as given (its env assignment, then the entry point).
    words = shlex.split(kept["switch"])
    assignment, program, args = words[0], words[1], words[2:]
    assert program == "memory-substrate"
    name, value = assignment.split("=", 1)
    done = _cli(settings, *args, **{name: value})
    assert done["applied"] is True and done["counts"]["segment_vectors"] == 3
    # Set explicitly (here the old model): it is used, and there is nothing to explain.
    explicit = _cli(settings, "--namespace", namespace, "doctor", MEMORY_SUBSTRATE_EMBEDDER="static")
    assert explicit["semantic_backend"]["provider"] == "static" and "kept" not in explicit["semantic_backend"]
    # Reindexed: the namespace now uses the default, and still finds the paraphrase by vector.
    with Memory(settings, namespace=namespace) as mem:
        found = mem.query("search", QUERY, SEARCH)
        assert (
            found["semantic_backend"]["provider"] == "use-gated" and "kept" not in found["semantic_backend"]
        )
        assert _found_by_vector(found)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_graph_toolset_uses_each_namespaces_choice(settings_for: Any, namespace: str) -> None:
    old = namespace + "-old"
    with Memory(settings_for(embedder="static"), namespace=old) as mem:
        async with Client(build_server(mem, "graph")) as client:
            for text in ("The billing service runs on Kafka", "Payments are billed through Kafka topics"):
                result = await client.call_tool("create_node", {"text": text, "auto_link": False})
                fact = dict(result.structured_content or {})["node"]
    # Served from a new namespace (the default model); the old one is reached by owner_id.
    _write_before_upgrade(settings_for(), namespace)
    with Memory(settings_for(), namespace=namespace) as mem:
        async with Client(build_server(mem, "graph")) as client:
            result = await client.call_tool(
                "find_similar", {"fact_id": fact["id"], "owner_id": old, "threshold": 0.0}
            )
            similar = dict(result.structured_content or {})
            assert similar["success"] is True and similar["count"] == 1, similar

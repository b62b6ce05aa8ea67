"""A repository captured again unchanged is a noop, whichever options chose the same files (the
suggested exclude patterns of the first answer included); a changed file is a new capture that
supersedes the old one. Through the MCP client, on both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call

pytestmark = pytest.mark.anyio


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "pkg").mkdir(parents=True)
    (root / ".codex").mkdir()
    (root / ".codex" / "state.json").write_text('{"session": 1}')
    (root / "pkg" / "cart.py").write_text('"""The cart."""\n\n\ndef total(items):\n    return sum(items)\n')
    (root / "README.md").write_text("# Shop\n\nSells things.\n")
    return root


async def _repo_sources(c: Client) -> list[dict[str, Any]]:
    recent = await call(c, "memory_query", "recent", {}, {"max_items": 50, "detail": "full"})
    return [i for i in recent["items"] if i.get("object_type") == "source" and i.get("kind") == "repo"]


async def test_the_same_files_through_the_suggested_excludes_are_a_noop(
    memory: Memory, tmp_path: Path
) -> None:
    root = _repo(tmp_path)
    async with Client(build_server(memory)) as c:
        first = await call(c, "memory_ingest", "repo", {"path": str(root)})
        assert first["status"] == "completed_with_pending_decisions" and first[
            "suggested_exclude_patterns"
        ] == [".codex"]
        patterns = {"path": str(root), "exclude_patterns": first["suggested_exclude_patterns"]}
        again = await call(c, "memory_ingest", "repo", patterns)
        assert again["status"] == "noop" and again["reason"] == "repo_fingerprint_unchanged", again
        assert again["source_id"] == first["source_id"] and again["patch_id"] is None
        assert again["requires_decision"] is False  # the excludes settled the open decision
        assert (
            await call(c, "memory_ingest", "repo", {**patterns, "exclude_patterns": [".codex/", "*.lock"]})
        )["status"] == "noop"
        sources = await _repo_sources(c)
        assert [s["id"] for s in sources] == [first["source_id"]] and sources[0]["status"] == "active"
        # a changed file is a new capture, and the old one is superseded
        (root / "pkg" / "cart.py").write_text(
            '"""The cart."""\n\n\ndef total(items, tax):\n    return sum(items) * tax\n'
        )
        changed = await call(c, "memory_ingest", "repo", patterns)
        assert changed["status"] == "completed" and changed["superseded_source_id"] == first["source_id"], (
            changed
        )
        assert (await call(c, "memory_ingest", "repo", patterns))["status"] == "noop"

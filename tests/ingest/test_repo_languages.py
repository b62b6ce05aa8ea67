"""Repository capture of files outside the core outliners, end to end through memory_ingest and a
segment search: Kotlin and shell are outlined (tree-sitter-kotlin, tree-sitter-bash), and any
other text file the walk admits is still findable by its path and the head of its text."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call
from tests.ingest_adapters.conftest import write

pytestmark = pytest.mark.anyio

UTIL_KT = """package com.example.geometry

import kotlin.math.PI

/** Computes the area of a circle from its radius. */
fun circleArea(radius: Double): Double = PI * radius * radius

/**
 * A square with a side length.
 */
class Square(val side: Double) {
    /** Perimeter of the square, four sides. */
    fun perimeter(): Double {
        return side * 4
    }

    companion object {
        fun unit() = Square(1.0)
    }
}
"""
DEPLOY_SH = """#!/usr/bin/env bash
set -euo pipefail
source ./lib.sh

# Upload the release bundle to the staging host.
deploy_release() {
  scp bundle.tgz "$1:/srv"
}

function rollback_release {
  ssh "$1" restore
}
"""
NOTES = "quartermaster ledger reconciliation happens every friday\n"


def _repo(root: Path) -> Path:
    files: dict[str, str | bytes] = {
        "app/src/Util.kt": UTIL_KT,
        "scripts/deploy.sh": DEPLOY_SH,
        "ops/notes.zzq": NOTES,
        "ops/Jenkinsfile": "pipeline { stage('ledger audit') { sh './deploy.sh' } }\n",
        "ops/blob.zzq": b"ledger\x00\x01\x02binary",  # NUL bytes: not text, no segment
        "ops/.env.kt": "LEDGER_TOKEN=1\n",  # secret-file rules hold for any extension
    }
    for rel, content in files.items():
        write(root, rel, content)
    return root


@pytest.fixture(params=["none", "static"])
def any_memory(request: pytest.FixtureRequest, make_settings: Any, namespace: str) -> Iterator[Memory]:
    with closing(Memory(make_settings(embedder=request.param), namespace=namespace)) as mem:
        yield mem


async def _search(c: Client, query: str, n: int = 5) -> list[dict[str, Any]]:
    found = await call(c, "memory_query", "search", {"query": query},
                       {"result_unit": "segment", "detail": "full", "max_items": n})  # fmt: skip
    items: list[dict[str, Any]] = found["items"]
    return items


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


async def test_kotlin_and_shell_functions_get_segments(memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(memory)) as c:
        out = await call(c, "memory_ingest", "repo", {"path": str(_repo(tmp_path / "repo"))})
        assert out["result_type"] == "repo_ingest_result"
        for name, path in [("circleArea", "app/src/Util.kt"), ("perimeter", "app/src/Util.kt"),
                           ("deploy_release", "scripts/deploy.sh"), ("rollback_release", "scripts/deploy.sh")]:  # fmt: skip
            items = await _search(c, name)
            assert items and items[0]["locator"]["path"] == path, (name, items)
            if _has("tree_sitter_kotlin") and _has("tree_sitter_bash"):
                assert items[0]["locator"]["symbol"].endswith(name), items[0]


async def test_a_kotlin_function_is_found_by_its_doc_comment(any_memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(any_memory)) as c:
        await call(c, "memory_ingest", "repo", {"path": str(_repo(tmp_path / "repo"))})
        items = await _search(c, "area of a circle from its radius")
        assert items[0]["locator"]["path"] == "app/src/Util.kt", items
        if _has("tree_sitter_kotlin"):
            assert items[0]["locator"]["symbol"] == "circleArea"
        items = await _search(c, "upload the release bundle")
        assert items[0]["locator"]["path"] == "scripts/deploy.sh", items


async def test_an_unknown_text_file_gets_a_segment(memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(memory)) as c:
        await call(c, "memory_ingest", "repo", {"path": str(_repo(tmp_path / "repo"))})
        items = await _search(c, "quartermaster ledger reconciliation")
        assert items[0]["locator"]["path"] == "ops/notes.zzq", items
        paths = {i["locator"]["path"] for i in await _search(c, "ledger", 20)}
        # A file without an extension is text too; binary and secret files stay out.
        assert "ops/Jenkinsfile" in paths
        assert not paths & {"ops/blob.zzq", "ops/.env.kt"}, paths

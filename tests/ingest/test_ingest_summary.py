"""Ingest answers summarise what they captured: counts, the source id, the first few suggestions
with one shared guidance text, and where to find the rest; within 1,500 tokens for any capture.

Through the MCP tools (the SDK's in-process client), on both backends; the captures are this
repository's own documentation and a generated tree of many files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from memory_substrate.tokens import count_tokens, wire_json
from tests.helpers import call

REPO = Path(__file__).resolve().parents[2]
BUDGET = 1500


@pytest.fixture
def mem(make_settings: Any, namespace: str) -> Any:
    m = Memory(make_settings(), namespace=namespace)
    yield m
    m.close()


def _tree(root: Path) -> Path:
    """Many modules with repeated CamelCase terms (many candidates), some files skipped."""
    for i in range(60):
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"mod_{i}.py").write_text(
            f'"""RetryPolicy and CircuitBreaker for ServiceClient{i}."""\n\n'
            f"class ServiceClient{i}:\n    '''Uses RetryPolicy, CircuitBreaker and RateLimiter{i % 7}.'''\n\n"
            f"    def call_backend_{i}(self):\n        return RateLimiter{i % 7}()  # RateLimiter{i % 7}\n",
            encoding="utf-8",
        )
    for i in range(12):
        (root / f"blob_{i}.bin").write_bytes(b"\x00\x01" * 50)
    return root


@pytest.mark.anyio
async def test_every_capture_answers_within_the_budget(mem: Memory, tmp_path: Path) -> None:
    async with Client(build_server(mem)) as c:
        answers = {
            "markdown": await call(
                c, "memory_ingest", "markdown", {"path": str(REPO / "docs" / "knowledge-graph.md")}
            ),
            "repo": await call(c, "memory_ingest", "repo", {"path": str(_tree(tmp_path / "tree"))}),
        }
        for mode, out in answers.items():
            assert count_tokens(wire_json(out)) <= BUDGET, (mode, count_tokens(wire_json(out)))
            s = out["memory_suggestions"]
            assert 1 <= len(s["concept_candidates"]) <= 5 and s["counts"]["concept_candidates_available"] >= 5
            for cand in s["concept_candidates"]:
                assert set(cand) == {"title", "score", "occurrences", "segment_ids"}
                assert all(x.startswith("seg-") for x in cand["segment_ids"])
            assert s["review_guidance"]["required_checks"]  # stated once, not per candidate
            assert wire_json(out).count("required_checks") == 1
            assert s["more"]["mode"] == "report" and s["agent_extraction"]["source_id"] == out["source_id"]
        repo = answers["repo"]
        assert len(repo["skipped"]) == 5 and repo["skipped_count"] == 12
        # A segment named by a suggestion reads back under the answer's source id.
        seg = answers["markdown"]["memory_suggestions"]["concept_candidates"][0]["segment_ids"][0]
        page = await call(c, "memory_query", "page", {"id": f"{answers['markdown']['source_id']}#{seg}"})
        assert page["segment"]["text"]
        # The rest: more per list with max_items, everything in spec 001's shape with detail full
        # (on a changed tree: the same files again are a noop, whatever the options).
        (tmp_path / "tree" / "pkg" / "mod_0.py").write_text('"""RetryPolicy, changed."""\n', encoding="utf-8")
        more = await call(
            c, "memory_ingest", "repo", {"path": str(tmp_path / "tree")}, {"force": True, "max_items": 12}
        )
        assert len(more["skipped"]) == 12 and len(more["memory_suggestions"]["concept_candidates"]) > 5
        full = await call(
            c, "memory_ingest", "markdown", {"path": str(REPO / "docs" / "api.md")}, {"detail": "full"}
        )
        assert full["memory_suggestions"]["concept_candidates"][0]["review_guidance"]
        assert full["memory_suggestions"]["candidate_diagnostics"]["counts"]


@pytest.mark.anyio
async def test_this_repository_ingests_within_the_budget(mem: Memory) -> None:
    async with Client(build_server(mem)) as c:
        out = await call(c, "memory_ingest", "repo", {"path": str(REPO), "exclude_patterns": [".venv/**"]})
        assert out["segment_count"] > 500
        assert count_tokens(wire_json(out)) <= BUDGET, count_tokens(wire_json(out))
        # What an agent reads next, by default, also fits: the repository's page and the report.
        page = await call(c, "memory_query", "page", {"id": out["source_id"]})
        report = await call(c, "memory_maintain", "report", {})
        for answer in (page, report):
            assert count_tokens(wire_json(answer)) <= BUDGET, (
                answer["result_type"],
                count_tokens(wire_json(answer)),
            )
        modules = page["object"]["payload"]["code_modules"]
        assert modules["truncated"] and modules["total"] > len(modules["items"]) >= 1
        # An explicit max_items is the caller's number.
        more = await call(c, "memory_query", "page", {"id": out["source_id"]}, {"max_items": 20})
        assert len(more["object"]["payload"]["code_modules"]["items"]) == 20

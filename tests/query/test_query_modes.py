"""memory_query modes against the spec's rules and examples."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from memory_substrate.search.sanitize import sanitize_query
from tests.helpers import call, conversation, knowledge


def _seed(memory: Memory) -> dict[str, str]:
    ids: dict[str, str] = {}
    ids["title"] = memory.remember(
        "knowledge", knowledge(title="Kuzu graph backend", summary="Graph store choice.")
    )["object_id"]
    ids["summary"] = memory.remember(
        "knowledge", knowledge(title="Storage notes", summary="We evaluated kuzu against others.")
    )["object_id"]
    ids["task"] = memory.remember(
        "work_item", knowledge(kind="task", title="Write the migration guide", summary="Docs for 2.0")
    )["object_id"]
    ids["cjk"] = memory.remember(
        "knowledge", knowledge(title="项目使用图数据库", summary="知识图谱存储在本地文件中。")
    )["object_id"]
    return ids


def test_search_ranks_title_above_summary_and_returns_diagnostics(memory: Memory) -> None:
    ids = _seed(memory)
    # Stream ranks and raw scores are diagnostics: shown with detail "full", left out of "compact".
    opts = {"max_items": 20, "filters": {"object_types": ["source", "knowledge"]}, "detail": "full"}
    out = memory.query("search", {"query": "kuzu"}, opts)
    got = [i["id"] for i in out["items"]]
    assert got.index(ids["title"]) < got.index(ids["summary"])
    for key in (
        "normalized_terms",
        "applied_filters",
        "inferred_filters",
        "suggested_retry_terms",
        "semantic_backend",
        "query_sanitizer",
    ):
        assert key in out
    assert out["normalized_terms"] == ["kuzu"]
    assert out["applied_filters"] == {"object_types": ["source", "knowledge"]}
    item = out["items"][0]
    assert item["retrieval_sources"] == ["lexical"] and item["retrieval_ranks"]["lexical"] == 1
    assert item["rank_score"] > 0
    assert out["query_sanitizer"]["method"] == "passthrough"


def test_whole_phrase_is_a_strong_signal(memory: Memory) -> None:
    a = memory.remember("knowledge", knowledge(title="release train schedule", summary="weekly"))["object_id"]
    b = memory.remember("knowledge", knowledge(title="schedule of the train release", summary="weekly"))[
        "object_id"
    ]
    out = memory.query("search", {"query": "release train"})
    ids = [i["id"] for i in out["items"]]
    assert ids.index(a) < ids.index(b)


def test_domain_expansion_finds_work_items_from_chinese(memory: Memory) -> None:
    ids = _seed(memory)
    out = memory.query("search", {"query": "待办项"})
    assert out["items"][0]["id"] == ids["task"]
    assert out["inferred_filters"]["object_types"] == ["work_item"]
    assert (
        out["inferred_filters"]["effect"].startswith("boost")
        and "excludes nothing" in out["inferred_filters"]["effect"]
    )
    assert "task" in out["suggested_retry_terms"]
    assert memory.query("search", {"query": "todo"})["items"][0]["id"] == ids["task"]


def test_cjk_bigrams_match(memory: Memory) -> None:
    ids = _seed(memory)
    out = memory.query("search", {"query": "图数据库"})
    assert out["items"][0]["id"] == ids["cjk"]
    assert memory.query("search", {"query": "知识图谱"})["items"][0]["id"] == ids["cjk"]


def test_ids_and_metadata_match(memory: Memory) -> None:
    ids = _seed(memory)
    assert (
        memory.query("search", {"query": f"what about {ids['summary']}?"})["items"][0]["id"] == ids["summary"]
    )
    meta = memory.remember(
        "knowledge", knowledge(title="Cache", summary="ttl", metadata={"ticket": "JIRA-4242"})
    )
    assert memory.query("search", {"query": "JIRA-4242"})["items"][0]["id"] == meta["object_id"]


def test_filters_statuses_kinds_and_source_ids(memory: Memory) -> None:
    ids = _seed(memory)
    src = memory.ingest("conversation", conversation(["kuzu is embedded"]))["source_id"]
    linked = memory.remember(
        "knowledge",
        knowledge(
            title="Kuzu embedded", summary="s", evidence_refs=[{"source_id": src, "segment_id": "seg-1"}]
        ),
    )["object_id"]
    out = memory.query("search", {"query": "kuzu"}, {"filters": {"source_id": src}})
    # The source itself and what cites it; nothing else that mentions kuzu.
    assert {i["id"] for i in out["items"]} == {linked, src}
    out = memory.query("search", {"query": "kuzu"}, {"filters": {"kind": "task"}})
    assert out["items"] == []
    out = memory.query("search", {"query": "migration"}, {"filters": {"status": "open"}})
    assert [i["id"] for i in out["items"]] == [ids["task"]]


def test_sanitizer_methods() -> None:
    prompt = "You are a helpful agent. " * 30
    assert sanitize_query(prompt + "\nQuestion: where is the config stored?").method == "labeled_line"
    s = sanitize_query(prompt + " Which database do we use for vectors? Think step by step.")
    assert s.method == "question_sentence" and s.text.endswith("vectors?")
    t = sanitize_query(prompt)
    assert t.method == "tail_truncation" and t.was_sanitized and len(t.text) <= 300
    assert sanitize_query("short").method == "passthrough"


def test_long_prompt_query_still_finds(memory: Memory) -> None:
    ids = _seed(memory)
    noisy = "SYSTEM: follow the rules carefully. " * 20 + "\nQuery: kuzu graph backend"
    out = memory.query("search", {"query": noisy})
    assert out["query_sanitizer"]["was_sanitized"] and out["query_sanitizer"]["method"] == "labeled_line"
    assert out["query"] == "kuzu graph backend"
    assert out["query_sanitizer"]["clean_length"] == len("kuzu graph backend")
    assert out["items"][0]["id"] == ids["title"]


def test_page_compact_full_and_segments(memory: Memory) -> None:
    src = memory.ingest(
        "conversation", conversation([f"message number {i} " + "x" * 400 for i in range(15)])
    )["source_id"]
    compact = memory.query("page", {"id": src})
    assert compact["detail"] == "compact" and "segments" not in compact["object"]
    with_segs = memory.query(
        "page", {"id": src}, {"include_segments": True, "max_items": 10, "snippet_chars": 50}
    )
    segs = with_segs["object"]["segments"]
    assert len(segs) == 10 and all(len(s["excerpt"]) <= 50 for s in segs)
    full = memory.query("page", {"id": src}, {"detail": "full"})
    assert len(full["segments"]) == 15 and full["segments"][0]["text"].startswith("message number 0")


def test_expand_graph_recent(memory: Memory) -> None:
    src = memory.ingest("conversation", conversation(["kuzu!"]))["source_id"]
    k = memory.remember(
        "knowledge",
        knowledge(
            title="X uses Kuzu",
            summary="s",
            subject_refs=["node:x"],
            evidence_refs=[{"source_id": src, "segment_id": "seg-1"}],
            payload={"subject": "node:x", "predicate": "uses", "object": "node:kuzu"},
        ),
    )["object_id"]
    exp = memory.query("expand", {"id": k})
    derivations = {r["relation"]["derivation"] for r in exp["related"]}
    assert derivations == {"field_reference", "evidence_ref"}
    assert exp["evidence"][0]["excerpt"] == "kuzu!"
    graph = memory.query("graph", {"id": "node:x"}, {"depth": 1, "detail": "full"})  # with provenance
    edge_types = {e["rel_type"] for e in graph["edges"]}
    assert {"uses", "about"} <= edge_types
    uses = next(e for e in graph["edges"] if e["rel_type"] == "uses")
    schema = uses["relation_schema"]
    assert schema["derivation"] == "structured_payload" and schema["origin_object_id"] == k
    assert schema["origin_field"] == "payload.object" and schema["version"] == 1
    deeper = memory.query("graph", {"id": "node:x"}, {"depth": 2})
    assert {n["id"] for n in deeper["nodes"]} >= {"node:x", k, src, "node:kuzu"}
    recent = memory.query(
        "recent", {}, {"max_items": 20, "filters": {"object_type": "knowledge", "status": "active"}}
    )
    assert [i["id"] for i in recent["items"]] == [k]
    nodes = memory.query("recent", {}, {"filters": {"object_type": "node"}})
    assert {i["kind"] for i in nodes["items"]} == {"stub"}


@pytest.mark.anyio
async def test_context_spec_example(memory: Memory) -> None:
    ids = _seed(memory)
    memory.remember(
        "knowledge",
        knowledge(kind="decision", title="Repository structure is src layout", summary="src/ layout."),
    )
    episodes = [
        memory.ingest("conversation", conversation([f"Ran tree to inspect the repository ({i})."]))[
            "source_id"
        ]
        for i in range(3)
    ]
    proc = memory.remember(
        "knowledge",
        knowledge(
            kind="procedure",
            title="Inspect repository structure",
            summary="Run tree.",
            confidence=0.9,
            evidence_refs=[{"source_id": ep, "segment_id": "seg-1"} for ep in episodes],
        ),
    )["object_id"]
    memory.remember("promote", {"knowledge_id": proc, "reason": "seen in three episodes"})
    async with Client(build_server(memory)) as c:
        out = await call(
            c,
            "memory_query",
            "context",
            {
                "task": "inspect repository structure",
                "scope": {"object_types": ["knowledge", "activity", "work_item"]},
            },
            {"max_items": 12, "include_items": True},
        )
    tiers = out["context_tiers"]
    assert set(tiers) == {
        "policy",
        "active_task",
        "decisions",
        "procedures",
        "evidence",
        "open_work",
        "deep_search_hints",
    }
    item_ids = {i["id"] for i in out["items"]}
    for section in ("decisions", "procedures", "open_work"):
        assert set(tiers[section]["ids"]) <= item_ids
        assert tiers[section]["count"] == len(tiers[section]["ids"]) and tiers[section]["field"] == "items"
        assert "summary" not in tiers[section]
    assert tiers["decisions"]["count"] == 1 and tiers["procedures"]["count"] == 1
    assert ids["task"] in tiers["open_work"]["ids"]
    assert tiers["active_task"]["task"] == "inspect repository structure"
    assert out["context_budget"]["max_items"] == 12 and out["context_budget"]["returned_items"] == len(
        out["items"]
    )
    assert out["context_budget"]["detail"] == "compact"
    assert tiers["deep_search_hints"][0]["mode"] == "expand"


def test_semantic_stream_with_default_embedder(make_settings: Any, namespace: str) -> None:
    from memory_substrate import Memory

    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        out = mem.ingest(
            "conversation",
            conversation(
                ["We decided to run SQLite in WAL mode.", "Lunch was pizza again.", "The cat sleeps all day."]
            ),
        )
        seg = mem.query(
            "search", {"query": "database journaling choice"}, {"result_unit": "segment", "detail": "full"}
        )
        top = seg["items"][0]
        assert top["locator"] == {"kind": "message", "index": 0}
        assert "semantic" in top["retrieval_sources"] and top["semantic_score"] is not None
        assert seg["semantic_backend"]["enabled"] is True
        obj = mem.query("search", {"query": "database journaling choice"}, {"detail": "full"})
        assert obj["items"][0]["id"] == out["source_id"]
        assert obj["items"][0]["matched_chunks"][0]["distance"] is not None
        structure = mem.maintain("structure", {})
        assert sum(structure["counts"]["vectors"].values()) == 4  # three segments and the source
    finally:
        mem.close()


def test_object_search_has_a_semantic_relevance_floor(make_settings: Any, namespace: str) -> None:
    from memory_substrate import Memory

    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        for i in range(5):
            mem.remember(
                "knowledge", knowledge(title=f"Weather note {i}", summary="It rained all day in the city.")
            )
        kuzu = mem.remember(
            "knowledge", knowledge(title="Kuzu is our embedded graph store", summary="Graph data.")
        )
        out = mem.query("search", {"query": "which engine stores entity relations"}, {"detail": "full"})
        assert [i["id"] for i in out["items"]] == [kuzu["object_id"]]
        assert "semantic" in out["items"][0]["retrieval_sources"]
    finally:
        mem.close()

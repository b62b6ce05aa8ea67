"""Lookup keys are derived data: reindex rebuilds them, and an exported namespace imports with them."""

from __future__ import annotations

import io

import pytest

from memory_substrate import Memory
from memory_substrate.transfer import export_namespace, import_namespace

GOV = {"reason": "r", "memory_source": "agent_inferred", "scope_refs": ["scope:p"]}


def _graph(mem: Memory) -> str:
    ep: str = mem.ingest(
        "conversation", {"title": "t", "messages": [{"role": "user", "content": "Atlas uses Redis."}]}
    )["source_id"]
    mem.remember(
        "extraction",
        {
            "episode_id": ep,
            **GOV,
            "entities": [
                {"name": "Atlas", "type": "project", "aliases": ["ATL"]},
                {"name": "Redis", "type": "technology"},
            ],
            "facts": [{"subject": "Atlas", "predicate": "uses", "object": "Redis", "segment_ids": ["seg-1"]}],
        },
    )
    return ep


def test_reindex_rebuilds_lost_lookup_keys(memory: Memory) -> None:
    _graph(memory)
    with memory.store.write(memory.namespace) as s:  # simulate a damaged derived index
        for _key, oid in s.find_keys(["ent:any:atl", "ent:any:atlas", "fact:p:uses"]):
            s.set_object_keys(oid, [])
    assert memory.query("entities", {"name": "ATL"})["matched_by"] == "full_text"  # the exact index is gone
    assert memory.query("facts", {"predicate": "uses"})["count"] == 0
    memory.maintain("reindex", {}, {"apply": True})
    found = memory.query("entities", {"name": "ATL"})
    assert found["matched_by"] == "name_or_alias" and found["items"][0]["name"] == "Atlas"
    assert memory.query("facts", {"predicate": "uses"})["count"] == 1


@pytest.mark.parametrize("vectors", [True, False])
def test_export_import_keeps_the_graph_resolvable(memory: Memory, vectors: bool) -> None:
    _graph(memory)
    buf = io.StringIO()
    export_namespace(memory.runtime, buf, vectors=vectors)
    target = memory.namespace + "-copy"
    import_namespace(memory.runtime, io.StringIO(buf.getvalue()), namespace=target)
    copy = memory.for_namespace(target)
    assert copy.query("entities", {"name": "ATL"})["items"][0]["facts"][0]["object"]["name"] == "Redis"
    ep = copy.ingest(
        "conversation", {"title": "t2", "messages": [{"role": "user", "content": "atlas again"}]}
    )["source_id"]
    out = copy.remember(
        "extraction", {"episode_id": ep, **GOV, "entities": [{"name": "atlas", "type": "project"}]}
    )
    assert out["entities"]["resolved"][0]["pass"] == "exact"

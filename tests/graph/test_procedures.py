"""Procedures earn trust through observation, and only promoted ones count."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.graph.conftest import episode, extract
from tests.helpers import ToolFailed, call

pytestmark = pytest.mark.anyio

PROC: dict[str, Any] = {
    "kind": "troubleshooting",
    "title": "Restart the ingest worker when the queue stalls",
    "text": "Check the queue depth, then restart the ingest worker with systemctl.",
    "segment_ids": ["seg-1"],
}


async def _procedure(client: Client, pid: str) -> Any:
    return (await call(client, "memory_query", "page", {"id": pid}, {"detail": "full"}))["object"]


async def test_a_procedure_merges_across_episodes_and_is_promoted_only_when_earned(client: Client) -> None:
    ep1 = await episode(client, "When the queue stalls, restart the ingest worker.")
    first = await extract(client, ep1, procedures=[PROC])
    pid = first["procedures"]["created"][0]
    proc = await _procedure(client, pid)
    assert (
        proc["status"] == "candidate"
        and proc["confidence"] == 0.3
        and proc["metadata"]["evidence_status"] == "extracted"
    )
    # seeing the same episode again changes nothing
    again = await extract(client, ep1, procedures=[PROC])
    assert again["procedures"] == {"created": [], "merged": [], "promoted": []}
    with pytest.raises(ToolFailed) as info:  # not earned yet: promote refuses
        await call(client, "memory_remember", "promote", {"knowledge_id": pid, "reason": "looks right"})
    assert info.value.code == "memory_conflict" and info.value.error["details"]["required_episodes"] == 3
    confidences, statuses = [], []
    for i in range(2):
        ep = await episode(client, f"Queue stalled again ({i}); restarted the ingest worker.")
        out = await extract(
            client, ep, procedures=[{**PROC, "title": PROC["title"].upper()}]
        )  # same pattern, other case
        proc = await _procedure(client, pid)
        confidences.append(proc["confidence"])
        statuses.append(proc["status"])
        assert out["procedures"]["merged"] == [pid]
    # two consistent episodes stay below 0.8; the third reaches it and promotes (spec 004)
    assert confidences == [0.65, 0.825] and statuses == ["candidate", "active"]
    proc = await _procedure(client, pid)
    assert proc["status"] == "active" and proc["metadata"]["evidence_status"] == "promoted"
    assert proc["payload"]["observation_count"] == 3 and len(proc["payload"]["source_episodes"]) == 3
    report = await call(client, "memory_maintain", "report", {})
    assert report["knowledge_graph"]["procedures"]["promoted"] == 1
    assert report["knowledge_graph"]["procedures"]["by_kind"] == {"troubleshooting": 1}


async def test_low_confidence_observations_do_not_promote(client: Client) -> None:
    pid: str | None = None
    for i in range(4):
        ep = await episode(client, f"Maybe restart the worker ({i}).")
        out = await extract(client, ep, procedures=[{**PROC, "confidence": 0.5}])
        pid = pid or out["procedures"]["created"][0]
    assert pid is not None
    proc = await _procedure(client, pid)
    assert proc["status"] == "candidate" and proc["confidence"] < 0.8
    # the maintenance sweep does not promote extracted procedures either
    cycle = await call(
        client,
        "memory_maintain",
        "promote_candidates",
        {"min_confidence": 0.1, "min_evidence": 0},
        {"apply": True},
    )
    assert pid not in str(cycle)
    assert (await _procedure(client, pid))["status"] == "candidate"


async def test_a_written_procedure_is_a_candidate_and_promote_needs_three_episodes(client: Client) -> None:
    eps = [
        await episode(client, f"Restarted the ingest worker after the queue stalled ({i}).") for i in range(3)
    ]
    data = {
        "kind": "procedure",
        "title": "Restart the ingest worker",
        "summary": "systemctl restart ingest.",
        "reason": "team practice",
        "memory_source": "user_declared",
        "scope_refs": ["scope:project"],
    }
    bare = await call(client, "memory_remember", "knowledge", data)
    assert bare["knowledge_status"] == "candidate"
    assert bare["normalized"][0]["rule"] == "procedures_start_as_candidates"
    with pytest.raises(ToolFailed) as info:  # no episodes behind it: promote refuses
        await call(
            client, "memory_remember", "promote", {"knowledge_id": bare["object_id"], "reason": "trust me"}
        )
    assert info.value.code == "memory_conflict" and info.value.error["details"]["distinct_episodes"] == 0
    two = await call(
        client,
        "memory_remember",
        "knowledge",
        {
            **data,
            "title": "Drain before restart",
            "confidence": 0.95,
            "evidence_refs": [{"source_id": e, "segment_id": "seg-1"} for e in eps[:2]],
        },
    )
    with pytest.raises(ToolFailed) as info:
        await call(
            client, "memory_remember", "promote", {"knowledge_id": two["object_id"], "reason": "two episodes"}
        )
    assert info.value.error["details"]["distinct_episodes"] == 2
    three = await call(
        client,
        "memory_remember",
        "knowledge",
        {
            **data,
            "title": "Check queue depth first",
            "confidence": 0.85,
            "evidence_refs": [{"source_id": e, "segment_id": "seg-1"} for e in eps],
        },
    )
    done = await call(
        client, "memory_remember", "promote", {"knowledge_id": three["object_id"], "reason": "three"}
    )
    assert done["knowledge_status"] == "active"
    assert (await _procedure(client, three["object_id"]))["metadata"]["evidence_status"] == "promoted"
    # only the earned one is compiled
    out = await call(
        client,
        "memory_query",
        "context",
        {"task": "restart the ingest worker", "task_class": "debug"},
        {"detail": "full"},
    )
    trace = (await call(client, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
    selected = {s["id"] for s in trace["candidates"]["selected"]}
    rejected = {r["id"]: r["reason"] for r in trace["candidates"]["rejected"]}
    assert three["object_id"] in selected
    assert rejected[bare["object_id"]].startswith("procedure not promoted")


async def test_the_entity_limit_holds_per_episode_across_calls(client: Client) -> None:
    ep = await episode(client, "A long design chat naming many services.")
    trees = [
        "Alder",
        "Birch",
        "Cedar",
        "Dogwood",
        "Elm",
        "Fir",
        "Ginkgo",
        "Hazel",
        "Ivy",
        "Juniper",
        "Kapok",
        "Larch",
    ]
    names = [{"name": f"Project {t}", "type": "project"} for t in trees]
    await extract(client, ep, entities=names[:6])
    again = await extract(client, ep, entities=names[:6])  # the same entities again: nothing new to count
    assert again["entities"]["new"] == []
    with pytest.raises(ToolFailed) as info:
        await extract(client, ep, entities=names[6:11])  # 6 + 5 = 11 > 10
    assert info.value.code == "memory_validation_error"
    assert info.value.error["details"] == {
        "episode_id": ep,
        "entities_linked": 6,
        "entities_added": 5,
        "limit": 10,
    }
    search = await call(
        client,
        "memory_query",
        "search",
        {"query": "Project Ginkgo"},
        {"filters": {"object_types": ["entity"]}},
    )
    assert not any(i["title"] == "Project Ginkgo" for i in search["items"])  # refused whole: nothing written
    await extract(client, ep, entities=names[6:10])  # exactly 10
    other = await episode(client, "Another chat.")
    await extract(client, other, entities=names[10:12])  # the limit is per episode

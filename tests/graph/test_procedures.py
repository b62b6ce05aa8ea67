"""Procedures earn trust through observation, and only promoted ones count."""

from __future__ import annotations

import pytest

from tests.graph.conftest import episode, extract
from tests.helpers import ToolFailed, call

pytestmark = pytest.mark.anyio

PROC = {"kind": "troubleshooting", "title": "Restart the ingest worker when the queue stalls",
        "text": "Check the queue depth, then restart the ingest worker with systemctl.", "segment_ids": ["seg-1"]}


async def _procedure(client, pid):
    return (await call(client, "memory_query", "page", {"id": pid}, {"detail": "full"}))["object"]


async def test_a_procedure_merges_across_episodes_and_is_promoted_only_when_earned(client):
    ep1 = await episode(client, "When the queue stalls, restart the ingest worker.")
    first = await extract(client, ep1, procedures=[PROC])
    pid = first["procedures"]["created"][0]
    proc = await _procedure(client, pid)
    assert proc["status"] == "candidate" and proc["confidence"] == 0.3 and proc["metadata"]["evidence_status"] == "extracted"
    # seeing the same episode again changes nothing
    again = await extract(client, ep1, procedures=[PROC])
    assert again["procedures"] == {"created": [], "merged": [], "promoted": []}
    with pytest.raises(ToolFailed) as info:  # not earned yet: promote refuses
        await call(client, "memory_remember", "promote", {"knowledge_id": pid, "reason": "looks right"})
    assert info.value.code == "memory_conflict" and info.value.error["details"]["required_episodes"] == 3
    confidences = []
    for i in range(3):
        ep = await episode(client, f"Queue stalled again ({i}); restarted the ingest worker.")
        out = await extract(client, ep, procedures=[{**PROC, "title": PROC["title"].upper()}])  # same pattern, other case
        confidences.append((await _procedure(client, pid))["confidence"])
        assert out["procedures"]["merged"] == [pid]
    assert confidences == [0.65, 0.7667, 0.825]
    proc = await _procedure(client, pid)
    assert proc["status"] == "active" and proc["metadata"]["evidence_status"] == "promoted"
    assert proc["payload"]["observation_count"] == 4 and len(proc["payload"]["source_episodes"]) == 4
    report = await call(client, "memory_maintain", "report", {})
    assert report["knowledge_graph"]["procedures"]["promoted"] == 1
    assert report["knowledge_graph"]["procedures"]["by_kind"] == {"troubleshooting": 1}


async def test_low_confidence_observations_do_not_promote(client):
    pid = None
    for i in range(4):
        ep = await episode(client, f"Maybe restart the worker ({i}).")
        out = await extract(client, ep, procedures=[{**PROC, "confidence": 0.5}])
        pid = pid or out["procedures"]["created"][0]
    proc = await _procedure(client, pid)
    assert proc["status"] == "candidate" and proc["confidence"] < 0.8
    # the maintenance sweep does not promote extracted procedures either
    cycle = await call(client, "memory_maintain", "promote_candidates", {"min_confidence": 0.1, "min_evidence": 0}, {"apply": True})
    assert pid not in str(cycle)
    assert (await _procedure(client, pid))["status"] == "candidate"

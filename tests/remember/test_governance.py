"""Each governance rule of memory_remember, demonstrated by a test that fails if the rule breaks."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.errors import (
    BatchEntryError,
    ConflictError,
    DuplicateError,
    EvidenceError,
    NotFoundError,
    ValidationError,
)
from memory_substrate.mcp.server import build_server
from tests.helpers import ToolFailed, call, conversation, knowledge


def _claim(value: str, **kw: Any) -> dict[str, Any]:
    return knowledge(
        title=kw.pop("title", "Primary language"),
        payload={
            "subject": "node:repo",
            "predicate": "primary_language",
            "value": value,
            "object": None,
            "metadata": {},
        },
        **kw,
    )


@pytest.mark.parametrize("field", ["reason", "memory_source", "scope_refs"])
@pytest.mark.parametrize("mode", ["knowledge", "activity", "work_item"])
def test_governance_fields_are_required(memory: Memory, mode: str, field: str) -> None:
    data = knowledge(kind="task" if mode == "work_item" else "fact")
    del data[field]
    with pytest.raises(ValidationError, match=field):
        memory.remember(mode, data)


def test_memory_source_must_be_an_allowed_value(memory: Memory) -> None:
    with pytest.raises(ValidationError, match="memory_source"):
        memory.remember("knowledge", knowledge(memory_source="rumour"))
    for source in ("user_declared", "human_curated", "agent_inferred", "system_generated", "imported"):
        out = memory.remember(
            "knowledge", knowledge(memory_source=source, title=f"t {source}", summary=source)
        )
        assert out["status"] == "created"


def test_agent_inferred_active_claims_become_candidates(memory: Memory) -> None:
    out = memory.remember("knowledge", knowledge(memory_source="agent_inferred", status="active"))
    assert out["knowledge_status"] == "candidate"
    assert out["normalized"][0]["to"] == "candidate"
    page = memory.query("page", {"id": out["object_id"]})
    assert page["object"]["status"] == "candidate"
    declared = memory.remember(
        "knowledge", knowledge(memory_source="user_declared", title="Other", summary="other")
    )
    assert declared["knowledge_status"] == "active"


def test_exact_structured_duplicate_is_rejected(memory: Memory) -> None:
    first = memory.remember("knowledge", _claim("python"))
    with pytest.raises(DuplicateError) as exc:
        memory.remember(
            "knowledge", _claim("python", title="Different title", scope_refs=["scope:project", "scope:x"])
        )
    assert exc.value.details["existing_id"] == first["object_id"]
    # Not a duplicate when scopes do not overlap.
    other_scope = memory.remember("knowledge", _claim("python", scope_refs=["scope:other"]))
    assert other_scope["status"] == "created"
    # Not a duplicate when the kind differs.
    assert memory.remember("knowledge", _claim("python", kind="decision"))["status"] == "created"


def test_same_subject_predicate_with_other_value_marks_both_contested(memory: Memory) -> None:
    first = memory.remember("knowledge", _claim("python"))
    second = memory.remember("knowledge", _claim("rust"))
    assert second["knowledge_status"] == "contested"
    assert second["conflicts"][0]["object_id"] == first["object_id"]
    assert memory.query("page", {"id": first["object_id"]})["object"]["status"] == "contested"
    history = memory.maintain("audit", {"object_id": first["object_id"]})
    assert "status_change" in [e["action"] for e in history["events"]]


def test_a_contested_claim_cannot_be_promoted_past_a_live_rival(memory: Memory) -> None:
    first = memory.remember("knowledge", _claim("python"))["object_id"]
    second = memory.remember("knowledge", _claim("rust"))["object_id"]
    with pytest.raises(ConflictError) as exc:
        memory.remember("promote", {"knowledge_id": second, "reason": "I think rust"})
    assert exc.value.details["conflicting_ids"] == [first]
    memory.remember("supersede", {"old_knowledge_id": first, "new_knowledge_id": second, "reason": "rewrite"})
    assert (
        memory.remember("promote", {"knowledge_id": second, "reason": "now clean"})["knowledge_status"]
        == "active"
    )


def test_possible_duplicates_for_similar_unstructured_knowledge(memory: Memory) -> None:
    first = memory.remember(
        "knowledge",
        knowledge(
            kind="decision", title="Use SQLite WAL mode for the store", summary="We run SQLite in WAL mode."
        ),
    )
    assert first["possible_duplicates"] == []
    second = memory.remember(
        "knowledge",
        knowledge(
            kind="decision",
            title="Use SQLite WAL mode for the embedded store",
            summary="SQLite runs in WAL mode.",
        ),
    )
    dup = second["possible_duplicates"][0]
    assert dup["object_id"] == first["object_id"]
    assert set(dup) == {"object_id", "score", "reasons", "title", "kind", "status"}
    assert "title_overlap" in dup["reasons"] and dup["kind"] == "decision"
    unrelated = memory.remember(
        "knowledge", knowledge(title="Deploy on Fridays is banned", summary="No deploys.")
    )
    assert unrelated["possible_duplicates"] == []


def test_possible_duplicates_read_other_languages_by_their_content_words(memory: Memory) -> None:
    """German notes: inflected forms of the same words count as overlap, shared function words
    ("wir", "sind", "in", "der") do not."""
    first = memory.remember(
        "knowledge",
        knowledge(
            kind="decision",
            title="Nächtliches Backup der Datenbank",
            summary="Das Backup der Datenbank läuft nachts.",
        ),
    )
    same = memory.remember(
        "knowledge",
        knowledge(
            kind="decision",
            title="Die nächtlichen Backups der Datenbanken",
            summary="Backups der Datenbanken laufen nachts.",
        ),
    )
    assert [d["object_id"] for d in same["possible_duplicates"]] == [first["object_id"]]
    kitchen = memory.remember(
        "knowledge",
        knowledge(kind="fact", title="Wir sind heute in der Küche", summary="Wir sind in der Küche."),
    )
    assert kitchen["possible_duplicates"] == []
    garage = memory.remember(
        "knowledge",
        knowledge(kind="fact", title="Wir sind heute in der Garage", summary="Wir sind in der Garage."),
    )
    assert garage["possible_duplicates"] == [], kitchen


def test_evidence_refs_must_resolve_and_match(memory: Memory) -> None:
    src = memory.ingest("conversation", conversation(["we use kuzu", "ok"]))
    sid = src["source_id"]
    # Content hashes are shown with detail "full" (compact pages leave them out).
    page = memory.query("page", {"id": sid}, {"detail": "full"})
    seg = page["segments"][0]
    ok = memory.remember(
        "knowledge",
        knowledge(
            evidence_refs=[
                {"source_id": sid, "segment_id": "seg-1", "locator": seg["locator"], "hash": seg["hash"]}
            ]
        ),
    )
    assert ok["status"] == "created"
    bad = [
        [{"source_id": "src:missing", "segment_id": "seg-1"}],
        [{"source_id": sid, "segment_id": "seg-99"}],
        [{"source_id": sid, "segment_id": "seg-1", "locator": {"kind": "message", "index": 5}}],
        [{"source_id": sid, "segment_id": "seg-1", "hash": "0" * 64}],
    ]
    for refs in bad:
        with pytest.raises(EvidenceError):
            memory.remember("knowledge", knowledge(title="x", summary="y", evidence_refs=refs))
    assert memory.status()["counts"]["by_object_type"] == {"source": 1, "knowledge": 1}


def test_lifecycle_promote_supersede_contest(memory: Memory) -> None:
    cand = memory.remember("knowledge", knowledge(memory_source="agent_inferred"))["object_id"]
    out = memory.remember("promote", {"knowledge_id": cand, "reason": "verified"})
    assert out["knowledge_status"] == "active"
    with pytest.raises(ConflictError):
        memory.remember("promote", {"knowledge_id": cand, "reason": "again"})
    new = memory.remember("knowledge", knowledge(title="Repo uses Python 3.12", summary="Python 3.12 now."))[
        "object_id"
    ]
    memory.remember(
        "supersede", {"old_knowledge_id": cand, "new_knowledge_id": new, "reason": "new evidence"}
    )
    assert memory.query("page", {"id": cand})["object"]["status"] == "superseded"
    graph = memory.query("graph", {"id": new})
    assert any(e["rel_type"] == "supersedes" and e["target_id"] == cand for e in graph["edges"])
    memory.remember("contest", {"knowledge_id": new, "reason": "conflicting source found"})
    assert memory.query("page", {"id": new})["object"]["status"] == "contested"
    with pytest.raises(NotFoundError, match="know:nope"):
        memory.remember("contest", {"knowledge_id": "know:nope", "reason": "x"})


def test_batch_is_atomic_and_names_the_failing_entry(memory: Memory) -> None:
    good = {"mode": "knowledge", "input_data": knowledge(title="A fact", summary="a")}
    dup_a = {"mode": "knowledge", "input_data": _claim("python")}
    dup_b = {"mode": "knowledge", "input_data": _claim("python", title="again")}
    with pytest.raises(BatchEntryError) as exc:
        memory.remember("batch", {"entries": [good, dup_a, dup_b]})
    assert exc.value.details["entry_index"] == 2
    error = exc.value.details["error"]
    assert isinstance(error, dict) and error["code"] == "memory_duplicate"
    assert memory.status()["counts"]["objects"] == 0
    invalid = {"mode": "work_item", "input_data": {"kind": "task"}}
    with pytest.raises(BatchEntryError) as exc:
        memory.remember("batch", {"entries": [good, invalid]})
    assert exc.value.details["entry_index"] == 1
    assert memory.status()["counts"]["objects"] == 0
    out = memory.remember("batch", {"entries": [good, dup_a]})
    assert out["entry_count"] == 2 and len(out["results"]) == 2
    assert memory.status()["counts"]["by_object_type"]["knowledge"] == 2


def test_activity_and_work_item_refs(memory: Memory) -> None:
    src = memory.ingest("conversation", conversation(["walkthrough notes"]))["source_id"]
    act = memory.remember(
        "activity",
        knowledge(
            kind="research",
            title="Repo walkthrough",
            summary="Captured reusable findings.",
            source_refs=[src],
            related_node_refs=["node:repo"],
        ),
    )
    assert act["object_type"] == "activity"
    with pytest.raises(NotFoundError, match="src:gone"):
        memory.remember(
            "work_item", knowledge(kind="task", title="Review", summary="next", source_refs=["src:gone"])
        )
    work = memory.remember(
        "work_item",
        knowledge(kind="task", title="Review repo", summary="Track next step.", source_refs=[src]),
    )
    assert work["work_status"] == "open"
    expand = memory.query("expand", {"id": src})
    assert {r["object"]["id"] for r in expand["related"]} >= {act["object_id"], work["object_id"]}


def test_scope_refs_must_be_scopes(memory: Memory) -> None:
    with pytest.raises(ValidationError, match="scope"):
        memory.remember("knowledge", knowledge(scope_refs=["project"]))
    with pytest.raises(ValidationError, match="scope_refs"):
        memory.remember("knowledge", knowledge(scope_refs=[]))


@pytest.mark.anyio
async def test_spec_examples_through_mcp(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        src = await call(c, "memory_ingest", "conversation", conversation(["Primary language is Python."]))
        spec_knowledge = {
            "kind": "fact",
            "title": "Repo uses Python",
            "summary": "Primary language is Python.",
            "reason": "The detected language changes future repository work.",
            "memory_source": "agent_inferred",
            "scope_refs": ["scope:project"],
            "subject_refs": ["node:repo"],
            "evidence_refs": [{"source_id": src["source_id"], "segment_id": "seg-1"}],
            "payload": {
                "subject": "node:repo",
                "predicate": "primary_language",
                "value": "python",
                "object": None,
                "metadata": {},
            },
            "confidence": 0.8,
        }
        out = await call(c, "memory_remember", "knowledge", spec_knowledge)
        assert out["knowledge_status"] == "candidate" and out["possible_duplicates"] == []
        with pytest.raises(ToolFailed) as exc:
            await call(c, "memory_remember", "knowledge", spec_knowledge)
        assert exc.value.code == "memory_duplicate"
        batch = {
            "entries": [
                {
                    "mode": "knowledge",
                    "input_data": {
                        "kind": "fact",
                        "title": "Reusable fact",
                        "summary": "Captured by the agent.",
                        "reason": "This fact affects future work in this project.",
                        "memory_source": "agent_inferred",
                        "scope_refs": ["scope:project"],
                        "payload": {
                            "subject": "node:repo",
                            "predicate": "observed",
                            "value": True,
                            "object": None,
                        },
                        "confidence": 0.7,
                    },
                }
            ]
        }
        assert (await call(c, "memory_remember", "batch", batch))["entry_count"] == 1
        act = {
            "kind": "research",
            "title": "Repo walkthrough",
            "summary": "Captured reusable findings.",
            "reason": "This walkthrough records reusable project context.",
            "memory_source": "agent_inferred",
            "scope_refs": ["scope:project"],
            "source_refs": [src["source_id"]],
            "related_node_refs": ["node:repo"],
        }
        assert (await call(c, "memory_remember", "activity", act))["object_type"] == "activity"
        work = {
            "kind": "task",
            "title": "Review repo",
            "summary": "Track next step.",
            "reason": "This task should persist beyond the current session.",
            "memory_source": "user_declared",
            "scope_refs": ["scope:project"],
            "source_refs": [src["source_id"]],
        }
        assert (await call(c, "memory_remember", "work_item", work))["object_type"] == "work_item"
        promoted = await call(
            c, "memory_remember", "promote", {"knowledge_id": out["object_id"], "reason": "verified"}
        )
        assert promoted["knowledge_status"] == "active"

"""Seeding helpers for maintenance tests: everything goes through the public Memory API."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memory_substrate import Memory


def later(days: float = 0, seconds: float = 0) -> str:
    """An ISO timestamp relative to now (tests pin time by passing reference_time)."""
    return (datetime.now(UTC) + timedelta(days=days, seconds=seconds)).isoformat()


def conversation(memory: Memory, *texts: str, title: str = "conversation") -> str:
    messages = [{"role": "user", "content": t} for t in texts]
    return str(memory.ingest("conversation", {"title": title, "messages": messages})["source_id"])


def know(memory: Memory, title: str, summary: str = "A summary.", **fields: Any) -> str:
    data: dict[str, Any] = {
        "kind": "fact",
        "title": title,
        "summary": summary,
        "reason": "test seed",
        "memory_source": "user_declared",
        "scope_refs": ["scope:project"],
    }
    data.update(fields)
    return str(memory.remember("knowledge", data)["object_id"])


def claim(subject: str, predicate: str, obj: str | None = None, value: Any = None) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "object": obj, "value": value}


def status_of(memory: Memory, object_id: str) -> str:
    return str(memory.query("page", {"id": object_id})["object"]["status"])


def snapshot(memory: Memory) -> dict[str, Any]:
    """What a dry run must leave untouched: patches, counts, config, every object's version."""
    structure = memory.maintain("structure", {})
    recent = memory.query("recent", {}, {"max_items": 200})
    return {
        "patches": [p["patch_id"] for p in memory.maintain("audit", {}, {"max_items": 1000})["patches"]],
        "counts": structure["counts"],
        "config": structure["config"],
        "objects": sorted((i["id"], i["status"], i["updated_at"]) for i in recent["items"]),
    }


def duplicate_claims(memory: Memory) -> tuple[str, str]:
    """Two live, exact structured duplicates, made through the public tools.

    Governance rejects an exact duplicate of a live claim, so: write the claim as a candidate,
    let decay_stale make it stale, write it again, then promote the stale one back.
    """
    source = conversation(memory, "Project X uses Kuzu for its graph.")
    payload = claim("node:project-x", "uses", "node:kuzu")
    first = know(
        memory,
        "X uses Kuzu",
        memory_source="agent_inferred",
        payload=payload,
        confidence=0.6,
        evidence_refs=[{"source_id": source, "segment_id": "seg-1"}],
    )
    memory.maintain("decay_stale", {"reference_time": later(days=1), "stale_after_days": 0}, {"apply": True})
    assert status_of(memory, first) == "stale"
    second = know(memory, "Project X uses Kuzu", payload=payload, confidence=0.9)
    memory.remember("promote", {"knowledge_id": first, "reason": "re-verified"})
    return first, second


def soft_pair(memory: Memory) -> tuple[str, str]:
    a = know(memory, "Deploys run on Fridays", "Deployments happen on Friday afternoons.")
    b = know(memory, "Deploys run on Friday", "Deployments happen Friday afternoon.")
    return a, b


class HashEmbedder:
    """A deterministic stand-in for a real model: token hashes folded into a small vector."""

    def __init__(self, name: str = "test-hash-a", dimensions: int = 16) -> None:
        self.name = name
        self.dimensions = dimensions

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dimensions, dtype=np.float32)
        for tok in text.lower().split():
            h = int(hashlib.sha256((self.name + tok).encode()).hexdigest()[:8], 16)
            vec[h % self.dimensions] += 1.0
        norm = float(np.linalg.norm(vec)) or 1.0
        return vec / norm

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return (
            np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dimensions), np.float32)
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


def use_embedder(memory: Memory, embedder: HashEmbedder | None) -> None:
    """Swap the runtime's embedder (a configuration change, as a model upgrade would be)."""
    memory.runtime._embedder = embedder
    memory.runtime._embedder_error = None if embedder else "disabled in test"
    memory.runtime._loaded = True


@pytest.fixture
def busy(memory: Memory) -> dict[str, Any]:
    """A store where every mutating mode has work to do; ids of what was seeded."""
    ids: dict[str, Any] = {}
    ids["dup_first"], ids["dup_second"] = duplicate_claims(memory)
    ids["soft_a"], ids["soft_b"] = soft_pair(memory)
    ids["source"] = conversation(memory, "The retired import said the cache is warm.", title="retired")
    ids["on_source"] = know(
        memory,
        "Cache is warm",
        "The cache is warm at start.",
        evidence_refs=[{"source_id": ids["source"], "segment_id": "seg-1"}],
    )
    ids["promotable"] = know(
        memory,
        "Queue uses Redis",
        "The job queue is Redis.",
        memory_source="agent_inferred",
        confidence=0.9,
        evidence_refs=[{"source_id": ids["source"], "segment_id": "seg-1"}],
    )
    with memory.store.write(memory.namespace) as session:  # damage only a repair can mend
        from memory_substrate.models import Relation

        session.insert_relations(
            [Relation("rel:dangling-test", "related_to", ids["soft_a"], "node:ghost", None, {}, later())]
        )
    return ids

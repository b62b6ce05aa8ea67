"""Expired objects are hidden by construction (expiry.py): ``VisibleSession`` declares every member of
the storage port, with no catch-all forwarding, and each read that can name an object filters it.

The port's members are enumerated from ``StoreSession`` itself, so a read added to the port fails
here until the view declares it (filtered, with a probe below, or passed on as a figure or a record).
Both backends, real databases.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memory_substrate import Memory
from memory_substrate.expiry import FIGURE, HEALTH, RECORD, WRITE, VisibleSession, _Passes
from memory_substrate.indexing import claim_key, lookup_keys
from memory_substrate.models import MemoryObject, Relation, Segment
from memory_substrate.storage.base import ID_TAIL_CHARS, StoreSession
from memory_substrate.util import new_id


def _port_members() -> dict[str, Any]:
    return {
        name: member
        for name, member in vars(StoreSession).items()
        if callable(member) and not name.startswith("_")
    }


# Reads that pass unfiltered, each reviewed: a count or setting names no object; history and
# operational records stay by design (the audit trail of an expired object is still its history).
PASSES = {
    "count_objects": FIGURE,
    "count_segments": FIGURE,
    "vector_stats": FIGURE,
    "key_counts": FIGURE,
    "get_config": FIGURE,
    "job_counts": FIGURE,
    "outbox_count": FIGURE,
    "list_events": RECORD,
    "list_patches": RECORD,
    "get_job": RECORD,
    "list_jobs": RECORD,
    "get_trace": RECORD,
    "list_traces": RECORD,
    "outbox_pending": RECORD,
    "stored_json_problems": HEALTH,
}
WRITES = {
    "set_object_keys",
    "put_job",
    "record_trace",
    "insert_object",
    "update_object",
    "insert_segments",
    "insert_relations",
    "delete_relations_from_origin",
    "delete_relations",
    "delete_object",
    "replace_segment_search",
    "upsert_vectors",
    "record_patch",
    "set_config",
    "outbox_delete",
    "flush_outbox",
    "repair_stored_json",
}


@dataclass
class World:
    live: str  # a live source (with a segment, vectors, a claim and a relation to ``gone``)
    gone: str  # an expired source, with the same
    live_claim: str
    gone_claim: str
    claim_key: str
    keys: list[str]


def _source(title: str, uri: str, **metadata: Any) -> MemoryObject:
    return MemoryObject(
        id=new_id("source"),
        object_type="source",
        kind="conversation",
        status="active",
        title=title,
        summary=title,
        memory_source="user_declared",
        reason="test",
        scope_refs=["scope:test"],
        metadata={"uri": uri, **metadata},
    )


def _claim(value: str, **metadata: Any) -> MemoryObject:
    return MemoryObject(
        id=new_id("knowledge"),
        object_type="knowledge",
        kind="fact",
        status="active",
        title=f"zephyr port is {value}",
        summary=f"zephyr port is {value}",
        memory_source="user_declared",
        reason="test",
        scope_refs=["scope:test"],
        payload={"subject": "zephyr", "predicate": "port", "value": value},
        metadata=dict(metadata),
    )


def _build(memory: Any) -> World:
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    rt = memory.runtime
    vec = np.ones(8, dtype=np.float32)
    with rt.write("memory_remember", "knowledge", "test") as (session, patch):
        live = patch.create(_source("zephyr live", "file:///live"))
        gone = patch.create(_source("zephyr gone", "file:///gone", expires_at=past))
        live_claim = patch.create(_claim("8080"))
        gone_claim = patch.create(_claim("9090", expires_at=past))
        for src in (live, gone):
            patch.add_segments(
                [
                    Segment(
                        source_id=src.id,
                        id="seg-1",
                        ordinal=0,
                        text=f"zephyr turn of {src.title}",
                        locator={},
                        hash=src.id,
                    )
                ],
                vectors=False,
            )
            session.upsert_vectors("probe", "object", [(src.id, vec)])
            session.upsert_vectors("probe", "segment", [(f"{src.id}#seg-1", vec)])
        patch.relate(
            [
                Relation(
                    id=f"rel:{uuid.uuid4().hex}",
                    rel_type="related_to",
                    source_id=live.id,
                    target_id=gone.id,
                    created_at=past,
                )
            ],
            object_id=live.id,
        )
    keys = sorted(set(lookup_keys(live_claim)) | set(lookup_keys(gone_claim)))
    return World(live.id, gone.id, live_claim.id, gone_claim.id, str(claim_key(live_claim)), keys)


Probe = Callable[[Any, World], object]
PROBES: dict[str, Probe] = {
    "get_object": lambda s, w: [s.get_object(w.live), s.get_object(w.gone)],
    "get_objects": lambda s, w: s.get_objects([w.live, w.gone]),
    "get_object_heads": lambda s, w: s.get_object_heads([w.live, w.gone]),
    "list_objects": lambda s, w: s.list_objects(limit=50),
    "ids_by_tail": lambda s, w: s.ids_by_tail([w.live[-ID_TAIL_CHARS:], w.gone[-ID_TAIL_CHARS:]]),
    "find_by_claim": lambda s, w: s.find_by_claim(w.claim_key),
    "find_source_by_uri": lambda s, w: [
        s.find_source_by_uri("file:///live"),
        s.find_source_by_uri("file:///gone"),
    ],
    "get_segments": lambda s, w: [s.get_segments(w.live), s.get_segments(w.gone)],
    "get_segments_by_keys": lambda s, w: s.get_segments_by_keys([(w.live, "seg-1"), (w.gone, "seg-1")]),
    "iter_segments": lambda s, w: list(s.iter_segments()),
    "segment_windows": lambda s, w: s.segment_windows([(w.live, 0, 5), (w.gone, 0, 5)]),
    "search_objects_text": lambda s, w: s.search_objects_text(["zephyr"], limit=10),
    "search_segments_text": lambda s, w: [
        s.search_segments_text(["zephyr"], limit=10),
        s.search_segments_text(["zephyr"], limit=10, source_ids=[w.live, w.gone]),
    ],
    "vector_search": lambda s, w: [
        s.vector_search("probe", np.ones(8, dtype=np.float32), owner_type=t, limit=5)
        for t in ("object", "segment")
    ],
    "get_vectors": lambda s, w: [
        sorted(s.get_vectors("probe", "object", [w.live, w.gone])),
        sorted(s.get_vectors("probe", "segment", [f"{w.live}#seg-1", f"{w.gone}#seg-1"])),
    ],
    "iter_vectors": lambda s, w: [v[:3] for v in s.iter_vectors()],
    "vector_owners": lambda s, w: [s.vector_owners("object"), s.vector_owners("segment")],
    "objects_missing_search": lambda s, w: s.objects_missing_search(),
    "segments_missing_search": lambda s, w: s.segments_missing_search(),
    "relations_of": lambda s, w: s.relations_of([w.live, w.gone]),
    "list_relations": lambda s, w: s.list_relations(),
    "get_relations": lambda s, w: s.get_relations([r.id for r in s.unfiltered.list_relations()]),
    "relations_among": lambda s, w: s.relations_among([w.live, w.gone]),
    "edges_between": lambda s, w: s.edges_between([w.live], [w.gone], limit=10),
    "edges_of": lambda s, w: s.edges_of([w.live, w.gone], limit=10),
    "find_keys": lambda s, w: s.find_keys(w.keys),
}
# Reads whose live answer is empty in this world (the only relation touches the expired source):
# the probe still proves the expired one is not shown.
EMPTY_WHEN_LIVE = {
    "relations_of",
    "list_relations",
    "get_relations",
    "relations_among",
    "edges_between",
    "edges_of",
}
INDEX_REPAIR = {"objects_missing_search", "segments_missing_search"}


def _lose_full_text(memory: Any, backend: str, world: World) -> None:
    """Damage the full-text index of both sources (and their segments) in the database's own tables,
    so the repair reads have something to report."""
    ids = (world.live, world.gone)
    with memory.store.write(memory.namespace) as session:
        inner: Any = getattr(session, "inner", session)
        if backend == "sqlite":
            fts = inner.fts()
            for oid in ids:
                inner.conn.execute(
                    f"DELETE FROM {fts.objects} WHERE rowid = (SELECT pk FROM objects WHERE id = ?)", (oid,)
                )
                inner.conn.execute(
                    f"DELETE FROM {fts.segments} WHERE rowid IN (SELECT pk FROM segments WHERE source_id = ?)",
                    (oid,),
                )
        else:  # PostgreSQL keeps an object's tsvector in its own row: only segments can lose theirs
            for oid in ids:
                inner.conn.execute(
                    "DELETE FROM segment_search WHERE namespace = %s AND source_id = %s",
                    (memory.namespace, oid),
                )


def test_the_view_declares_every_member_of_the_port_and_forwards_nothing_implicitly() -> None:
    assert "__getattr__" not in vars(VisibleSession) and "__getattribute__" not in vars(VisibleSession)
    port = _port_members()
    undeclared = sorted(n for n in port if n not in vars(VisibleSession))
    assert undeclared == [], f"VisibleSession does not declare {undeclared}"
    passes = {n: m.reason for n, m in vars(VisibleSession).items() if isinstance(m, _Passes)}
    assert {n for n, r in passes.items() if r == WRITE} == WRITES
    assert {n: r for n, r in passes.items() if r != WRITE} == PASSES
    filtered = sorted(set(port) - set(passes))
    assert filtered == sorted(PROBES), "every filtered read has a probe below, and only those"


@pytest.mark.parametrize("read", sorted(PROBES))
def test_every_filtered_read_hides_the_expired_and_shows_the_live(
    memory: Memory, backend: str, read: str
) -> None:
    world = _build(memory)
    if read in INDEX_REPAIR:
        if backend == "postgres" and read == "objects_missing_search":
            pytest.skip("PostgreSQL cannot lose an object's full-text row (storage/postgres/reads.py)")
        _lose_full_text(memory, backend, world)
    with memory.runtime.read_with_expired() as raw:
        unfiltered = repr(PROBES[read](VisibleSession(raw, datetime(2000, 1, 1, tzinfo=UTC)), world))
    assert world.gone in unfiltered or world.gone_claim in unfiltered, (
        f"{read}: the probe does not reach the expired object"
    )
    with memory.runtime.read() as session:
        shown = repr(PROBES[read](session, world))
    assert world.gone not in shown and world.gone_claim not in shown, (
        f"{read} shows an expired object: {shown}"
    )
    if read not in EMPTY_WHEN_LIVE:
        assert world.live in shown or world.live_claim in shown, f"{read} hides a live object: {shown}"

"""reindex: rebuild every derived index from canonical objects; and the read-only diagnostics
that tell whether a rebuild is needed (``derived_indexes``, returned by ``repair``).

Derived material is what ``indexing.py`` computes from a canonical object: its full-text row,
its vector (and its segments' rows and vectors), and its graph relations with their
``relation_schema``. ``reindex`` rewrites every full-text row, embeds whatever has no vector or
one made by another model (``reembed`` re-embeds everything), and makes the stored derived
relations equal to the derived set: missing ones added, outdated ones rewritten, ones no
canonical object implies any more removed. Running it twice leaves the same state; the second
run adds, rewrites and removes nothing.

A relation is *derived* (owned by reindex) when its ``relation_schema`` names the object it
came from as its ``origin_id``; relations written without an origin are canonical and left alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TypedDict, TypeVar

from memory_substrate.embed.base import Embedder
from memory_substrate.graph import deferred
from memory_substrate.indexing import (
    claim_key,
    derived_relations,
    embed_objects,
    embed_segments,
    keyed_vectors,
    lookup_keys,
    search_doc,
    segment_search_text,
    segment_vector_id,
)
from memory_substrate.maintain import derived
from memory_substrate.maintain.backends import check_backend, effective
from memory_substrate.maintain.common import (
    ALL,
    Envelope,
    commit_if_changed,
    load_objects,
    maintenance_event,
    maintenance_session,
)
from memory_substrate.maintain.results import (
    DerivedIndexes,
    GraphDiagnostics,
    ReindexCounts,
    ReindexResult,
    SemanticBackendView,
    VectorDiagnostics,
)
from memory_substrate.maintain.schemas import ReindexOptions
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import now_iso

Progress = Callable[[int, int, str], None]
BATCH = 256
SAMPLE = 10
T = TypeVar("T")


class GraphDiff(TypedDict):
    """Stored relations beside the derived set canonical objects imply."""

    expected: int
    stored: int
    canonical: int  # stored relations without an origin object: not reindex's to change
    missing: list[Relation]
    outdated: list[Relation]
    extra: list[str]


def is_derived(rel: Relation) -> bool:
    schema = rel.payload.get("relation_schema") or {}
    # Only derived_relations writes relation_schema, always as an object.
    return (
        rel.origin_id is not None
        and isinstance(schema, dict)
        and schema.get("origin_object_id") == rel.origin_id
    )


def graph_diff(objects: Iterable[MemoryObject], stored: list[Relation]) -> GraphDiff:
    """Stored derived relations against the set canonical objects imply."""
    expected: dict[str, Relation] = {}
    stamp = now_iso()
    for obj in objects:
        for rel in derived_relations(obj, stamp):
            expected[rel.id] = rel
    have = {r.id: r for r in stored}
    missing = [r for rid, r in expected.items() if rid not in have]
    outdated = [r for rid, r in expected.items() if rid in have and have[rid].payload != r.payload]
    extra = [r.id for r in stored if is_derived(r) and r.id not in expected]
    return {
        "expected": len(expected),
        "stored": len(stored),
        "canonical": sum(1 for r in stored if not is_derived(r)),
        "missing": missing,
        "outdated": outdated,
        "extra": extra,
    }


def _vector_state(session: StoreSession, owner_type: str) -> tuple[dict[str, str], Counter[str]]:
    owners = dict(session.vector_owners(owner_type))
    return owners, Counter(owners.values())


def derived_index_diagnostics(
    rt: Runtime, session: StoreSession, objects: list[MemoryObject], relations: list[Relation]
) -> DerivedIndexes:
    """Missing or stale index rows, found without changing anything."""
    config = effective(session.get_config())
    fts_objects = session.objects_missing_search(limit=ALL)
    fts_segments = session.segments_missing_search(limit=ALL)
    embedder = rt.embedder_or_none()
    model = embedder.name if embedder is not None else None
    obj_owners, obj_models = _vector_state(session, "object")
    _, seg_models = _vector_state(session, "segment")
    ids = {o.id for o in objects}
    total_segments = session.count_segments()
    vectors: VectorDiagnostics = {
        "backend": config["semantic_backend"],
        "enabled": embedder is not None,
        "model": model,
        "by_model": {
            **{f"object:{m}": n for m, n in obj_models.items()},
            **{f"segment:{m}": n for m, n in seg_models.items()},
        },
        "orphaned": sum(1 for oid in obj_owners if oid not in ids),
    }
    stale_vectors = False
    if embedder is None:
        vectors["reason"] = rt.semantic_status().get("reason")
    else:
        seg_current = seg_models.get(model or "", 0)
        seg_other = sum(seg_models.values()) - seg_current
        # Segments a capture queued for the background worker (graph/deferred.py) are not damage:
        # counted apart, they do not ask for a reindex.
        queued = deferred.queued_segments(session)
        vectors["objects_missing"] = sum(1 for oid in ids if oid not in obj_owners)
        vectors["objects_stale_model"] = sum(1 for oid, m in obj_owners.items() if oid in ids and m != model)
        vectors["segments_missing"] = max(0, total_segments - seg_current - seg_other - queued)
        vectors["segments_queued"] = queued
        vectors["segments_stale_model"] = seg_other
        stale_vectors = any(
            (
                vectors["objects_missing"],
                vectors["objects_stale_model"],
                vectors["segments_missing"],
                vectors["segments_stale_model"],
            )
        )
    diff = graph_diff(objects, relations)
    graph: GraphDiagnostics = {
        "backend": config["graph_backend"],
        "expected_relations": diff["expected"],
        "stored_relations": diff["stored"],
        "canonical_relations": diff["canonical"],
        "missing_relations": len(diff["missing"]),
        "outdated_relations": len(diff["outdated"]),
        "extra_relations": len(diff["extra"]),
    }
    stale = bool(
        fts_objects or fts_segments or stale_vectors or diff["missing"] or diff["outdated"] or diff["extra"]
    )
    return {
        "full_text": {
            "objects_missing": len(fts_objects),
            "segments_missing": len(fts_segments),
            "sample_object_ids": fts_objects[:SAMPLE],
            "sample_segments": [{"source_id": s, "segment_id": g} for s, g in fts_segments[:SAMPLE]],
        },
        "vectors": vectors,
        "graph": graph,
        "stale": stale,
        "next_actions": ["run_memory_maintain_reindex_with_apply"] if stale else [],
    }


def _batches(items: list[T], size: int = BATCH) -> Iterable[list[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _embed_objects(
    session: StoreSession, embedder: Embedder, todo: list[MemoryObject], tick: Callable[[int], None]
) -> int:
    for chunk in _batches(todo):
        session.upsert_vectors(embedder.name, "object", embed_objects(embedder, chunk))
        for owner_type, rows in keyed_vectors(embedder, chunk).items():
            session.upsert_vectors(embedder.name, owner_type, rows)
        tick(len(chunk))
    return len(todo)


def reindex(rt: Runtime, opts: ReindexOptions, *, progress: Progress | None = None) -> ReindexResult:
    """Rebuild full-text rows, vectors and derived relations. Dry run unless ``opts.apply``.

    Raises ``NotAvailableError`` when a requested backend is not supported in this build.
    """

    def report(done: int, total: int, phase: str) -> None:
        if progress is not None:
            progress(done, total, phase)

    with maintenance_session(
        rt, "reindex", apply=opts.apply, reason="rebuild derived indexes", embed=False
    ) as (
        session,
        patch,
    ):
        config = effective(session.get_config())
        graph_backend = opts.graph_backend or config["graph_backend"]
        semantic_backend = opts.semantic_backend or config["semantic_backend"]
        check_backend("graph_backend", graph_backend, rt.settings)
        check_backend("semantic_backend", semantic_backend, rt.settings)
        mirrors = derived.wanted(graph_backend, semantic_backend)
        objects = load_objects(session)
        diff = graph_diff(objects, session.list_relations(limit=ALL))
        total_segments = session.count_segments()
        embedder = rt.embedder_or_none()
        model = embedder.name if embedder is not None else None
        obj_owners = dict(session.vector_owners("object")) if embedder else {}
        seg_owners = dict(session.vector_owners("segment")) if embedder else {}
        obj_todo = [o for o in objects if embedder and (opts.reembed or obj_owners.get(o.id) != model)]
        seg_current = sum(1 for m in seg_owners.values() if m == model)
        counts = _planned_counts(objects, diff, total_segments, obj_todo, seg_current, embedder, opts.reembed)
        changes = _planned_total(counts)
        if patch is not None and changes:
            _rewrite_and_embed_objects(session, objects, diff, embedder, obj_todo, report)
            counts["segment_vectors"] = _rebuild_segments(
                session, objects, embedder, seg_owners, opts.reembed, report
            )
            maintenance_event(
                patch,
                "index:derived",
                "reindex",
                {
                    **counts,
                    "graph_backend": graph_backend,
                    "semantic_backend": semantic_backend,
                    "model": model,
                },
            )
        rebuilt: Mapping[str, Mapping[str, object]] = {}
        if mirrors:
            # Derived backends are rebuilt from scratch on every reindex, after the canonical rewrite.
            counts["derived_backends_rebuilt"] = len(mirrors)
            changes += len(mirrors)
            if patch is not None:
                rebuilt = derived.rebuild_in(rt, session, mirrors)
                for name, done in rebuilt.items():
                    maintenance_event(patch, f"index:{name}", "reindex", {"backend": name, **done})
        record = commit_if_changed(patch, counts)
    semantic: SemanticBackendView = {
        "backend": semantic_backend,
        "enabled": embedder is not None,
        "model": model,
    }
    if embedder is None:
        semantic["reason"] = rt.semantic_status().get("reason")
    env = Envelope("reindex", opts.apply, changes, patch, record)
    return {
        **env.head(),
        "graph_backend": {"backend": graph_backend, "relations_expected": diff["expected"]},
        "semantic_backend": semantic,
        "derived_backends": {"planned": mirrors, "rebuilt": rebuilt},
        "counts": counts,
        **env.tail(),
    }


def _planned_total(counts: ReindexCounts) -> int:
    """How many rows a reindex rewrites: the planned counts added up."""
    return (
        counts["objects_full_text"]
        + counts["segments_full_text"]
        + counts["object_vectors"]
        + counts["segment_vectors"]
        + counts["relations_added"]
        + counts["relations_rewritten"]
        + counts["relations_removed"]
    )


def _planned_counts(
    objects: list[MemoryObject],
    diff: GraphDiff,
    total_segments: int,
    obj_todo: list[MemoryObject],
    seg_current: int,
    embedder: Embedder | None,
    reembed: bool,
) -> ReindexCounts:
    """What a reindex rewrites, by kind of row; a dry run reports these and stops."""
    return {
        "objects_full_text": len(objects),
        "segments_full_text": total_segments,
        "object_vectors": len(obj_todo),
        "segment_vectors": (total_segments if reembed else total_segments - seg_current) if embedder else 0,
        "relations_added": len(diff["missing"]),
        "relations_rewritten": len(diff["outdated"]),
        "relations_removed": len(diff["extra"]),
    }


def _rewrite_and_embed_objects(
    session: StoreSession,
    objects: list[MemoryObject],
    diff: GraphDiff,
    embedder: Embedder | None,
    obj_todo: list[MemoryObject],
    report: Progress,
) -> None:
    """Rewrite full-text rows and derived relations, then embed the objects that need a vector."""
    _rewrite_objects_and_relations(session, objects, diff, report)
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        report(done[0], len(obj_todo), "vectors:objects")

    if embedder is not None:
        _embed_objects(session, embedder, obj_todo, tick)


def _rewrite_objects_and_relations(
    session: StoreSession, objects: list[MemoryObject], diff: GraphDiff, report: Progress
) -> None:
    """Every object's full-text row and lookup keys, and the derived relations the diff found
    missing, outdated or extra."""
    for i, obj in enumerate(objects, 1):
        session.update_object(obj, search_doc(obj), claim_key(obj))
        session.set_object_keys(obj.id, lookup_keys(obj))
        if i % 500 == 0 or i == len(objects):
            report(i, len(objects), "full_text:objects")
    stamp = now_iso()
    rewrite = [
        Relation(r.id, r.rel_type, r.source_id, r.target_id, r.origin_id, r.payload, stamp)
        for r in diff["missing"] + diff["outdated"]
    ]
    session.delete_relations(diff["extra"])
    session.insert_relations(rewrite)
    report(len(rewrite) + len(diff["extra"]), len(rewrite) + len(diff["extra"]), "graph:relations")


def _rebuild_segments(
    session: StoreSession,
    objects: list[MemoryObject],
    embedder: Embedder | None,
    owners: dict[str, str],
    reembed: bool,
    report: Progress,
) -> int:
    """Rewrite every segment's full-text row; embed segments lacking a current vector."""
    sources = [o for o in objects if o.object_type == "source"]
    embedded = 0
    for n, source in enumerate(sources, 1):
        offset = 0
        while True:
            segs = session.get_segments(source.id, limit=BATCH, offset=offset)
            if not segs:
                break
            session.replace_segment_search((s.source_id, s.id, *segment_search_text(s)) for s in segs)
            if embedder is not None:
                todo = [
                    s
                    for s in segs
                    if reembed or owners.get(segment_vector_id(s.source_id, s.id)) != embedder.name
                ]
                if todo:
                    session.upsert_vectors(embedder.name, "segment", embed_segments(embedder, todo))
                    embedded += len(todo)
            offset += len(segs)
        report(n, len(sources), "segments")
    return embedded

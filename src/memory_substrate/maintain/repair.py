"""repair: safe missing-reference repairs, plus ``derived_indexes`` diagnostics.

Only repairs that cannot lose or invent meaning are made:

* a node id that an object field or a relation points at but that does not exist gets a
  **stub node**, exactly as the write path makes one (``kind: stub``, ``metadata.stub``);
* a derived relation whose origin object no longer exists is **removed** (nothing canonical
  implies it), and so is a canonical (origin-less) relation whose endpoint is missing and is not
  a node (it cannot be re-created).

Stored JSON that readers of the database cannot use (``StoreSession.stored_json_problems``:
NaN or Infinity written by an older release, which SQLite's JSON functions refuse, failing every
search that touched the row) is rewritten with those numbers as ``null``, each rewritten row and
field listed in ``repairs.stored_json`` and audited; text that is not JSON at all (never written
by this server) is listed and left alone.

Broken references that only a reviewer can fix are *reported* in ``unresolved_references``
and left alone: a field of a canonical object naming a missing non-node object, or evidence
refs whose source or segment is gone. ``derived_indexes`` (full-text rows, vectors by model,
graph relations against what canonical objects imply) is computed before any repair, so a
caller can decide on a mutating ``reindex`` first.
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_substrate.indexing import derived_relations, referenced_node_ids, stub_node
from memory_substrate.maintain import derived
from memory_substrate.maintain.common import (
    ALL,
    Envelope,
    commit_if_changed,
    load_objects,
    maintenance_event,
    maintenance_session,
)
from memory_substrate.maintain.reindex import derived_index_diagnostics, is_derived
from memory_substrate.maintain.results import (
    DerivedDiagnostics,
    RepairCounts,
    RepairResult,
    StoredJsonHealth,
    UnresolvedReference,
)
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.patch import Patch
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.json_text import NON_FINITE, StoredJson

SAMPLE = 50


def _evidence_gaps(
    session: StoreSession, objects: list[MemoryObject], ids: set[str]
) -> list[UnresolvedReference]:
    gaps: list[UnresolvedReference] = []
    keys: dict[tuple[str, str], list[str]] = {}
    for obj in objects:
        for ev in obj.evidence_refs:
            source_id, segment_id = ev.get("source_id"), ev.get("segment_id")
            if source_id not in ids:
                gaps.append({"kind": "evidence_source_missing", "object_id": obj.id, "missing_id": source_id})
            elif segment_id:
                keys.setdefault((str(source_id), str(segment_id)), []).append(obj.id)
    found = {(s.source_id, s.id) for s in session.get_segments_by_keys(list(keys))} if keys else set()
    for key, owners in keys.items():
        if key not in found:
            gaps.extend(
                {"kind": "evidence_segment_missing", "object_id": o, "missing_id": f"{key[0]}#{key[1]}"}
                for o in owners
            )
    return gaps


def plan_repairs(
    session: StoreSession, objects: list[MemoryObject], relations: list[Relation]
) -> tuple[dict[str, str], list[tuple[Relation, str]], list[UnresolvedReference]]:
    """(missing node id -> first referrer, relations to remove with why, unresolved references)."""
    ids = {o.id for o in objects}
    remove: list[tuple[Relation, str]] = []
    kept: list[Relation] = []
    for rel in relations:
        if is_derived(rel) and rel.origin_id not in ids:
            remove.append((rel, "origin_missing"))
        elif not is_derived(rel) and any(
            e not in ids and not e.startswith("node:") for e in (rel.source_id, rel.target_id)
        ):
            remove.append((rel, "endpoint_missing"))
        else:
            kept.append(rel)
    missing_nodes: dict[str, str] = {}
    unresolved: list[UnresolvedReference] = []
    for obj in sorted(objects, key=lambda o: o.id):
        for ref in referenced_node_ids(obj):
            if ref not in ids:
                missing_nodes.setdefault(ref, obj.id)
        for rel in derived_relations(obj, obj.updated_at):
            field = _origin_field(rel)
            if field == "evidence_refs":
                continue  # evidence is checked below, down to the segment
            for end in (rel.source_id, rel.target_id):
                if end not in ids and not end.startswith("node:"):
                    unresolved.append(
                        {
                            "kind": "field_reference_missing",
                            "object_id": obj.id,
                            "field": field,
                            "missing_id": end,
                        }
                    )
    for rel in kept:
        for end in (rel.source_id, rel.target_id):
            if end not in ids and end.startswith("node:"):
                missing_nodes.setdefault(end, rel.origin_id or rel.id)
    unresolved.extend(_evidence_gaps(session, [o for o in objects if o.evidence_refs], ids))
    return dict(sorted(missing_nodes.items())), remove, unresolved


def _origin_field(rel: Relation) -> str:
    """The field of its origin object a derived relation comes from (``derived_relations`` sets it)."""
    schema = rel.payload["relation_schema"]
    if not isinstance(schema, dict):
        raise TypeError(f"relation {rel.id} has no relation_schema object")
    return str(schema["origin_field"])


def _drifted(backends: DerivedDiagnostics) -> list[str]:
    return [name for name, b in backends.get("backends", {}).items() if not b["in_line"] or not b["built"]]


def _row_name(row: StoredJson) -> str:
    """What an audit event of a rewritten row names: the object, segment or record it holds."""
    if row.table == "segments":
        return f"{row.key['source_id']}#{row.key['id']}"
    if row.table == "config":
        return f"config:{row.key['key']}"
    return row.key["id"]


def _repair_json(session: StoreSession, patch: Patch | None) -> tuple[list[StoredJson], list[StoredJson]]:
    """(rows found, rows rewritten): first, so every later read of this repair reads clean rows."""
    found = session.stored_json_problems(limit=ALL)
    if patch is None:
        return found, []
    repaired = session.repair_stored_json(found)
    for row in repaired:
        maintenance_event(patch, _row_name(row), "repair_stored_json", row.to_dict())
    return found, repaired


def repair(rt: Runtime, *, apply: bool) -> RepairResult:
    with maintenance_session(rt, "repair", apply=apply, reason="repair missing references") as (
        session,
        patch,
    ):
        damaged, rewritten = _repair_json(session, patch)
        fixable = [row for row in damaged if row.problem == NON_FINITE]
        objects = load_objects(session)
        relations = session.list_relations(limit=ALL)
        diagnostics = derived_index_diagnostics(rt, session, objects, relations)
        backends = derived.diagnostics(rt, session)
        if backends:
            diagnostics["derived_backends"] = backends
        missing_nodes, remove, unresolved = plan_repairs(session, objects, relations)
        if patch is not None:
            for node_id, referrer in missing_nodes.items():
                patch.create(stub_node(node_id, referrer, created_by_repair=True), derive=False)
            if remove:
                session.delete_relations([r.id for r, _ in remove])
                for rel, why in remove:
                    maintenance_event(
                        patch,
                        rel.id,
                        "unrelate",
                        {
                            "reason": why,
                            "rel_type": rel.rel_type,
                            "source_id": rel.source_id,
                            "target_id": rel.target_id,
                            "origin_id": rel.origin_id,
                        },
                    )
        drifted = _drifted(backends)
        mirrored: Mapping[str, object] = {}
        if patch is not None and (drifted or backends.get("outbox_pending")):
            mirrored = derived.repair_in(rt, session)
            maintenance_event(patch, "index:derived_backends", "repair", mirrored)
        counts: RepairCounts = {
            "derived_backends_out_of_line": len(drifted),
            "stub_nodes_created": len(missing_nodes),
            "relations_removed": len(remove),
            "unresolved_references": len(unresolved),
            "stored_json_rewritten": len(rewritten) if patch is not None else len(fixable),
            "stored_json_unreadable": len(damaged) - len(fixable),
        }
        record = commit_if_changed(patch, counts)
    change_count = (
        len(missing_nodes)
        + len(remove)
        + len(drifted)
        + (1 if backends.get("outbox_pending") else 0)
        + len(fixable)
    )
    env = Envelope("repair", apply, change_count, patch, record)
    return {
        **env.head(),
        "repairs": {
            "stub_node_ids": list(missing_nodes)[:SAMPLE],
            "removed_relations": [
                {
                    "id": r.id,
                    "rel_type": r.rel_type,
                    "source_id": r.source_id,
                    "target_id": r.target_id,
                    "reason": why,
                }
                for r, why in remove[:SAMPLE]
            ],
            "stored_json": [row.to_dict() for row in damaged[:SAMPLE]],
        },
        "unresolved_references": unresolved[:SAMPLE],
        "derived_backends_repaired": mirrored,
        "derived_indexes": diagnostics,
        "counts": counts,
        **env.tail(),
    }


def stored_json_health(rt: Runtime) -> StoredJsonHealth | None:
    """For ``doctor``: the namespace's rows whose stored JSON readers cannot use, counted, a few
    shown, with what to run; None when there are none."""
    with rt.read_with_expired() as session:
        damaged = session.stored_json_problems(limit=ALL)
    if not damaged:
        return None
    fixable = sum(row.problem == NON_FINITE for row in damaged)
    problem = (
        f"{len(damaged)} stored row(s) hold JSON that reads cannot use (NaN or Infinity"
        f"{'' if fixable == len(damaged) else ', or text that is not JSON'}): searches touching them fail"
    )
    if fixable:
        problem += "; `memory-substrate maintain repair --options '{\"apply\": true}'` rewrites those numbers as null"
    return {
        "rows": len(damaged),
        "repairable": fixable,
        "sample": [row.to_dict() for row in damaged[:5]],
        "problem": problem,
    }

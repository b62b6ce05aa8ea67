"""Import a ``markitect.memory.graph.v1`` snapshot into a namespace as governed writes.

Everything goes through one patch of ``memory_remember`` mode ``graph_snapshot``, inside the
caller's write session, so an import lands whole or not at all. Each object is checked the way
``memory_remember`` checks it: the same input models (kind pattern, title and summary limits,
``scope:`` refs), evidence refs against captured segments, exact structured duplicates
(skipped and reported, with the existing object standing in for the node), and conflicting
claims (both sides marked ``contested``). Objects are written with ``memory_source:
imported``; the declared source is kept in ``metadata.graph_import`` and exported again as
the node's provenance.

Ids: a node id that is already a valid id of this store for its object type (``know:...``,
``src:...``) is kept, so export -> import -> export is stable; any other id gets a new store
id (the report lists the mapping). Nodes exported by this project carry their object fields
in ``attributes``; foreign nodes are mapped by kind (``mapping.object_for_node_kind``), and
their edges become typed links (``metadata.links``) from which the graph edges are derived.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import cast

from memory_substrate.contracts.diagnostics import has_errors
from memory_substrate.contracts.documents import GraphDocument, GraphEdge, GraphNode
from memory_substrate.contracts.mapping import SEGMENT_NODE_KINDS, object_for_node_kind
from memory_substrate.contracts.snapshot_export import IMPORT_EVENT, IMPORT_KEY, segment_node_id
from memory_substrate.contracts.validate import validate
from memory_substrate.errors import EvidenceError, ValidationError
from memory_substrate.graph.canonical import canonical_relation
from memory_substrate.indexing import _rel_id, claim_key, claim_value
from memory_substrate.json_types import JsonObject
from memory_substrate.models import (
    KNOWLEDGE_STATUSES,
    LIVE_KNOWLEDGE_STATUSES,
    AuditEvent,
    MemoryObject,
    Segment,
)
from memory_substrate.patch import Patch
from memory_substrate.remember import schemas
from memory_substrate.remember.evidence import check_evidence
from memory_substrate.util import ID_PREFIXES, new_id, now_iso, sha256_text
from memory_substrate.validation import parse

PREFIX = {
    **{k: v for k, v in ID_PREFIXES.items() if k in ("source", "knowledge", "activity", "work_item", "node")},
    "entity": "ent",
}
STATUSES = {
    "knowledge": KNOWLEDGE_STATUSES,
    "activity": ("recorded",),
    "work_item": ("open", "in_progress", "blocked", "done", "cancelled"),
    "source": ("active", "superseded", "archived"),
    "node": ("active", "archived"),
    "entity": ("active", "archived"),
}
# Creation order: things others point at first (stubs and entities, then evidence).
ORDER = ("node", "entity", "source", "knowledge", "activity", "work_item")
REPORT_CAP = 500
CANONICAL = "canonical_relation"  # relation_schema.derivation of relations with no origin object
GOVERNED = ("knowledge", "activity", "work_item")  # written through memory_remember's input models
MEMORY_SOURCES = ("user_declared", "human_curated", "agent_inferred", "system_generated", "imported")


def _fresh_id(object_type: str) -> str:
    if object_type == "entity":
        return "ent:" + new_id("node").split(":", 1)[1]
    return new_id(object_type)


def _dict(value: object) -> JsonObject:
    return dict(value) if isinstance(value, dict) else {}


def _ordinal(segment_node: GraphNode, default: int = 0) -> int:
    value = (segment_node.get("attributes") or {}).get("ordinal")
    return value if isinstance(value, int) else default


@dataclass
class _Plan:
    node: GraphNode
    object_type: str
    kind: str
    ours: bool  # exported by this project: object fields are in attributes
    store_id: str = ""
    segments: list[GraphNode] = field(default_factory=list)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (edge id, kind, target node id)
    written: MemoryObject | None = None
    evidence: list[JsonObject] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


class SnapshotImporter:
    """One import into the patch's namespace. ``run`` returns the report."""

    def __init__(
        self, patch: Patch, snapshot: GraphDocument, scope_refs: list[str], reason: str | None
    ) -> None:
        self.patch = patch
        self.session = patch.session
        self.snapshot = snapshot
        self.snapshot_id = str(snapshot.get("id", ""))
        self.default_scopes = scope_refs
        self.reason = reason or f"imported from graph snapshot {self.snapshot_id}"
        self.id_map: dict[str, str] = {}  # node id -> store id (segments: "src:..#seg-N")
        self.edge_map: dict[str, str] = {}  # foreign edge id -> id of the relation derived from its link
        self.created: dict[str, int] = {}
        self.plans: list[_Plan] = []
        self.canonical: list[GraphEdge] = []  # exported canonical relations (graph-toolset edges)
        self.report: dict[str, list[JsonObject]] = {
            "already_present": [],
            "duplicates": [],
            "conflicts": [],
            "normalized": [],
            "approximated": [],
            "nodes_not_imported": [],
            "edges_not_imported": [],
            "events_not_imported": [],
        }

    # --- planning -------------------------------------------------------------------------
    def _classify(self) -> tuple[list[_Plan], dict[str, _Plan]]:
        nodes = self.snapshot.get("nodes", [])
        edges = self.snapshot.get("edges", [])
        plans: dict[str, _Plan] = {}
        for node in nodes:
            attrs = node.get("attributes") or {}
            object_type, kind = attrs.get("object_type"), attrs.get("object_kind")
            if object_type == "segment" or (
                isinstance(object_type, str) and object_type in PREFIX and isinstance(kind, str)
            ):
                # a segment's kind is never read: it becomes no object of its own
                plans[node["id"]] = _Plan(node, str(object_type), kind if isinstance(kind, str) else "", True)
                continue
            mapped_type, mapped_kind = object_for_node_kind(node["kind"])
            if attrs.get("object_type") is not None:
                self.report["approximated"].append(
                    {
                        "node_id": node["id"],
                        "declared_object_type": attrs.get("object_type"),
                        "object_type": mapped_type,
                    }
                )
            plans[node["id"]] = _Plan(node, mapped_type, mapped_kind, False)
        # foreign turns/evidence that belong_to an episode/document become its segments
        for edge in edges:
            src, tgt = plans[edge["source"]], plans[edge["target"]]
            if (
                edge["kind"] == "belongs_to"
                and not src.ours
                and src.node["kind"] in SEGMENT_NODE_KINDS
                and tgt.object_type == "source"
                and src.object_type != "segment"
            ):
                src.object_type, src.kind = "segment", ""
                tgt.segments.append(src.node)
        order = {node["id"]: i for i, node in enumerate(nodes)}
        for plan in plans.values():
            if plan.ours and plan.object_type == "segment":
                parent = plans.get(str(plan.node["attributes"].get("source_id")))
                if parent is None or parent.object_type != "source":
                    self._not_imported("nodes", plan.node["id"], "segment without its source node")
                else:
                    parent.segments.append(plan.node)
        for plan in plans.values():
            if plan.ours:
                plan.segments.sort(key=lambda n: (_ordinal(n), order[n["id"]]))
            else:
                plan.segments.sort(key=lambda n: order[n["id"]])
        objects = [p for p in plans.values() if p.object_type != "segment"]
        objects.sort(key=lambda p: ORDER.index(p.object_type))
        return objects, plans

    def _not_imported(self, what: str, item_id: str, reason: str) -> None:
        self.report[f"{what}_not_imported"].append({"id": item_id, "reason": reason})

    def _assign_ids(self, objects: list[_Plan]) -> list[_Plan]:
        wanted = [p.node["id"] for p in objects if p.node["id"].startswith(PREFIX[p.object_type] + ":")]
        existing: dict[str, MemoryObject] = dict(self.session.get_objects(wanted)) if wanted else {}
        if len(wanted) < len(objects):
            existing.update(self._imported_before())
        todo = []
        for plan in objects:
            node_id = plan.node["id"]
            if node_id in existing:
                self.id_map[node_id] = existing[node_id].id
                self.report["already_present"].append({"node_id": node_id, "object_id": existing[node_id].id})
                continue
            keep = node_id.startswith(PREFIX[plan.object_type] + ":")
            plan.store_id = node_id if keep else _fresh_id(plan.object_type)
            self.id_map[node_id] = plan.store_id
            todo.append(plan)
        return todo

    def _imported_before(self) -> dict[str, MemoryObject]:
        """Objects an earlier import of this same snapshot wrote for foreign node ids, so that
        importing a snapshot twice does not write its nodes twice."""
        found: dict[str, MemoryObject] = {}
        offset = 0
        while page := self.session.list_objects(order="created_asc", limit=1000, offset=offset):
            offset += len(page)
            for obj in page:
                origin = obj.metadata.get(IMPORT_KEY)
                if isinstance(origin, dict) and origin.get("snapshot_id") == self.snapshot_id:
                    found.setdefault(str(origin.get("node_id")), obj)
        return found

    def _segment_ids(self, plan: _Plan) -> None:
        for i, seg in enumerate(plan.segments):
            attrs = seg.get("attributes") or {}
            seg_id = (
                attrs.get("segment_id")
                if plan.ours and isinstance(attrs.get("segment_id"), str)
                else f"seg-{i + 1}"
            )
            self.id_map[seg["id"]] = segment_node_id(plan.store_id, str(seg_id))

    def _edges_to_links(self, plans: dict[str, _Plan]) -> None:
        for edge in self.snapshot.get("edges", []):
            attrs = edge.get("attributes") or {}
            if (
                attrs.get("derivation") == CANONICAL
                and isinstance(attrs.get("rel_type"), str)
                and not attrs.get("origin")
            ):
                self.canonical.append(edge)  # typed edges with no origin object: written as they were
                continue
            if {"derivation", "rel_type"} & set(attrs):
                continue  # derived by this store from object fields: rebuilt when the object is written
            src, tgt = plans[edge["source"]], plans[edge["target"]]
            if src.object_type == "segment" and edge["kind"] == "belongs_to" and tgt.object_type == "source":
                continue
            target_id = self.id_map.get(edge["target"])
            if src.object_type == "segment":
                self._not_imported("edges", edge["id"], "segments cannot carry edges in this store")
            elif not src.store_id:
                self._not_imported(
                    "edges", edge["id"], "its source node was not written by this import (already present)"
                )
            elif target_id is None:
                self._not_imported("edges", edge["id"], "its target node was not imported")
            elif (
                edge["kind"] == "derived_from"
                and src.object_type == "knowledge"
                and tgt.object_type in ("source", "segment")
            ):
                source_id, _, seg_id = target_id.partition("#")
                src.evidence.append({"source_id": source_id, **({"segment_id": seg_id} if seg_id else {})})
            elif (
                edge["kind"] == "derived_from"
                and src.object_type in ("activity", "work_item")
                and tgt.object_type in ("source", "segment")
            ):
                src.sources.append(target_id.partition("#")[0])
            elif tgt.object_type == "segment":
                self._not_imported(
                    "edges", edge["id"], "edges to a segment are kept only as evidence (derived_from)"
                )
            else:
                src.links.append((edge["id"], edge["kind"], edge["target"]))

    # --- writing ----------------------------------------------------------------------------
    def run(self) -> JsonObject:
        """The import report: what was created, the id mapping, and what was not imported and why."""
        objects, plans = self._classify()
        todo = self._assign_ids(objects)
        self.plans = todo
        for plan in todo:
            if plan.object_type == "source":
                self._segment_ids(plan)
        self._edges_to_links(plans)
        for plan in todo:
            try:
                self._write(plan)
            except (ValidationError, EvidenceError) as exc:
                self.id_map.pop(plan.node["id"], None)
                for seg in plan.segments:
                    self.id_map.pop(seg["id"], None)
                self._not_imported("nodes", plan.node["id"], exc.message)
        self._link()
        self._canonical_relations()
        self._events()
        changed = {k: v for k, v in self.id_map.items() if k != v}
        # Lists are capped so that a large import still fits a tool response; counts are exact.
        return {
            "status": "imported",
            "snapshot_id": self.snapshot_id,
            "created": dict(sorted(self.created.items())),
            "id_map": dict(list(changed.items())[:REPORT_CAP]),
            "report_counts": {"id_map": len(changed), **{k: len(v) for k, v in self.report.items()}},
            **{k: v[:REPORT_CAP] for k, v in self.report.items()},
        }

    def _link(self) -> None:
        """Second pass: edges of foreign snapshots become typed links once both ends exist."""
        written = set(self.id_map.values())
        for plan in self.plans:
            if not plan.links:
                continue
            if plan.written is None:
                for edge_id, _, _ in plan.links:
                    self._not_imported(
                        "edges", edge_id, "its source node was not written (a duplicate, or not imported)"
                    )
                continue
            stored = plan.written.metadata.get("links") or []
            # a list wherever links are written; a caller's metadata may hold any JSON there
            before = list(stored) if isinstance(stored, Iterable) else []
            links = list(before)
            for edge_id, kind, target in plan.links:
                link = {"rel_type": kind, "target_id": self.id_map.get(target, "")}
                if link["target_id"] not in written:
                    self._not_imported("edges", edge_id, "its target node was not imported")
                elif link not in links:
                    links.append(link)
                    self.edge_map[edge_id] = _rel_id(
                        plan.written.id, kind, plan.written.id, link["target_id"]
                    )
            if len(links) != len(before):
                obj = replace(plan.written, metadata={**plan.written.metadata, "links": links})
                plan.written = self.patch.update(obj, action="link", changes={"links": len(links)})

    def _canonical_relations(self) -> None:
        """Relations with no origin object (the graph toolset's typed edges) are not rebuilt from
        any object: they are written again with their type, ends and properties, so their ids (a
        digest of type and ends) come back the same when the node ids do."""
        rels = []
        for edge in self.canonical:
            attrs = edge["attributes"]
            source, target = self.id_map.get(edge["source"]), self.id_map.get(edge["target"])
            if source is None or target is None or "#" in source or "#" in target:
                self._not_imported("edges", edge["id"], "one of its ends was not imported as an object")
                continue
            found = attrs.get("properties")
            props: JsonObject = found if isinstance(found, dict) else {}
            rel = canonical_relation(str(attrs["rel_type"]), source, target, props, now_iso())
            rels.append(rel)
            self.edge_map[edge["id"]] = rel.id
        for rel in rels:
            self.patch.relate([rel], object_id=rel.source_id)
        if rels:
            self._count("relations", len(rels))

    def _count(self, what: str, n: int = 1) -> None:
        self.created[what] = self.created.get(what, 0) + n

    def _status(self, plan: _Plan, default: str) -> str:
        status = plan.node.get("status")
        if status is None:
            return default
        if status in STATUSES[plan.object_type]:
            return str(status)
        self.report["normalized"].append(
            {"node_id": plan.node["id"], "field": "status", "from": status, "to": default}
        )
        return default

    def _scopes(self, plan: _Plan) -> list[str]:
        tags = [
            t
            for t in plan.node.get("tags", [])
            if isinstance(t, str) and t.startswith("scope:") and len(t) > 6
        ]
        return tags or list(self.default_scopes)

    def _metadata(self, plan: _Plan, declared_source: str | None) -> JsonObject:
        attrs = plan.node.get("attributes") or {}
        metadata: JsonObject = (
            _dict(attrs.get("metadata")) if plan.ours else ({"attributes": attrs} if attrs else {})
        )
        links = metadata.get("links")
        if plan.ours and isinstance(links, list):
            metadata["links"] = [
                {**link, "target_id": self._ref(link.get("target_id"))}
                for link in links
                if isinstance(link, dict)
            ]
        if plan.ours and metadata.get("supersedes"):
            metadata["supersedes"] = self._ref(metadata["supersedes"])
        origin: JsonObject = {"snapshot_id": self.snapshot_id, "node_id": plan.node["id"]}
        if declared_source:
            origin["memory_source"] = declared_source
        metadata[IMPORT_KEY] = origin
        return metadata

    def _ref(self, value: object) -> object:
        return self.id_map.get(value, value) if isinstance(value, str) else value

    def _refs(self, values: object) -> list[object]:
        if not isinstance(values, list):
            return []
        return [self.id_map.get(v, v) if isinstance(v, str) else v for v in values]

    def _write(self, plan: _Plan) -> None:
        node, attrs = plan.node, plan.node.get("attributes") or {}
        provenance = node.get("provenance") or {}
        declared = provenance.get("memory_source")
        declared = declared if declared in MEMORY_SOURCES else None
        base = MemoryObject(
            id=plan.store_id,
            object_type=plan.object_type,
            kind=plan.kind,
            status="",
            title=node["title"],
            summary=node.get("text", ""),
            created_at=node.get("created_at", ""),
            memory_source="imported",
            confidence=node.get("confidence"),
            reason=str(provenance["reason"])
            if provenance.get("reason")
            else (self.reason if plan.object_type in GOVERNED else None),
            scope_refs=self._scopes(plan),
            payload=_dict(attrs.get("payload")) if plan.ours else {},
            metadata=self._metadata(plan, declared),
            valid_from=node.get("valid_from"),
            valid_until=node.get("valid_until"),
        )
        if plan.object_type == "source":
            self._source(plan, base)
        elif plan.object_type in GOVERNED:
            self._governed(plan, base, declared)
        else:
            base.status = self._status(plan, "active")
            base.scope_refs = list(node.get("tags", [])) if plan.ours else []
            plan.written = self.patch.create(base)
            self._count(plan.object_type)

    def _source(self, plan: _Plan, obj: MemoryObject) -> None:
        obj.status = self._status(plan, "active")
        obj.scope_refs = []
        obj.reason = None
        obj.confidence = None
        segments = plan.segments or [plan.node]
        rows = []
        for i, seg in enumerate(segments):
            attrs = seg.get("attributes") or {}
            ours = plan.ours and attrs.get("object_type") == "segment"
            seg_id = self.id_map[seg["id"]].partition("#")[2] if plan.segments else "seg-1"
            text = seg.get("text") or seg["title"]
            locator = (
                _dict(attrs.get("locator"))
                if ours
                else (
                    {"kind": "message", "index": i}
                    if obj.kind == "conversation"
                    else {"kind": "node", "node_id": seg["id"]}
                )
            )
            metadata = (
                _dict(attrs.get("metadata"))
                if ours
                else {k: v for k, v in attrs.items() if k in ("role", "name")}
            )
            if obj.kind == "conversation" and not ours:
                metadata.setdefault("role", "user")
            rows.append(
                Segment(
                    source_id=obj.id,
                    id=seg_id,
                    ordinal=_ordinal(seg, i) if ours else i,
                    text=text,
                    locator=locator or {},
                    hash=sha256_text(text),
                    metadata=metadata,
                    created_at=seg.get("created_at") or now_iso(),
                )
            )
        if not plan.ours:
            obj.metadata.update(
                {"uri": f"graph:{self.snapshot_id}/{plan.node['id']}", "segment_count": len(rows)}
            )
        plan.written = self.patch.create(obj)
        self.patch.add_segments(rows)
        self._count("source")
        self._count("segment", len(rows))

    def _governed(self, plan: _Plan, obj: MemoryObject, declared: str | None) -> None:
        attrs = plan.node.get("attributes") or {}
        where = f"nodes[{plan.node['id']}]"
        common: JsonObject = {
            "kind": obj.kind,
            "title": obj.title[:500],
            "summary": obj.summary or obj.title,
            "reason": obj.reason,
            "memory_source": "imported",
            "scope_refs": obj.scope_refs,
            "metadata": obj.metadata,
        }
        obj.summary = obj.summary or obj.title
        if plan.object_type == "knowledge":
            payload = obj.payload
            for key in ("subject", "object"):
                ref = payload.get(key)
                if isinstance(ref, str):
                    payload[key] = self.id_map.get(ref, ref)
            evidence = [
                {**e, "source_id": self._ref(e.get("source_id"))}
                for e in self._refs(attrs.get("evidence_refs"))
                if isinstance(e, dict)
            ] + plan.evidence
            claim = parse(
                schemas.KnowledgeInput,
                {
                    **common,
                    "subject_refs": self._refs(attrs.get("subject_refs", [])),
                    "evidence_refs": evidence,
                    "confidence": obj.confidence,
                    "payload": payload or None,
                },
                where,
            )
            obj.subject_refs = list(dict.fromkeys(claim.subject_refs))
            checked = check_evidence(self.session, claim.evidence_refs)
            # Our own nodes carry their refs exactly as stored (checked all the same): a round trip
            # must not add the hash and locator that the check fills in.
            obj.evidence_refs = evidence if plan.ours else checked
            obj.status = self._status(plan, "candidate" if declared == "agent_inferred" else "active")
            if declared == "agent_inferred" and obj.status == "active" and not plan.ours:
                obj.status = "candidate"
            if self._duplicate_or_conflict(plan, obj):
                return
        else:
            model: type[schemas.ActivityInput] | type[schemas.WorkItemInput] = (
                schemas.ActivityInput if plan.object_type == "activity" else schemas.WorkItemInput
            )
            # only a string can be the id of a stored source
            wanted = [r for r in self._refs(attrs.get("source_refs", [])) if isinstance(r, str)]
            sources = self.session.get_objects(wanted)
            source_refs = [
                s
                for s in self._refs(attrs.get("source_refs", []))
                if s in sources and sources[s].object_type == "source"
            ]
            source_refs = list(dict.fromkeys([*source_refs, *plan.sources]))
            parsed = parse(
                model,
                {
                    **common,
                    "source_refs": source_refs,
                    "related_node_refs": self._refs(attrs.get("related_node_refs", [])),
                },
                where,
            )
            obj.source_refs, obj.related_node_refs = list(parsed.source_refs), list(parsed.related_node_refs)
            obj.status = self._status(plan, "recorded" if plan.object_type == "activity" else "open")
            obj.confidence = None
        plan.written = self.patch.create(obj)
        self._count(plan.object_type)

    def _duplicate_or_conflict(self, plan: _Plan, obj: MemoryObject) -> bool:
        key = claim_key(obj)
        if not key:
            return False
        # Claims written by this same import are not rivals or duplicates of each other: the
        # snapshot is one consistent state (an export held them side by side); only what the
        # namespace held before the import is compared.
        ours = {p.store_id for p in self.plans}
        live = [
            o
            for o in self.session.find_by_claim(key)
            if o.status in LIVE_KNOWLEDGE_STATUSES
            and set(o.scope_refs) & set(obj.scope_refs)
            and o.id not in ours
        ]
        for other in live:
            if claim_value(other) == claim_value(obj) and obj.status in LIVE_KNOWLEDGE_STATUSES:
                self.id_map[plan.node["id"]] = other.id
                self.report["duplicates"].append({"node_id": plan.node["id"], "existing_id": other.id})
                return True
        rivals = [o for o in live if claim_value(o) != claim_value(obj)]
        if rivals and obj.status in LIVE_KNOWLEDGE_STATUSES:
            obj.status = "contested"
            for other in rivals:
                if other.status != "contested":
                    self.patch.set_status(
                        other, "contested", f"conflicts with imported {obj.id}", conflicting_id=obj.id
                    )
            self.report["conflicts"].append(
                {"node_id": plan.node["id"], "object_id": obj.id, "conflicting_ids": [o.id for o in rivals]}
            )
        return False

    def _events(self) -> None:
        edge_ids = {e["id"] for e in self.snapshot.get("edges", [])}
        written = set(self.id_map.values())
        present = {p["object_id"] for p in self.report["already_present"] if "object_id" in p}
        for event in self.snapshot.get("events", []):
            refs = [
                self.id_map.get(r) or self.edge_map.get(r) or (r if r in edge_ids else None)
                for r in event["refs"]
            ]
            objects = [r.partition("#")[0] for r in refs if r and r in written]
            if not objects:
                self._not_imported("events", event["id"], "none of its refs was imported")
                continue
            kept = {**event, "refs": [r for r in refs if r]}
            if objects[0] in present and any(
                e.action == IMPORT_EVENT and e.data.get("event", {}).get("id") == event["id"]
                for e in self.session.list_events(object_id=objects[0], limit=10_000)
            ):
                self.report["already_present"].append({"event_id": event["id"]})
                continue
            self.patch.events.append(
                AuditEvent(
                    new_id("event"), self.patch.id, objects[0], IMPORT_EVENT, now_iso(), {"event": kept}
                )
            )
            self.patch.operations += 1
            self._count("event")


def import_snapshot(
    patch: Patch, snapshot: JsonObject, scope_refs: list[str], reason: str | None
) -> JsonObject:
    """Validate ``snapshot`` and write it through ``patch``. Raises ``ValidationError`` listing
    the diagnostics (and writes nothing) when it is not a valid graph.v1 document."""
    diagnostics = validate(snapshot, "graph")
    if has_errors(diagnostics):
        found = [d.to_dict() for d in diagnostics]
        first = found[0]
        raise ValidationError(
            f"input_data.snapshot is not a valid markitect.memory.graph.v1 document ({len(found)} findings; "
            f"first: [{first['code']}] {first['path']}: {first['message']})",
            details={"diagnostics": found[:200]},
        )
    # No error: validate() passed the snapshot against the graph.v1 schema, so it has its shape.
    return SnapshotImporter(patch, cast(GraphDocument, snapshot), scope_refs, reason).run()

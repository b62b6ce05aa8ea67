"""What each inspector page shows, read through the public ``Memory`` API and read-only sessions.

Every function here only reads: it opens ``store.read`` sessions or calls read modes of
``memory_query`` / ``memory_maintain`` (``structure``, ``report``, ``search``, ``facts``). Page
templates receive plain dicts and lists, never storage objects with methods.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime

from memory_substrate.app import Memory
from memory_substrate.inspector.views import (
    CandidateRow,
    EntityRow,
    EntityView,
    GraphEdge,
    GraphNode,
    HealthCounts,
    HealthReport,
    Neighbourhood,
    ObjectCounts,
    ObjectDetail,
    ObjectRow,
    Overview,
    PatchEvent,
    PatchLog,
    ProcedureRow,
    QueuedJob,
    SearchResults,
    SearchRow,
    SourcesPage,
    SourceView,
    Timeline,
    TimelineRow,
    TraceRow,
    TraceView,
)
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.reader_text import visible
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import parse_time

PAGE_SIZE = 50
MAX_GRAPH_NODES = 150
MAX_RELATIONS_SCANNED = 20_000
HEALTH_ITEMS = 20
RANK_DIMENSIONS = ("relevance", "recency", "stability", "provenance")


def _read(mem: Memory) -> AbstractContextManager[StoreSession]:
    return mem.runtime.read()  # expired (TTL) objects are hidden here as in every other read


def obj_row(obj: MemoryObject) -> ObjectRow:
    return {
        "id": obj.id,
        "object_type": obj.object_type,
        "kind": obj.kind,
        "status": obj.status,
        "title": obj.title,
        "summary": obj.summary,
        "updated_at": obj.updated_at,
        "confidence": obj.confidence,
        "memory_source": obj.memory_source,
    }


def pretty(value: object) -> str:
    """JSON for a <pre> block (the template escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str, sort_keys=True)


def derivation(relation: Relation, default: str) -> str:
    """How the relation was made (its ``relation_schema``'s ``derivation``), else ``default``."""
    schema = relation.payload.get("relation_schema", {})
    found = schema.get("derivation", default) if isinstance(schema, dict) else default
    return found if isinstance(found, str) else default


# --- overview ------------------------------------------------------------------------------
def overview(mem: Memory) -> Overview:
    """Counts, graph-health indicators and the extraction queue. Reads what ``memory_maintain
    structure`` reads except the vector statistics (a scan of every stored vector: over a second
    at 100k segments), and caps the relation scan at ``MAX_RELATIONS_SCANNED``."""
    with _read(mem) as s:
        rows = s.count_objects()
        segments = s.count_segments()
        relations = s.list_relations(limit=MAX_RELATIONS_SCANNED + 1)
        jobs = s.job_counts("extract")
        waiting = s.list_jobs(kind="extract", statuses=["running", "retrying", "failed", "pending"], limit=25)
        titles = s.get_objects([j.target_id for j in waiting])
        patches = s.list_patches(limit=1)
    by_type: dict[str, int] = {}
    by_status: dict[str, dict[str, int]] = {}
    by_kind: dict[str, dict[str, int]] = {}
    for object_type, kind, status, n in rows:
        by_type[object_type] = by_type.get(object_type, 0) + n
        by_status.setdefault(object_type, {})[status] = by_status.get(object_type, {}).get(status, 0) + n
        by_kind.setdefault(object_type, {})[kind] = by_kind.get(object_type, {}).get(kind, 0) + n
    derivations: dict[str, int] = {}
    for r in relations[:MAX_RELATIONS_SCANNED]:
        d = derivation(r, "unknown")
        derivations[d] = derivations.get(d, 0) + 1
    knowledge_status = by_status.get("knowledge", {})
    counts: ObjectCounts = {
        "objects": sum(by_type.values()),
        "by_object_type": by_type,
        "by_status": by_status,
        "segments": segments,
        "relations": min(len(relations), MAX_RELATIONS_SCANNED),
        "relations_capped": len(relations) > MAX_RELATIONS_SCANNED,
    }
    health: HealthCounts = {
        "relations_by_derivation": derivations,
        "stub_nodes": by_kind.get("node", {}).get("stub", 0),
        "contested": knowledge_status.get("contested", 0),
        "candidates": knowledge_status.get("candidate", 0),
        "superseded": knowledge_status.get("superseded", 0),
    }
    queue: list[QueuedJob] = [
        {
            "episode_id": j.target_id,
            "title": titles[j.target_id].title if j.target_id in titles else "(missing source)",
            "status": j.status,
            "attempts": j.attempts,
            "updated_at": j.updated_at,
            "error": j.error,
        }
        for j in waiting
    ]
    store = mem.store
    return {
        "storage": {
            "backend": store.backend,
            "location": store.location,
            "schema_version": store.schema_version(),
        },
        "counts": counts,
        "entities_by_type": by_kind.get("entity", {}),
        "knowledge_by_kind": by_kind.get("knowledge", {}),
        "health": health,
        "jobs": {k: jobs.get(k, 0) for k in ("pending", "running", "retrying", "failed", "done")},
        "queue": queue,
        "last_patch_at": patches[0].created_at if patches else None,
    }


def health_report(mem: Memory) -> HealthReport:
    """The ``graph_health`` section of ``memory_maintain`` mode ``report`` (max_items 20), computed
    on its own: the page shows nothing else, and the other sections made it the slowest page."""
    from memory_substrate.maintain.health_section import graph_health_section

    return {"graph_health": graph_health_section(mem.runtime, HEALTH_ITEMS)}


# --- search --------------------------------------------------------------------------------
def search(mem: Memory, query: str, unit: str) -> SearchResults:
    """Search results in one shape for both units: an object result shows its best matched
    chunk; a segment result is that chunk."""
    result = mem.query(
        "search", {"query": query}, {"max_items": 20, "result_unit": unit, "detail": "full"}
    )  # scores shown
    items: list[SearchRow] = []
    for it in result.get("items", []):
        chunk = (it.get("matched_chunks") or [None])[0] or it
        items.append(
            {
                "link_id": it.get("id") or it.get("source_id"),
                "object_type": it.get("object_type", "segment"),
                "kind": it.get("kind", ""),
                "status": it.get("status", ""),
                "title": it.get("title") or it.get("excerpt", ""),
                "excerpt": chunk.get("excerpt"),
                "locator": chunk.get("locator"),
                "retrieval_sources": it.get("retrieval_sources", []),
                "retrieval_ranks": it.get("retrieval_ranks", {}),
                "rank_score": it.get("rank_score"),
                "lexical_score": it.get("lexical_score"),
                "semantic_score": it.get("semantic_score"),
            }
        )
    return {"items": items, "count": len(items)}


# --- entities and facts ----------------------------------------------------------------------
def entities(mem: Memory, entity_type: str | None, name: str | None) -> list[EntityRow]:
    if name:
        found = mem.query(
            "entities",
            {"name": name, **({"type": entity_type} if entity_type else {})},
            {"max_items": PAGE_SIZE, "max_facts": 0},
        )
        return [
            {
                "id": e["id"],
                "title": e["name"],
                "kind": e["type"],
                "status": e["status"],
                "mentions": e.get("mentions", 0),
                "aliases": e.get("aliases", []),
            }
            for e in found["items"]
        ]
    with _read(mem) as s:
        objs = s.list_objects(
            object_types=["entity"], kinds=[entity_type] if entity_type else None, limit=PAGE_SIZE * 2
        )
    return [
        {
            "id": o.id,
            "title": o.title,
            "kind": o.kind,
            "status": o.status,
            "mentions": o.metadata.get("mentions", 0),
            "aliases": o.payload.get("aliases") or [],
        }
        for o in objs
    ]


def _iso(ts: object) -> float | None:
    if not ts or not isinstance(ts, str):
        return None
    try:
        return parse_time(ts).timestamp()
    except (ValueError, TypeError):
        return None


def entity(mem: Memory, entity_id: str) -> EntityView | None:
    with _read(mem) as s:
        obj = s.get_object(entity_id)
    if obj is None or obj.object_type != "entity":
        return None
    facts: list[JsonObject] = []
    seen: set[str] = set()
    for role in ("subject", "object"):
        res = mem.query("facts", {role: entity_id, "include_superseded": True}, {"max_items": 500})
        for f in res["items"]:
            if f["id"] not in seen:
                seen.add(f["id"])
                facts.append({**f, "role": role})
    return {
        "entity": {**obj_row(obj), "aliases": obj.payload.get("aliases") or [], "metadata": obj.metadata},
        "timeline": timeline(facts),
        "facts": facts,
    }


def _ref_name(ref: object) -> object:
    """A fact's subject or object entity said by its name, else its id."""
    return (ref.get("name") or ref.get("id")) if isinstance(ref, dict) else None


def timeline(facts: list[JsonObject]) -> Timeline:
    """Facts laid out on one time axis: each a bar from valid_from to valid_until (or now), in
    rows grouped by predicate so a superseded value sits just above the one that replaced it."""
    now = datetime.now(UTC).timestamp()
    spans = []
    for f in facts:
        start = _iso(f.get("valid_from")) or now
        end = _iso(f.get("valid_until")) or now
        spans.append((f, start, max(end, start)))
    if not spans:
        return {"rows": [], "start": None, "end": None}
    lo = min(s for _, s, _ in spans)
    hi = max(max(e for _, _, e in spans), now)
    width = max(hi - lo, 1.0)
    rows: list[TimelineRow] = []
    spans.sort(key=lambda t: (str(t[0].get("predicate")), t[1]))
    for f, start, end in spans:
        target = _ref_name(f.get("object")) or f.get("value")
        rows.append(
            {
                "fact": f,
                "label": f"{_ref_name(f['subject'])} {f.get('predicate')} {target}",
                "left": round((start - lo) / width * 100, 2),
                "width": max(round((end - start) / width * 100, 2), 0.8),
                "open": not f.get("valid_until"),
                "superseded": f.get("status") == "superseded",
            }
        )
    return {"rows": rows, "start": _fmt(lo), "end": _fmt(hi)}


def _fmt(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


# --- neighbourhood graph ------------------------------------------------------------------------
def default_focus(mem: Memory) -> str | None:
    with _read(mem) as s:
        ents = s.list_objects(object_types=["entity"], limit=1)
        if ents:
            return ents[0].id
        objs = s.list_objects(limit=1)
    return objs[0].id if objs else None


def exists(mem: Memory, object_id: str) -> bool:
    with _read(mem) as s:
        return s.get_object(object_id) is not None


def neighbourhood(mem: Memory, focus: str, depth: int = 1) -> Neighbourhood:
    """Nodes and edges within ``depth`` hops of ``focus`` (capped), for cytoscape; labels show
    their invisible controls, as the templates do (cytoscape draws them outside the page's text)."""
    from memory_substrate.derived.access import graph_reader

    depth = max(1, min(depth, 2))
    with _read(mem) as s:
        hood = graph_reader(mem.runtime, s).neighbourhood([focus], depth=depth, max_nodes=MAX_GRAPH_NODES)
        nodes = set(hood.depth_of)
        objs = s.get_objects(sorted(nodes))
    out_nodes: list[GraphNode] = []
    for nid in sorted(nodes):
        o = objs.get(nid)
        out_nodes.append(
            {
                "data": {
                    "id": nid,
                    "label": visible((o.title if o else nid)[:60]),
                    "type": o.object_type if o else "missing",
                    "kind": o.kind if o else "",
                    "status": o.status if o else "",
                    "focus": nid == focus,
                }
            }
        )
    out_edges: list[GraphEdge] = [
        {
            "data": {
                "id": r.id,
                "source": r.source_id,
                "target": r.target_id,
                "label": visible(r.rel_type),
                "derivation": derivation(r, ""),
            }
        }
        for r in hood.edges
    ]
    return {"focus": focus, "nodes": out_nodes, "edges": out_edges, "truncated": hood.truncated}


# --- objects, sources, log -------------------------------------------------------------------------
def object_detail(mem: Memory, object_id: str) -> ObjectDetail | None:
    with _read(mem) as s:
        obj = s.get_object(object_id)
        if obj is None:
            return None
        rels = s.relations_of([object_id], limit=200)
        events = s.list_events(object_id=object_id, limit=50)
    return {
        "object": obj_row(obj),
        "json": pretty(obj.to_dict()),
        "relations": [
            {
                "rel_type": r.rel_type,
                "source_id": r.source_id,
                "target_id": r.target_id,
                "derivation": derivation(r, ""),
            }
            for r in rels
        ],
        "events": [
            {
                "id": e.id,
                "action": e.action,
                "patch_id": e.patch_id,
                "created_at": e.created_at,
                "data": pretty(e.data),
            }
            for e in events
        ],
    }


def sources(mem: Memory, page: int) -> SourcesPage:
    with _read(mem) as s:
        objs = s.list_objects(object_types=["source"], limit=PAGE_SIZE + 1, offset=page * PAGE_SIZE)
    return {
        "rows": [
            {**obj_row(o), "segment_count": o.metadata.get("segment_count"), "uri": o.metadata.get("uri")}
            for o in objs[:PAGE_SIZE]
        ],
        "page": page,
        "has_next": len(objs) > PAGE_SIZE,
    }


def source(mem: Memory, source_id: str, page: int) -> SourceView | None:
    with _read(mem) as s:
        obj = s.get_object(source_id)
        if obj is None or obj.object_type != "source":
            return None
        segs = s.get_segments(source_id, limit=PAGE_SIZE + 1, offset=page * PAGE_SIZE)
        total = s.count_segments(source_id)
    return {
        "source": {
            **obj_row(obj),
            "uri": obj.metadata.get("uri"),
            "payload": pretty(obj.payload),
            "frontmatter": obj.payload.get("frontmatter"),
        },
        "segments": [
            {
                "id": g.id,
                "ordinal": g.ordinal,
                "text": g.text,
                "locator": g.locator,
                "locator_json": json.dumps(g.locator, ensure_ascii=False),
                "metadata": g.metadata,
            }
            for g in segs[:PAGE_SIZE]
        ],
        "total": total,
        "page": page,
        "has_next": len(segs) > PAGE_SIZE,
    }


def log(mem: Memory, limit: int = 50) -> PatchLog:
    with _read(mem) as s:
        patches = s.list_patches(limit=limit)
        events = s.list_events(limit=limit * 4)
    by_patch: dict[str, list[PatchEvent]] = {}
    for e in events:
        by_patch.setdefault(e.patch_id, []).append(
            {
                "id": e.id,
                "action": e.action,
                "object_id": e.object_id,
                "created_at": e.created_at,
                "data": pretty(e.data),
            }
        )
    return {
        "patches": [
            {
                "id": p.id,
                "tool": p.tool,
                "mode": p.mode,
                "reason": p.reason,
                "created_at": p.created_at,
                "operations": p.operations,
                "events": by_patch.get(p.id, []),
            }
            for p in patches
        ],
    }


# --- traces and procedures ---------------------------------------------------------------------
def _dims(candidate: Mapping[str, object]) -> dict[str, float]:
    """The four ranking dimensions of one compile candidate, wherever the trace keeps them."""
    for holder in (
        candidate.get("dimensions"),
        candidate.get("scores"),
        candidate.get("components"),
        candidate,
    ):
        if isinstance(holder, dict):
            found = {d: float(holder[d]) for d in RANK_DIMENSIONS if isinstance(holder.get(d), int | float)}
            if found:
                return found
    return {}


def _candidates(data: Mapping[str, object]) -> list[JsonObject]:
    """The candidate entries of a compile trace. The compiler stores ``candidates`` as
    ``{found, selected_count, rejected_count, rejected_by_reason, selected: [...], rejected: [...]}``
    (compiler/trace.py); flat lists (``candidates``, ``ranked``, ``selected``/``dropped``) are read too."""
    value = data.get("candidates")
    out: list[JsonObject] = []
    if isinstance(value, dict):
        for key in ("selected", "rejected"):
            group = value.get(key)
            if isinstance(group, list):
                out.extend({**c, "_group": key} for c in group if isinstance(c, dict))
        return out
    for key in ("candidates", "ranked", "items", "scored"):
        value = data.get(key)
        if isinstance(value, list) and value and all(isinstance(c, dict) for c in value):
            return value
    for key in ("selected", "dropped", "excluded"):
        value = data.get(key)
        if isinstance(value, list):
            out.extend({**c, "_group": key} for c in value if isinstance(c, dict))
    return out


def candidate_count(data: Mapping[str, object]) -> int:
    """How many candidates the compile considered: ``candidates.found`` when the trace has it (the
    stored lists keep at most 200 rejected ones), else the entries listed."""
    value = data.get("candidates")
    if isinstance(value, dict):
        found = value.get("found")
        if isinstance(found, int):
            return found
        counts = [value.get("selected_count"), value.get("rejected_count")]
        if all(isinstance(n, int) for n in counts):
            return sum(n for n in counts if isinstance(n, int))
    return len(_candidates(data))


def compile_candidates(
    data: Mapping[str, object], titles: dict[str, str] | None = None
) -> list[CandidateRow]:
    rows: list[CandidateRow] = []
    for c in _candidates(data):
        dims = _dims(c)
        score = c.get("score", c.get("final_score", c.get("total")))
        cid = str(c.get("id") or c.get("object_id") or c.get("ref") or "")
        strategies = c.get("strategies")  # a list of names, as the compiler records them
        rows.append(
            {
                "id": cid,
                "title": c.get("title") or c.get("text") or (titles or {}).get(cid) or "",
                "dims": dims,
                "score": score if isinstance(score, int | float) else None,
                "selected": c.get("selected", c.get("_group") == "selected" if "_group" in c else None),
                "reason": c.get("reason") or "",
                "strategies": ", ".join(str(x) for x in (strategies if isinstance(strategies, list) else [])),
            }
        )
    return rows


def traces(mem: Memory, kind: str) -> list[TraceRow]:
    with _read(mem) as s:
        found = s.list_traces(kind=kind, limit=PAGE_SIZE)
    return [
        {
            "id": t.id,
            "kind": t.kind,
            "subject_id": t.subject_id,
            "created_at": t.created_at,
            "task": t.data.get("task") or t.data.get("query") or t.data.get("episode_id") or "",
            "candidates": candidate_count(t.data),
        }
        for t in found
    ]


def trace(mem: Memory, trace_id: str) -> TraceView | None:
    with _read(mem) as s:
        t = s.get_trace(trace_id)
        if t is None:
            return None
        # Candidate ids are object ids, or "src:...#seg-N" for a captured turn: title from the object.
        ids = sorted({str(c.get("id") or "").partition("#")[0] for c in _candidates(t.data)} - {""})
        objs = s.get_objects(ids) if ids else {}
    titles: dict[str, str] = {}
    for c in _candidates(t.data):
        cid = str(c.get("id") or "")
        obj = objs.get(cid.partition("#")[0])
        if obj is not None:
            titles[cid] = obj.title + (f" ({cid.partition('#')[2]})" if "#" in cid else "")
    return {
        "trace": {
            "id": t.id,
            "kind": t.kind,
            "subject_id": t.subject_id,
            "created_at": t.created_at,
            "task": t.data.get("task") or t.data.get("query") or "",
            "found": candidate_count(t.data),
        },
        "candidates": compile_candidates(t.data, titles),
        "dimensions": RANK_DIMENSIONS,
        "json": pretty(t.data),
    }


def procedures(mem: Memory) -> list[ProcedureRow]:
    with _read(mem) as s:
        objs = s.list_objects(object_types=["knowledge"], kinds=["procedure"], limit=PAGE_SIZE * 2)
    return [
        {
            **obj_row(o),
            "procedure_kind": o.payload.get("procedure_kind", ""),
            "text": o.payload.get("text", o.summary),
            "observation_count": o.payload.get("observation_count", 0),
            "source_episodes": o.payload.get("source_episodes") or [],
        }
        for o in objs
    ]

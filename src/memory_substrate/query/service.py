"""memory_query: search, page, expand, recent, graph, context."""

from __future__ import annotations

from typing import Any

from memory_substrate.contracts.inputs import PackageInput, PackageOptions
from memory_substrate.derived.access import graph_reader
from memory_substrate.errors import NotFoundError, UnsupportedModeError
from memory_substrate.models import MemoryObject
from memory_substrate.query import graph_modes as G
from memory_substrate.query import schemas as Q
from memory_substrate.query.context import build_context
from memory_substrate.query.search import SearchEngine, object_matches
from memory_substrate.query.views import compact, compact_source_payload, full, segment_view
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.validation import Strict, parse

MODES = ("context", "expand", "page", "recent", "search", "graph", "entities", "facts", "trace", "package")
FULL_SEGMENT_CAP = 2000
MODE_MODELS: dict[str, tuple[type[Strict], type[Strict]]] = {**Q.MODE_MODELS, "package": (PackageInput, PackageOptions)}  # package: spec 003, contracts/


def _get(session: StoreSession, object_id: str) -> MemoryObject:
    obj = session.get_object(object_id)
    if obj is None:
        raise NotFoundError(f"object {object_id} not found", details={"id": object_id})
    return obj


def _relation_view(rel: Any) -> dict[str, Any]:
    schema = rel.payload.get("relation_schema", {})
    return {
        "id": rel.id,
        "rel_type": rel.rel_type,
        "source_id": rel.source_id,
        "target_id": rel.target_id,
        "derivation": schema.get("derivation"),
        "relation_schema": schema,
    }


class QueryService:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.engine = SearchEngine(runtime)

    def run(self, mode: str, input_data: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
        if mode not in MODES:
            raise UnsupportedModeError(f"unsupported memory_query mode {mode!r}; allowed: {', '.join(MODES)}")
        in_model, opt_model = MODE_MODELS[mode]
        data = parse(in_model, input_data, "input_data")
        opts = parse(opt_model, options or {}, "options")
        handler = getattr(self, f"_{mode}")
        result: dict[str, Any] = handler(data, opts)
        result.setdefault("mode", mode)
        return result

    def _package(self, data: PackageInput, opts: PackageOptions) -> dict[str, Any]:
        from memory_substrate.contracts.store_package import store_package  # loads the schema validators

        return store_package(self.rt, data, opts)

    def _search(self, data: Q.SearchInput, opts: Q.SearchOptions) -> dict[str, Any]:
        return self.engine.search(data, opts)

    def _entities(self, data: G.EntitiesInput, opts: G.EntitiesOptions) -> dict[str, Any]:
        with self.rt.read() as session:
            return G.entities_mode(session, data, opts)

    def _facts(self, data: G.FactsInput, opts: G.FactsOptions) -> dict[str, Any]:
        with self.rt.read() as session:
            return G.facts_mode(session, data, opts)

    def _trace(self, data: G.TraceInput, opts: G.TraceOptions) -> dict[str, Any]:
        with self.rt.read() as session:
            return G.trace_mode(session, data)

    def _context(self, data: Q.ContextInput, opts: Q.ContextOptions) -> dict[str, Any]:
        return build_context(self.rt, data, opts)

    def _recent(self, data: Q.RecentInput, opts: Q.RecentOptions) -> dict[str, Any]:
        filters = opts.filters.merged()
        with self.rt.read() as session:
            needs_scan = any(k in filters for k in ("node_ids", "source_ids"))
            objs = session.list_objects(
                object_types=filters.get("object_types"),
                kinds=filters.get("kinds"),
                statuses=filters.get("statuses"),
                limit=opts.max_items * (10 if needs_scan else 1),
            )
            objs = [o for o in objs if object_matches(session, o, filters)][: opts.max_items]
        items = [compact(o) for o in objs]
        return {"result_type": "recent_result", "items": items, "count": len(items), "applied_filters": filters}

    def _page(self, data: Q.IdInput, opts: Q.PageOptions) -> dict[str, Any]:
        with self.rt.read() as session:
            obj = _get(session, data.id)
            if opts.detail == "full":
                if obj.object_type == "source" and obj.kind == "repo":
                    return {
                        "result_type": "page_unavailable",
                        "status": "unsupported",
                        "id": obj.id,
                        "reason": "repo sources are maps; read full code and documents from local files by locator",
                        "next_actions": ["use_compact_page_locators", "read_local_files"],
                    }
                page: dict[str, Any] = {"result_type": "page_result", "detail": "full", "object": full(obj)}
                if obj.object_type == "source":
                    segs = session.get_segments(obj.id, limit=FULL_SEGMENT_CAP)
                    page["segments"] = [segment_view(s, snippet_chars=0, full_text=True) for s in segs]
                    page["segments_truncated"] = session.count_segments(obj.id) > len(segs)
                return page
            view = compact(obj, summary_chars=max(opts.snippet_chars, 240))
            if obj.object_type == "source":
                view["payload"] = compact_source_payload(obj, opts.max_items, opts.snippet_chars)
                view["metadata"] = {k: obj.metadata[k] for k in ("adapter", "freshness", "uri") if k in obj.metadata}
                if opts.include_segments:
                    segs = session.get_segments(obj.id, limit=opts.max_items)
                    view["segments"] = [segment_view(s, snippet_chars=opts.snippet_chars) for s in segs]
            else:
                for key in ("evidence_refs", "subject_refs", "source_refs", "related_node_refs", "payload", "reason"):
                    value = getattr(obj, key)
                    if value:
                        view[key] = value[: opts.max_items] if isinstance(value, list) else value
            return {"result_type": "page_result", "detail": "compact", "object": view}

    def _expand(self, data: Q.IdInput, opts: Q.ExpandOptions) -> dict[str, Any]:
        with self.rt.read() as session:
            obj = _get(session, data.id)
            rels = graph_reader(self.rt, session).relations_of([obj.id], limit=opts.max_items * 5)
            neighbour_ids = [r.target_id if r.source_id == obj.id else r.source_id for r in rels]
            neighbours = session.get_objects(neighbour_ids)
            related: list[dict[str, Any]] = []
            for rel, nid in zip(rels, neighbour_ids, strict=True):
                if len(related) >= opts.max_items:
                    break
                n = neighbours.get(nid)
                related.append(
                    {
                        "relation": _relation_view(rel),
                        "direction": "out" if rel.source_id == obj.id else "in",
                        "object": compact(n) if n else {"id": nid, "missing": True},
                    }
                )
            result: dict[str, Any] = {"result_type": "expand_result", "object": compact(obj), "related": related}
            if opts.include_segments:
                if obj.object_type == "source":
                    segs = session.get_segments(obj.id, limit=opts.max_items)
                    result["segments"] = [segment_view(s, snippet_chars=opts.snippet_chars) for s in segs]
                elif obj.evidence_refs:
                    keys = [(e["source_id"], e["segment_id"]) for e in obj.evidence_refs if e.get("segment_id")]
                    segs = session.get_segments_by_keys(keys[: opts.max_items])
                    result["evidence"] = [segment_view(s, snippet_chars=opts.snippet_chars) for s in segs]
            result["history"] = [
                {"event_id": e.id, "patch_id": e.patch_id, "action": e.action, "created_at": e.created_at}
                for e in session.list_events(object_id=obj.id, limit=5)
            ]
        return result

    def _graph(self, data: Q.IdInput, opts: Q.GraphOptions) -> dict[str, Any]:
        with self.rt.read() as session:
            root = _get(session, data.id)
            # The configured graph backend walks the graph (derived/base.py states the rules).
            hood = graph_reader(self.rt, session).neighbourhood([root.id], depth=opts.depth, max_nodes=opts.max_items)
            seen, truncated = hood.depth_of, hood.truncated
            edges = {rel.id: _relation_view(rel) for rel in hood.edges}
            objs = session.get_objects(list(seen))
        nodes = []
        for nid, depth in seen.items():
            obj = objs.get(nid)
            view = compact(obj) if obj else {"id": nid, "missing": True}
            view["depth"] = depth
            nodes.append(view)
        return {
            "result_type": "graph_result",
            "root_id": root.id,
            "nodes": nodes,
            "edges": list(edges.values()),
            "counts": {"nodes": len(nodes), "edges": len(edges)},
            "truncated": truncated,
        }

"""memory_query: search, page, expand, recent, graph, context."""

from __future__ import annotations

from memory_substrate.answers.shaping import (
    RESPONSE_TOKENS,
    Cursor,
    Detail,
    common_cut,
    fit_list,
    listed,
    listed_objects,
    paginate,
    say_shortfall,
    shape,
    take_within,
)
from memory_substrate.answers.views import (
    compact,
    compact_source_payload,
    compact_view,
    full,
    segment_view_typed,
    work_history,
)
from memory_substrate.compiler.inputs import ContextInput, ContextOptions
from memory_substrate.compiler.results import ContextAnswer, ContextResult
from memory_substrate.contracts.inputs import PackageInput, PackageOptions
from memory_substrate.derived.access import graph_reader
from memory_substrate.embed.foreground import foreground
from memory_substrate.errors import NotFoundError
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, Relation, Segment
from memory_substrate.query import graph_modes
from memory_substrate.query.compact_search import (
    CITE,
    compact_object,
    date_of,
    fit_count,
    group_segments,
    segment_line,
)
from memory_substrate.query.inputs import (
    ExpandOptions,
    GraphOptions,
    IdInput,
    PageOptions,
    RecentInput,
    RecentOptions,
)
from memory_substrate.query.modes import MODES_DECLARED
from memory_substrate.query.results import (
    CompactPage,
    EntitiesResult,
    EventRef,
    ExpandResult,
    ExpandSegmentResult,
    FactsResult,
    FullPage,
    GraphResult,
    PageContents,
    PageField,
    PageObject,
    PageTail,
    PageUnavailable,
    RecentResult,
    Related,
    RelationView,
    SegmentPage,
    TraceResult,
)
from memory_substrate.runtime import Runtime
from memory_substrate.search.engine import SearchEngine, object_matches
from memory_substrate.search.inputs import SearchInput, SearchOptions
from memory_substrate.storage.base import StoreSession
from memory_substrate.validation import mode_of, parse

MODES = tuple(m.name for m in MODES_DECLARED)
FULL_SEGMENT_CAP = 2000
UNPRUNED = ("package",)  # a ContextPackage is a contract document: its nulls are part of its schema
PAGED_LISTS = {"search": "items", "recent": "items"}  # the list a mode's cursor pages
EXPAND_LIST_TOKENS = 550  # compact expand: each list's share of the response budget
GRAPH_NODE_TOKENS = 800  # compact graph: the nodes' share; edges among them take the rest
LIST_SUMMARY_CHARS = 160  # summaries in compact lists; page shows the longer one
PAGE_LIST_TOKENS = 160  # compact source page: each index list's share of the response budget
PAGE_FIELDS: tuple[PageField, ...] = (
    "evidence_refs",
    "subject_refs",
    "source_refs",
    "related_node_refs",
    "payload",
    "reason",
)


def _get(session: StoreSession, object_id: str) -> MemoryObject:
    obj = session.get_object(object_id)
    if obj is None:
        raise NotFoundError(f"object {object_id} not found", details={"id": object_id})
    return obj


def _segment_of(session: StoreSession, ref: str) -> tuple[MemoryObject, Segment] | None:
    """``SOURCE_ID#seg-N`` (the id of a search line or a cited turn): its source and segment."""
    source_id, sep, segment_id = ref.partition("#")
    if not sep:
        return None
    source = session.get_object(source_id)
    segs = session.get_segments(source.id, segment_ids=[segment_id]) if source is not None else []
    if source is None or not segs:  # the error names the id as the caller sent it, nothing more
        raise NotFoundError(f"segment {ref} not found", details={"id": ref})
    return source, segs[0]


def _relation_view(rel: Relation) -> RelationView:
    schema = rel.payload.get("relation_schema", {})
    return {
        "id": rel.id,
        "rel_type": rel.rel_type,
        "source_id": rel.source_id,
        "target_id": rel.target_id,
        "derivation": schema.get("derivation") if isinstance(schema, dict) else None,  # a dict where set
        "relation_schema": schema,
    }


def _without_schema(rel: RelationView) -> RelationView:
    """The relation without its schema: its derivation is kept; ``detail: "full"`` has the rest."""
    return {
        "id": rel["id"],
        "rel_type": rel["rel_type"],
        "source_id": rel["source_id"],
        "target_id": rel["target_id"],
        "derivation": rel["derivation"],
    }


class QueryService:
    """Mode ``context`` is the context compiler's (``compiler/``): this service hands it the
    validated request and returns its answer as it comes."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.engine = SearchEngine(runtime)

    def run(self, mode: str, input_data: JsonObject, options: JsonObject | None = None) -> JsonObject:
        # Background embedding waits while a read is in flight (embed.foreground).
        with foreground():
            return self._run(mode, input_data, options)

    def _run(self, mode: str, input_data: JsonObject, options: JsonObject | None) -> JsonObject:
        declared = mode_of(MODES_DECLARED, mode)
        data = parse(declared.input_model, input_data, "input_data")
        opts = parse(declared.options_model, options or {}, "options")
        handler = getattr(self, declared.handler)
        fingerprint = Cursor.fingerprint_of(mode, data.model_dump(), opts.model_dump())
        offset = Cursor.decode(getattr(opts, "cursor", None), fingerprint)
        # Each handler returns its mode's answer (query/results.py); from here on it is shaped by key.
        result: JsonObject = handler(data, opts, (offset, fingerprint))
        result.setdefault("mode", mode)
        detail: Detail = getattr(opts, "detail", "compact")
        if mode not in UNPRUNED:
            result = shape(result, detail)
        if mode in PAGED_LISTS:
            key = PAGED_LISTS[mode]
            explicit = "max_items" in opts.model_fields_set
            requested = int(opts.model_dump()["max_items"])
            if mode == "search" and detail == "compact":
                return self._compact_search(result, requested, explicit, (offset, fingerprint))
            if detail == "compact" and not explicit:
                # A default page: whatever does not fit the response budget moves to the next page.
                # A number the caller chose is honoured whatever it costs.
                fit_list(result, key, offset=offset, fingerprint=fingerprint)
            say_shortfall(result, key, requested)
        return result

    def _compact_search(
        self, result: JsonObject, requested: int, explicit: bool, paging: tuple[int, str]
    ) -> JsonObject:
        """The compact search shape (query/compact_search.py), cut to the budget on default pages."""
        offset, fingerprint = paging
        if result.get("result_unit") != "segment":
            objects = [compact_object(i) for i in listed_objects(result, "items")]
            result["items"] = objects
            if any("lines" in i for i in objects):
                result["cite"] = CITE
            if not explicit:
                fit_list(result, "items", offset=offset, fingerprint=fingerprint)
            return say_shortfall(result, "items", requested)
        items = listed_objects(result, "items")
        with self.rt.read() as session:
            heads = session.get_object_heads(list(dict.fromkeys(str(i["source_id"]) for i in items)))

        def render(n: int) -> JsonObject:
            out: JsonObject = {}
            for k, v in result.items():
                if k == "items":
                    out["cite"] = CITE
                    out["sources"] = group_segments(items[:n], heads)
                else:
                    out[k] = n if k == "count" else v
            return out

        n = len(items) if explicit or not items else fit_count(render, len(items), RESPONSE_TOKENS)
        if n < len(items):
            result["next_cursor"] = Cursor(offset + n, fingerprint).encode()
        shaped = render(n)
        return say_shortfall(shaped, "items", requested, returned=n)

    def _package(self, data: PackageInput, opts: PackageOptions, paging: tuple[int, str]) -> JsonObject:
        from memory_substrate.contracts.store_package import store_package  # loads the schema validators

        return store_package(self.rt, data, opts)

    def _search(self, data: SearchInput, opts: SearchOptions, paging: tuple[int, str]) -> JsonObject:
        offset, fingerprint = paging
        result: JsonObject = self.engine.search(data, opts, limit=offset + opts.max_items + 1)
        page, next_cursor = paginate(listed(result, "items"), offset, opts.max_items, fingerprint)
        result["items"], result["next_cursor"] = page, next_cursor
        result["count"] = len(page)
        return result

    def _entities(
        self, data: graph_modes.EntitiesInput, opts: graph_modes.EntitiesOptions, paging: tuple[int, str]
    ) -> EntitiesResult:
        with self.rt.read() as session:
            return graph_modes.entities_mode(session, data, opts)

    def _facts(
        self, data: graph_modes.FactsInput, opts: graph_modes.FactsOptions, paging: tuple[int, str]
    ) -> FactsResult:
        with self.rt.read() as session:
            return graph_modes.facts_mode(session, data, opts)

    def _trace(
        self, data: graph_modes.TraceInput, opts: graph_modes.TraceOptions, paging: tuple[int, str]
    ) -> TraceResult:
        if "#" not in data.id:
            with self.rt.read() as session:
                return graph_modes.trace_mode(session, data)
        # SOURCE_ID#seg-N: its episode's trace; an error names the id as the caller sent it.
        try:
            with self.rt.read() as session:
                return graph_modes.trace_mode(
                    session, data.model_copy(update={"id": data.id.partition("#")[0]})
                )
        except NotFoundError:
            raise NotFoundError(f"trace {data.id} not found", details={"id": data.id}) from None

    def _context(
        self, data: ContextInput, opts: ContextOptions, paging: tuple[int, str]
    ) -> ContextAnswer | ContextResult:
        # Imported here: a process that never compiles (a hook that only captures) never loads it.
        from memory_substrate.compiler import compile_context

        return compile_context(self.rt, data, opts)

    def _recent(self, data: RecentInput, opts: RecentOptions, paging: tuple[int, str]) -> RecentResult:
        offset, fingerprint = paging
        filters = opts.filters.merged()
        want = offset + opts.max_items + 1
        with self.rt.read() as session:

            def listing(limit: int, offset: int = 0) -> list[MemoryObject]:
                return session.list_objects(
                    object_types=filters.get("object_types"),
                    kinds=filters.get("kinds"),
                    statuses=filters.get("statuses"),
                    limit=limit,
                    offset=offset,
                )

            if not any(k in filters for k in ("node_ids", "source_ids")):
                objs = listing(want)
            else:
                # Reference filters are checked in Python: walk the whole history, newest first,
                # in batches, until enough objects match (older matches are not cut off).
                objs, scanned, batch = [], 0, max(200, want * 4)
                while len(objs) < want:
                    rows = listing(batch, scanned)
                    objs.extend(o for o in rows if object_matches(session, o, filters))
                    scanned += len(rows)
                    if len(rows) < batch:
                        break
        page, next_cursor = paginate(objs, offset, opts.max_items, fingerprint)
        items = [
            compact_view(o, summary_chars=LIST_SUMMARY_CHARS if opts.detail == "compact" else 240)
            for o in page
        ]
        return {
            "result_type": "recent_result",
            "items": items,
            "count": len(items),
            "next_cursor": next_cursor,
            "applied_filters": filters,
        }

    def _page(
        self, data: IdInput, opts: PageOptions, paging: tuple[int, str]
    ) -> SegmentPage | PageUnavailable | FullPage | CompactPage:
        with self.rt.read() as session:
            hit = _segment_of(session, data.id)
            if hit is not None:  # one segment, whole, with its source named
                source, seg = hit
                segment = segment_view_typed(seg, snippet_chars=0, full_text=True)
                if opts.detail == "compact":
                    segment.pop("hash", None)
                return {
                    "result_type": "page_result",
                    "detail": opts.detail,
                    "id": data.id,
                    "source": {"id": source.id, "kind": source.kind, "title": source.title},
                    "segment": segment,
                }
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
                page: FullPage = {"result_type": "page_result", "detail": "full", "object": full(obj)}
                if obj.object_type == "work_item":
                    page["history"] = work_history(session, obj)
                if obj.object_type == "source":
                    segs = session.get_segments(obj.id, limit=FULL_SEGMENT_CAP)
                    page["segments"] = [segment_view_typed(s, snippet_chars=0, full_text=True) for s in segs]
                    page["segments_truncated"] = session.count_segments(obj.id) > len(segs)
                return page
            return _compact_page(session, obj, opts, paging)

    def _expand(
        self, data: IdInput, opts: ExpandOptions, paging: tuple[int, str]
    ) -> ExpandResult | ExpandSegmentResult:
        """One object with its relations and evidence; ``next_cursor`` moves every list one page on."""
        offset, fingerprint = paging
        end = offset + opts.max_items
        summary_chars = LIST_SUMMARY_CHARS if opts.detail == "compact" else 240
        more = False
        with self.rt.read() as session:
            hit = _segment_of(session, data.id)
            if hit is not None:
                return self._expand_segment(session, data.id, *hit, opts, paging)
            obj = _get(session, data.id)
            rels = graph_reader(self.rt, session).relations_of([obj.id], limit=end + 1)
            more |= len(rels) > end
            rels = rels[offset:end]
            neighbour_ids = [r.target_id if r.source_id == obj.id else r.source_id for r in rels]
            neighbours = session.get_objects(neighbour_ids)
            related: list[Related] = []
            for rel, nid in zip(rels, neighbour_ids, strict=True):
                n = neighbours.get(nid)
                related.append(
                    {
                        "relation": _relation_view(rel),
                        "direction": "out" if rel.source_id == obj.id else "in",
                        "object": compact_view(n, summary_chars=summary_chars)
                        if n
                        else {"id": nid, "missing": True},
                    }
                )
            result: ExpandResult = {
                "result_type": "expand_result",
                "object": compact_view(obj),
                "related": related,
            }
            if opts.include_segments:
                if obj.object_type == "source":
                    segs = session.get_segments(obj.id, limit=opts.max_items + 1, offset=offset)
                    more |= len(segs) > opts.max_items
                    result["segments"] = [
                        segment_view_typed(s, snippet_chars=opts.snippet_chars)
                        for s in segs[: opts.max_items]
                    ]
                elif obj.evidence_refs:
                    keys = [
                        (e["source_id"], e["segment_id"]) for e in obj.evidence_refs if e.get("segment_id")
                    ]
                    more |= len(keys) > end
                    segs = session.get_segments_by_keys(keys[offset:end])
                    result["evidence"] = [
                        segment_view_typed(s, snippet_chars=opts.snippet_chars) for s in segs
                    ]
            history: list[EventRef] = [
                {"event_id": e.id, "patch_id": e.patch_id, "action": e.action, "created_at": e.created_at}
                for e in session.list_events(object_id=obj.id, limit=5)
            ]
            result["history"] = history
        if opts.detail == "compact":
            for entry in result["related"]:
                entry["relation"].pop("relation_schema", None)  # its derivation is kept; "full" has the rest
            fits = _cut_together(result, EXPAND_LIST_TOKENS)
            if fits is not None:
                more, end = True, offset + fits
        result["next_cursor"] = Cursor(end, fingerprint).encode() if more else None
        return result

    def _expand_segment(
        self,
        session: StoreSession,
        ref: str,
        source: MemoryObject,
        seg: Segment,
        opts: ExpandOptions,
        paging: tuple[int, str],
    ) -> ExpandSegmentResult:
        """A segment in its place: the segments around it (``max_items`` before and after)."""
        around = opts.max_items
        segs = session.segment_windows([(source.id, max(0, seg.ordinal - around), seg.ordinal + around)])
        segs.sort(key=lambda s: s.ordinal)
        views = [segment_view_typed(s, snippet_chars=opts.snippet_chars) for s in segs]
        result: ExpandSegmentResult = {
            "result_type": "expand_result",
            "id": ref,
            "object": compact_view(source),
        }
        if opts.detail == "compact":
            date = date_of(views)
            result["date"] = date
            result["cite"] = CITE
            lines = [segment_line(v, date=date) for v in views]
            fits = common_cut([lines], RESPONSE_TOKENS - 400)
            result["lines"] = lines if fits is None else lines[:fits]
            if fits is not None:
                result["truncated"] = True
        else:
            result["segments"] = views
        return result

    def _graph(self, data: IdInput, opts: GraphOptions, paging: tuple[int, str]) -> GraphResult:
        with self.rt.read() as session:
            hit = _segment_of(session, data.id)
            root = hit[0] if hit is not None else _get(session, data.id)
            # The configured graph backend walks the graph (derived/base.py states the rules).
            hood = graph_reader(self.rt, session).neighbourhood(
                [root.id], depth=opts.depth, max_nodes=opts.max_items
            )
            seen, truncated = hood.depth_of, hood.truncated
            edges = {rel.id: _relation_view(rel) for rel in hood.edges}
            objs = session.get_objects(list(seen))
        nodes: list[JsonObject] = []
        for nid, depth in seen.items():
            obj = objs.get(nid)
            view: JsonObject = compact(obj) if obj else {"id": nid, "missing": True}
            if opts.detail == "compact" and obj:  # the shape of the graph; page a node for its content
                view = {k: view[k] for k in ("id", "object_type", "kind", "status", "title") if k in view}
            view["depth"] = depth
            nodes.append(view)
        edge_list = list(edges.values())
        if opts.detail == "compact":
            kept = take_within(nodes, GRAPH_NODE_TOKENS)
            ids = {n["id"] for n in kept}
            edge_list = [
                _without_schema(e) for e in edge_list if e["source_id"] in ids and e["target_id"] in ids
            ]
            kept_edges = take_within(edge_list, RESPONSE_TOKENS - GRAPH_NODE_TOKENS - 150)
            truncated = truncated or len(kept) < len(nodes) or len(kept_edges) < len(edge_list)
            nodes, edge_list = kept, kept_edges
        return {
            "result_type": "graph_result",
            "root_id": root.id,
            "nodes": nodes,
            "edges": edge_list,
            "counts": {"nodes": len(nodes), "edges": len(edge_list)},
            "truncated": truncated,
        }


def _compact_page(
    session: StoreSession, obj: MemoryObject, opts: PageOptions, paging: tuple[int, str]
) -> CompactPage:
    """An object's compact page: its compact view, then what it holds, bounded (a source's index
    lists, metadata and, asked for, a page of segments; another object's fields and history)."""
    contents: PageContents = {}
    tail: PageTail = {}
    if obj.object_type == "source":
        explicit = "max_items" in opts.model_fields_set
        contents["payload"] = compact_source_payload(
            obj,
            opts.max_items,
            opts.snippet_chars,
            list_tokens=None if explicit else PAGE_LIST_TOKENS,
        )
        contents["metadata"] = {
            k: obj.metadata[k] for k in ("adapter", "freshness", "uri") if k in obj.metadata
        }
        if opts.include_segments:
            offset, fingerprint = paging
            segs = session.get_segments(obj.id, limit=opts.max_items + 1, offset=offset)
            page_segs, tail["next_cursor"] = paginate(segs, 0, opts.max_items, fingerprint)
            if tail["next_cursor"]:
                tail["next_cursor"] = Cursor(offset + opts.max_items, fingerprint).encode()
            contents["segments"] = [
                segment_view_typed(s, snippet_chars=opts.snippet_chars) for s in page_segs
            ]
    else:
        for key in PAGE_FIELDS:
            value = getattr(obj, key)
            if value:
                contents[key] = value[: opts.max_items] if isinstance(value, list) else value
        if obj.object_type == "work_item":
            tail["history"] = work_history(session, obj, text_chars=max(opts.snippet_chars, 240))[
                : opts.max_items
            ]
    view: PageObject = {**compact_view(obj, summary_chars=max(opts.snippet_chars, 240)), **contents}
    return {"result_type": "page_result", "detail": "compact", "object": view, **tail}


def _cut_together(result: ExpandResult, budget_each: int) -> int | None:
    """``shaping.fit_together`` of an expand answer's lists: one cursor moves them all, so each
    is cut to the shortest fitting length. That length, or None when nothing was cut."""
    n = common_cut([result["related"], result.get("segments", []), result.get("evidence", [])], budget_each)
    if n is not None:
        result["related"] = result["related"][:n]
        if result.get("segments"):
            result["segments"] = result["segments"][:n]
        if result.get("evidence"):
            result["evidence"] = result["evidence"][:n]
    return n

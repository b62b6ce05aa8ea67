"""memory_query search: lexical, semantic and graph streams fused with RRF."""

from __future__ import annotations

import re
from collections import defaultdict

from memory_substrate import ids
from memory_substrate.answers.shaping import excerpt
from memory_substrate.answers.views import compact
from memory_substrate.derived.access import graph_reader, vector_index
from memory_substrate.indexing import segment_vector_id
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, ObjectHead, Segment
from memory_substrate.retrieval.terms import stem
from memory_substrate.runtime import Runtime
from memory_substrate.search.exact import exact_matches
from memory_substrate.search.fusion import Fused, rrf
from memory_substrate.search.inputs import SearchInput, SearchOptions
from memory_substrate.search.results import ChunkMatch, ObjectMatch, SearchPlan, SearchResult, SegmentMatch
from memory_substrate.search.sanitize import sanitize_query
from memory_substrate.search.segments import ranked_segments, segment_item, semantic_factor
from memory_substrate.search.streams import Pending, beside, in_callers_context
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import expand_terms, normalize_phrase, older_forms, query_terms

ID_RE = re.compile(r"\b(?:src|know|act|work|node|rel):[A-Za-z0-9_\-.]+")
TERMINAL = {"superseded", "archived", "expired", "stale"}
CANDIDATES = 100
Hit = tuple[str, float]  # (object or segment key, stream score; higher is better)
INFERRED_BOOST = 1.25
INFERRED_EFFECT = f"boost x{INFERRED_BOOST}: ranks these types higher, excludes nothing"
CHUNK_DEPTH = 50  # a segment hit deeper than this in its stream is not shown as a matched chunk
SEMANTIC_FLOOR = 0.15  # minimum cosine for a semantic-only object hit
# Compact detail: shorter summaries and fewer, shorter matched chunks per item.
COMPACT = {"summary_chars": 160, "chunks": 2, "chunk_chars": 160}
FULL = {"summary_chars": 240, "chunks": 3, "chunk_chars": 240}


def _phrase_boost(obj: MemoryObject | ObjectHead, phrase: str) -> float:
    if not phrase or " " not in phrase:
        return 1.0
    if phrase in normalize_phrase(obj.title):
        return 2.0
    if phrase in normalize_phrase(obj.summary):
        return 1.5
    return 1.0


REF_FILTERS = ("node_ids", "source_ids")  # filters that need an object's references (its whole record)


def head_matches(obj: MemoryObject | ObjectHead, filters: dict[str, list[str]]) -> bool:
    """The filters an object's head answers: type, kind and status."""
    if "object_types" in filters and obj.object_type not in filters["object_types"]:
        return False
    if "kinds" in filters and obj.kind not in filters["kinds"]:
        return False
    return not ("statuses" in filters and obj.status not in filters["statuses"])


def object_matches(session: StoreSession, obj: MemoryObject, filters: dict[str, list[str]]) -> bool:
    if not head_matches(obj, filters):
        return False
    for key in REF_FILTERS:
        wanted = filters.get(key)
        if not wanted:
            continue
        if obj.id in wanted:
            continue
        refs: set[str] = set(obj.subject_refs) | set(obj.related_node_refs) | set(obj.source_refs)
        refs |= {str(e["source_id"]) for e in obj.evidence_refs if e.get("source_id")}
        refs |= {v for v in (obj.payload.get("subject"), obj.payload.get("object")) if isinstance(v, str)}
        if key == "source_ids" and obj.object_type == "source":
            return False
        if not refs & set(wanted):
            return False
    return True


def semantic_backend(rt: Runtime, detail: str) -> JsonObject:
    """The embedder's status as a search or context answer states it: in compact detail only
    whether it is on, which provider and why not (the model name carries a content hash)."""
    semantic = rt.semantic_status()
    if detail == "compact":
        semantic = {k: v for k, v in semantic.items() if k in ("enabled", "provider", "reason")}
    return semantic


class SearchEngine:
    """Finds (``find``: a typed ``SearchResult``) and answers (``search``: the tool response shaped
    from it). The context compiler calls ``plan`` and ``find_objects`` in its own read snapshot."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def plan(self, query: str) -> SearchPlan:
        clean = sanitize_query(query)
        terms = query_terms(clean.text)
        extra, inferred_types = expand_terms(clean.text, terms)
        return SearchPlan(
            clean=clean,
            terms=terms,
            expansions=extra,
            inferred_types=inferred_types,
            phrase=normalize_phrase(clean.text),
            ids=ID_RE.findall(clean.text),
            older_forms=older_forms(clean.text, terms),
        )

    def find(self, data: SearchInput, opts: SearchOptions, *, limit: int | None = None) -> SearchResult:
        """The first ``limit`` (default ``max_items``) results of ``opts.result_unit``, typed."""
        plan = self.plan(data.query)
        filters = opts.filters.merged()
        limit = limit or opts.max_items
        with self.rt.read() as session:
            if opts.result_unit == "segment":
                found = [
                    SegmentMatch(seg, r)
                    for seg, r in ranked_segments(self.rt, session, plan.clean.text, filters, limit)
                ]
                return SearchResult(plan, "segment", filters, segments=found)
            shape = FULL if opts.detail == "full" else COMPACT
            return SearchResult(
                plan,
                "object",
                filters,
                objects=self.find_objects(session, plan, filters, limit, shape["chunks"]),
            )

    def search(self, data: SearchInput, opts: SearchOptions, *, limit: int | None = None) -> JsonObject:
        """The tool response of ``find``: the first ``limit`` items; the caller pages and shapes them."""
        result = self.find(data, opts, limit=limit)
        plan = result.plan
        if result.unit == "segment":
            chars = 200 if opts.detail == "compact" else 400
            items = [segment_item(m.segment, m.ranked, plan.terms, chars) for m in result.segments]
        else:
            shape = FULL if opts.detail == "full" else COMPACT
            items = [_object_item(m, plan.terms, shape) for m in result.objects]
        semantic = semantic_backend(self.rt, opts.detail)
        sanitizer = plan.clean.diagnostics()
        if opts.detail == "compact" and not sanitizer.get("was_sanitized"):
            # The sanitizer's lengths matter only when it acted.
            sanitizer = {"method": sanitizer.get("method")}
        return {
            "result_type": "search_result",
            "query": plan.clean.text,
            "result_unit": opts.result_unit,
            "items": items,
            "count": len(items),
            "normalized_terms": plan.terms,
            "applied_filters": result.filters,
            # Inferred from query words ("facts", "todo"): a boost, never a filter (the words also
            # name what a repo or a document explains), and the diagnostics say so.
            "inferred_filters": {"object_types": plan.inferred_types, "effect": INFERRED_EFFECT}
            if plan.inferred_types
            else {},
            "suggested_retry_terms": self._retry_terms(plan, items),
            "semantic_backend": semantic,
            "query_sanitizer": sanitizer,
        }

    def _retry_terms(self, plan: SearchPlan, items: list[JsonObject]) -> list[str]:
        out = list(plan.expansions[:8])
        if len(items) < 3:
            # Weak result: suggest base forms of the query words, which match more variants.
            for t in plan.terms:
                base = stem(t)
                if base != t and base not in out and base not in plan.terms:
                    out.append(base)
        return out[:12]

    # --- object results -------------------------------------------------------------
    def find_objects(
        self,
        session: StoreSession,
        plan: SearchPlan,
        filters: dict[str, list[str]],
        max_items: int,
        n_chunks: int,
    ) -> list[ObjectMatch]:
        """Object search in ``session``: the lexical, exact, semantic and graph streams fused (RRF),
        filtered, adjusted for status and inferred types, best ``max_items`` with their records and
        up to ``n_chunks`` matched segments each."""
        found = _Found(n_chunks)
        # Segment hits stand for their sources: a search whose types leave sources out neither runs
        # their streams nor lets them take places in the fused list before the filter.
        types = filters.get("object_types")
        sources = not types or "source" in types
        pending = self._nearest(session, plan, sources)  # beside the full-text streams (search/streams.py)
        streams, heads = self._lexical_streams(session, plan, found, sources)
        if pending is not None:
            streams["semantic"] = _semantic_stream(*pending.result(), found)
        graph = self._graph_stream(session, streams["lexical"], heads)
        if graph:
            streams["graph"] = graph
        fused = rrf(streams)[: CANDIDATES * 2]
        missing = [f.key for f in fused if f.key not in heads]
        heads.update(session.get_object_heads(missing))
        return self._select(session, fused, heads, filters, plan, max_items, found)

    def _nearest(
        self, session: StoreSession, plan: SearchPlan, segments: bool = True
    ) -> Pending[tuple[list[Hit], list[Hit]]] | None:
        """The vector stream (objects' and, with ``segments``, segments' nearest neighbours), running beside."""
        emb = self.rt.embedder_or_none()
        if emb is None or semantic_factor(emb, plan.clean.text) == 0.0:
            return None  # no embedder, or a query without a word (embed.gated.semantic_weight)
        # The query is embedded beside the full-text streams too (search/segments._vector_stream).
        embed, text, model = in_callers_context(emb.embed_query), plan.clean.text, emb.name

        def nearest(s: StoreSession) -> tuple[list[Hit], list[Hit]]:
            qvec = embed(text)
            vectors = vector_index(self.rt, s)
            return (
                vectors.vector_search(model, qvec, owner_type="object", limit=CANDIDATES),
                vectors.vector_search(model, qvec, owner_type="segment", limit=CANDIDATES)
                if segments
                else [],
            )

        return beside(self.rt, session, nearest)

    @staticmethod
    def _lexical_streams(
        session: StoreSession, plan: SearchPlan, found: _Found, segments: bool = True
    ) -> tuple[dict[str, list[Hit]], dict[str, ObjectHead]]:
        """The lexical stream (objects' full text, ids stated in the query, and, with ``segments``,
        segment hits counted for their source) with the phrase boost, and the exact stream
        (search/exact.py); with the heads of the objects they name."""
        terms = plan.terms
        asked = terms + plan.expansions + plan.older_forms
        lexical = [(h.object_id, h.score) for h in session.search_objects_text(asked, limit=CANDIDATES)]
        for object_id in ids.candidates(session, plan.ids):  # a short id (ids.py) names its objects
            lexical.insert(0, (object_id, 1e6))
        # Segment hits count for their source (evidence found inside a capture).
        seg_hits = (
            session.search_segments_text(terms + plan.older_forms, limit=CANDIDATES) if segments else []
        )
        for rank, h in enumerate(seg_hits):
            lexical.append((h.source_id, h.score * 0.5))
            found.chunk(rank, h.source_id, h.segment_id, h.score, None)
        exact = exact_matches(session, plan.clean.text, seg_hits)  # search/exact.py
        lexical[:0] = [(k, 1e6) for k in exact]
        # Candidates are ranked on their heads; only the answers' whole records are read.
        heads = session.get_object_heads([k for k, _ in lexical])
        # A source comes back once for each of its segment hits: its boost is worked out once.
        boosts = {
            k: _phrase_boost(heads[k], plan.phrase)
            for k in dict.fromkeys(k for k, _ in lexical)
            if k in heads
        }
        rescored = [(k, s * boosts[k]) for k, s in lexical if k in boosts]
        rescored.sort(key=lambda kv: -kv[1])
        streams = {"lexical": rescored}
        if exact:
            streams["exact"] = [(k, 1.0) for k in exact if k in heads]
        return streams, heads

    def _graph_stream(
        self, session: StoreSession, lexical: list[Hit], heads: dict[str, ObjectHead]
    ) -> list[Hit]:
        """Objects linked to the matched nodes (entities): they rank through their neighbours."""
        node_ids = [k for k, _ in lexical[:20] if heads[k].object_type == "node"]
        if not node_ids:
            return []
        rels = graph_reader(self.rt, session).relations_of(node_ids, limit=200)
        return [(r.source_id if r.target_id in node_ids else r.target_id, 1.0) for r in rels]

    @staticmethod
    def _select(
        session: StoreSession,
        fused: list[Fused],
        heads: dict[str, ObjectHead],
        filters: dict[str, list[str]],
        plan: SearchPlan,
        max_items: int,
        found: _Found,
    ) -> list[ObjectMatch]:
        """Filter the fused candidates, adjust their scores (terminal statuses halved, inferred types
        boosted), cut to ``max_items`` and read the answers' records and matched chunks."""
        passing = [f for f in fused if f.key in heads and head_matches(heads[f.key], filters)]
        whole: dict[str, MemoryObject] = {}
        if any(filters.get(key) for key in REF_FILTERS):
            whole = session.get_objects([f.key for f in passing])
            passing = [
                f for f in passing if f.key in whole and object_matches(session, whole[f.key], filters)
            ]
        inferred = set(plan.inferred_types)
        scored = []
        for f in passing:
            head = heads[f.key]
            score = f.rank_score
            if head.status in TERMINAL:
                score *= 0.5
            if head.object_type in inferred:
                score *= INFERRED_BOOST
            scored.append((score, f, head))
        scored.sort(key=lambda t: (-t[0], t[2].id))
        whole.update(session.get_objects([h.id for _, _, h in scored[:max_items] if h.id not in whole]))
        shown = [(score, f, whole[h.id]) for score, f, h in scored[:max_items] if h.id in whole]
        rows = found.rows(session, [obj.id for _, _, obj in shown])
        return [ObjectMatch(obj, score, f, found.matches(obj.id, rows)) for score, f, obj in shown]


class _Found:
    """The matched chunks of each source, in stream order: (segment key, lexical score, semantic
    score), the first ``n_chunks`` per source among the first ``CHUNK_DEPTH`` hits of each segment
    stream. Their rows are read only for the sources that end up in the answer."""

    def __init__(self, n_chunks: int) -> None:
        self.n_chunks = n_chunks
        self.by_source: dict[str, list[tuple[tuple[str, str], float | None, float | None]]] = defaultdict(
            list
        )

    def chunk(
        self, rank: int, source_id: str, segment_id: str, lexical: float | None, semantic: float | None
    ) -> None:
        have = self.by_source[source_id]
        if rank < CHUNK_DEPTH and len(have) < self.n_chunks and all(c[0][1] != segment_id for c in have):
            have.append(((source_id, segment_id), lexical, semantic))

    def rows(self, session: StoreSession, object_ids: list[str]) -> dict[tuple[str, str], Segment]:
        wanted = [key for oid in object_ids for key, _, _ in self.by_source.get(oid, ())]
        return {(s.source_id, s.id): s for s in session.get_segments_by_keys(wanted)} if wanted else {}

    def matches(self, object_id: str, rows: dict[tuple[str, str], Segment]) -> list[ChunkMatch]:
        return [
            ChunkMatch(rows[key], lex, sem)
            for key, lex, sem in self.by_source.get(object_id, ())
            if key in rows
        ]


def _semantic_stream(obj_near: list[Hit], seg_near: list[Hit], found: _Found) -> list[Hit]:
    """One semantic list, best first: an object scores by its own vector or its best segment's.
    Below ``SEMANTIC_FLOOR`` a vector hit is noise (unrelated texts score about 0-0.1 with the
    default model, related ones 0.3+); without it, weak hits would fill every result list."""
    own = [hit for hit in obj_near if hit[1] >= SEMANTIC_FLOOR]
    seg_sem = [hit for hit in seg_near if hit[1] >= SEMANTIC_FLOOR]
    sem_sources: list[Hit] = []
    for rank, (key, score) in enumerate(seg_sem):
        source_id, segment_id = key.split("#", 1)
        sem_sources.append((source_id, score))
        found.chunk(rank, source_id, segment_id, None, score)
    best: dict[str, float] = {}
    for key, score in own + sem_sources:
        best[key] = max(score, best.get(key, score))
    return sorted(best.items(), key=lambda kv: -kv[1])


def _object_item(match: ObjectMatch, terms: list[str], shape: dict[str, int]) -> JsonObject:
    """An object search item: the object's compact view, how it was found, its matched chunks."""
    f = match.fused
    item = compact(match.obj, summary_chars=shape["summary_chars"])
    item.update(
        retrieval_sources=f.sources,
        retrieval_ranks=f.ranks,
        rank_score=round(match.score, 6),
        lexical_score=round(f.scores["lexical"], 4) if "lexical" in f.scores else None,
        semantic_score=round(f.scores["semantic"], 4) if "semantic" in f.scores else None,
    )
    if match.chunks:
        item["matched_chunks"] = [
            _chunk(
                c.segment,
                terms,
                shape["chunk_chars"],
                lexical_score=c.lexical_score,
                semantic_score=c.semantic_score,
            )
            for c in match.chunks
        ]
    return item


def _chunk(
    seg: Segment,
    terms: list[str],
    chars: int,
    *,
    lexical_score: float | None = None,
    semantic_score: float | None = None,
) -> JsonObject:
    return {
        "chunk_id": segment_vector_id(seg.source_id, seg.id),
        "segment_id": seg.id,
        "locator": seg.locator,
        "excerpt": excerpt(seg.text, terms, chars),
        "hash": seg.hash,
        "distance": round(1.0 - semantic_score, 4) if semantic_score is not None else None,
        "semantic_score": round(semantic_score, 4) if semantic_score is not None else None,
        "lexical_score": round(lexical_score, 4) if lexical_score is not None else None,
        **{k: seg.metadata[k] for k in ("name", "role", "created_at") if seg.metadata.get(k)},
    }

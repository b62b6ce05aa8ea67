"""memory_query search: lexical, semantic and graph streams fused with RRF."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from memory_substrate.derived.access import graph_reader, vector_index
from memory_substrate.indexing import segment_vector_id
from memory_substrate.models import MemoryObject, ObjectHead, Segment
from memory_substrate.query.exact import exact_matches
from memory_substrate.query.fusion import rrf
from memory_substrate.query.sanitize import sanitize_query
from memory_substrate.query.schemas import SearchInput, SearchOptions
from memory_substrate.query.segments import search_segments
from memory_substrate.query.shaping import excerpt
from memory_substrate.query.streams import beside
from memory_substrate.query.views import compact
from memory_substrate.retrieval.text import stem
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import expand_terms, normalize_phrase, query_terms

ID_RE = re.compile(r"\b(?:src|know|act|work|node|rel):[A-Za-z0-9_\-.]+")
TERMINAL = {"superseded", "archived", "expired", "stale"}
CANDIDATES = 100
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


class SearchEngine:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def plan(self, query: str) -> dict[str, Any]:
        clean = sanitize_query(query)
        terms = query_terms(clean.text)
        extra, inferred_types = expand_terms(clean.text, terms)
        return {
            "clean": clean,
            "terms": terms,
            "expansions": extra,
            "inferred_types": inferred_types,
            "phrase": normalize_phrase(clean.text),
            "ids": ID_RE.findall(clean.text),
        }

    def search(self, data: SearchInput, opts: SearchOptions, *, limit: int | None = None) -> dict[str, Any]:
        """The first ``limit`` (default ``max_items``) results; the caller pages and shapes them."""
        plan = self.plan(data.query)
        filters = opts.filters.merged()
        limit = limit or opts.max_items
        with self.rt.read() as session:
            if opts.result_unit == "segment":
                items = search_segments(
                    self.rt, session, plan["clean"].text, filters, limit,
                    excerpt_chars=200 if opts.detail == "compact" else 400,
                )
            else:
                items = self._objects(session, plan, filters, limit, FULL if opts.detail == "full" else COMPACT)
        terms = plan["terms"]
        semantic = self.rt.semantic_status()
        sanitizer = plan["clean"].diagnostics()
        if opts.detail == "compact":
            # The model name carries a content hash; the sanitizer's lengths matter only when it acted.
            semantic = {k: v for k, v in semantic.items() if k in ("enabled", "provider", "reason")}
            if not sanitizer.get("was_sanitized"):
                sanitizer = {"method": sanitizer.get("method")}
        return {
            "result_type": "search_result",
            "query": plan["clean"].text,
            "result_unit": opts.result_unit,
            "items": items,
            "count": len(items),
            "normalized_terms": terms,
            "applied_filters": filters,
            # Inferred from query words ("facts", "todo"): a boost, never a filter (the words also
            # name what a repo or a document explains), and the diagnostics say so.
            "inferred_filters": {"object_types": plan["inferred_types"], "effect": INFERRED_EFFECT}
            if plan["inferred_types"] else {},
            "suggested_retry_terms": self._retry_terms(plan, items),
            "semantic_backend": semantic,
            "query_sanitizer": sanitizer,
        }

    def _retry_terms(self, plan: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
        out = list(plan["expansions"][:8])
        if len(items) < 3:
            # Weak result: suggest base forms of the query words, which match more variants.
            for t in plan["terms"]:
                base = stem(t)
                if base != t and base not in out and base not in plan["terms"]:
                    out.append(base)
        return out[:12]

    # --- object results -------------------------------------------------------------
    def _objects(
        self, session: StoreSession, plan: dict[str, Any], filters: dict[str, list[str]], max_items: int,
        shape: dict[str, int],
    ) -> list[dict[str, Any]]:
        terms: list[str] = plan["terms"]
        n_chunks, chunk_chars = shape["chunks"], shape["chunk_chars"]
        lexical_terms = terms + plan["expansions"]
        streams: dict[str, list[tuple[str, float]]] = {}
        # (segment key, lexical score, semantic score) per source: the first matches of each source
        # in stream order. Their rows are read only for the sources that end up in the answer.
        chunks: dict[str, list[tuple[tuple[str, str], float | None, float | None]]] = defaultdict(list)

        emb = self.rt.embedder_or_none()
        pending = None
        if emb is not None:
            qvec, model = emb.embed_query(plan["clean"].text), emb.name

            def nearest(s: StoreSession) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
                vectors = vector_index(self.rt, s)
                return (
                    vectors.vector_search(model, qvec, owner_type="object", limit=CANDIDATES),
                    vectors.vector_search(model, qvec, owner_type="segment", limit=CANDIDATES),
                )

            pending = beside(self.rt, session, nearest)  # beside the full-text streams (query/streams.py)

        lexical = [(h.object_id, h.score) for h in session.search_objects_text(lexical_terms, limit=CANDIDATES)]
        for object_id in plan["ids"]:
            lexical.insert(0, (object_id, 1e6))
        # Segment hits count for their source (evidence found inside a capture).
        seg_hits = session.search_segments_text(terms, limit=CANDIDATES)
        for rank, h in enumerate(seg_hits):
            lexical.append((h.source_id, h.score * 0.5))
            if rank < CHUNK_DEPTH and len(chunks[h.source_id]) < n_chunks:
                chunks[h.source_id].append(((h.source_id, h.segment_id), h.score, None))
        exact = exact_matches(session, plan["clean"].text, seg_hits)  # query/exact.py
        lexical[:0] = [(k, 1e6) for k in exact]
        # Candidates are ranked on their heads; only the answers' whole records are read.
        objs = session.get_object_heads([k for k, _ in lexical])
        phrase = plan["phrase"]
        rescored = [(k, s * _phrase_boost(objs[k], phrase)) for k, s in lexical if k in objs]
        rescored.sort(key=lambda kv: -kv[1])
        streams["lexical"] = rescored
        if exact:
            streams["exact"] = [(k, 1.0) for k in exact if k in objs]

        if pending is not None:
            obj_near, seg_near = pending.result()
            # Below the floor a vector hit is noise (unrelated texts score about 0-0.1 with the default
            # model, related ones 0.3+); without it, weak hits would fill every result list.
            streams["semantic"] = [hit for hit in obj_near if hit[1] >= SEMANTIC_FLOOR]
            seg_sem = [hit for hit in seg_near if hit[1] >= SEMANTIC_FLOOR]
            sem_sources: list[tuple[str, float]] = []
            for rank, (key, score) in enumerate(seg_sem):
                source_id, segment_id = key.split("#", 1)
                sem_sources.append((source_id, score))
                if (
                    rank < CHUNK_DEPTH
                    and len(chunks[source_id]) < n_chunks
                    and all(c[0][1] != segment_id for c in chunks[source_id])
                ):
                    chunks[source_id].append(((source_id, segment_id), None, score))
            # One semantic list, best first: an object scores by its own vector or its best segment.
            best: dict[str, float] = {}
            for key, score in streams["semantic"] + sem_sources:
                best[key] = max(score, best.get(key, score))
            streams["semantic"] = sorted(best.items(), key=lambda kv: -kv[1])

        # Graph stream: objects linked to matched nodes (entities) rank through their neighbours.
        node_ids = [k for k, _ in rescored[:20] if objs[k].object_type == "node"]
        if node_ids:
            rels = graph_reader(self.rt, session).relations_of(node_ids, limit=200)
            streams["graph"] = [
                (r.source_id if r.target_id in node_ids else r.target_id, 1.0) for r in rels
            ]

        fused = rrf(streams)[: CANDIDATES * 2]
        missing = [f.key for f in fused if f.key not in objs]
        heads = {**objs, **session.get_object_heads(missing)}
        passing = [f for f in fused if f.key in heads and head_matches(heads[f.key], filters)]
        whole: dict[str, MemoryObject] = {}
        if any(filters.get(key) for key in REF_FILTERS):
            whole = session.get_objects([f.key for f in passing])
            passing = [f for f in passing if f.key in whole and object_matches(session, whole[f.key], filters)]
        inferred = set(plan["inferred_types"])
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
        wanted = [key for _, _, obj in shown for key, _, _ in chunks.get(obj.id, ())]
        rows = {(s.source_id, s.id): s for s in session.get_segments_by_keys(wanted)} if wanted else {}
        items = []
        for score, f, obj in shown:
            item = compact(obj, summary_chars=shape["summary_chars"])
            item.update(
                retrieval_sources=f.sources,
                retrieval_ranks=f.ranks,
                rank_score=round(score, 6),
                lexical_score=round(f.scores["lexical"], 4) if "lexical" in f.scores else None,
                semantic_score=round(f.scores["semantic"], 4) if "semantic" in f.scores else None,
            )
            found = [(rows[key], lex, sem) for key, lex, sem in chunks.get(obj.id, ()) if key in rows]
            if found:
                item["matched_chunks"] = [
                    self._chunk(seg, terms, chunk_chars, lexical_score=lex, semantic_score=sem)
                    for seg, lex, sem in found
                ]
            items.append(item)
        return items

    @staticmethod
    def _chunk(
        seg: Segment, terms: list[str], chars: int, *, lexical_score: float | None = None, semantic_score: float | None = None
    ) -> dict[str, Any]:
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

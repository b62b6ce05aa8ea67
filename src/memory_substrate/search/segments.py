"""Segment-level search (``result_unit: "segment"``): each item is one piece of evidence.

The store supplies the candidate streams (full-text and vectors) and segment records; the pure
ranker in ``memory_substrate.retrieval`` scores candidates with their neighbouring turns as
context, speaker awareness and time expressions resolved against message dates.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

from memory_substrate.answers.shaping import excerpt
from memory_substrate.answers.views import segment_view
from memory_substrate.derived.access import vector_index
from memory_substrate.embed.base import Embedder, Vector
from memory_substrate.indexing import segment_vector_id
from memory_substrate.json_types import JsonObject
from memory_substrate.models import Segment
from memory_substrate.retrieval import ranker
from memory_substrate.retrieval.types import RankedSegment, RankSegment, stored_segment
from memory_substrate.runtime import Runtime
from memory_substrate.search.streams import Pending, beside, in_callers_context
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import full_text_terms
from memory_substrate.util import parse_time

STREAM_DEPTH = 50


@lru_cache(maxsize=8192)
def _said_at(value: str) -> datetime:
    # The turns of one session share a few dates; parsing each once saves ~10% of a ranking.
    return parse_time(value)


def _index(seg: RankSegment) -> int:
    return seg.index or 0


def _key(seg: Segment) -> str:
    return segment_vector_id(seg.source_id, seg.id)


def _split(key: str) -> tuple[str, str]:
    source_id, segment_id = key.split("#", 1)
    return source_id, segment_id


class _Fetcher:
    """Adapts a store session to the ranker's callables, caching what it has read.

    Windows may be read early for some keys (``prefetch``: the full-text hits, while the vector
    stream still runs); ``neighbours`` then reads only the windows it has not seen. Every row
    comes from the one session, so a window is the same whichever read brought its rows.
    """

    def __init__(self, session: StoreSession, model: str | None) -> None:
        self.session = session
        self.model = model
        self.rows: dict[str, Segment] = {}
        self.full: set[str] = set()  # keys whose row was read whole (the others are light)
        self.ranked: dict[str, RankSegment] = {}
        self.by_source: dict[str, dict[str, RankSegment]] = defaultdict(dict)  # window rows read
        self.spans: dict[str, tuple[int, int]] = {}  # key -> (before, after) of its window read

    def _record(self, key: str, seg: Segment) -> RankSegment:
        # Runs for every window turn of a search (several hundred): kept to plain local work.
        # Vectors are read for the ranker's candidates only (``vectors``).
        self.rows[key] = seg
        meta = seg.metadata
        created = meta.get("created_at")
        name = meta.get("name")
        terms = seg.terms
        rec = stored_segment(
            key,
            seg.text,
            seg.source_id,
            seg.ordinal,
            _said_at(created) if created else None,
            name if isinstance(name, str) and name else None,
            terms.split() if terms is not None else None,
            seg.language,
        )
        self.ranked[key] = rec
        return rec

    def segments(self, keys: Sequence[str]) -> dict[str, RankSegment]:
        # Read light like the windows: only the answers are read whole (``whole``). A key already
        # read (a prefetched hit, or a turn of a prefetched window) is not read again.
        ranked = self.ranked
        missing = [k for k in keys if k not in ranked]
        if missing:
            for seg in self.session.get_segments_by_keys([_split(k) for k in missing], light=True):
                key = f"{seg.source_id}#{seg.id}"  # = segment_vector_id
                self._record(key, seg)
        return {k: ranked[k] for k in keys if k in ranked}

    def prefetch(self, keys: Sequence[str], before: int, after: int) -> None:
        """Read these keys and their windows now (``neighbours`` will not read them again)."""
        self.neighbours(list(self.segments(keys)), before, after, slice_out=False)

    def whole(self, keys: Sequence[str]) -> dict[str, Segment]:
        """Complete rows (locator, hash, metadata) for these keys, reading the light ones again."""
        missing = [k for k in keys if k not in self.full]
        if missing:
            for seg in whole_rows(self.session, [self.rows[k] for k in missing if k in self.rows]):
                key = _key(seg)
                self.rows[key] = seg
                self.full.add(key)
        return {k: self.rows[k] for k in keys if k in self.rows}

    def vectors(self, keys: Sequence[str]) -> Mapping[str, Vector]:
        """Stored vectors of the ranker's candidates only (not of every window turn)."""
        return self.session.get_vectors(self.model, "segment", keys) if self.model else {}

    def neighbours(
        self, keys: Sequence[str], before: int, after: int, *, slice_out: bool = True
    ) -> dict[str, list[RankSegment]]:
        wanted = [(k, self.rows[k]) for k in keys if k in self.rows]
        spans = self.spans
        todo = [s for k, s in wanted if (span := spans.get(k)) is None or span[0] < before or span[1] < after]
        if todo:
            # Ranking needs text, position, speaker and date only: read windows light, and only
            # the few segments that end up in the answer whole (see ``whole``).
            ranges = [(s.source_id, max(0, s.ordinal - before), s.ordinal + after) for s in todo]
            ranked, record, by_source = self.ranked, self._record, self.by_source
            for seg in self.session.segment_windows(ranges, light=True):
                key = f"{seg.source_id}#{seg.id}"
                rec = ranked.get(key)  # rows already converted stay
                by_source[seg.source_id][key] = rec if rec is not None else record(key, seg)
            for s in todo:  # the widest window read around each key so far
                k = f"{s.source_id}#{s.id}"
                b, a = spans.get(k, (0, 0))
                spans[k] = (max(b, before), max(a, after))
        if not slice_out:
            return {}
        # Each source's turns in order once; a window is then a slice of them.
        placed: dict[str, tuple[list[int], list[RankSegment]]] = {}
        for source_id in {s.source_id for _, s in wanted}:
            recs = sorted((w for w in self.by_source[source_id].values() if w.index is not None), key=_index)
            placed[source_id] = ([w.index or 0 for w in recs], recs)
        out = {}
        for k, s in wanted:
            at, recs = placed[s.source_id]
            lo = bisect_left(at, s.ordinal - before)
            out[k] = recs[lo : bisect_right(at, s.ordinal + after, lo)]
        return out


def whole_rows(session: StoreSession, light: Sequence[Segment]) -> list[Segment]:
    """The complete rows (locator, hash, metadata) of segments read light, in their order, each
    keeping the language read with it (full reads leave it out)."""
    full = {
        (s.source_id, s.id): s for s in session.get_segments_by_keys([(s.source_id, s.id) for s in light])
    }
    out = []
    for seg in light:
        row = full.get((seg.source_id, seg.id))
        if row is not None:
            if row.language is None:
                row.language = seg.language
            out.append(row)
    return out


def ranked_segments(
    rt: Runtime,
    session: StoreSession,
    query: str,
    filters: dict[str, list[str]],
    max_items: int,
    *,
    depth: int = STREAM_DEPTH,
    vector_depth: int | None = None,
    config: ranker.RankConfig | None = None,
    light: bool = False,
) -> list[tuple[Segment, RankedSegment]]:
    """The segment ranker's answer with each segment's complete record, best first (search and the
    context compiler's episode recall share it; the compiler asks for deeper candidate streams
    when its budget holds more turns than a search page, the vector stream deeper than the
    full-text one (``vector_depth``, default ``depth``), and passes its own ``config`` to rank
    more of the turns around the best hits). ``light``: the records as the ranker read them (text,
    position, speaker, date, language; no locator or metadata beyond name and date), for a caller
    that keeps only some of the answers and reads those whole itself (``whole_rows``)."""
    source_ids = filters.get("source_ids")
    emb = rt.embedder_or_none()
    vector: list[tuple[str, float]] = []
    qvec = None
    pending = None
    if emb is not None and semantic_factor(emb, query) == 0.0:
        emb = None  # a query without a word: the full-text stream alone (embed.gated.semantic_weight)
    vdepth = depth if vector_depth is None else vector_depth
    if emb is not None:
        config = _semantic_weighted(emb, query, config)
        # Filtering by source happens after the nearest-neighbour search, so ask for more.
        pending = _vector_stream(rt, session, emb, query, vdepth * (4 if source_ids else 1))
    lexical = [
        (segment_vector_id(h.source_id, h.segment_id), h.score)
        for h in session.search_segments_text(full_text_terms(query), limit=depth, source_ids=source_ids)
    ]
    fetch = _Fetcher(session, emb.name if emb is not None else None)
    if pending is not None and not pending.done() and lexical:
        # The full-text hits' windows are read while the vector stream still runs.
        fetch.prefetch([k for k, _ in lexical], *ranker.context_span(config))
    if pending is not None:
        qvec, vector = pending.result()
        if source_ids:
            allowed = set(source_ids)
            vector = [(k, s) for k, s in vector if _split(k)[0] in allowed][:vdepth]
    ranked = ranker.rank_segments(
        query,
        lexical,
        vector,
        fetch.segments,
        fetch_neighbours=fetch.neighbours,
        fetch_vectors=fetch.vectors,
        query_vector=qvec,
        config=config,
        limit=max_items,
    )
    if light:
        return [(fetch.rows[r.segment_id], r) for r in ranked if r.segment_id in fetch.rows]
    rows = fetch.whole([r.segment_id for r in ranked])  # windows were read light; answers whole
    return [(rows[r.segment_id], r) for r in ranked if r.segment_id in rows]


def _vector_stream(
    rt: Runtime, session: StoreSession, emb: Embedder, query: str, limit: int
) -> Pending[tuple[Vector, list[tuple[str, float]]]]:
    """The query's vector and its nearest segments, on their way beside the full-text stream
    (search/streams.py): embedding the query costs about as much as the full-text query, and the
    encoder leaves the interpreter lock for its matrix work as SQLite does for its statements."""
    embed = in_callers_context(emb.embed_query)  # the request's query-vector memo goes along
    model = emb.name

    def nearest(s: StoreSession) -> tuple[Vector, list[tuple[str, float]]]:
        qvec = embed(query)
        return qvec, vector_index(rt, s).vector_search(model, qvec, owner_type="segment", limit=limit)

    return beside(rt, session, nearest)


def semantic_factor(emb: object, query: str) -> float:
    """The embedder's ``semantic_weight`` for this query (1 for embedders without an opinion);
    0 means its vector would say nothing about the query, and no vector stream is run."""
    weight = getattr(emb, "semantic_weight", None)
    return float(weight(query)) if callable(weight) else 1.0


def _semantic_weighted(emb: object, query: str, config: ranker.RankConfig | None) -> ranker.RankConfig | None:
    """``config`` with its semantic weight scaled as the embedder asks for this query
    (``embed.gated``: a query in another language than English, answered by a contextual
    multilingual model); unchanged for embedders without an opinion."""
    factor = semantic_factor(emb, query)
    if factor == 1.0:
        return config
    base = config or ranker.RankConfig()
    return replace(base, w_semantic=base.w_semantic * factor)


def segment_item(seg: Segment, r: RankedSegment, terms: list[str], excerpt_chars: int) -> JsonObject:
    """A segment search item: the segment's view with its excerpt and how it was ranked."""
    view = segment_view(seg, snippet_chars=excerpt_chars)
    view["excerpt"] = excerpt(seg.text, terms, excerpt_chars)
    view.update(
        retrieval_sources=r.retrieval_sources,
        retrieval_ranks=r.retrieval_ranks,
        rank_score=round(r.rank_score, 6),
        lexical_score=round(r.lexical_score, 4) if r.lexical_score is not None else None,
        semantic_score=round(r.semantic_score, 4) if r.semantic_score is not None else None,
    )
    return view

"""Segment ranking: pure functions between a store's candidate streams and the answer list.

Pipeline (all backend-agnostic; numpy only):

1. ``analyse_query(query, speakers, now)``: finds the participants the query names (speaker
   awareness) and the calendar periods it names (time expressions); what is left is the *content*
   of the query. The store should run its two candidate streams on the content: the lexical stream
   with ``analysis.terms`` (the store builds its own full-text expression from them: the SQLite
   one is ``storage/sqlite/fulltext.fts_query``) and the vector stream with the
   embedding of ``analysis.semantic_text``. Names are taken out because in a conversation a
   person's name mostly appears in the turns *addressed to* them, not in their own.
2. ``rank_segments(analysis_or_query, lexical_hits, vector_hits, fetch_segments, ...)``:
   candidates = both streams plus their neighbouring turns; each candidate gets
   * ``lexical``: BM25 of its *context window* (the turn with ``window_before`` turns before and
     ``window_after`` after, in the same source) against the content terms, idf from the store's
     term statistics when given;
   * ``semantic``: cosine between the query vector and the segment's own vector;
   * ``speaker``: 1 when the segment's speaker is a participant the query names;
   * ``time``: 1 when the segment's ``created_at`` falls in a named period (or shortly after);
   and ``rank_score`` = weighted sum of the z-normalised lexical and semantic features (over the
   candidate pool) plus the speaker and time bonuses.

Every store call is a plain callable passed in, so the same ranker runs over SQLite, PostgreSQL
or the in-memory simulation in ``bench/``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memory_substrate.analysis import across_languages
from memory_substrate.analysis.stopwords import ENGLISH as STOPWORDS
from memory_substrate.retrieval.terms import fold, index_terms, query_stems, tokenize
from memory_substrate.retrieval.timeexpr import Period, find_periods, strip_periods
from memory_substrate.retrieval.types import RankedSegment, RankSegment

Hit = tuple[str, float]  # (segment id, stream score; higher is better)
FetchSegments = Callable[[Sequence[str]], Mapping[str, RankSegment]]
FetchNeighbours = Callable[[Sequence[str], int, int], Mapping[str, Sequence[RankSegment]]]
FetchVectors = Callable[[Sequence[str]], Mapping[str, npt.NDArray[np.float32]]]


@dataclass(frozen=True)
class TermStats:
    """Corpus statistics for BM25 idf: number of segments and per-term segment frequency."""

    doc_count: int
    doc_freq: Mapping[str, int]


TermStatsFn = Callable[[Sequence[str]], TermStats]


class _Embedder(Protocol):
    def embed_query(self, text: str) -> npt.NDArray[np.float32]: ...
    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]: ...


# ------------------------------------------------------------------------------ query analysis
@dataclass(frozen=True)
class QueryAnalysis:
    text: str  # the query as asked
    content: str  # without participant names and time expressions
    terms: list[str]  # normalised content terms (lexical matching)
    speakers: list[str]  # participants named in the query (as known to the store)
    periods: list[Period]  # calendar periods named in the query

    @property
    def semantic_text(self) -> str:
        """Text to embed for the vector stream (the query's content, or the query itself)."""
        return self.content if self.content.strip() else self.text


def _name_tokens(name: str) -> list[str]:
    return [t for t in tokenize(name) if len(t) >= 2]


def analyse_query(query: str, speakers: Iterable[str] = (), now: datetime | None = None) -> QueryAnalysis:
    """Split a query into content, named participants and named periods.

    ``speakers``: the speaker names known in the searched scope (e.g. ``SELECT DISTINCT speaker``).
    A participant is named when one of their name's words occurs in the query (case-insensitive,
    except that a name word that is also a common word must be capitalised, e.g. "Will").
    """
    periods = find_periods(query, now)
    content = strip_periods(query, periods) if periods else query
    named: list[str] = []
    name_words: set[str] = set()
    qwords = tokenize(query)
    qwords_cased = set(re.findall(r"[^\W_]+", query))
    for spk in dict.fromkeys(s for s in speakers if s):
        toks = _name_tokens(spk)
        hit = False
        for tok in toks:
            if tok in STOPWORDS:
                if any(fold(w) == tok and w[:1].isupper() for w in qwords_cased):
                    hit = True
            elif tok in qwords:
                hit = True
        if hit:
            named.append(spk)
            name_words.update(toks)
    if name_words:

        def drop(m: re.Match[str]) -> str:
            word = fold(m.group(1))
            if word in name_words and (word not in STOPWORDS or m.group(1)[:1].isupper()):
                return " "
            return m.group(0)

        content = re.sub(r"\b([^\W_]+)(?:['’]s\b)?", drop, content)
        content = " ".join(content.split())
    terms = [t for t in query_stems(content)]
    return QueryAnalysis(query, content, terms, named, periods)


# ------------------------------------------------------------------------------------ ranking
@dataclass(frozen=True)
class RankConfig:
    window_before: int = 2  # context turns before a segment in its lexical window
    window_after: int = 1  # ... and after
    center_extra: int = 1  # extra copies of the turn's own terms in its window
    # The share of a neighbour's terms (and length) in a segment's window. Outside conversations
    # (document sections, code chunks: segments without a speaker) a segment's own terms dominate:
    # at 1.0 a section between two that match ("SQLite mode" over sections "We use SQLite in WAL
    # mode", "The cat is named Tom", "Paris trip in May", "SQLite checkpoint every 1000 pages")
    # outranked one that matched itself, and neighbouring chunks are usually unrelated. In a
    # conversation the turns around a turn are its context (the question a reply answers):
    # 0.25 there too cost LoCoMo dev segment search R@5 / R@10 0.708 / 0.775 -> 0.658 / 0.746.
    neighbour_weight: float = 0.25
    neighbour_weight_turns: float = 1.0
    neighbour_candidates: int = 1  # also rank turns this close to a stream hit
    neighbour_seeds: int = 30  # ... of the best this many hits of each stream
    w_lexical: float = 1.0
    w_semantic: float = 0.7
    w_speaker: float = 3.0
    w_time: float = 3.0
    time_after_slack_days: float = 14.0  # a period also matches segments this long after it
    k1: float = 1.2
    b: float = 0.75


@dataclass
class _Cand:
    seg: RankSegment
    sources: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)
    lexical_score: float | None = None
    semantic_score: float | None = None


def _zscore(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    if x.size == 0:
        return x
    sd = float(x.std())
    if sd < 1e-12:
        return np.zeros_like(x)
    return (x - float(x.mean())) / sd


def context_span(config: RankConfig | None = None) -> tuple[int, int]:
    """(before, after): how far around each stream hit ``rank_segments`` asks ``fetch_neighbours``
    to read (the hit's own window, and the windows of the neighbours it adds as candidates). A
    caller may read these windows early, e.g. for the full-text hits while the vector stream runs."""
    cfg = config or RankConfig()
    return (
        max(cfg.window_before, cfg.neighbour_candidates + cfg.window_before),
        max(cfg.window_after, cfg.neighbour_candidates + cfg.window_after),
    )


def _position(s: RankSegment) -> tuple[int, str]:
    return (s.index if s.index is not None else 0, s.id)


def _speaker_matches(speaker: str | None, named: Sequence[str]) -> bool:
    if not speaker or not named:
        return False
    s = fold(speaker).strip()
    return any(fold(n).strip() == s for n in named)


@dataclass
class _Pool:
    """Stage 1's result: the candidates and every segment known around them."""

    cands: dict[str, _Cand]
    known: dict[str, RankSegment]  # candidates and their neighbours, by id
    order: dict[str, list[RankSegment]]  # each source's known segments in position order
    pos: dict[str, tuple[str, int]]  # segment id -> (source, index in ``order[source]``)


def _gather(
    lexical_hits: Sequence[Hit],
    vector_hits: Sequence[Hit],
    fetch_segments: FetchSegments,
    fetch_neighbours: FetchNeighbours | None,
    cfg: RankConfig,
) -> _Pool | None:
    """Stage 1, candidates: both streams' hits, their context windows' segments, and the
    neighbouring turns of the best hits as extra candidates. None when there is nothing to rank."""
    cands: dict[str, _Cand] = {}
    lex_rank = {sid: r for r, (sid, _) in enumerate(lexical_hits, 1)}
    vec_rank = {sid: r for r, (sid, _) in enumerate(vector_hits, 1)}
    stream_ids = list(dict.fromkeys([sid for sid, _ in lexical_hits] + [sid for sid, _ in vector_hits]))
    if not stream_ids:
        return None
    segs = dict(fetch_segments(stream_ids))

    # neighbours: context windows and extra candidates
    before, after = context_span(cfg)
    neigh: Mapping[str, Sequence[RankSegment]] = {}
    if fetch_neighbours is not None and (before or after):
        neigh = fetch_neighbours(list(segs), before, after)
    seeds = set(sid for sid, _ in lexical_hits[: cfg.neighbour_seeds]) | set(
        sid for sid, _ in vector_hits[: cfg.neighbour_seeds]
    )

    # every segment we know, by source and position (for windows)
    # (Plain loops and local names: this runs for every turn of every window, several hundred
    # per search.)
    known: dict[str, RankSegment] = dict(segs)
    for lst in neigh.values():
        for s in lst:
            if s.id not in known:
                known[s.id] = s
    order: dict[str, list[RankSegment]] = {}
    for s in known.values():
        group = order.get(s.source_id)
        if group is None:
            order[s.source_id] = [s]
        else:
            group.append(s)
    pos: dict[str, tuple[str, int]] = {}
    for src, lst in order.items():
        if len(lst) > 1:
            lst.sort(key=_position)
        for i, s in enumerate(lst):
            pos[s.id] = (src, i)

    for sid in stream_ids:
        if sid not in segs:
            continue
        c = cands.setdefault(sid, _Cand(segs[sid]))
        if sid in lex_rank:
            c.sources.append("lexical")
            c.ranks["lexical"] = lex_rank[sid]
            c.lexical_score = float(lexical_hits[lex_rank[sid] - 1][1])
        if sid in vec_rank:
            c.sources.append("semantic")
            c.ranks["semantic"] = vec_rank[sid]
            c.semantic_score = float(vector_hits[vec_rank[sid] - 1][1])
    if cfg.neighbour_candidates > 0 and neigh:
        for sid in [s for s in stream_ids if s in seeds and s in pos]:
            src, i = pos[sid]
            lst = order[src]
            for j in range(
                max(0, i - cfg.neighbour_candidates), min(len(lst), i + cfg.neighbour_candidates + 1)
            ):
                nb = lst[j]
                if nb.id not in cands:
                    cands[nb.id] = _Cand(nb, sources=["context"])
    if not cands:
        return None
    return _Pool(cands, known, order, pos)


def _speaker_and_time(
    segs: Sequence[RankSegment], analysis: QueryAnalysis, cfg: RankConfig
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Stage 5, speaker and time features: 1 when the segment's speaker is a participant the query
    names (0 for all when every candidate matches), 1 when it was said in a period the query names."""
    spk = np.array([1.0 if _speaker_matches(s.speaker, analysis.speakers) else 0.0 for s in segs])
    if analysis.speakers and spk.all():
        spk[:] = 0.0
    tim = np.zeros(len(segs))
    if analysis.periods:
        slack = timedelta(days=cfg.time_after_slack_days)
        for k, seg in enumerate(segs):
            when = seg.created_at
            if when is not None:
                when = when.replace(tzinfo=None) if when.tzinfo is not None else when
                if any(p.start - timedelta(days=1) <= when <= p.end + slack for p in analysis.periods):
                    tim[k] = 1.0
    return spk, tim


@dataclass
class _Windows:
    """Stage 3's counts: each candidate's context window as weighted sums of its turns' rows."""

    lens: npt.NDArray[np.float64]  # window length per candidate (weighted term count)
    tf: npt.NDArray[np.float64]  # (candidates, query terms): weighted term frequency per window
    turn_tf: npt.NDArray[np.float64]  # (known turns, query terms): each turn's own term frequency


def _windows(pool: _Pool, ids: Sequence[str], terms: Sequence[str], cfg: RankConfig) -> _Windows:
    """Stage 3a, context windows: each candidate's turn (``1 + center_extra`` times) and the turns
    around it in its source (``neighbour_weight`` each, ``neighbour_weight_turns`` in a
    conversation), counted for the query terms."""
    known, order, pos = pool.known, pool.order, pool.pos
    n = len(ids)
    term_cache: dict[str, list[str]] = {}

    def seg_terms(s: RankSegment) -> Sequence[str]:
        if s.terms is not None:
            return s.terms
        t = term_cache.get(s.id)
        if t is None:
            t = index_terms(s.text)
            term_cache[s.id] = t
        return t

    # Each known turn once: its length and how often it holds each query term. A window's term
    # frequencies and length are then sums of rows (numpy), not per-window counters of every term.
    known_ids = list(known)
    kidx = {sid: k for k, sid in enumerate(known_ids)}
    nterms = len(terms)
    # Built as Python lists and turned into arrays once: writing numpy elements one by one cost
    # more than the counting itself (several hundred turns per search).
    known_toks = [seg_terms(s) for s in known.values()]
    turn_len = np.array([len(toks) for toks in known_toks], dtype=np.float64)
    if nterms:
        # Most window turns hold no query term: a set test skips their per-term counts. A turn that
        # holds some is counted once (Counter), not once per term: ``toks.count(t)`` for each of a
        # long query's hundreds of terms over a 200,000-character turn took seconds.
        qset, zero = frozenset(terms), [0] * nterms
        turn_tf = np.array(
            [zero if qset.isdisjoint(toks) else _counts(toks, terms) for toks in known_toks],
            dtype=np.float64,
        )
        turn_tf = turn_tf.reshape(len(known_ids), nterms)
    else:
        turn_tf = np.zeros((len(known_ids), 0))
    win_rows: list[int] = []
    win_cols: list[int] = []
    win_w: list[float] = []
    # Each source's turns as rows of ``known``, in order: a window is then a slice.
    order_k = {src: [kidx[s.id] for s in lst] for src, lst in order.items()}
    wb, wa1, own = cfg.window_before, cfg.window_after + 1, 1.0 + cfg.center_extra
    for c_i, sid in enumerate(ids):
        at = pos.get(sid)
        me = kidx[sid]
        share = cfg.neighbour_weight_turns if known[sid].speaker else cfg.neighbour_weight
        members = order_k[at[0]][max(0, at[1] - wb) : at[1] + wa1] if at is not None else [me]
        # The turn's own terms count ``own`` times, each neighbour's ``share``.
        win_rows.extend([c_i] * len(members))
        win_cols.extend(members)
        win_w.extend(own if k == me else share for k in members)
        if me not in members:
            win_rows.append(c_i)
            win_cols.append(me)
            win_w.append(own if at is not None else 1.0)  # no window: the turn alone
    rows_a = np.asarray(win_rows, dtype=np.intp)
    cols_a = np.asarray(win_cols, dtype=np.intp)
    w_a = np.asarray(win_w, dtype=np.float64)
    lens = np.zeros(n)
    np.add.at(lens, rows_a, turn_len[cols_a] * w_a)
    win_tf = np.zeros((n, nterms))
    if nterms:
        np.add.at(win_tf, rows_a, turn_tf[cols_a] * w_a[:, None])
    return _Windows(lens, win_tf, turn_tf)


def _idf(terms: Sequence[str], windows: _Windows, term_stats: TermStatsFn | None) -> dict[str, float]:
    """Stage 3b, idf: from the store's corpus statistics, else from the known turns (each a document)."""
    if term_stats is not None:
        st = term_stats(list(terms))
        ndocs, df = max(1, st.doc_count), st.doc_freq
    else:
        # Every known turn is a document: a term's frequency is the count of rows holding it.
        ndocs = windows.turn_tf.shape[0]
        held = np.count_nonzero(windows.turn_tf, axis=0)
        df = {t: int(held[j]) for j, t in enumerate(terms)}
    return {t: math.log(1.0 + (ndocs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}


def _counts(tokens: Sequence[str], terms: Sequence[str]) -> list[int]:
    """How often each of ``terms`` occurs in ``tokens``, in one pass over the tokens."""
    counted = Counter(tokens)
    return [counted[t] for t in terms]


def _lexical(
    pool: _Pool, ids: Sequence[str], terms: Sequence[str], term_stats: TermStatsFn | None, cfg: RankConfig
) -> npt.NDArray[np.float64]:
    """Stage 3, lexical feature: BM25 of each candidate's context window against the content terms."""
    n = len(ids)
    windows = _windows(pool, ids, terms, cfg)
    if not terms:
        return np.zeros(n)
    idf = _idf(terms, windows, term_stats)
    lens = windows.lens
    avg_len = float(lens.mean()) if n and lens.mean() > 0 else 1.0
    norm = cfg.k1 * (1.0 - cfg.b + cfg.b * lens / avg_len)
    out = np.zeros(n)
    for j, t in enumerate(terms):
        f = windows.tf[:, j]
        out += idf[t] * f * (cfg.k1 + 1.0) / (f + norm)
    return out


def _semantic(
    cands: Mapping[str, _Cand],
    ids: Sequence[str],
    qvec: npt.NDArray[np.float32] | None,
    embedder: _Embedder | None,
    fetch_vectors: FetchVectors | None,
    has_vector_stream: bool,
) -> npt.NDArray[np.float64]:
    """Stage 4, semantic feature: cosine between the query vector and each candidate's vector
    (stored, fetched, or embedded now); without a query vector, the vector stream's scores."""
    n = len(ids)
    if qvec is None:
        sem = np.array([cands[sid].semantic_score or 0.0 for sid in ids], dtype=np.float64)
        if not has_vector_stream:
            sem[:] = 0.0
        return sem
    sem = np.zeros(n)
    qv = np.asarray(qvec, dtype=np.float32)
    stored: Mapping[str, npt.NDArray[np.float32]] = {}
    if fetch_vectors is not None:
        lacking = [sid for sid in ids if cands[sid].seg.vector is None]
        stored = fetch_vectors(lacking) if lacking else {}
    vec_of = {
        sid: cands[sid].seg.vector if cands[sid].seg.vector is not None else stored.get(sid) for sid in ids
    }
    missing = [k for k, sid in enumerate(ids) if vec_of[sid] is None]
    vecs = np.zeros((n, qv.shape[0]), dtype=np.float32)
    for k, sid in enumerate(ids):
        v = vec_of[sid]
        if v is not None:
            vecs[k] = v
    if missing:
        if embedder is not None:
            vecs[missing] = embedder.embed_documents([cands[ids[k]].seg.text for k in missing])
        else:
            for k in missing:  # fall back on the stream's score where there is one
                stream_score = cands[ids[k]].semantic_score
                vecs[k] = 0.0
                sem[k] = stream_score if stream_score is not None else 0.0
    absent = set(missing) if embedder is None else set()
    have = [k for k in range(n) if k not in absent]
    sem[have] = vecs[have] @ qv
    return sem


def _fuse_and_cut(
    cands: Mapping[str, _Cand],
    ids: Sequence[str],
    features: Mapping[str, npt.NDArray[np.float64]],
    cfg: RankConfig,
    limit: int,
    *,
    scored_semantically: bool,
    query: str = "",
) -> list[RankedSegment]:
    """Stage 6, fusion and cut: weighted sum of the z-normalised lexical and semantic features plus
    the speaker and time bonuses; the best ``limit``, ties in candidate order. A candidate in another
    language than the ``query``'s gets the lexical evidence expected of one in the query's language
    as close in meaning, at least that of an average one (``across_languages``)."""
    lex, sem, spk, tim = features["lexical"], features["semantic"], features["speaker"], features["time"]
    n = len(ids)
    zlex, zsem = _zscore(lex), _zscore(sem)
    if query:
        segs = [cands[sid].seg for sid in ids]
        zlex = across_languages(query, [s.text for s in segs], zlex, [s.language for s in segs], zsem)
    score = cfg.w_lexical * zlex + cfg.w_semantic * zsem + cfg.w_speaker * spk + cfg.w_time * tim
    order_idx = np.lexsort((np.arange(n), -score))[:limit]
    out: list[RankedSegment] = []
    for k in order_idx:
        c = cands[ids[int(k)]]
        out.append(
            RankedSegment(
                segment_id=ids[int(k)],
                rank_score=float(score[k]),
                retrieval_sources=list(c.sources),
                retrieval_ranks=dict(c.ranks),
                lexical_score=c.lexical_score,
                semantic_score=float(sem[k]) if scored_semantically else c.semantic_score,
                features={
                    "lexical": float(lex[k]),
                    "semantic": float(sem[k]),
                    "speaker": float(spk[k]),
                    "time": float(tim[k]),
                },
            )
        )
    return out


def rank_segments(
    query: str | QueryAnalysis,
    lexical_hits: Sequence[Hit],
    vector_hits: Sequence[Hit],
    fetch_segments: FetchSegments,
    *,
    fetch_neighbours: FetchNeighbours | None = None,
    fetch_vectors: FetchVectors | None = None,
    term_stats: TermStatsFn | None = None,
    query_vector: npt.NDArray[np.float32] | None = None,
    embedder: _Embedder | None = None,
    speakers: Iterable[str] | None = None,
    now: datetime | None = None,
    config: RankConfig | None = None,
    limit: int = 10,
) -> list[RankedSegment]:
    """Rank segments for ``query``; returns at most ``limit`` results, best first.

    * ``lexical_hits`` / ``vector_hits``: the store's streams, ``(segment_id, score)`` best first
      (lexical score = FTS5 ``-bm25()``, vector score = cosine). Either may be empty.
    * ``fetch_segments(ids) -> {id: RankSegment}``: segment records (text, source_id, index,
      created_at, speaker; ``vector`` when at hand).
    * ``fetch_neighbours(ids, before, after) -> {id: [RankSegment, ...]}`` (optional): for each id, the
      segments of its source from ``before`` positions before it to ``after`` after it, in order,
      itself included. Without it, windows are the segment alone and no neighbour is added.
    * ``fetch_vectors(ids) -> {id: vector}`` (optional): stored vectors of the candidates whose
      ``RankSegment.vector`` is None, asked once, for the candidates only (a window holds several
      times more turns than there are candidates, and only candidates are scored).
    * ``term_stats(terms) -> TermStats`` (optional): corpus-wide document frequencies of the
      content terms (normalised by ``retrieval.terms.index_terms``); without it idf is estimated
      from the fetched candidates and their neighbours.
    * ``query_vector`` or ``embedder``: to score segments semantically (from ``RankSegment.vector``
      or by embedding the segment text); without both, the vector stream's scores are used.
    * ``speakers``: participant names for ``analyse_query`` when ``query`` is a string; by
      default the speakers of the candidate segments.

    Stages: gather candidates (``_gather``), analyse the query, lexical (``_lexical``), semantic
    (``_semantic``), speaker and time (``_speaker_and_time``), fuse and cut (``_fuse_and_cut``).
    """
    cfg = config or RankConfig()
    pool = _gather(lexical_hits, vector_hits, fetch_segments, fetch_neighbours, cfg)
    if pool is None:
        return []
    analysis = query if isinstance(query, QueryAnalysis) else None
    if analysis is None:
        participants = (
            list(speakers)
            if speakers is not None
            else sorted({s.speaker for s in pool.known.values() if s.speaker})
        )
        analysis = analyse_query(str(query), participants, now)
    ids = list(pool.cands)
    lex = _lexical(pool, ids, analysis.terms, term_stats, cfg)
    qvec = query_vector
    if qvec is None and embedder is not None:
        qvec = embedder.embed_query(analysis.semantic_text)
    sem = _semantic(pool.cands, ids, qvec, embedder, fetch_vectors, bool(vector_hits))
    spk, tim = _speaker_and_time([pool.cands[sid].seg for sid in ids], analysis, cfg)
    features = {"lexical": lex, "semantic": sem, "speaker": spk, "time": tim}
    return _fuse_and_cut(
        pool.cands, ids, features, cfg, limit, scored_semantically=qvec is not None, query=analysis.text
    )


__all__ = [
    "FetchNeighbours",
    "FetchSegments",
    "FetchVectors",
    "Hit",
    "QueryAnalysis",
    "RankConfig",
    "TermStats",
    "analyse_query",
    "context_span",
    "rank_segments",
]

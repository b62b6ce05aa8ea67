"""In-memory stand-ins for the store, for fast retrieval iteration.

* ``PlainBM25``: the baseline. Okapi BM25 (k1=1.2, b=0.75, Lucene-style idf) over lower-cased
  alphanumeric words with English stopwords removed, no stemming, no context: the textbook
  "BM25 over the same turns".
* ``SimulatedStore``: what the real store is assumed to offer the ranker: a lexical stream (by
  default real SQLite FTS5 ``bm25()`` over ``lexical_document(text)``, queried with the OR-of-terms
  the SQLite store's ``fts_query`` of ``QueryAnalysis.terms``; or a Python BM25 with the same normalisation), cosine top-N over
  stored normalised vectors, and segment records / neighbours by id.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from memory_substrate.retrieval.terms import (
    STOPWORDS,
    index_terms,
    lexical_document,
    query_stems,
)
from memory_substrate.retrieval.types import RankSegment
from memory_substrate.storage.sqlite.fulltext import fts_query

_PLAIN_WORD = re.compile(r"[a-z0-9]+")


class BM25Index:
    """Okapi BM25 over pre-tokenised documents (term lists)."""

    def __init__(self, docs: Sequence[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.n = len(docs)
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if self.n else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, d in enumerate(docs):
            for term, tf in Counter(d).items():
                self.postings[term].append((i, tf))

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * self.lengths / max(self.avgdl, 1e-9))
        for term in terms:
            plist = self.postings.get(term)
            if not plist:
                continue
            idf = self.idf(term)
            idx = np.fromiter((p[0] for p in plist), dtype=np.int64, count=len(plist))
            tf = np.fromiter((p[1] for p in plist), dtype=np.float64, count=len(plist))
            out[idx] += idf * tf * (self.k1 + 1.0) / (tf + norm[idx])
        return out

    def top(self, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
        s = self.scores(terms)
        nz = np.flatnonzero(s > 0)
        if nz.size == 0:
            return []
        order = nz[np.argsort(-s[nz], kind="stable")][:n]
        return [(int(i), float(s[i])) for i in order]


def plain_terms(text: str) -> list[str]:
    return [w for w in _PLAIN_WORD.findall(text.lower()) if w not in STOPWORDS]


class PlainBM25:
    def __init__(self, keys: list[str], texts: list[str]) -> None:
        self.keys = keys
        self.index = BM25Index([plain_terms(t) for t in texts])

    def search(self, query: str, k: int) -> list[str]:
        return [self.keys[i] for i, _ in self.index.top(plain_terms(query), k)]


class SimulatedStore:
    """One conversation's segments, with the lookups the ranker expects from the real store."""

    def __init__(
        self, segments: list[RankSegment], keys: list[str], vectors: np.ndarray, *, fts5: bool = False
    ) -> None:
        self.segments = segments
        self.by_id = {s.id: s for s in segments}
        self.keys = dict(zip([s.id for s in segments], keys, strict=True))
        self.vectors = vectors
        self.lex = BM25Index([index_terms(s.text) for s in segments])
        self.by_source: dict[str, list[RankSegment]] = defaultdict(list)
        for s in segments:
            self.by_source[s.source_id].append(s)
        for lst in self.by_source.values():
            lst.sort(key=lambda s: s.index if s.index is not None else 0)
        self.position = {s.id: i for lst in self.by_source.values() for i, s in enumerate(lst)}
        self.db = None
        if fts5:  # the real thing: SQLite FTS5 over ``lexical_document`` text
            import sqlite3

            self.db = sqlite3.connect(":memory:")
            self.db.execute(
                "CREATE VIRTUAL TABLE seg USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
            )
            self.db.executemany(
                "INSERT INTO seg(rowid, body) VALUES (?, ?)",
                [(i, lexical_document(s.text)) for i, s in enumerate(segments)],
            )

    @classmethod
    def from_conversation(cls, conv, embedder, *, fts5: bool = False) -> SimulatedStore:
        segments, keys = [], []
        for t in conv.turns:
            sid = f"{conv.sample_id}/{t.key}"
            segments.append(
                RankSegment(
                    id=sid,
                    text=t.text,
                    source_id=f"{conv.sample_id}/session_{t.session}",
                    index=t.index,
                    created_at=t.created_at,
                    speaker=t.speaker,
                )
            )
            keys.append(t.key)
        vectors = embedder.embed_documents([s.text for s in segments])
        segments = [dataclasses.replace(s, vector=v) for s, v in zip(segments, vectors, strict=True)]
        return cls(segments, keys, vectors, fts5=fts5)

    def speakers(self) -> list[str]:
        return sorted({s.speaker for s in self.segments if s.speaker})

    def term_stats(self, terms):
        from memory_substrate.retrieval import TermStats

        return TermStats(self.lex.n, {t: len(self.lex.postings.get(t, ())) for t in terms})

    def key_of(self, segment_id: str) -> str:
        return self.keys[segment_id]

    # -- the three store calls the ranker relies on ---------------------------------------
    def lexical_search(self, query: str | list[str], n: int) -> list[tuple[str, float]]:
        """``query``: text (normalised here) or already-normalised terms (an OR query)."""
        terms = query_stems(query) if isinstance(query, str) else query
        if self.db is not None:
            match = fts_query(terms)
            if not match:
                return []
            rows = self.db.execute(
                "SELECT rowid, -bm25(seg) AS s FROM seg WHERE seg MATCH ? ORDER BY s DESC, rowid LIMIT ?",
                (match, n),
            ).fetchall()
            return [(self.segments[i].id, float(sc)) for i, sc in rows]
        return [(self.segments[i].id, s) for i, s in self.lex.top(terms, n)]

    def vector_search(self, qvec: np.ndarray, n: int) -> list[tuple[str, float]]:
        sims = self.vectors @ qvec
        order = np.argsort(-sims, kind="stable")[:n]
        return [(self.segments[i].id, float(sims[i])) for i in order]

    def fetch_segments(self, ids: Sequence[str]) -> dict[str, RankSegment]:
        return {i: self.by_id[i] for i in ids if i in self.by_id}

    def fetch_neighbours(self, ids: Sequence[str], before: int, after: int) -> dict[str, list[RankSegment]]:
        """For each id, the segments of its source from ``index-before`` to ``index+after`` (itself included)."""
        out = {}
        for i in ids:
            s = self.by_id.get(i)
            if s is None:
                continue
            lst = self.by_source[s.source_id]
            p = self.position[i]
            out[i] = lst[max(0, p - before) : p + after + 1]
        return out

"""Full-text search of a SQLite session (FTS5), and the term statistics it plans with.

Every namespace has full-text tables of its own (``fts_spaces.py``), so its scores and the terms
its searches keep depend on what it holds, never on another namespace.

Segment search drops query terms that most of the namespace's segments hold before asking FTS5
(see ``search_segments_text``). Their document frequencies come from the namespace's
``segments_vocab_N`` (``fts5vocab``), which counts a term's documents by walking its whole
doclist: ~60 µs for a term in 2% of 100k segments, ~2 ms for one in all of them, on every
search. ``TermDocs`` keeps the counts per connection while the database is unchanged: ``PRAGMA data_version`` moves when another connection commits,
``total_changes`` when this one writes (a rolled-back write moves it too), so a cached count is
always the count the session would read. Write sessions neither read nor fill it (their
uncommitted rows count for them alone).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from memory_substrate.models import SegmentHit, TextHit
from memory_substrate.storage.sqlite.fts_spaces import NamespaceFts, indexed

OBJECT_WEIGHTS = (10.0, 4.0, 2.0, 1.0)  # title > summary > body (payload) > meta
SEGMENT_WEIGHTS = (1.0, 0.5)
COMMON_TERM_SHARE = 0.05  # a query term in more segments than this is not worth ranking by
COMMON_TERM_FLOOR = 1000  # ... in a namespace of at least this many segments
OVERFETCH = 4  # index-ranked rows read per wanted row before the source filter
TERM_DOCS_MAX = 20_000  # cached terms per connection (cleared whole when full)


def fts_query(terms: Sequence[str]) -> str:
    """An OR query of quoted terms; quoting makes every token literal to FTS5."""
    quoted = ['"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms) if t]
    return " OR ".join(quoted)


class TermDocs:
    """Per-term segment document counts of one connection's database, per namespace (``space``:
    the namespace's vocabulary table), valid while ``PRAGMA data_version`` and the connection's
    ``total_changes`` stay the same. Ask inside a read transaction that has already read
    (``data_version`` then names its snapshot)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._df: dict[tuple[str, str], int] = {}

    def lookup(self, conn: sqlite3.Connection, space: str, terms: Sequence[str]) -> dict[str, int]:
        """The cached counts among ``terms``; everything is forgotten when the database changed."""
        key = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
        if key != self._key:
            self._key, self._df = key, {}
        df = self._df
        return {t: df[(space, t)] for t in terms if (space, t) in df}

    def store(self, space: str, counts: dict[str, int]) -> None:
        """Keep counts read under the key of the last ``lookup``."""
        if len(self._df) + len(counts) > TERM_DOCS_MAX:
            self._df = {}
        self._df.update(((space, t), n) for t, n in counts.items())


class SessionFullText(NamespaceFts):
    """The full-text reads of ``SQLiteSession``, in the namespace's own tables."""

    conn: sqlite3.Connection
    namespace: str
    writable: bool
    term_docs: TermDocs | None

    def search_objects_text(self, terms: Sequence[str], *, limit: int) -> list[TextHit]:
        match = fts_query(terms)
        tables = self.fts()
        if not match or tables is None:
            return []
        w, fts = OBJECT_WEIGHTS, tables.objects
        rows = self.conn.execute(
            f"SELECT o.id, -bm25({fts}, {w[0]}, {w[1]}, {w[2]}, {w[3]}) AS s FROM {fts} "
            f"JOIN objects o ON o.pk = {fts}.rowid "
            f"WHERE {fts} MATCH ? AND o.namespace = ? ORDER BY s DESC LIMIT ?",
            (match, self.namespace, limit),
        )
        return [TextHit(r[0], float(r[1])) for r in rows]

    def search_segments_text(
        self, terms: Sequence[str], *, limit: int, source_ids: Sequence[str] | None = None
    ) -> list[SegmentHit]:
        tables = self.fts()
        if tables is None:
            return []
        match = fts_query(self._selective_terms(terms))
        if not match:
            return []
        w, fts = SEGMENT_WEIGHTS, tables.segments
        # Rank inside the full-text index first and look up only the best rows: joining every
        # match before sorting dominates on large stores. If the source filter leaves too few of
        # those, fall back to ranking every match (exact, slower).
        inner = limit * OVERFETCH
        ranked = self.conn.execute(
            f"SELECT rowid, bm25({fts}, {w[0]}, {w[1]}) AS r FROM {fts} WHERE {fts} MATCH ? ORDER BY r LIMIT ?",
            (match, inner),
        ).fetchall()
        rows = self._in_scope(ranked, limit, source_ids)
        if len(rows) < limit and len(ranked) == inner:
            total = self.conn.execute(
                f"SELECT COUNT(*) FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
                (match, inner + 1),
            ).fetchone()[0]
            if total > inner:
                extra = ""
                filters: list[Any] = [self.namespace]
                if source_ids:
                    extra = f" AND s.source_id IN ({','.join('?' * len(source_ids))})"
                    filters.extend(source_ids)
                rows = self.conn.execute(
                    f"SELECT s.source_id, s.id, -bm25({fts}, {w[0]}, {w[1]}) AS score FROM {fts} "
                    f"JOIN segments s ON s.pk = {fts}.rowid "
                    f"WHERE {fts} MATCH ? AND s.namespace = ?{extra} ORDER BY score DESC LIMIT ?",
                    (match, *filters, limit),
                ).fetchall()
        return [SegmentHit(r[0], r[1], float(r[2])) for r in rows]

    def _in_scope(
        self, ranked: Sequence[tuple[int, float]], limit: int, source_ids: Sequence[str] | None
    ) -> list[tuple[str, str, float]]:
        """(source_id, segment_id, score) of the first ``limit`` ranked full-text rows that are
        segments of this namespace (and of ``source_ids``), in rank order. Rows are looked up a
        batch of ``limit`` at a time: without a source filter the first batch is the answer,
        where joining all the ranked rows read four times as many (~0.5 ms at 100k segments).
        (The namespace's own index holds only its rows; the check stays as a second guard.)"""
        if limit <= 0:
            return []
        allowed = set(source_ids) if source_ids else None
        out: list[tuple[str, str, float]] = []
        for lo in range(0, len(ranked), limit):
            batch = ranked[lo : lo + limit]
            found = {
                pk: (ns, src, sid)
                for pk, ns, src, sid in self.conn.execute(
                    f"SELECT pk, namespace, source_id, id FROM segments WHERE pk IN ({','.join('?' * len(batch))})",
                    [pk for pk, _ in batch],
                )
            }
            for pk, r in batch:
                row = found.get(pk)
                if row is not None and row[0] == self.namespace and (allowed is None or row[1] in allowed):
                    out.append((row[1], row[2], -r))
                    if len(out) == limit:
                        return out
        return out

    def _selective_terms(self, terms: Sequence[str]) -> list[str]:
        """Drop terms found in more than COMMON_TERM_SHARE of the namespace's segments, keeping
        at least one.

        Such terms carry almost no BM25 weight, yet an OR query must rank every segment that
        holds them; without them the candidate stream is the same and far cheaper.
        """
        terms = list(dict.fromkeys(t for t in terms if t))
        tables = self.fts()
        if len(terms) < 2 or tables is None:
            return terms
        # (This read also starts the session's snapshot, which ``TermDocs`` must key on.)
        total = indexed(self.conn, tables.segments)
        if total < COMMON_TERM_FLOOR:
            return terms
        space = tables.vocab
        cache = self.term_docs if not self.writable else None  # a write session sees uncommitted rows
        df = cache.lookup(self.conn, space, terms) if cache is not None else {}
        if missing := [t for t in terms if t not in df]:
            marks = ",".join("?" * len(missing))
            found = dict(
                self.conn.execute(f"SELECT term, doc FROM {space} WHERE term IN ({marks})", missing).fetchall()
            )
            counts = {t: found.get(t, 0) for t in missing}
            df.update(counts)
            if cache is not None:
                cache.store(space, counts)
        kept = [t for t in terms if df.get(t, 0) <= COMMON_TERM_SHARE * total]
        return kept or [min(terms, key=lambda t: df.get(t, 0))]

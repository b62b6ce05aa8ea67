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

Where even those terms would make FTS5 rank more rows than ``RANK_BUDGET`` (a large namespace
whose every query word is common), the search asks for the segments that hold all the query's
words first, then those that miss one (``storage/conjunctive.py``), and ranks only those: FTS5
scores every row an OR query matches, ~0.5 µs a row, so 80,000 matches cost 40 ms where the
rows that hold all three words of a query are a few hundred.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from memory_substrate.models import SegmentHit, TextHit
from memory_substrate.storage.conjunctive import RANK_BUDGET, Group, conjunctive_groups
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


def _keep_best(best: dict[int, float], rows: Iterable[tuple[int, float]]) -> dict[int, float]:
    """``best`` with ranked (rowid, bm25) rows added, a row seen twice keeping its better (lower)
    score."""
    for pk, r in rows:
        best[pk] = min(r, best.get(pk, r))
    return best


def _best_first(best: dict[int, float], n: int) -> list[tuple[int, float]]:
    """The ``n`` best rows, best first (ties by rowid)."""
    return sorted(best.items(), key=lambda kv: (kv[1], kv[0]))[:n]


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
        kept, groups, over = self._plan_terms(terms)
        match = fts_query(kept)
        if not match:
            return []
        w, fts = SEGMENT_WEIGHTS, tables.segments
        # Rank inside the full-text index first and look up only the best rows: joining every
        # match before sorting dominates on large stores. If the source filter leaves too few of
        # those, fall back to ranking every match (exact, slower).
        inner = limit * OVERFETCH
        ranked_sql = f"SELECT rowid, bm25({fts}, {w[0]}, {w[1]}) AS r FROM {fts} WHERE {fts} MATCH ? ORDER BY r LIMIT ?"
        # The same over the newest N matches only (FTS5 walks a term's rows in rowid order).
        capped_sql = (
            f"SELECT rowid, r FROM (SELECT rowid, bm25({fts}, {w[0]}, {w[1]}) AS r FROM {fts} "
            f"WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY r LIMIT ?"
        )
        ranked = self._conjunctive(capped_sql, groups, inner)
        if len(ranked) < inner:
            if over:  # even the rarest kept term is in more than RANK_BUDGET rows
                plain = self.conn.execute(capped_sql, (match, RANK_BUDGET, inner)).fetchall()
            else:
                plain = self.conn.execute(ranked_sql, (match, inner)).fetchall()
            if ranked:
                # Too few rows hold (all but one of) the words: those rank with the matches of
                # the kept terms, a row found both ways by its better score. The two scores count
                # different terms (the conjunction's asked forms, the kept terms), so this order
                # is close to the OR query's, not equal to it.
                plain = _best_first(_keep_best(dict(ranked), plain), inner)
            ranked = plain
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

    def _conjunctive(self, capped_sql: str, levels: list[list[Group]], inner: int) -> list[tuple[int, float]]:
        """The best ``inner`` rows holding every word of a group (a word: any of its asked forms),
        each ranked by the forms it was asked for (a row holding all words is found by every
        group; its best score is the one counting all of them), from the newest RANK_BUDGET rows
        of each group; levels asked in turn until ``inner`` rows are found; [] without levels."""
        best: dict[int, float] = {}
        for level in levels:
            for group in level:
                query = " AND ".join(f"({fts_query(word)})" for word in group)
                _keep_best(best, self.conn.execute(capped_sql, (query, RANK_BUDGET, inner)))
            if len(best) >= inner:
                break
        return _best_first(best, inner)

    def _plan_terms(self, terms: Sequence[str]) -> tuple[list[str], list[list[Group]], bool]:
        """(the terms an OR query ranks, the conjunctive groups to ask first (see
        ``conjunctive_groups``), whether even the rarest of those terms alone is in more than
        RANK_BUDGET rows).

        Terms found in more than COMMON_TERM_SHARE of the namespace's segments are dropped from
        the OR query, keeping at least one: such terms carry little BM25 weight, yet an OR query
        must rank every segment that holds them. When the kept terms still match more than
        RANK_BUDGET rows, the conjunction of the query's words is asked first.
        """
        terms = list(dict.fromkeys(t for t in terms if t))
        tables = self.fts()
        if tables is None:
            return terms, [], False
        # (This read also starts the session's snapshot, which ``TermDocs`` must key on.)
        total = indexed(self.conn, tables.segments)
        if total < COMMON_TERM_FLOOR or not terms:
            return terms, [], False
        df = self._term_docs(tables.vocab, terms)
        kept = [t for t in terms if df[t] <= COMMON_TERM_SHARE * total] if len(terms) > 1 else terms
        kept = kept or [min(terms, key=lambda t: df[t])]
        if sum(df[t] for t in kept) <= RANK_BUDGET:
            return kept, [], False
        return kept, conjunctive_groups(df, total), min(df[t] for t in kept) > RANK_BUDGET

    def _term_docs(self, space: str, terms: list[str]) -> dict[str, int]:
        """Each term's count of segments in the namespace (0 for a term none holds)."""
        cache = self.term_docs if not self.writable else None  # a write session sees uncommitted rows
        df = cache.lookup(self.conn, space, terms) if cache is not None else {}
        if missing := [t for t in terms if t not in df]:
            marks = ",".join("?" * len(missing))
            found = dict(
                self.conn.execute(
                    f"SELECT term, doc FROM {space} WHERE term IN ({marks})", missing
                ).fetchall()
            )
            counts = {t: found.get(t, 0) for t in missing}
            df.update(counts)
            if cache is not None:
                cache.store(space, counts)
        return df

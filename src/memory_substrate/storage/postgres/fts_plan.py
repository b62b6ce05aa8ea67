"""Which query terms may generate full-text candidates on a large store (PostgreSQL only).

A GIN index tells which rows hold a lexeme, not how often: ``ts_rank`` has to fetch every
matching row from the heap to rank it. A term held by most rows (the locator words ``index``,
``kind`` and ``message`` are in the metadata of every conversation turn; a speaker's name is in
half of them) turned the segment stream's query into a scan of the namespace (100k rows ranked,
130-200 ms, for one query in twenty of the scale bench). SQLite's FTS5 ranks those matches
from its index, and its bm25 gives such a term almost no weight anyway.

So on a namespace large enough for it to matter, terms are taken rarest first, by the
planner's own statistics (``pg_stats.most_common_elems`` of ``segment_search.tsv``, gathered by
ANALYZE), while their estimated matches fit a budget of rows (``CANDIDATE_BUDGET``); the
rarest term is always taken. The rest are *common*: they still count in ``ts_rank``, but a
row that holds only common terms is a candidate only when the selective terms find fewer rows
than asked for (and then from a capped scan, see ``PostgresReads.search_segments_text``).
Without statistics (a store never analysed) or on a small namespace every term is taken,
which is exactly the plain query. When even the rarest term alone is over the budget, the rows
holding all the terms (then all but one) are asked for first (``storage/conjunctive.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from memory_substrate.storage.conjunctive import Group, conjunctive_groups

# Estimated matching rows the candidate query may rank (about 10-20 ms of heap reads).
CANDIDATE_BUDGET = 12_000
# Statistics are re-read this often (ANALYZE runs far less often than searches).
STATS_TTL_S = 60.0


@dataclass
class _Stats:
    read_at: float = 0.0
    rows: float = 0.0  # pg_class.reltuples of segment_search (<= 0: never analysed)
    lexeme_freq: dict[str, float] = field(default_factory=dict)
    floor: float = 0.0  # the least frequency listed: an unlisted lexeme is rarer than this
    namespace_freq: dict[str, float] = field(default_factory=dict)
    other_namespace_freq: float = 0.0  # the fraction of rows of one namespace not listed


class TermStats:
    """Per-process cache of the segment full-text statistics, shared by every session."""

    def __init__(self, *, budget: int = CANDIDATE_BUDGET, ttl_s: float = STATS_TTL_S) -> None:
        self.budget = budget
        self.ttl_s = ttl_s
        self._stats = _Stats()
        self._lock = threading.Lock()

    def _current(self, conn: psycopg.Connection[Any]) -> _Stats:
        stats = self._stats
        if time.monotonic() - stats.read_at < self.ttl_s:
            return stats
        with self._lock:
            if time.monotonic() - self._stats.read_at >= self.ttl_s:
                self._stats = _read(conn)
            return self._stats

    def _estimates(
        self, conn: psycopg.Connection[Any], namespace: str, terms: Sequence[str]
    ) -> tuple[dict[str, float], float] | None:
        """(each term's estimated rows in the namespace, the namespace's rows); None without
        statistics or on a namespace within the budget."""
        stats = self._current(conn)
        if stats.rows <= 0 or not stats.lexeme_freq or len(terms) == 0:
            return None
        ns_rows = stats.rows * stats.namespace_freq.get(namespace, stats.other_namespace_freq)
        if ns_rows <= self.budget:
            return None
        return {t: stats.lexeme_freq.get(t, stats.floor) * ns_rows for t in terms}, ns_rows

    def conjunctive(
        self, conn: psycopg.Connection[Any], namespace: str, terms: Sequence[str]
    ) -> tuple[list[list[Group]], bool]:
        """(the groups to ask first, ``storage/conjunctive.py``; whether even the rarest term
        alone is estimated in more rows than the budget): ([], False) when it is not."""
        found = self._estimates(conn, namespace, terms)
        if found is None or min(found[0].values()) <= self.budget:
            return [], False
        return conjunctive_groups(*found), True

    def selective(
        self, conn: psycopg.Connection[Any], namespace: str, terms: Sequence[str]
    ) -> tuple[list[str], list[str]]:
        """(selective terms, common terms) of ``terms`` (already folded, distinct)."""
        found = self._estimates(conn, namespace, terms)
        if found is None:
            return list(terms), []
        est = found[0]
        keep: list[str] = []
        total = 0.0
        for t in sorted(terms, key=lambda t: (est[t], t)):
            if keep and total + est[t] > self.budget:
                break
            keep.append(t)
            total += est[t]
        kept = set(keep)
        return [t for t in terms if t in kept], [t for t in terms if t not in kept]


def _read(conn: psycopg.Connection[Any]) -> _Stats:
    """The segment table's row estimate, lexeme frequencies and namespace frequencies."""
    # anyarray columns are cast through their text form to arrays the client can read.
    row = conn.execute(
        "SELECT c.reltuples::float8, t.most_common_elems::text::text[], t.most_common_elem_freqs::float8[], "
        "ns.most_common_vals::text::text[], ns.most_common_freqs::float8[], ns.n_distinct::float8 "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_stats t ON t.schemaname = n.nspname AND t.tablename = 'segment_search' AND t.attname = 'tsv' "
        "LEFT JOIN pg_stats ns ON ns.schemaname = n.nspname AND ns.tablename = 'segment_search' AND ns.attname = 'namespace' "
        "WHERE c.oid = to_regclass('segment_search')"
    ).fetchone()
    out = _Stats(read_at=time.monotonic())
    if row is None or row[0] is None or row[0] <= 0 or not row[1] or not row[2]:
        return out
    rows, lexemes, lexeme_freqs, namespaces, namespace_freqs, distinct = row
    out.rows = float(rows)
    # most_common_elem_freqs ends with the least and greatest frequency and the null fraction.
    out.lexeme_freq = dict(zip(lexemes, lexeme_freqs[: len(lexemes)], strict=False))
    out.floor = float(lexeme_freqs[len(lexemes)]) if len(lexeme_freqs) > len(lexemes) else 0.0
    namespaces, namespace_freqs = namespaces or [], namespace_freqs or []
    out.namespace_freq = dict(zip(namespaces, namespace_freqs, strict=False))
    distinct = float(distinct or 0.0)
    if distinct < 0:  # a fraction of the rows
        distinct = -distinct * out.rows
    others = max(1.0, distinct - len(namespaces))
    out.other_namespace_freq = max(0.0, 1.0 - sum(namespace_freqs)) / others
    return out

"""Full-text helpers: fold text the way the embedded store's tokenizer does, and build tsqueries.

The service hands the store text that is already tokenised (lower-cased words, stems, CJK
bigrams separated by spaces), so the 'simple' text-search configuration only has to split
on whitespace. Two details keep PostgreSQL's matching equal to SQLite FTS5's
``unicode61 remove_diacritics 2``: Latin diacritics are folded on both the indexed and the
query side, and every query term is quoted so no term can be read as tsquery syntax.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

import psycopg

log = logging.getLogger(__name__)

# Weights for ts_rank, in PostgreSQL's {D, C, B, A} order. Objects: title A, summary B,
# body C, meta D (ratios as the embedded store's bm25 weights 10:4:2:1). Segments: body A, meta B.
OBJECT_WEIGHTS = "{0.1,0.2,0.4,1.0}"
SEGMENT_WEIGHTS = "{0.1,0.2,0.5,1.0}"

# The GIN indexes of the full-text columns (schema.py).
GIN_INDEXES = ("segment_search_fts", "objects_fts")

# A tsvector holds at most 1 MB; index text beyond this many characters per field is not indexed.
MAX_FIELD_CHARS = 200_000


class _FoldTable(dict[int, str]):
    """A lazily filled ``str.translate`` table: Latin letter + combining marks -> the letter."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        decomposed = unicodedata.normalize("NFD", ch)
        base = decomposed[0]
        if (
            len(decomposed) > 1
            and ord(base) < 0x250
            and all(unicodedata.combining(c) for c in decomposed[1:])
        ):
            out = base
        else:
            out = ch
        self[code] = out
        return out


_FOLD = _FoldTable()


def fold(text: str) -> str:
    """Remove diacritics from Latin letters (as FTS5 ``remove_diacritics 2``); CJK is untouched."""
    if text.isascii():
        return text
    return text.translate(_FOLD)


def field_text(text: str) -> str:
    """Index text for one tsvector field: folded and capped."""
    return fold(text[:MAX_FIELD_CHARS])


def tsquery(terms: Sequence[str]) -> str:
    """An OR query of quoted terms for ``to_tsquery('simple', ...)``; '' when there is no term."""
    quoted = []
    for term in dict.fromkeys(fold(t) for t in terms if t):
        if not term.strip():
            continue
        quoted.append("'" + term.replace("\\", "\\\\").replace("'", "''") + "'")
    return " | ".join(quoted)


def tsquery_groups(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    """A query matching rows that hold every word of at least one group, a word by any of its
    forms: ``(('car' | 'carpet') & 'clean') | ...``."""
    return " | ".join("(" + " & ".join(f"({tsquery(word)})" for word in group) + ")" for group in groups)


def merge_pending(conn: psycopg.Connection[Any], stop: threading.Event | None = None) -> int:
    """Move the entries GIN keeps in its *pending list* into the full-text indexes proper.

    GIN indexes take inserts into an unordered pending list (``fastupdate``, up to
    ``gin_pending_list_limit``, 4 MB by default) that every full-text query scans in full until
    (auto)VACUUM merges it. After a bulk load of 100k turns the two lists held 183 and 250 pages,
    and the segment full-text query took 3.9 / 4.7 ms p50 / p95 against 3.0 / 3.8 ms once they
    were merged. The deferred index build calls this after bulk writes, so the merge happens
    there, off the search path, rather than whenever autovacuum gets to it. Returns the pages moved;
    a role that does not own an index cannot merge it (autovacuum still will), which is logged,
    not raised. ``stop`` (the idle builder closing) ends it between indexes.
    """
    moved = 0
    for index in GIN_INDEXES:
        if stop is not None and stop.is_set():
            break
        try:
            row = conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (index,)).fetchone()
        except psycopg.Error as exc:
            log.info("full-text pending list of %s not merged: %s", index, exc)
            continue
        moved += int(row[0]) if row and row[0] else 0
    return moved

"""Full-text helpers: fold text the way the embedded store's tokenizer does, and build tsqueries.

The service hands the store text that is already tokenised (lower-cased words, stems, CJK
bigrams separated by spaces), so the 'simple' text-search configuration only has to split
on whitespace. Two details keep PostgreSQL's matching equal to SQLite FTS5's
``unicode61 remove_diacritics 2``: Latin diacritics are folded on both the indexed and the
query side, and every query term is quoted so no term can be read as tsquery syntax.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

# Weights for ts_rank, in PostgreSQL's {D, C, B, A} order. Objects: title A, summary B,
# body C, meta D (ratios as the embedded store's bm25 weights 10:4:2:1). Segments: body A, meta B.
OBJECT_WEIGHTS = "{0.1,0.2,0.4,1.0}"
SEGMENT_WEIGHTS = "{0.1,0.2,0.5,1.0}"

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

"""The full-text index's terms, shared by the write path (indexing) and the read path (queries).

Both sides produce the same terms, so a store only needs a whitespace-token full-text index:
words are normalised (``fold``: lower case, NFKC, accents stripped) and split by the one
tokenizer (``retrieval.terms.tokenize``: CJK runs become overlapping bigrams, single characters
for one-character runs, which makes Chinese, Japanese and Korean searchable without a
language-specific tokenizer on any backend), with a light stem added.

One normaliser, two term sets (docs/architecture.md, "Text"): this module's terms keep each
word's surface form beside its stem, for the full-text candidate streams; ``retrieval.terms``'s
``index_terms`` keep the stems alone, stopwords dropped, for the ranker's BM25.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from memory_substrate.analysis import analyse_words
from memory_substrate.analysis.english import fold
from memory_substrate.analysis.english import stem as _stem
from memory_substrate.analysis.stopwords import ENGLISH as STOPWORDS
from memory_substrate.retrieval.terms import tokenize

# Domain vocabulary: a query term pulls in its group (and a type hint) so that an agent asking
# for "待办项" finds work items titled "task" and the reverse.
DOMAIN_GROUPS: list[tuple[frozenset[str], str | None]] = [
    (
        frozenset({"待办项", "待办", "todo", "todos", "task", "tasks", "work_item", "workitem", "任务"}),
        "work_item",
    ),
    (frozenset({"decision", "decisions", "decided", "决策", "决定", "adr"}), None),
    (frozenset({"procedure", "procedures", "howto", "runbook", "步骤", "流程"}), None),
    (frozenset({"bug", "bugs", "defect", "缺陷", "故障"}), None),
    (frozenset({"fact", "facts", "knowledge", "知识", "事实"}), "knowledge"),
    (frozenset({"source", "sources", "evidence", "证据", "来源"}), "source"),
    (frozenset({"activity", "activities", "session", "活动"}), "activity"),
]


def tokens(text: str) -> list[str]:
    """Surface tokens in order: normalised words, and CJK runs as bigrams (``retrieval.terms.tokenize``)."""
    return tokenize(text)


# Words repeat: a long text's words are folded once each (a 200,000-character Chinese message
# is about 180,000 words).
_fold_word = lru_cache(maxsize=65_536)(fold)


def _analysed(text: str, *, drop_stopwords: bool, language: str | None = None) -> list[str] | None:
    """Surface words and their terms for text in a language ``analysis`` handles (else None);
    ``language`` as ``analysis.analyse_words`` takes it."""
    words = analyse_words(text, drop_stopwords=drop_stopwords, language=language)
    if words is None:
        return None
    out: list[str] = []
    for word, terms in words:
        out.append(_fold_word(word))  # as ``tokens`` gives it, for unanalysed queries
        out.extend(t for t in terms if t != out[-1])
    return out


def index_text(*parts: str | None) -> str:
    """The string a full-text index stores for some text: tokens plus their stems."""
    words: list[str] = []
    for part in parts:
        if not part:
            continue
        analysed = _analysed(part, drop_stopwords=False)
        if analysed is not None:
            words.extend(analysed)
            continue
        for tok in tokens(part):
            words.append(tok)
            stem = _stem(tok)
            if stem != tok:
                words.append(stem)
    return " ".join(words)


def query_terms(text: str, language: str | None = None) -> list[str]:
    """Content terms of a query (stopwords dropped unless nothing else is left), stems included.

    ``language``: a stored text's language (``Segment.language``), which spares the detector."""
    if len(text) <= _CACHED_CHARS:
        return list(_query_terms_cached(text, language))
    return _query_terms(text, language)


# A compile judges the same pooled turns several times (episode match, coverage) and the next
# compile mostly the same ones again; each analysis detects the text's language first.
_CACHED_CHARS = 2_000


@lru_cache(maxsize=16_384)
def _query_terms_cached(text: str, language: str | None) -> tuple[str, ...]:
    return tuple(_query_terms(text, language))


def _query_terms(text: str, language: str | None = None) -> list[str]:
    analysed = _analysed(text, drop_stopwords=True, language=language)
    if analysed:
        return list(dict.fromkeys(analysed))
    toks = tokens(text)
    content = [t for t in toks if t not in STOPWORDS] or toks
    out: list[str] = []
    for tok in content:
        out.append(tok)
        stem = _stem(tok)
        if stem != tok:
            out.append(stem)
    return list(dict.fromkeys(out))


_WORD = re.compile(r"[^\W_]+")


def _latin_folded(word: str) -> str:
    """``word`` with the accents of its Latin letters removed: what both backends' full-text indexes
    fold themselves (SQLite FTS5 ``remove_diacritics 2``, ``storage/postgres/fts.py``)."""
    out = []
    for ch in word:
        parts = unicodedata.normalize("NFD", ch)
        latin = len(parts) > 1 and ord(parts[0]) < 0x250 and all(unicodedata.combining(c) for c in parts[1:])
        out.append(parts[0] if latin else ch)
    return "".join(out)


def older_forms(text: str, terms: Iterable[str]) -> list[str]:
    """The forms that full-text rows written with the older fold hold for ``terms``
    (``query_terms(text)``) where ``fold`` strips an accent no backend's index folds (Greek tonos,
    Cyrillic й and ё): such rows kept each word as NFKC gave it (``καλημέρα``), the query says
    ``καλημερα``. Asked beside the terms, they keep such a store searchable until ``reindex``
    rewrites its rows; Latin accents need none (the indexes fold them on both sides)."""
    wanted = set(terms)
    out: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if word.isascii():
            continue
        new = fold(word)
        if new in wanted and new != word and _latin_folded(word) != new and word not in out:
            out.append(word)
    return out


def full_text_terms(text: str) -> list[str]:
    """``query_terms(text)`` and their ``older_forms``: the terms a full-text query asks for."""
    terms = query_terms(text)
    return terms + older_forms(text, terms)


def expand_terms(text: str, terms: Iterable[str]) -> tuple[list[str], list[str]]:
    """Domain expansions of a query: (extra terms, inferred object types)."""
    lowered = fold(text)
    have = set(terms)
    extra: list[str] = []
    types: list[str] = []
    for group, object_type in DOMAIN_GROUPS:
        if any(g in have or (not g.isascii() and g in lowered) for g in group):
            for g in sorted(group):
                for t in tokens(g):
                    if t not in have and t not in extra:
                        extra.append(t)
            if object_type and object_type not in types:
                types.append(object_type)
    return extra, types


def normalize_phrase(text: str) -> str:
    return " ".join(tokens(text))

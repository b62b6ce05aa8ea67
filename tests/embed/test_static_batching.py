"""Embedding a large batch gives the vectors of the plain reduceat sum over all tokens, to float
rounding (the implementation sums in slices, one reduce per text, several times faster; numpy
orders the additions differently, so the last bits may differ, by under 1e-6 on unit vectors)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from memory_substrate.embed import static
from memory_substrate.embed.static import StaticEmbedder


def _reference(emb: StaticEmbedder, texts: list[str]) -> np.ndarray:
    (codes, scales), tok = emb._load()
    matrix = codes.astype(np.float32) * scales[:, None]  # every row's vector, as the model defines it
    out = np.zeros((len(texts), matrix.shape[1]), dtype=np.float32)
    out[:, 0] = 1.0
    ids: list[int] = []
    starts: list[int] = []
    rows: list[int] = []
    for i, text in enumerate(texts):
        tids = tok.encode(text[: emb.max_chars])
        if tids:
            rows.append(i)
            starts.append(len(ids))
            ids.extend(tids)
    sums = np.add.reduceat(matrix[np.asarray(ids)], np.asarray(starts), axis=0)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out[np.asarray(rows)] = sums / norms
    return out


def test_large_batches_match_the_plain_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    emb = StaticEmbedder()
    rng = random.Random(5)
    words = ["memory", "graph", "alice", "payments", "zzqx", "lisbon", "the", "kuzu", "déjà", "vu", "42"]
    texts = [" ".join(rng.choices(words, k=rng.randint(0, 400))) for _ in range(300)] + ["", "§§§"]
    monkeypatch.setattr(static, "GATHER_TOKENS", 500)  # many slices, some holding one long text
    batched, reference = emb.embed_documents(texts), _reference(emb, texts)
    assert np.allclose(batched, reference, rtol=0, atol=1e-6)
    assert np.allclose(emb.embed_documents(texts[:1]), reference[:1], rtol=0, atol=1e-6)
    # Texts with no known token keep the unit vector on the first axis.
    assert np.array_equal(batched[-2:], reference[-2:])

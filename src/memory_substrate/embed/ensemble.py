"""Several embedders as one: their vectors side by side, each part weighted, the whole unit length.

The cosine of two such vectors is the weighted mean of the parts' cosines (weights squared, summing
to one), so an English-strong model and a multilingual one can share one store: English questions
keep the first's precision and a question in one language still finds a statement in another.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.base import Embedder


class EnsembleEmbedder:
    def __init__(self, parts: Sequence[Embedder], weights: Sequence[float]) -> None:
        if len(parts) != len(weights) or not parts:
            raise ValueError("one weight per part")
        total = math.sqrt(sum(w * w for w in weights))
        self.parts = list(parts)
        self.weights = [w / total for w in weights]

    @property
    def name(self) -> str:
        inner = "+".join(f"{p.name}*{w:.3f}" for p, w in zip(self.parts, self.weights, strict=True))
        return f"ensemble:{inner}"

    @property
    def dimensions(self) -> int:
        return sum(p.dimensions for p in self.parts)

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        blocks = [p.embed_documents(texts) * np.float32(w) for p, w in zip(self.parts, self.weights, strict=True)]
        return np.ascontiguousarray(np.concatenate(blocks, axis=1), dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.embed_documents([text])[0]

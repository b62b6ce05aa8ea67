"""The embedding port: a narrow protocol every provider implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    ``name`` identifies the model (stored with every vector, so that a model change is
    detected and answered by ``reindex``); ``dimensions`` is the vector length.
    """

    name: str
    dimensions: int

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Return an array of shape (len(texts), dimensions), rows L2-normalised."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Return one vector of shape (dimensions,): L2-normalised, or scaled so that its inner
        products with documents are the intended scores (``embed.gated``: an English query)."""
        ...

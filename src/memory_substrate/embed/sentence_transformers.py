"""Embeddings from a local sentence-transformers model (optional extra; needs torch).

Only a local path (or a model already in the local cache) is used: nothing is downloaded
(``HF_HUB_OFFLINE=1`` is set for the load).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.errors import NotAvailableError
from memory_substrate.heap import settle_after_load


def _fingerprint(path: Path) -> str:
    """Short hash of a local model's config files, so a changed model changes the name."""
    h = hashlib.sha256()
    for name in ("config.json", "modules.json", "config_sentence_transformers.json", "tokenizer.json"):
        p = path / name
        if p.is_file():
            h.update(p.read_bytes())
    weights = sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin"))
    for w in weights:
        h.update(f"{w.name}:{w.stat().st_size}".encode())
    return h.hexdigest()[:12]


class SentenceTransformerEmbedder:
    """``Embedder`` over ``sentence_transformers.SentenceTransformer`` loaded lazily from a local path."""

    def __init__(self, model: str, *, device: str = "cpu", batch_size: int = 32) -> None:
        if not model:
            raise ValueError("the 'sentence-transformers' embedder needs a local model path")
        self.model_path = model
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        p = Path(model).expanduser()
        ident = f"{p.name}@{_fingerprint(p)}" if p.is_dir() else model
        self.name = f"sentence-transformers:{ident}"
        self._dimensions: int | None = None

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError as exc:
                        raise NotAvailableError(
                            "the 'sentence-transformers' embedder is not installed: "
                            "pip install 'memory-substrate[sentence-transformers]'",
                            details={"provider": "sentence-transformers", "extra": "sentence-transformers"},
                        ) from exc
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    self._model = SentenceTransformer(
                        str(Path(self.model_path).expanduser()), device=self.device
                    )
                    settle_after_load()  # long-lived state (memory_substrate.heap)
        return self._model

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            m = self._load()
            get = getattr(m, "get_sentence_embedding_dimension", None)
            dim = get() if get is not None else None
            self._dimensions = int(dim) if dim else int(self.embed_query("probe").shape[0])
        return self._dimensions

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        m = self._load()
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        out = m.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector

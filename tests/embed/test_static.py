"""The bundled static embedder: offline, deterministic, normalised, lazy, fast enough."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from memory_substrate.embed import Embedder, StaticEmbedder
from memory_substrate.embed.static import DATA_DIR, StaticModelMissing
from memory_substrate.embed.wordpiece import WordPieceTokenizer, basic_split


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return StaticEmbedder()


def test_bundled_artefact_is_small_and_attributed() -> None:
    files = {p.name: p.stat().st_size for p in DATA_DIR.iterdir() if p.is_file()}
    assert {"minilm_l6_static.npz", "vocab.txt", "manifest.json", "NOTICE"} <= set(files)
    assert sum(files.values()) < 10_500_000
    notice = (DATA_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in notice and "Apache" in notice


def test_implements_protocol_and_name_identifies_model(embedder: StaticEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    manifest = json.loads((DATA_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert embedder.name.startswith("static:minilm-l6")
    assert manifest["sha256"][:12] in embedder.name
    assert embedder.dimensions == manifest["dims"] == 256


def test_construction_and_name_do_not_load_vectors() -> None:
    e = StaticEmbedder()
    assert not e.loaded
    _ = e.name, e.dimensions
    assert not e.loaded
    e.embed_query("hello")
    assert e.loaded


def test_rows_are_unit_length_float32(embedder: StaticEmbedder) -> None:
    texts = ["Hello there!", "A much longer sentence about painting a sunrise by the lake.", "", "😀😀"]
    v = embedder.embed_documents(texts)
    assert v.shape == (4, embedder.dimensions)
    assert v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    q = embedder.embed_query("Hello there!")
    assert q.shape == (embedder.dimensions,)
    assert np.allclose(q, v[0], atol=1e-6)
    assert embedder.embed_documents([]).shape == (0, embedder.dimensions)


def test_deterministic_across_instances(embedder: StaticEmbedder) -> None:
    texts = ["We went camping at the beach last weekend.", "Café naïve résumé", "東京タワー"]
    a = embedder.embed_documents(texts)
    b = StaticEmbedder().embed_documents(texts)
    assert np.array_equal(a, b)
    # batching does not change a row
    assert np.array_equal(a[1], embedder.embed_documents([texts[1]])[0])


def test_similar_sentences_closer_than_unrelated(embedder: StaticEmbedder) -> None:
    a, b, c = embedder.embed_documents(
        ["I adopted a puppy last week", "We got a new dog recently", "The stock market fell sharply today"]
    )
    assert float(a @ b) > float(a @ c) + 0.1
    assert float(a @ b) > float(b @ c) + 0.1
    q = embedder.embed_query("Which city is the capital of France?")
    docs = embedder.embed_documents(["Paris is the capital of France.", "My cat likes to sleep on the sofa."])
    assert float(docs[0] @ q) > float(docs[1] @ q)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hello, World! It's 3:45pm.",
            ["hello", ",", "world", "!", "it", "'", "s", "3", ":", "45", "##pm", "."],
        ),
        ("Café naïve résumé", ["cafe", "naive", "resume"]),
        ("東京タワー is tall", ["東", "京", "タ", "##ワ", "##ー", "is", "tall"]),
        ("unaffable jumbojet", ["una", "##ffa", "##ble", "ju", "##mbo", "##jet"]),
        ("e-mail@x.com (test)", ["e", "-", "mail", "@", "x", ".", "com", "(", "test", ")"]),
    ],
)
def test_wordpiece_matches_reference_bert_tokenizer(text: str, expected: list[str]) -> None:
    # expected values are what Hugging Face's BertTokenizer (all-MiniLM-L6-v2) produces
    vocab = (DATA_DIR / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert WordPieceTokenizer(vocab).tokenize(text) == expected


def test_wordpiece_unknown_and_control_characters() -> None:
    tok = WordPieceTokenizer(["[PAD]", "[UNK]", "ab", "##c", "x"])
    assert tok.tokenize("abc x\x00\x01 zz") == ["ab", "##c", "x", "[UNK]"]
    assert tok.encode("zz abc") == [2, 3]  # unknown words dropped by default
    assert basic_split("A\u00a0B\tC") == ["a", "b", "c"]


def test_name_changes_when_model_changes(tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(DATA_DIR, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["sha256"] = "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert StaticEmbedder(copy).name != StaticEmbedder().name


def test_missing_model_raises_clear_error(tmp_path: Path) -> None:
    e = StaticEmbedder(tmp_path / "nowhere")
    with pytest.raises(StaticModelMissing, match="not found"):
        e.embed_query("x")


def test_throughput_one_core_order_of_magnitude(embedder: StaticEmbedder) -> None:
    # Loose floor (the measured figure is ~10k turns/s); catches an accidental O(n^2) or per-call load.
    base = [
        "Hey! I just got back from a camping trip with the kids, we roasted marshmallows.",
        "That sounds amazing, how long did you stay at the lake?",
        "We went to a pottery class yesterday and made bowls [image: a photo of a bowl]",
    ]
    texts = [f"{t} #{i}" for i in range(700) for t in base]
    embedder.embed_query("warm up")
    t0 = time.perf_counter()
    embedder.embed_documents(texts)
    rate = len(texts) / (time.perf_counter() - t0)
    assert rate > 500, rate

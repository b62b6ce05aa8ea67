"""document_chunker.v1: Markdown and plain-text chunk boundaries and line ranges."""

from __future__ import annotations

import itertools

import pytest

from memory_substrate.ingest.adapters.chunker import (
    Chunk,
    ChunkLimits,
    chunk_markdown,
    chunk_text,
    split_lines,
)

GUIDE = """---
title: Guide
tags: [a, b]
---
Intro before any heading.

# Install

Run this:

```sh
# this is a shell comment, not a heading
pip install thing
```

| flag | meaning |
|------|---------|
| -v   | verbose |

## Options
### Deep
Deep text.
## Second
Setext Title
============
Under setext.
"""


def _by_heading(chunks: list[Chunk], heading: str) -> Chunk:
    return next(c for c in chunks if c.heading == heading)


def _assert_text_matches_lines(text: str, chunks: list[Chunk]) -> None:
    lines = split_lines(text)
    for c in chunks:
        if c.part_count and len(c.text) < len("\n".join(lines[c.line_start - 1 : c.line_end])):
            continue  # a char-split piece of one long line
        assert c.text == "\n".join(lines[c.line_start - 1 : c.line_end]), c


def test_frontmatter_is_its_own_chunk() -> None:
    chunks = chunk_markdown(GUIDE, "guide.md")
    fm = chunks[0]
    assert (fm.chunk_kind, fm.line_start, fm.line_end, fm.heading_path) == ("frontmatter", 1, 4, [])
    assert fm.text.startswith("---\ntitle: Guide")
    # The closing "---" must not turn the frontmatter's last line into a setext heading.
    assert all(c.heading != "tags: [a, b]" for c in chunks)


def test_preamble_before_first_heading() -> None:
    chunks = chunk_markdown(GUIDE, "guide.md")
    pre = chunks[1]
    assert (pre.chunk_kind, pre.line_start, pre.line_end) == ("preamble", 5, 5)
    assert pre.text == "Intro before any heading."


def test_hash_inside_code_fence_is_not_a_heading_and_table_stays_in_section() -> None:
    chunks = chunk_markdown(GUIDE, "guide.md")
    headings = [c.heading for c in chunks if c.chunk_kind == "section"]
    assert headings == ["Install", "Options", "Deep", "Second", "Setext Title"]
    install = _by_heading(chunks, "Install")
    assert (install.line_start, install.line_end) == (7, 18)
    assert "# this is a shell comment, not a heading" in install.text
    assert "| -v   | verbose |" in install.text
    assert "```" in install.text


def test_heading_breadcrumbs_push_and_pop() -> None:
    chunks = chunk_markdown(GUIDE, "guide.md")
    assert _by_heading(chunks, "Deep").heading_path == ["Install", "Options", "Deep"]
    assert _by_heading(chunks, "Second").heading_path == ["Install", "Second"]
    # A setext H1 starts a new top-level path and spans its underline.
    setext = _by_heading(chunks, "Setext Title")
    assert setext.heading_path == ["Setext Title"]
    assert (setext.line_start, setext.line_end) == (24, 26)


def test_chunk_text_is_exactly_its_line_range() -> None:
    chunks = chunk_markdown(GUIDE, "guide.md")
    _assert_text_matches_lines(GUIDE, chunks)
    loc = _by_heading(chunks, "Deep").locator()
    assert loc == {"kind": "line", "path": "guide.md", "line_start": 21, "line_end": 22,
                   "heading_path": ["Install", "Options", "Deep"]}  # fmt: skip


def test_oversized_section_is_split_with_overlap() -> None:
    body = "\n".join(f"line {i} " + "x" * 20 for i in range(1, 151))
    text = f"# Big\n{body}\n# After\nshort\n"
    limits = ChunkLimits(max_lines=40, max_chars=100_000, overlap_lines=3)
    chunks = chunk_markdown(text, "big.md", limits=limits)
    parts = [c for c in chunks if c.heading == "Big"]
    assert len(parts) >= 4
    assert [p.part for p in parts] == list(range(1, len(parts) + 1))
    assert all(p.part_count == len(parts) for p in parts)
    assert all(p.line_end - p.line_start + 1 <= 40 for p in parts)
    for a, b in itertools.pairwise(parts):
        assert b.line_start == a.line_end - 2  # three shared lines
    assert parts[0].line_start == 1 and parts[-1].line_end == 151
    assert all(p.heading_path == ["Big"] for p in parts)
    assert _by_heading(chunks, "After").part is None
    _assert_text_matches_lines(text, chunks)


def test_oversized_split_prefers_block_boundaries_and_char_limit() -> None:
    para = "\n".join(["word " * 10] * 5)  # five-line paragraphs of 50 chars per line
    text = "# S\n\n" + "\n\n".join([para] * 20) + "\n"
    limits = ChunkLimits(max_lines=200, max_chars=1000, overlap_lines=0)
    parts = [c for c in chunk_markdown(text, limits=limits) if c.heading == "S"]
    assert len(parts) > 1
    assert all(len(p.text) <= 1000 for p in parts)
    # Cuts land on paragraph starts: each later part begins with a paragraph's first line.
    assert all(p.text.startswith("word") or p.text.startswith("\n") for p in parts[1:])


def test_one_huge_line_is_cut_by_characters_with_same_locator() -> None:
    text = "# Min\n" + "a" * 9000 + "\n"
    parts = [c for c in chunk_markdown(text, limits=ChunkLimits(max_chars=4000)) if c.heading == "Min"]
    assert len(parts) >= 3
    assert all(len(p.text) <= 4000 for p in parts)
    assert "".join(p.text for p in parts).count("a") == 9000


def test_crlf_line_numbers() -> None:
    text = "# A\r\none\r\n\r\n# B\r\ntwo\r\n"
    chunks = chunk_markdown(text)
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [("A", 1, 2), ("B", 4, 5)]


def test_heading_inside_blockquote_does_not_split() -> None:
    chunks = chunk_markdown("# Top\n\n> # quoted\n> text\n")
    assert [c.heading for c in chunks] == ["Top"]


def test_chunk_text_groups_paragraphs_and_windows_long_ones() -> None:
    small = "first para\nline two\n\nsecond para\n"
    long_para = "\n".join(f"row {i}" for i in range(100))
    text = small + "\n" + long_para + "\n"
    chunks = chunk_text(text, "notes.txt", limits=ChunkLimits(max_lines=30, overlap_lines=3))
    assert (chunks[0].chunk_kind, chunks[0].line_start, chunks[0].line_end) == ("paragraph", 1, 4)
    windows = [c for c in chunks if c.chunk_kind == "window"]
    assert windows[0].line_start == 6 and windows[-1].line_end == 105
    assert all(b.line_start == a.line_end - 2 for a, b in itertools.pairwise(windows))
    assert all(c.heading_path == [] and c.path == "notes.txt" for c in chunks)
    _assert_text_matches_lines(text, chunks)


def test_empty_inputs() -> None:
    assert chunk_markdown("") == []
    assert chunk_text("\n\n  \n") == []


@pytest.mark.parametrize("kwargs", [{"max_lines": 1}, {"max_chars": 10}, {"overlap_lines": 59}])
def test_limits_reject_nonsense(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        ChunkLimits(**kwargs)

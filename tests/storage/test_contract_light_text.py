"""Light segment reads (ranking) return each turn's text exactly as the whole-row reads do.

PostgreSQL stores segment text as a JSON string and decodes a light read's texts in one batch;
quotes, backslashes, escapes, line separators and non-Latin text must come back unchanged, on
both backends."""

from __future__ import annotations

from memory_substrate.storage.base import Store
from tests.storage.builders import seg, seg_row

TEXTS = [
    'she said "hi" \\ and left',
    "line one\nline two\ttabbed\r\n",
    "emoji 🎉, CJK 数据库, Hangul 한국어, accents café",
    "separators \u2028 \u2029 and a lone \\u0041 escape-looking text",
    "",
    '[1, 2] {"not": "json"}',
]


def test_light_reads_keep_text_exactly(store: Store, namespace: str) -> None:
    rows = [seg_row(seg("src:t", n, text, name="ana")) for n, text in enumerate(TEXTS, 1)]
    with store.write(namespace) as s:
        s.insert_segments(rows)
    keys = [("src:t", f"seg-{n}") for n in range(1, len(TEXTS) + 1)]
    with store.read(namespace) as s:
        full = {g.id: g.text for g in s.get_segments_by_keys(keys)}
        by_keys = {g.id: g.text for g in s.get_segments_by_keys(keys, light=True)}
        windows = {g.id: g.text for g in s.segment_windows([("src:t", 0, len(TEXTS))], light=True)}
    expected = {f"seg-{n}": text for n, text in enumerate(TEXTS, 1)}
    assert full == by_keys == windows == expected

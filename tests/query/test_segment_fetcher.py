"""The segment ranker's store adapter (``search/segments.py``) gives the records the ranker's
contract describes, however it builds them: windows are each key's turns from ``before``
positions before it to ``after`` after it, in order; light records equal the ones the
dataclass constructor makes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from memory_substrate import Memory
from memory_substrate.retrieval.types import RankSegment, stored_segment
from memory_substrate.search.segments import _Fetcher


def test_stored_segment_equals_the_constructor() -> None:
    when = datetime(2024, 5, 1, tzinfo=UTC)
    fast = stored_segment("s#seg-1", "hello there", "s", 3, when, "ana", ["hello", "there"])
    slow = RankSegment("s#seg-1", "hello there", "s", 3, when, "ana", None, ["hello", "there"])
    assert fast == slow
    assert vars(fast) == vars(slow)
    assert fast.vector is None and list(fast.terms or []) == ["hello", "there"]


# (before, after, span read ahead for every other key first, if any)
SPANS: list[tuple[int, int, tuple[int, int] | None]] = [
    (3, 2, None),
    (0, 0, None),
    (2, 5, None),
    (3, 2, (3, 2)),
    (2, 5, (3, 2)),
    (1, 1, (3, 2)),
]


def _fill(mem: Memory) -> list[str]:
    ids = []
    for c, turns in enumerate((12, 3, 7)):
        msgs = [
            {
                "role": "user",
                "name": "ana" if i % 2 else "bo",
                "content": f"turn {i} of talk {c}",
                "created_at": f"2024-0{c + 1}-0{1 + i % 9}T10:00:00+00:00",
            }
            for i in range(turns)
        ]
        ids.append(mem.ingest("conversation", {"title": f"talk {c}", "messages": msgs})["source_id"])
    return ids


def test_neighbours_are_each_keys_window_in_order(make_settings: Any, namespace: str) -> None:
    mem = Memory(make_settings(embedder="none"), namespace=namespace)
    try:
        sources = _fill(mem)
        with mem.store.read(mem.namespace) as session:
            every = {src: session.get_segments(src) for src in sources}
            # The first and last turns of each talk, a middle one, and two turns of one talk whose
            # windows overlap.
            picks = [
                (src, segs[k]) for src, segs in every.items() for k in {0, len(segs) // 2, len(segs) - 1}
            ]
            picks.append((sources[0], every[sources[0]][4]))
            keys = [f"{src}#{seg.id}" for src, seg in picks]
            for before, after, early in SPANS:
                fetch = _Fetcher(session, None)
                if (
                    early is not None
                ):  # some windows read ahead (the full-text hits, while vectors are searched)
                    fetch.prefetch(keys[::2], *early)
                hits = fetch.segments(keys)
                assert list(hits) == keys
                got = fetch.neighbours(keys, before, after)
                for src, seg in picks:
                    want = [
                        f"{src}#{s.id}"
                        for s in every[src]
                        if seg.ordinal - before <= s.ordinal <= seg.ordinal + after
                    ]
                    window = got[f"{src}#{seg.id}"]
                    assert [w.id for w in window] == want
                    assert [w.index for w in window] == sorted(cast(list[int], [w.index for w in window]))
                    by_id = {s.id: s for s in every[src]}
                    for w in window:
                        row = by_id[w.id.split("#", 1)[1]]
                        assert (w.text, w.source_id, w.index, w.speaker) == (
                            row.text,
                            src,
                            row.ordinal,
                            row.metadata.get("name"),
                        )
                        assert w.created_at is not None and w.terms
    finally:
        mem.close()

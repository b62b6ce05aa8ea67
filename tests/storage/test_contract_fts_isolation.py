"""Contract: what one namespace holds never moves another's full-text results (both backends).

SQLite's FTS5 ranks with bm25 over its table's statistics, and segment search leaves out the
query terms most segments hold. With one index for every namespace, namespace B's writes changed
namespace A's scores and which of A's query terms were kept, so a caller of A could learn whether
a term was frequent in B (docs/security.md). Each namespace now has indexes of its own.
"""

from __future__ import annotations

from typing import Any

from memory_substrate.storage.base import Store
from memory_substrate.text import full_text_terms
from tests.storage.builders import doc, make_obj, seg, seg_row

QUERY = full_text_terms("zebracorn budget")


def _search(store: Store, namespace: str) -> tuple[list[Any], list[Any]]:
    with store.read(namespace) as s:
        return s.search_objects_text(QUERY, limit=10), s.search_segments_text(QUERY, limit=10)


def test_another_namespace_does_not_move_scores(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_object(
            make_obj("know:a1", title="zebracorn budget review"), doc("zebracorn budget review"), None
        )
        s.insert_object(make_obj("know:a2", title="budget line items"), doc("budget line items"), None)
        s.insert_object(make_obj("know:a3", title="travel plans"), doc("travel plans"), None)
        s.insert_segments(
            [
                seg_row(seg("src:a", 1, "the zebracorn budget is due friday")),
                seg_row(seg("src:a", 2, "noted, the budget for marketing too")),
                seg_row(seg("src:a", 3, "and the offsite in May")),
            ]
        )
    objects, segments = _search(store, namespace)
    assert [h.object_id for h in objects][:2] == ["know:a1", "know:a2"]
    assert [h.segment_id for h in segments][:2] == ["seg-1", "seg-2"]

    with store.write(namespace + "-b") as s:
        for i in range(60):
            text = f"zebracorn sighting number {i}"
            s.insert_object(make_obj(f"know:b{i}", title=text), doc(text), None)
        s.insert_segments(
            [seg_row(seg("src:b", i + 1, f"zebracorn seen again {i} " * (1 + i % 5))) for i in range(60)]
        )
    assert _search(store, namespace) == (objects, segments), "B's writes moved A's scores"

    store.delete_namespace(namespace + "-b")
    assert _search(store, namespace) == (objects, segments)


def test_common_terms_are_judged_within_the_namespace(store: Store, namespace: str) -> None:
    """Segment search may leave out a term most of the namespace's segments hold; whether it does
    depends on this namespace alone."""
    rows = [
        seg_row(seg("src:a", i + 1, ("zebracorn " if i == 0 else "budget " if i == 1 else "") + f"turn {i}"))
        for i in range(1200)
    ]
    with store.write(namespace) as s:
        s.insert_segments(rows)
    found = sorted(h.segment_id for h in _search(store, namespace)[1])
    assert found == ["seg-1", "seg-2"]
    with store.write(namespace + "-b") as s:  # "budget" in every one of 3,000 turns of B
        s.insert_segments([seg_row(seg("src:b", i + 1, f"budget talk {i}")) for i in range(3000)])
    assert sorted(h.segment_id for h in _search(store, namespace)[1]) == found


def test_cached_term_counts_are_the_namespace_s_own(store: Store, namespace: str) -> None:
    """Term counts read for one namespace are not served to another (SQLite caches them per
    connection, and a thread reads every namespace on the same connection)."""
    other = namespace + "-b"
    with store.write(other) as s:  # "budget" in every turn of B
        s.insert_segments([seg_row(seg("src:b", i + 1, f"budget talk {i}")) for i in range(1200)])
    with store.write(namespace) as s:  # ... and in one turn of A
        s.insert_segments(
            [
                seg_row(
                    seg(
                        "src:a",
                        i + 1,
                        ("zebracorn " if i == 0 else "budget " if i == 1 else "") + f"turn {i}",
                    )
                )
                for i in range(1200)
            ]
        )
    for _ in range(2):  # B then A, on one thread, nothing written between
        _search(store, other)  # (on SQLite B's search leaves "budget" out: B's turns all hold it)
        assert sorted(h.segment_id for h in _search(store, namespace)[1]) == ["seg-1", "seg-2"]

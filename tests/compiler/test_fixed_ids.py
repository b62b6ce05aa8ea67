"""Fixed ids (``util.fix_ids``): two stores built by the same steps give the same answers.

A context package cites each source by its id's random part, and random hex costs a varying
number of tokens, so with generated ids a turn at the budget's edge fits one build and not the
next; the benchmarks build with fixed ids so that a tree's figures are the same on every run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory, Settings
from memory_substrate.util import fix_ids, new_id

TURNS = [
    ("ann", "I moved the build cache to the shared volume last Tuesday."),
    ("ben", "Did the nightly job pick it up, or does it still read the old path?"),
    ("ann", "It still reads /srv/cache; the runner config pins the path."),
    ("ben", "Then the cache misses explain why the nightly build took forty minutes."),
    ("ann", "I will change the runner config and rerun the nightly build tonight."),
    ("ben", "Remember the deploy key rotation is due on Friday as well."),
]


@pytest.fixture(autouse=True)
def _generated_ids_after() -> Iterator[None]:
    yield
    fix_ids(None)


def _build(root: Path, namespace: str) -> Memory:
    mem = Memory(Settings(root=root, embedder="static"), namespace=namespace)
    fix_ids(namespace)
    for day in range(1, 9):
        messages = [
            {
                "role": "user",
                "name": who,
                "content": f"{text} (day {day}, note {i})",
                "created_at": f"2026-10-{day:02d}T10:{i:02d}:00+00:00",
            }
            for i, (who, text) in enumerate(TURNS)
        ]
        mem.ingest("conversation", {"title": f"standup {day}", "messages": messages})
    fix_ids(None)
    return mem


def _answers(mem: Memory) -> list[Any]:
    out: list[Any] = []
    for task in (
        "why did the nightly build take so long?",
        "what is due on Friday?",
        "which path does the runner read?",
    ):
        for budget in (300, 600):
            out.append(
                mem.query("context", {"task": task}, {"budget_tokens": budget, "format": "xml"})["content"]
            )
        found = mem.query(
            "search", {"query": task}, {"result_unit": "segment", "detail": "full", "max_items": 20}
        )
        out.append([(i["source_id"], i["locator"]["index"], i["excerpt"]) for i in found["items"]])
    return out


def test_the_same_seed_draws_the_same_ids_and_none_draws_generated_ones() -> None:
    fix_ids("a")
    first = [new_id("source"), new_id("source"), new_id("knowledge")]
    fix_ids("a")
    assert [new_id("source"), new_id("source"), new_id("knowledge")] == first
    assert first[0] < first[1]  # a type's ids keep their creation order
    fix_ids("b")
    assert new_id("source") != first[0]
    fix_ids(None)
    assert new_id("source") not in first


def test_two_stores_built_alike_give_the_same_packages_and_rankings(tmp_path: Path) -> None:
    one, two = _build(tmp_path / "one", "ns"), _build(tmp_path / "two", "ns")
    try:
        assert _answers(one) == _answers(two)
    finally:
        one.close()
        two.close()


def test_two_seeds_share_a_store(tmp_path: Path) -> None:
    a = _build(tmp_path / "store", "ns-a")
    b = _build(tmp_path / "store", "ns-b")
    try:
        ids_a = {
            i["source_id"]
            for i in a.query(
                "search", {"query": "nightly build"}, {"result_unit": "segment", "detail": "full"}
            )["items"]
        }
        ids_b = {
            i["source_id"]
            for i in b.query(
                "search", {"query": "nightly build"}, {"result_unit": "segment", "detail": "full"}
            )["items"]
        }
        assert ids_a and ids_b and not ids_a & ids_b
    finally:
        a.close()
        b.close()

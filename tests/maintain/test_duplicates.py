"""merge_duplicates (deterministic) and resolve_duplicates (reviewed soft pairs)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.errors import ConflictError, NotFoundError, ValidationError
from memory_substrate.maintain.duplicates import soft_match, soft_pairs
from memory_substrate.models import MemoryObject
from tests.maintain.conftest import claim, duplicate_claims, know, soft_pair, status_of


def _report(memory: Memory) -> dict[str, Any]:
    return memory.maintain("report", {})


def test_merge_duplicates_keeps_one_canonical_and_moves_evidence(memory: Memory) -> None:
    first, second = duplicate_claims(memory)
    groups = _report(memory)["duplicate_groups"]
    assert [g["object_ids"] for g in groups] == [[second, first]]

    result = memory.maintain("merge_duplicates", {}, {"apply": True})
    group = result["groups"][0]
    assert group["canonical_knowledge_id"] == second  # same status, higher confidence
    assert group["superseded_knowledge_ids"] == [first]
    assert result["counts"] == {"groups": 1, "superseded": 1, "evidence_refs_moved": 1}
    assert status_of(memory, first) == "superseded"
    canonical = memory.query("page", {"id": second})["object"]
    assert canonical["status"] == "active"
    assert len(canonical["evidence_refs"]) == 1  # moved from the superseded duplicate
    assert _report(memory)["duplicate_groups"] == []
    assert memory.maintain("merge_duplicates", {}, {"apply": True})["status"] == "noop"


def test_merge_duplicates_never_merges_soft_duplicates(memory: Memory) -> None:
    a, b = soft_pair(memory)
    assert _report(memory)["counts"]["soft_duplicate_candidates"] == 1
    result = memory.maintain("merge_duplicates", {}, {"apply": True})
    assert result["status"] == "noop"
    assert status_of(memory, a) == status_of(memory, b) == "active"


def test_same_claim_in_disjoint_scopes_is_not_a_duplicate(memory: Memory) -> None:
    payload = claim("node:svc", "runs_on", "node:k8s")
    know(memory, "svc runs on k8s", payload=payload, scope_refs=["scope:a"])
    know(memory, "svc runs on k8s too", payload=payload, scope_refs=["scope:b"])
    assert _report(memory)["duplicate_groups"] == []


def test_resolve_supersede_spec_example(memory: Memory) -> None:
    older, newer = soft_pair(memory)
    entry = _report(memory)["soft_duplicate_candidates"][0]
    assert entry["object_ids"] == [older, newer]
    result = memory.maintain(
        "resolve_duplicates",
        {
            "outcome": "supersede",
            "knowledge_ids": [older, newer],
            "canonical_knowledge_id": newer,
            "reason": "Reviewed the soft duplicate candidate and selected the newer scoped decision.",
        },
        {"apply": True},
    )
    assert result["status"] == "applied"
    assert result["superseded_knowledge_ids"] == [older]
    assert status_of(memory, older) == "superseded"
    assert status_of(memory, newer) == "active"
    rels = memory.query("expand", {"id": newer}, {"max_items": 10, "detail": "full"})[
        "related"
    ]  # with provenance
    supersedes = [r["relation"] for r in rels if r["relation"]["rel_type"] == "supersedes"]
    assert supersedes and supersedes[0]["target_id"] == older
    assert supersedes[0]["relation_schema"]["derivation"] == "canonical_relation"
    assert _report(memory)["soft_duplicate_candidates"] == []


def test_resolve_keep_both_spec_example_applies_updates(memory: Memory) -> None:
    a, b = soft_pair(memory)
    result = memory.maintain(
        "resolve_duplicates",
        {
            "outcome": "keep_both",
            "knowledge_ids": [a, b],
            "reason": "Same phrasing, but different project scopes.",
            "updates": [
                {"knowledge_id": a, "scope_refs": ["scope:project-a"]},
                {
                    "knowledge_id": b,
                    "scope_refs": ["scope:project-b"],
                    "title": "Project B deploys on Friday",
                },
            ],
        },
        {"apply": True},
    )
    assert result["counts"]["updated"] == 2
    page_a = memory.query("page", {"id": a})["object"]
    page_b = memory.query("page", {"id": b})["object"]
    assert page_a["scope_refs"] == ["scope:project-a"] and page_a["status"] == "active"
    assert page_b["scope_refs"] == ["scope:project-b"] and page_b["title"] == "Project B deploys on Friday"
    assert _report(memory)["soft_duplicate_candidates"] == []
    hits = memory.query("search", {"query": "Project B deploys"})["items"]
    assert hits and hits[0]["id"] == b  # the full-text row follows the update


def test_resolve_contest_marks_both_contested(memory: Memory) -> None:
    a, b = soft_pair(memory)
    result = memory.maintain(
        "resolve_duplicates",
        {"outcome": "contest", "knowledge_ids": [a, b], "reason": "They disagree on the day."},
        {"apply": True},
    )
    assert result["contested_knowledge_ids"] == [a, b]
    assert status_of(memory, a) == status_of(memory, b) == "contested"


def test_resolve_accepts_only_current_soft_duplicate_pairs(memory: Memory) -> None:
    a, b = soft_pair(memory)
    unrelated = know(memory, "Backups run nightly", "Nightly backups to S3.")
    structured = know(
        memory,
        "Deploys run on Fridays",
        "Deployments happen on Friday afternoons.",
        payload=claim("node:deploys", "day", value="friday"),
    )
    for ids in ([a, unrelated], [a, structured]):
        with pytest.raises(ConflictError, match="not a current soft duplicate"):
            memory.maintain("resolve_duplicates", {"outcome": "contest", "knowledge_ids": ids, "reason": "r"})
    with pytest.raises(NotFoundError, match="know:missing"):
        memory.maintain(
            "resolve_duplicates", {"outcome": "contest", "knowledge_ids": [a, "know:missing"], "reason": "r"}
        )
    memory.maintain(
        "resolve_duplicates", {"outcome": "contest", "knowledge_ids": [a, b], "reason": "r"}, {"apply": True}
    )
    with pytest.raises(ConflictError, match="already resolved"):  # no longer reported
        memory.maintain("resolve_duplicates", {"outcome": "contest", "knowledge_ids": [a, b], "reason": "r"})


@pytest.mark.parametrize(
    "bad",
    [
        {"reason": ""},
        {"reason": "   "},
        {"canonical_knowledge_id": "know:elsewhere"},
        {"outcome": "contest"},  # canonical id only goes with supersede
        {"knowledge_ids": ["know:a"]},
        {"updates": [{"knowledge_id": "know:a", "title": "t"}]},  # updates only go with keep_both
    ],
)
def test_resolve_input_is_validated(memory: Memory, bad: dict[str, Any]) -> None:
    data = {
        "outcome": "supersede",
        "knowledge_ids": ["know:a", "know:b"],
        "canonical_knowledge_id": "know:a",
        "reason": "ok",
        **bad,
    }
    with pytest.raises(ValidationError):
        memory.maintain("resolve_duplicates", data, {"apply": True})


def test_resolve_requires_a_reason_field(memory: Memory) -> None:
    a, b = soft_pair(memory)
    with pytest.raises(ValidationError, match="reason"):
        memory.maintain(
            "resolve_duplicates", {"outcome": "contest", "knowledge_ids": [a, b]}, {"apply": True}
        )


def test_soft_pair_scan_matches_brute_force() -> None:
    """The blocked scan finds exactly the pairs an all-pairs comparison finds (pure function)."""
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(60)]
    items: list[MemoryObject] = []
    for i in range(400):
        base = rng.sample(vocab, rng.randint(2, 6))
        if i and rng.random() < 0.3:  # a near copy of an earlier item
            prev = items[rng.randrange(len(items))]
            base = [*prev.title.split()[:-1], rng.choice(vocab)]
        items.append(
            MemoryObject(
                id=f"know:{i:04d}",
                object_type="knowledge",
                kind=rng.choice(["fact", "decision"]),
                status="active",
                title=" ".join(base),
                summary=" ".join(rng.sample(vocab, rng.randint(3, 12))),
                scope_refs=[rng.choice(["scope:a", "scope:b"])],
                created_at=f"2026-01-01T00:00:{i % 60:02d}",
            )
        )
    found, complete = soft_pairs(items)
    assert complete
    brute = {
        (a.id, b.id)
        for a, b in itertools.combinations(sorted(items, key=lambda o: (o.created_at, o.id)), 2)
        if soft_match(a, b)[0]
    }
    assert len(brute) > 20
    assert {(a.id, b.id) for _, _, a, b in found} == brute
    limited, complete = soft_pairs(items, budget=10)
    assert not complete and len(limited) < len(brute)

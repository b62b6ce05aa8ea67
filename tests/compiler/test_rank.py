"""Four-dimension ranking and exclusions (pure, no store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.profiles import DIMENSION_WEIGHTS
from memory_substrate.compiler.rank import exclusion, merge, rank, recency, score, stability
from memory_substrate.models import MemoryObject, Segment

NOW = datetime(2026, 11, 23, tzinfo=UTC)


def _fact(
    oid: str = "know:1",
    status: str = "active",
    evidence: str = "observed",
    salience: float = 0.5,
    kind: str = "fact",
    days: float = 0,
    **extra: Any,
) -> MemoryObject:
    return MemoryObject(
        oid,
        "knowledge",
        kind,
        status,
        "t",
        metadata={"evidence_status": evidence, "salience": salience},
        valid_from=(NOW - timedelta(days=days)).isoformat(),
        **extra,
    )


def _turn(days: float = 0) -> Segment:
    return Segment(
        "src:1", "seg-1", 1, "hello", {}, "h", {"created_at": (NOW - timedelta(days=days)).isoformat()}
    )


def test_recency_decays_linearly_over_90_days() -> None:
    assert recency(NOW.isoformat(), NOW) == 1.0
    assert recency((NOW - timedelta(days=45)).isoformat(), NOW) == pytest.approx(0.5)
    assert recency((NOW - timedelta(days=90)).isoformat(), NOW) == 0.0
    assert recency((NOW - timedelta(days=400)).isoformat(), NOW) == 0.0
    assert recency(None, NOW) == 0.0


def test_stability_is_evidence_status_and_salience_70_30() -> None:
    c = Candidate(
        "know:1", "semantic", "fact_lookup", 1.0, "debug", obj=_fact(evidence="user_asserted", salience=0.0)
    )
    assert stability(c) == pytest.approx(0.7)
    c.obj = _fact(evidence="inferred", salience=1.0)
    assert stability(c) == pytest.approx(0.7 * 0.5 + 0.3)
    turn = Candidate("src:1#seg-1", "episodic", "episode_recall", 1.0, "debug", segment=_turn())
    assert stability(turn) == pytest.approx(0.7 * 0.9 + 0.3 * 0.5)


def test_four_dimensions_with_type_weight_and_provenance() -> None:
    c = Candidate(
        "know:1", "procedural", "procedure_assist", 0.5, "debug", obj=_fact(kind="procedure", days=9)
    )
    score(c, ["debug"], NOW)
    assert c.scores["relevance"] == pytest.approx(0.5 * 0.8)  # debug: procedural 0.8
    assert c.scores["recency"] == pytest.approx(0.9)
    assert c.scores["provenance"] == 0.9
    assert c.score == pytest.approx(sum(DIMENSION_WEIGHTS[d] * v for d, v in c.scores.items()))
    score(c, ["architecture"], NOW)
    assert c.scores["relevance"] == pytest.approx(0.5 * 0.3)
    score(c, ["architecture", "debug"], NOW)  # both profiles ran: the better weight counts
    assert c.scores["relevance"] == pytest.approx(0.5 * 0.8)


@pytest.mark.parametrize(
    ("obj", "primary", "unverified", "reason"),
    [
        (_fact(status="superseded", evidence="superseded"), "debug", False, "superseded"),
        (_fact(kind="procedure", status="candidate"), "debug", True, "procedure not promoted"),
        (_fact(kind="procedure"), "compliance", False, "hard exclude"),
        (_fact(status="candidate", evidence="inferred"), "chat", False, "unverified candidate"),
        (_fact(status="contested"), "chat", False, "unverified contested"),
        (_fact(valid_until=(NOW - timedelta(days=1)).isoformat()), "chat", False, "no longer valid"),
        (_fact(status="archived"), "chat", True, "status archived"),
    ],
)
def test_exclusions_carry_their_reason(
    obj: MemoryObject, primary: str, unverified: bool, reason: str
) -> None:
    mtype = "procedural" if obj.kind == "procedure" else "semantic"
    c = Candidate(obj.id, mtype, "fact_lookup", 1.0, primary, obj=obj)
    got = exclusion(c, primary, unverified, NOW)
    assert got is not None and got.startswith(reason)


def test_unverified_knowledge_enters_when_asked() -> None:
    c = Candidate(
        "know:1", "semantic", "fact_lookup", 1.0, "chat", obj=_fact(status="candidate", evidence="inferred")
    )
    assert exclusion(c, "chat", True, NOW) is None
    assert exclusion(Candidate("k", "semantic", "graph", 1, "chat", obj=_fact()), "chat", False, NOW) is None


def test_merge_keeps_the_strongest_and_every_strategy() -> None:
    a = Candidate("know:1", "semantic", "graph", 0.9, "debug", obj=_fact())
    b = Candidate("know:1", "semantic", "fact_lookup", 0.95, "debug", obj=_fact())
    (m,) = merge([a, b])
    assert m.strategy == "fact_lookup" and m.strategies == ["graph", "fact_lookup"]


def test_rank_orders_by_score_and_splits_rejected() -> None:
    fresh = Candidate("src:1#seg-1", "episodic", "episode_recall", 1.0, "debug", segment=_turn(days=1))
    stale = Candidate("src:1#seg-2", "episodic", "episode_recall", 1.0, "debug", segment=_turn(days=200))
    gone = Candidate("know:9", "semantic", "graph", 1.0, "debug", obj=_fact("know:9", status="superseded"))
    eligible, rejected = rank([stale, gone, fresh], ["debug"], include_unverified=False, now=NOW)
    assert [c.key for c in eligible] == ["src:1#seg-1", "src:1#seg-2"]
    assert [c.key for c in rejected] == ["know:9"] and rejected[0].scores  # rejected keep their scores too

"""Procedures earn trust through observation.

A procedure starts as a candidate at confidence 0.3 with evidence status ``extracted``. When the
same pattern reappears in another episode the record is merged: observation count +1, the
episode is appended, and confidence becomes a weighted average of the old confidence and the new
observation's (an extractor's stated confidence, 1.0 when it states none):

    confidence' = (1 - OBSERVATION_WEIGHT) x confidence + OBSERVATION_WEIGHT x observation,
    OBSERVATION_WEIGHT = 0.5

(an exponentially weighted average: each new episode counts as much as all earlier ones
together). From 0.3, consistent observations give 0.65 after two episodes and 0.825 after three,
so one or two episodes stay below the 0.8 bar and the third can reach it, as promotion after three episodes intends
(the plain running mean reached only 0.767 at three). Observations at 0.9 give 0.6, 0.75, 0.825:
a less sure extractor needs a fourth episode. Low observations pull the confidence down.

A procedure is promoted (status ``active``, evidence ``promoted``) only once seen in 3 or more
distinct episodes with confidence >= 0.8. The distinct episodes are those its observations came
from and those its evidence refs cite, so a procedure written with ``memory_remember knowledge``
(always a candidate) can be promoted by hand only with the same evidence. Seeing the same episode
again changes nothing. Only promoted procedures are compiled (compiler/rank.py checks the same
rule, so a procedure marked active by an import without that evidence stays out).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypedDict

import numpy as np

from memory_substrate.embed.base import Embedder
from memory_substrate.graph.extraction_trace import ProcedureOutcome
from memory_substrate.graph.stored import count, listed
from memory_substrate.json_types import JsonObject
from memory_substrate.lookup_keys import procedure_key
from memory_substrate.models import MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.taxonomy import (
    PROCEDURE_PROMOTION_CONFIDENCE,
    PROCEDURE_PROMOTION_EPISODES,
    PROCEDURE_START_CONFIDENCE,
)
from memory_substrate.util import new_id

SAME_PATTERN_SIMILARITY = 0.9
DEFAULT_OBSERVATION_CONFIDENCE = 1.0
OBSERVATION_WEIGHT = 0.5
MAX_EPISODES_KEPT = 200


class PromotionGap(TypedDict):
    """How far a procedure is from promotion: what it has beside what promotion requires."""

    distinct_episodes: int
    required_episodes: int
    confidence: float | None
    required_confidence: float


def distinct_episodes(obj: MemoryObject) -> set[str]:
    """Episodes a procedure was observed in or cites as evidence."""
    episodes = {str(e) for e in listed(obj.payload.get("source_episodes"))}
    return episodes | {str(r["source_id"]) for r in obj.evidence_refs if r.get("source_id")}


def promotable(obj: MemoryObject) -> bool:
    return (
        len(distinct_episodes(obj)) >= PROCEDURE_PROMOTION_EPISODES
        and (obj.confidence or 0.0) >= PROCEDURE_PROMOTION_CONFIDENCE
    )


def updated_confidence(confidence: float | None, observation: float) -> float:
    """The weighted average above: the new observation weighs ``OBSERVATION_WEIGHT``."""
    old = PROCEDURE_START_CONFIDENCE if confidence is None else confidence
    return round((1.0 - OBSERVATION_WEIGHT) * old + OBSERVATION_WEIGHT * observation, 4)


def promotion_gap(obj: MemoryObject) -> PromotionGap:
    return {
        "distinct_episodes": len(distinct_episodes(obj)),
        "required_episodes": PROCEDURE_PROMOTION_EPISODES,
        "confidence": obj.confidence,
        "required_confidence": PROCEDURE_PROMOTION_CONFIDENCE,
    }


def find_same(
    patch: Patch, embedder: Embedder | None, kind: str, title: str, text: str
) -> MemoryObject | None:
    """The live procedure of this kind describing the same pattern: same normalised title, or
    (with an embedder) a near-identical description."""
    session = patch.session
    ids = [oid for _, oid in session.find_keys([procedure_key(kind, title)])]
    for obj in session.get_objects(ids).values():
        if obj.status in ("candidate", "active"):
            return obj
    if embedder is None:
        return None
    query = np.asarray(embedder.embed_query(f"{title}. {text}"), dtype=np.float32)
    for oid, score in session.vector_search(embedder.name, query, owner_type=f"procedure:{kind}", limit=3):
        if score < SAME_PATTERN_SIMILARITY:
            break
        found = session.get_object(oid)
        if found is not None and found.status in ("candidate", "active"):
            return found
    return None


def observe(
    patch: Patch,
    embedder: Embedder | None,
    *,
    kind: str,
    title: str,
    text: str,
    episode_id: str,
    confidence: float | None,
    evidence_refs: list[dict[str, str]],
    scope_refs: list[str],
    memory_source: str,
    reason: str,
) -> ProcedureOutcome:
    """Record one observation of a procedure; returns what happened for the episode trace."""
    existing = find_same(patch, embedder, kind, title, text)
    if existing is None:
        return _create_candidate(
            patch,
            kind=kind,
            title=title,
            text=text,
            episode_id=episode_id,
            evidence_refs=evidence_refs,
            scope_refs=scope_refs,
            memory_source=memory_source,
            reason=reason,
        )
    if episode_id in listed(existing.payload.get("source_episodes")):
        return {
            "outcome": "already_observed",
            "procedure_id": existing.id,
            "confidence": existing.confidence,
            "observations": existing.payload.get("observation_count", 1),
        }
    return _merge_observation(patch, existing, episode_id, confidence, evidence_refs)


def _create_candidate(
    patch: Patch,
    *,
    kind: str,
    title: str,
    text: str,
    episode_id: str,
    evidence_refs: list[dict[str, str]],
    scope_refs: list[str],
    memory_source: str,
    reason: str,
) -> ProcedureOutcome:
    """A first sighting: a new candidate procedure at the starting confidence."""
    obj = MemoryObject(
        id=new_id("knowledge"),
        object_type="knowledge",
        kind="procedure",
        status="candidate",
        title=title,
        summary=text[:2000],
        memory_source=memory_source,
        reason=reason,
        confidence=PROCEDURE_START_CONFIDENCE,
        scope_refs=list(scope_refs),
        evidence_refs=evidence_refs,
        payload={
            "procedure_kind": kind,
            "text": text,
            "observation_count": 1,
            "source_episodes": [episode_id],
        },
        metadata={"evidence_status": "extracted"},
    )
    created = patch.create(obj)
    return {
        "outcome": "created",
        "procedure_id": created.id,
        "confidence": created.confidence,
        "observations": 1,
    }


def _merge_observation(
    patch: Patch,
    existing: MemoryObject,
    episode_id: str,
    confidence: float | None,
    evidence_refs: list[dict[str, str]],
) -> ProcedureOutcome:
    """A sighting in a new episode: count it, move the confidence, and promote once earned."""
    episodes = listed(existing.payload.get("source_episodes"))
    n = count(existing.payload.get("observation_count"), 1)
    observed = DEFAULT_OBSERVATION_CONFIDENCE if confidence is None else confidence
    new_conf = updated_confidence(existing.confidence, observed)
    refs = list(existing.evidence_refs)
    for ref in evidence_refs:
        if ref not in refs:
            refs.append(ref)
    payload: JsonObject = {
        **existing.payload,
        "observation_count": n + 1,
        "source_episodes": [*episodes, episode_id][-MAX_EPISODES_KEPT:],
    }
    merged = replace(existing, confidence=new_conf, payload=payload, evidence_refs=refs[-100:])
    result: ProcedureOutcome = {
        "outcome": "merged",
        "procedure_id": existing.id,
        "confidence": new_conf,
        "observations": n + 1,
    }
    changes: JsonObject = {
        "observation_count": n + 1,
        "confidence": {"from": existing.confidence, "to": new_conf},
        "episode_id": episode_id,
    }
    if merged.status == "candidate" and promotable(merged):
        merged = replace(merged, status="active", metadata={**merged.metadata, "evidence_status": "promoted"})
        changes["status"] = {"from": "candidate", "to": "active"}
        changes["rule"] = "observed_in_3_episodes_with_confidence_0.8"
        result["outcome"] = "merged_and_promoted"
    patch.update(merged, action="observe", changes=changes)
    return result

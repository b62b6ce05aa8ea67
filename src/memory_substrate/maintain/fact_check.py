"""Advisory fact-check issues for ``report``: nothing here changes memory.

* ``similar_entity_name``: several nodes whose names reduce to the same key (case, accents,
  punctuation and spacing ignored), which usually means one entity recorded twice.
* ``stale_fact``: active knowledge whose validity window ended at or before ``reference_time``
  (``decay_stale`` would expire it).
* ``relationship_mismatch``: live structured knowledge with the same subject and predicate
  asserting different values/objects (across kinds and scopes; the scopes are shown so a
  reviewer can tell a real conflict from a scoped difference).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from memory_substrate.indexing import claim_value
from memory_substrate.maintain.common import when
from memory_substrate.maintain.report_types import (
    FactCheckIssue,
    RelationshipMismatch,
    SimilarEntityName,
    StaleFact,
)
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.remember.similarity import is_structured

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def name_key(name: str) -> str:
    """Case, accents, punctuation and spacing folded away: "Kuzu DB", "kuzu-db" -> "kuzudb"."""
    if name.isascii():
        return _NON_WORD.sub("", name.lower())
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return _NON_WORD.sub("", text.casefold())


def similar_entity_names(nodes: Iterable[MemoryObject]) -> list[SimilarEntityName]:
    groups: dict[str, list[MemoryObject]] = defaultdict(list)
    for node in nodes:
        if node.object_type == "node" and node.status == "active":
            key = name_key(node.title)
            if key:
                groups[key].append(node)
    issues: list[SimilarEntityName] = []
    for key, items in sorted(groups.items()):
        if len(items) > 1:
            items.sort(key=lambda o: o.id)
            issues.append(
                {
                    "issue_type": "similar_entity_name",
                    "name_key": key,
                    "object_ids": [o.id for o in items],
                    "titles": [o.title for o in items],
                    "stub_ids": [o.id for o in items if o.kind == "stub"],
                    "suggested_action": "review_and_consolidate_entity_references",
                }
            )
    return issues


def stale_facts(knowledge: Iterable[MemoryObject], ref: datetime) -> list[StaleFact]:
    issues: list[StaleFact] = []
    for obj in sorted(knowledge, key=lambda o: (o.valid_until or "", o.id)):
        until = when(obj.valid_until)
        if obj.status == "active" and until is not None and until <= ref:
            issues.append(
                {
                    "issue_type": "stale_fact",
                    "object_id": obj.id,
                    "title": obj.title,
                    "kind": obj.kind,
                    "valid_until": obj.valid_until,
                    "suggested_action": "run_memory_maintain_decay_stale_or_supersede",
                }
            )
    return issues


def relationship_mismatches(knowledge: Iterable[MemoryObject]) -> list[RelationshipMismatch]:
    groups: dict[tuple[str, str], list[MemoryObject]] = defaultdict(list)
    for obj in knowledge:
        if obj.status in LIVE_KNOWLEDGE_STATUSES and is_structured(obj):
            groups[(str(obj.payload["subject"]), str(obj.payload["predicate"]).strip().lower())].append(obj)
    issues: list[RelationshipMismatch] = []
    for (subject, predicate), items in sorted(groups.items()):
        values = {claim_value(o) for o in items}
        if len(values) < 2:
            continue
        items.sort(key=lambda o: (o.created_at, o.id))
        issues.append(
            {
                "issue_type": "relationship_mismatch",
                "subject": subject,
                "predicate": predicate,
                "object_ids": [o.id for o in items],
                "assertions": [
                    {
                        "object_id": o.id,
                        "kind": o.kind,
                        "status": o.status,
                        "value": o.payload.get("value"),
                        "object": o.payload.get("object"),
                        "scope_refs": o.scope_refs,
                    }
                    for o in items
                ],
                "suggested_action": "review_then_supersede_or_contest",
            }
        )
    return issues


def fact_check(
    nodes: list[MemoryObject], knowledge: list[MemoryObject], ref: datetime
) -> list[FactCheckIssue]:
    return similar_entity_names(nodes) + stale_facts(knowledge, ref) + relationship_mismatches(knowledge)

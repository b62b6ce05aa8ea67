"""memory_query modes of the knowledge graph: ``entities``, ``facts`` and ``trace``."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from memory_substrate.errors import NotFoundError
from memory_substrate.lookup_keys import entity_any_key, fact_object_key, fact_predicate_key, fact_subject_key
from memory_substrate.models import MemoryObject
from memory_substrate.query.results import (
    EntitiesResult,
    EntityView,
    EntityWithFacts,
    FactLink,
    FactsResult,
    FactView,
    MergedInto,
    ModelAliases,
    TraceResult,
)
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import normalize_predicate
from memory_substrate.text import full_text_terms
from memory_substrate.util import now_iso, parse_time
from memory_substrate.validation import Strict

EntityTypeFilter = Literal[
    "person",
    "organization",
    "project",
    "service",
    "technology",
    "pattern",
    "environment",
    "document",
    "metric",
    "decision",
]
CURRENT_STATUSES = ("active", "candidate", "contested")


class EntitiesInput(Strict):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    id: str | None = Field(default=None, min_length=1, max_length=300)
    type: EntityTypeFilter | None = None

    @model_validator(mode="after")
    def _one(self) -> EntitiesInput:
        if not (self.name or self.id or self.type):
            raise ValueError("give name, id or type")
        return self


Detail = Literal["compact", "full"]


class EntitiesOptions(Strict):
    detail: Detail = "compact"  # compact leaves out nulls (an open valid_until) and hashes
    max_items: int = Field(default=10, ge=1, le=200)
    max_facts: int = Field(default=20, ge=0, le=500)
    as_of: datetime | None = None


class FactsInput(Strict):
    subject: str | None = Field(default=None, min_length=1, max_length=300)
    predicate: str | None = Field(default=None, min_length=1, max_length=200)
    object: str | None = Field(default=None, min_length=1, max_length=300)
    as_of: datetime | None = None
    include_superseded: bool = False

    @model_validator(mode="after")
    def _one(self) -> FactsInput:
        if not (self.subject or self.predicate or self.object):
            raise ValueError("give at least one of subject, predicate, object")
        return self


class FactsOptions(Strict):
    detail: Detail = "compact"
    max_items: int = Field(default=20, ge=1, le=500)


class TraceInput(Strict):
    id: str = Field(
        min_length=1,
        max_length=300,
        description="A trace id, or an episode id for its latest extraction trace",
    )


class TraceOptions(Strict):
    detail: Detail = "compact"


def _valid_at(obj: MemoryObject, when: datetime) -> bool:
    if obj.valid_from and parse_time(obj.valid_from) > when:
        return False
    return not (obj.valid_until and parse_time(obj.valid_until) <= when)


def _entities_named(session: StoreSession, ref: str) -> list[str]:
    if ref.startswith("ent:"):
        return [ref]
    return sorted({oid for _, oid in session.find_keys([entity_any_key(ref)])})


FACT_LINKS: tuple[FactLink, ...] = ("superseded_by", "supersedes", "blocked_by")


def fact_view(obj: MemoryObject, names: dict[str, MemoryObject]) -> FactView:
    p = obj.payload
    subject, target = names.get(str(p.get("subject"))), names.get(str(p.get("object")))
    view: FactView = {
        "id": obj.id,
        "subject": {"id": p.get("subject"), "name": subject.title if subject else None},
        "predicate": p.get("predicate"),
        "status": obj.status,
        "evidence_status": obj.metadata.get("evidence_status"),
        "valid_from": obj.valid_from,
        "valid_until": obj.valid_until,
        "confidence": obj.confidence,
        "salience": obj.metadata.get("salience"),
        "evidence_refs": obj.evidence_refs[:5],
    }
    if p.get("object"):
        view["object"] = {"id": p.get("object"), "name": target.title if target else None}
    else:
        view["value"] = p.get("value")
    for key in FACT_LINKS:
        if obj.metadata.get(key):
            view[key] = obj.metadata[key]
    return view


def _names_for(session: StoreSession, facts: list[MemoryObject]) -> dict[str, MemoryObject]:
    ids = {str(f.payload.get(k)) for f in facts for k in ("subject", "object") if f.payload.get(k)}
    return session.get_objects(sorted(ids))


def select_facts(
    session: StoreSession,
    ids: list[str],
    *,
    as_of: datetime | None,
    include_superseded: bool,
) -> list[MemoryObject]:
    """Facts among ``ids``: current ones by default, those true at ``as_of`` (history included),
    or every version with ``include_superseded``. Newest first."""
    now = parse_time(now_iso())
    out = []
    for obj in session.get_objects(ids).values():
        if obj.object_type != "knowledge" or obj.status in ("archived", "expired"):
            continue
        if include_superseded:
            pass
        elif as_of is not None:
            if obj.status == "contested" or not _valid_at(obj, as_of):
                continue
        elif obj.status not in CURRENT_STATUSES or not _valid_at(obj, now):
            continue
        out.append(obj)
    out.sort(key=lambda o: (o.valid_from or o.created_at, o.id), reverse=True)
    return out


def facts_mode(session: StoreSession, data: FactsInput, opts: FactsOptions) -> FactsResult:
    groups: list[set[str]] = []
    if data.subject:
        subjects = (
            _entities_named(session, data.subject)
            if not data.subject.startswith(("node:", "know:"))
            else [data.subject]
        )
        keys = [fact_subject_key(s) for s in subjects]
        groups.append({oid for _, oid in session.find_keys(keys)})
    if data.object:
        objects = (
            _entities_named(session, data.object)
            if not data.object.startswith(("node:", "know:"))
            else [data.object]
        )
        groups.append({oid for _, oid in session.find_keys([fact_object_key(o) for o in objects])})
    if data.predicate:
        groups.append({oid for _, oid in session.find_keys([fact_predicate_key(data.predicate)])})
    ids = set.intersection(*groups) if groups else set()
    facts = select_facts(session, sorted(ids), as_of=data.as_of, include_superseded=data.include_superseded)
    names = _names_for(session, facts[: opts.max_items])
    items = [fact_view(f, names) for f in facts[: opts.max_items]]
    return {
        "result_type": "facts_result",
        "items": items,
        "count": len(items),
        "total": len(facts),
        "applied_filters": {
            k: v
            for k, v in {
                "subject": data.subject,
                "predicate": normalize_predicate(data.predicate) if data.predicate else None,
                "object": data.object,
                "as_of": data.as_of.isoformat() if data.as_of else None,
                "include_superseded": data.include_superseded,
            }.items()
            if v not in (None, False)
        },
    }


def entity_view(obj: MemoryObject) -> EntityView:
    episode_ids = obj.metadata.get("episode_ids")
    # the aliases the model knew, which no episode writes: the others are the episodes' words
    model_aliases: ModelAliases = (
        {"model_aliases": obj.payload["model_aliases"]} if obj.payload.get("model_aliases") else {}
    )
    merged: MergedInto = (
        {"merged_into": obj.metadata["merged_into"]} if obj.metadata.get("merged_into") else {}
    )
    return {
        "id": obj.id,
        "name": obj.title,
        "type": obj.kind,
        "status": obj.status,
        "aliases": obj.payload.get("aliases") or [],
        **model_aliases,
        "summary": obj.summary,
        "mentions": obj.metadata.get("mentions", 0),
        "episode_count": len(episode_ids) if isinstance(episode_ids, list) else 0,  # a list wherever set
        **merged,
    }


def entities_mode(session: StoreSession, data: EntitiesInput, opts: EntitiesOptions) -> EntitiesResult:
    matched_by = "id"
    if data.id:
        ids = [data.id]
    elif data.name:
        ids = _entities_named(session, data.name)
        matched_by = "name_or_alias"
        if not ids:  # no exact name: full-text over entity names, summaries and aliases
            hits = session.search_objects_text(full_text_terms(data.name), limit=opts.max_items * 5)
            ids = [h.object_id for h in hits]
            matched_by = "full_text"
    else:
        ids = [
            o.id
            for o in session.list_objects(
                object_types=["entity"],
                kinds=[data.type] if data.type else None,
                statuses=["active"],
                limit=opts.max_items,
            )
        ]
        matched_by = "type"
    found = session.get_objects(ids)
    entities = [found[i] for i in ids if i in found and found[i].object_type == "entity"]
    if data.type:
        entities = [e for e in entities if e.kind == data.type]
    if data.id and not entities:
        raise NotFoundError(f"entity {data.id} not found", details={"id": data.id})
    items: list[EntityView | EntityWithFacts] = []
    for ent in entities[: opts.max_items]:
        view = entity_view(ent)
        if not opts.max_facts:
            items.append(view)
            continue
        keys = [fact_subject_key(ent.id), fact_object_key(ent.id)]
        fact_ids = sorted({oid for _, oid in session.find_keys(keys)})
        facts = select_facts(session, fact_ids, as_of=opts.as_of, include_superseded=False)
        names = _names_for(session, facts[: opts.max_facts])
        with_facts: EntityWithFacts = {
            **view,
            "facts": [fact_view(f, names) for f in facts[: opts.max_facts]],
            "fact_count": len(facts),
        }
        items.append(with_facts)
    return {"result_type": "entities_result", "items": items, "count": len(items), "matched_by": matched_by}


def trace_mode(session: StoreSession, data: TraceInput) -> TraceResult:
    trace = session.get_trace(data.id)
    if trace is None:
        latest = session.list_traces(subject_id=data.id, limit=1)
        trace = latest[0] if latest else None
    if trace is None:
        raise NotFoundError(f"trace {data.id} not found", details={"id": data.id})
    out: TraceResult = {
        "result_type": "trace_result",
        "trace": {
            "id": trace.id,
            "kind": trace.kind,
            "subject_id": trace.subject_id,
            "created_at": trace.created_at,
            **trace.data,
        },
    }
    if trace.kind == "extraction" and trace.subject_id:
        job = session.get_job("extract", trace.subject_id)
        if job is not None:
            out["job"] = {"status": job.status, "attempts": job.attempts, "error": job.error}
    return out

"""Lookup keys: the exact-match index the knowledge graph resolves names and facts through."""

from __future__ import annotations

from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject
from memory_substrate.taxonomy import CANONICAL_PREDICATES, normalize_name, normalize_predicate

MERGED_STATUSES = ("archived", "merged")


def entity_name_key(entity_type: str, name: str) -> str:
    return f"ent:name:{entity_type}:{normalize_name(name)}"


def entity_alias_key(entity_type: str, name: str) -> str:
    return f"ent:alias:{entity_type}:{normalize_name(name)}"


def entity_any_key(name: str) -> str:
    return f"ent:any:{normalize_name(name)}"


def fact_subject_key(subject: str) -> str:
    return f"fact:s:{subject}"


def fact_object_key(obj: str) -> str:
    return f"fact:o:{obj}"


def fact_predicate_key(predicate: str) -> str:
    return f"fact:p:{normalize_predicate(predicate)}"


CUSTOM_PREDICATE_PREFIX = "fact:custom:"


def procedure_key(kind: str, title: str) -> str:
    return f"proc:{kind}:{normalize_name(title)}"


def specific_key(kind: str, value: str) -> str:
    return f"spec:{kind}:{value.strip().casefold()}"


def source_fingerprint_key(kind: str, fingerprint: str) -> str:
    """A current capture's content fingerprint: a repeat capture of the same content is a noop."""
    return f"src:fp:{kind}:{fingerprint}"


def conversation_thread_key(thread: str) -> str:
    """A conversation's thread (its thread_id, or its title and origin): a grown one appends to it."""
    return f"src:thread:{thread}"


def superseded_evidence_key(source_id: str, segment_id: str) -> str:
    """The key of a turn that is evidence of superseded knowledge: a package that recalls the turn
    marks it with what replaced the claim."""
    return f"superseded-evidence:{source_id}#{segment_id}"


def _fields(value: object) -> JsonObject:
    """A JSON object stored under a payload or metadata field ({} when absent)."""
    return value if isinstance(value, dict) else {}


def _items(value: object) -> list[object]:
    """A JSON list stored under a payload or metadata field ([] when absent)."""
    return value if isinstance(value, list) else []


def keys_for(obj: MemoryObject) -> list[str]:
    keys: list[str] = []
    if obj.object_type == "entity":
        if obj.status in MERGED_STATUSES:
            return []  # a merged entity resolves through its survivor, never by name
        etype = obj.kind
        names = [obj.title, *[str(a) for a in _items(obj.payload.get("aliases"))]]
        keys.append(entity_name_key(etype, obj.title))
        for n in names:
            if normalize_name(n):
                keys.append(entity_alias_key(etype, n))
                keys.append(entity_any_key(n))
    elif obj.object_type == "knowledge":
        subject, predicate = obj.payload.get("subject"), obj.payload.get("predicate")
        if isinstance(subject, str) and subject and isinstance(predicate, str) and predicate:
            keys.append(fact_subject_key(subject))
            pred = normalize_predicate(predicate)
            keys.append(fact_predicate_key(pred))
            if pred not in CANONICAL_PREDICATES:
                keys.append(CUSTOM_PREDICATE_PREFIX + pred)
            target = obj.payload.get("object")
            if isinstance(target, str) and target:
                keys.append(fact_object_key(target))
        if obj.kind == "procedure" and obj.payload.get("procedure_kind"):
            keys.append(procedure_key(str(obj.payload["procedure_kind"]), obj.title))
        if obj.status == "superseded" or obj.metadata.get("evidence_status") == "superseded":
            keys.extend(
                superseded_evidence_key(str(e["source_id"]), str(e["segment_id"]))
                for e in obj.evidence_refs
                if e.get("source_id") and e.get("segment_id")
            )
    elif obj.object_type == "source":
        freshness = _fields(obj.metadata.get("freshness"))
        if obj.status == "active" and freshness.get("is_current", True) and freshness.get("fingerprint"):
            keys.append(source_fingerprint_key(obj.kind, str(freshness["fingerprint"])))
            thread = _fields(obj.metadata.get("thread")).get("key")
            if thread:
                keys.append(conversation_thread_key(str(thread)))
        for fact in _items(obj.metadata.get("specific_facts")):
            if isinstance(fact, dict) and fact.get("kind") and fact.get("value"):
                keys.append(specific_key(str(fact["kind"]), str(fact["value"])))
    return list(dict.fromkeys(keys))

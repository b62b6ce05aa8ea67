"""Derived index material for canonical objects: full-text documents, vectors, graph relations.

Everything here is a pure function of the canonical object, so ``reindex`` can rebuild it all
and a write path and a rebuild can never disagree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from memory_substrate.embed.base import Embedder
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, Relation, SearchDoc, Segment
from memory_substrate.text import index_text
from memory_substrate.util import canonical_json


def _flatten(value: object, out: list[str], depth: int = 0) -> None:
    if depth > 6 or value is None:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            _flatten(v, out, depth + 1)
    elif isinstance(value, list | tuple):
        for v in value[:200]:
            _flatten(v, out, depth + 1)
    else:
        out.append(str(value))


def flatten_text(value: object, limit: int = 20_000) -> str:
    parts: list[str] = []
    _flatten(value, parts)
    return " ".join(parts)[:limit]


def search_doc(obj: MemoryObject) -> SearchDoc:
    """Title > summary > payload > metadata, as separate weighted index fields."""
    payload_text = flatten_text(obj.payload)
    refs = " ".join(obj.subject_refs + obj.source_refs + obj.related_node_refs)
    meta = flatten_text(obj.metadata, 4000)
    return SearchDoc(
        title=index_text(obj.title),
        summary=index_text(obj.summary),
        body=index_text(payload_text, refs),
        meta=index_text(obj.id, obj.kind, obj.object_type, " ".join(obj.scope_refs), meta),
    )


def segment_search_text(seg: Segment) -> tuple[str, str]:
    """(body, meta) for a segment: its text, then its locator and speaker/role metadata."""
    meta_parts = [flatten_text(seg.locator, 1000)]
    for key in ("name", "role", "title", "path", "heading_path"):
        if key in seg.metadata:
            meta_parts.append(flatten_text(seg.metadata[key], 500))
    return index_text(seg.text), index_text(*meta_parts)


def embedding_text(obj: MemoryObject) -> str:
    return f"{obj.title}. {obj.summary}".strip()


def claim_key(obj: MemoryObject) -> str | None:
    """A key shared by structured claims about the same subject and predicate of the same kind."""
    if obj.object_type != "knowledge":
        return None
    subject = obj.payload.get("subject")
    predicate = obj.payload.get("predicate")
    if not subject or not predicate:
        return None
    raw = canonical_json([obj.kind, str(subject), str(predicate).strip().lower()])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def claim_value(obj: MemoryObject) -> str:
    return canonical_json([obj.payload.get("value"), obj.payload.get("object")])


def _rel_id(origin: str, rel_type: str, source: str, target: str) -> str:
    digest = hashlib.sha256(f"{origin}|{rel_type}|{source}|{target}".encode()).hexdigest()[:20]
    return f"rel:{digest}"


def _schema(
    derivation: str, origin: MemoryObject, field: str, source_type: str, target_type: str
) -> JsonObject:
    return {
        "relation_schema": {
            "version": 1,
            "derivation": derivation,
            "origin_object_type": origin.object_type,
            "origin_object_id": origin.id,
            "origin_field": field,
            "source_object_type": source_type,
            "target_object_type": target_type,
        }
    }


def _type_of(ref: str) -> str:
    from memory_substrate.util import object_type_of

    return object_type_of(ref) or "unknown"


def derived_relations(obj: MemoryObject, created_at: str) -> list[Relation]:
    """Graph edges implied by an object's fields, each with its ``relation_schema`` provenance."""
    rels: list[Relation] = []

    def add(rel_type: str, src: str, tgt: str, derivation: str, field: str) -> None:
        rels.append(
            Relation(
                id=_rel_id(obj.id, rel_type, src, tgt),
                rel_type=rel_type,
                source_id=src,
                target_id=tgt,
                origin_id=obj.id,
                payload=_schema(derivation, obj, field, _type_of(src), _type_of(tgt)),
                created_at=created_at,
            )
        )

    for ref in obj.subject_refs:
        add("about", obj.id, ref, "field_reference", "subject_refs")
    for ref in obj.source_refs:
        add("uses_source", obj.id, ref, "field_reference", "source_refs")
    for ref in obj.related_node_refs:
        add("related_to", obj.id, ref, "field_reference", "related_node_refs")
    for ev in obj.evidence_refs:
        add("evidence", obj.id, ev["source_id"], "evidence_ref", "evidence_refs")
    subject, target = obj.payload.get("subject"), obj.payload.get("object")
    predicate = obj.payload.get("predicate")
    if isinstance(subject, str) and isinstance(target, str) and predicate and _type_of(target) != "unknown":
        add(str(predicate), subject, target, "structured_payload", "payload.object")
    if obj.metadata.get("supersedes"):
        add(
            "supersedes", obj.id, str(obj.metadata["supersedes"]), "canonical_relation", "metadata.supersedes"
        )
    # Typed links an object declares itself (graph.v1 imports write edges this way).
    links = obj.metadata.get("links")
    for link in links if isinstance(links, list) else []:
        if (
            isinstance(link, dict)
            and isinstance(link.get("rel_type"), str)
            and isinstance(link.get("target_id"), str)
        ):
            add(link["rel_type"], obj.id, link["target_id"], "canonical_relation", "metadata.links")
    return rels


def referenced_node_ids(obj: MemoryObject) -> list[str]:
    refs = list(obj.subject_refs) + list(obj.related_node_refs)
    for key in ("subject", "object"):
        value = obj.payload.get(key)
        if isinstance(value, str):
            refs.append(value)
    return [r for r in dict.fromkeys(refs) if r.startswith("node:")]


def stub_node(node_id: str, referrer: str, **metadata: object) -> MemoryObject:
    """A placeholder node for a ``node:`` id that is referenced before anything describes it."""
    return MemoryObject(
        id=node_id,
        object_type="node",
        kind="stub",
        status="active",
        title=node_id.split(":", 1)[1] or node_id,
        memory_source="system_generated",
        metadata={"stub": True, "created_by": referrer, **metadata},
    )


def embed_objects(embedder: Embedder | None, objs: Sequence[MemoryObject]) -> list[tuple[str, np.ndarray]]:
    if embedder is None or not objs:
        return []
    vecs = embedder.embed_documents([embedding_text(o) for o in objs])
    return [(o.id, vecs[i]) for i, o in enumerate(objs)]


def segment_embedding_text(text: str, metadata: Mapping[str, object]) -> str:
    """What a segment's vector is made of: its text, except for a code symbol with a docstring,
    whose vector is made of its header (kind, qualified name, file) and docstring. A typed
    parameter list (``url: URL | str, *, params: QueryParamTypes | None = None, ...``) can be most
    of a symbol's words and pulls its vector towards every other signature; what the symbol does
    is in its name and docstring. The full-text index still holds the whole text."""
    at = metadata.get("doc_at")
    if metadata.get("segment_kind") == "code_symbol" and isinstance(at, int) and 0 < at < len(text):
        return text.split("\n", 1)[0] + "\n" + text[at:]
    return text


def embed_segments(embedder: Embedder | None, segs: Iterable[Segment]) -> list[tuple[str, np.ndarray]]:
    segs = list(segs)
    if embedder is None or not segs:
        return []
    vecs = embedder.embed_documents([segment_embedding_text(s.text, s.metadata) for s in segs])
    return [(segment_vector_id(s.source_id, s.id), vecs[i]) for i, s in enumerate(segs)]


def keyed_vectors(
    embedder: Embedder | None, objs: Sequence[MemoryObject]
) -> dict[str, list[tuple[str, np.ndarray]]]:
    """Vectors the knowledge graph resolves by, one owner type per partition so a search loads
    only its own partition: entity names per entity type ("entity:<type>") and procedures per
    procedure kind ("procedure:<kind>")."""
    if embedder is None:
        return {}
    texts: dict[str, list[tuple[str, str]]] = {}
    for o in objs:
        if o.object_type == "entity":
            texts.setdefault(f"entity:{o.kind}", []).append((o.id, o.title))
        elif o.object_type == "knowledge" and o.kind == "procedure" and o.payload.get("procedure_kind"):
            text = f"{o.title}. {o.payload.get('text', '')}".strip()
            texts.setdefault(f"procedure:{o.payload['procedure_kind']}", []).append((o.id, text))
    out: dict[str, list[tuple[str, np.ndarray]]] = {}
    for owner_type, pairs in texts.items():
        vecs = embedder.embed_documents([t for _, t in pairs])
        out[owner_type] = [(oid, vecs[i]) for i, (oid, _) in enumerate(pairs)]
    return out


def segment_vector_id(source_id: str, segment_id: str) -> str:
    return f"{source_id}#{segment_id}"


def lookup_keys(obj: MemoryObject) -> list[str]:
    """Exact-match keys of the knowledge graph (entity names and aliases, fact subjects, objects
    and predicates, procedure signatures, an episode's specific facts). Derived like the rest,
    so ``reindex`` can rebuild them."""
    from memory_substrate.expiry import TTL_KEY
    from memory_substrate.lookup_keys import keys_for

    keys = keys_for(obj)
    if obj.metadata.get("expires_at"):
        keys.append(TTL_KEY)  # objects that can expire: read paths hide them once they have
    return keys

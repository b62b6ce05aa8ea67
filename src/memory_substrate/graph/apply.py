"""Apply one extraction (entities, facts, procedures) of one episode inside one patch.

Used by every extractor: the calling agent, an OpenAI-compatible model and MCP sampling. It
resolves entities in three passes, settles facts against live claims (supersession and trust),
merges procedures, and returns the per-episode trace. It raises before anything is committed
when the extraction refers to missing evidence or unknown entities, so a bad extraction writes
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory_substrate.embed.base import Embedder
from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.graph import procedures
from memory_substrate.graph.claims import apply_settlement, settle, trust_of
from memory_substrate.graph.extraction_trace import ExtractionTrace, FactWritten
from memory_substrate.graph.resolve import EntityResolver
from memory_substrate.graph.schemas import ExtractedFact, Extraction, Literal_
from memory_substrate.graph.stored import count, str_list, text_or_none
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.redaction import Redactions, redact_fields
from memory_substrate.taxonomy import (
    CANONICAL_PREDICATES,
    EVIDENCE_SCORES,
    KNOWLEDGE_STATUS_OF,
    MAX_ENTITIES_PER_EPISODE,
    default_evidence_status,
    evidence_status_of,
    generic_reason,
    normalize_name,
    normalize_predicate,
)
from memory_substrate.util import new_id

DEFAULT_FACT_CONFIDENCE = 0.7
DEFAULT_SALIENCE = 0.5
MAX_EPISODES_ON_ENTITY = 50


@dataclass
class Governance:
    reason: str
    memory_source: str
    scope_refs: list[str]
    extractor: str  # "agent" | "llm:<model>" | "sampling"
    evidence_status: str | None = None  # forced status (model output is "extracted"); else from memory_source


def _fact_text(subject: str, predicate: str, obj: str) -> str:
    return f"{subject} {predicate.replace('_', ' ')} {obj}"


class ExtractionApplier:
    def __init__(
        self,
        patch: Patch,
        embedder: Embedder | None,
        *,
        episode_limit: int | None = MAX_ENTITIES_PER_EPISODE,
        whole_episode: bool = False,
        lenient: bool = False,
    ) -> None:
        """``episode_limit``: distinct entities the episode may hold across extractions. None for
        imports (importers/bulk.py: an imported graph lands on one source per part, which is not
        one episode's extraction); the model extractor allows the limit per window of a long
        episode (graph/extract.py).

        ``whole_episode``: this extraction read the whole episode (the model path; a conversation
        that grew is extracted again), so its entities replace the episode's earlier link list
        instead of adding to it, and the limit counts what this extraction links. Entities of an
        earlier run keep their own record of the episode; nothing is unlinked from them.

        ``lenient``: a fact naming no entity is dropped and listed in the trace's ``dropped``
        instead of refusing the extraction (a model's answer is kept item by item; an agent's
        own extraction is refused whole, so it can correct it)."""
        self.lenient = lenient
        self.episode_limit = episode_limit
        self.whole_episode = whole_episode
        self._links: dict[str, list[str]] = {}  # episode id -> its entity links as this extraction left them
        self.patch = patch
        self.session = patch.session
        self._resolved: dict[str, MemoryObject] = {}  # entities of this extraction, as this patch left them
        self.embedder = embedder

    # --- episode -----------------------------------------------------------------------
    def _episode(self, episode_id: str) -> MemoryObject:
        ep = self.session.get_object(episode_id)
        if ep is None or ep.object_type != "source":
            raise NotFoundError(f"episode_id: source {episode_id} not found", details={"id": episode_id})
        return ep

    def _segment_times(self, episode: MemoryObject, wanted: set[str]) -> dict[str, str | None]:
        if not wanted:
            return {}
        segs = self.session.get_segments(episode.id, segment_ids=sorted(wanted))
        found = {s.id: text_or_none(s.metadata.get("created_at")) for s in segs}
        missing = sorted(wanted - set(found))
        if missing:
            from memory_substrate.errors import EvidenceError

            raise EvidenceError(
                f"segment_ids: {', '.join(missing[:5])} not found in episode {episode.id}",
                details={"source_id": episode.id, "missing_segment_ids": missing},
            )
        return found

    # --- the whole extraction ------------------------------------------------------------
    def apply(self, episode_id: str, ex: Extraction, gov: Governance) -> ExtractionTrace:
        """Apply the extraction; its trace (a model run merges the traces of its windows)."""
        started = time.perf_counter()
        # A model's answer (or an import) may repeat a secret of the episode; it is redacted before
        # any of it is resolved or written (an agent's own extraction already was, by memory_remember).
        found = Redactions()
        redact_fields(ex, found)
        episode = self._episode(episode_id)
        wanted = {s for f in ex.facts for s in f.segment_ids} | {
            s for p in ex.procedures for s in p.segment_ids
        }
        seg_times = self._segment_times(episode, wanted)
        episode_time = (
            episode.payload.get("ended_at") or episode.payload.get("started_at") or episode.created_at
        )
        trace: ExtractionTrace = {
            "episode_id": episode.id,
            "extractor": gov.extractor,
            "entities": {
                "extracted": len(ex.entities),
                "resolved": [],
                "new": [],
                "refused": [],
                "conflicts": [],
            },
            "facts": {
                "extracted": len(ex.facts),
                "created": [],
                "reinforced": [],
                "superseded": [],
                "contested": [],
                "history": [],
            },
            "custom_predicates": [],
            "evidence_strengths": {},
            "procedures": {"extracted": len(ex.procedures), "created": [], "merged": [], "promoted": []},
            "errors": [],
        }
        if found:  # as ``Redactions.report`` adds it to an answer
            trace["redacted"] = found.summary()
        names = self._entities(episode, ex, gov, trace)
        for fact in ex.facts:
            try:
                self._fact(episode, fact, names, gov, seg_times, str(episode_time), trace)
            except (NotFoundError, ValidationError) as exc:
                if not self.lenient:
                    raise
                trace.setdefault("dropped", []).append(
                    {
                        "item": f"fact {fact.subject} {fact.predicate} {fact.object or fact.value}",
                        "reason": str(exc),
                    }
                )
        for proc in ex.procedures:
            refs = [{"source_id": episode.id, "segment_id": s} for s in proc.segment_ids]
            outcome = procedures.observe(
                self.patch,
                self.embedder,
                kind=proc.kind,
                title=proc.title,
                text=proc.text,
                episode_id=episode.id,
                confidence=proc.confidence,
                evidence_refs=refs,
                scope_refs=gov.scope_refs,
                memory_source=gov.memory_source,
                reason=gov.reason,
            )
            procs = trace["procedures"]
            if outcome["outcome"] == "created":
                procs["created"].append(outcome)
            elif outcome["outcome"] == "merged":
                procs["merged"].append(outcome)
            elif outcome["outcome"] == "merged_and_promoted":  # promoted, and merged like any other
                procs["promoted"].append(outcome)
                procs["merged"].append(outcome)
        trace["latency_ms"] = round((time.perf_counter() - started) * 1000, 2)
        return trace

    # --- entities ------------------------------------------------------------------------
    def _entities(
        self, episode: MemoryObject, ex: Extraction, gov: Governance, trace: ExtractionTrace
    ) -> dict[str, str]:
        """Resolve or create each entity; returns normalised name/alias -> entity id."""
        names: dict[str, str] = {}
        resolver = EntityResolver(self.session, self.embedder)
        seen: set[tuple[str, str]] = set()
        for ent in ex.entities:
            key = (ent.type, normalize_name(ent.name))
            if key in seen:
                continue
            seen.add(key)
            why = generic_reason(ent.name)
            if why:
                trace["entities"]["refused"].append({"name": ent.name, "type": ent.type, "reason": why})
                continue
            res = resolver.resolve(
                ent.name, ent.type, list(dict.fromkeys([*ent.aliases, *ent.model_aliases]))
            )
            if res.conflict:
                trace["entities"]["conflicts"].append({"name": ent.name, "type": ent.type, **res.conflict})
            if res.entity_id is not None:
                entity = self.session.get_object(res.entity_id)
                assert entity is not None
                entity = self._touch(
                    entity, ent.name, [*ent.aliases, *ent.model_aliases], episode.id, ent.model_aliases
                )
                trace["entities"]["resolved"].append(
                    {
                        "name": ent.name,
                        "entity_id": entity.id,
                        "pass": res.method,
                        "confidence": res.confidence,
                    }
                )
            else:
                aliases = [
                    a
                    for a in dict.fromkeys([*ent.aliases, *ent.model_aliases])
                    if normalize_name(a) != normalize_name(ent.name)
                ]
                model = [a for a in ent.model_aliases if a in aliases]
                entity = self.patch.create(
                    MemoryObject(
                        id=new_id("entity"),
                        object_type="entity",
                        kind=ent.type,
                        status="active",
                        title=ent.name,
                        summary=ent.summary or f"{ent.type}: {ent.name}",
                        memory_source=gov.memory_source,
                        reason=gov.reason,
                        scope_refs=list(gov.scope_refs),
                        payload={
                            "name": ent.name,
                            "entity_type": ent.type,
                            "aliases": aliases,
                            **({"model_aliases": model} if model else {}),
                        },
                        metadata={
                            "episode_ids": [episode.id],
                            "mentions": 1,
                            "resolution": {"method": "new", "candidates": res.candidates},
                        },
                    )
                )
                trace["entities"]["new"].append({"name": ent.name, "entity_id": entity.id, "type": ent.type})
            self._resolved[entity.id] = entity  # the facts below read it without a round trip
            for n in [ent.name, *ent.aliases, *ent.model_aliases]:
                names.setdefault(normalize_name(n), entity.id)
        self._link_entities(episode, [e.id for e in self._resolved.values()])
        return names

    def _link_entities(self, episode: MemoryObject, entity_ids: list[str]) -> None:
        """The limit of ``MAX_ENTITIES_PER_EPISODE`` holds per episode, across extraction
        calls: the episode remembers its entities, and an extraction that would take it over the
        limit is refused whole (the patch is not committed). A whole-episode extraction starts the
        count afresh (see ``whole_episode``)."""
        stored = str_list(episode.metadata.get("entity_ids"))
        if episode.id not in self._links:
            self._links[episode.id] = [] if self.whole_episode else stored
        linked = self._links[episode.id]
        added = [e for e in dict.fromkeys(entity_ids) if e not in linked]
        if self.episode_limit is not None and len(linked) + len(added) > self.episode_limit:
            before = "" if self.whole_episode else f" (it holds {len(linked)} from earlier extractions)"
            raise ValidationError(
                f"episode {episode.id} would hold {len(linked) + len(added)} entities; at most "
                f"{self.episode_limit} per episode{before}",
                details={
                    "episode_id": episode.id,
                    "entities_linked": len(linked),
                    "entities_added": len(added),
                    "limit": self.episode_limit,
                },
            )
        self._links[episode.id] = links = [*linked, *added]
        if self.episode_limit is None or links == stored:
            return
        self.patch.update(
            replace(episode, metadata={**episode.metadata, "entity_ids": links}),
            action="entities_linked",
            changes={"entity_ids": added},
            derive=False,
            embed=False,
        )

    def _touch(
        self,
        entity: MemoryObject,
        name: str,
        aliases: list[str],
        episode_id: str,
        model_aliases: Sequence[str] = (),
    ) -> MemoryObject:
        """A resolved mention: learn new aliases (``model_aliases``: those that are the model's
        own knowledge, not the episode's words), count the mention, remember the episode."""
        stored = str_list(entity.payload.get("aliases"))
        known = {normalize_name(entity.title), *(normalize_name(a) for a in stored)}
        learned = [a for a in [name, *aliases] if normalize_name(a) not in known]
        learned = list({normalize_name(a): a for a in learned}.values())
        episodes = str_list(entity.metadata.get("episode_ids"))
        if not learned and episode_id in episodes:
            return entity
        kept = [*stored, *learned][:50]
        payload: JsonObject = {**entity.payload, "aliases": kept}
        model = [a for a in learned if a in model_aliases and a in kept]
        if model:
            payload["model_aliases"] = [*str_list(entity.payload.get("model_aliases")), *model][:50]
        meta: JsonObject = {
            **entity.metadata,
            "episode_ids": [*episodes, episode_id][-MAX_EPISODES_ON_ENTITY:]
            if episode_id not in episodes
            else episodes,
            "mentions": count(entity.metadata.get("mentions"), 0) + 1,
        }
        return self.patch.update(
            replace(entity, payload=payload, metadata=meta),
            action="mention",
            changes={"aliases_added": learned, "episode_id": episode_id},
        )

    def _entity_ref(self, ref: str, names: dict[str, str], field: str) -> MemoryObject | None:
        """An entity named in this extraction, an existing ``ent:`` id, or a unique known name."""
        if ref.startswith("ent:"):
            obj = self.session.get_object(ref)
            if obj is None or obj.object_type != "entity":
                raise NotFoundError(f"{field}: entity {ref} not found", details={"id": ref, "field": field})
            return obj
        norm = normalize_name(ref)
        if norm in names:
            return self._resolved.get(names[norm]) or self.session.get_object(names[norm])
        named = EntityResolver(self.session, None).named(ref)
        return named[0] if len(named) == 1 else None

    # --- facts ---------------------------------------------------------------------------
    def _fact(
        self,
        episode: MemoryObject,
        fact: ExtractedFact,
        names: dict[str, str],
        gov: Governance,
        seg_times: dict[str, str | None],
        episode_time: str,
        trace: ExtractionTrace,
    ) -> None:
        subject = self._entity_ref(fact.subject, names, "facts.subject")
        if subject is None:
            raise ValidationError(
                f"facts: subject {fact.subject!r} is not an entity of this extraction nor a known entity",
                details={"subject": fact.subject},
            )
        target = self._entity_ref(fact.object, names, "facts.object") if fact.object is not None else None
        value: Literal_ | None = fact.value
        if fact.object is not None and target is None:
            value = fact.object  # an object that names no entity is kept as a literal
            trace["errors"].append({"kind": "object_as_literal", "object": fact.object})
        predicate = normalize_predicate(fact.predicate)
        canonical = predicate in CANONICAL_PREDICATES
        if not canonical and predicate not in trace["custom_predicates"]:
            trace["custom_predicates"].append(predicate)
        refs = [{"source_id": episode.id, "segment_id": s} for s in dict.fromkeys(fact.segment_ids)]
        status = gov.evidence_status or default_evidence_status(gov.memory_source, has_evidence=bool(refs))
        if gov.evidence_status == "extracted" and (not refs or fact._cited_by_rule):
            status = "inferred"  # a model's claim that cites nothing (or everything) is an inference
        if fact.valid_from is not None:
            valid_from = fact.valid_from.isoformat()
        else:
            times = [t for s in fact.segment_ids if (t := seg_times.get(s))]
            valid_from = min(times) if times else episode_time
        obj = _fact_object(fact, gov, subject, target, predicate, value, refs, status, episode.id, valid_from)
        trace["evidence_strengths"][status] = trace["evidence_strengths"].get(status, 0) + 1
        self._settle_fact(obj, episode.id, trace)

    def _settle_fact(self, obj: MemoryObject, episode_id: str, trace: ExtractionTrace) -> None:
        """Settle a new fact against the live claims: reinforce its duplicate, or create it
        (current, contested or already history) and supersede what it replaces."""
        settled = settle(self.session, obj)
        if settled.duplicate_of is not None:
            closed = self._reinforce(settled.duplicate_of, obj, episode_id)
            trace["facts"]["reinforced"].append({"fact_id": settled.duplicate_of.id, "title": obj.title})
            for old in closed:
                trace["facts"]["superseded"].append(
                    {"fact_id": old.id, "title": old.title, "superseded_by": settled.duplicate_of.id}
                )
            return
        created = self.patch.create(settled.obj)
        apply_settlement(self.patch, created, settled)
        entry: FactWritten = {
            "fact_id": created.id,
            "title": created.title,
            "status": created.status,
            # a string by construction: ``_fact_object`` writes it, ``settle`` may replace it
            "evidence_status": str(created.metadata["evidence_status"]),
        }
        if created.status == "superseded":
            by = text_or_none(created.metadata.get("superseded_by"))
            trace["facts"]["history"].append({**entry, "superseded_by": by})
        elif created.status == "contested":
            trace["facts"]["contested"].append({**entry, "conflicts": settled.conflicts})
        else:
            trace["facts"]["created"].append(entry)
        for old in settled.supersede:
            trace["facts"]["superseded"].append(
                {"fact_id": old.id, "title": old.title, "superseded_by": created.id}
            )

    def _reinforce(self, existing: MemoryObject, new: MemoryObject, episode_id: str) -> list[MemoryObject]:
        """The same claim again: more evidence, and a higher evidence status if the new one is
        more trusted (never a lower one). A claim lifted above its rivals settles again, so a
        user confirming a contested claim makes it win. Returns the claims it superseded."""
        refs = list(existing.evidence_refs)
        added = [r for r in new.evidence_refs if r not in refs]
        meta = dict(existing.metadata)
        first = meta.get("episode_id")
        episodes = str_list(meta.get("episode_ids")) or ([first] if isinstance(first, str) and first else [])
        upgrade = trust_of(new) > trust_of(existing)
        if episode_id in episodes and not added and not upgrade:
            return []
        meta["episode_ids"] = (
            [*episodes, episode_id][-MAX_EPISODES_ON_ENTITY:] if episode_id not in episodes else episodes
        )
        meta["observations"] = count(meta.get("observations"), 1) + 1
        status = existing.status
        changes: JsonObject = {"evidence_added": added, "episode_id": episode_id}
        if upgrade:
            evidence = str(new.metadata["evidence_status"])  # a string: ``_fact_object`` wrote it
            meta["evidence_status"] = evidence
            meta.pop("blocked_by", None)
            if existing.status in ("candidate", "contested"):
                status = KNOWLEDGE_STATUS_OF[evidence]
            changes["evidence_status"] = {
                "from": existing.metadata.get("evidence_status"),
                "to": evidence,
            }
        lifted = replace(
            existing,
            evidence_refs=(refs + added)[-100:],
            metadata=meta,
            status=status,
            memory_source=new.memory_source if upgrade else existing.memory_source,
            confidence=max(existing.confidence or 0.0, new.confidence or 0.0),
        )
        settled = settle(self.session, lifted) if upgrade else None
        if settled is not None:
            lifted = settled.obj
            if lifted.status != existing.status:
                changes["status"] = {"from": existing.status, "to": lifted.status}
        updated = self.patch.update(lifted, action="reinforce", changes=changes)
        if settled is None:
            return []
        apply_settlement(self.patch, updated, settled)
        return settled.supersede


def evidence_score(obj: MemoryObject) -> float:
    """The evidence-status score of a claim (docs/knowledge-graph.md): its own status, else the one
    its source and citations earn."""
    return EVIDENCE_SCORES[evidence_status_of(obj.metadata, obj.memory_source, bool(obj.evidence_refs))]


def _fact_object(
    fact: ExtractedFact,
    gov: Governance,
    subject: MemoryObject,
    target: MemoryObject | None,
    predicate: str,
    value: Literal_ | None,
    refs: list[dict[str, str]],
    status: str,
    episode_id: str,
    valid_from: str,
) -> MemoryObject:
    """The fact as a knowledge object: its text, claim payload and extraction metadata."""
    object_text = target.title if target is not None else str(value)
    text = _fact_text(subject.title, predicate, object_text)
    return MemoryObject(
        id=new_id("knowledge"),
        object_type="knowledge",
        kind="fact",
        status=KNOWLEDGE_STATUS_OF[status],
        title=text[:500],
        summary=text,
        memory_source=gov.memory_source,
        reason=gov.reason,
        confidence=fact.confidence if fact.confidence is not None else DEFAULT_FACT_CONFIDENCE,
        scope_refs=list(gov.scope_refs),
        subject_refs=[subject.id],
        evidence_refs=refs,
        payload={
            "subject": subject.id,
            "predicate": predicate,
            "object": target.id if target is not None else None,
            "value": None if target is not None else value,
        },
        metadata={
            "evidence_status": status,
            "salience": fact.salience if fact.salience is not None else DEFAULT_SALIENCE,
            "episode_id": episode_id,
            "canonical_predicate": predicate in CANONICAL_PREDICATES,
            "extractor": gov.extractor,
        },
        valid_from=valid_from,
    )

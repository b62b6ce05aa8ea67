"""Import from, and export to, the reference MCP memory server's JSON Lines file.

Format (``@modelcontextprotocol/server-memory``): one JSON object per line,
``{"type": "entity", "name", "entityType", "observations": [...]}`` or
``{"type": "relation", "from", "to", "relationType"}``. Names are the entities' identities.

Mapping (docs/importers.md has the full table and the reasons):

* an entity becomes an entity of our taxonomy; ``entityType`` maps onto the nearest of our ten
  types through ``TYPE_SYNONYMS``; a type with no match is imported as ``pattern`` and listed in
  the report's ``type_mapping`` (``"<type>": "pattern (no match)"``);
* each observation becomes a fact ``entity --observation--> "text"`` (a literal value) citing the
  segment that holds it; the same observation imported again reinforces that fact;
* a relation becomes a fact ``from --predicate--> to``; ``relationType`` is normalised
  (``"works at"`` -> ``works_at``) and mapped onto a canonical predicate where one means the
  same (``part_of`` -> ``contained_in``); relations naming an entity that the store does not
  hold (after the entity pass) are skipped and reported.

Streaming. The file is read twice, line by line (entities, then relations, so a relation may
name an entity defined further down). Records are grouped into *parts* with content-defined
boundaries (a boundary after a record whose name hashes to 0 mod ``BOUNDARY_MODULUS``, or at the
part cap), and each part is captured as one source with one segment per observation or
relation. An unchanged part is a no-op, and an edit moves only the parts it touches, so a
re-import of an unchanged file writes nothing and a re-import of an edited file rewrites little.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from memory_substrate.app import Memory
from memory_substrate.errors import MemorySubstrateError, ValidationError

# Re-exported: tests replace it here, where the importer looks it up.
from memory_substrate.importers.bulk import apply_extractions as apply_extractions
from memory_substrate.importers.common import (
    DEFAULT_SCOPE,
    ImportReport,
    Progress,
    content_hash,
    is_observation,
    part_done,
    store_part,
)
from memory_substrate.importers.extraction_input import ExtractedEntity, ExtractedFact, ExtractionGroup
from memory_substrate.importers.mcp_format import EntityLine, RelationLine
from memory_substrate.importers.result_types import ExportCounts, ImportResult
from memory_substrate.ingest.captured import CapturedSegment
from memory_substrate.ingest.pathpolicy import PathPolicy
from memory_substrate.json_types import JsonObject
from memory_substrate.lookup_keys import entity_any_key
from memory_substrate.models import MemoryObject
from memory_substrate.taxonomy import (
    CANONICAL_PREDICATES,
    ENTITY_TYPES,
    MAX_ENTITIES_PER_EPISODE,
    generic_reason,
    normalize_name,
    normalize_predicate,
)
from memory_substrate.validation import input_problems

FORMAT = "mcp-memory"
# A part (one captured source, one patch) ends after a record whose key hashes to 0 mod
# BOUNDARY_MODULUS (content-defined, so an edit moves only nearby boundaries) or at a cap that
# bounds its memory. Within a part, records are applied as extraction groups of at most
# MAX_ENTITIES_PER_EPISODE entities and MAX_FACTS_PER_GROUP facts (what one extraction holds).
BOUNDARY_MODULUS = 256
MAX_PART_RECORDS = 1000
MAX_PART_SEGMENTS = 4000
MAX_PART_BYTES = 256 * 1024
MAX_FACTS_PER_GROUP = 100
OBSERVATION = "observation"  # the predicate of an imported observation (a fact with a literal value)
OBSERVATION_CHARS = 10_000
MAX_LINE_BYTES = 1_000_000
PROGRESS_BYTES = 128 * 1024

TYPE_SYNONYMS: dict[str, str] = {
    **{t: t for t in ENTITY_TYPES},
    **dict.fromkeys(
        [
            "people",
            "human",
            "user",
            "individual",
            "contact",
            "author",
            "customer",
            "employee",
            "developer",
            "engineer",
            "persona",
            "character",
        ],
        "person",
    ),
    **dict.fromkeys(
        [
            "org",
            "organisation",
            "company",
            "business",
            "team",
            "group",
            "institution",
            "agency",
            "vendor",
            "client",
            "startup",
            "department",
            "corporation",
            "university",
        ],
        "organization",
    ),
    **dict.fromkeys(
        ["repo", "repository", "product", "initiative", "program", "programme", "codebase"], "project"
    ),
    **dict.fromkeys(
        [
            "app",
            "application",
            "api",
            "system",
            "server",
            "microservice",
            "website",
            "platform",
            "endpoint",
            "backend",
            "frontend",
            "bot",
        ],
        "service",
    ),
    **dict.fromkeys(
        [
            "tool",
            "library",
            "framework",
            "language",
            "programming_language",
            "software",
            "database",
            "package",
            "technology_stack",
            "protocol",
            "model",
            "sdk",
            "runtime",
            "os",
        ],
        "technology",
    ),
    **dict.fromkeys(
        [
            "concept",
            "idea",
            "practice",
            "approach",
            "method",
            "methodology",
            "principle",
            "topic",
            "theme",
            "design_pattern",
            "best_practice",
            "skill",
            "preference",
            "habit",
        ],
        "pattern",
    ),
    **dict.fromkeys(
        [
            "env",
            "location",
            "place",
            "region",
            "cluster",
            "host",
            "machine",
            "stage",
            "city",
            "country",
            "infrastructure",
        ],
        "environment",
    ),
    **dict.fromkeys(
        [
            "doc",
            "file",
            "note",
            "article",
            "book",
            "paper",
            "page",
            "spec",
            "specification",
            "report",
            "document_file",
            "url",
            "link",
        ],
        "document",
    ),
    **dict.fromkeys(["kpi", "measure", "measurement", "statistic", "number", "goal"], "metric"),
    **dict.fromkeys(["choice", "resolution", "adr", "plan", "policy", "rule"], "decision"),
}
FALLBACK_TYPE = "pattern"

PREDICATE_SYNONYMS: dict[str, str] = {
    "part_of": "contained_in",
    "is_part_of": "contained_in",
    "belongs_to": "contained_in",
    "is_in": "contained_in",
    "has_part": "contains",
    "includes": "contains",
    "has": "contains",
    "depends": "depends_on",
    "requires": "depends_on",
    "needs": "depends_on",
    "created": "authored",
    "wrote": "authored",
    "created_by": "authored_by",
    "written_by": "authored_by",
    "is_using": "uses",
    "use": "uses",
    "is_used_by": "used_by",
    "owner_of": "owns",
    "owned": "owns",
    "is_owned_by": "owned_by",
    "manage": "manages",
    "is_managed_by": "managed_by",
    "runs_on": "deployed_to",
    "deployed_on": "deployed_to",
    "integrates": "integrates_with",
    "replaces": "replaced",
    "is_replaced_by": "replaced_by",
    "implement": "implements",
    "host": "hosts",
    "decides": "decided",
    "block": "blocks",
}


def map_entity_type(raw: str) -> tuple[str, bool]:
    """Our entity type for an ``entityType``, and whether a real match was found."""
    key = normalize_predicate(raw or "")
    if key in TYPE_SYNONYMS:
        return TYPE_SYNONYMS[key], True
    if key.endswith("s") and key[:-1] in TYPE_SYNONYMS:
        return TYPE_SYNONYMS[key[:-1]], True
    return FALLBACK_TYPE, False


def map_predicate(raw: str) -> str | None:
    """A predicate our schema accepts for a ``relationType``: canonical where one means the same."""
    pred = normalize_predicate(raw or "")
    pred = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in pred).strip("_")
    while "__" in pred:
        pred = pred.replace("__", "_")
    if not pred or not pred[0].isalpha():
        return None
    pred = PREDICATE_SYNONYMS.get(pred, pred)[:64]
    return pred


def _records(
    policy: PathPolicy,
    path: Path,
    wanted: str,
    report: ImportReport | None,
    progress: Progress | None,
    done_before: int,
    total: int,
) -> Iterator[tuple[int, JsonObject, int]]:
    """(line number, record, its size in bytes) of every record of type ``wanted``, read one line
    at a time from the file opened once under the path policy (never a FIFO, never through a symlink)."""
    with policy.open_binary(path) as fh:
        read = reported = 0
        for lineno, raw in enumerate(fh, start=1):
            read += len(raw)
            if progress is not None and (lineno % 200 == 0 or read - reported >= PROGRESS_BYTES):
                reported = read
                progress(done_before + read, total, f"{wanted}s, line {lineno}")
            if not raw.strip():
                continue
            if len(raw) > MAX_LINE_BYTES:
                if report is not None:
                    report.skip("line_too_long", line=lineno, bytes=len(raw))
                continue
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                if report is not None:
                    report.skip("invalid_json", line=lineno, error=str(exc)[:200])
                continue
            if numbers := input_problems(
                rec, "", strings=False
            ):  # NaN or Infinity: the one rule for every input
                if report is not None:
                    report.skip("non_finite_number", line=lineno, fields=[path for path, _, _ in numbers])
                continue
            if not isinstance(rec, dict) or rec.get("type") not in ("entity", "relation"):
                if report is not None:
                    report.skip(
                        "unknown_record_type",
                        line=lineno,
                        type=str(rec.get("type") if isinstance(rec, dict) else type(rec).__name__),
                    )
                continue
            if rec["type"] == wanted:
                yield lineno, rec, len(raw)
        if progress is not None:
            progress(done_before + read, total, f"{wanted}s done")


def _boundary(name: str) -> bool:
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16) % BOUNDARY_MODULUS == 0


def _observation_count(rec: JsonObject) -> int:
    obs = rec.get("observations")
    return len(obs) if isinstance(obs, list) else 0


def _name(rec: JsonObject) -> str:
    """An entity record's name: a record reaches a part only when its name is a string (``run``)."""
    return str(rec["name"])


def _observations(rec: JsonObject) -> list[object]:
    """The record's ``observations`` as iterating the JSON value gives them: a list item by item,
    a string by character, an object by key; a number is no sequence of observations."""
    raw = rec.get("observations") or []
    if not isinstance(raw, list | str | dict):
        raise TypeError(f"'{type(raw).__name__}' object is not iterable")
    return list(raw)


class McpMemoryImporter:
    def __init__(
        self, memory: Memory, path: Path, *, scope: str = DEFAULT_SCOPE, progress: Progress | None = None
    ) -> None:
        self.memory = memory
        self.policy = PathPolicy.from_settings(memory.settings)
        self.path = self.policy.resolve(path, "file")
        self.scope = scope
        self.progress = progress
        self.report = ImportReport(FORMAT, str(self.path))
        self.type_mapping: dict[str, str] = {}
        self.reason = f"imported from the MCP memory server file {self.path.name}"

    def run(self) -> ImportResult:
        if not self.path.is_file():
            raise ValidationError(f"{self.path} is not a file", details={"path": str(self.path)})
        total = os.path.getsize(self.path) * 2
        part: list[tuple[int, JsonObject]] = []
        segments = size = 0
        for lineno, rec, nbytes in _records(
            self.policy, self.path, "entity", self.report, self.progress, 0, total
        ):
            name = rec.get("name")
            if not isinstance(name, str) or not name.strip():
                self.report.skip("entity_without_name", line=lineno)
                continue
            part.append((lineno, rec))
            segments += 1 + _observation_count(rec)
            size += nbytes
            if (
                len(part) >= MAX_PART_RECORDS
                or segments >= MAX_PART_SEGMENTS
                or size >= MAX_PART_BYTES
                or _boundary(name)
            ):
                self._entity_part(part)
                part, segments, size = [], 0, 0
        if part:
            self._entity_part(part)
        part, size = [], 0
        for lineno, rec, nbytes in _records(
            self.policy, self.path, "relation", None, self.progress, total // 2, total
        ):
            part.append((lineno, rec))
            size += nbytes
            if (
                len(part) >= MAX_PART_RECORDS
                or size >= MAX_PART_BYTES
                or _boundary(f"{rec.get('from')}|{rec.get('relationType')}|{rec.get('to')}")
            ):
                self._relation_part(part)
                part, size = [], 0
        if part:
            self._relation_part(part)
        self.report.notes["type_mapping"] = self.type_mapping
        return self.report.to_dict()

    def _capture(
        self,
        part: list[tuple[int, JsonObject]],
        records: str,
        segments: list[CapturedSegment],
        title: str,
    ) -> str | None:
        """Capture the part as a source; its id, or None when it is unchanged and was applied."""
        lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for _, r in part]
        digest = content_hash(lines)
        first, last = part[0][0], part[-1][0]
        source_id, new = store_part(
            self.memory,
            uri=f"{FORMAT}:{self.path}#{records}s:{digest[:20]}",
            fingerprint=digest,
            title=f"{self.path.name}: {title} (lines {first}-{last})",
            segments=segments,
            adapter="mcp_memory_import",
            payload={
                "path": str(self.path),
                "format": "mcp-memory-jsonl",
                "records": records,
                "line_first": first,
                "line_last": last,
                "record_count": len(part),
            },
        )
        if not new and part_done(self.memory, source_id):
            self.report.add("parts_unchanged")
            return None
        self.report.add("parts_new" if new else "parts_resumed")
        self.report.patches += int(new)
        return source_id

    # --- entities and observations --------------------------------------------------------------
    def _entity_part(self, part: list[tuple[int, JsonObject]]) -> None:
        segments, where = self._entity_segments(part)
        title = f"entities {_name(part[0][1])[:40]} … {_name(part[-1][1])[:40]}"
        source_id = self._capture(part, "entity", segments, title)
        if source_id is None:
            return
        groups = self._entity_groups(source_id, part, where)
        if not groups:
            return
        results = apply_extractions(
            self.memory, source_id, groups, summary={"importer": FORMAT, "records": "entity"}
        )
        self.report.patches += 1
        for result in results:
            self.report.add("observations_new", result["facts"].get("created", 0))
            self.report.add("observations_already_present", result["facts"].get("reinforced", 0))
            self.report.add("entities_new", len(result["entities"]["new"]))
            for refused in result["entities"]["refused"]:
                self.report.skip(f"entity_{refused['reason']}", name=refused["name"])
        # An entity listed again in a later group (split observations, a repeated name) resolves
        # to itself there: count each entity once, as new if any group created it.
        new_ids: set[object] = {e["entity_id"] for r in results for e in r["entities"]["new"]}
        resolved = {e["entity_id"] for r in results for e in r["entities"]["resolved"]} - new_ids
        self.report.add("entities_resolved", len(resolved))

    def _entity_segments(
        self, part: list[tuple[int, JsonObject]]
    ) -> tuple[list[CapturedSegment], dict[tuple[int, int], str]]:
        """One segment per entity record and per non-empty observation, with where each landed."""
        segments: list[CapturedSegment] = []
        where: dict[tuple[int, int], str] = {}  # (line, observation index or -1) -> segment id
        for lineno, rec in part:
            raw_type = str(rec.get("entityType") or "")
            segments.append(
                CapturedSegment(
                    text=f"{_name(rec)} ({raw_type or 'untyped'})",
                    locator={
                        "kind": "jsonl_record",
                        "path": str(self.path),
                        "line": lineno,
                        "record": "entity",
                    },
                    metadata={"record": "entity", "name": _name(rec), "entity_type": raw_type},
                )
            )
            where[(lineno, -1)] = f"seg-{len(segments)}"
            for i, obs in enumerate(_observations(rec)):
                if not isinstance(obs, str) or not obs.strip():
                    continue
                segments.append(
                    CapturedSegment(
                        text=obs,
                        locator={
                            "kind": "jsonl_record",
                            "path": str(self.path),
                            "line": lineno,
                            "observation": i,
                        },
                        metadata={"record": "observation", "name": _name(rec)},
                    )
                )
                where[(lineno, i)] = f"seg-{len(segments)}"
        return segments, where

    def _entity_groups(
        self, source_id: str, part: list[tuple[int, JsonObject]], where: dict[tuple[int, int], str]
    ) -> list[ExtractionGroup]:
        """The part's entities and observation facts, cut into extractions no larger than one holds."""
        groups: list[ExtractionGroup] = []
        group_entities: list[ExtractedEntity] = []
        group_facts: list[ExtractedFact] = []

        def flush() -> None:
            nonlocal group_entities, group_facts
            if group_entities:
                groups.append(self._group(source_id, group_entities, group_facts))
            group_entities, group_facts = [], []

        for lineno, rec in part:
            read = self._entity_record(lineno, rec, where)
            if read is None:
                continue
            entity, facts = read
            # A name repeated in the file is listed once per group; in a later group it
            # resolves exactly to the entity an earlier group created.
            key = (entity["type"], normalize_name(entity["name"]))
            if (
                len(group_entities) >= MAX_ENTITIES_PER_EPISODE
                or len(group_facts) + len(facts) > MAX_FACTS_PER_GROUP
            ):
                flush()
            if key not in {(e["type"], normalize_name(e["name"])) for e in group_entities}:
                group_entities.append(entity)
            for start in range(0, len(facts), MAX_FACTS_PER_GROUP):
                if start:  # one entity with more observations than an extraction holds takes several
                    flush()
                    group_entities.append(entity)
                group_facts.extend(facts[start : start + MAX_FACTS_PER_GROUP])
        flush()
        return groups

    def _entity_record(
        self, lineno: int, rec: JsonObject, where: dict[tuple[int, int], str]
    ) -> tuple[ExtractedEntity, list[ExtractedFact]] | None:
        """One entity record as an extracted entity and its observations as facts; None (and a
        skip reported) for a generic name."""
        raw_type = str(rec.get("entityType") or "")
        etype, matched = map_entity_type(raw_type)
        self.type_mapping.setdefault(raw_type, etype if matched else f"{etype} (no match)")
        why = generic_reason(_name(rec))
        if why:
            self.report.skip(
                f"entity_{why}",
                line=lineno,
                name=_name(rec),
                observations=len(_observations(rec)),
            )
            return None
        entity: ExtractedEntity = {
            "name": _name(rec)[:200],
            "type": etype,
            "summary": f"Imported from an MCP memory file (entityType {raw_type or 'none'})."[:2000],
        }
        facts: list[ExtractedFact] = []
        for i, obs in enumerate(_observations(rec)):
            if not isinstance(obs, str) or not obs.strip():
                self.report.skip("empty_observation", line=lineno, observation=i)
                continue
            text = obs.strip()
            if len(text) > OBSERVATION_CHARS:
                self.report.skip("observation_truncated", line=lineno, observation=i, chars=len(text))
                text = text[:OBSERVATION_CHARS]
            facts.append(
                {
                    "subject": entity["name"],
                    "predicate": OBSERVATION,
                    "value": text,
                    "segment_ids": [where[(lineno, i)]],
                }
            )
        return entity, facts

    def _group(
        self, source_id: str, entities: list[ExtractedEntity], facts: list[ExtractedFact]
    ) -> ExtractionGroup:
        return {
            "episode_id": source_id,
            "entities": entities,
            "facts": facts,
            "reason": self.reason,
            "memory_source": "imported",
            "scope_refs": [self.scope],
        }

    # --- relations -------------------------------------------------------------------------------
    def _relation_part(self, part: list[tuple[int, JsonObject]]) -> None:
        segments = []
        for lineno, rec in part:
            segments.append(
                CapturedSegment(
                    text=f"{rec.get('from')} {rec.get('relationType')} {rec.get('to')}",
                    locator={
                        "kind": "jsonl_record",
                        "path": str(self.path),
                        "line": lineno,
                        "record": "relation",
                    },
                    metadata={"record": "relation"},
                )
            )
        source_id = self._capture(part, "relation", segments, "relations")
        if source_id is None:
            return
        names = {
            str(v)
            for _, rec in part
            for v in (rec.get("from"), rec.get("to"))
            if isinstance(v, str) and v.strip()
        }
        known = self._entities(names)
        facts: list[ExtractedFact] = []
        for i, (lineno, rec) in enumerate(part):
            src, dst, rtype = rec.get("from"), rec.get("to"), rec.get("relationType")
            if not all(isinstance(v, str) and v.strip() for v in (src, dst, rtype)):
                self.report.skip("relation_incomplete", line=lineno)
                continue
            predicate = map_predicate(str(rtype))
            if predicate is None:
                self.report.skip("relation_type_unusable", line=lineno, relation_type=rtype)
                continue
            subject, target = known.get(str(src)), known.get(str(dst))
            if subject is None or target is None:
                self.report.skip(
                    "relation_unknown_entity", line=lineno, name=str(src) if subject is None else str(dst)
                )
                continue
            facts.append(
                {
                    "subject": subject,
                    "predicate": predicate,
                    "object": target,
                    "segment_ids": [f"seg-{i + 1}"],
                }
            )
            if predicate in CANONICAL_PREDICATES and normalize_predicate(str(rtype)) != predicate:
                self.report.notes.setdefault("predicate_mapping", {})[str(rtype)] = predicate
        if not facts:
            return
        groups = [
            self._group(source_id, [], facts[start : start + MAX_FACTS_PER_GROUP])
            for start in range(0, len(facts), MAX_FACTS_PER_GROUP)
        ]
        try:
            results = apply_extractions(
                self.memory, source_id, groups, summary={"importer": FORMAT, "records": "relation"}
            )
        except MemorySubstrateError as exc:
            self.report.skip(
                "relation_part_rejected", lines=[part[0][0], part[-1][0]], error=exc.message[:300]
            )
            return
        self.report.patches += 1
        for result in results:
            self.report.add("relations_new", result["facts"].get("created", 0))
            self.report.add("relations_reinforced", result["facts"].get("reinforced", 0))
            self.report.add("relations_contested", result["facts"].get("contested", 0))

    def _entities(self, names: set[str]) -> dict[str, str]:
        """Each name that names exactly one live entity -> its id, read in one session."""
        keys: dict[str, list[str]] = {}
        for n in names:
            keys.setdefault(entity_any_key(n), []).append(n)
        out: dict[str, str] = {}
        with self.memory.runtime.read_with_expired() as s:
            found: dict[str, set[str]] = {}
            for key, oid in s.find_keys(sorted(keys)):
                for n in keys[key]:
                    found.setdefault(n, set()).add(oid)
            objs = s.get_objects(sorted({oid for ids in found.values() for oid in ids}))
        for name, ids in found.items():
            live = [
                oid
                for oid in sorted(ids)
                if (o := objs.get(oid)) is not None and o.object_type == "entity" and o.status == "active"
            ]
            if len(live) == 1:
                out[name] = live[0]
        return out


def import_mcp_memory(
    memory: Memory, path: str | Path, *, scope: str = DEFAULT_SCOPE, progress: Progress | None = None
) -> ImportResult:
    """Import a reference MCP memory server file (JSON Lines) into ``memory``'s namespace.

    Raises ``ValidationError`` if ``path`` is not a file; bad records are skipped and reported.
    """
    return McpMemoryImporter(memory, Path(path), scope=scope, progress=progress).run()


# --- export ----------------------------------------------------------------------------------------
def export_mcp_memory(memory: Memory, out: IO[str], *, batch: int = 500) -> ExportCounts:
    """Write the namespace's entities (with their observations and literal facts as observations)
    and its current entity-to-entity facts as the reference server's JSON Lines. Returns counts.

    The reference server keys entities by name, so entities that share a name (the same thing
    imported as a service from one file and as a document from a vault) are written as one: the
    oldest one's type, every observation once in order. ``merged`` counts the entities folded
    into another and ``merged_names`` lists (up to 20 of) those names. Relations are written once
    each. Entities are held until the end to merge them; relations stream as they are found."""
    counts: ExportCounts = {"entities": 0, "relations": 0, "observations": 0, "merged": 0}
    by_name: dict[str, EntityLine] = {}
    seen_relations: set[tuple[str, object, str]] = set()
    merged_names: list[str] = []
    offset = 0
    while True:
        with memory.runtime.read_with_expired() as s:
            ents = s.list_objects(
                object_types=["entity"], statuses=["active"], order="created_asc", limit=batch, offset=offset
            )
            if not ents:
                break
            rels = s.relations_of([e.id for e in ents], limit=1_000_000)
            about = sorted({r.source_id for r in rels if r.rel_type == "about"})
            knowledge = s.get_objects(about)
            targets = s.get_objects(
                sorted({str(k.payload.get("object")) for k in knowledge.values() if k.payload.get("object")})
            )
        for ent in ents:
            obs, relations = _entity_lines(ent, knowledge, targets)
            for rel in relations:
                key = (rel["from"], rel["relationType"], rel["to"])
                if key not in seen_relations:
                    seen_relations.add(key)
                    out.write(json.dumps(rel, ensure_ascii=False) + "\n")
                    counts["relations"] += 1
            entry = by_name.get(ent.title)
            if entry is None:
                by_name[ent.title] = {
                    "type": "entity",
                    "name": ent.title,
                    "entityType": ent.kind,
                    "observations": obs,
                }
                continue
            counts["merged"] += 1
            if ent.title not in merged_names:
                merged_names.append(ent.title)
            entry["observations"].extend(o for o in obs if o not in entry["observations"])
        offset += len(ents)
    for entry in by_name.values():
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        counts["entities"] += 1
        counts["observations"] += len(entry["observations"])
    if merged_names:
        counts["merged_names"] = merged_names[:20]
    return counts


def _entity_lines(
    ent: MemoryObject, knowledge: dict[str, MemoryObject], targets: dict[str, MemoryObject]
) -> tuple[list[str], list[RelationLine]]:
    """One entity's observations and its relations to other entities, in the reference format."""
    obs: list[str] = []
    relations: list[RelationLine] = []
    for k in sorted(knowledge.values(), key=lambda o: (o.created_at, o.id)):
        if ent.id not in k.subject_refs:
            continue
        if is_observation(k):
            obs.append(k.summary)
        elif (
            k.kind == "fact"
            and k.payload.get("predicate") == OBSERVATION
            and k.status in ("active", "candidate")
        ):
            obs.append(str(k.payload.get("value")))
        elif k.kind == "fact" and k.status in ("active", "candidate") and k.payload.get("subject") == ent.id:
            target = targets.get(str(k.payload.get("object"))) if k.payload.get("object") else None
            if target is None and k.payload.get("value") is not None:
                obs.append(f"{str(k.payload['predicate']).replace('_', ' ')} {k.payload['value']}")
            elif target is not None and target.object_type == "entity":
                relations.append(
                    {
                        "type": "relation",
                        "from": ent.title,
                        "to": target.title,
                        "relationType": k.payload["predicate"],
                    }
                )
    return obs, relations

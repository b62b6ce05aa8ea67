"""Export and import one namespace as JSON Lines: move memory between SQLite and PostgreSQL.

Format ``memory-substrate.export``, version 2 (documented in docs/postgres.md):

- line 1, the header: ``{"format": "memory-substrate.export", "version": 1, "namespace": ...,
  "counts": {...}, "vectors": true|false, "exported_at": ..., "source": {...}}``;
- then one record per line, ``{"type": T, "data": {...}}``, in this order: ``object``
  (created_at, id), ``segment`` (source_id, ordinal), ``relation`` (created_at, id),
  ``patch`` and ``event`` (oldest first), ``config`` (by key), ``vector`` (owner_type, owner_id);
- last, the end record ``{"type": "end", "data": {"records": N, "content_sha256": ...}}`` (new in
  version 2): a file cut short lacks it, and a changed, dropped, added or reordered record line no
  longer matches its hash, so a damaged file is refused rather than imported as something else.
  Version 1 files (no end record) are still read, checked by their header's counts only.

Only canonical data is exported; full-text documents and claim keys are derived again on
import by the same pure functions the write path uses. Vectors are optional (``reindex``
can rebuild them) and travel as little-endian float32, base64-encoded, so they are exact.
JSON keys keep their stored order, so an export of an imported namespace is byte-identical
to the original export (apart from the header), which ``content_sha256`` makes checkable.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import asdict
from typing import IO, Any, NoReturn, NotRequired, SupportsInt, TypedDict, cast

import numpy as np

from memory_substrate.errors import MemorySubstrateError, ValidationError
from memory_substrate.indexing import claim_key, lookup_keys, search_doc, segment_search_text
from memory_substrate.json_types import JsonObject
from memory_substrate.models import AuditEvent, MemoryObject, PatchRecord, Relation, Segment
from memory_substrate.redaction import Redactions, RedactionSummary, redact_value
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import now_iso, sha256_text
from memory_substrate.validation import input_problems

FORMAT = "memory-substrate.export"
VERSION = 2
END = "end"
RECORD_TYPES = ("object", "segment", "relation", "patch", "event", "config", "vector")
_ALL = 2**62  # "no limit" for list methods that take one
_PAGE = 1000


class ExportRecord(TypedDict):
    type: str
    data: JsonObject


class ExportSummary(TypedDict):
    namespace: str
    counts: dict[str, int]
    content_sha256: str


class HeaderRead(TypedDict):
    """The header fields ``read_header`` checks (a header holds more: ``format``'s siblings)."""

    format: str
    version: int
    namespace: str
    counts: JsonObject  # record type -> count, as the file has it


class ImportSummary(TypedDict):
    namespace: str
    source_namespace: str
    counts: dict[str, int]
    redacted: NotRequired[RedactionSummary]  # when a record held a secret


def _line(record: Mapping[str, object]) -> str:
    try:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    except (
        ValueError
    ):  # NaN or Infinity, which import refuses: stop rather than write a backup that won't load
        raise _unexportable(record) from None


REPAIR = "memory-substrate maintain repair --options '{\"apply\": true}'"


def _unexportable(record: Mapping[str, object]) -> ValidationError:
    found = record.get("data")
    data: JsonObject = found if isinstance(found, dict) else {}
    fields = [path for path, _, _ in input_problems(data, "", strings=False)]
    name = data.get("id") or data.get("key") or data.get("owner_id") or "?"
    return ValidationError(
        f"cannot export {record.get('type')} {name}: {', '.join(fields)} must be a finite number (stored by an "
        f"older release; import refuses NaN and Infinity); run `{REPAIR}`, which rewrites them as null, then export again",
        details={"record_type": record.get("type"), "id": name, "fields": fields},
    )


class _NonFiniteToken(ValueError):
    pass


def _no_constant(token: str) -> NoReturn:
    raise _NonFiniteToken(token)


def _record(line: str, number: int) -> Any:
    """One record line parsed, or ``ValidationError`` naming the fields of a NaN or Infinity in it
    (the parser flags the token at no cost to clean lines; the walk that names it runs only then).
    Whatever JSON the line holds: a record of the wrong shape fails where it is read, as a
    ``KeyError`` or ``TypeError`` that the import reports as a malformed record."""
    try:
        return json.loads(line, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"line {number}: malformed record ({type(exc).__name__}: {exc})") from None
    except _NonFiniteToken:
        fields = [path for path, _, _ in input_problems(json.loads(line), "", strings=False)]
        raise ValidationError(
            f"line {number}: {', '.join(fields)}: must be a finite number (an export made by an older release of a "
            f"store holding NaN or Infinity: run `{REPAIR}` on that store and export it again)",
            details={"line": number, "fields": fields},
        ) from None


def _counts(session: StoreSession, vectors: bool) -> dict[str, int]:
    return {
        "object": sum(n for *_, n in session.count_objects()),
        "segment": session.count_segments(),
        "relation": len(session.list_relations(limit=_ALL)),
        "patch": len(session.list_patches(limit=_ALL)),
        "event": len(session.list_events(limit=_ALL)),
        "config": len(session.get_config()),
        "vector": sum(session.vector_stats().values()) if vectors else 0,
    }


def _segment_record(seg: Segment) -> JsonObject:
    data = asdict(seg)
    data.pop("terms", None)  # derived from the text; the importing store computes its own
    data.pop("language", None)  # derived too
    return data


def _records(session: StoreSession, vectors: bool) -> Iterator[ExportRecord]:
    offset = 0
    while page := session.list_objects(order="created_asc", limit=_PAGE, offset=offset):
        offset += len(page)
        yield from (ExportRecord(type="object", data=o.to_dict()) for o in page)
    yield from (ExportRecord(type="segment", data=_segment_record(s)) for s in session.iter_segments())
    yield from (ExportRecord(type="relation", data=asdict(r)) for r in session.list_relations(limit=_ALL))
    yield from (
        ExportRecord(type="patch", data=asdict(p)) for p in reversed(session.list_patches(limit=_ALL))
    )
    yield from (ExportRecord(type="event", data=asdict(e)) for e in reversed(session.list_events(limit=_ALL)))
    config = session.get_config()
    yield from (ExportRecord(type="config", data={"key": k, "value": config[k]}) for k in sorted(config))
    if vectors:
        for owner_type, owner_id, model, vec in session.iter_vectors():
            raw = np.asarray(vec, dtype="<f4").tobytes()
            data: JsonObject = {
                "owner_type": owner_type,
                "owner_id": owner_id,
                "model": model,
                "dim": int(vec.shape[0]),
                "f32": base64.b64encode(raw).decode("ascii"),
            }
            yield {"type": "vector", "data": data}


def export_namespace(runtime: Runtime, out: IO[str], *, vectors: bool = True) -> ExportSummary:
    """Write the runtime's namespace to ``out`` from one consistent snapshot, expired rows included
    (a backup keeps everything: ``Runtime.read_with_expired``).

    Returns ``{"namespace", "counts", "content_sha256"}``; the hash covers every record
    line (not the header), so two exports of the same content have the same hash.
    """
    digest = hashlib.sha256()
    store, namespace = runtime.store, runtime.namespace
    with runtime.read_with_expired() as session:
        counts = _counts(session, vectors)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "namespace": namespace,
            "counts": counts,
            "vectors": vectors,
            "exported_at": now_iso(),
            "source": {"backend": store.backend, "schema_version": store.schema_version()},
        }
        out.write(_line(header))
        records = 0
        for record in _records(session, vectors):
            line = _line(record)
            digest.update(line.encode("utf-8"))
            out.write(line)
            records += 1
        out.write(_line({"type": END, "data": {"records": records, "content_sha256": digest.hexdigest()}}))
    return {"namespace": namespace, "counts": counts, "content_sha256": digest.hexdigest()}


def read_header(first_line: str) -> HeaderRead:
    """Parse and check an export header. Raises ``ValidationError`` for anything else."""
    try:
        header = json.loads(first_line)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"not a memory-substrate export: the first line is not JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValidationError(f"not a memory-substrate export: the header's format is not {FORMAT!r}")
    version = header.get("version")
    if not isinstance(version, int) or version < 1 or version > VERSION:
        raise ValidationError(
            f"export format version {version!r} is not supported (this build reads 1..{VERSION})"
        )
    if not isinstance(header.get("namespace"), str) or not isinstance(header.get("counts"), dict):
        raise ValidationError("export header lacks namespace or counts")
    return cast(HeaderRead, header)  # each of its fields was checked above


def _vector(data: dict[str, Any]) -> np.ndarray:
    """A vector record's data (its fields as the file has them; a wrong one is a malformed record)."""
    vec = np.frombuffer(base64.b64decode(data["f32"]), dtype="<f4").astype(np.float32)
    if vec.shape[0] != data["dim"]:
        raise ValidationError(
            f"vector of {data['owner_id']} has {vec.shape[0]} values, header says {data['dim']}"
        )
    if not np.isfinite(vec).all():
        raise ValidationError(f"vector of {data['owner_id']} holds a non-finite value (NaN or Infinity)")
    return vec


class _Importer:
    """Applies records through one write session, batching segments, relations and vectors."""

    def __init__(self, session: StoreSession) -> None:
        self.s = session
        self.counts: dict[str, int] = dict.fromkeys(RECORD_TYPES, 0)
        self.segments: list[Segment] = []
        self.relations: list[Relation] = []
        self.patches: dict[str, PatchRecord] = {}
        self.events: dict[str, list[AuditEvent]] = defaultdict(list)
        self.vectors: dict[tuple[str, str], list[tuple[str, np.ndarray]]] = defaultdict(list)

    def add(self, kind: str, data: dict[str, Any]) -> None:
        """One record; its fields go as keywords to the row's constructor, which refuses a wrong one
        (a ``TypeError`` the import reports as a malformed record)."""
        if kind == "object":
            obj = MemoryObject.from_dict(data)
            self.s.insert_object(obj, search_doc(obj), claim_key(obj))
            keys = lookup_keys(obj)
            if keys:
                self.s.set_object_keys(obj.id, keys)
        elif kind == "segment":
            self.segments.append(Segment(**{k: v for k, v in data.items() if k not in ("terms", "language")}))
            if len(self.segments) >= _PAGE:
                self.flush()
        elif kind == "relation":
            self.relations.append(Relation(**data))
        elif kind == "patch":
            self.patches[data["id"]] = PatchRecord(**data)
        elif kind == "event":
            self.events[data["patch_id"]].append(AuditEvent(**data))
        elif kind == "config":
            self.s.set_config(data["key"], data["value"])
        elif kind == "vector":
            self.vectors[(data["model"], data["owner_type"])].append((data["owner_id"], _vector(data)))
        else:
            raise ValidationError(f"unknown record type {kind!r} (format version {VERSION})")
        self.counts[kind] += 1

    def flush(self) -> None:
        if self.segments:
            self.s.insert_segments((seg, *segment_search_text(seg)) for seg in self.segments)
            self.segments = []

    def finish(self) -> None:
        self.flush()
        self.s.insert_relations(self.relations)
        orphans = set(self.events) - set(self.patches)
        if orphans:
            raise ValidationError(f"events refer to patches missing from the export: {sorted(orphans)[:5]}")
        for patch_id, patch in self.patches.items():
            self.s.record_patch(patch, self.events.get(patch_id, []))
        for (model, owner_type), rows in self.vectors.items():
            self.s.upsert_vectors(model, owner_type, rows)


def _numbered(lines: IO[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) from line 2 on; bytes that are not UTF-8 are a ``ValidationError``."""
    number = 1
    try:
        for number, line in enumerate(lines, start=2):
            yield number, line
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"line {number + 1}: not UTF-8 text ({exc.reason}); the file is damaged"
        ) from None


def import_namespace(runtime: Runtime, lines: IO[str], *, namespace: str | None = None) -> ImportSummary:
    """Import an export into an empty namespace (the header's, or ``namespace``) of the runtime's
    store in one transaction: one ``Runtime.write`` unit of work whose rows are the export's own
    (its patches and audit events included), so its ``Patch`` records nothing of its own.

    Raises ``ValidationError`` (and writes nothing) when the file is not a supported export,
    a record is malformed or cannot be stored, the end record is missing or does not match the
    records (version 2), the counts differ from the header, or the namespace is not empty.
    """
    header = _read_first_header(lines)
    target = namespace or header["namespace"]
    unit = runtime if target == runtime.namespace else runtime.for_namespace(target)
    with unit.write("cli", "import", f"import of namespace {header['namespace']!r}", embed=False) as (
        session,
        _,
    ):
        _require_empty(session, target)
        importer = _Importer(session)
        found = Redactions()
        records, content_sha256, end = _import_records(lines, header, importer, found)
        if header["version"] >= 2:
            _check_end_record(end, records, content_sha256)
        _finish_import(importer)
        _check_header_counts(header, importer)
    summary: ImportSummary = {
        "namespace": target,
        "source_namespace": header["namespace"],
        "counts": importer.counts,
    }
    return found.report(summary)


def _read_first_header(lines: IO[str]) -> HeaderRead:
    """The export's header, from its first line."""
    try:
        first = lines.readline()
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"not a memory-substrate export: line 1 is not UTF-8 text ({exc.reason})"
        ) from None
    return read_header(first)


def _require_empty(session: StoreSession, target: str) -> None:
    """Refuse a namespace that holds anything: an import never merges into existing memory."""
    if (
        session.count_objects()
        or session.count_segments()
        or session.list_patches(limit=1)
        or session.get_config()
    ):
        raise ValidationError(
            f"namespace {target!r} is not empty; import into a new namespace",
            details={"namespace": target},
        )


def _import_records(
    lines: IO[str], header: HeaderRead, importer: _Importer, found: Redactions
) -> tuple[int, str, JsonObject | None]:
    """Feed every record line after the header to ``importer``; returns the number of records,
    the SHA-256 of their lines and the end record's data (``None`` when there was none)."""
    digest = hashlib.sha256()
    records = 0
    end: JsonObject | None = None
    for number, line in _numbered(lines):
        if not line.strip():
            continue
        if end is not None:
            raise ValidationError(f"line {number}: a record after the end record; the file is damaged")
        record = _record(line, number)
        try:
            if record["type"] == END and header["version"] >= 2:
                end = dict(record["data"])
                continue
            digest.update(line.encode("utf-8"))
            records += 1
            importer.add(record["type"], _redacted(record["type"], record["data"], found))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValidationError(f"line {number}: malformed record ({type(exc).__name__}: {exc})") from None
        except MemorySubstrateError:
            raise
        except Exception as exc:  # the store refused the record (a duplicate id, say): a damaged file
            raise ValidationError(
                f"line {number}: the record cannot be imported ({type(exc).__name__}: {exc}); nothing was written"
            ) from None
    return records, digest.hexdigest(), end


def _check_end_record(end: JsonObject | None, records: int, content_sha256: str) -> None:
    """A version 2 export must end with an end record that matches the records read."""
    if end is None:
        raise ValidationError("the export is incomplete: it has no end record (was it cut short?)")
    if end.get("records") != records or end.get("content_sha256") != content_sha256:
        raise ValidationError(
            "the export is damaged: its records do not match the end record's count and content_sha256",
            details={"end": end, "read": {"records": records, "content_sha256": content_sha256}},
        )


def _finish_import(importer: _Importer) -> None:
    """Write the batched rows; a store error becomes a ``ValidationError``."""
    try:
        importer.finish()
    except MemorySubstrateError:
        raise
    except Exception as exc:
        raise ValidationError(
            f"the export cannot be imported ({type(exc).__name__}: {exc}); nothing was written"
        ) from None


def _as_int(value: object) -> int:
    """``int()`` of a header count; what int() refuses raises the TypeError int() raises."""
    if isinstance(value, (str, bytes, SupportsInt)):
        return int(value)
    raise TypeError(
        f"int() argument must be a string, a bytes-like object or a real number, not '{type(value).__name__}'"
    )


def _check_header_counts(header: HeaderRead, importer: _Importer) -> None:
    """The records imported, by type, must be the counts the header announced."""
    expected = {k: _as_int(v) for k, v in header["counts"].items()}
    got = {k: v for k, v in importer.counts.items() if k in expected or v}
    if got != expected:
        raise ValidationError(
            "the export is incomplete: record counts differ from its header",
            details={"header": expected, "read": got},
        )


def _redacted(kind: str, data: Any, found: Redactions) -> Any:
    """A record with the secret scan run over its texts (an export of an older release may hold
    secrets stored verbatim); a segment whose text changed gets the hash of its new text."""
    if kind in ("vector", "config") or not isinstance(data, dict):
        return data
    out = redact_value(data, found)
    if kind == "segment" and out is not data and isinstance(out.get("text"), str):
        out["hash"] = sha256_text(out["text"])
    return out

"""What every importer shares: the report it returns, part sources, and the governed-write helpers.

Importers write only through governed paths, with ``memory_source: "imported"``: captures
through ``memory_ingest``'s capture path, graph writes through the code of ``memory_remember``
mode ``extraction`` (``bulk.apply_extractions``: its input model and ``ExtractionApplier``, several
extraction groups in one patch), so every write is a governed patch with its audit events. The one exception is storing a *part source*: a slice of
a large import file captured as a source with one segment per record, so evidence refs point at
real segments without the whole file ever being held in memory. It goes through
``IngestService.store_capture``, the same path (and the same no-op on an unchanged fingerprint)
as every other capture.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from memory_substrate.app import Memory
from memory_substrate.importers.result_types import ImportNotes, ImportResult
from memory_substrate.ingest.captured import CapturedSegment, CapturedSource
from memory_substrate.ingest.schemas import IngestOptions
from memory_substrate.ingest.service import IngestService
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject

Progress = Callable[[int, int, str], None]
SKIPPED_SHOWN = 200
DEFAULT_SCOPE = "scope:imported"


@dataclass
class ImportReport:
    """Counts of what an import did, and every record it skipped with the reason."""

    format: str
    path: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[JsonObject] = field(default_factory=list)
    skipped_count: int = 0
    notes: ImportNotes = field(default_factory=lambda: ImportNotes())
    patches: int = 0

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def skip(self, reason: str, **where: object) -> None:
        self.skipped_count += 1
        if len(self.skipped) < SKIPPED_SHOWN:
            self.skipped.append({"reason": reason, **where})

    def to_dict(self) -> ImportResult:
        wrote = self.patches > 0
        return {
            "result_type": "import_result",
            "format": self.format,
            "path": self.path,
            "status": "completed" if wrote else "noop",
            "patches": self.patches,
            "counts": dict(sorted(self.counts.items())),
            "skipped_count": self.skipped_count,
            "skipped": self.skipped,
            **self.notes,
        }


def content_hash(parts: list[str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def store_part(
    memory: Memory,
    *,
    uri: str,
    title: str,
    fingerprint: str,
    segments: list[CapturedSegment],
    payload: JsonObject,
    adapter: str,
) -> tuple[str, bool]:
    """Capture one slice of an import file as a source; returns (source_id, was_new).
    An unchanged slice (same uri and fingerprint) is a no-op that returns the existing source."""
    captured = CapturedSource(
        kind="file",
        title=title,
        uri=uri,
        fingerprint=fingerprint,
        payload=payload,
        segments=segments,
        adapter_name=adapter,
        adapter_version="1",
        declared_transformations=["decode_utf8", "one_segment_per_record"],
        origin_classification="import_file",
    )
    result = IngestService(memory.runtime).store_capture("file", captured, IngestOptions())
    return str(result["source_id"]), result["status"] != "noop"


def part_done(memory: Memory, source_id: str) -> bool:
    """Whether a captured part's records were applied. Applying them finishes the part's
    extraction job; a part captured by an import that stopped before that (a crash, an error)
    is applied again on the next run, which is safe because extraction reinforces what exists."""
    with memory.runtime.read_with_expired() as s:
        job = s.get_job("extract", source_id)
    return job is not None and job.status == "done"


def is_observation(obj: MemoryObject) -> bool:
    return (
        obj.object_type == "knowledge"
        and obj.kind == "observation"
        and obj.status not in ("archived", "superseded")
    )

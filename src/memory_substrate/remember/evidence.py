"""Evidence refs must point at real captured evidence, and optional details must agree with it."""

from __future__ import annotations

from collections.abc import Mapping

from memory_substrate.errors import EvidenceError
from memory_substrate.json_types import JsonObject
from memory_substrate.remember.schemas import EvidenceRef
from memory_substrate.storage.base import StoreSession


def _locator_matches(given: Mapping[str, object], stored: Mapping[str, object]) -> bool:
    """Every key the caller gives must agree with the stored locator.

    A single ``line`` agrees with a stored ``line_start``..``line_end`` range that contains it.
    """
    for key, value in given.items():
        if key == "line" and "line" not in stored and "line_start" in stored:
            start = stored.get("line_start")
            end = stored.get("line_end", start)
            if not (
                isinstance(value, int)
                and isinstance(start, int)
                and isinstance(end, int)
                and start <= value <= end
            ):
                return False
            continue
        if stored.get(key) != value:
            return False
    return True


def check_evidence(session: StoreSession, refs: list[EvidenceRef]) -> list[JsonObject]:
    """Validate refs against the store; return them as plain dicts, as an object's
    ``evidence_refs`` holds them. Raises ``EvidenceError``."""
    out: list[JsonObject] = []
    sources = session.get_objects([r.source_id for r in refs])
    for i, ref in enumerate(refs):
        where = f"evidence_refs[{i}]"
        source = sources.get(ref.source_id)
        if source is None or source.object_type != "source":
            raise EvidenceError(
                f"{where}: source {ref.source_id} not found", details={"source_id": ref.source_id}
            )
        if ref.segment_id is None:
            if ref.locator or ref.hash:
                raise EvidenceError(f"{where}: locator and hash need a segment_id")
            out.append({"source_id": ref.source_id})
            continue
        segs = session.get_segments(ref.source_id, segment_ids=[ref.segment_id])
        if not segs:
            raise EvidenceError(
                f"{where}: segment {ref.segment_id} not found in source {ref.source_id}",
                details={"source_id": ref.source_id, "segment_id": ref.segment_id},
            )
        seg = segs[0]
        if ref.locator is not None and not _locator_matches(ref.locator, seg.locator):
            raise EvidenceError(
                f"{where}: locator {ref.locator} does not match segment {ref.segment_id} locator {seg.locator}",
                details={"expected": seg.locator, "given": ref.locator},
            )
        if ref.hash is not None and ref.hash != seg.hash:
            raise EvidenceError(
                f"{where}: hash does not match segment {ref.segment_id} of {ref.source_id}",
                details={"expected": seg.hash, "given": ref.hash},
            )
        item: JsonObject = {"source_id": ref.source_id, "segment_id": ref.segment_id}
        item["locator"] = ref.locator if ref.locator is not None else seg.locator
        item["hash"] = seg.hash
        out.append(item)
    return out

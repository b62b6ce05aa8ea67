"""The shapes of what the mirror reports: fingerprints, drift, sync and repair outcomes.

``maintain`` shows them (``repair``'s ``derived_backends``, ``reindex``, ``configure``), so they
are plain dicts on the wire; these types let mypy check the keys the mirror builds.
"""

from __future__ import annotations

from typing import TypedDict

from memory_substrate.json_types import JsonObject


class FingerprintView(TypedDict):
    counts: dict[str, int]
    checksums: dict[str, str]


class Tally(TypedDict):
    count: int
    checksum: str


class DriftSample(TypedDict):
    """Up to ``fingerprint.SAMPLE`` ids of each kind of drift."""

    missing: list[str]
    extra: list[str]
    changed: list[str]


class FamilyDrift(TypedDict):
    """One item family (objects, relations, vectors): the canonical and backend tallies, and how
    many ids are missing from, extra in, or changed in the backend."""

    canonical: Tally
    backend: Tally
    in_line: bool
    missing: int
    extra: int
    changed: int
    sample: DriftSample


class BackendCheck(TypedDict):
    built: bool
    in_line: bool
    families: dict[str, FamilyDrift]


class SyncReport(TypedDict):
    """Outbox entries replayed, and per backend what it did: ``rebuilt`` (its counts) when it was
    not built yet, and the counts it applied (objects, relations, vectors) summed over chunks."""

    replayed: int
    backends: dict[str, JsonObject]

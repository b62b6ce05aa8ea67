"""Counts and checksums of canonical rows and of a backend's copy, and the drift between them.

A checksum is the XOR of a hash of (id, digest) over a family's items, so it does not depend on
the order a backend returns them in; equal checksums and counts mean equal content (up to a
64-bit hash collision). Digests are defined in ``base.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from memory_substrate.derived.base import Fingerprint, object_digest, relation_digest, vector_digest
from memory_substrate.derived.report_types import FamilyDrift
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.paging import ALL, load_objects

SAMPLE = 20


def checksum(items: Iterable[tuple[str, str]]) -> str:
    acc = 0
    for item_id, digest in items:
        acc ^= int.from_bytes(
            hashlib.blake2b(f"{item_id}\x1f{digest}".encode(), digest_size=8).digest(), "big"
        )
    return f"{acc:016x}"


def make(families: dict[str, dict[str, str]]) -> Fingerprint:
    return Fingerprint(
        counts={f: len(items) for f, items in families.items()},
        checksums={f: checksum(items.items()) for f, items in families.items()},
        items=families,
    )


def canonical(session: StoreSession, families: tuple[str, ...], owner_types: tuple[str, ...]) -> Fingerprint:
    """The fingerprint a backend mirroring ``families`` should have."""
    out: dict[str, dict[str, str]] = {}
    if "objects" in families:
        out["objects"] = {o.id: object_digest(o) for o in load_objects(session)}
    if "relations" in families:
        out["relations"] = {r.id: relation_digest(r) for r in session.list_relations(limit=ALL)}
    if "vectors" in families:
        out["vectors"] = {
            f"{owner_type}:{owner_id}": vector_digest(model, vec)
            for owner_type, owner_id, model, vec in session.iter_vectors()
            if owner_type in owner_types
        }
    return make(out)


def drift(expected: Fingerprint, actual: Fingerprint) -> dict[str, FamilyDrift]:
    """Per family: counts, checksums, and the ids missing from, extra in, or changed in the backend."""
    report: dict[str, FamilyDrift] = {}
    for family, want in expected.items.items():
        have = actual.items.get(family, {})
        missing = sorted(k for k in want if k not in have)
        extra = sorted(k for k in have if k not in want)
        changed = sorted(k for k in want if k in have and have[k] != want[k])
        report[family] = {
            "canonical": {"count": expected.counts[family], "checksum": expected.checksums[family]},
            "backend": {
                "count": actual.counts.get(family, 0),
                "checksum": actual.checksums.get(family, checksum([])),
            },
            "in_line": not (missing or extra or changed),
            "missing": len(missing),
            "extra": len(extra),
            "changed": len(changed),
            "sample": {"missing": missing[:SAMPLE], "extra": extra[:SAMPLE], "changed": changed[:SAMPLE]},
        }
    return report


def mismatched_ids(expected: Fingerprint, actual: Fingerprint) -> dict[str, list[str]]:
    """Ids to re-mirror per family (missing, extra or changed)."""
    out: dict[str, list[str]] = {}
    for family, want in expected.items.items():
        have = actual.items.get(family, {})
        ids = {k for k in want if have.get(k) != want[k]} | {k for k in have if k not in want}
        if ids:
            out[family] = sorted(ids)
    return out

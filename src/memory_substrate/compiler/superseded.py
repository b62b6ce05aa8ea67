"""Turns that are the evidence of superseded knowledge. The package may still recall such a turn
("we decided to use PostgreSQL 16 ..."), since it answers what was decided and when; it then
carries a mark naming what replaced the claim, so the reader never meets an old claim as if it
were current."""

from __future__ import annotations

from memory_substrate.compiler.candidates import Candidate
from memory_substrate.lookup_keys import superseded_evidence_key
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.storage.base import StoreSession

CHAIN = 5  # successors followed from a superseded claim to the live one
TITLE_WORDS = 12


def successors(session: StoreSession, turns: list[Candidate]) -> dict[str, MemoryObject | None]:
    """{turn key: the live knowledge that replaced the claim the turn is evidence of, or None when
    none is live} for the turns cited by superseded knowledge. A turn that live knowledge cites
    as well is left as it is: it backs a current claim too."""
    by_key = {
        superseded_evidence_key(c.segment.source_id, c.segment.id): c.key
        for c in turns
        if c.segment is not None
    }
    if not by_key:
        return {}
    cited: dict[str, list[str]] = {}
    for key, object_id in session.find_keys(list(by_key)):
        cited.setdefault(by_key[key], []).append(object_id)
    if not cited:
        return {}
    olds = session.get_objects(sorted({i for ids in cited.values() for i in ids}))
    out: dict[str, MemoryObject | None] = {}
    for turn, ids in cited.items():
        live = [_live_successor(session, olds[i]) for i in ids if i in olds]
        if not live:
            continue
        newest = next((n for n in live if n is not None), None)
        if newest is not None and _cites(newest, turn):
            continue
        out[turn] = newest
    return out


def _live_successor(session: StoreSession, obj: MemoryObject) -> MemoryObject | None:
    current = obj
    for _ in range(CHAIN):
        nxt = current.metadata.get("superseded_by")
        found = session.get_object(str(nxt)) if nxt else None
        if found is None:
            return None
        if found.status == "active":
            return found
        if (
            found.status in LIVE_KNOWLEDGE_STATUSES
        ):  # unverified: it stays out of the package, and its title too
            return None
        current = found
    return None


def _cites(obj: MemoryObject, turn_key: str) -> bool:
    return any(f"{e.get('source_id')}#{e.get('segment_id')}" == turn_key for e in obj.evidence_refs)


def mark(turns: list[Candidate], found: dict[str, MemoryObject | None], names: dict[str, str]) -> None:
    """Sets each such turn's mark: 'superseded by ID "title"', or 'superseded' alone when nothing
    live replaced the claim."""
    for c in turns:
        if c.key not in found:
            continue
        new = found[c.key]
        if new is None:
            c.superseded_mark = "superseded: no longer current"
            continue
        title = " ".join(new.title.replace('"', "'").split()[:TITLE_WORDS])
        c.superseded_mark = f'superseded by {names.get(new.id, new.id)} "{title}"'

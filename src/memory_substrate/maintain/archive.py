"""archive_source: retire a source and the knowledge that rests on it alone.

The source becomes ``archived``. Live knowledge whose evidence refs *all* point at it becomes
``stale`` (still addressable, promotable again after review). Knowledge with evidence in other
sources too is listed in ``partially_affected_knowledge_ids`` and left as it is. Citing
knowledge is found through the derived ``evidence`` relations (``reindex`` keeps them in step
with canonical objects) and then judged on its own evidence refs.
"""

from __future__ import annotations

from memory_substrate.errors import NotFoundError
from memory_substrate.maintain.common import (
    ALL,
    Envelope,
    Workspace,
    commit_if_changed,
    maintenance_session,
)
from memory_substrate.maintain.lifecycle import archive_plan
from memory_substrate.maintain.results import ArchiveCounts, ArchiveSourceResult
from memory_substrate.maintain.schemas import ArchiveSourceInput
from memory_substrate.runtime import Runtime

MODE = "archive_source"


def archive_source(rt: Runtime, data: ArchiveSourceInput, *, apply: bool) -> ArchiveSourceResult:
    """Raises ``NotFoundError`` (naming the id) when the source does not exist."""
    reason = data.reason or "archived by memory_maintain archive_source"
    with maintenance_session(rt, MODE, apply=apply, reason=reason) as (session, patch):
        source = session.get_object(data.source_id)
        if source is None or source.object_type != "source":
            raise NotFoundError(
                f"source_id: source {data.source_id} not found", details={"id": data.source_id}
            )
        rels = session.relations_of([source.id], limit=ALL)
        citing_ids = [
            r.origin_id for r in rels if r.rel_type == "evidence" and r.target_id == source.id and r.origin_id
        ]
        citing = [o for o in session.get_objects(citing_ids).values() if o.object_type == "knowledge"]
        only, mixed = archive_plan(source.id, citing)
        ws = Workspace.of(citing, patch)
        previous = source.status
        if source.status != "archived":
            ws.set_status(source, "archived", reason)
        for obj in only:
            ws.set_status(
                obj,
                "stale",
                f"archive_source: all evidence is in archived source {source.id}: {reason}",
                archived_source_id=source.id,
            )
        counts: ArchiveCounts = {
            "sources_archived": int(previous != "archived"),
            "stale": len(only),
            "partially_affected": len(mixed),
        }
        record = commit_if_changed(patch, {"source_id": source.id, **counts})
    env = Envelope(MODE, apply, ws.changes, patch, record)
    return {
        **env.head(),
        "source_id": source.id,
        "source_status": {"from": previous, "to": "archived"},
        "stale_knowledge_ids": [o.id for o in only],
        "partially_affected_knowledge_ids": [o.id for o in mixed],
        "reason": reason,
        "counts": counts,
        **env.tail(),
    }

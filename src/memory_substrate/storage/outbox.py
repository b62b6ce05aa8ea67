"""The derived-index outbox: what a write session touched, recorded in the same transaction.

Derived backends (FalkorDB, Kùzu/LadybugDB, LanceDB) are mirrors of canonical rows. A write
session notes the ids it wrote (objects, relations, vectors) as it goes; just before the
transaction commits, the notes become ``derived_outbox`` rows *in that transaction*, so a crash
after the commit and before a mirror applied them loses nothing: the rows are still there and the
next start, write or ``repair`` replays them. Entries name ids, not contents: a replay reads the
current canonical state of each id, so replaying twice or out of order converges on the same
mirror.

Rows are written only for the kinds some configured backend mirrors (a namespace on the built-in
backends writes none), so the default install pays one config read per committing write.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memory_substrate.json_types import JsonObject

OBJECT = "object"
RELATION = "relation"
VECTOR_OBJECT = "vector:object"
VECTOR_SEGMENT = "vector:segment"

# Which entry kinds each derived backend consumes. Built-in backends ("file", "builtin") mirror
# nothing: the canonical tables are their index.
KINDS_BY_BACKEND: dict[str, frozenset[str]] = {
    "falkordb": frozenset({OBJECT, RELATION, VECTOR_OBJECT}),
    "kuzu": frozenset({OBJECT, RELATION}),
    "lancedb": frozenset({VECTOR_OBJECT, VECTOR_SEGMENT}),
}
BACKEND_KEYS = ("graph_backend", "semantic_backend")


def wanted_kinds(config: Mapping[str, object]) -> frozenset[str]:
    """Entry kinds the namespace's configured derived backends consume (empty: none configured)."""
    kinds: set[str] = set()
    for key in BACKEND_KEYS:
        kinds |= KINDS_BY_BACKEND.get(str(config.get(key) or ""), frozenset())
    return frozenset(kinds)


@dataclass(frozen=True)
class OutboxEntry:
    seq: int
    kind: str
    item_id: str
    detail: str = ""  # the model name for vector entries


class OutboxTracking:
    """Mixin for write sessions: collect touched ids; turn them into rows at commit.

    A backend implements ``_outbox_config`` (the namespace's backend keys, read inside the
    transaction) and ``_outbox_insert`` (bulk insert of (kind, item_id, detail) rows).
    """

    outbox_written: int = 0

    def _touch(self, kind: str, ids: Iterable[str], detail: str = "") -> None:
        touched: dict[tuple[str, str, str], None] | None = self.__dict__.get("_touched")
        if touched is None:
            touched = {}
            self.__dict__["_touched"] = touched
        for item_id in ids:
            touched[(kind, item_id, detail)] = None

    def flush_outbox(self) -> int:
        """Write the outbox rows of what this session touched (called just before commit)."""
        touched: dict[tuple[str, str, str], None] = self.__dict__.pop("_touched", None) or {}
        if not touched:
            return 0
        kinds = wanted_kinds(self._outbox_config())
        rows = [key for key in touched if key[0] in kinds]
        if rows:
            self._outbox_insert(rows)
        self.outbox_written = len(rows)
        return len(rows)

    def _require_write(self) -> None:  # pragma: no cover - implemented per backend
        raise NotImplementedError

    def _outbox_config(self) -> JsonObject:  # pragma: no cover - implemented per backend
        raise NotImplementedError

    def _outbox_insert(self, rows: list[tuple[str, str, str]]) -> None:  # pragma: no cover
        raise NotImplementedError

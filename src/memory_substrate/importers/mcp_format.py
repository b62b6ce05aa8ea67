"""The lines of the reference MCP memory server's JSON Lines file, as the exporter writes them."""

from __future__ import annotations

from typing import TypedDict


class EntityLine(TypedDict):
    type: str  # "entity"
    name: str
    entityType: str
    observations: list[str]


# ``from`` is a keyword: the functional form names the keys. ``relationType`` is the fact's
# predicate as stored.
RelationLine = TypedDict("RelationLine", {"type": str, "from": str, "to": str, "relationType": object})

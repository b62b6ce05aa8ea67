"""Reading and editing paths of nested JSON-like objects (a client's settings, a parsed TOML file)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject


def set_in(data: JsonObject, path: list[str], value: object) -> JsonObject:
    """A copy of ``data`` with ``value`` at ``path``, creating the objects along it."""
    out = copy.deepcopy(data)
    node = out
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[path[-1]] = value
    return out


def drop_in(data: JsonObject, path: list[str]) -> JsonObject:
    """A copy of ``data`` without ``path``, and without the objects that leaves empty along it."""
    out = copy.deepcopy(data)
    chain: list[JsonObject] = [out]
    for part in path[:-1]:
        child = chain[-1].get(part)
        if not isinstance(child, dict):
            return out
        chain.append(child)
    if path[-1] not in chain[-1]:
        return out
    del chain[-1][path[-1]]
    for depth in range(len(path) - 1, 0, -1):
        if chain[depth] == {}:
            del chain[depth - 1][path[depth - 1]]
    return out


def get_in(data: JsonObject, path: list[str]) -> object:
    node: object = data
    for part in path:
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node

"""Derived-index backends named by the contract, and what ``configure`` checks before accepting one.

Graph backends: ``file`` (built in: the store's canonical relation table), ``falkordb`` (a
FalkorDB server) and ``kuzu`` (embedded, on LadybugDB, the maintained fork of the archived Kùzu).
Semantic backends: ``builtin`` (vectors stored with the canonical rows) and ``lancedb``. The
external ones are *mirrors* of canonical memory kept in line through the outbox and rebuilt by
``reindex`` (see ``derived/``); canonical data never lives only there.

A backend is refused *before* anything is written (missing package: the error names the extra to
install; FalkorDB without ``MEMORY_SUBSTRATE_FALKORDB_URL``: the error says so), so a
``configure`` naming one usable and one refused backend changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_substrate.derived.registry import BUILTIN, install_hint, require
from memory_substrate.errors import NotAvailableError
from memory_substrate.maintain.results import BackendCheck, EffectiveBackends
from memory_substrate.settings import Settings

GRAPH_DEFAULT = "file"
SEMANTIC_DEFAULT = "builtin"

_DETAIL = {
    "file": "the store's canonical relation table is the file graph projection",
    "builtin": "vectors stored with the canonical rows, made by the configured embedder",
    "falkordb": "objects and relations mirrored into one FalkorDB graph per namespace, object vectors in its vector index",
    "kuzu": "objects and relations mirrored into an embedded LadybugDB (Kùzu fork) database under the store root",
    "lancedb": "object and segment vectors mirrored into LanceDB tables under the store root, ANN-indexed when large",
}


def check_backend(field: str, value: str, settings: Settings | None = None) -> BackendCheck:
    """Describe a usable backend, or raise ``NotAvailableError`` naming what to install or set."""
    if value in BUILTIN:
        return {"name": value, "supported": True, "native": True, "detail": _DETAIL[value]}
    default = GRAPH_DEFAULT if field == "graph_backend" else SEMANTIC_DEFAULT
    try:
        require(value)
    except NotAvailableError as exc:
        raise NotAvailableError(
            f"{field} {value!r} is not installed: {install_hint(value)}. Nothing was changed; "
            f"{field} {default!r} works without extra packages.",
            details={**exc.details, "field": field, "use_instead": default},
        ) from exc
    if value == "falkordb" and settings is not None and not settings.falkordb_url:
        raise NotAvailableError(
            "graph_backend 'falkordb' needs a server: set MEMORY_SUBSTRATE_FALKORDB_URL (for example "
            "redis://localhost:6379, or run 'memory-substrate falkordb-server'). Nothing was changed.",
            details={
                "field": field,
                "backend": value,
                "setting": "MEMORY_SUBSTRATE_FALKORDB_URL",
                "use_instead": default,
            },
        )
    return {
        "name": value,
        "supported": True,
        "native": False,
        "detail": _DETAIL[value],
        "install": install_hint(value),
    }


def effective(config: Mapping[str, object]) -> EffectiveBackends:
    return {
        "graph_backend": str(config.get("graph_backend") or GRAPH_DEFAULT),
        "semantic_backend": str(config.get("semantic_backend") or SEMANTIC_DEFAULT),
    }

"""Derived-index backends named by the contract, and what this build does with each.

The contract lists two graph backends (``file``, ``kuzu``) and one semantic backend
(``lancedb``). They are *projections* of canonical memory, rebuilt by ``reindex``; canonical
data never lives only there. What this build supports:

* graph ``file``: supported natively. The canonical relation table in the store *is* the
  file-equivalent projection: every derived relation carries its ``relation_schema``
  provenance, ``reindex`` rebuilds it from canonical objects, and ``report`` measures its health.
  No second copy on disk is needed for the same logical contract.
* graph ``kuzu``: no Kuzu projection exists in this build. Refused, naming what it would take
  (``pip install kuzu``, and a build that ships the Kuzu projection); never accepted silently.
* semantic ``builtin``: this project's own vectors, stored beside the canonical rows and made by
  the configured embedder (``MEMORY_SUBSTRATE_EMBEDDER``). Accepted; if no embedder is
  available the call says so, and ``reindex`` fills the vectors in once one is.
* semantic ``lancedb``: no LanceDB projection exists in this build. Refused the same way
  (``pip install lancedb``).

A backend is refused *before* anything is written, so a ``configure`` naming one supported and
one refused backend changes nothing.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from memory_substrate.errors import NotAvailableError

GRAPH_DEFAULT = "file"
SEMANTIC_DEFAULT = "builtin"

_EXTERNAL = {
    ("graph_backend", "kuzu"): ("kuzu", "pip install kuzu"),
    ("semantic_backend", "lancedb"): ("lancedb", "pip install lancedb"),
}
_NATIVE = {
    "graph_backend": {"file": "the store's canonical relation table is the file graph projection"},
    "semantic_backend": {"builtin": "vectors stored with the canonical rows, made by the configured embedder"},
}


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def check_backend(field: str, value: str) -> dict[str, Any]:
    """Describe a supported backend, or raise ``NotAvailableError`` naming what to install."""
    if value in _NATIVE.get(field, {}):
        return {"name": value, "supported": True, "native": True, "detail": _NATIVE[field][value]}
    module, install = _EXTERNAL[(field, value)]
    native = next(iter(_NATIVE[field]))
    if not _installed(module):
        message = (
            f"{field} {value!r} is not installed: {install} (and use a memory-substrate build with the "
            f"{value} projection). Nothing was changed; {field} {native!r} works without extra packages."
        )
    else:
        message = (
            f"{field} {value!r}: the {module} package is installed but this memory-substrate build has no "
            f"{value} projection. Nothing was changed; use {field} {native!r} (built in)."
        )
    raise NotAvailableError(
        message,
        details={"field": field, "backend": value, "install": install, "installed": _installed(module), "use_instead": native},
    )


def effective(config: dict[str, Any]) -> dict[str, str]:
    return {
        "graph_backend": str(config.get("graph_backend") or GRAPH_DEFAULT),
        "semantic_backend": str(config.get("semantic_backend") or SEMANTIC_DEFAULT),
    }

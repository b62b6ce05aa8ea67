"""Evidence-capture adapters: pure functions from a path, repository or URL to a ``CapturedSource``.

Names are imported lazily so that, say, the Markdown chunker does not pay for loading
the web extractor or the tree-sitter grammars.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real types for the checker; at run time each name loads on first use
    from memory_substrate.ingest.adapters.chunker import Chunk as Chunk
    from memory_substrate.ingest.adapters.chunker import ChunkLimits as ChunkLimits
    from memory_substrate.ingest.adapters.chunker import chunk_markdown as chunk_markdown
    from memory_substrate.ingest.adapters.chunker import chunk_text as chunk_text
    from memory_substrate.ingest.adapters.document import capture_file as capture_file
    from memory_substrate.ingest.adapters.document import capture_markdown as capture_markdown
    from memory_substrate.ingest.adapters.errors import CaptureError as CaptureError
    from memory_substrate.ingest.adapters.pdf import capture_pdf as capture_pdf
    from memory_substrate.ingest.adapters.repo import capture_repo as capture_repo
    from memory_substrate.ingest.adapters.secret_files import scan_text as scan_text
    from memory_substrate.ingest.adapters.secret_files import secret_file_kind as secret_file_kind
    from memory_substrate.ingest.adapters.web import capture_web as capture_web

_EXPORTS = {
    "CaptureError": "errors",
    "Chunk": "chunker",
    "ChunkLimits": "chunker",
    "chunk_markdown": "chunker",
    "chunk_text": "chunker",
    "capture_file": "document",
    "capture_markdown": "document",
    "capture_repo": "repo",
    "capture_pdf": "pdf",
    "capture_web": "web",
    "scan_text": "secret_files",
    "secret_file_kind": "secret_files",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)

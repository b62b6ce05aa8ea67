"""Evidence-capture adapters: pure functions from a path, repository or URL to a ``CapturedSource``.

Names are imported lazily so that, say, the Markdown chunker does not pay for loading
the web extractor or the tree-sitter grammars.
"""

from __future__ import annotations

import importlib
from typing import Any

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

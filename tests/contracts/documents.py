"""The example documents, read as objects a test can edit and index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_substrate.contracts.loader import load_document


def load_object(path: Path) -> dict[str, Any]:
    """``load_document`` for a file that holds an object (every example does); a test pokes at
    any depth of it, so its values are left untyped."""
    document = load_document(path)
    assert isinstance(document, dict)
    return document

"""What an ingest adapter hands to the ingest service: captured evidence, not memory.

Adapters are pure: they read a path, a URL or a message list and return a
``CapturedSource``. The ingest service owns ids, hashes, adapter/freshness metadata,
storage and suggestions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from memory_substrate.json_types import JsonObject
from memory_substrate.redaction import Redactions

Progress = Callable[[int, int, str], None]  # (done, total, stage): adapters and imports report through it


class WithheldFile(TypedDict):
    """A secret that was not stored: a secret file left out whole, or a value redacted in a file
    (with the ``line``, and the ``page`` of a PDF, where it stood)."""

    path: str
    reason: str
    kind: str
    line: NotRequired[int]
    page: NotRequired[int]


class SkippedFile(TypedDict):
    """A file a capture left out, and why (``binary_file``, ``symlink``, a read failure's reason)."""

    path: str
    reason: str


@dataclass
class CapturedSegment:
    """One addressable piece of evidence inside a source.

    ``locator`` says where it lives, e.g. ``{"kind": "line", "path": "a.md",
    "line_start": 3, "line_end": 9, "heading_path": ["Intro"]}``,
    ``{"kind": "page", "page": 2}`` or ``{"kind": "message", "index": 0}``.
    """

    text: str
    locator: JsonObject
    metadata: JsonObject = field(default_factory=dict)


@dataclass
class CapturedSource:
    """A capture of one repository, file, page, PDF or conversation."""

    kind: str  # repo | file | markdown | web | pdf | conversation
    title: str
    uri: str  # absolute path, URL, or "conversation:<title>"
    fingerprint: str  # sha256 hex over the captured content
    payload: JsonObject = field(default_factory=dict)
    segments: list[CapturedSegment] = field(default_factory=list)
    metadata: JsonObject = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    withheld: list[WithheldFile] = field(default_factory=list)  # secrets not stored
    skipped: list[SkippedFile] = field(default_factory=list)
    adapter_name: str = ""
    adapter_version: str = "1"
    declared_transformations: list[str] = field(default_factory=list)
    origin_classification: str = "local_file"
    # Conversations: the fingerprint after each message (a grown conversation's prefix matches an
    # earlier capture's fingerprint), and the thread key it is appended to when it grows.
    prefix_fingerprints: list[str] = field(default_factory=list)
    thread: str | None = None
    # Whether the builder ran the segments' text through the secret scan (redaction.py) itself; the
    # ingest service scans what is not, and always the title, uri, payload and metadata.
    text_scanned: bool = False
    redactions: Redactions = field(default_factory=Redactions)  # what the builder's scan replaced, by kind

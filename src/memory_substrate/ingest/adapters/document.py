"""``file`` and ``markdown`` capture: one local text file, chunked into line-addressed segments."""

from __future__ import annotations

from pathlib import Path

from memory_substrate.ingest.adapters._files import Allowed, read_text_file, resolve_path
from memory_substrate.ingest.adapters.chunker import (
    CHUNKER_NAME,
    MAX_HEADINGS,
    MAX_MARKDOWN_LINES,
    Chunk,
    ChunkLimits,
    chunk_markdown,
    chunk_text,
    markdown_title,
    split_lines,
    too_many_headings,
)
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.adapters.languages import MARKDOWN_SUFFIXES
from memory_substrate.ingest.adapters.secret_files import looks_like_private_key, scan_text, secret_file_kind
from memory_substrate.ingest.captured import CapturedSegment, CapturedSource

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
_TRANSFORMATIONS = ["decode_utf8", "redact_secrets", CHUNKER_NAME]


def capture_file(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    limits: ChunkLimits | None = None,
    allowed: Allowed | None = None,
) -> CapturedSource:
    """Capture a local text file; Markdown files (by suffix) are chunked as Markdown.

    ``allowed`` (the path policy's check) is applied to the opened file itself, not only to the
    name. Raises ``CaptureError``: ``not_found``, ``not_a_file``, ``file_too_large``,
    ``secret_file``, ``binary_file`` or ``undecodable_text``.
    """
    p = Path(path)
    return _capture(
        p,
        kind="file",
        markdown=p.suffix.lower() in MARKDOWN_SUFFIXES,
        max_bytes=max_bytes,
        limits=limits,
        allowed=allowed,
    )


def capture_markdown(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    limits: ChunkLimits | None = None,
    allowed: Allowed | None = None,
) -> CapturedSource:
    """Capture a Markdown file: frontmatter, preamble and heading sections as segments.

    Raises ``CaptureError`` with the same codes as ``capture_file``.
    """
    return _capture(
        Path(path), kind="markdown", markdown=True, max_bytes=max_bytes, limits=limits, allowed=allowed
    )


def frontmatter_title(chunks: list[Chunk]) -> str | None:
    """A ``title:`` value from a leading frontmatter chunk, if it has a plain one."""
    if not chunks or chunks[0].chunk_kind != "frontmatter":
        return None
    for line in split_lines(chunks[0].text)[1:-1]:
        key, sep, value = line.partition(":" if ":" in line else "=")
        if sep and key.strip().lower() == "title":
            value = value.strip().strip("'\"").strip()
            if value:
                return value
    return None


def chunk_segments(chunks: list[Chunk], path: str) -> list[CapturedSegment]:
    """One segment per chunk, located by line range and heading breadcrumbs."""
    segments = []
    for i, c in enumerate(chunks):
        meta: dict[str, object] = {"chunk_kind": c.chunk_kind, "chunk_index": i, "chunker": CHUNKER_NAME}
        if c.heading:
            meta["heading"] = c.heading
        if c.part_count:
            meta["part_count"] = c.part_count
        segments.append(CapturedSegment(text=c.text, locator=c.locator(path), metadata=meta))
    return segments


def _capture(
    p: Path,
    *,
    kind: str,
    markdown: bool,
    max_bytes: int,
    limits: ChunkLimits | None,
    allowed: Allowed | None = None,
) -> CapturedSource:
    abs_path = resolve_path(p)
    label = str(abs_path)
    secret = secret_file_kind(abs_path)
    if secret:
        raise CaptureError(
            "secret_file", f"{label} is a {secret}; it is not captured", details={"kind": secret}
        )
    tf = read_text_file(abs_path, max_bytes, allowed)
    if looks_like_private_key(tf.text):
        raise CaptureError(
            "secret_file", f"{label} holds a private key; it is not captured", details={"kind": "private_key"}
        )
    scan = scan_text(tf.text, label)
    chunks = (
        chunk_markdown(scan.text, label, limits=limits)
        if markdown
        else chunk_text(scan.text, label, limits=limits)
    )
    title = (frontmatter_title(chunks) or markdown_title(chunks)) if markdown else None
    warnings = [] if chunks else [f"{label} has no text to capture"]
    if markdown and too_many_headings(scan.text):
        warnings.append(
            f"{label} has over {MAX_HEADINGS} heading lines or {MAX_MARKDOWN_LINES} lines; "
            "it was chunked as plain text"
        )
    return CapturedSource(
        kind=kind,
        title=title or abs_path.name,
        uri=label,
        fingerprint=tf.sha256,
        payload={
            "path": label,
            "format": "markdown" if markdown else "text",
            "size_bytes": len(tf.raw),
            "line_count": len(split_lines(tf.text)),
            "chunker": CHUNKER_NAME,
            "chunk_count": len(chunks),
            "content_hash": tf.sha256,
        },
        segments=chunk_segments(chunks, label),
        metadata={"redacted": scan.redacted},
        warnings=warnings,
        withheld=scan.withheld,
        adapter_name=f"{kind}_adapter",
        declared_transformations=list(_TRANSFORMATIONS),
        text_scanned=True,
        origin_classification="local_file",
    )

"""``pdf`` capture: the text layer of a local PDF, one or more segments per page (pypdf)."""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_substrate.ingest.adapters._files import Allowed, read_bytes_checked, resolve_path, sha256_hex
from memory_substrate.ingest.adapters.chunker import ChunkLimits, chunk_text
from memory_substrate.ingest.adapters.errors import CaptureError, missing_dependency
from memory_substrate.ingest.adapters.secret_files import scan_text
from memory_substrate.ingest.captured import CapturedSegment, CapturedSource, WithheldFile

Progress = Callable[[int, int, str], None]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_SEGMENT_CHARS = 4000
_MAX_LIBRARY_WARNINGS = 10
_TRANSFORMATIONS = ["pdf_text_extraction", "redact_secrets", "split_long_pages"]


def _load_pypdf() -> Any:
    try:
        import pypdf
    except ImportError as exc:  # pragma: no cover - pypdf is a core dependency
        raise missing_dependency("pypdf", "PDF capture") from exc
    return pypdf


def _open(raw: bytes, label: str, password: str | None) -> Any:
    pypdf = _load_pypdf()
    if b"%PDF-" not in raw[:1024]:
        raise CaptureError("pdf_corrupt", f"{label} has no PDF header")
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw), strict=False)
    except Exception as exc:  # malformed PDFs fail in too many ways inside pypdf to list
        raise CaptureError("pdf_corrupt", f"{label} could not be parsed: {exc}") from None
    if not reader.is_encrypted:
        return reader
    try:
        result = reader.decrypt(password or "")
    except pypdf.errors.DependencyError as exc:
        raise CaptureError(
            "pdf_encrypted", f"{label} is encrypted with a cipher this install cannot open: {exc}"
        ) from None
    except Exception as exc:  # a broken encryption dictionary
        raise CaptureError(
            "pdf_encrypted", f"{label} is encrypted and could not be decrypted: {exc}"
        ) from None
    if result == pypdf.PasswordType.NOT_DECRYPTED:
        raise CaptureError("pdf_encrypted", f"{label} is encrypted and needs a password")
    return reader


def _doc_metadata(reader: Any) -> dict[str, str]:
    try:
        meta = reader.metadata
    except Exception:  # a broken /Info dictionary is no reason to lose the text
        return {}
    if not meta:
        return {}
    out = {}
    for key in ("title", "author", "subject", "creator", "producer"):
        value = getattr(meta, key, None)
        if isinstance(value, str) and value.strip():
            out[key] = value.strip()
    return out


def _page_segments(text: str, page: int, max_chars: int) -> list[CapturedSegment]:
    if len(text) <= max_chars:
        return [
            CapturedSegment(text=text, locator={"kind": "page", "page": page}, metadata={"part_count": 1})
        ]
    # Long pages (dense reports, tables) are split on paragraph boundaries where possible.
    chunks = chunk_text(text, limits=ChunkLimits(max_lines=400, max_chars=max_chars, overlap_lines=2))
    return [
        CapturedSegment(
            text=c.text,
            locator={"kind": "page", "page": page, "part": k},
            metadata={
                "part_count": len(chunks),
                "page_line_start": c.line_start,
                "page_line_end": c.line_end,
            },
        )
        for k, c in enumerate(chunks, start=1)
    ]


def capture_pdf(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_segment_chars: int = DEFAULT_SEGMENT_CHARS,
    password: str | None = None,
    progress: Progress | None = None,
    allowed: Allowed | None = None,
) -> CapturedSource:
    """Capture the text of a PDF: segments located by 1-based page (and part, when split).

    Pages without extractable text become warnings. Raises ``CaptureError``: ``not_found``,
    ``not_a_file``, ``file_too_large``, ``pdf_corrupt``, ``pdf_encrypted`` (no usable
    password) or ``pdf_no_text`` (not one page had text; there is no empty success).
    """
    abs_path = resolve_path(path)
    label = str(abs_path)
    raw = read_bytes_checked(abs_path, max_bytes, allowed)
    segments: list[CapturedSegment] = []
    withheld: list[WithheldFile] = []
    page_warnings: list[str] = []
    pages_with_text = 0
    # pypdf reports recoverable damage through the warnings module; keep it as capture warnings.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reader = _open(raw, label, password)
        try:
            pages = list(reader.pages)
        except Exception as exc:  # a broken page tree
            raise CaptureError("pdf_corrupt", f"{label}: the page tree could not be read: {exc}") from None
        meta = _doc_metadata(reader)
        for number, page in enumerate(pages, start=1):
            try:
                text = page.extract_text() or ""
            except Exception as exc:  # one bad content stream should not sink the other pages
                page_warnings.append(f"page {number}: text extraction failed ({type(exc).__name__})")
                text = ""
            text = "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()
            if not text:
                page_warnings.append(f"page {number} has no extractable text (scanned image or empty page?)")
            else:
                pages_with_text += 1
                scan = scan_text(text, label)
                withheld.extend({**w, "page": number} for w in scan.withheld)
                segments.extend(_page_segments(scan.text, number, max_segment_chars))
            if progress is not None:
                progress(number, len(pages), f"{label}#page={number}")
    if not segments:
        raise CaptureError(
            "pdf_no_text",
            f"{label} has no extractable text on any of its {len(pages)} pages (it may need OCR)",
            details={"page_count": len(pages)},
        )
    library_warnings = list(dict.fromkeys(str(w.message) for w in caught))[:_MAX_LIBRARY_WARNINGS]
    return CapturedSource(
        kind="pdf",
        title=meta.get("title") or abs_path.name,
        uri=label,
        fingerprint=sha256_hex(raw),
        payload={
            "path": label,
            "page_count": len(pages),
            "pages_with_text": pages_with_text,
            "size_bytes": len(raw),
            "pdf_metadata": meta,
            "content_hash": sha256_hex(raw),
            "encrypted": bool(reader.is_encrypted),
        },
        segments=segments,
        metadata={"redacted": bool(withheld)},
        warnings=page_warnings + [f"pdf: {w}" for w in library_warnings],
        withheld=withheld,
        adapter_name="pdf_adapter",
        declared_transformations=list(_TRANSFORMATIONS),
        text_scanned=True,
        origin_classification="local_file",
    )

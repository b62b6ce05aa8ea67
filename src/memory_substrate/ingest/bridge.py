"""Binds each file-like ingest mode to its adapter, with limits taken from settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_substrate.errors import ValidationError
from memory_substrate.ingest import schemas as I
from memory_substrate.ingest.adapters import (
    capture_file,
    capture_markdown,
    capture_pdf,
    capture_repo,
    capture_web,
)
from memory_substrate.ingest.captured import CapturedSource, Progress
from memory_substrate.ingest.pathpolicy import Kind, PathPolicy
from memory_substrate.runtime import Runtime
from memory_substrate.util import canonical_json, sha256_text
from memory_substrate.validation import parse


def _path(rt: Runtime, raw: str, kind: Kind = "file") -> str:
    # Relative paths are resolved against the server's working directory; the stored uri is
    # absolute. The policy (ingest/pathpolicy.py) decides whether this caller may read it at all.
    try:
        return str(PathPolicy.from_settings(rt.settings).resolve(raw, kind))
    except ValidationError as exc:
        raise ValidationError(f"input_data.{exc.message}", details=exc.details) from None


def _repo(rt: Runtime, mode: str, input_data: dict[str, Any], opts: I.IngestOptions, progress: Progress | None) -> CapturedSource:
    data = parse(I.RepoInput, input_data, "input_data")
    captured = capture_repo(
        _path(rt, data.path, "directory"),
        denied=PathPolicy.from_settings(rt.settings).denied,  # the store's own directory, even below an allowed one
        include_patterns=data.include_patterns,
        exclude_patterns=data.exclude_patterns,
        force=opts.force,
        max_file_bytes=rt.settings.max_file_bytes,
        progress=progress,
    )
    # The same files seen through other patterns are a different capture of the repository.
    scope = canonical_json([captured.fingerprint, data.include_patterns, data.exclude_patterns, opts.force])
    captured.fingerprint = sha256_text(scope)
    return captured


def _document(rt: Runtime, mode: str, input_data: dict[str, Any], opts: I.IngestOptions, progress: Progress | None) -> CapturedSource:
    data = parse(I.PathInput, input_data, "input_data")
    capture = capture_markdown if mode == "markdown" else capture_file
    captured = capture(_path(rt, data.path), max_bytes=rt.settings.max_file_bytes)
    if data.title:
        captured.title = data.title
    return captured


def _pdf(rt: Runtime, mode: str, input_data: dict[str, Any], opts: I.IngestOptions, progress: Progress | None) -> CapturedSource:
    data = parse(I.PathInput, input_data, "input_data")
    captured = capture_pdf(_path(rt, data.path), max_bytes=rt.settings.max_pdf_bytes, progress=progress)
    if data.title:
        captured.title = data.title
    return captured


def _web(rt: Runtime, mode: str, input_data: dict[str, Any], opts: I.IngestOptions, progress: Progress | None) -> CapturedSource:
    data = parse(I.WebInput, input_data, "input_data")
    s = rt.settings
    return capture_web(data.url, timeout_s=s.web_timeout_s, max_bytes=s.web_max_bytes, allow_private=s.web_allow_private,
                       allow=s.web_allow_hosts)


ADAPTERS: dict[str, Callable[..., CapturedSource]] = {
    "repo": _repo,
    "file": _document,
    "markdown": _document,
    "pdf": _pdf,
    "web": _web,
}

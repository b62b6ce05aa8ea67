"""Binds each file-like ingest mode to its adapter, with limits taken from settings."""

from __future__ import annotations

from collections.abc import Callable

from memory_substrate.errors import ValidationError
from memory_substrate.ingest import schemas
from memory_substrate.ingest.adapters import (
    capture_file,
    capture_markdown,
    capture_pdf,
    capture_repo,
    capture_web,
)
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.captured import CapturedSource, Progress
from memory_substrate.ingest.pathpolicy import Kind, PathPolicy
from memory_substrate.json_types import JsonObject
from memory_substrate.runtime import Runtime
from memory_substrate.util import canonical_json, sha256_text
from memory_substrate.validation import parse

# Reasons that say something about whether a path exists; a restricted policy answers them all alike.
_EXISTENCE = frozenset({"not_found", "not_a_file", "not_a_directory"})


def _path(policy: PathPolicy, raw: str, kind: Kind = "file") -> str:
    # Relative paths are resolved against the server's working directory; the stored uri is
    # absolute. The policy (ingest/pathpolicy.py) decides whether this caller may read it at all.
    try:
        return str(policy.resolve(raw, kind))
    except ValidationError as exc:
        raise ValidationError(f"input_data.{exc.message}", details=exc.details) from None


def _opened(policy: PathPolicy, raw: str, capture: Callable[[], CapturedSource]) -> CapturedSource:
    """Run ``capture``; under a restricted policy, a path that vanished, was swapped for a symlink
    or a FIFO, or failed the check on the opened file since ``_path`` gets the one refusal too."""
    try:
        return capture()
    except CaptureError as exc:
        if policy.is_open or exc.reason not in _EXISTENCE:
            raise
        raise policy.unavailable(raw) from None


def _repo(
    rt: Runtime, mode: str, input_data: JsonObject, opts: schemas.IngestOptions, progress: Progress | None
) -> CapturedSource:
    data = parse(schemas.RepoInput, input_data, "input_data")
    policy = PathPolicy.from_settings(rt.settings)
    path = _path(policy, data.path, "directory")
    captured = _opened(
        policy,
        data.path,
        lambda: capture_repo(
            path,
            allowed=policy.contains,  # the store's directory and files, even below an allowed root
            include_patterns=data.include_patterns,
            exclude_patterns=data.exclude_patterns,
            force=opts.force,
            max_file_bytes=rt.settings.max_file_bytes,
            progress=progress,
        ),
    )
    # What the capture holds, not the options that chose it: the files read with their content
    # hashes, and the map made of them (a newer outliner or a wider secret scan maps the same
    # files anew). The same files chosen through other patterns are the same capture: a noop.
    held = [[s.text, s.locator, s.metadata] for s in captured.segments]
    captured.fingerprint = sha256_text(canonical_json([captured.fingerprint, held]))
    return captured


def _document(
    rt: Runtime, mode: str, input_data: JsonObject, opts: schemas.IngestOptions, progress: Progress | None
) -> CapturedSource:
    data = parse(schemas.PathInput, input_data, "input_data")
    policy = PathPolicy.from_settings(rt.settings)
    capture = capture_markdown if mode == "markdown" else capture_file
    path = _path(policy, data.path)
    captured = _opened(
        policy,
        data.path,
        lambda: capture(path, max_bytes=rt.settings.max_file_bytes, allowed=policy.contains),
    )
    if data.title:
        captured.title = data.title
    return captured


def _pdf(
    rt: Runtime, mode: str, input_data: JsonObject, opts: schemas.IngestOptions, progress: Progress | None
) -> CapturedSource:
    data = parse(schemas.PathInput, input_data, "input_data")
    policy = PathPolicy.from_settings(rt.settings)
    path = _path(policy, data.path)
    captured = _opened(
        policy,
        data.path,
        lambda: capture_pdf(
            path, max_bytes=rt.settings.max_pdf_bytes, progress=progress, allowed=policy.contains
        ),
    )
    if data.title:
        captured.title = data.title
    return captured


def _web(
    rt: Runtime, mode: str, input_data: JsonObject, opts: schemas.IngestOptions, progress: Progress | None
) -> CapturedSource:
    data = parse(schemas.WebInput, input_data, "input_data")
    s = rt.settings
    return capture_web(
        data.url,
        timeout_s=s.web_timeout_s,
        max_bytes=s.web_max_bytes,
        allow_private=s.web_allow_private,
        allow=s.web_allow_hosts,
    )


ADAPTERS: dict[str, Callable[..., CapturedSource]] = {
    "repo": _repo,
    "file": _document,
    "markdown": _document,
    "pdf": _pdf,
    "web": _web,
}

"""``repo`` capture: a lightweight map of a repository, not its file bodies.

The map lists code files (language, line count, hash), outlines of parsed modules
(imports and symbols with line ranges) and Markdown sections (breadcrumbs, short
excerpts, line ranges). Segments are one short excerpt per code symbol and per
document section; readers go back to the files through the locators for the rest.
A text file no outline covers (a language without a grammar, a config file, a module
with no definitions) gets its path and the head of its text instead, so that every
file the walk admits can be found.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from memory_substrate.ingest.adapters._files import Allowed, read_text_file, resolve_path
from memory_substrate.ingest.adapters.chunker import (
    CHUNKER_NAME,
    DEFAULT_LIMITS,
    ChunkLimits,
    chunk_markdown,
    chunk_text,
    split_lines,
)
from memory_substrate.ingest.adapters.code_symbols import CLASS_KINDS, FUNCTION_KINDS, outline
from memory_substrate.ingest.adapters.document import frontmatter_title
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.adapters.languages import (
    BINARY_SUFFIXES,
    CODE_LANGUAGES,
    grammar_for,
    is_markdown,
    language_for,
)
from memory_substrate.ingest.adapters.repo_map import CodeFile, CodeModule, DocFile, DocSection
from memory_substrate.ingest.adapters.repo_walk import normalize_patterns, walk_repo
from memory_substrate.ingest.adapters.secret_files import looks_like_private_key, scan_text, secret_file_kind
from memory_substrate.ingest.captured import CapturedSegment, CapturedSource, SkippedFile, WithheldFile

Progress = Callable[[int, int, str], None]

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
EXCERPT_CHARS = 240
# Chunks of a file's head kept when no outline covers it: enough for a script's or a config
# file's opening definitions, while a large data file still costs a few segments, not hundreds.
HEAD_CHUNKS = 3
_MAX_PARSE_WARNINGS = 20
_TRANSFORMATIONS = [
    "skip_generated_dirs",
    "apply_gitignore",
    "preflight_agent_state",
    "decode_utf8",
    "redact_secrets",
    "outline_code_symbols",
    CHUNKER_NAME,
    "excerpt_sections",
]


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Whitespace-collapsed text cut to ``limit`` characters (with an ellipsis when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class _MapBuilder:
    """Accumulates the repo map while files are read one by one."""

    def __init__(self, limits: ChunkLimits | None, allowed: Allowed | None) -> None:
        self.limits = limits
        self.allowed = allowed
        self.code_index: list[CodeFile] = []
        self.code_modules: list[CodeModule] = []
        self.doc_index: list[DocFile] = []
        self.sections: list[DocSection] = []
        self.segments: list[CapturedSegment] = []
        self.hashes: list[tuple[str, str]] = []
        self.withheld: list[WithheldFile] = []
        self.skipped: list[SkippedFile] = []
        self.parse_warnings: list[str] = []

    def add_file(self, root: Path, rel: str, max_bytes: int) -> None:
        secret = secret_file_kind(rel)
        if secret:
            self.withheld.append({"path": rel, "reason": "secret_file", "kind": secret})
            return
        if PurePosixPath(rel).suffix.lower() in BINARY_SUFFIXES:
            self.skipped.append({"path": rel, "reason": "binary_file"})
            return
        try:
            tf = read_text_file(root / rel, max_bytes, self.allowed)
        except CaptureError as exc:
            self.skipped.append({"path": rel, "reason": exc.reason})
            return
        if looks_like_private_key(tf.text):
            self.withheld.append({"path": rel, "reason": "secret_file", "kind": "private_key"})
            return
        scan = scan_text(tf.text, rel)
        self.withheld.extend(scan.withheld)
        self.hashes.append((rel, tf.sha256))
        line_count = len(split_lines(tf.text))
        if is_markdown(rel):
            self._add_doc(rel, scan.text, tf.sha256, line_count)
        else:
            self._add_code(rel, scan.text, tf.sha256, line_count)

    def _add_doc(self, rel: str, text: str, sha: str, line_count: int) -> None:
        chunks = chunk_markdown(text, rel, limits=self.limits)
        title = frontmatter_title(chunks)
        if title is None:
            title = next((c.heading_path[0] for c in chunks if c.heading_path), PurePosixPath(rel).name)
        self.doc_index.append(
            {"path": rel, "title": title, "line_count": line_count, "hash": sha, "section_count": len(chunks)}
        )
        for c in chunks:
            short = excerpt(c.text)
            section: DocSection = {
                "path": rel,
                "heading": c.heading,
                "heading_path": list(c.heading_path),
                "excerpt": short,
                "chunk_kind": c.chunk_kind,
                "line_start": c.line_start,
                "line_end": c.line_end,
            }
            if c.part is not None:
                section["part"] = c.part
            self.sections.append(section)
            self.segments.append(
                CapturedSegment(
                    text=short,
                    locator=c.locator(rel),
                    metadata={
                        "segment_kind": "document_section",
                        "chunk_kind": c.chunk_kind,
                        "heading": c.heading,
                    },
                )
            )

    def _add_code(self, rel: str, text: str, sha: str, line_count: int) -> None:
        language = language_for(rel)
        self.code_index.append({"path": rel, "language": language, "line_count": line_count, "hash": sha})
        before = len(self.segments)
        if language in CODE_LANGUAGES:
            self._add_outline(rel, text, language)
        if len(self.segments) == before:
            self._add_head(rel, text, language)

    def _add_head(self, rel: str, text: str, language: str) -> None:
        """Segments for a file without symbol segments: its path and the head of its text."""
        lim = self.limits or DEFAULT_LIMITS
        head = text[: HEAD_CHUNKS * lim.max_chars]
        cut = head.rfind("\n")
        if len(head) < len(text) and cut > 0:
            head = head[:cut]  # whole lines only, so the last chunk's line range is honest
        for c in chunk_text(head, rel, limits=lim)[:HEAD_CHUNKS]:
            # The header names the file: a search for its name or path finds it, and a reader
            # sees which file the text is from.
            header = f"file {rel} ({language}, lines {c.line_start}-{c.line_end})"
            self.segments.append(
                CapturedSegment(
                    text=f"{header}\n{c.text}",
                    locator=c.locator(rel),
                    metadata={"segment_kind": "file_head", "language": language, "chunk_kind": c.chunk_kind},
                )
            )

    def _add_outline(self, rel: str, text: str, language: str) -> None:
        out = outline(text, rel, language, grammar_for(rel, language))
        if out.parser == "none":
            return
        if out.parse_errors:
            self.parse_warnings.append(rel)
        self.code_modules.append(
            {
                "path": rel,
                "module": out.module,
                "language": language,
                "parser": out.parser,
                "imports": out.imports,
                "classes": [s.brief() for s in out.symbols if s.kind in CLASS_KINDS],
                "functions": [s.brief() for s in out.symbols if s.kind in FUNCTION_KINDS],
                "symbols": [s.brief() for s in out.symbols],
                "parse_errors": out.parse_errors,
            }
        )
        for s in out.symbols:
            # The header names the qualified symbol and file, which the bare signature lacks.
            header = f"{s.kind} {s.name} ({rel}:{s.line_start})"
            body = f"{header}\n{s.signature}" + (f"\n{s.doc}" if s.doc else "")
            # Where the docstring starts: the symbol's vector is made of its header and docstring
            # (indexing.segment_embedding_text), not of its parameter list.
            doc_at = {"doc_at": len(header) + len(s.signature) + 2} if s.doc else {}
            self.segments.append(
                CapturedSegment(
                    text=body,
                    locator={
                        "kind": "line",
                        "path": rel,
                        "line_start": s.line_start,
                        "line_end": s.line_end,
                        "symbol": s.name,
                        "symbol_kind": s.kind,
                    },
                    metadata={
                        "segment_kind": "code_symbol",
                        "language": language,
                        "module": out.module,
                        **doc_at,
                    },
                )
            )

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for rel, sha in sorted(self.hashes):
            h.update(f"{rel}\0{sha}\n".encode())
        return h.hexdigest()


def _repo_root(root: str | Path, allowed: Allowed | None) -> Path:
    """``root`` resolved; a directory that is missing, not a directory or not allowed is refused
    (one the policy denies reads as missing)."""
    base = resolve_path(root)
    if not base.exists():
        raise CaptureError("not_found", f"no such directory: {base}")
    if not base.is_dir():
        raise CaptureError("not_a_directory", f"not a directory: {base}")
    if allowed is not None and not allowed(base):
        raise CaptureError("not_found", f"no such directory: {base}")
    return base


def _parse_warnings(parse_warnings: list[str]) -> list[str]:
    """One warning per file the parser met syntax errors in, the first few named."""
    warnings: list[str] = []
    for rel in parse_warnings[:_MAX_PARSE_WARNINGS]:
        warnings.append(f"{rel}: the parser met syntax errors; its outline may be partial")
    if len(parse_warnings) > _MAX_PARSE_WARNINGS:
        warnings.append(f"{len(parse_warnings) - _MAX_PARSE_WARNINGS} more files had syntax errors")
    return warnings


def capture_repo(
    root: str | Path,
    *,
    include_patterns: list[str] | None = None,
    exclude_patterns: list[str] | None = None,
    force: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: Progress | None = None,
    limits: ChunkLimits | None = None,
    allowed: Allowed | None = None,
) -> CapturedSource:
    """Capture a repository map rooted at ``root``.

    ``allowed``: the path policy's check, applied to every entry walked and every file opened
    (the store's directory and files are neither listed nor read). Every file, ``.gitignore``
    included, is read only if it is a regular file reached without a symlink, and at most
    ``max_file_bytes`` of it.

    Generated directories and ``.gitignore``d paths are skipped; ``include_patterns`` and
    ``exclude_patterns`` are fnmatch globs tried on relative paths and basenames. Top-level
    agent state (``.codex``, ``.claude``, ``.cursor``, ``.worktrees``) is left out and listed
    in ``metadata["preflight"]`` unless ``force`` is true. ``progress(done, total, path)`` is
    called after each file. Raises ``CaptureError`` ``not_found`` / ``not_a_directory``.
    """
    base = _repo_root(root, allowed)
    includes, excludes = normalize_patterns(include_patterns), normalize_patterns(exclude_patterns)
    walked = walk_repo(
        base,
        include_patterns=includes,
        exclude_patterns=excludes,
        force=force,
        max_file_bytes=max_file_bytes,
        allowed=allowed,
    )

    builder = _MapBuilder(limits, allowed)
    builder.skipped.extend(walked.skipped)
    total = len(walked.files)
    for done, rel in enumerate(walked.files, start=1):
        builder.add_file(base, rel, max_file_bytes)
        if progress is not None:
            progress(done, total, rel)

    preflight = walked.preflight.to_dict()
    # Preflight warnings live only in metadata["preflight"]; the service merges them once.
    warnings = _parse_warnings(builder.parse_warnings)

    languages = Counter(e["language"] for e in builder.code_index)
    return CapturedSource(
        kind="repo",
        title=base.name,
        uri=str(base),
        fingerprint=builder.fingerprint(),
        payload={
            "root": str(base),
            "code_index": builder.code_index,
            "code_modules": builder.code_modules,
            "doc_index": builder.doc_index,
            "document_sections": builder.sections,
            "file_count": len(builder.hashes),
            "languages": dict(sorted(languages.items())),
            "chunker": CHUNKER_NAME,
            "include_patterns": includes,
            "exclude_patterns": excludes,
        },
        segments=builder.segments,
        metadata={"preflight": preflight, "force": force, "max_file_bytes": max_file_bytes},
        warnings=warnings,
        withheld=builder.withheld,
        skipped=builder.skipped,
        adapter_name="repo_adapter",
        declared_transformations=list(_TRANSFORMATIONS),
        text_scanned=True,
        origin_classification="local_repository",
    )

"""The entries of a repository map, as a ``repo`` capture's payload lists them, and its preflight
report (``metadata["preflight"]``)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memory_substrate.ingest.adapters.outline import SymbolBrief


class CodeFile(TypedDict):
    """One code (or other non-Markdown text) file: ``payload["code_index"]``."""

    path: str
    language: str
    line_count: int
    hash: str


class CodeModule(TypedDict):
    """The outline of one parsed code file: ``payload["code_modules"]``."""

    path: str
    module: str
    language: str
    parser: str
    imports: list[str]
    classes: list[SymbolBrief]
    functions: list[SymbolBrief]
    symbols: list[SymbolBrief]
    parse_errors: bool


class DocFile(TypedDict):
    """One Markdown file: ``payload["doc_index"]``."""

    path: str
    title: str
    line_count: int
    hash: str
    section_count: int


class DocSection(TypedDict):
    """One section of a Markdown file: ``payload["document_sections"]``."""

    path: str
    heading: str | None
    heading_path: list[str]
    excerpt: str
    chunk_kind: str
    line_start: int
    line_end: int
    part: NotRequired[int]


class PendingDecision(TypedDict):
    """Agent state the preflight left out, waiting for the caller to confirm the exclusion."""

    path: str
    kind: str
    reason: str
    suggested_action: str


class PreflightReport(TypedDict):
    """What the preflight found at the top of the repository and did about it."""

    requires_decision: bool
    excluded_by_preflight: list[str]
    pending_decisions: list[PendingDecision]
    warnings: list[str]
    suggested_exclude_patterns: list[str]
    forced: list[str]

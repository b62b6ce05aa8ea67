"""A segment's stored ranking terms: ``lexical_document`` of its text, a code symbol's docstring
summary weighted (the ``terms`` column both backends write at insert and ``reindex`` rebuilds)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory_substrate.retrieval.terms import lexical_document

# A docstring's summary: its first sentence (up to a sentence end followed by a space), or its
# first paragraph when that comes first.
_SUMMARY_END = re.compile(r"(?<=[.!?])\s|\n\s*\n")
SUMMARY_WEIGHT = 4  # how many times a code symbol's summary sentence counts in its ranking terms


def docstring_summary(doc: str) -> str:
    """The summary of a docstring or doc comment: its first sentence or paragraph."""
    return _SUMMARY_END.split(doc.strip(), maxsplit=1)[0]


def segment_terms(text: str, metadata: Mapping[str, Any]) -> str:
    """The segment ranker's stored terms for a segment (``lexical_document`` of its text), except
    that a code symbol's docstring summary counts ``SUMMARY_WEIGHT`` times.

    A code symbol's text is its header (kind, qualified name, file), its signature and its
    docstring. Someone searching code asks what a symbol does in the words of its summary
    sentence (PEP 257's summary line, Javadoc's first sentence, rustdoc's summary line: the line
    that says what the symbol is for); the parameter list (``url: URL | str, *, params:
    QueryParamTypes | None = None, ...``) is most of the words and says little of it, and the rest
    of a docstring (arguments, returns, examples) mentions many things the symbol is not about.
    Counted once, "Send a `PATCH` request." lost to "Sends a single request, without handling any
    redirections." (whose name, ``_send_single_request``, also holds both words) and "Receive an
    event from the server." to "Receive text from the server." (whose arguments section mentions
    events twice). Weighting the summary is BM25F's field weight written into the bag of terms
    (the ranker's BM25 then saturates and length-normalises the weighted counts together).
    Everything else keeps its terms; the full-text index holds the text as it is."""
    at = metadata.get("doc_at")
    if metadata.get("segment_kind") != "code_symbol" or not isinstance(at, int) or not 0 < at < len(text):
        return lexical_document(text)
    summary = docstring_summary(text[at:])
    extra = " ".join([lexical_document(summary)] * (SUMMARY_WEIGHT - 1))
    return f"{lexical_document(text)} {extra}".strip()

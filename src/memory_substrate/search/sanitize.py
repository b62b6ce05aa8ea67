"""Recover the actual question when an agent passes a whole prompt or scratchpad as the query."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 300
# Linear time on any input (docs/security.md): no lazy group before a trailing ``\s*$`` (quadratic
# on a long run of spaces), and sentences are cut at terminators in one pass instead of
# ``findall(r"[^.!?]*[?]")``, which rescans the rest of a run from every position when no "?"
# follows (100k characters without one took ~40 s).
_LABEL_RE = re.compile(r"(?:question|query|task|ask|request|goal|q)\s*[:：](.*)", re.IGNORECASE)
_TERMINATOR_RE = re.compile(r"[.!?。！？\n]")


def _questions(text: str) -> list[str]:
    """Each run of text that ends with a question mark (after the previous terminator)."""
    out = []
    start = 0
    for m in _TERMINATOR_RE.finditer(text):
        if m.group() in "?？":
            out.append(text[start : m.end()])
        start = m.end()
    return out


@dataclass
class Sanitized:
    text: str
    was_sanitized: bool
    method: str  # passthrough | labeled_line | question_sentence | tail_truncation
    original_length: int

    def diagnostics(self) -> dict[str, object]:
        return {
            "was_sanitized": self.was_sanitized,
            "method": self.method,
            "original_length": self.original_length,
            "clean_length": len(self.text),
        }


def sanitize_query(text: str, limit: int = MAX_QUERY_CHARS) -> Sanitized:
    text = text.strip()
    n = len(text)
    if n <= limit:
        return Sanitized(text, False, "passthrough", n)
    labeled = [m.group(1).strip() for line in text.splitlines() if (m := _LABEL_RE.match(line.lstrip()))]
    labeled = [x for x in labeled if 0 < len(x) <= limit]
    if labeled:
        return Sanitized(labeled[-1], True, "labeled_line", n)
    questions = [q.strip() for q in _questions(text) if 3 < len(q.strip()) <= limit]
    if questions:
        return Sanitized(questions[-1], True, "question_sentence", n)
    tail = text[-limit:]
    cut = tail.find(" ")
    if 0 <= cut < 40:
        tail = tail[cut + 1 :]
    return Sanitized(tail.strip(), True, "tail_truncation", n)

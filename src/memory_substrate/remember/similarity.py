"""Soft-duplicate scoring for unstructured knowledge (advisory, never blocking)."""

from __future__ import annotations

from memory_substrate.analysis import analyse_words
from memory_substrate.analysis.english import stem
from memory_substrate.analysis.stopwords import ENGLISH as STOPWORDS
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.remember.results import PossibleDuplicate
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import older_forms, query_terms, tokens

THRESHOLD = 0.5


def _terms(text: str) -> set[str]:
    """One stem per content word, in the text's own language: ``analysis`` drops its stopwords and
    stems it (German, Spanish, Russian...; the first term of a word is its stem, compound heads
    are left out as too loose for a resemblance score), else English stopwords and light stems. So
    "Nächtliches Backup der Datenbank" and "Die nächtlichen Backups der Datenbanken" overlap on
    their content words, and "Wir sind heute in der Küche" / "... Garage" only on "heute"."""
    words = analyse_words(text)
    if words is not None:
        return {terms[0] for _, terms in words if terms}
    return {stem(t) for t in tokens(text) if t not in STOPWORDS}


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def is_structured(obj: MemoryObject) -> bool:
    return bool(obj.payload.get("subject") and obj.payload.get("predicate"))


def pair_score(
    a: MemoryObject, b: MemoryObject, a_terms: tuple[set[str], set[str]] | None = None
) -> tuple[float, list[str]]:
    """``a_terms``: a's (title, summary) terms when the caller scores one ``a`` against many."""
    a_title, a_summary = a_terms or (_terms(a.title), _terms(a.summary))
    title = _jaccard(a_title, _terms(b.title))
    summary = _jaccard(a_summary, _terms(b.summary))
    score = 0.6 * title + 0.4 * summary
    reasons = []
    if title >= 0.5:
        reasons.append("title_overlap")
    if summary >= 0.5:
        reasons.append("summary_overlap")
    if a.kind == b.kind:
        reasons.append("same_kind")
        score += 0.05
    if set(a.scope_refs) & set(b.scope_refs):
        reasons.append("same_scope")
        score += 0.05
    return round(min(score, 1.0), 3), reasons


def possible_duplicates(session: StoreSession, obj: MemoryObject, limit: int = 5) -> list[PossibleDuplicate]:
    """Live unstructured knowledge whose title/summary closely resembles ``obj``."""
    if is_structured(obj):
        return []
    text = f"{obj.title} {obj.summary}"
    terms = query_terms(text)[:40]
    hits = session.search_objects_text(terms + older_forms(text, terms), limit=40)
    candidates = session.get_objects([h.object_id for h in hits if h.object_id != obj.id])
    out: list[PossibleDuplicate] = []
    mine = (_terms(obj.title), _terms(obj.summary))  # once, not once per candidate
    for other in candidates.values():
        if (
            other.object_type != "knowledge"
            or other.status not in LIVE_KNOWLEDGE_STATUSES
            or is_structured(other)
        ):
            continue
        score, reasons = pair_score(obj, other, mine)
        if score >= THRESHOLD and ("title_overlap" in reasons or "summary_overlap" in reasons):
            out.append(
                {
                    "object_id": other.id,
                    "score": score,
                    "reasons": reasons,
                    "title": other.title,
                    "kind": other.kind,
                    "status": other.status,
                }
            )
    out.sort(key=lambda d: (-d["score"], d["object_id"]))
    return out[:limit]

"""Evidence that means something: the rule a model's citations go through before anything is stored.

A small model cites every segment of the episode for every claim, or none (recorded on
Qwen2.5-Coder 0.5B and 1.5B, ``docs/knowledge-graph.md``). The rule, per fact and procedure:

1. A citation of a segment the window does not hold is removed.
2. A segment *supports* a fact when it shares a name with it: a content word of the object or
   value (of the subject when the object side has none, and of the subject and predicate for a
   true/false value); a procedure, when it shares two content
   words of its title and text (one, when it has only one).
3. A citation list longer than ``MAX_CITED`` names everything and proves nothing: it counts as no
   citation. Cited segments that do not support the claim are removed.
4. A claim left with no supporting citation is grounded by the rule: it cites the window's
   ``MAX_CITED`` best-supporting segments, and a fact grounded so is stored as ``inferred`` (a
   candidate, outside the trusted tiers) rather than ``extracted``.
5. A claim no segment of the window supports is dropped.
"""

from __future__ import annotations

from memory_substrate.graph.extraction_trace import Citation, DroppedItem
from memory_substrate.graph.schemas import ExtractedFact, ExtractedProcedure, Literal_
from memory_substrate.text import query_terms

MAX_CITED = 3


def _terms(*texts: Literal_ | None) -> set[str]:
    out: set[str] = set()
    for text in texts:
        if text is not None and str(text).strip():
            out.update(t for t in query_terms(str(text)) if len(t) >= 2)
    return out


def _supporting(want: set[str], need: int, seg_terms: dict[str, set[str]], among: list[str]) -> list[str]:
    """The segments of ``among`` that share at least ``need`` of ``want``, best first (stable)."""
    scored = [(len(want & seg_terms[s]), i, s) for i, s in enumerate(among) if s in seg_terms]
    return [s for n, _i, s in sorted(scored, key=lambda t: (-t[0], t[1])) if n >= need]


def _rule(
    label: str,
    cited: list[str],
    want: set[str],
    need: int,
    seg_terms: dict[str, set[str]],
    dropped: list[DroppedItem],
    log: list[Citation],
) -> tuple[list[str] | None, bool]:
    """(the citations to store, or None to drop the claim; whether the rule chose them)."""
    known = [s for s in dict.fromkeys(cited) if s in seg_terms]
    entry: Citation = {"item": label, "cited": len(cited)}
    if len(known) < len(dict.fromkeys(cited)):
        entry["unknown_segments_removed"] = [s for s in dict.fromkeys(cited) if s not in seg_terms][:10]
    enumerated = len(known) > MAX_CITED
    kept = [] if enumerated else _supporting(want, need, seg_terms, known)
    if kept:
        if len(kept) < len(known) or "unknown_segments_removed" in entry:
            entry["rule"] = "unrelated_citations_removed"
            entry["segment_ids"] = kept
            log.append(entry)
        return kept, False
    chosen = _supporting(want, need, seg_terms, list(seg_terms))[:MAX_CITED]
    if not chosen:
        dropped.append({"item": label, "reason": "no segment of the window shares a name with it"})
        return None, False
    entry["rule"] = (
        "cited_everything" if enumerated else "cited_nothing_related" if known else "cited_nothing"
    )
    entry["segment_ids"] = chosen
    log.append(entry)
    return chosen, True


def ground(
    facts: list[ExtractedFact],
    procedures: list[ExtractedProcedure],
    segments: dict[str, str],
    dropped: list[DroppedItem],
    log: list[Citation],
) -> tuple[list[ExtractedFact], list[ExtractedProcedure]]:
    """Apply the rule to every fact and procedure of one window (``segments``: id -> text)."""
    seg_terms = {sid: _terms(text) for sid, text in segments.items()}
    kept_facts: list[ExtractedFact] = []
    for fact in facts:
        obj = fact.object if fact.object is not None else fact.value
        # A yes/no value names nothing: such a fact is about its subject and predicate.
        want = (
            _terms(fact.subject, fact.predicate.replace("_", " "))
            if isinstance(obj, bool)
            else _terms(obj) or _terms(fact.subject)
        )
        label = f"fact {fact.subject} {fact.predicate} {obj}"
        cites, by_rule = _rule(label, fact.segment_ids, want, 1, seg_terms, dropped, log)
        if cites is None:
            continue
        grounded = fact.model_copy(update={"segment_ids": cites})
        grounded._cited_by_rule = by_rule
        kept_facts.append(grounded)
    kept_procs: list[ExtractedProcedure] = []
    for proc in procedures:
        want = _terms(proc.title, proc.text)
        cites, _by_rule = _rule(
            f"procedure {proc.title}", proc.segment_ids, want, min(2, len(want)) or 1, seg_terms, dropped, log
        )
        if cites is not None:
            kept_procs.append(proc.model_copy(update={"segment_ids": cites}))
    return kept_facts, kept_procs

"""Plain data passed between a store and the ranker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class RankSegment:
    """What the ranker reads of one stored segment (``models.Segment``: a message turn, a chunk).

    Not a second segment type: a read-only projection of the stored record, keyed for ranking.
    ``id`` is the segment's key across sources (``SOURCE_ID#seg-N``); ``index`` its position in
    its source (``locator["index"]`` for messages); ``created_at`` the message date
    (``metadata.created_at``), parsed; ``speaker`` ``metadata.name``; ``vector`` its stored
    L2-normalised embedding when the store has one at hand (optional). ``search/segments.py``
    builds them from store rows, ``bench/sim_store.py`` from LoCoMo turns.
    """

    id: str
    text: str
    source_id: str
    index: int | None = None
    created_at: datetime | None = None
    speaker: str | None = None
    vector: npt.NDArray[np.float32] | None = field(default=None, compare=False, repr=False)
    # ``retrieval.terms.index_terms(text)`` when the store kept them (saves tokenising the turn)
    terms: Sequence[str] | None = field(default=None, compare=False, repr=False)
    # ``analysis.main_language(text)`` as the store kept it ("" for none told); None: not kept
    language: str | None = field(default=None, compare=False, repr=False)


def stored_segment(
    id: str,
    text: str,
    source_id: str,
    index: int | None,
    created_at: datetime | None,
    speaker: str | None,
    terms: Sequence[str] | None,
    language: str | None = None,
) -> RankSegment:
    """``RankSegment(id, text, source_id, index, created_at, speaker, None, terms, language)``, built at less
    than half the cost: a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, and a search builds one record per window turn (several hundred).
    """
    seg = _new(RankSegment)
    seg.__dict__.update(
        id=id,
        text=text,
        source_id=source_id,
        index=index,
        created_at=created_at,
        speaker=speaker,
        vector=None,
        terms=terms,
        language=language,
    )
    return seg


_new = object.__new__


class RankedSegmentRow(TypedDict):
    """A ``RankedSegment`` as a plain dict (its features left out)."""

    segment_id: str
    rank_score: float
    retrieval_sources: list[str]
    retrieval_ranks: dict[str, int]
    lexical_score: float | None
    semantic_score: float | None


@dataclass
class RankedSegment:
    """One ranked result. ``retrieval_ranks`` maps stream name -> 1-based rank in that stream."""

    segment_id: str
    rank_score: float
    retrieval_sources: list[str]
    retrieval_ranks: dict[str, int]
    lexical_score: float | None = None
    semantic_score: float | None = None
    features: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> RankedSegmentRow:
        return {
            "segment_id": self.segment_id,
            "rank_score": self.rank_score,
            "retrieval_sources": list(self.retrieval_sources),
            "retrieval_ranks": dict(self.retrieval_ranks),
            "lexical_score": self.lexical_score,
            "semantic_score": self.semantic_score,
        }

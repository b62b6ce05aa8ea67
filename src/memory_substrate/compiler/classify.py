"""Task classification without a model call: prototype similarity plus lexical cues.

Each class has a handful of hand-written prototype tasks (prototypes.py). A task scores, per
class, the mean cosine of its three nearest prototypes (default embedder) plus the weights of
the class's cue patterns that match it. Scores become confidences through a softmax; the
primary class is the best, the secondary the runner-up, and both profiles run when their
confidence gap is below ``DUAL_PROFILE_GAP``. Without an embedder only the cues decide, with
``chat`` as the fallback when nothing matches.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memory_substrate.compiler.profiles import DUAL_PROFILE_GAP, TASK_CLASSES
from memory_substrate.compiler.prototypes import CUES, PROTOTYPES
from memory_substrate.compiler.results import ClassificationView
from memory_substrate.embed.base import Embedder

TOP_K = 3
CUE_WEIGHT = 0.12  # one strong cue is worth about a 0.12 gain in cosine
CUE_CAP = 2.0  # summed cue weight per class is capped, so a long task cannot pile up cues
TEMPERATURE = 0.08  # calibrated so both profiles run on about a quarter of tasks (docs)
FALLBACK = "chat"

_COMPILED = {c: [(re.compile(p), w) for p, w in cues] for c, cues in CUES.items()}
_matrices: dict[tuple[str, bool], tuple[npt.NDArray[np.float32], list[str]]] = {}
_lock = threading.Lock()


@dataclass
class Classification:
    primary: str
    confidence: float
    secondary: str | None
    secondary_confidence: float | None
    dual: bool  # both profiles run
    method: str  # "prototypes+cues" | "cues" | "given"
    scores: dict[str, float] = field(default_factory=dict)
    cues: dict[str, list[str]] = field(default_factory=dict)

    @property
    def classes(self) -> list[str]:
        return [self.primary, self.secondary] if self.dual and self.secondary else [self.primary]

    def to_dict(self) -> ClassificationView:
        return {
            "primary": {"class": self.primary, "confidence": round(self.confidence, 4)},
            "secondary": (
                {"class": self.secondary, "confidence": round(self.secondary_confidence or 0.0, 4)}
                if self.secondary
                else None
            ),
            "dual_profile": self.dual,
            "method": self.method,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "cues": self.cues,
        }


def _prototype_matrix(
    embedder: Embedder, as_queries: bool = False
) -> tuple[npt.NDArray[np.float32], list[str]]:
    with _lock:
        cached = _matrices.get((embedder.name, as_queries))
        if cached is None:
            labels = [c for c in TASK_CLASSES for _ in PROTOTYPES[c]]
            texts = [t for c in TASK_CLASSES for t in PROTOTYPES[c]]
            if as_queries:
                matrix = np.stack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])
            else:
                matrix = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
            cached = _matrices[(embedder.name, as_queries)] = (matrix, labels)
    return cached


def cue_hits(task: str) -> dict[str, list[str]]:
    text = task.casefold()
    out: dict[str, list[str]] = {}
    for cls, patterns in _COMPILED.items():
        for pattern, _ in patterns:
            m = pattern.search(text)
            if m:
                out.setdefault(cls, []).append(m.group(0).strip())
    return out


def _cue_scores(task: str) -> dict[str, float]:
    text = task.casefold()
    return {
        cls: min(CUE_CAP, sum(w for p, w in patterns if p.search(text)))
        for cls, patterns in _COMPILED.items()
    }


def _softmax(scores: dict[str, float]) -> dict[str, float]:
    vals = np.array([scores[c] for c in TASK_CLASSES], dtype=np.float64) / TEMPERATURE
    vals = np.exp(vals - vals.max())
    vals /= vals.sum()
    return {c: float(v) for c, v in zip(TASK_CLASSES, vals, strict=True)}


def classify(task: str, embedder: Embedder | None) -> Classification:
    """Primary and secondary task class of ``task`` with confidences (softmax over class scores)."""
    cues = _cue_scores(task)
    scores = {c: CUE_WEIGHT * cues[c] for c in TASK_CLASSES}
    method = "cues"
    if embedder is not None:
        matrix, labels = _prototype_matrix(embedder)
        sims = matrix @ np.asarray(embedder.embed_query(task), dtype=np.float32)
        if not sims.any():
            # The task shares no dimension with any (English) prototype: the language-gated default
            # embeds a German or Chinese query with its multilingual model alone. Compared the other
            # way round, prototypes as queries and the task as a document, it meets them through that
            # model (every score 0 made every such task 'debug' by the tie).
            matrix, labels = _prototype_matrix(embedder, as_queries=True)
            sims = matrix @ np.asarray(embedder.embed_documents([task])[0], dtype=np.float32)
        for cls in TASK_CLASSES:
            own = np.sort(sims[[i for i, lab in enumerate(labels) if lab == cls]])[::-1][:TOP_K]
            scores[cls] += float(own.mean())
        method = "prototypes+cues"
    elif not any(cues.values()):
        scores[FALLBACK] += CUE_WEIGHT  # nothing to go on: a conversation-style question
    conf = _softmax(scores)
    ranked = sorted(TASK_CLASSES, key=lambda c: (-conf[c], TASK_CLASSES.index(c)))
    primary, secondary = ranked[0], ranked[1]
    gap = conf[primary] - conf[secondary]
    return Classification(
        primary=primary,
        confidence=conf[primary],
        secondary=secondary,
        secondary_confidence=conf[secondary],
        dual=gap < DUAL_PROFILE_GAP,
        method=method,
        scores=scores,
        cues=cue_hits(task),
    )


def given(task_class: str) -> Classification:
    """The caller named the class: no classification, one profile."""
    return Classification(task_class, 1.0, None, None, False, "given")

"""Episode recall: which captured turns are candidates of the package, and how relevant each is.

A search page shows ten turns; a package of 1,500 tokens holds 30 to 40 and one of 4,096 about a
hundred, so the compiler needs a ranked pool that stays good far below the top ten. Two general
retrieval ideas do that, both measured on the LoCoMo dev conversations (notebooks/context-compiler-log.md):

* **Context expansion.** Evidence often sits a few turns away from the turn that matches the
  words of the task: the reply to a question, the follow-up that names the thing the first turn
  only hinted at. So the segment ranker (the same one search uses, ``query/segments``) also ranks
  every turn within ``CONTEXT_TURNS`` of its ``CONTEXT_SEEDS`` best hits of each candidate stream,
  scoring each on its own merits (lexical window, own vector, speaker, time), not by inheriting
  its neighbour's score (propagating scores to neighbours recalled less).
* **Episode-level relevance.** A conversation that holds several strong hits is about the task,
  and its other turns are likelier evidence than an equally scored turn of an unrelated
  conversation (passage retrieval interpolated with its document's score). Each turn's score is
  its ranker score (z-scored over the ranked list) plus ``EPISODE_WEIGHT`` x the z-scored mean of
  the best ``EPISODE_TOP`` turn scores of its episode. It also concentrates the package in fewer
  episodes, each of which costs an opening element.

A task that asks *when* something happened also prefers the turns that say when
(``answer_type``: a time expression of the turn's own, ``WHEN_BONUS`` z-units).

On LoCoMo dev (XML, 1,500 / 4,096 tokens) the two together raised recall from 0.835 / 0.898 to
0.852 / 0.908; without the expansion 0.841 / 0.890, without the episode relevance 0.840 / 0.910.
Search keeps its own ranking (one turn around the hits): only the compiler passes ``CONFIG``.

The result is a similarity in 0..1 per turn (min-max over the pool), which rank.py turns into the
relevance dimension; the four dimensions and their weights are unchanged.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from memory_substrate.analysis.english import fold
from memory_substrate.analysis.stopwords import ENGLISH
from memory_substrate.compiler.answer_type import asks_when, says_when
from memory_substrate.compiler.relevance import overlap, word_groups
from memory_substrate.compiler.results import CompileNotes
from memory_substrate.models import Segment
from memory_substrate.retrieval.ranker import RankConfig
from memory_substrate.retrieval.timeexpr import find_periods, strip_periods
from memory_substrate.retrieval.types import RankedSegment
from memory_substrate.runtime import Runtime
from memory_substrate.search.segments import ranked_segments, whole_rows
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import query_terms

TURN_TOKENS_GUESS = 30  # a typical captured turn (LoCoMo: 30-45 tokens a line), to size the pool
EPISODE_POOL = (30, 200)
# Candidate streams deepen from a search page's 50 to 100 only for budgets of 8k tokens and more.
STREAM = (50, 100)
STREAM_TOKENS = 80
# The vector stream runs as deep as the budget's pool of turns when that is deeper than the
# full-text stream (``VECTOR_PER_POOL`` x the pool; 0 keeps it at the full-text depth, search's).
# A turn that answers in other words than the task's is found by its meaning, often below the
# 50th vector hit: LoCoMo dev 0.914 -> 0.926 at 4,096 tokens (1,500 unchanged: its pool is as
# deep as the full-text stream). Its cost, with the heap frozen as the server runs: compile p50 /
# p95 at 10k segments and 4,096 tokens 28-29 / 30-31 ms -> 35-36 / 38-40 ms
# (notebooks/context-compiler-log.md).
VECTOR_PER_POOL = 1.0
CONTEXT_TURNS = (
    2  # rank the turns this close to a seed hit (search: 1; 3 or 5 cost 10-20 ms more at 10k for +0.001)
)
CONTEXT_SEEDS = 30  # ... of the best this many hits of each candidate stream
EPISODE_WEIGHT = 0.3
EPISODE_TOP = 3
WHEN_BONUS = 1.0  # z-units of ranker score, for a turn that says when, when the task asks when
CONFIG = RankConfig(neighbour_candidates=CONTEXT_TURNS, neighbour_seeds=CONTEXT_SEEDS)


def _z(x: np.ndarray) -> np.ndarray:
    sd = float(x.std()) if x.size else 0.0
    return (x - float(x.mean())) / sd if sd > 1e-12 else np.zeros_like(x)


def episode_scores(
    source_ids: list[str], scores: np.ndarray, weight: float | None = None, top: int | None = None
) -> np.ndarray:
    """Each turn's score plus ``weight`` x its episode's score (mean of the episode's best ``top``
    turn scores), both z-scored over the pool. Pure, for tests."""
    weight = EPISODE_WEIGHT if weight is None else weight
    top = EPISODE_TOP if top is None else top
    z = _z(np.asarray(scores, dtype=np.float64))
    if weight == 0.0 or z.size == 0:
        return z
    by: dict[str, list[float]] = defaultdict(list)
    for sid, v in zip(source_ids, z, strict=True):
        by[sid].append(float(v))
    mean_top = {sid: float(np.mean(sorted(vs, reverse=True)[:top])) for sid, vs in by.items()}
    return z + weight * _z(np.array([mean_top[sid] for sid in source_ids]))


def similarities(values: np.ndarray) -> list[float]:
    """Min-max to 0..1 (1.0 for all when they are equal)."""
    if values.size == 0:
        return []
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-12:
        return [1.0] * int(values.size)
    return [float(v) for v in (values - lo) / (hi - lo)]


def episode_match(task: str, pool: list[tuple[Segment, RankedSegment, float]]) -> dict[str, float]:
    """Each episode's absolute match with the task: the best of its pooled turns' cosine with the
    task (the ranker's semantic feature, counted from 0) plus the share of the task's words the
    turn holds (relevance.overlap). The pool's similarities are relative (the best turn is 1.0
    whatever it says), so only this can tell a task memory covers from one it does not."""
    groups = word_groups(task)
    best: dict[str, float] = {}
    for seg, r, _ in pool:
        m = max(0.0, float(r.features.get("semantic", 0.0))) + overlap(groups, seg.text, seg.language)
        best[seg.source_id] = max(best.get(seg.source_id, 0.0), m)
    return best


def coverage(task: str, pool: list[tuple[Segment, RankedSegment, float]]) -> tuple[float, list[str]]:
    """How much of the task memory holds at all, beside how well its best turn matches
    (``episode_match``): the share of the task's words (``word_groups``; time expressions left
    out, as turns carry their time apart from their text) that some pooled turn holds, and the
    participants of the pooled turns that the task names. A task can match a turn fairly well on
    its generic words ("team", "write", "page") and still be about something memory never saw
    ("Porto", "Terraform"); what it never saw is in no turn of the pool, which full-text search
    fills with the turns holding the task's rarest words. A task with no word of its own (only
    stopwords and times) covers nothing: it is judged by its best turn's match alone."""
    text = strip_periods(task, find_periods(task))
    groups = word_groups(text)
    have: set[str] = set()
    speakers: dict[str, str] = {}
    for seg, _, _ in pool:
        have.update(query_terms(seg.text, seg.language))
        name = seg.metadata.get("name")
        if isinstance(name, str):
            have.update(query_terms(name))
            speakers.update((w.casefold(), w) for w in NAME_WORD.findall(name) if w[:1].isupper())
    share = sum(bool(g & have) for g in groups) / len(groups) if groups else 0.0
    return share, named_participants(text, speakers)


# A name written as code: one with an underscore inside or past its first letter ("__post_init__",
# "usr_id", "OPENAI_API_KEY") or a lower-case run followed by a capital ("getUserId"). Word
# groups split it into common words ("post", "init"), which a large store holds somewhere.
CODE_NAME = re.compile(r"(?<![\w.])(?=\w*[A-Za-z])(?:\w*[A-Za-z0-9]_\w*|_+\w+|[a-z]+[A-Z]\w*)")


def unseen_code_names(task: str, pool: list[tuple[Segment, RankedSegment, float]]) -> list[str]:
    """The names written as code in the task (``CODE_NAME``) that no pooled turn holds as a whole
    word, case aside. Such a name is the most specific thing a task can say: memory that never
    held ``__post_init__`` does not cover a question about it, however many of the question's
    other words ("python", "example", "explain") it holds in unrelated chats."""
    names = {m.group(0).strip("_").casefold(): m.group(0) for m in CODE_NAME.finditer(task)}
    names = {k: v for k, v in names.items() if k}
    if not names:
        return []
    texts = [seg.text.casefold() for seg, _, _ in pool]
    return sorted(
        shown
        for folded, shown in names.items()
        if not any(re.search(rf"(?<![a-z0-9]){re.escape(folded)}(?![a-z0-9])", t) for t in texts)
    )


NAME_WORD = re.compile(r"[^\W\d_]+")  # letters only: "Caroline's" and "Jean-Luc" name their people


def named_participants(text: str, speakers: dict[str, str]) -> list[str]:
    """The participants a task names: a capitalised word of the task (times already taken out,
    so "in May" names nobody) equal to a whole capitalised word of a speaker's name, past the
    first word of its sentence. Stems, lower-case words and function words never count:
    "marking" is not Mark, "Mark the ticket as done" names nobody, and "will" is not Will."""
    named: set[str] = set()
    for sentence in SENTENCES.split(text):
        words = NAME_WORD.findall(sentence)
        named.update(
            w.casefold()
            for w in words[1:]
            if w[:1].isupper() and w.casefold() in speakers and fold(w) not in ENGLISH
        )
    return sorted(named)


# A sentence's first word is capitalised whatever it is ("Mark the ticket as done", "Bill the
# customer"): it names nobody. (No LoCoMo dev question starts with a speaker's name.)
SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def recall(
    rt: Runtime, session: StoreSession, task: str, budget: int, found: CompileNotes | None = None
) -> list[tuple[Segment, RankedSegment, float]]:
    """Ranked turns for ``task`` with their similarity, best first (at most the pool for ``budget``).
    ``found`` (the compile's notes for its trace) gets ``answer_type`` when the task asks for one."""
    pool = max(EPISODE_POOL[0], min(EPISODE_POOL[1], budget // TURN_TOKENS_GUESS))
    depth = max(STREAM[0], min(STREAM[1], budget // STREAM_TOKENS))
    # The episode score is taken over the largest pool (200 turns) whatever the budget, then the
    # budget's pool is kept, and only its turns are read whole. (Over every ranked turn it recalled
    # a little more at 1,500 tokens, but reading all of them whole cost a compile more than the
    # gain was worth.)
    vector_depth = max(depth, min(EPISODE_POOL[1], round(VECTOR_PER_POOL * pool)))
    if found is not None:
        found["streams"] = {"full_text": depth, "vector": vector_depth}
    ranked = ranked_segments(
        rt,
        session,
        task,
        {},
        EPISODE_POOL[1],
        depth=depth,
        vector_depth=vector_depth,
        config=CONFIG,
        light=True,
    )
    if not ranked:
        return []
    scores = _z(np.array([r.rank_score for _, r in ranked]))
    if WHEN_BONUS and asks_when(task):
        if found is not None:
            found["answer_type"] = "when"
        # The answer to "when did ..." says when (answer_type.py): LoCoMo dev temporal questions
        # 0.910 -> 0.921 at 1,500 tokens; 0.6 gave 0.919, 2.0 less than none.
        scores = scores + WHEN_BONUS * np.array([says_when(seg.text) for seg, _ in ranked], dtype=np.float64)
    combined = episode_scores([seg.source_id for seg, _ in ranked], scores)
    order = np.lexsort((np.arange(len(ranked)), -combined))[:pool]
    sims = similarities(combined[order])
    pool_rows = [(ranked[int(i)][0], ranked[int(i)][1], s) for i, s in zip(order, sims, strict=True)]
    full = {(seg.source_id, seg.id): seg for seg in whole_rows(session, [seg for seg, _, _ in pool_rows])}
    return [(full[k], r, s) for seg, r, s in pool_rows if (k := (seg.source_id, seg.id)) in full]

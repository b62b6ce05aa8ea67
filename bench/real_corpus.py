"""Real-text corpora for the latency benches (issue 53): turns recombined from real conversation
sentences, at any size, and the real questions asked of them.

    .venv/bin/python bench/real_corpus.py --lang en --size 100000   # statistics and a sample

``conversations(lang, size, seed)`` yields conversations of 100 turns (``(speaker, text)`` pairs),
``size`` turns in all, deterministic from ``seed``; no two turns of a corpus are the same text.

English (``en``): the sentences of the LoCoMo development conversations
(``../shared/data/locomo/locomo_dev.json``, 7 conversations, 3,953 turns) and of the agent-bench
conversations (``bench/data/agent``, the non-held-out files: ledgerline, routewise). Each new
conversation follows one source conversation (a LoCoMo conversation, or one agent-bench project's
conversations in timeline order; picked in proportion to its turns): a cursor walks
its turns in order, from a random start, and each new turn is said by the speaker of the source
turn under the cursor and made of 1–3 sentences (the number drawn from the real turns' own
sentence counts, capped at 3) taken from that speaker's turns within a few turns of the cursor,
in their order. So words keep their real frequencies, names and topics stay together as in the
source, and a question about Caroline's support group meets the hundreds of turns about Caroline a
large store of her conversations would hold. What the recombination cannot make is new words: a
sentence recurs (inside different turns) about ``size * 2 / 12,000`` times, so rare words are
commoner than in a real store that size (the vocabulary does not grow with the store).

German (``de``): the repository holds no real German conversation text. The German statements of
``bench/data/multilingual.json`` and ``multilingual_heldout.json`` (30 sentences written for the
multilingual bench) are recombined instead: each turn 1–4 of them in a random order, said by one of
a few German first names. Its vocabulary is some 300 words, so it is a stand-in for German text,
not a natural sample of it.

``questions(lang)`` gives the real questions: the LoCoMo development questions (every category)
and the agent-bench tasks of the same files (English), or the 30 German question paraphrases of
the multilingual sets (German); ``sample_questions`` draws a fixed mix of them for timing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
from collections.abc import Iterator
from pathlib import Path

BENCH = Path(__file__).resolve().parent
LOCOMO = BENCH.parents[1] / "shared" / "data" / "locomo" / "locomo_dev.json"
AGENT_FILES = sorted(
    p for p in (BENCH / "data" / "agent").glob("*.json") if not p.name.startswith("heldout_")
)
MULTILINGUAL = [BENCH / "data" / "multilingual.json", BENCH / "data" / "multilingual_heldout.json"]
PER_CONV = 100
WINDOW = 6  # source turns either side of the cursor a new turn's sentences may come from
GERMAN_SPEAKERS = ["Anna", "Jonas", "Lea", "Lukas", "Marie", "Felix"]

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9ÄÖÜ])")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (after ``.``, ``!`` or ``?`` followed by a capital or digit)."""
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


# A source conversation: its turns as (speaker, sentences).
Source = list[tuple[str, list[str]]]


def _english_sources() -> list[tuple[str, Source]]:
    out: list[tuple[str, Source]] = []
    for item in json.loads(LOCOMO.read_text(encoding="utf-8")):
        conv = item["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        turns = [(t["speaker"], sentences(t["text"])) for n in numbers for t in conv[f"session_{n}"]]
        out.append((f"locomo {item['sample_id']}", [t for t in turns if t[1]]))
    for path in AGENT_FILES:  # one project's conversations, one after the other, as one source
        data = json.loads(path.read_text(encoding="utf-8"))
        turns = [
            (t["speaker"], sentences(t["text"]))
            for ev in data["timeline"]
            if ev["op"] == "conversation"
            for t in ev["turns"]
        ]
        out.append((f"agent {data['name']}", [t for t in turns if t[1]]))
    return out


def _german_statements() -> list[str]:
    return [
        it["statement"]["de"]
        for p in MULTILINGUAL
        for it in json.loads(p.read_text(encoding="utf-8"))["items"]
    ]


def sources(lang: str) -> list[tuple[str, Source]]:
    if lang == "en":
        return _english_sources()
    if lang == "de":
        return [
            (
                "multilingual de",
                [
                    (GERMAN_SPEAKERS[i % len(GERMAN_SPEAKERS)], [s])
                    for i, s in enumerate(_german_statements())
                ],
            )
        ]
    raise ValueError(f"no real corpus for {lang!r}")


def _english_turn(
    rng: random.Random, src: Source, cursor: int, counts: list[int], extra: int
) -> tuple[str, str]:
    speaker = src[cursor][0]
    lo, hi = max(0, cursor - WINDOW), min(len(src), cursor + WINDOW + 1)
    pool = [s for i in range(lo, hi) if src[i][0] == speaker for s in src[i][1]]
    n = min(len(pool), min(3, rng.choice(counts)) + extra)
    picked = sorted(rng.sample(range(len(pool)), n))  # in the source's order, as a person would say them
    return speaker, " ".join(pool[i] for i in picked)


def _german_turn(rng: random.Random, statements: list[str], extra: int) -> tuple[str, str]:
    n = min(len(statements), rng.randint(1, 4) + extra)
    return rng.choice(GERMAN_SPEAKERS), " ".join(rng.sample(statements, n))


def conversations(lang: str, size: int, seed: int = 53) -> Iterator[list[tuple[str, str]]]:
    """``size`` distinct turns in conversations of 100 (the last may be shorter)."""
    rng = random.Random(f"{lang}-{size}-{seed}")
    srcs = [s for _, s in sources(lang)]
    weights = [len(s) for s in srcs]
    counts = [len(sents) for s in srcs for _, sents in s]
    statements = _german_statements() if lang == "de" else []
    seen: set[bytes] = set()
    made = 0
    while made < size:
        src = rng.choices(srcs, weights=weights)[0]
        cursor = rng.randrange(len(src))
        conv: list[tuple[str, str]] = []
        misses = 0
        while len(conv) < min(PER_CONV, size - made):
            if misses > len(src):  # every turn this source can make near here is made: go on in another
                src = rng.choices(srcs, weights=weights)[0]
                cursor, misses = rng.randrange(len(src)), 0
            misses += 1
            for attempt in range(60):
                extra = attempt // 20  # a turn met before: draw again, with a sentence more after 20 tries
                speaker, text = (
                    _german_turn(rng, statements, extra)
                    if lang == "de"
                    else _english_turn(rng, src, cursor, counts, extra)
                )
                key = hashlib.blake2b(text.encode(), digest_size=8).digest()
                if key not in seen:
                    seen.add(key)
                    conv.append((speaker, text))
                    misses = 0
                    break
            cursor = (cursor + 1) % len(src)
        made += len(conv)
        yield conv


def questions(lang: str) -> list[tuple[str, str]]:
    """Every real question: ``(source, text)``, source ``locomo`` or ``agent`` (or ``multilingual``)."""
    if lang == "de":
        return [
            ("multilingual", it["question"]["de"])
            for p in MULTILINGUAL
            for it in json.loads(p.read_text(encoding="utf-8"))["items"]
        ]
    out = [
        ("locomo", qa["question"])
        for item in json.loads(LOCOMO.read_text(encoding="utf-8"))
        for qa in item["qa"]
    ]
    for path in AGENT_FILES:
        out += [("agent", t["task"]) for t in json.loads(path.read_text(encoding="utf-8"))["tasks"]]
    return out


def sample_questions(
    lang: str, n_locomo: int = 150, n_agent: int = 50, seed: int = 53
) -> list[tuple[str, str]]:
    """The timed questions: a fixed draw of ``n_locomo`` LoCoMo questions and ``n_agent`` agent
    tasks, interleaved (German: all 30 paraphrases, twice in different orders: 60 timings)."""
    rng = random.Random(f"questions-{lang}-{seed}")
    qs = questions(lang)
    if lang == "de":
        return rng.sample(qs, len(qs)) + rng.sample(qs, len(qs))
    loc = rng.sample([q for q in qs if q[0] == "locomo"], n_locomo)
    agent = rng.sample([q for q in qs if q[0] == "agent"], n_agent)
    mixed = loc + agent
    rng.shuffle(mixed)
    return mixed


def describe(lang: str, size: int, seed: int = 53) -> dict[str, float]:
    """Statistics of a corpus beside its sources': words per turn, distinct words, the share of
    turns whose text repeats (0 by construction) and of source sentences used."""
    src_turns = [" ".join(s) for _, src in sources(lang) for _, s in src]
    words: set[str] = set()
    lengths: list[int] = []
    texts: set[str] = set()
    n = 0
    for conv in conversations(lang, size, seed):
        for _, text in conv:
            toks = text.lower().split()
            lengths.append(len(toks))
            words.update(toks)
            texts.add(text)
            n += 1
    src_words = {w for t in src_turns for w in t.lower().split()}
    return {
        "turns": n,
        "distinct_turns": len(texts),
        "words_per_turn_mean": statistics.mean(lengths),
        "words_per_turn_median": statistics.median(lengths),
        "source_turns": len(src_turns),
        "source_words_per_turn_mean": statistics.mean(len(t.split()) for t in src_turns),
        "distinct_words": len(words),
        "source_distinct_words": len(src_words),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", choices=["en", "de"], default="en")
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=53)
    args = ap.parse_args()
    print(json.dumps(describe(args.lang, args.size, args.seed), indent=2))
    first = next(conversations(args.lang, args.size, args.seed))
    for speaker, text in first[:8]:
        print(f"{speaker}: {text}")
    qs = sample_questions(args.lang)
    print(f"{len(qs)} timed questions, e.g.:")
    for src, q in qs[:6]:
        print(f"  [{src}] {q}")


if __name__ == "__main__":
    main()

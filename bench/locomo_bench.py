#!/usr/bin/env python3
"""LoCoMo turn-retrieval benchmark.

For every question with evidence (categories 1-4), the system under test is asked the question
over its own conversation and returns turn ids in order; recall@k is the share of the question's
evidence turns among the first k, averaged over questions, per category and overall.

Data loading and scoring are kept apart from retrieval: ``run(retrieve_fn, prepare_fn)`` takes

* ``prepare_fn(conv) -> state`` (optional, untimed): ingest one conversation;
* ``retrieve_fn(state_or_conv, question, k) -> list[str]`` (timed): turn keys (``dia_id``), best first.

Each LoCoMo session is one source ("conversation"): message text = turn text, plus
`` [image: <blip_caption>]`` when the turn shared an image; name = speaker; created_at = session
date. The method under test (``memory_substrate.retrieval.rank_segments`` over a simulated store)
and a plain BM25 baseline over the same turns are measured in the same run.

    .venv/bin/python bench/locomo_bench.py            # both, table + bench/results/locomo_<ts>.json
    .venv/bin/python bench/locomo_bench.py --only bm25

Data: /work/shared/data/locomo/locomo_dev.json (CC BY-NC 4.0; evaluation only, never shipped).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

DEFAULT_DATA = Path("/work/shared/data/locomo/locomo_dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)


# --------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Turn:
    key: str  # dia_id, e.g. "D3:7"
    session: int  # session number (1-based, as in the data)
    index: int  # 0-based position in its session (the store's locator index)
    speaker: str
    text: str  # turn text (+ " [image: caption]")
    created_at: datetime | None  # session date


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]  # valid dia_ids only
    dropped_evidence: int = 0


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    sessions: dict[int, list[Turn]] = field(default_factory=dict)
    session_dates: dict[int, str] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)


_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%H:%M on %d %B, %Y")


def parse_session_date(text: str) -> datetime | None:
    text = " ".join(text.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


_DIA = re.compile(r"D\d+:\d+")


def load_locomo(path: Path = DEFAULT_DATA) -> list[Conversation]:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    convs: list[Conversation] = []
    for item in raw:
        c = item["conversation"]
        conv = Conversation(item["sample_id"], (c["speaker_a"], c["speaker_b"]), [])
        numbers = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        for n in numbers:
            date_text = c.get(f"session_{n}_date_time", "")
            date = parse_session_date(date_text)
            conv.session_dates[n] = date_text
            turns = []
            for i, t in enumerate(c[f"session_{n}"]):
                text = t["text"]
                if t.get("blip_caption"):
                    text = f"{text} [image: {t['blip_caption']}]"
                turns.append(Turn(t["dia_id"], n, i, t["speaker"], text, date))
            conv.sessions[n] = turns
            conv.turns.extend(turns)
        keys = {t.key for t in conv.turns}
        for qa in item["qa"]:
            cat = int(qa["category"])
            if cat not in CATEGORIES:
                continue
            found = [m for e in qa.get("evidence", []) for m in _DIA.findall(e)]
            valid = list(dict.fromkeys(e for e in found if e in keys))
            q = Question(qa["question"], cat, valid, dropped_evidence=len(found) - len(valid))
            if valid:
                conv.questions.append(q)
        convs.append(conv)
    return convs


# -------------------------------------------------------------------------------------- score
RetrieveFn = Callable[[Any, str, int], list[str]]
PrepareFn = Callable[[Conversation], Any]


def run(
    retrieve_fn: RetrieveFn,
    prepare_fn: PrepareFn | None = None,
    *,
    conversations: list[Conversation] | None = None,
    ks: tuple[int, ...] = KS,
    data_path: Path = DEFAULT_DATA,
) -> dict[str, Any]:
    """Score one retrieval system; returns recall@k per category/overall and latency figures."""
    convs = conversations if conversations is not None else load_locomo(data_path)
    kmax = max(ks)
    per_cat: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
    prepare_s = 0.0
    per_question: list[dict[str, Any]] = []
    for conv in convs:
        t0 = time.perf_counter()
        state = prepare_fn(conv) if prepare_fn is not None else conv
        prepare_s += time.perf_counter() - t0
        for q in conv.questions:
            t0 = time.perf_counter()
            got = retrieve_fn(state, q.text, kmax)
            latencies.append(time.perf_counter() - t0)
            ev = set(q.evidence)
            rec = {}
            for k in ks:
                r = len(ev.intersection(got[:k])) / len(ev)
                per_cat[q.category][k].append(r)
                rec[k] = r
            per_question.append({"conv": conv.sample_id, "q": q.text, "cat": q.category, "recall": rec})
    result: dict[str, Any] = {
        "categories": {},
        "overall": {},
        "questions": sum(len(c.questions) for c in convs),
    }
    for cat in sorted(per_cat):
        result["categories"][str(cat)] = {
            "name": CATEGORIES[cat],
            "n": len(per_cat[cat][ks[0]]),
            **{f"recall@{k}": statistics.fmean(per_cat[cat][k]) for k in ks},
        }
    for k in ks:
        allr = [r for cat in per_cat for r in per_cat[cat][k]]
        result["overall"][f"recall@{k}"] = statistics.fmean(allr)
    lat = sorted(latencies)
    result["latency_ms"] = {
        "p50": 1000 * lat[len(lat) // 2],
        "p95": 1000 * lat[min(len(lat) - 1, math.ceil(0.95 * len(lat)) - 1)],
        "mean": 1000 * statistics.fmean(lat),
    }
    by_conv: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for pq in per_question:
        for k in ks:
            by_conv[pq["conv"]][k].append(pq["recall"][k])
    result["per_conversation"] = {
        cid: {f"recall@{k}": statistics.fmean(v[k]) for k in ks} | {"n": len(v[ks[0]])}
        for cid, v in by_conv.items()
    }
    result["prepare_s"] = prepare_s
    result["per_question"] = per_question
    return result


def format_table(results: dict[str, dict[str, Any]], ks: tuple[int, ...] = KS) -> str:
    cats = sorted({c for r in results.values() for c in r["categories"]})
    head = ["system"]
    for c in cats:
        head += [f"c{c}@{k}" for k in ks]
    head += [f"all@{k}" for k in ks] + ["p50 ms", "p95 ms"]
    rows = [head]
    for name, r in results.items():
        row = [name]
        for c in cats:
            row += [f"{r['categories'][c][f'recall@{k}']:.3f}" for k in ks]
        row += [f"{r['overall'][f'recall@{k}']:.3f}" for k in ks]
        row += [f"{r['latency_ms']['p50']:.1f}", f"{r['latency_ms']['p95']:.1f}"]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    n = {c: next(iter(results.values()))["categories"][c]["n"] for c in cats}
    legend = ", ".join(f"c{c}={CATEGORIES[int(c)]} (n={n[c]})" for c in cats)
    return "\n".join(lines) + "\n" + legend


# ---------------------------------------------------------------------------------- systems
def bm25_system():
    """Plain BM25 (Okapi, k1=1.2, b=0.75) over turn text: lower-case words, English stopwords."""
    from sim_store import PlainBM25

    def prepare(conv: Conversation):
        return PlainBM25([t.key for t in conv.turns], [t.text for t in conv.turns])

    def retrieve(state, question: str, k: int) -> list[str]:
        return state.search(question, k)

    return prepare, retrieve


def ranker_system(**options):
    """The project's ranker (``memory_substrate.retrieval.rank_segments``) over a simulated store."""
    from sim_store import SimulatedStore

    from memory_substrate.embed.static import StaticEmbedder
    from memory_substrate.retrieval import RankConfig, analyse_query, rank_segments

    embedder = StaticEmbedder(options.pop("model_dir", None))
    n_cand = options.pop("candidates", 100)
    use_stats = options.pop("term_stats", False)
    fts5 = options.pop("fts5", True)
    config = RankConfig(**options)

    def prepare(conv: Conversation):
        return SimulatedStore.from_conversation(conv, embedder, fts5=fts5)

    def retrieve(store, question: str, k: int) -> list[str]:
        analysis = analyse_query(question, store.speakers())
        qvec = embedder.embed_query(analysis.semantic_text)
        lexical = store.lexical_search(analysis.terms, n_cand)
        vector = store.vector_search(qvec, n_cand)
        ranked = rank_segments(
            analysis,
            lexical,
            vector,
            store.fetch_segments,
            fetch_neighbours=store.fetch_neighbours,
            term_stats=store.term_stats if use_stats else None,
            query_vector=qvec,
            embedder=embedder,
            config=config,
            limit=k,
        )
        return [store.key_of(r.segment_id) for r in ranked]

    return prepare, retrieve


def _compact_keys(found: dict[str, Any]) -> list[tuple[str, int]]:
    """(source id, 0-based turn index) in rank order, read from the compact answer's lines."""
    ranked = []
    for source in found["sources"]:
        for rank, line in zip(source["ranks"], source["lines"], strict=True):
            ranked.append((rank, (source["id"], int(line.split(" ", 1)[0]) - 1)))
    return [key for _, key in sorted(ranked)]


def memory_system(
    backend: str = "sqlite",
    database_url: str | None = None,
    detail: str = "full",
    embedder: str | None = None,
):
    """The product: each session ingested as one conversation through ``Memory.ingest``, each
    question asked through ``Memory.query("search", result_unit="segment")`` with ``max_items``
    k, in ``detail`` full (the flat items) or compact (the default: sources with their lines)."""
    import tempfile

    from memory_substrate import Memory, Settings
    from memory_substrate.util import fix_ids

    root = tempfile.mkdtemp(prefix="locomo-")
    settings = Settings(root=root, database_url=database_url, **({"embedder": embedder} if embedder else {}))

    def prepare(conv: Conversation):
        mem = Memory(settings, namespace=f"locomo-{conv.sample_id}")
        fix_ids(mem.namespace)  # the same ids in every build, as context_bench builds its stores
        keys: dict[tuple[str, int], str] = {}
        for n, turns in sorted(conv.sessions.items()):
            messages = [
                {
                    "role": "user",
                    "name": t.speaker,
                    "content": t.text,
                    **({"created_at": t.created_at.isoformat()} if t.created_at else {}),
                }
                for t in turns
            ]
            out = mem.ingest("conversation", {"title": f"{conv.sample_id} session {n}", "messages": messages})
            for i, t in enumerate(turns):
                keys[(out["source_id"], i)] = t.key
        fix_ids(None)
        return mem, keys

    def retrieve(state, question: str, k: int) -> list[str]:
        mem, keys = state
        # An explicit max_items is honoured in either detail (docs/responses.md).
        opts = {"max_items": k, "result_unit": "segment", "detail": detail}
        found = mem.query("search", {"query": question}, opts)
        if detail == "compact":
            return [keys[key] for key in _compact_keys(found)]
        return [keys[(i["source_id"], i["locator"]["index"])] for i in found["items"]]

    return prepare, retrieve


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="LoCoMo turn-retrieval recall@k")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--only", choices=["bm25", "ranker", "memory"], default=None)
    ap.add_argument("--simulated", action="store_true", help="also run the ranker over the in-memory store")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--embedder", default=None, help="the memory system's embedder (default: the product's)")
    ap.add_argument("--database-url", default=None, help="run the memory system on this PostgreSQL database")
    ap.add_argument(
        "--compact",
        action="store_true",
        help="also run the memory system through the default compact answers (memory-compact)",
    )
    args = ap.parse_args(argv)

    convs = load_locomo(args.data)
    systems = {"bm25-baseline": bm25_system, "memory": memory_system}
    if args.simulated:
        systems["ranker"] = ranker_system
    if args.only == "bm25":
        systems = {"bm25-baseline": bm25_system}
    elif args.only == "ranker":
        systems = {"ranker": ranker_system}
    elif args.only == "memory":
        systems = {"memory": memory_system}
    if args.compact:
        systems["memory-compact"] = memory_system
    results = {}
    for name, make in systems.items():
        if name.startswith("memory"):
            detail = "compact" if name == "memory-compact" else "full"
            prepare, retrieve = make(database_url=args.database_url, detail=detail, embedder=args.embedder)
        else:
            prepare, retrieve = make()
        results[name] = run(retrieve, prepare, conversations=convs)
    print(format_table(results))
    main_system = "memory" if "memory" in results else "ranker"
    if "bm25-baseline" in results and main_system in results:
        print(f"per conversation ({main_system} vs bm25, recall@5 / @10):")
        for cid, r in results[main_system]["per_conversation"].items():
            b = results["bm25-baseline"]["per_conversation"][cid]
            print(
                f"  {cid:10s} n={r['n']:3d}  {r['recall@5']:.3f}/{r['recall@10']:.3f}"
                f"  vs {b['recall@5']:.3f}/{b['recall@10']:.3f}"
            )
        for k in KS:
            b = results["bm25-baseline"]["overall"][f"recall@{k}"]
            m = results[main_system]["overall"][f"recall@{k}"]
            print(f"ratio@{k} {main_system}/bm25 = {m / b:.3f}")
    if not args.no_save:
        args.out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = args.out / f"locomo_{stamp}.json"
        summary = {
            "data": str(args.data),
            "conversations": [c.sample_id for c in convs],
            "results": {n: {k: v for k, v in r.items() if k != "per_question"} for n, r in results.items()},
        }
        path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        print(f"saved {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

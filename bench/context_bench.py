#!/usr/bin/env python3
"""Context compiler benchmark: evidence recall at a token budget on LoCoMo, and compile latency
at scale, each beside a baseline measured in the same run.

Recall (LoCoMo dev, categories 1-4): each session is ingested as one conversation through
``Memory.ingest``; for each question the compiler is called through ``Memory.query("context")``
with the question as ``task`` and a token budget; the score is the share of the question's gold
evidence turns whose text is inside ``content`` (whitespace-normalised; in the XML package the
text is compared in its escaped form, in JSON in its JSON-string form). The baseline is segment
search (``result_unit: "segment"``, ``detail: "full"``, 200 items) whose excerpts are taken in rank order while
their tokens (same counter) fit the same budget, with no markup at all around them. (``detail:
"full"``: the default compact detail cuts a search page to the response budget, which would leave
the baseline a few items and make it meaninglessly weak: 0.381 at both budgets.)

Latency: synthetic stores of 10k and 100k segments (the corpus of ``scale_bench.py``, plus 200
knowledge items), compile p50/p95 beside segment search (10 items) in the same run; after one
warm-up call the heap is settled as ``memory-substrate serve`` settles it (``memory_substrate.heap``;
``--no-settle`` measures without).

    .venv/bin/python bench/context_bench.py                  # recall at 1,500 and 4,096 tokens
    .venv/bin/python bench/context_bench.py --scale 10000 100000
    .venv/bin/python bench/context_bench.py --format xml json --budgets 1500 4096
    .venv/bin/python bench/context_bench.py --format xml --ceiling   # + the ranking's bare-text bound
    .venv/bin/python bench/context_bench.py --format xml --packaged-search --store /tmp/ctx-a  # see below

Every store is built with fixed ids (``util.fix_ids``, seeded by the namespace's name), so two
builds by one tree hold the same ids and give the same figures (with generated ids a fresh store
moved recall by about +-0.003: the package cites sources by their ids' random part, whose token
count varies). ``--store DIR`` ingests the conversations into DIR once and reuses them on later
runs. ``--packaged-search`` adds search's own segment ranking put through the
compiler's ranking dimensions, packing and markup (``search-packaged``): beside ``compile-xml``
it is the compiler's ranking against search's at the same markup; beside ``segment-search`` it is
what the package's ids, titles, times and speakers cost (notebooks/context-compiler-log.md, round 7).

Data: /work/shared/data/locomo/locomo_dev.json (CC BY-NC 4.0; evaluation only, never shipped).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for p in (REPO / "src", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from locomo_bench import CATEGORIES, DEFAULT_DATA, Conversation, load_locomo  # noqa: E402

from memory_substrate import Memory, Settings  # noqa: E402
from memory_substrate.tokens import count_tokens  # noqa: E402
from memory_substrate.util import fix_ids  # noqa: E402


def _norm(text: str) -> str:
    return " ".join(text.split())


def _encoded(text: str, fmt: str) -> str:
    if fmt == "xml":
        return _norm(escape(text))
    if fmt == "json":
        return _norm(json.dumps(text, ensure_ascii=False)[1:-1])
    return _norm(text)


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(p / 100 * len(xs)) - 1))]


def ingest(mem: Memory, conv: Conversation) -> dict[str, str]:
    """Ingest every session; returns dia_id -> turn text as stored."""
    texts = {}
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
        mem.ingest("conversation", {"title": f"{conv.sample_id} session {n}", "messages": messages})
        texts.update({t.key: t.text for t in turns})
    return texts


def fixed_ids_ingest(mem: Memory, conv: Conversation) -> dict[str, str]:
    """``ingest`` with ids drawn from the namespace's name (``util.fix_ids``): the package cites
    sources by their ids' random part, whose token count varies, so generated ids moved recall by
    about +-0.003 from one build to the next; fixed ones give every build of a tree the same store."""
    fix_ids(mem.namespace)
    try:
        return ingest(mem, conv)
    finally:
        fix_ids(None)


def bare_text(texts: list[str], budget: int, *, skip_long: bool) -> str:
    """Texts in order, one a line, no markup, while their tokens fit ``budget``: cut at the first
    that does not fit (a top-k cut), or with ``skip_long`` skip it and try the next."""
    parts, used = [], 0
    for text in texts:
        piece = text + "\n"
        cost = count_tokens(piece)
        if used + cost > budget:
            if skip_long:
                continue
            break
        parts.append(piece)
        used += cost
    return "".join(parts)


def baseline_texts(mem: Memory, question: str) -> list[str]:
    found = mem.query(
        "search", {"query": question}, {"max_items": 200, "result_unit": "segment", "detail": "full"}
    )
    return [item["excerpt"] for item in found["items"]]


def ceiling_texts(mem: Memory, question: str) -> list[str]:
    """An upper bound for the compiler's ranking: its own episode-recall order (pool of 200
    turns), to be filled as bare turn texts with no markup at all (no ids, no episodes)."""
    from memory_substrate.compiler import episodes

    with mem.runtime.read() as session:
        ranked = episodes.recall(
            mem.runtime, session, question, episodes.EPISODE_POOL[1] * episodes.TURN_TOKENS_GUESS
        )
    return [seg.text for seg, _, _ in ranked]


def packaged_search(mem: Memory, question: str, budget: int, fmt: str) -> str:
    """Search's segment ranking (its own settings, as ``query search`` runs it) as the compiler
    would package it: the same pool size, four-dimension scores, packing and markup."""
    from datetime import UTC, datetime

    import numpy as np

    from memory_substrate.compiler import episodes
    from memory_substrate.compiler.budget import fit
    from memory_substrate.compiler.candidates import Candidate
    from memory_substrate.compiler.rank import rank
    from memory_substrate.ids import short_forms
    from memory_substrate.indexing import segment_vector_id
    from memory_substrate.search.engine import SearchEngine
    from memory_substrate.search.segments import ranked_segments

    rt = mem.runtime
    pool = max(episodes.EPISODE_POOL[0], min(episodes.EPISODE_POOL[1], budget // episodes.TURN_TOKENS_GUESS))
    with rt.read() as session:
        ranked = ranked_segments(rt, session, SearchEngine(rt).plan(question).clean.text, {}, pool)
        sims = episodes.similarities(np.array([r.rank_score for _, r in ranked]))
        cands = [
            Candidate(
                segment_vector_id(seg.source_id, seg.id),
                "episodic",
                "episode_recall",
                sim,
                "chat",
                segment=seg,
            )
            for (seg, _), sim in zip(ranked, sims, strict=True)
        ]
        eligible, _ = rank(cands, ["chat"], include_unverified=False, now=datetime.now(UTC))
        sources = session.get_objects(
            sorted({c.segment.source_id for c in eligible if c.segment is not None})
        )
        names = short_forms(session, list(sources))  # the compiler's short ids (ids.py)
    return fit(eligible, budget, fmt, {"task_class": "chat"}, sources, names).content


def open_store(
    convs: list[Conversation], settings: Settings, store: Path | None
) -> list[tuple[Memory, dict[str, str]]]:
    """One namespace per conversation, with dia_id -> turn text: ingested now, or, with ``store``,
    read back from a store built by an earlier run (``store/bench.json`` names its namespaces)."""
    index = store / "bench.json" if store is not None else None
    built = json.loads(index.read_text(encoding="utf-8")) if index is not None and index.exists() else {}
    out = []
    for conv in convs:
        if conv.sample_id in built:
            entry = built[conv.sample_id]
            out.append((Memory(settings, namespace=entry["namespace"]), entry["texts"]))
            continue
        mem = Memory(settings, namespace=f"locomo-{conv.sample_id}")
        texts = fixed_ids_ingest(mem, conv)
        built[conv.sample_id] = {"namespace": mem.namespace, "texts": texts}
        out.append((mem, texts))
    if index is not None:
        index.write_text(json.dumps(built), encoding="utf-8")
    return out


def recall_run(
    convs: list[Conversation],
    budgets: list[int],
    formats: list[str],
    database_url: str | None,
    ceiling: bool = False,
    store: Path | None = None,
    packaged: bool = False,
) -> dict[str, Any]:
    root = str(store) if store is not None else tempfile.mkdtemp(prefix="ctxbench-")
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
    settings = Settings(root=root, embedder="static", database_url=database_url)
    systems = (
        [f"compile-{f}" for f in formats]
        + ["segment-search"]
        + (["ranking-bare-text"] if ceiling else [])
        + (["search-packaged"] if packaged else [])
    )
    scores: dict[tuple[str, int], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    latency: dict[str, list[float]] = defaultdict(list)
    tokens: dict[tuple[str, int], list[int]] = defaultdict(list)
    classes: dict[str, int] = defaultdict(int)
    for conv, (mem, texts) in zip(convs, open_store(convs, settings, store), strict=True):
        for q in conv.questions:
            # Bare-text systems: (name, ranked texts, ms to rank them, skip texts that do not fit).
            bare = []
            for name, rank, skip in (
                ("segment-search", baseline_texts, False),
                ("ranking-bare-text", ceiling_texts, True),
            ):
                if name in systems:
                    t0 = time.perf_counter()
                    ranked_texts = rank(mem, q.text)
                    bare.append((name, ranked_texts, (time.perf_counter() - t0) * 1000, skip))
            for budget in budgets:
                for fmt in formats:
                    t0 = time.perf_counter()
                    out = mem.query("context", {"task": q.text}, {"budget_tokens": budget, "format": fmt})
                    latency[f"compile-{fmt}"].append((time.perf_counter() - t0) * 1000)
                    assert out["token_count"] <= budget, (out["token_count"], budget)
                    content = _norm(out["content"])
                    hit = sum(_encoded(texts[e], fmt) in content for e in q.evidence)
                    scores[(f"compile-{fmt}", budget)][q.category].append(hit / len(q.evidence))
                    tokens[(f"compile-{fmt}", budget)].append(out["token_count"])
                    if budget == budgets[0] and fmt == formats[0]:
                        classes[out["classification"]["primary"]["class"]] += 1
                if packaged:
                    t0 = time.perf_counter()
                    content = _norm(packaged_search(mem, q.text, budget, "xml"))
                    latency["search-packaged"].append((time.perf_counter() - t0) * 1000)
                    hit = sum(_encoded(texts[e], "xml") in content for e in q.evidence)
                    scores[("search-packaged", budget)][q.category].append(hit / len(q.evidence))
                    tokens[("search-packaged", budget)].append(count_tokens(content))
                for name, ranked_texts, rank_ms, skip in bare:
                    t0 = time.perf_counter()
                    content = _norm(bare_text(ranked_texts, budget, skip_long=skip))
                    latency[name].append(rank_ms + (time.perf_counter() - t0) * 1000)
                    hit = sum(_encoded(texts[e], "text") in content for e in q.evidence)
                    scores[(name, budget)][q.category].append(hit / len(q.evidence))
                    tokens[(name, budget)].append(count_tokens(content))
        mem.close()
    result: dict[str, Any] = {
        "questions": sum(len(c.questions) for c in convs),
        "systems": {},
        "classes": dict(classes),
    }
    for system in systems:
        entry: dict[str, Any] = {}
        for budget in budgets:
            per_cat = scores[(system, budget)]
            allr = [r for rs in per_cat.values() for r in rs]
            entry[str(budget)] = {
                "recall": statistics.fmean(allr),
                "by_category": {
                    CATEGORIES[c]: round(statistics.fmean(v), 4) for c, v in sorted(per_cat.items())
                },
                "median_tokens": statistics.median(tokens[(system, budget)]),
            }
        lat = latency[system]
        entry["latency_ms"] = {"p50": statistics.median(lat), "p95": _pct(lat, 95)}
        result["systems"][system] = entry
    return result


def scale_run(size: int, database_url: str | None, settle: bool = True) -> dict[str, Any]:
    from scale_bench import TOPICS, _finish_vectors, _turn, _vocab

    rng = random.Random(size)
    vocab = _vocab(20_000, rng)
    cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
    with tempfile.TemporaryDirectory() as root:
        # The default embedder (the "default path" of the latency target), as a user's store has it.
        mem = Memory(
            Settings(root=root, database_url=database_url),
            namespace=f"ctxscale-{size}-{uuid.uuid4().hex[:6]}",
        )
        for start in range(0, size, 100):
            msgs = [
                {"role": "user", "content": _turn(rng, vocab, cum), "name": rng.choice(["ana", "ben", "cy"])}
                for _ in range(min(100, size - start))
            ]
            mem.ingest("conversation", {"title": f"conv {start}", "messages": msgs})
        batch = [
            {
                "mode": "knowledge",
                "input_data": {
                    "kind": "fact",
                    "title": f"{rng.choice(TOPICS)} note {i}",
                    "summary": _turn(rng, vocab, cum),
                    "reason": "bench",
                    "memory_source": "user_declared",
                    "scope_refs": ["scope:bench"],
                },
            }
            for i in range(200)
        ]
        mem.remember("batch", {"entries": batch})
        # The corpus's made-up words are no language a detector places as English: their vectors
        # are made by the background worker after capture (issue 41). Made now, so the compiles
        # are not timed beside that work.
        _finish_vectors(mem)
        queries = [
            f"why does the {rng.choice(TOPICS)} fail with {rng.choice(vocab[:2000])}?" for _ in range(60)
        ]
        mem.query("context", {"task": queries[0]})  # warm caches once, as a running server would have
        mem.query("search", {"query": queries[0]}, {"result_unit": "segment"})
        if settle:  # what `memory-substrate serve` does once built (memory_substrate.heap)
            from memory_substrate.heap import freeze_long_lived

            freeze_long_lived()
        comp, seg = [], []
        for q in queries:
            t0 = time.perf_counter()
            out = mem.query("context", {"task": q})
            comp.append((time.perf_counter() - t0) * 1000)
            assert out["token_count"] <= 4096
            t0 = time.perf_counter()
            mem.query("search", {"query": q}, {"max_items": 10, "result_unit": "segment"})
            seg.append((time.perf_counter() - t0) * 1000)
        mem.close()
    if settle:  # this size's store is garbage now: let the next size's run collect it
        gc.unfreeze()
        gc.collect()
    return {
        "size": size,
        "compile_p50_ms": statistics.median(comp),
        "compile_p95_ms": _pct(comp, 95),
        "segment_search_p50_ms": statistics.median(seg),
        "segment_search_p95_ms": _pct(seg, 95),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--budgets", type=int, nargs="+", default=[1500, 4096])
    ap.add_argument("--format", nargs="+", default=["json", "xml"], choices=["json", "xml"])
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument(
        "--scale", type=int, nargs="*", default=None, help="also measure latency at these segment counts"
    )
    ap.add_argument("--no-recall", action="store_true")
    ap.add_argument(
        "--no-settle",
        action="store_true",
        help="latency: leave the heap as it is (the server freezes it once built: memory_substrate.heap)",
    )
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="also report the compiler's ranking filled with bare turn texts (no markup): an upper bound",
    )
    ap.add_argument(
        "--packaged-search",
        action="store_true",
        help="also report search's ranking packaged by the compiler (same markup): search-packaged",
    )
    ap.add_argument(
        "--store",
        type=Path,
        default=None,
        help="build the conversations' store here once and reuse it on later runs",
    )
    ap.add_argument("--database-url", default=None, help="PostgreSQL URL (default: SQLite)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    summary: dict[str, Any] = {}
    if not args.no_recall:
        convs = load_locomo(args.data)[: args.conversations]
        res = recall_run(
            convs,
            args.budgets,
            args.format,
            args.database_url,
            args.ceiling,
            args.store,
            args.packaged_search,
        )
        summary["recall"] = res
        print(
            f"LoCoMo dev, {res['questions']} questions; evidence recall at budget (share of gold turns inside the package)"
        )
        head = f"{'system':16s}" + "".join(f"  @{b:<6d}" for b in args.budgets) + "  p50 ms  p95 ms"
        print(head + "\n" + "-" * len(head))
        for name, entry in res["systems"].items():
            cells = "".join(f"  {entry[str(b)]['recall']:.3f} " for b in args.budgets)
            print(f"{name:16s}{cells}  {entry['latency_ms']['p50']:6.1f}  {entry['latency_ms']['p95']:6.1f}")
        for b in args.budgets:
            base = res["systems"]["segment-search"][str(b)]["recall"]
            for f in args.format:
                print(
                    f"  @{b}: compile-{f} / segment-search = {res['systems'][f'compile-{f}'][str(b)]['recall'] / base:.3f}"
                )
        print(
            "by category:",
            json.dumps(
                {n: {b: e[str(b)]["by_category"] for b in args.budgets} for n, e in res["systems"].items()}
            ),
        )
        print("task classes:", res["classes"])
    if args.scale:
        summary["scale"] = []
        for size in args.scale:
            r = scale_run(size, args.database_url, settle=not args.no_settle)
            summary["scale"].append(r)
            print(
                f"{size:>8d} segments  compile p50 {r['compile_p50_ms']:6.1f} p95 {r['compile_p95_ms']:6.1f} ms   "
                f"segment search p50 {r['segment_search_p50_ms']:6.1f} p95 {r['segment_search_p95_ms']:6.1f} ms",
                flush=True,
            )
    save(args.out, "context", summary)
    return 0


def save(out: Path, prefix: str, data: dict[str, Any]) -> None:
    """Write ``data`` as ``out/prefix_<time>.json`` and say where."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{prefix}_{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"saved {path}")


if __name__ == "__main__":
    sys.exit(main())

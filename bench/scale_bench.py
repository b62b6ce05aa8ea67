"""Scale benchmark: ingest throughput, search latency and peak memory on synthetic corpora.

    .venv/bin/python bench/scale_bench.py --sizes 10000 100000 [--backend sqlite postgres] [--embedder static|none]
        [--text synthetic|en|de|tokens|real-en|real-de ...] [--compile] [--profile N]

Each size runs in a fresh store (a subprocess, so peak memory is per size). A corpus is made of
conversations of 100 turns whose words follow a Zipf law over a synthetic vocabulary, with real
topic words mixed in so queries have answers. Reported per size:
- ingest: conversation turns per second through ``Memory.ingest("conversation")`` (the embedding
  capture does included; a worker makes costly vectors after capture, issue 41: those are then
  made at once by ``memory_maintain embed``, timed apart as "vectors after capture", and the rate
  with them shown beside);
  then the index builds the store deferred during the load (``build_deferred_indexes``: the
  PostgreSQL HNSW index), timed apart, and the load rate with them (ingest + build); searches
  are measured after the build;
- search: p50/p95 of ``Memory.query("search")`` with ``result_unit`` segment and object, once
  warmed and with the heap frozen as ``memory-substrate serve`` freezes it (``--no-settle``:
  without; memory_substrate.heap);
- baseline: p50/p95 of the store's own full-text query for the same terms, measured in the same
  run (the floor any search on this backend pays);
- peak RSS of the process;
- with ``--compile``: p50/p95 of a 1,500-token ``Memory.query("context")`` compile;
- for a salad corpus (below), from a 10-item segment search (untimed): how often the query's own
  turn (the stored turn its three words were drawn from) is among them, and the share of the
  turns returned that hold every query word.

``--text`` picks the turns (several: one store each, side by side): ``synthetic`` (above), or
12-word salads of the held-out statements' words in English (``en``) or German (``de``), or of
tokens no language detector places (``tokens``: ``w123``-style identifiers, as in log lines and
ticket numbers). A salad corpus is drawn from a fixed seed, and its queries are three words of a
stored turn (issue 41: capture and search as fast in every language as in English).
``real-en`` and ``real-de`` are real text and real questions (issue 53; ``bench/real_corpus.py``):
turns of 1–3 sentences of the LoCoMo development conversations and the agent-bench conversations,
recombined so no turn repeats, said by their real speakers, and asked 200 real questions (150
LoCoMo development questions, 50 agent-bench tasks; their figures are also given apart); German
has no real conversation text here, so ``real-de`` recombines the multilingual sets' German
statements and asks their German questions. Give a salad and a real corpus in one run
(``--text en real-en``) and the end of the run prints them side by side in one table, with the
load average before and after each corpus's timings and the time of day.

``--profile N`` runs cProfile over N segment searches of each corpus's questions after its timings
(untimed) and writes the top functions by cumulative time to ``bench/results/``.

``--store-dir DIR`` keeps each store (``DIR/current-SIZE``, ``DIR/base-REF-SIZE``) and searches a
kept one again without ingesting: build once (untimed), then time the searches in a quiet moment.
A kept store must have been built by the code that searches it (same schema).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOPICS = [
    "database migration",
    "vector index",
    "graph traversal",
    "release schedule",
    "payment service",
    "login failure",
    "cache eviction",
    "search latency",
    "embedding model",
    "backup restore",
    "rate limiter",
    "schema change",
    "deployment pipeline",
    "memory leak",
    "feature flag",
]


def _vocab(n: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def _turn(rng: random.Random, vocab: list[str], cum_weights: list[float]) -> str:
    words = rng.choices(vocab, cum_weights=cum_weights, k=rng.randint(8, 24))
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), rng.choice(TOPICS))
    return " ".join(words)


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def _salad_words(text: str, rng: random.Random) -> list[str]:
    """The word list of a salad corpus: the held-out statements' words in a language, or 20,000
    ``w``-tokens no detector places."""
    if text == "tokens":
        return [f"w{n}" for n in rng.sample(range(100_000), 20_000)]
    data = json.loads((Path(__file__).resolve().parent / "data" / "multilingual_heldout.json").read_text())
    words = " ".join(it["statement"][text] for it in data["items"]).replace(",", "").replace(".", "").split()
    return sorted(set(words))


def _salads(text: str, size: int, targets: list[int] | None = None) -> tuple[list[str], list[str]]:
    """``size`` 12-word salads in ``text``'s words, and 60 queries of three words of a stored turn
    (``targets``, when given, receives each query's turn number)."""
    rng = random.Random(size)
    words = _salad_words(text, rng)
    cum_weights = list(itertools.accumulate(1.0 / (i + 1) ** 0.5 for i in range(len(words))))
    texts = [" ".join(rng.choices(words, cum_weights=cum_weights, k=12)) for _ in range(size)]
    queries = []
    for _ in range(60):
        n = rng.randrange(len(texts))  # what rng.choice(texts) draws, kept
        if targets is not None:
            targets.append(n)
        queries.append(" ".join(rng.sample(texts[n].split(), 3)))
    return texts, queries


def _found_at(answer: dict[str, Any], title: str, line: str) -> int | None:
    """The rank of the turn ``line`` of conversation ``title`` in a compact segment answer."""
    for src in answer.get("sources", []):
        if src.get("title") == title:
            for rank, text in zip(src.get("ranks", []), src.get("lines", []), strict=False):
                if text.split(": ", 1)[-1] == line:
                    return int(rank)
    return None


def _real_corpus():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import real_corpus

    return real_corpus


def build_real(mem, size: int, text: str) -> tuple[list[str], float]:
    """Fill ``mem`` with ``size`` turns of real sentences recombined (``bench/real_corpus.py``,
    conversations of 100, each turn named by its speaker); the real questions and the seconds
    ingestion took (the corpus is made before the clock starts)."""
    rc = _real_corpus()
    lang = text.removeprefix("real-")
    convs = list(rc.conversations(lang, size))
    queries = [q for _, q in rc.sample_questions(lang)]
    t0 = time.perf_counter()
    start = 0
    for conv in convs:
        msgs = [{"role": "user", "content": t, "name": speaker} for speaker, t in conv]
        mem.ingest("conversation", {"title": f"conv {start}", "messages": msgs})
        start += len(conv)
    return queries, time.perf_counter() - t0


def build_synthetic(mem, size: int, text: str = "synthetic") -> tuple[list[str], float]:
    """Fill ``mem`` with ``size`` turns (conversations of 100); the 60 benchmark queries and the
    seconds ingestion took."""
    if text.startswith("real-"):
        return build_real(mem, size, text)
    rng = random.Random(size)
    per_conv = 100
    if text == "synthetic":
        vocab = _vocab(20_000, rng)
        cum_weights = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
        texts = [_turn(rng, vocab, cum_weights) for _ in range(size)]
        queries = [rng.choice(TOPICS) + " " + rng.choice(vocab[:2000]) for _ in range(60)]
    else:
        texts, queries = _salads(text, size)
    t0 = time.perf_counter()
    for start in range(0, size, per_conv):
        msgs = [{"role": "user", "content": t, "name": "u"} for t in texts[start : start + per_conv]]
        mem.ingest("conversation", {"title": f"conv {start}", "messages": msgs})
    ingest_s = time.perf_counter() - t0
    return queries, ingest_s


KEPT = "scale_bench.json"  # in a kept store's folder: its namespace, queries and ingest time


def run_one(
    size: int,
    backend: str,
    embedder: str,
    database_url: str | None,
    keep: str | None = None,
    text: str = "synthetic",
    compile_too: bool = False,
    settle: bool = True,
    profile: int = 0,
) -> dict[str, Any]:
    from memory_substrate import Memory, Settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        kept = root / KEPT
        settings = Settings(root=root, embedder=embedder, database_url=database_url)
        build_s: float | None = None
        if kept.exists():  # a store this bench built and kept: search it again, no ingest
            meta = json.loads(kept.read_text())
            mem = Memory(settings, namespace=meta["namespace"])
            queries, ingest_s, embed_s = meta["queries"], meta["ingest_s"], meta.get("embed_s", 0.0)
        else:
            namespace = f"scale-{size}-{os.getpid()}"
            mem = Memory(settings, namespace=namespace)
            queries, ingest_s = build_synthetic(mem, size, text)
            embed_s = _finish_vectors(mem)
            # Index builds a backend deferred during the bulk load (PostgreSQL HNSW), timed apart;
            # a revision without deferred builds has nothing to do here.
            t0 = time.perf_counter()
            getattr(mem.store, "build_deferred_indexes", dict)()
            build_s = time.perf_counter() - t0
            if keep:
                kept.write_text(
                    json.dumps(
                        {"namespace": namespace, "queries": queries, "ingest_s": ingest_s, "embed_s": embed_s}
                    )
                )
        # Warm caches (vector matrix load; its int8 copy is built on the second search after a
        # load), as a long-running server would have.
        for _ in range(2):
            mem.query("search", {"query": queries[0]}, {"result_unit": "segment"})
        if settle:
            _settle()
        load_before = os.getloadavg()[0]
        started = time.strftime("%H:%M:%S")
        seg_t, obj_t, base_t, comp_t = _time_queries(mem, queries, compile_too)
        load_after = os.getloadavg()[0]
        found = _salad_recall(mem, size, text, queries)
        by_source = _by_source(text, queries, seg_t, obj_t, comp_t)
        profile_path = _profile(mem, queries, profile, text, size, backend) if profile else None
        mem.close()
    return {
        "size": size,
        "backend": backend,
        "embedder": embedder,
        "reused_store": build_s is None,
        "ingest_turns_per_s": size / ingest_s,
        "embed_after_s": embed_s,
        "complete_turns_per_s": size / (ingest_s + embed_s),
        "index_build_s": build_s or 0.0,
        "load_turns_per_s": size / (ingest_s + (build_s or 0.0)),
        "segment_search_p50_ms": statistics.median(seg_t),
        "segment_search_p95_ms": _pct(seg_t, 95),
        "object_search_p50_ms": statistics.median(obj_t),
        "object_search_p95_ms": _pct(obj_t, 95),
        "baseline_fts_p50_ms": statistics.median(base_t),
        "baseline_fts_p95_ms": _pct(base_t, 95),
        "text": text,
        "compile_p50_ms": statistics.median(comp_t) if comp_t else None,
        "compile_p95_ms": _pct(comp_t, 95) if comp_t else None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "own_turn_at_10": found[0] if found else None,
        "queries": len(queries),
        "query_words_mean": statistics.mean(len(q.split()) for q in queries),
        "by_source": by_source,
        "timed_at": started,
        "load_before": load_before,
        "load_after": load_after,
        "profile": profile_path,
        "all_words_at_10": found[1] if found else None,
        "code_path": str(Path(sys.modules["memory_substrate"].__file__ or "").parent),
    }


def _by_source(text: str, queries: list[str], *timings: list[float]) -> dict[str, dict[str, float]] | None:
    """For a real corpus: segment / object search (and compile) p50 / p95 per source of question
    (LoCoMo development questions, agent-bench tasks)."""
    if not text.startswith("real-"):
        return None
    qs = _real_corpus().sample_questions(text.removeprefix("real-"))
    if [q for _, q in qs] != queries:
        return None
    out: dict[str, dict[str, float]] = {}
    for source in sorted({s for s, _ in qs}):
        picked = [i for i, (s, _) in enumerate(qs) if s == source]
        row: dict[str, float] = {"queries": len(picked)}
        for name, ts in zip(["segment", "object", "compile"], timings, strict=False):
            if ts:
                row[f"{name}_p50_ms"] = statistics.median(ts[i] for i in picked)
                row[f"{name}_p95_ms"] = _pct([ts[i] for i in picked], 95)
        out[source] = row
    return out


def _profile(mem, queries: list[str], n: int, text: str, size: int, backend: str) -> str:
    """cProfile over ``n`` segment searches (untimed, after the timings); the top functions by
    cumulative time, written to bench/results; the file's path."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    picked = (queries * (n // max(1, len(queries)) + 1))[:n]
    t0 = time.perf_counter()
    prof.enable()
    for q in picked:
        mem.query("search", {"query": q}, {"max_items": 10, "result_unit": "segment"})
    prof.disable()
    wall = (time.perf_counter() - t0) * 1000 / max(1, n)
    buf = io.StringIO()
    buf.write(
        f"{n} segment searches, {text} at {size} on {backend}, {wall:.1f} ms each under the profiler, "
        f"load {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n\n"
    )
    stats = pstats.Stats(prof, stream=buf)
    buf.write(
        "where a search's time goes (cumulative ms per search; the ranker's parts are inside it, "
        "neighbours partly inside the ranker's gather):\n"
    )
    for label, ms_each in _profile_buckets(stats, n):
        buf.write(f"  {label:44s} {ms_each:6.1f}\n")
    buf.write("\n")
    stats.sort_stats("cumulative").print_stats(60)
    stats.sort_stats("tottime").print_stats(30)
    out_dir = Path(__file__).resolve().parent / "results"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / f"scale_profile_{backend}_{text}_{size}.txt"
    path.write_text(buf.getvalue())
    stats.dump_stats(str(path.with_suffix(".pstats")))
    return str(path)


PROFILE_BUCKETS = [  # (label, function names: the largest cumulative time among them)
    ("segment search, all", ["ranked_segments"]),
    ("full-text SQL (search_segments_text)", ["search_segments_text"]),
    ("ranker (rank_segments)", ["rank_segments"]),
    ("  ranker: gather (_gather)", ["_gather"]),
    ("  ranker: windows (_windows)", ["_windows"]),
    ("  ranker: lexical scores (_lexical)", ["_lexical"]),
    ("  ranker: semantic scores (_semantic)", ["_semantic"]),
    ("neighbours (_Fetcher.neighbours, all callers)", ["neighbours"]),
    ("  of which the SQL (segment_windows)", ["segment_windows"]),
    ("query embedding (embed_query)", ["embed_query"]),
    ("nearest vectors", ["nearest_segments", "nearest", "_nearest"]),
    ("waiting on the stream beside (Pending.result)", ["result"]),
]


def _profile_buckets(stats: Any, n: int) -> list[tuple[str, float]]:
    """Milliseconds per search in each of PROFILE_BUCKETS, from a pstats.Stats of ``n`` searches
    (functions of memory_substrate only)."""
    out = []
    for label, names in PROFILE_BUCKETS:
        cum = [
            ct
            for (file, _, fn), (_, _, _, ct, _) in stats.stats.items()
            if fn in names and "memory_substrate" in file
        ]
        if cum:
            out.append((label, max(cum) * 1000 / max(1, n)))
    return out


def _settle() -> None:
    """The heap as a server's is once its model has loaded: ``memory-substrate serve`` freezes what
    it lives with, and again once an embedder has loaded its model (``memory_substrate.heap``). A
    tree from before the heap module measures unsettled, as that tree served."""
    try:
        from memory_substrate.heap import freeze_long_lived
    except ImportError:
        return
    freeze_long_lived()


def _salad_recall(mem, size: int, text: str, queries: list[str]) -> tuple[float, float] | None:
    """For a salad corpus, from a 10-item segment search of each query (untimed, after the
    timings): the share of queries whose own turn (the one their words were drawn from) is among
    the 10, and the share of the turns returned that hold every word of their query. On a store
    where hundreds of turns hold a query's three words the first is chance; the second says
    whether the search still finds the best matches."""
    if text == "synthetic" or text.startswith("real-"):
        return None
    targets: list[int] = []
    texts, again = _salads(text, size, targets)
    if again != queries:
        return None
    own = held = shown = 0
    for q, n in zip(queries, targets, strict=True):
        answer = mem.query("search", {"query": q}, {"max_items": 10, "result_unit": "segment"})
        own += _found_at(answer, f"conv {n // 100 * 100}", texts[n]) is not None
        words = set(q.lower().split())
        for src in answer.get("sources", []):
            for line in src.get("lines", []):
                shown += 1
                held += words <= set(line.split(": ", 1)[-1].lower().split())
    return own / len(queries), held / max(1, shown)


def _finish_vectors(mem) -> float:
    """Seconds to make the vectors capture left for later (issue 41: other languages' vectors are
    made by a background worker; ``memory_maintain embed`` makes the rest now, so searches are
    timed with every vector there). 0 for a tree that made them all in capture."""
    t0 = time.perf_counter()
    try:
        mem.maintain("embed", {}, {"apply": True})
    except Exception as exc:
        if "embed" not in str(exc):
            raise
        return 0.0
    return time.perf_counter() - t0


def _time_queries(mem, queries: list[str], compile_too: bool) -> tuple[list[float], ...]:
    """Milliseconds of each query: segment search, object search, the store's full-text query
    (the floor), and with ``compile_too`` a 1,500-token context compile."""
    from memory_substrate.text import query_terms

    seg_t, obj_t, base_t, comp_t = [], [], [], []
    for q in queries:
        t = time.perf_counter()
        mem.query("search", {"query": q}, {"max_items": 10, "result_unit": "segment"})
        seg_t.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        mem.query("search", {"query": q}, {"max_items": 10})
        obj_t.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        with mem.store.read(mem.namespace) as session:
            session.search_segments_text(query_terms(q), limit=10)
        base_t.append((time.perf_counter() - t) * 1000)
        if compile_too:
            t = time.perf_counter()
            mem.query("context", {"task": q}, {"budget_tokens": 1500})
            comp_t.append((time.perf_counter() - t) * 1000)
    return seg_t, obj_t, base_t, comp_t


def _database(url: str, name: str, *, drop: bool = False) -> str:
    """Create (or drop) database ``name`` on the server of ``url``; its URL."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}" if drop else f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def side_by_side(rows: list[dict[str, Any]]) -> str:
    """One markdown table of a run: a column per store (code, backend, corpus, size), a row per
    figure, with the time of day and the load average around each store's timings."""

    def ms(r: dict[str, Any], key: str) -> str:
        a, b = r.get(f"{key}_p50_ms"), r.get(f"{key}_p95_ms")
        return "—" if a is None else f"{a:.1f} / {b:.1f}"

    def source_ms(r: dict[str, Any], source: str, key: str) -> str:
        b = (r.get("by_source") or {}).get(source)
        return (
            "—"
            if not b or f"{key}_p50_ms" not in b
            else f"{b[f'{key}_p50_ms']:.1f} / {b[f'{key}_p95_ms']:.1f}"
        )

    sources = sorted({s for r in rows for s in (r.get("by_source") or {})})
    cols = [f"{r['code']} {r['backend']} {r.get('text', 'synthetic')} {r['size'] // 1000}k" for r in rows]
    lines = ["| p50 / p95 ms | " + " | ".join(cols) + " |", "| --- |" + " --- |" * len(rows)]
    figures: list[tuple[str, Any]] = [
        (
            "timed at (load before → after)",
            lambda r: (
                f"{r.get('timed_at', '?')} ({r.get('load_before', 0):.2f} → {r.get('load_after', 0):.2f})"
            ),
        ),
        ("queries (mean words)", lambda r: f"{r.get('queries', '?')} ({r.get('query_words_mean', 0):.1f})"),
        ("segment search", lambda r: ms(r, "segment_search")),
        ("object search", lambda r: ms(r, "object_search")),
        ("context compile, 1,500 tokens", lambda r: ms(r, "compile")),
        ("store's full-text query (floor)", lambda r: ms(r, "baseline_fts")),
    ]
    for source in sources:
        for key in ("segment", "object", "compile"):
            figures.append((f"{key}, {source} questions only", lambda r, s=source, k=key: source_ms(r, s, k)))
    figures += [
        (
            "ingest turns/s (+ vectors after capture)",
            lambda r: (
                f"{r['ingest_turns_per_s']:.0f} "
                f"({r.get('complete_turns_per_s', 0):.0f})" + (" kept" if r.get("reused_store") else "")
            ),
        ),
        ("peak RSS MB", lambda r: f"{r['peak_rss_mb']:.0f}"),
    ]
    for name, fn in figures:
        lines.append(f"| {name} | " + " | ".join(fn(r) for r in rows) + " |")
    return f"\n{time.strftime('%Y-%m-%d %H:%M')} (load {os.getloadavg()[0]:.2f} at the end)\n" + "\n".join(
        lines
    )


def source_trees(baseline_ref: str | None, into: str) -> list[tuple[str, str | None]]:
    """(label, source path to put first on the path) for each tree timed: the baseline's source,
    extracted (not checked out) under ``into``, first when ``baseline_ref`` is given, then the
    current tree (None: as installed)."""
    trees: list[tuple[str, str | None]] = [("current", None)]
    if baseline_ref:
        archive = subprocess.run(
            ["git", "-C", str(Path(__file__).resolve().parents[1]), "archive", baseline_ref, "src"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
        trees.insert(0, (f"base {baseline_ref[:7]}", str(Path(into) / "src")))
    return trees


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument(
        "--backend",
        choices=["sqlite", "postgres"],
        nargs="+",
        default=["sqlite"],
        help="one or both; several are measured in one run, side by side",
    )
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--database-url", default=None, help="PostgreSQL URL (default: start an embedded server)")
    ap.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the embedded PostgreSQL server (repeatable), e.g. shared_buffers=1GB",
    )
    ap.add_argument(
        "--baseline-ref",
        default=None,
        help="git revision whose code is measured too, size by size, in the same run",
    )
    ap.add_argument(
        "--store-dir",
        type=Path,
        default=None,
        help="keep each store under this folder (one per size and code) and, when it is "
        "already there, search it again without ingesting (a 1M store takes minutes "
        "to build; the ingest rate shown is then the one measured when it was built)",
    )
    ap.add_argument(
        "--text",
        nargs="+",
        default=["synthetic"],
        choices=["synthetic", "en", "de", "tokens", "real-en", "real-de"],
        help="the turns: synthetic words, salads of English, German or unplaced tokens, or real "
        "sentences recombined, asked real questions (bench/real_corpus.py)",
    )
    ap.add_argument("--compile", action="store_true", help="also time a 1,500-token context compile")
    ap.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="cProfile N segment searches of each corpus after its timings (bench/results/)",
    )
    ap.add_argument(
        "--no-settle",
        action="store_true",
        help="time searches without freezing the warmed heap as the server does (memory_substrate.heap)",
    )
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--keep", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(
            json.dumps(
                run_one(
                    args.one,
                    args.backend[0],
                    args.embedder,
                    args.database_url,
                    args.keep,
                    args.text[0],
                    args.compile,
                    not args.no_settle,
                    args.profile,
                )
            )
        )
        return
    url = args.database_url
    stop = None
    if "postgres" in args.backend and url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.pg_server import running_postgres

        ctx = running_postgres(dict(kv.split("=", 1) for kv in args.pg_setting))
        url = ctx.__enter__()
        stop = ctx
    tmp = tempfile.TemporaryDirectory()
    trees = source_trees(args.baseline_ref, tmp.name)
    try:
        rows = []
        for size, backend, text, (label, src) in [
            (size, b, x, t) for size in args.sizes for b in args.backend for x in args.text for t in trees
        ]:
            cmd = [
                sys.executable,
                __file__,
                "--one",
                str(size),
                "--backend",
                backend,
                "--embedder",
                args.embedder,
                "--text",
                text,
                *(["--compile"] if args.compile else []),
                *(["--no-settle"] if args.no_settle else []),
                *(["--profile", str(args.profile)] if args.profile else []),
            ]
            fresh = None
            if url and backend == "postgres":
                # On the embedded server each run gets a database of its own, as each SQLite run gets
                # a fresh file: a later run must not share tables, indexes, statistics or caches
                # with an earlier one (the HNSW index covers every namespace of a database).
                fresh = f"scale_{len(rows)}" if stop is not None else None
                cmd += ["--database-url", _database(url, fresh) if fresh else url]
            if args.store_dir and backend == "sqlite":
                tag = f"{size}" if text == "synthetic" else f"{text}-{size}"
                folder = args.store_dir / (f"base-{args.baseline_ref}-{tag}" if src else f"current-{tag}")
                folder.mkdir(parents=True, exist_ok=True)
                cmd += ["--keep", str(folder)]
            env = {**os.environ, "PYTHONPATH": src} if src else None
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if fresh:
                _database(url, fresh, drop=True)
            if out.returncode != 0:
                sys.exit(f"{backend} at {size} failed:\n{out.stderr[-4000:]}")
            rows.append({**json.loads(out.stdout.strip().splitlines()[-1]), "code": label})
            r = rows[-1]
            comp = (
                f"  compile p50 {r['compile_p50_ms']:6.1f} p95 {r['compile_p95_ms']:6.1f} ms"
                if r.get("compile_p50_ms")
                else ""
            )
            print(
                f"{label:13s} {r['backend']:8s} {r.get('text', 'synthetic'):9s} {r['size']:>8d} segs  "
                f"{'(kept store) ' if r.get('reused_store') else ''}ingest {r['ingest_turns_per_s']:7.0f} turns/s  "
                f"(vectors after capture {r.get('embed_after_s', 0.0):5.1f} s: "
                f"{r.get('complete_turns_per_s', r['ingest_turns_per_s']):6.0f}/s)  "
                f"(+index build {r.get('index_build_s', 0):5.1f} s: {r.get('load_turns_per_s', r['ingest_turns_per_s']):6.0f}/s)  "
                f"segment search p50 {r['segment_search_p50_ms']:6.1f} p95 {r['segment_search_p95_ms']:6.1f} ms  "
                f"object search p50 {r['object_search_p50_ms']:6.1f} p95 {r['object_search_p95_ms']:6.1f} ms  "
                f"baseline FTS p50 {r['baseline_fts_p50_ms']:5.1f} p95 {r['baseline_fts_p95_ms']:5.1f} ms  "
                f"peak {r['peak_rss_mb']:6.0f} MB{comp}"
                + (
                    f"  own turn @10 {r['own_turn_at_10']:.2f}, turns holding all query words {r['all_words_at_10']:.2f}"
                    if r.get("own_turn_at_10") is not None
                    else ""
                ),
                flush=True,
            )
            for source, b in (r.get("by_source") or {}).items():
                print(
                    f"{'':13s} {'':8s} {'':9s} {'':>8s}       {source} questions ({b['queries']:.0f}): "
                    f"segment p50 {b['segment_p50_ms']:6.1f} p95 {b['segment_p95_ms']:6.1f} ms  "
                    f"object p50 {b['object_p50_ms']:6.1f} p95 {b['object_p95_ms']:6.1f} ms"
                    + (
                        f"  compile p50 {b['compile_p50_ms']:6.1f} p95 {b['compile_p95_ms']:6.1f} ms"
                        if "compile_p50_ms" in b
                        else ""
                    ),
                    flush=True,
                )
            if r.get("profile"):
                print(f"{'':13s} profile: {r['profile']}", flush=True)
        print(side_by_side(rows))
        out_dir = Path(__file__).resolve().parent / "results"
        out_dir.mkdir(exist_ok=True)
        (out_dir / f"scale_{'_'.join(args.backend)}_{'_'.join(args.text)}_{args.embedder}.json").write_text(
            json.dumps(rows, indent=2)
        )
    finally:
        tmp.cleanup()
        if stop is not None:
            stop.__exit__(None, None, None)


if __name__ == "__main__":
    if "--one" in sys.argv and os.environ.get("PYTHONPATH"):
        sys.path.insert(0, os.environ["PYTHONPATH"].split(os.pathsep)[0])  # before the editable install
    main()

"""Inspector page latency on a 100k-segment store (target: every page < 300 ms).

    .venv/bin/python bench/inspect_bench.py [--segments 100000] [--backend sqlite|postgres] [--repeat 15]

The store is built like bench/scale_bench.py (conversations of 100 Zipf-worded turns, the
default static embedder), plus a knowledge graph written through ``memory_remember`` mode
``extraction`` (entities, facts with supersession, procedures) and one compile trace. Each page
is requested ``--repeat`` times through the ASGI app in process (no network); p50/p95 are
reported beside baselines measured in the same run: a static file served by the same app (the
framework's floor) and ``memory_maintain`` mode ``structure`` called directly (the overview's
largest read). The graph-health page is measured twice: served while the store is unchanged
(what a visitor gets between writes) and recomputed (``?refresh=1``, what the first visit after
a write costs); the target applies to the first.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_bench import _pct, _turn, _vocab

TARGET_MS = 300


def build(mem, segments: int) -> dict[str, str]:
    from memory_substrate import traces

    rng = random.Random(segments)
    vocab = _vocab(20_000, rng)
    cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
    episodes = []
    t = time.perf_counter()
    for c in range(segments // 100):
        msgs = [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": _turn(rng, vocab, cum),
                "created_at": f"2026-0{1 + c % 9}-{1 + c % 28:02d}T10:{i % 60:02d}:00+00:00",
            }
            for i in range(100)
        ]
        episodes.append(mem.ingest("conversation", {"title": f"session {c}", "messages": msgs})["source_id"])
    ingest_s = time.perf_counter() - t
    t = time.perf_counter()
    services = [f"Service {w.title()}" for w in vocab[100:160]]
    techs = [f"{w.title()}DB" for w in vocab[200:230]]
    for i, ep in enumerate(episodes[:400]):
        svc, tech = services[i % len(services)], techs[(i * 7) % len(techs)]
        mem.remember(
            "extraction",
            {
                "episode_id": ep,
                "reason": "bench",
                "memory_source": "agent_inferred",
                "scope_refs": ["scope:bench"],
                "entities": [
                    {"name": svc, "type": "service"},
                    {"name": tech, "type": "technology"},
                    {"name": f"Person {vocab[300 + i % 80].title()}", "type": "person"},
                ],
                "facts": [
                    {
                        "subject": svc,
                        "predicate": "uses",
                        "object": tech,
                        "segment_ids": ["seg-1"],
                        "valid_from": f"2026-{1 + i % 9:02d}-01T00:00:00+00:00",
                    },
                    {
                        "subject": f"Person {vocab[300 + i % 80].title()}",
                        "predicate": "owns",
                        "object": svc,
                        "segment_ids": ["seg-2"],
                    },
                ],
                "procedures": [
                    {
                        "kind": "workflow",
                        "title": f"Restart {svc}",
                        "text": f"Drain {svc}, restart, verify.",
                        "segment_ids": ["seg-3"],
                    }
                ],
            },
        )
    graph_s = time.perf_counter() - t
    ents = mem.query("entities", {"name": services[0]}, {"max_facts": 20})["items"]
    cands = [
        {
            "id": f["id"],
            "title": f["predicate"],
            "score": 0.5,
            "dimensions": {"relevance": 0.9, "recency": 0.5, "stability": 0.7, "provenance": 0.6},
        }
        for f in ents[0]["facts"]
    ]
    with mem.store.write(mem.namespace) as s:
        trace = traces.record(s, "compile", None, {"task": "bench", "candidates": cands})
    return {
        "entity": ents[0]["id"],
        "source": episodes[0],
        "trace": trace.id,
        "ingest_s": f"{ingest_s:.1f}",
        "graph_s": f"{graph_s:.1f}",
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=100_000)
    ap.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres"])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument(
        "--store",
        type=Path,
        default=None,
        help="Keep the built store in this folder and reuse it on the next run (SQLite).",
    )
    args = ap.parse_args()

    from starlette.testclient import TestClient

    from memory_substrate import Memory, Settings
    from memory_substrate.inspector import build_inspector

    with tempfile.TemporaryDirectory() as tmp:
        root = args.store or Path(tmp)
        reuse = args.store is not None and (root / "info.json").exists()
        overrides: dict = {"root": root, "embedder": "static"}
        pg = None
        if args.backend == "postgres":
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
            from tests.pg_server import running_postgres

            pg = running_postgres()
            overrides["database_url"] = pg.__enter__()
        mem = Memory(Settings(**overrides), namespace="bench")
        if reuse:
            info = json.loads((root / "info.json").read_text())
        else:
            info = build(mem, args.segments)
            if args.store is not None:
                (root / "info.json").write_text(json.dumps(info))
        client = TestClient(build_inspector(mem), base_url="http://127.0.0.1")  # the Host it answers to
        ns = "/ns/bench"
        pages = {
            "overview": f"{ns}/",
            "search (objects)": f"{ns}/search?q=database+migration+latency",
            "search (segments)": f"{ns}/search?q=database+migration+latency&unit=segment",
            "entities": f"{ns}/entities",
            "entity + timeline": f"{ns}/entity/{info['entity']}",
            "graph page": f"{ns}/graph?id={info['entity']}",
            "graph json (2 hops)": f"{ns}/api/graph?id={info['entity']}&depth=2",
            "sources": f"{ns}/sources",
            "source + segments": f"{ns}/source/{info['source']}",
            "patches & audit": f"{ns}/log",
            "compile traces": f"{ns}/traces",
            "compile trace": f"{ns}/trace/{info['trace']}",
            "procedures": f"{ns}/procedures",
            "graph health (served: store unchanged since last computed)": f"{ns}/health",
            "graph health (recomputed: ?refresh=1, or after a write)": f"{ns}/health?refresh=1",
        }
        baselines = {"static file (framework floor)": "/static/app.css"}
        results = {}
        for name, url in {**baselines, **pages}.items():
            assert client.get(url).status_code == 200, url  # warm-up (loads the embedder once)
            times = []
            for _ in range(args.repeat if "recomputed" not in name else 5):
                t = time.perf_counter()
                resp = client.get(url)
                times.append((time.perf_counter() - t) * 1000)
                assert resp.status_code == 200
            results[name] = {
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(_pct(times, 95), 1),
            }
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            mem.maintain("structure", {}, {})
            times.append((time.perf_counter() - t) * 1000)
        results["baseline: memory_maintain structure"] = {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(_pct(times, 95), 1),
        }
        for unit in ("object", "segment"):
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                mem.query(
                    "search", {"query": "database migration latency"}, {"max_items": 20, "result_unit": unit}
                )
                times.append((time.perf_counter() - t) * 1000)
            results[f"baseline: memory_query search ({unit}s) called directly"] = {
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(_pct(times, 95), 1),
            }
        status = mem.status()
        mem.close()
        if pg is not None:
            pg.__exit__(None, None, None)
    # The recomputation is reported, not held to the page target: the page serves the last
    # computed section (with its age) until the store changes; see docs/inspector.md.
    over = [
        k for k, v in results.items() if k in pages and "recomputed" not in k and v["p95_ms"] >= TARGET_MS
    ]
    print(
        json.dumps(
            {
                "backend": args.backend,
                "segments": status["counts"]["segments"],
                "objects": status["counts"]["objects"],
                "build": info,
                "pages": results,
                "target_ms": TARGET_MS,
                "pages_over_target_p95": over,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

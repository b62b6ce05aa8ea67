"""Graph benchmark: get_context (depth 2) and get_trace at 100k relations, beside plain SQL.

    .venv/bin/python bench/graph_bench.py [--relations 100000] [--backend sqlite postgres] [--queries 300]

A synthetic knowledge graph is written through the storage ports (objects with full-text rows,
canonical relations): entities and facts, facts ``about`` one or two entities drawn with a Zipf
skew (so there are hubs), entity-entity predicates and fact-fact ``RELATED_TO`` edges. Then, in
the same run and on the same store:

- ``get_context``: the graph tool's domain function (``graphmem.relations.get_context``, the MCP
  tool minus JSON-RPC) with depth 2 and the spec's default ``max_nodes`` 20;
- ``get_trace``: ``graphmem.relations.get_trace`` (max_paths 5, max depth 4) between node pairs
  three hops apart on a random walk, so a path exists;
- baselines on a raw database connection: one recursive CTE for the depth-2 neighbourhood
  (+ the objects and the edges among them, as the tool returns), and one recursive CTE
  enumerating up to 5 simple paths of at most 4 edges.

Prints p50/p95 per backend and the ratio tool/baseline, and the load average while measuring.
On PostgreSQL the tables are analyzed after the bulk build (autovacuum's steady state). Target:
p95 <= 30 ms.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NS = "bench"
TS = "2024-01-01T00:00:00.000000+00:00"

CTX_SQLITE = """
WITH RECURSIVE walk(id, depth) AS (
  SELECT ?, 0
  UNION
  SELECT r.target_id, w.depth + 1 FROM walk w JOIN relations r ON r.namespace = ? AND r.source_id = w.id WHERE w.depth < 2
  UNION
  SELECT r.source_id, w.depth + 1 FROM walk w JOIN relations r ON r.namespace = ? AND r.target_id = w.id WHERE w.depth < 2
)
SELECT id, MIN(depth) AS d FROM walk GROUP BY id ORDER BY d, id LIMIT ?
"""
CTX_PG = """
WITH RECURSIVE walk(id, depth) AS (
  SELECT %s::text COLLATE "C", 0
  UNION
  SELECT CASE WHEN r.source_id = w.id THEN r.target_id ELSE r.source_id END, w.depth + 1
  FROM walk w JOIN relations r ON r.namespace = %s AND (r.source_id = w.id OR r.target_id = w.id) WHERE w.depth < 2
)
SELECT id, MIN(depth) AS d FROM walk GROUP BY id ORDER BY d, id LIMIT %s
"""
TRACE_SQLITE = """
WITH RECURSIVE paths(node, path, len) AS (
  SELECT ?, '|' || ? || '|', 0
  UNION ALL
  SELECT r.target_id, p.path || r.id || '|' || r.target_id || '|', p.len + 1
  FROM paths p JOIN relations r ON r.namespace = ? AND r.source_id = p.node
  WHERE p.len < 4 AND p.node != ? AND instr(p.path, '|' || r.target_id || '|') = 0
  UNION ALL
  SELECT r.source_id, p.path || r.id || '|' || r.source_id || '|', p.len + 1
  FROM paths p JOIN relations r ON r.namespace = ? AND r.target_id = p.node
  WHERE p.len < 4 AND p.node != ? AND instr(p.path, '|' || r.source_id || '|') = 0
)
SELECT path, len FROM paths WHERE node = ? ORDER BY len LIMIT 5
"""
TRACE_PG = """
WITH RECURSIVE paths(node, path, len) AS (
  SELECT %s::text COLLATE "C", ARRAY[%s::text COLLATE "C"], 0
  UNION ALL
  SELECT CASE WHEN r.source_id = p.node THEN r.target_id ELSE r.source_id END,
         p.path || (CASE WHEN r.source_id = p.node THEN r.target_id ELSE r.source_id END),
         p.len + 1
  FROM paths p JOIN relations r ON r.namespace = %s AND (r.source_id = p.node OR r.target_id = p.node)
  WHERE p.len < 4 AND p.node != %s
    AND NOT (CASE WHEN r.source_id = p.node THEN r.target_id ELSE r.source_id END) = ANY(p.path)
)
SELECT path, len FROM paths WHERE node = %s ORDER BY len LIMIT 5
"""


def build_graph(memory: Any, relations: int, rng: random.Random) -> tuple[list[str], dict[str, list[str]]]:
    from memory_substrate.graph.canonical import canonical_relation
    from memory_substrate.models import MemoryObject, SearchDoc
    from memory_substrate.text import index_text

    n_ent, n_fact = relations // 8, relations // 4
    ents = [f"ent:b{i:07d}" for i in range(n_ent)]
    facts = [f"know:b{i:07d}" for i in range(n_fact)]
    weights = list(itertools.accumulate(1.0 / (i + 1) ** 0.8 for i in range(n_ent)))
    rels = []
    for f in facts:
        for e in set(rng.choices(ents, cum_weights=weights, k=rng.choice((1, 1, 2)))):
            rels.append(canonical_relation("about", f, e, {}, TS))
    while len(rels) < relations * 0.8:
        a, b = rng.choices(ents, cum_weights=weights, k=1)[0], rng.choice(ents)
        if a != b:
            rels.append(
                canonical_relation(
                    rng.choice(("uses", "depends_on", "owns", "integrates_with")), a, b, {}, TS
                )
            )
    while len(rels) < relations:
        a, b = rng.choice(facts), rng.choice(facts)
        if a != b:
            rels.append(canonical_relation("RELATED_TO", a, b, {}, TS))
    rels = list({r.id: r for r in rels}.values())
    adj: dict[str, list[str]] = {}
    for r in rels:
        adj.setdefault(r.source_id, []).append(r.target_id)
        adj.setdefault(r.target_id, []).append(r.source_id)
    with memory.store.write(NS) as s:
        for oid in ents + facts:
            is_ent = oid.startswith("ent:")
            title = f"{'entity' if is_ent else 'fact'} {oid[-7:]}"
            obj = MemoryObject(
                id=oid,
                object_type="entity" if is_ent else "knowledge",
                kind="technology" if is_ent else "fact",
                status="active",
                title=title,
                summary=title,
                created_at=TS,
                updated_at=TS,
            )
            s.insert_object(obj, SearchDoc(index_text(title), index_text(title), "", ""), None)
        for i in range(0, len(rels), 5000):
            s.insert_relations(rels[i : i + 5000])
    return ents + facts, adj


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def timed(fn: Any, args: list[Any]) -> list[float]:
    out = []
    for a in args:
        t = time.perf_counter()
        fn(*a)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run_backend(
    backend: str, url: str | None, relations: int, queries: int, baseline_queries: int
) -> dict[str, Any]:
    from memory_substrate import Memory, Settings
    from memory_substrate.graphmem import relations as R
    from memory_substrate.graphmem.service import GraphMemory

    rng = random.Random(7)
    root = tempfile.mkdtemp(prefix="graph-bench-")
    settings = Settings(root=root, embedder="none", database_url=url if backend == "postgres" else None)
    memory = Memory(settings, namespace=NS)
    started = time.perf_counter()
    nodes, adj = build_graph(memory, relations, rng)
    build_s = time.perf_counter() - started
    g = GraphMemory(memory)
    roots = [(rng.choice(nodes),) for _ in range(queries)]
    pairs = []
    while len(pairs) < queries:
        a = rng.choice(nodes)
        walk = [a]
        for _ in range(3):
            walk.append(rng.choice(adj.get(walk[-1]) or [walk[-1]]))
        if walk[-1] != a:
            pairs.append((a, walk[-1]))

    def tool_ctx(root_id: str) -> None:
        assert R.get_context(g, node_id=root_id, depth=2)["success"]

    def tool_trace(a: str, b: str) -> None:
        assert R.get_trace(g, from_id=a, to_id=b)["success"]

    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(settings.sqlite_path)

        def sql(query: str, params: tuple[Any, ...]) -> list[Any]:
            return conn.execute(query, params).fetchall()

        ctx_q, trace_q, mark = CTX_SQLITE, TRACE_SQLITE, "?"

        def ctx_params(r: str) -> tuple[Any, ...]:
            return (r, NS, NS, 20)

        def trace_params(a: str, b: str) -> tuple[Any, ...]:
            return (a, a, NS, b, NS, b, b)
    else:
        import psycopg

        conn = psycopg.connect(url, autocommit=True)  # type: ignore[assignment]
        # Measure the steady state: autovacuum analyzes a freshly bulk-loaded table within about a
        # minute; until then the planner has no statistics and every plan (the tools' and the
        # baseline's alike) is a guess, so the figures would depend on when autovacuum woke up.
        conn.execute("ANALYZE relations")  # type: ignore[attr-defined]
        conn.execute("ANALYZE objects")  # type: ignore[attr-defined]

        def sql(query: str, params: tuple[Any, ...]) -> list[Any]:
            return conn.execute(query, params).fetchall()  # type: ignore[arg-type]

        ctx_q, trace_q, mark = CTX_PG, TRACE_PG, "%s"

        def ctx_params(r: str) -> tuple[Any, ...]:
            return (r, NS, 20)

        def trace_params(a: str, b: str) -> tuple[Any, ...]:
            return (a, a, NS, b, b)

    def base_ctx(root_id: str) -> None:
        ids = [row[0] for row in sql(ctx_q, ctx_params(root_id))]
        marks = ",".join([mark] * len(ids))
        sql(f"SELECT id, data FROM objects WHERE namespace = {mark} AND id IN ({marks})", (NS, *ids))
        sql(
            f"SELECT id, rel_type, source_id, target_id FROM relations WHERE namespace = {mark} AND source_id IN ({marks}) "
            f"AND target_id IN ({marks})",
            (NS, *ids, *ids),
        )

    def base_trace(a: str, b: str) -> None:
        sql(trace_q, trace_params(a, b))

    for fn, args in (
        (tool_ctx, roots[:20]),
        (base_ctx, roots[:20]),
        (tool_trace, pairs[:20]),
        (base_trace, pairs[:3]),
    ):
        timed(fn, args)  # warm caches and plans
    res = {
        "backend": backend,
        "relations": relations,
        "nodes": len(nodes),
        "build_s": round(build_s, 1),
        "queries": queries,
        "baseline_trace_queries": min(baseline_queries, len(pairs)),
    }
    for name, fn, args in (
        ("get_context_d2", tool_ctx, roots),
        ("baseline_context_sql", base_ctx, roots),
        ("get_trace", tool_trace, pairs),
        ("baseline_trace_sql", base_trace, pairs[:baseline_queries]),
    ):
        print(f"  {backend}: timing {name} ({len(args)} queries)", file=sys.stderr, flush=True)
        ms = timed(fn, args)
        res[f"{name}_p50_ms"] = round(statistics.median(ms), 2)
        res[f"{name}_p95_ms"] = round(pct(ms, 95), 2)
    res["load_avg_1m"] = round(os.getloadavg()[0], 2)
    found = sum(1 for a, b in pairs[:50] if R.get_trace(g, from_id=a, to_id=b)["paths"])
    res["trace_pairs_with_a_path"] = f"{found}/50"
    conn.close()
    memory.close()
    shutil.rmtree(root, ignore_errors=True)  # the SQLite store is ~80 MB per run
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relations", type=int, default=100_000)
    ap.add_argument("--backend", choices=["sqlite", "postgres"], nargs="+", default=["sqlite", "postgres"])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument(
        "--baseline-trace-queries",
        type=int,
        default=60,
        help="the recursive-SQL path baseline is slow on hubs; time it on the first N pairs",
    )
    ap.add_argument("--database-url", default=None, help="PostgreSQL URL (default: start an embedded server)")
    args = ap.parse_args()
    url, stop = args.database_url, None
    if "postgres" in args.backend and url is None:
        from tests.pg_server import running_postgres

        stop = running_postgres()
        url = stop.__enter__()
    try:
        rows = []
        for backend in args.backend:
            r = run_backend(backend, url, args.relations, args.queries, args.baseline_trace_queries)
            rows.append(r)
            print(
                f"{backend:8s} {r['relations']} relations / {r['nodes']} nodes (built in {r['build_s']} s)\n"
                f"  get_context depth 2  p50 {r['get_context_d2_p50_ms']:6.2f}  p95 {r['get_context_d2_p95_ms']:6.2f} ms   "
                f"recursive SQL p50 {r['baseline_context_sql_p50_ms']:6.2f}  p95 {r['baseline_context_sql_p95_ms']:6.2f} ms   "
                f"ratio p95 {r['get_context_d2_p95_ms'] / max(r['baseline_context_sql_p95_ms'], 1e-9):.2f}\n"
                f"  get_trace            p50 {r['get_trace_p50_ms']:6.2f}  p95 {r['get_trace_p95_ms']:6.2f} ms   "
                f"recursive SQL p50 {r['baseline_trace_sql_p50_ms']:6.2f}  p95 {r['baseline_trace_sql_p95_ms']:6.2f} ms   "
                f"ratio p95 {r['get_trace_p95_ms'] / max(r['baseline_trace_sql_p95_ms'], 1e-9):.2f}   "
                f"(pairs with a path: {r['trace_pairs_with_a_path']}; load {r['load_avg_1m']})",
                flush=True,
            )
        out_dir = Path(__file__).resolve().parent / "results"
        out_dir.mkdir(exist_ok=True)
        (out_dir / f"graph_{'_'.join(args.backend)}.json").write_text(json.dumps(rows, indent=2))
    finally:
        if stop is not None:
            stop.__exit__(None, None, None)


if __name__ == "__main__":
    main()

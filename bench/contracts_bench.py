"""Time graph.v1 validation on a 10k-node snapshot, beside plain ``json.loads`` of the same file.

Builds a synthetic snapshot (nodes of every kind with text, tags and attributes; 1.5 edges and
0.2 events per node), writes it as JSON and YAML in a temporary directory, then reports medians:

- ``json.loads`` of the file text (baseline: the cost of reading the document at all);
- load + validate the JSON file (what ``contracts graph validate`` does), and validate alone;
- the YAML file: load + validate;
- an invalid copy (20 broken nodes): every finding is collected by the slower full walk;
- packing a 200-node selection of the snapshot;
- with ``--store N`` (default 2000): importing the first N nodes into an empty SQLite store
  (``memory_remember graph_snapshot``, embedder off) and exporting the namespace again, once.

    .venv/bin/python bench/contracts_bench.py                  # 10k nodes, 7 runs
    .venv/bin/python bench/contracts_bench.py --nodes 2000 --runs 3

Target: load + validate of the valid 10k-node JSON snapshot, median < 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_substrate.contracts import vocab
from memory_substrate.contracts.loader import dump_yaml, load_document
from memory_substrate.contracts.pack import build_package, resolve
from memory_substrate.contracts.validate import validate

WORDS = [
    "memory",
    "graph",
    "contract",
    "runtime",
    "package",
    "selection",
    "profile",
    "edge",
    "node",
    "event",
    "policy",
    "store",
    "vector",
    "decision",
    "claim",
]


def snapshot(n: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        node: dict[str, Any] = {
            "id": f"n{i}",
            "kind": vocab.NODE_KINDS[i % len(vocab.NODE_KINDS)],
            "title": " ".join(rng.choices(WORDS, k=6)),
            "text": " ".join(rng.choices(WORDS, k=40)),
            "status": "active",
            "created_at": f"2026-05-{1 + i % 28:02d}T10:{i % 60:02d}:00Z",
            "tags": ["scope:bench"],
            "attributes": {"object_type": "knowledge", "object_kind": "claim", "payload": {"n": i}},
        }
        if i % 3 == 0:
            node["confidence"] = round(rng.random(), 2)
        nodes.append(node)
    edges = [
        {
            "id": f"e{j}",
            "kind": vocab.EDGE_KINDS[j % len(vocab.EDGE_KINDS)],
            "source": f"n{rng.randrange(n)}",
            "target": f"n{rng.randrange(n)}",
        }
        for j in range(n * 3 // 2)
    ]
    events = [
        {
            "id": f"v{k}",
            "kind": vocab.EVENT_KINDS[k % len(vocab.EVENT_KINDS)],
            "at": "2026-05-02T00:00:00Z",
            "refs": [f"n{rng.randrange(n)}"],
        }
        for k in range(n // 5)
    ]
    return {
        "schema_version": vocab.GRAPH_V1,
        "id": "bench",
        "title": "bench",
        "nodes": nodes,
        "edges": edges,
        "events": events,
    }


def median_s(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def store_rows(graph: dict[str, Any]) -> None:
    from memory_substrate import Memory, Settings
    from memory_substrate.contracts.snapshot_export import export_snapshot

    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(Settings(root=Path(tmp), embedder="none"), namespace="bench") as mem,
    ):
        start = time.perf_counter()
        result = mem.remember("graph_snapshot", {"snapshot": graph})
        imported = time.perf_counter() - start
        start = time.perf_counter()
        with mem.store.read(mem.namespace) as session:
            _, report = export_snapshot(session)
        exported = time.perf_counter() - start
    n = len(graph["nodes"])
    print(
        f"  import {n} nodes into SQLite (one patch)     {imported * 1000:8.1f} ms   {n / imported:6.0f} nodes/s "
        f"(created {result['created']})"
    )
    print(f"  export them again as graph.v1                {exported * 1000:8.1f} ms   {report['counts']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--store", type=int, default=2000, help="nodes to import into a SQLite store (0: skip)"
    )
    args = parser.parse_args()

    graph = snapshot(args.nodes)
    broken = json.loads(json.dumps(graph))
    for i in range(0, 20):
        broken["nodes"][i * 7]["kind"] = "hunch"
    with tempfile.TemporaryDirectory() as tmp:
        json_path, yaml_path = Path(tmp) / "g.json", Path(tmp) / "g.yaml"
        json_path.write_text(json.dumps(graph), encoding="utf-8")
        yaml_path.write_text(dump_yaml(graph), encoding="utf-8")
        text = json_path.read_text(encoding="utf-8")
        assert validate(graph, "graph") == [], "the synthetic snapshot must be valid"
        assert len(validate(broken, "graph")) == 20
        selection = {
            "schema_version": vocab.SELECTION_V1,
            "id": "s",
            "graph": graph,
            "nodes": [f"n{i}" for i in range(0, args.nodes, max(1, args.nodes // 200))],
        }

        validate(graph, "graph")  # compile the validator once, as any long-lived process would
        rows = [
            ("json.loads of the file (baseline)", median_s(lambda: json.loads(text), args.runs)),
            (
                "load + validate, JSON file",
                median_s(lambda: validate(load_document(json_path), "graph"), args.runs),
            ),
            ("validate only (parsed document)", median_s(lambda: validate(graph, "graph"), args.runs)),
            (
                "load + validate, YAML file",
                median_s(lambda: validate(load_document(yaml_path), "graph"), max(1, args.runs // 2)),
            ),
            (
                "validate, 20 invalid nodes (all findings)",
                median_s(lambda: validate(broken, "graph"), max(1, args.runs // 2)),
            ),
            (
                "pack a 200-node selection",
                median_s(lambda: build_package(resolve(selection, None)), max(1, args.runs // 2)),
            ),
        ]
    size_mb = len(text.encode()) / 1e6
    print(
        f"graph.v1 snapshot: {args.nodes} nodes, {len(graph['edges'])} edges, {len(graph['events'])} events, "
        f"{size_mb:.1f} MB as JSON; medians of {args.runs} runs"
    )
    baseline = rows[0][1]
    for name, seconds in rows:
        print(f"  {name:<44} {seconds * 1000:8.1f} ms   x{seconds / baseline:5.1f} baseline")
    if args.store:
        store_rows(snapshot(args.store))
    target = rows[1][1]
    print(f"target: load + validate < 1 s -> {'met' if target < 1.0 else 'NOT met'} ({target:.3f} s)")


if __name__ == "__main__":
    main()

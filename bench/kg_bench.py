"""Knowledge graph: entity resolution quality on a labelled set, and the cost of applying one extraction.

1. Resolution: the labelled mentions of ``bench/data/entity_mentions.json`` (210 mentions of 56
   entities, near-misses side by side) go through ``memory_remember`` mode ``extraction`` in a
   fixed shuffled order, grouped into episodes. A mention that resolves to an existing entity is
   a merge; it is correct when that entity was created for the same gold entity. Precision =
   correct merges / merges (a wrong merge is a collision); recall = correct merges / mentions
   whose entity already existed. Beside it, in the same run: the same pipeline without an
   embedder (passes 1 and 2 only) and a naive exact-name baseline (same type, same string).
2. Apply latency: on SQLite holding ``--entities`` entities (default 10k), time applying one
   extraction of 10 entities (half already known) and 20 facts; p50 / p95 beside the same
   extraction without an embedder and a plain patch that writes the same 30 objects with no
   resolution or settlement (the floor).

    .venv/bin/python bench/kg_bench.py                       # both parts
    .venv/bin/python bench/kg_bench.py --entities 2000 --runs 20

Targets: precision 1.0, recall >= 0.9; apply p95 <= 20 ms at 10k entities.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memory_substrate import Memory, Settings
from memory_substrate.models import MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.util import new_id

DATA = Path(__file__).parent / "data" / "entity_mentions.json"
GOV = {"reason": "benchmark", "memory_source": "agent_inferred", "scope_refs": ["scope:bench"]}


def mention_sequence(seed: int = 7) -> list[dict[str, Any]]:
    """Every mention once, shuffled; each entity's first occurrence uses its first form."""
    entities = json.loads(DATA.read_text())["entities"]
    tokens = [e["gold"] for e in entities for _ in range(1 + len(e["later"]))]
    random.Random(seed).shuffle(tokens)
    by_gold = {e["gold"]: e for e in entities}
    used: dict[str, int] = {}
    out = []
    for gold in tokens:
        e = by_gold[gold]
        i = used.get(gold, 0)
        used[gold] = i + 1
        if i == 0:
            out.append({"gold": gold, "name": e["first"], "type": e["type"], "aliases": e["aliases"]})
        else:
            later = e["later"][i - 1]
            if isinstance(later, dict):
                out.append({"gold": gold, "name": later["name"], "type": later["type"], "aliases": []})
            else:
                out.append({"gold": gold, "name": later, "type": e["type"], "aliases": []})
    return out


def episodes(seq: list[dict[str, Any]], size: int = 8) -> list[list[dict[str, Any]]]:
    """Consecutive groups of at most ``size`` mentions, never two of one entity in a group."""
    groups: list[list[dict[str, Any]]] = [[]]
    for m in seq:
        if len(groups[-1]) >= size or any(x["gold"] == m["gold"] for x in groups[-1]):
            groups.append([])
        groups[-1].append(m)
    return groups


def score(seq: list[dict[str, Any]], resolved: list[str | None], created: dict[str, str]) -> dict[str, Any]:
    """``resolved[i]``: the entity mention i merged into (None: it created one or was refused)."""
    seen: set[str] = set()
    merges = correct = should = 0
    wrong = []
    for m, ent in zip(seq, resolved, strict=True):
        if m["gold"] in seen:
            should += 1
        if ent is not None:
            merges += 1
            if created.get(ent) == m["gold"]:
                correct += 1
            else:
                wrong.append({"mention": m["name"], "gold": m["gold"], "merged_into": created.get(ent)})
        seen.add(m["gold"])
    return {
        "mentions": len(seq),
        "merges": merges,
        "correct_merges": correct,
        "wrong_merges": wrong,
        "precision": round(correct / merges, 4) if merges else 1.0,
        "recall": round(correct / should, 4) if should else 1.0,
    }


def run_pipeline(embedder: str, seq: list[dict[str, Any]]) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory() as root,
        Memory(Settings(root=Path(root), embedder=embedder), namespace="bench") as mem,
    ):
        resolved: list[str | None] = []
        created: dict[str, str] = {}
        refused = 0
        for g, group in enumerate(episodes(seq)):
            # each group its own episode: an identical capture would be the same episode (a noop)
            ep = mem.ingest(
                "conversation", {"title": "bench", "messages": [{"role": "user", "content": f"mentions {g}"}]}
            )
            out = mem.remember(
                "extraction",
                {
                    "episode_id": ep["source_id"],
                    **GOV,
                    "entities": [
                        {"name": m["name"], "type": m["type"], "aliases": m["aliases"]} for m in group
                    ],
                },
            )
            got = {r["name"]: r["entity_id"] for r in out["entities"]["resolved"]}
            new = {r["name"]: r["entity_id"] for r in out["entities"]["new"]}
            refused += len(out["entities"]["refused"])
            for m in group:
                if m["name"] in new:
                    created[new[m["name"]]] = m["gold"]
                resolved.append(got.get(m["name"]))
        result = score(seq, resolved, created)
        result["refused"] = refused
        result["entities_created"] = len(created)
        return result


def run_naive(seq: list[dict[str, Any]]) -> dict[str, Any]:
    index: dict[tuple[str, str], str] = {}
    created: dict[str, str] = {}
    resolved: list[str | None] = []
    for i, m in enumerate(seq):
        key = (m["type"], m["name"])
        if key in index:
            resolved.append(index[key])
        else:
            index[key] = f"e{i}"
            created[f"e{i}"] = m["gold"]
            resolved.append(None)
    return score(seq, resolved, created)


# --- apply latency -----------------------------------------------------------------------------
def _seed(mem: Memory, n: int, rng: random.Random) -> list[str]:
    names = [
        f"Component {i:05d} {rng.choice(['Gateway', 'Worker', 'Store', 'Router', 'Indexer'])}"
        for i in range(n)
    ]
    types = ["service", "technology", "project", "person", "organization"]
    for start in range(0, n, 10):
        ep = mem.ingest(
            "conversation", {"title": "seed", "messages": [{"role": "user", "content": f"seed {start}"}]}
        )
        mem.remember(
            "extraction",
            {
                "episode_id": ep["source_id"],
                **GOV,
                "entities": [
                    {"name": names[i], "type": types[i % 5]} for i in range(start, min(n, start + 10))
                ],
            },
        )
    return names


def _extraction(
    rng: random.Random, names: list[str], k: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    types = ["service", "technology", "project", "person", "organization"]
    known = [(names[i], types[i % 5]) for i in rng.sample(range(len(names)), 5)]
    fresh = [(f"Fresh Thing {k:04d}-{j}", "service") for j in range(5)]
    ents = [{"name": n, "type": t} for n, t in known + fresh]
    preds = ["uses", "depends_on", "owns", "integrates_with", "hosts", "configured_with", "runs_on"]
    facts = []
    for j in range(20):
        a, b = rng.sample(ents, 2)
        facts.append(
            {
                "subject": a["name"],
                "predicate": preds[j % len(preds)],
                "object": b["name"],
                "segment_ids": ["seg-1"],
            }
        )
    return ents, facts


def time_apply(entities: int, runs: int, embedder: str, warmup: int = 5) -> dict[str, Any]:
    """Applies and the plain-patch floor alternate, so machine load weighs on both alike."""
    rng = random.Random(11)
    with (
        tempfile.TemporaryDirectory() as root,
        Memory(Settings(root=Path(root), embedder=embedder), namespace="bench") as mem,
    ):
        t0 = time.perf_counter()
        names = _seed(mem, entities, rng)
        seed_s = time.perf_counter() - t0
        eps = [
            mem.ingest("conversation", {"title": "t", "messages": [{"role": "user", "content": f"x {i}"}]})[
                "source_id"
            ]
            for i in range(runs + warmup)
        ]
        emb = mem.runtime.embedder_or_none()
        samples, floor = [], []
        for k, ep in enumerate(eps):
            ents, facts = _extraction(rng, names, k)
            t = time.perf_counter()
            mem.remember("extraction", {"episode_id": ep, **GOV, "entities": ents, "facts": facts})
            applied = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            with mem.store.write(mem.namespace) as session:
                patch = Patch(session, tool="bench", mode="plain", reason=None, embedder=emb)
                for j in range(30):
                    patch.create(
                        MemoryObject(
                            id=new_id("knowledge"),
                            object_type="knowledge",
                            kind="note",
                            status="active",
                            title=f"plain object {j}",
                            summary="floor",
                            scope_refs=["scope:bench"],
                        )
                    )
                patch.commit()
            plain = (time.perf_counter() - t) * 1000
            if k >= warmup:  # the first applies warm the per-type matrices, as a running server has
                samples.append(applied)
                floor.append(plain)
    a, f = _pcts(samples), _pcts(floor)
    return {
        "seed_s": round(seed_s, 1),
        "apply": a,
        "plain_patch_30_objects": f,
        "apply_over_floor_p50": round(a["p50_ms"] / f["p50_ms"], 2),
    }


def _pcts(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {
        "p50_ms": round(statistics.median(xs), 2),
        "p95_ms": round(xs[min(len(xs) - 1, int(len(xs) * 0.95))], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    seq = mention_sequence()
    quality = {
        "three_pass_static_embedder": run_pipeline("static", seq),
        "passes_1_2_no_embedder": run_pipeline("none", seq),
        "naive_exact_name_baseline": run_naive(seq),
    }
    print(json.dumps({"resolution": quality}, indent=2))
    if not args.skip_latency:
        latency = {
            "static_embedder": time_apply(args.entities, args.runs, "static"),
            "no_embedder": time_apply(args.entities, args.runs, "none"),
        }
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        print(
            json.dumps(
                {
                    "apply_latency": {
                        "entities_stored": args.entities,
                        "runs": args.runs,
                        "load_average_1m": load,
                        **latency,
                    }
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()

"""Search while a bulk import's vectors are still being made, against search once they are.

    .venv/bin/python bench/backlog_bench.py [--size 30000] [--backend sqlite postgres] [--text de en]
        [--embedder use-gated] [--baseline-ref REF] [--profile FILE]

A capture in another language than English leaves its vectors to a background worker
(``graph/deferred.py``). Each run fills a fresh store with ``--size`` 12-word salad turns in
``--text``'s language (``scale_bench``'s corpus, conversations of 100), then at once times
``Memory.query("search")`` (segment and object, 10 items, the salad queries in turn) for as long
as the worker has vectors left to make ("backlog"), waits for the worker to finish, and times the
same queries again ("settled"). Reported: p50/p95 of each, their ratio, how many searches ran
during the backlog, and how long the backlog took (the worker's rate beside searches).

``--gap-ms`` sets the pause between searches (0: back to back, so the worker gets no quiet
moment and moves at its starved pace; 100: it runs between searches, and a search may land on
one of its pieces). ``--baseline-ref`` measures that git revision's code too, in the same run, store by store (as in
``scale_bench``). ``--profile FILE`` writes a cProfile of the backlog searches (this thread's
side; the vector stream's worker thread is not profiled) of the current tree.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_bench import _database, _pct, _settle, build_synthetic, source_trees


def _pending(mem: Any) -> int:
    from memory_substrate.graph import deferred

    with mem.store.read(mem.namespace) as session:
        return deferred.queued_segments(session)


def _one_search(mem: Any, q: str, unit: str) -> float:
    t = time.perf_counter()
    if unit == "segment":
        mem.query("search", {"query": q}, {"max_items": 10, "result_unit": "segment"})
    else:
        mem.query("search", {"query": q}, {"max_items": 10})
    return (time.perf_counter() - t) * 1000


def _stats(xs: list[float]) -> dict[str, float | int]:
    return (
        {"p50": statistics.median(xs), "p95": _pct(xs, 95), "n": len(xs)}
        if xs
        else {"p50": 0.0, "p95": 0.0, "n": 0}
    )


def _gap(rng: random.Random, gap_ms: float) -> None:
    if gap_ms > 0:
        time.sleep(rng.uniform(0.5, 1.5) * gap_ms / 1000)


def run_one(
    size: int,
    backend: str,
    embedder: str,
    database_url: str | None,
    text: str,
    profile: str | None,
    max_backlog_s: float,
    gap_ms: float = 0.0,
) -> dict[str, Any]:
    from memory_substrate import Memory, Settings

    rng = random.Random(7)

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(root=Path(tmp), embedder=embedder, database_url=database_url)
        mem = Memory(settings, namespace=f"backlog-{size}-{os.getpid()}")
        queries, ingest_s = build_synthetic(mem, size, text)
        backlog_at_start = _pending(mem)
        _settle()
        t_backlog = time.perf_counter()
        seg: list[float] = []
        obj: list[float] = []
        prof = cProfile.Profile() if profile else None
        i = 0
        # The pending count is read between searches, untimed (the read itself is a search's size).
        while _pending(mem) and time.perf_counter() - t_backlog < max_backlog_s:
            q = queries[i % len(queries)]
            i += 1
            for unit, times in (("segment", seg), ("object", obj)):
                if prof:
                    prof.enable()
                times.append(_one_search(mem, q, unit))
                if prof:
                    prof.disable()
                _gap(rng, gap_ms)
        searched_s = time.perf_counter() - t_backlog
        while _pending(mem):
            if time.perf_counter() - t_backlog > max_backlog_s * 4:
                raise SystemExit("the backlog did not drain")
            time.sleep(0.2)
        backlog_s = time.perf_counter() - t_backlog
        if prof and profile:
            prof.dump_stats(profile)
        # Settled means indexed too: the PostgreSQL HNSW build that bulk vector writes defer
        # (its idle builder starts once they pause), made now and timed apart, as scale_bench does.
        t = time.perf_counter()
        getattr(mem.store, "build_deferred_indexes", dict)()
        build_s = time.perf_counter() - t
        for _ in range(2):  # warm, as scale_bench does
            _one_search(mem, queries[0], "segment")
        _settle()
        seg_after: list[float] = []
        obj_after: list[float] = []
        for q in queries:
            for unit, times in (("segment", seg_after), ("object", obj_after)):
                times.append(_one_search(mem, q, unit))
                _gap(rng, gap_ms)
        mem.close()
    return {
        "size": size,
        "backend": backend,
        "text": text,
        "embedder": embedder,
        "gap_ms": gap_ms,
        "ingest_s": ingest_s,
        "backlog_segments": backlog_at_start,
        "backlog_s": backlog_s,
        "searched_s": searched_s,
        "index_build_s": build_s,
        "segment_backlog": _stats(seg),
        "object_backlog": _stats(obj),
        "segment_settled": _stats(seg_after),
        "object_settled": _stats(obj_after),
        "code_path": str(Path(sys.modules["memory_substrate"].__file__ or "").parent),
    }


def _line(label: str, r: dict[str, Any]) -> str:
    def pair(unit: str) -> str:
        b, s = r[f"{unit}_backlog"], r[f"{unit}_settled"]
        ratio = (b["p50"] / s["p50"] if s["p50"] else 0.0, b["p95"] / s["p95"] if s["p95"] else 0.0)
        return (
            f"{unit} backlog p50 {b['p50']:6.1f} p95 {b['p95']:6.1f} ms (n {b['n']:3d}) | settled p50 "
            f"{s['p50']:5.1f} p95 {s['p95']:5.1f} ms | x{ratio[0]:.2f} / x{ratio[1]:.2f}"
        )

    return (
        f"{label:13s} {r['backend']:8s} {r['text']:3s} {r['size']:>6d} turns  gap {r['gap_ms']:3.0f} ms  "
        f"ingest {r['ingest_s']:5.1f} s  "
        f"backlog {r['backlog_segments']:>6d} segs drained in {r['backlog_s']:5.1f} s  "
        f"(then index build {r.get('index_build_s', 0.0):4.1f} s)\n"
        f"    {pair('segment')}\n    {pair('object')}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=30_000)
    ap.add_argument("--backend", choices=["sqlite", "postgres"], nargs="+", default=["sqlite"])
    ap.add_argument("--text", nargs="+", default=["de"], choices=["en", "de", "tokens"])
    ap.add_argument("--embedder", default="use-gated")
    ap.add_argument("--database-url", default=None, help="PostgreSQL URL (default: start an embedded server)")
    ap.add_argument("--baseline-ref", default=None, help="git revision measured too, in the same run")
    ap.add_argument("--profile", default=None, help="cProfile output of the backlog searches (current tree)")
    ap.add_argument(
        "--max-backlog-s", type=float, default=180.0, help="stop timing backlog searches after this"
    )
    ap.add_argument(
        "--gap-ms",
        type=float,
        nargs="+",
        default=[0.0],
        help="pause between searches, ms (drawn from 0.5x-1.5x; several: one store each). 0: back "
        "to back, the worker then gets no quiet moment; 100: the worker runs between searches",
    )
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(
            json.dumps(
                run_one(
                    args.size,
                    args.backend[0],
                    args.embedder,
                    args.database_url,
                    args.text[0],
                    args.profile,
                    args.max_backlog_s,
                    args.gap_ms[0],
                )
            )
        )
        return
    url, stop = args.database_url, None
    if "postgres" in args.backend and url is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.pg_server import running_postgres

        stop = running_postgres({})
        url = stop.__enter__()
    tmp = tempfile.TemporaryDirectory()
    trees = source_trees(args.baseline_ref, tmp.name)
    try:
        rows = []
        for backend, text, gap, (label, src) in [
            (b, x, g, t) for b in args.backend for x in args.text for g in args.gap_ms for t in trees
        ]:
            cmd = [
                sys.executable,
                __file__,
                "--one",
                "--size",
                str(args.size),
                "--backend",
                backend,
                "--embedder",
                args.embedder,
                "--text",
                text,
                "--max-backlog-s",
                str(args.max_backlog_s),
                "--gap-ms",
                str(gap),
            ]
            if args.profile and src is None:
                cmd += ["--profile", f"{args.profile}.{backend}.{text}.{gap:g}"]
            fresh = None
            if url and backend == "postgres":
                fresh = f"backlog_{len(rows)}" if stop is not None else None
                cmd += ["--database-url", _database(url, fresh) if fresh else url]
            env = {**os.environ, "PYTHONPATH": src} if src else None
            load = os.getloadavg()[0]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if fresh:
                _database(url, fresh, drop=True)
            if out.returncode != 0:
                sys.exit(f"{label} {backend} {text} failed:\n{out.stderr[-4000:]}")
            r = {
                **json.loads(out.stdout.strip().splitlines()[-1]),
                "code": label,
                "load_before": load,
                "load_after": os.getloadavg()[0],
            }
            rows.append(r)
            print(_line(label, r) + f"\n    load {r['load_before']:.2f} -> {r['load_after']:.2f}", flush=True)
        out_dir = Path(__file__).resolve().parent / "results"
        out_dir.mkdir(exist_ok=True)
        (out_dir / f"backlog_{'_'.join(args.backend)}_{'_'.join(args.text)}.json").write_text(
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

"""Writers across processes: N processes write to one store at once; how long does one write wait?

    flock /tmp/bench.lock python bench/writers_bench.py [--procs 8] [--seconds 60] \
        [--backend sqlite postgres] [--baseline-ref 83345d8] [--embedder static|none]

Each process opens the store as a separate server would (its own ``Memory``) and, until the time
is up, makes single writes back to back, alternating a governed ``remember knowledge`` and a
small ``ingest conversation`` (3 messages), all in one shared namespace (the worst case: on
PostgreSQL writers of one namespace queue on its advisory lock; on SQLite every writer of the
file queues on its one write lock). A write's wait is its whole call time, as the caller sees it.
Prints, per backend and per code version, the writes made and the p50/p99/max of one write's
wait. ``--baseline-ref`` runs the same workers on that commit's code (a temporary git worktree)
right before the current code, on the same machine, so the two are comparable.

Issue 23's campaign measured single writes waiting up to 27.9 s with 8 processes on SQLite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time, uuid
from memory_substrate import Memory, Settings
root, url, namespace, seconds, embedder, start_at = sys.argv[1:7]
settings = Settings(root=root, database_url=url or None, embedder=embedder)
mem = Memory(settings, namespace=namespace)
me = uuid.uuid4().hex[:8]
while time.time() < float(start_at):
    time.sleep(0.01)
end = time.time() + float(seconds)
waits, errors, i = [], 0, 0
while time.time() < end:
    i += 1
    t0 = time.perf_counter()
    try:
        if i % 2:
            mem.remember("knowledge", {"kind": "fact", "title": f"Writer {me} fact {i}",
                         "summary": f"Writer {me} recorded fact number {i} about the deploy schedule.",
                         "reason": "writers bench", "memory_source": "user_declared", "scope_refs": ["scope:bench"]})
        else:
            mem.ingest("conversation", {"title": f"chat {me} {i}", "messages": [
                {"role": "user", "name": "ana", "content": f"Writer {me} asks about deploy {i} on Tuesday."},
                {"role": "assistant", "name": "bot", "content": "Deploys happen on Tuesdays after the review."},
                {"role": "user", "name": "ana", "content": f"Noted for item {i}."}]})
    except Exception as exc:
        errors += 1
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
    waits.append(time.perf_counter() - t0)
mem.close()
print(json.dumps({"waits": waits, "errors": errors}))
"""


def _quantile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 1000) - 1]


def run(
    src: Path, backend: str, url: str | None, procs: int, seconds: float, embedder: str
) -> dict[str, Any]:
    """One run: ``procs`` writer processes on a fresh store (or namespace), code from ``src``."""
    root = tempfile.mkdtemp(prefix="writers-bench-")
    namespace = f"writers-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env["PYTHONPATH"] = str(src)
    db = url if backend == "postgres" else ""
    # Create the store once, so the workers measure writes and not the first migration.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memory_substrate import Memory, Settings; "
            "Memory(Settings(root=sys.argv[1], database_url=sys.argv[2] or None, embedder=sys.argv[3])).close()",
            root,
            db,
            embedder,
        ],
        env=env,
        check=True,
    )
    start_at = time.time() + 5.0
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, root, db, namespace, str(seconds), embedder, str(start_at)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(procs)
    ]
    waits: list[float] = []
    errors = 0
    for child in children:
        out, _ = child.communicate(timeout=seconds + 600)
        got = json.loads(out.strip().splitlines()[-1])
        waits.extend(got["waits"])
        errors += got["errors"]
    return {
        "writes": len(waits),
        "errors": errors,
        "writes_per_s": round(len(waits) / seconds, 1),
        "p50_s": round(_quantile(waits, 0.5), 3),
        "p99_s": round(_quantile(waits, 0.99), 3),
        "max_s": round(max(waits), 3),
    }


def _baseline_src(ref: str) -> Path:
    tree = Path(tempfile.gettempdir()) / f"writers-baseline-{ref}"
    if not tree.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref],
            check=True,
            capture_output=True,
        )
    return tree / "src"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--backend", choices=["sqlite", "postgres"], nargs="+", default=["sqlite", "postgres"])
    ap.add_argument("--embedder", default="static", help="static (default, as served) or none")
    ap.add_argument("--baseline-ref", default=None, help="git commit to run the same workers on, first")
    ap.add_argument("--database-url", default=None, help="PostgreSQL URL (default: start an embedded server)")
    args = ap.parse_args()
    url, stop = args.database_url, None
    if "postgres" in args.backend and url is None:
        sys.path.insert(0, str(ROOT))
        from tests.pg_server import running_postgres

        stop = running_postgres()
        url = stop.__enter__()
    versions = (
        [("baseline " + args.baseline_ref, _baseline_src(args.baseline_ref))] if args.baseline_ref else []
    )
    versions.append(("current", ROOT / "src"))
    rows = []
    try:
        for backend in args.backend:
            for label, src in versions:
                r = {
                    "backend": backend,
                    "code": label,
                    "procs": args.procs,
                    "seconds": args.seconds,
                    **run(src, backend, url, args.procs, args.seconds, args.embedder),
                }
                rows.append(r)
                print(
                    f"{backend:8s} {label:18s} {r['writes']:6d} writes ({r['writes_per_s']}/s, {r['errors']} errors)  "
                    f"write wait p50 {r['p50_s']:.3f} s  p99 {r['p99_s']:.3f} s  max {r['max_s']:.3f} s",
                    flush=True,
                )
    finally:
        if stop is not None:
            stop.__exit__(None, None, None)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

"""Import a generated reference-MCP-memory file of a given size; report wall time, throughput and
peak memory beside the file size (the importer streams: peak memory must not grow with the file).

    python bench/import_bench.py --mb 50 [--embedder static|none] [--baseline-ref 01a71e1 --baseline-mb 1]

Baselines in the same run: reading and JSON-parsing every line of the file (the floor of any
importer), and with ``--baseline-ref`` the importer of that git commit (checked out into a
temporary worktree) on a generated file of ``--baseline-mb`` MB, run in a subprocess, beside
this tree's importer on the same smaller file (records/s of both and their ratio).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_mcp_memory import generate

from memory_substrate import Memory, Settings
from memory_substrate.importers.mcp_memory import import_mcp_memory

ROOT = Path(__file__).resolve().parents[1]
MEASURE = """
import json, sys, tempfile, time, resource
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from gen_mcp_memory import generate
from memory_substrate import Memory, Settings
from memory_substrate.importers.mcp_memory import import_mcp_memory
import memory_substrate
with tempfile.TemporaryDirectory(prefix="i16-") as tmp:
    path = Path(tmp) / "memory.jsonl"
    shape = generate(path, int(float(sys.argv[1]) * 1_000_000))
    mem = Memory(Settings(root=Path(tmp) / "store", embedder=sys.argv[2]), namespace="bench")
    t = time.perf_counter()
    c = time.process_time()
    import_mcp_memory(mem, path)
    s = time.perf_counter() - t
    cpu = time.process_time() - c
    mem.close()
print(json.dumps({"package": memory_substrate.__file__, "import_s": round(s, 2), "cpu_s": round(cpu, 2),
                  "records_per_s": round((shape["entities"] + shape["relations"]) / s, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def measure_in(src: Path, mb: float, embedder: str) -> dict[str, object]:
    """Import a generated ``mb`` MB file with the package under ``src``, in a fresh process."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(mb), embedder, str(ROOT / "bench")],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def baseline(ref: str, mb: float, embedder: str) -> dict[str, object]:
    import subprocess

    tree = Path(tempfile.gettempdir()) / f"i16-baseline-{ref}"
    if not tree.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref],
            check=True,
            capture_output=True,
        )
    old = measure_in(tree / "src", mb, embedder)
    new = measure_in(ROOT / "src", mb, embedder)
    return {
        "ref": ref,
        "file_mb": mb,
        "old": old,
        "new": new,
        "speedup": round(float(new["records_per_s"]) / float(old["records_per_s"]), 2),  # type: ignore[arg-type]
        # Wall time swings with the load of a shared machine; CPU time is the steadier ratio.
        "cpu_speedup": round(float(old["cpu_s"]) / float(new["cpu_s"]), 2),
    }  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--baseline-ref", default=None, help="git commit whose importer to time on --baseline-mb")
    ap.add_argument("--baseline-mb", type=float, default=1.0)
    args = ap.parse_args()
    compared = baseline(args.baseline_ref, args.baseline_mb, args.embedder) if args.baseline_ref else None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.jsonl"
        shape = generate(path, int(args.mb * 1_000_000))
        t = time.perf_counter()
        with path.open("rb") as fh:
            lines = sum(1 for line in fh if json.loads(line))
        parse_s = time.perf_counter() - t
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        mem = Memory(Settings(root=Path(tmp) / "store", embedder=args.embedder), namespace="bench")
        t = time.perf_counter()
        result = import_mcp_memory(mem, path)
        import_s = time.perf_counter() - t
        t = time.perf_counter()
        again = import_mcp_memory(mem, path)
        reimport_s = time.perf_counter() - t
        mem.close()
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mb = shape["bytes"] / 1e6
    print(
        json.dumps(
            {
                "file_mb": round(mb, 1),
                "lines": lines,
                **shape,
                "embedder": args.embedder,
                "baseline_read_and_parse_s": round(parse_s, 2),
                "import_s": round(import_s, 1),
                "import_mb_per_s": round(mb / import_s, 3),
                "records_per_s": round((shape["entities"] + shape["relations"]) / import_s, 1),
                "reimport_unchanged_s": round(reimport_s, 2),
                "reimport_status": again["status"],
                "peak_rss_mb_before_import": round(rss_before, 1),
                "peak_rss_mb_after": round(rss_after, 1),
                "counts": result["counts"],
                "skipped": result["skipped_count"],
                **({"baseline": compared} if compared else {}),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

"""Import a generated reference-MCP-memory file of a given size; report wall time, throughput and
peak memory beside the file size (the importer streams: peak memory must not grow with the file).

    python bench/import_bench.py --mb 50 [--embedder static|none]

Baseline in the same run: reading and JSON-parsing every line of the file (the floor of any importer).
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--embedder", default="static")
    args = ap.parse_args()
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
    print(json.dumps({
        "file_mb": round(mb, 1), "lines": lines, **shape, "embedder": args.embedder,
        "baseline_read_and_parse_s": round(parse_s, 2),
        "import_s": round(import_s, 1), "import_mb_per_s": round(mb / import_s, 3),
        "records_per_s": round((shape["entities"] + shape["relations"]) / import_s, 1),
        "reimport_unchanged_s": round(reimport_s, 2), "reimport_status": again["status"],
        "peak_rss_mb_before_import": round(rss_before, 1), "peak_rss_mb_after": round(rss_after, 1),
        "counts": result["counts"], "skipped": result["skipped_count"],
    }, indent=2))


if __name__ == "__main__":
    main()

"""Import a generated folder of Markdown notes (wiki links, #tags, frontmatter); report notes/s,
the unchanged re-import time and peak memory, beside a baseline commit's importer on the same
folder when ``--baseline-ref`` is given (run in a subprocess from a temporary git worktree).

    python bench/import_markdown_bench.py --notes 500 [--baseline-ref 01a71e1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_mcp_memory import vocabulary

ROOT = Path(__file__).resolve().parents[1]
MEASURE = """
import json, resource, sys, tempfile, time
from pathlib import Path
from memory_substrate import Memory, Settings
from memory_substrate.importers.markdown_notes import import_markdown
with tempfile.TemporaryDirectory(prefix="i16-md-") as tmp:
    mem = Memory(Settings(root=Path(tmp) / "store", embedder=sys.argv[2]), namespace="bench")
    t = time.perf_counter()
    first = import_markdown(mem, sys.argv[1])
    s = time.perf_counter() - t
    t = time.perf_counter()
    again = import_markdown(mem, sys.argv[1])
    r = time.perf_counter() - t
    mem.close()
print(json.dumps({"import_s": round(s, 2), "notes_per_s": round(first["counts"].get("notes_new", 0) / s, 1),
                  "reimport_unchanged_s": round(r, 2), "reimport_status": again["status"],
                  "counts": first["counts"], "skipped": first["skipped_count"],
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def generate(folder: Path, notes: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    vocab = vocabulary(rng, 3000)
    names = [f"{rng.choice(vocab).title()} {i:05d}" for i in range(notes)]
    for name in names:
        paras = []
        for _ in range(rng.randint(3, 8)):
            words = rng.choices(vocab, k=rng.randint(40, 120))
            for _ in range(rng.randint(0, 3)):
                words.insert(rng.randrange(len(words)), f"[[{rng.choice(names)}]]")
            if rng.random() < 0.5:
                words.insert(rng.randrange(len(words)), f"#{rng.choice(vocab[:40])}")
            paras.append(" ".join(words))
        front = f"---\ntitle: {name}\ntags: [{rng.choice(vocab[:40])}]\n---\n"
        (folder / f"{name}.md").write_text(
            front + f"# {name}\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8"
        )


def measure_in(src: Path, folder: Path, embedder: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder), embedder],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--baseline-ref", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="i16-md-") as tmp:
        folder = Path(tmp) / "vault"
        folder.mkdir()
        generate(folder, args.notes)
        mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        out: dict[str, object] = {
            "notes": args.notes,
            "folder_mb": round(mb, 2),
            "this_tree": measure_in(ROOT / "src", folder, args.embedder),
        }
        if args.baseline_ref:
            tree = Path(tempfile.gettempdir()) / f"i16-baseline-{args.baseline_ref}"
            if not tree.exists():
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.baseline_ref],
                    check=True,
                    capture_output=True,
                )
            base = measure_in(tree / "src", folder, args.embedder)
            out["baseline"] = {"ref": args.baseline_ref, **base}
            new, old = out["this_tree"], base
            out["speedup"] = round(float(new["notes_per_s"]) / float(old["notes_per_s"]), 2)  # type: ignore[index,arg-type]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

"""Build a store of about 10k conversation turns, as a project's hooks would have captured them,
to time the hooks' cold and warm paths on (bench/cli_startup_bench.py, bench/warm_hook_bench.py).

    .venv/bin/python bench/hook_store.py --root /tmp/hook-store [--turns 10000] [--namespace NS | --project DIR]

The turns are LoCoMo's conversations (/work/shared/data/locomo, evaluation only, never shipped):
each session is one thread (``locomo:<sample>:<session>:<pass>``), captured as
``Memory.ingest("conversation")`` captures a session, and the conversations are replayed in
further passes (new thread ids, a first line marked with the pass) until ``--turns`` are stored. Vectors are made during capture,
as a one-shot command makes them, with the default embedder unless ``--embedder``. ``--project``
stores them in the namespace the hooks give that folder (made a git repository if it is none).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

DATA = Path("/work/shared/data/locomo/locomo_dev.json")


def sessions(data: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(thread name, messages) of every LoCoMo session, in the data's order."""
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and k.count("_") == 1)
        for n in numbers:
            turns = conv[f"session_{n}"]
            if not turns:
                continue
            messages = []
            for turn in turns:
                text = turn["text"] + (
                    f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                )
                role = "user" if turn["speaker"] == conv["speaker_a"] else "assistant"
                messages.append(
                    {
                        "role": role,
                        "name": turn["speaker"],
                        "content": text,
                        "metadata": {"dia_id": turn["dia_id"]},
                    }
                )
            yield f"{sample['sample_id']}:{n}", messages


def build(root: Path, namespace: str, turns: int, embedder: str | None, data: Path) -> dict[str, Any]:
    from memory_substrate import Memory, Settings

    overrides: dict[str, Any] = {"root": root, "namespace": namespace, "embed_in_background": False}
    if embedder:
        overrides["embedder"] = embedder
    stored = threads = 0
    started = time.perf_counter()
    with Memory(Settings(**overrides)) as memory:
        passes = 0
        while stored < turns:
            for name, messages in sessions(data):
                if stored >= turns:
                    break
                messages = [dict(m) for m in messages[: turns - stored]]
                if passes:  # the same session again is a no-op capture: its first line differs per pass
                    messages[0]["content"] = f"(retold, pass {passes}) {messages[0]['content']}"
                result = memory.ingest(
                    "conversation",
                    {
                        "thread_id": f"locomo:{name}:{passes}",
                        "title": f"session {name} (pass {passes})",
                        "messages": messages,
                    },
                    {},
                )
                if result.get("status") in ("failed", "partial", "noop"):
                    raise SystemExit(f"ingest failed: {json.dumps(result)[:400]}")
                stored += len(messages)
                threads += 1
                if threads % 50 == 0:
                    print(
                        f"{stored} turns, {threads} threads, {time.perf_counter() - started:.0f} s",
                        file=sys.stderr,
                    )
            passes += 1
    return {
        "root": str(root),
        "namespace": namespace,
        "turns": stored,
        "threads": threads,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--project", type=Path, default=None, help="the namespace the hooks give this folder")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    namespace = args.namespace if args.project is None else project_namespace_of(args.project, args.root)
    print(json.dumps(build(args.root, namespace, args.turns, args.embedder, args.data)))


def project_namespace_of(project: Path, root: Path) -> str:
    from memory_substrate.hooks.config import load
    from memory_substrate.hooks.project import project_namespace

    (project / ".git").mkdir(parents=True, exist_ok=True)
    return project_namespace(str(project), load(root, environ={}))


if __name__ == "__main__":
    main()

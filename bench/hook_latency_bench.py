"""Cold latency of ``memory-substrate hook claude-code`` per event on a store of N captured turns.

Builds one project's memory from synthetic Claude Code transcripts (``--sessions`` of
``--turns`` turns each, through ``memory-substrate backfill``, whose throughput it reports too),
then runs each event ``--runs`` times as a fresh process, the way Claude Code runs a command hook,
and prints p50 / p95 wall time per event. The client's own record of hook durations is measured
by the end-to-end benchmark (bench/sessions_bench.py); this isolates the command.

    python bench/hook_latency_bench.py --sessions 100 --turns 100 --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOPICS = [
    ("checkout", "payments", "timeout", "Stripe", "retry"),
    ("search", "index", "Elasticsearch", "shard", "reindex"),
    ("email", "Postmark", "bounce", "template", "webhook"),
    ("auth", "OAuth", "token", "refresh", "session"),
    ("billing", "invoice", "VAT", "proration", "ledger"),
    ("deploy", "Kubernetes", "helm", "rollout", "canary"),
    ("cache", "Redis", "eviction", "TTL", "warmup"),
    ("queue", "Kafka", "consumer", "lag", "partition"),
]
VERBS = ["fixed", "investigated", "refactored", "measured", "documented", "reverted", "tested", "profiled"]


def _turn(rng: random.Random, topic: tuple[str, ...], i: int) -> str:
    a, b, c, d, e = topic
    n = rng.randint(2, 900)
    return rng.choice(
        [
            f"The {a} {b} call {rng.choice(VERBS)}: {c} was {n} ms and the {d} path now uses {e}.",
            f"Why does {a} fail on {b} when {c} passes {n}? Check the {d} logs for {e} errors.",
            f"[tool Bash] pytest tests/{a}/test_{b}.py -k {c}",
            f"[result] {n} passed, {rng.randint(0, 3)} failed in {rng.random() * 9:.2f}s ({d} {e})",
            f"Decision {i}: keep {c} at {n} for {a}; {d} owns the {e} follow-up.",
        ]
    )


def _transcript(path: Path, sid: str, cwd: Path, turns: int, rng: random.Random) -> None:
    topic = rng.choice(TOPICS)
    lines = []
    for i in range(turns):
        ts = f"2026-11-{1 + i // 600:02d}T{rng.randint(0, 23):02d}:{i % 60:02d}:00.000Z"
        base = {
            "sessionId": sid,
            "cwd": str(cwd),
            "gitBranch": "main",
            "version": "2.1.328",
            "uuid": f"{sid}-{i}",
            "timestamp": ts,
        }
        if i % 2 == 0:
            lines.append(
                {**base, "type": "user", "message": {"role": "user", "content": _turn(rng, topic, i)}}
            )
        else:
            lines.append(
                {
                    **base,
                    "type": "assistant",
                    "message": {
                        "id": f"m{i}",
                        "role": "assistant",
                        "content": [{"type": "text", "text": _turn(rng, topic, i)}],
                    },
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(x) + "\n" for x in lines)


def _exe() -> list[str]:
    exe = Path(sys.executable).with_name("memory-substrate")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memory_substrate.cli.main"]


def _run(event: dict[str, object], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        [*_exe(), "hook", "claude-code"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return time.perf_counter() - started, proc.stdout


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: a temporary one)")
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="hook-bench-"))
    home, root, repo = work / "home", work / "store", work / "shop"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(HOME=str(home), MEMORY_SUBSTRATE_ROOT=str(root))
    rng = random.Random(7)
    projects = home / ".claude" / "projects" / "-shop"
    if not (root / "memory.sqlite3").exists():
        for s in range(args.sessions):
            _transcript(projects / f"bench-{s}.jsonl", f"bench-{s}", repo, args.turns, rng)
        started = time.perf_counter()
        done = subprocess.run(
            [*_exe(), "backfill", "claude-code", "--progress", "none"],
            capture_output=True,
            text=True,
            env=env,
            timeout=3600,
        )
        summary = json.loads(done.stdout)
        print(
            json.dumps(
                {
                    "backfill": {
                        k: summary[k]
                        for k in (
                            "sessions",
                            "turns",
                            "added",
                            "errors",
                            "seconds",
                            "sessions_per_s",
                            "turns_per_s",
                        )
                    },
                    "wall_s": round(time.perf_counter() - started, 1),
                }
            )
        )
    prompts = {
        "covered": "Why does checkout fail on payments when the timeout passes?",
        "uncovered": "How long should sourdough dough rest before baking?",
    }
    results: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    for r in range(args.runs):
        sid = f"live-{r}-{time.time_ns()}"
        path = projects / f"{sid}.jsonl"
        event = {
            "session_id": sid,
            "transcript_path": str(path),
            "cwd": str(repo),
            "permission_mode": "default",
        }
        for name, extra in (
            ("SessionStart", {"source": "startup"}),
            ("UserPromptSubmit covered", {"prompt": prompts["covered"]}),
            ("UserPromptSubmit uncovered", {"prompt": prompts["uncovered"]}),
        ):
            seconds, out = _run({**event, "hook_event_name": name.split()[0], **extra}, env)
            results.setdefault(name, []).append(seconds)
            sizes.setdefault(name, []).append(len(out))
        _transcript(path, sid, repo, 20, rng)
        for name in ("Stop", "Stop unchanged"):
            seconds, _ = _run({**event, "hook_event_name": "Stop"}, env)
            results.setdefault(name, []).append(seconds)
        _transcript(path, sid, repo, 10, rng)
        seconds, _ = _run({**event, "hook_event_name": "Stop"}, env)
        results.setdefault("Stop grown", []).append(seconds)
    for name, values in results.items():
        print(
            f"{name:28s} p50 {_pct(values, 0.5):.3f} s  p95 {_pct(values, 0.95):.3f} s  max {max(values):.3f} s"
            f"  (n={len(values)}{', printed ' + str(int(statistics.mean(sizes[name]))) + ' chars' if name in sizes else ''})"
        )
    print(f"store: {root}")


if __name__ == "__main__":
    main()

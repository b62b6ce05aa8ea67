"""Wall time of short `memory-substrate` commands started cold, as a hook or a shell runs them.

    .venv/bin/python bench/cli_startup_bench.py [--runs 20] [--src DIR] [--root STORE] [--namespace NS]

Each command is a fresh process running the installed entry-point script; the figure is the
median (and p90) of ``--runs`` runs after one untimed warm-up run (the OS file cache warm, as on
a machine in use). ``--src DIR`` puts another checkout's ``src`` first on the path, to time a
baseline (``git archive HEAD src | tar -x -C /tmp/base`` then ``--src /tmp/base/src``).

With ``--root`` (a store, e.g. one bench/hook_store.py built) it also times what the hooks run
cold: ``query context`` at the SessionStart and UserPromptSubmit budgets and an
``ingest conversation`` that appends to a session's thread, with the peak RSS of each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

SCRIPT = shutil.which("memory-substrate", path=str(Path(sys.executable).parent)) or "memory-substrate"


def _run(args: list[str], env: dict[str, str], stdin: str | None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run; fails loudly on a non-zero exit.

    The CPU time is what the wall time would be on an idle core: the command is single-threaded
    and reads a store already in the file cache, so on a loaded machine it is the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, SCRIPT, *args], env=env, input=stdin, capture_output=True, text=True
    )
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _peak_mib(args: list[str], env: dict[str, str], stdin: str | None) -> float | None:
    """Peak RSS of one run, read with GNU time where it is installed."""
    if not Path("/usr/bin/time").exists():
        return None
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", sys.executable, SCRIPT, *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
    )
    try:
        return round(int(done.stderr.strip().splitlines()[-1]) / 1024, 1)
    except (ValueError, IndexError):
        return None


def _time(
    label: str,
    args: list[str],
    env: dict[str, str],
    runs: int,
    stdin: Callable[[], str | None] = lambda: None,
) -> dict[str, object]:
    _run(args, env, stdin())  # warm-up: the file cache
    runs_ = [_run(args, env, stdin()) for _ in range(runs)]
    samples = sorted(wall for wall, _ in runs_)
    cpu = sorted(c for _, c in runs_)
    row = {
        "command": label,
        "runs": runs,
        "median_ms": round(statistics.median(samples) * 1000, 1),
        "p90_ms": round(samples[min(len(samples) - 1, int(0.9 * len(samples)))] * 1000, 1),
        "min_ms": round(samples[0] * 1000, 1),
        "cpu_median_ms": round(statistics.median(cpu) * 1000, 1),
        "peak_rss_mib": _peak_mib(args, env, stdin()),
        "load_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--src", type=Path, default=None, help="a checkout's src/ to put first on the path")
    parser.add_argument("--root", type=Path, default=None, help="a store to time the hooks' commands on")
    parser.add_argument("--namespace", default="default")
    parser.add_argument(
        "--prompt", default="Why did the deploy to staging fail last week, and who owns the fix?"
    )
    parsed = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    if parsed.src is not None:
        env["PYTHONPATH"] = str(parsed.src.resolve())
    env["MEMORY_SUBSTRATE_ROOT"] = str(parsed.root or Path("/tmp/cli-startup-bench-empty"))
    _time("--version", ["--version"], env, parsed.runs)
    _time("--help", ["--help"], env, parsed.runs)
    if parsed.root is None:
        return
    ns = ["--namespace", parsed.namespace]
    start = json.dumps(
        {"task": "open work, current decisions and what recent sessions did", "budget_tokens": 800}
    )
    prompt = json.dumps({"task": parsed.prompt, "budget_tokens": 1000})
    _time("query context (SessionStart, 800 tokens)", ["query", "context", start, *ns], env, parsed.runs)
    _time(
        "query context (UserPromptSubmit, 1000 tokens)", ["query", "context", prompt, *ns], env, parsed.runs
    )
    turns = iter(range(1, 1_000_000))

    def conversation() -> str:
        step = next(turns)
        return json.dumps(
            {
                "thread_id": "bench:cli-startup",
                "title": "bench session",
                "messages": [
                    {
                        "role": "user",
                        "content": f"Step {step}: run the test suite again after the fix to the cache key.",
                    },
                    {
                        "role": "assistant",
                        "content": f"Ran it (step {step}); 212 passed, the flaky cache test passes now.",
                    },
                ],
            }
        )

    # Each run appends two new turns to one thread, as a Stop hook's capture does.
    _time(
        "ingest conversation (Stop, 2 new turns)",
        ["ingest", "conversation", "@-", *ns],
        env,
        parsed.runs,
        stdin=conversation,
    )


if __name__ == "__main__":
    main()

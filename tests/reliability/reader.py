"""Child process for the concurrency test: reads for DURATION seconds, then prints a JSON summary.

    python -m tests.reliability.reader DURATION

Cycles through search, recent, context and page reads; counts calls and collects the text of
every error (a reader must never see "database is locked" or any other failure).
"""

from __future__ import annotations

import json
import sys
import time

from memory_substrate import Memory, Settings


def main() -> None:
    duration = float(sys.argv[1])
    calls, errors, latencies = 0, [], []
    deadline = time.monotonic() + duration
    with Memory(Settings()) as memory:
        seen: list[str] = []
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                step = calls % 4
                if step == 0:
                    hits = memory.query("search", {"query": "crash survive words"}, {"max_items": 5})
                    seen = [h["id"] for h in hits["items"]] or seen
                elif step == 1:
                    memory.query("recent", {}, {"max_items": 10})
                elif step == 2:
                    memory.query("context", {"task": "what must survive a crash"})
                elif seen:
                    memory.query("page", {"id": seen[0]})
                else:
                    memory.query("recent", {}, {"max_items": 1})
            except Exception as exc:  # reported, not raised: the parent asserts there are none
                errors.append(f"{type(exc).__name__}: {exc}")
            latencies.append(time.perf_counter() - started)
            calls += 1
    print(
        json.dumps(
            {
                "calls": calls,
                "errors": errors[:20],
                "error_count": len(errors),
                "seconds": duration,
                "latencies": latencies,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()

"""Child process for the crash and concurrency tests: acknowledged writes, one JSON line each.

    python -m tests.reliability.writer PREFIX COUNT

Store, namespace and backend come from MEMORY_SUBSTRATE_* (as for the CLI). Cycles through three
kinds of write: a conversation ingest (SEGMENTS messages), a knowledge item citing the last
ingested segment, and an atomic batch of BATCH knowledge items. A line is printed (and flushed)
only after the call returned, which is the moment the write is acknowledged to a user.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from memory_substrate import Memory, Settings

SEGMENTS = 6
BATCH = 3


def knowledge(title: str, **extra: object) -> dict[str, object]:
    return {
        "kind": "fact",
        "title": title,
        "summary": f"{title} is recorded and must survive a crash.",
        "reason": "reliability test",
        "memory_source": "user_declared",
        "scope_refs": ["scope:reliability"],
        **extra,
    }


def main() -> None:
    prefix, count = sys.argv[1], int(sys.argv[2])
    last_source: str | None = None
    with Memory(Settings()) as memory:
        for i in range(count):
            token = f"{prefix}x{i}"
            if i % 3 == 0 or last_source is None:
                messages = [
                    {
                        "role": "user" if j % 2 == 0 else "assistant",
                        "content": f"{token} turn {j} " + "words " * 40,
                    }
                    for j in range(SEGMENTS)
                ]
                out = memory.ingest("conversation", {"title": token, "messages": messages})
                last_source = out["source_id"]
                ack: dict[str, Any] = {"kind": "ingest", "token": token, "ids": [out["source_id"]]}
            elif i % 3 == 1:
                ref = {"source_id": last_source, "segment_id": "seg-1"}
                out = memory.remember("knowledge", knowledge(token, evidence_refs=[ref]))
                ack = {"kind": "remember", "token": token, "ids": [out["object_id"]]}
            else:
                entries = [
                    {"mode": "knowledge", "input_data": knowledge(f"{token}b{k}")} for k in range(BATCH)
                ]
                out = memory.remember("batch", {"entries": entries})
                ack = {"kind": "batch", "token": token, "ids": [r["object_id"] for r in out["results"]]}
            ack["t"] = time.time()
            print(json.dumps(ack), flush=True)


if __name__ == "__main__":
    main()

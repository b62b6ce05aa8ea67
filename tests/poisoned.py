"""A store as an older release left it: JSON columns holding bare ``Infinity`` or ``NaN`` tokens,
written directly with sqlite3 (PostgreSQL's json type never held them). For the repair, doctor
and export tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory_substrate import Memory, Settings
from tests.helpers import conversation, knowledge

MARK = "0.123456"  # a number in the rows to poison, replaced by a bare token in the database file


def poison(db: Path, token: str = "Infinity") -> int:
    """Replace MARK by ``token`` in the JSON columns holding it, as the old writer left them."""
    columns = {
        "objects": ["data"],
        "segments": ["metadata", "locator"],
        "audit_events": ["data"],
        "patches": ["summary"],
        "relations": ["payload"],
    }
    changed = 0
    with sqlite3.connect(db) as conn:
        for table, cols in columns.items():
            for col in cols:
                changed += conn.execute(
                    f"UPDATE {table} SET {col} = replace({col}, ?, ?) WHERE instr({col}, ?)",
                    (MARK, token, MARK),
                ).rowcount
    return changed


def seed(memory: Memory) -> str:
    chat = conversation(["the gateway p99 is under budget"])
    chat["messages"][0]["metadata"] = {"score": float(MARK)}
    memory.ingest("conversation", chat)
    return str(
        memory.remember(
            "knowledge",
            knowledge(
                title="Gateway latency budget",
                summary="The gateway p99 budget is 200 ms.",
                metadata={"score": float(MARK)},
                payload={"subject": "gateway", "predicate": "p99_budget", "value": float(MARK)},
            ),
        )["object_id"]
    )


def poisoned_store(root: Path) -> str:
    """A SQLite store at ``root`` whose knowledge object and message segment hold Infinity; the
    object's id."""
    with Memory(Settings(root=root, embedder="none"), namespace="default") as memory:
        object_id = seed(memory)
    assert poison(root / "memory.sqlite3") >= 2  # the object and the segment (audit events name, not copy)
    return object_id

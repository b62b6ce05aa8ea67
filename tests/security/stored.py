"""What a store holds, as text to search for secrets: the SQLite file's bytes (its write-ahead log
included), or every row of every PostgreSQL table as text (a row's text form decompresses what
PostgreSQL keeps compressed, and shows full-text vectors as their terms)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from memory_substrate import Memory
from memory_substrate.contracts.snapshot_export import export_snapshot
from memory_substrate.transfer import export_namespace


def stored_text(memory: Memory, backend: str, postgres_url: str | None) -> str:
    if backend == "sqlite":
        path = Path(memory.store.location)
        parts = [p.read_bytes() for p in (path, path.with_name(path.name + "-wal")) if p.exists()]
        return b"".join(parts).decode("utf-8", errors="replace")
    import psycopg

    assert postgres_url is not None
    with psycopg.connect(postgres_url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                " AND table_type = 'BASE TABLE'"
            )
        ]
        return "\n".join(
            str(row[0]) for table in tables for row in conn.execute(f'SELECT t::text FROM "{table}" t')
        )


def exports(memory: Memory) -> str:
    """The namespace in both export formats: the JSON Lines backup and a graph.v1 snapshot."""
    out = io.StringIO()
    export_namespace(memory.runtime, out)
    with memory.runtime.read_with_expired() as session:
        snapshot, _report = export_snapshot(session)
    return out.getvalue() + json.dumps(snapshot, ensure_ascii=False, default=str)


def leaked(texts: dict[str, Any], probes: list[str]) -> list[tuple[str, str]]:
    """(where, probe) for every probe found in any of the named texts (JSON-dumped when not text)."""
    found: list[tuple[str, str]] = []
    for where, value in texts.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        found.extend((where, p) for p in probes if p in text)
    return found

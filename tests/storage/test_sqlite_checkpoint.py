"""SQLite only: WAL checkpoints run on the store's own thread, not inside a request's COMMIT."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from memory_substrate.storage.sqlite.checkpoint import SAFETY_PAGES
from memory_substrate.storage.sqlite.store import SQLiteStore
from tests.storage.builders import doc, make_obj


def test_writes_are_checkpointed_in_the_background_and_close_stops_the_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.sqlite3")
    try:
        with store.write("ns") as s:
            auto = s.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
            for i in range(200):
                s.insert_object(
                    make_obj(f"know:{i}", title=f"object number {i}"), doc(title=f"object number {i}"), None
                )
        assert auto == SAFETY_PAGES  # the commit itself does not checkpoint at 1,000 pages
        deadline = time.monotonic() + 10
        while store._checkpointer.runs == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert store._checkpointer.runs >= 1
        other = sqlite3.connect(tmp_path / "m.sqlite3")
        try:
            busy, log, done = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        finally:
            other.close()
        assert (
            busy == 0 and log > 0 and done == log
        )  # the thread leaves no checkpoint busy or half done (runs >= 1 shows it ran)
        with store.read("ns") as s:
            assert s.get_object("know:199") is not None
    finally:
        store.close()
    thread = store._checkpointer._thread
    assert thread is not None and not thread.is_alive()
    # a closed store's checkpointer stays stopped
    store._checkpointer.poke()
    assert store._checkpointer._thread is thread

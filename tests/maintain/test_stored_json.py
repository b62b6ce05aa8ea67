"""Stored JSON that readers cannot use: ``doctor`` reports it and ``maintain repair`` mends it
(``export`` never writes it: tests/transfer/test_non_finite.py).

An older release stored NaN and Infinity as bare JSON tokens. On SQLite, which keeps JSON as
text, the row then failed ``json_extract`` in every search and context that touched it
("malformed JSON", a memory_internal_error for every caller). The poisoned store is built here
as that release left it: the row written directly with sqlite3. PostgreSQL's json type never
held such a row (the write failed); there the checks find nothing and a non-finite number
never reaches the database.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from memory_substrate import Memory, Settings
from memory_substrate.errors import StorageError
from memory_substrate.indexing import claim_key, search_doc
from memory_substrate.mcp.server import build_server
from memory_substrate.models import MemoryObject
from memory_substrate.util import new_id, now_iso
from tests.cli.test_cli import _run
from tests.helpers import ToolFailed, call
from tests.poisoned import poisoned_store, seed

pytestmark = pytest.mark.anyio


@pytest.fixture
def poisoned(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "root"
    return root, poisoned_store(root)


async def test_doctor_reports_a_poisoned_row_and_repair_makes_search_and_context_work(
    poisoned: tuple[Path, str],
) -> None:
    root, object_id = poisoned
    with Memory(Settings(root=root, embedder="none"), namespace="default") as memory:
        async with Client(build_server(memory)) as c:
            with pytest.raises(ToolFailed) as broken:  # the reproduction: one row breaks the namespace
                await call(c, "memory_query", "search", {"query": "gateway latency"})
            assert broken.value.code == "memory_internal_error"

    tmp = root.parent
    doctor = _run(tmp, "doctor")
    assert doctor.returncode == 1, doctor.stderr
    report = json.loads(doctor.stdout)
    assert report["ok"] is False and report["stored_json"]["rows"] >= 2, report
    assert any("NaN or Infinity" in p and "maintain repair" in p for p in report["problems"]), report[
        "problems"
    ]
    sample = {(r["table"], r["column"]): r for r in report["stored_json"]["sample"]}
    assert sample[("objects", "data")]["key"] == {"id": object_id}
    assert set(sample[("objects", "data")]["fields"]) == {"metadata.score", "payload.value"}
    assert sample[("segments", "metadata")]["fields"] == ["metadata.score"]  # the message's own metadata

    with Memory(Settings(root=root, embedder="none"), namespace="default") as memory:
        async with Client(build_server(memory)) as c:
            plan = await call(c, "memory_maintain", "repair", {})
            assert plan["status"] == "dry_run" and plan["counts"]["stored_json_rewritten"] >= 2, plan
            done = await call(c, "memory_maintain", "repair", {}, {"apply": True})
            assert done["status"] == "applied", done
            assert done["counts"]["stored_json_rewritten"] == plan["counts"]["stored_json_rewritten"]
            assert done["counts"]["stored_json_unreadable"] == 0
            rows = {(r["table"], r["column"]) for r in done["repairs"]["stored_json"]}
            assert {("objects", "data"), ("segments", "metadata")} <= rows
            found = await call(c, "memory_query", "search", {"query": "gateway latency"})
            assert object_id in [item["id"] for item in found["items"]]
            context = await call(c, "memory_query", "context", {"task": "gateway latency budget"})
            assert context["result_type"]
            segments = await call(
                c, "memory_query", "search", {"query": "gateway p99"}, {"result_unit": "segment"}
            )
            assert segments["result_type"]
            again = await call(c, "memory_maintain", "repair", {})
            assert again["counts"]["stored_json_rewritten"] == 0
            audit = await call(c, "memory_maintain", "audit", {"object_id": object_id})
            assert "repair_stored_json" in [e["action"] for e in audit["events"]]
        obj = memory.query("page", {"id": object_id}, {"detail": "full"})["object"]
        assert obj["metadata"]["score"] is None and obj["payload"]["value"] is None, obj
    assert _run(tmp, "doctor").returncode == 0


def test_text_that_is_not_json_is_reported_and_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with Memory(Settings(root=root, embedder="none"), namespace="default") as memory:
        seed(memory)
    with sqlite3.connect(root / "memory.sqlite3") as conn:
        # The conversation's extraction job: a record no read of search or context touches.
        assert conn.execute("UPDATE jobs SET data = '{\"cut short'").rowcount == 1
    with Memory(Settings(root=root, embedder="none"), namespace="default") as memory:
        result = memory.maintain("repair", {}, {"apply": True})
        assert (
            result["counts"]["stored_json_unreadable"] == 1 and result["counts"]["stored_json_rewritten"] == 0
        )
        row = result["repairs"]["stored_json"][0]
        assert row["problem"] == "not_json" and row["table"] == "jobs" and "fields" not in row, row
    report = json.loads(_run(tmp_path, "doctor").stdout)
    assert report["ok"] is False and "text that is not JSON" in " ".join(report["problems"])


def test_no_store_keeps_a_non_finite_number_written_below_validation(memory: Memory) -> None:
    """The stores' own writer is strict JSON: a NaN made inside the server is refused at write,
    with a typed error, and nothing of the transaction stays (both backends)."""
    now = now_iso()
    obj = MemoryObject(
        id=new_id("knowledge"),
        object_type="knowledge",
        kind="fact",
        status="active",
        title="t",
        summary="s",
        created_at=now,
        updated_at=now,
        metadata={"score": math.nan},
    )
    with (
        pytest.raises(StorageError, match="non-finite number"),
        memory.runtime.store.write(memory.namespace) as session,
    ):
        session.insert_object(obj, search_doc(obj), claim_key(obj))
    with memory.runtime.read() as session:
        assert session.count_objects() == [] and session.stored_json_problems() == []

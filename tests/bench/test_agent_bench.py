"""bench/agent_bench.py: its data files follow bench/data/agent/FORMAT.md, and the harness maps
every label to store ids through MCP and cuts the search baseline at the budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from agent_bench import CLASSES, DATA_DIR, cut, run_file, summarise

DATA_FILES = sorted(DATA_DIR.glob("*.json"))
OPS = {"conversation", "knowledge", "supersede", "work_item", "work_update", "procedure", "repo", "doc"}


def labels_of(data: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for ev in data["timeline"]:
        if ev["op"] == "conversation":
            out |= {f"{ev['id']}#{i}" for i in range(len(ev["turns"]))}
        elif ev["op"] == "repo":
            out |= {f"{ev['id']}:{path}" for path in ev["files"]}
        elif ev["op"] in {"knowledge", "work_item", "procedure", "doc"}:
            out.add(ev["id"])
    return out


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.name)
def test_data_file_follows_the_format(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert {ev["op"] for ev in data["timeline"]} <= OPS
    known = labels_of(data)
    titles = [
        ev["title"].lower() for ev in data["timeline"] if ev["op"] in {"knowledge", "work_item", "procedure"}
    ]
    tasks = data["tasks"]
    assert len({t["id"] for t in tasks}) == len(tasks)
    for task in tasks:
        assert task["class"] in CLASSES, task
        assert set(task["required"]) | set(task["forbidden"]) <= known, task["id"]
        assert not set(task["required"]) & set(task["forbidden"]), task["id"]
        assert bool(task.get("uncovered")) == (not task["required"]), task["id"]
        assert not any(title in task["task"].lower() for title in titles), task["id"]  # no title copied


def test_the_dev_set_is_large_and_covers_every_class() -> None:
    data = json.loads((DATA_DIR / "ledgerline.json").read_text(encoding="utf-8"))
    tasks = data["tasks"]
    assert len(tasks) >= 80
    assert {t["class"] for t in tasks} == set(CLASSES)
    assert 8 <= sum(bool(t["uncovered"]) for t in tasks) <= 15
    episodes = [len(ev["episodes"]) for ev in data["timeline"] if ev["op"] == "procedure"]
    assert 3 in episodes and 1 in episodes  # earned and unproven procedures both present


def test_cut_stops_at_the_first_unit_that_does_not_fit() -> None:
    units = [("alpha beta\n", {"a"}), ("gamma " * 50 + "\n", {"b"}), ("delta\n", {"c"})]
    keys, used = cut(units, 20)
    assert keys == {"a"} and 0 < used <= 20
    keys, used = cut(units, 10_000)
    assert keys == {"a", "b", "c"}


TINY = {
    "name": "tiny",
    "now": "2026-06-30T12:00:00Z",
    "timeline": [
        {
            "op": "conversation",
            "id": "c-a",
            "day": 10,
            "title": "Refund incident",
            "turns": [
                {"speaker": "Ana", "text": "Partial refunds return 409 since the deploy."},
                {"speaker": "Bo", "text": "The key is the charge id alone, so two partial refunds collide."},
            ],
        },
        {
            "op": "conversation",
            "id": "c-b",
            "day": 9,
            "title": "Backlog",
            "turns": [{"speaker": "Ana", "text": "Drained the webhook queue and replayed the DLQ."}],
        },
        {
            "op": "conversation",
            "id": "c-c",
            "day": 8,
            "title": "Backlog again",
            "turns": [{"speaker": "Bo", "text": "Webhook queue drained, DLQ replayed."}],
        },
        {
            "op": "conversation",
            "id": "c-d",
            "day": 7,
            "title": "Third backlog",
            "turns": [{"speaker": "Cy", "text": "Drain the webhook queue, replay the DLQ."}],
        },
        {
            "op": "knowledge",
            "id": "k-old",
            "day": 9,
            "kind": "decision",
            "title": "Refund keys",
            "summary": "Refund keys are the charge id.",
            "memory_source": "user_declared",
        },
        {
            "op": "knowledge",
            "id": "k-new",
            "day": 8,
            "kind": "decision",
            "title": "Refund keys with request id",
            "summary": "Refund keys are the charge id plus the refund request id.",
            "memory_source": "user_declared",
            "evidence": ["c-a#1"],
        },
        {"op": "supersede", "day": 8, "old": "k-old", "new": "k-new", "reason": "partial refunds"},
        {
            "op": "knowledge",
            "id": "k-seen",
            "day": 8,
            "kind": "fact",
            "title": "Refund error rate",
            "summary": "2% of refund calls failed.",
            "memory_source": "observed",
            "evidence": ["c-a#0"],
        },
        {
            "op": "work_item",
            "id": "w-a",
            "day": 8,
            "kind": "bug",
            "title": "Partial refund 409",
            "summary": "Fix and test.",
            "status": "open",
        },
        {"op": "work_update", "day": 5, "id": "w-a", "status": "done", "reason": "merged"},
        {
            "op": "procedure",
            "id": "p-a",
            "day": 6.9,
            "kind": "workflow",
            "title": "Replay the webhook DLQ",
            "text": "Drain the queue; replay the DLQ.",
            "episodes": ["c-b", "c-c#0", "c-d"],
        },
        {
            "op": "procedure",
            "id": "p-b",
            "day": 6.9,
            "kind": "workflow",
            "title": "Restart the refund worker",
            "text": "Restart it.",
            "episodes": ["c-a"],
        },
        {
            "op": "repo",
            "id": "r-x",
            "day": 3,
            "files": {"src/refunds.py": "def refund(charge_id, request_id):\n    return charge_id\n"},
        },
        {
            "op": "doc",
            "id": "d-x",
            "day": 3,
            "title": "Runbook",
            "path": "runbook.md",
            "content": "# Runbook\n\nReplay the DLQ.\n",
        },
    ],
    "tasks": [
        {
            "id": "t1",
            "class": "debug",
            "task": "Partial refunds are failing with a conflict again",
            "required": ["k-new", "c-a#1", "r-x:src/refunds.py", "p-a", "d-x", "w-a"],
            "forbidden": ["k-old", "p-b"],
        },
        {
            "id": "t2",
            "class": "chat",
            "task": "Where should we eat tonight?",
            "required": [],
            "forbidden": [],
            "uncovered": True,
        },
    ],
}


def test_a_run_maps_every_label_and_keeps_packages_within_budget(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    res = anyio.run(run_file, path, [200, 4096], "static", None)
    assert res["errors"] == []
    assert (
        res["types"]["c-a#1"] == "turn"
        and res["types"]["k-new"] == "knowledge"
        and res["types"]["w-a"] == "work_item"
    )
    assert (
        res["types"]["p-a"] == "procedure"
        and res["types"]["r-x:src/refunds.py"] == "file"
        and res["types"]["d-x"] == "file"
    )
    for rec in res["records"]:
        assert rec["unresolved"] == []
        for system in ("compiler", "search"):
            assert 0 <= rec[f"{system}@200"]["tokens"] <= 200
            assert 0 <= rec[f"{system}@4096"]["tokens"] <= 4096
    first = res["records"][0]
    # at 4,096 tokens search returns the whole tiny store: every required label, and the superseded one
    assert first["search@4096"]["miss"] == [] and "k-old" in first["search@4096"]["forbidden"]
    summary = summarise(res["records"], res["types"], [200, 4096])
    assert summary["by_type"]["search@4096"]["overall"] == 1.0
    assert summary["uncovered"]["compiler@200"]["tasks"] == 1

"""Vectors made after capture (graph/deferred.py), on both backends with the default embedder: a
German capture returns before its vectors exist and says so, the queue survives a closed store,
a failing model loses nothing, and once drained an English paraphrase finds the German turn."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.graph import deferred, jobs

GERMAN = [
    "Meine Schwester hat sich letzte Woche beim Skifahren das Knie verletzt und muss operiert werden.",
    "Unsere Chefin hat angekündigt, dass sie die Firma zum Ende des Quartals verlässt.",
]
ENGLISH = "I bought a new bicycle so that I can ride to the office every morning."
QUESTION = "Who hurt their knee while skiing?"


@pytest.fixture
def parked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker never reaches the queue on its own: each test drains when it means to."""
    monkeypatch.setattr(deferred, "IDLE_S", 3600.0)
    monkeypatch.setattr(deferred, "MAX_WAIT_S", 3600.0)


@pytest.fixture
def mem(make_settings: Any, namespace: str, parked: None) -> Iterator[Memory]:
    memory = Memory(make_settings(embedder="use-gated"), namespace=namespace)
    try:
        yield memory
    finally:
        memory.close()


def _capture(memory: Memory, texts: list[str], title: str = "notizen") -> dict[str, Any]:
    messages = [{"role": "user", "content": t, "name": "u"} for t in texts]
    return memory.ingest("conversation", {"title": title, "messages": messages})


def _vectors(memory: Memory, source_id: str, n: int) -> int:
    model = memory.runtime.embedder_or_none().name  # type: ignore[union-attr]
    with memory.store.read(memory.namespace) as session:
        return len(session.get_vectors(model, "segment", [f"{source_id}#seg-{i + 1}" for i in range(n)]))


def _waiting(memory: Memory) -> dict[str, Any]:
    return dict(memory.maintain("structure", {}, {})["deferred_vectors"])


def _top(memory: Memory, query: str) -> list[str]:
    found = memory.query("search", {"query": query}, {"result_unit": "segment", "max_items": 3, "detail": "full"})
    return [i["excerpt"] for i in found["items"]]


def test_a_german_capture_returns_before_its_vectors_and_a_drain_makes_them(mem: Memory) -> None:
    stored = _capture(mem, [*GERMAN, ENGLISH])
    assert stored["vectors"] == {"status": "queued", "segments": 2}
    assert _vectors(mem, stored["source_id"], 3) == 1  # the English turn's, made during capture
    assert _waiting(mem)["segments_pending"] == 2
    # Until then the German turns are found by their words
    assert _top(mem, "Skifahren Knie")[0] == GERMAN[0]

    dry = mem.maintain("embed", {}, {})
    assert dry["status"] == "dry_run" and dry["queue"]["segments_pending"] == 2
    done = mem.maintain("embed", {}, {"apply": True})
    assert done["status"] == "applied" and done["embedded"] == 2
    assert _vectors(mem, stored["source_id"], 3) == 3
    assert _waiting(mem)["segments_pending"] == 0
    assert _top(mem, QUESTION)[0] == GERMAN[0]


def test_vectors_made_later_equal_those_made_during_capture(make_settings: Any, namespace: str, parked: None) -> None:
    later = Memory(make_settings(embedder="use-gated"), namespace=namespace)
    now = Memory(make_settings(embedder="use-gated", embed_in_background=False), namespace=namespace + "-now")
    try:
        a, b = _capture(later, GERMAN), _capture(now, GERMAN)
        assert "vectors" in a and "vectors" not in b
        later.maintain("embed", {}, {"apply": True})
        model = later.runtime.embedder_or_none().name  # type: ignore[union-attr]
        with later.store.read(later.namespace) as s1, now.store.read(now.namespace) as s2:
            va = s1.get_vectors(model, "segment", [f"{a['source_id']}#seg-1"])
            vb = s2.get_vectors(model, "segment", [f"{b['source_id']}#seg-1"])
        assert abs(float((va[f"{a['source_id']}#seg-1"] - vb[f"{b['source_id']}#seg-1"]).max())) < 1e-6
    finally:
        now.close()
        later.close()


def test_english_captures_queue_nothing(mem: Memory) -> None:
    stored = _capture(mem, [ENGLISH])
    assert "vectors" not in stored and _waiting(mem)["segments_pending"] == 0
    assert _vectors(mem, stored["source_id"], 1) == 1


def test_a_grown_conversation_adds_its_new_turns_to_the_waiting_job(mem: Memory) -> None:
    first = _capture(mem, GERMAN[:1], title="chat")
    grown = _capture(mem, GERMAN, title="chat")
    assert grown.get("appended_messages") == 1 and grown["source_id"] == first["source_id"]
    assert _waiting(mem)["segments_pending"] == 2
    assert mem.maintain("embed", {}, {"apply": True})["embedded"] == 2
    assert _vectors(mem, first["source_id"], 2) == 2


def test_work_left_by_a_closed_store_resumes_on_reopen(make_settings: Any, namespace: str, parked: None) -> None:
    settings = make_settings(embedder="use-gated")
    with Memory(settings, namespace=namespace) as memory:
        stored = _capture(memory, GERMAN)
    with Memory(settings, namespace=namespace) as memory:
        assert _waiting(memory)["segments_pending"] == 2
        worker = deferred._WORKERS.get((id(memory.store), namespace))
        assert worker is not None and worker.thread.is_alive()  # opening the namespace started it
        assert memory.maintain("embed", {}, {"apply": True})["embedded"] == 2
        assert _vectors(memory, stored["source_id"], 2) == 2
    assert (id(memory.store), namespace) not in deferred._WORKERS  # closing stopped it


def test_a_failing_model_loses_nothing_and_says_why(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _capture(mem, GERMAN)
    embedder = mem.runtime.embedder_or_none()
    working = embedder.embed_documents  # type: ignore[union-attr]

    def broken(texts: list[str]) -> Any:
        raise RuntimeError("encoder unavailable")

    monkeypatch.setattr(embedder, "embed_documents", broken)
    for attempt in range(1, jobs.MAX_ATTEMPTS + 1):
        result = mem.maintain("embed", {}, {"apply": True})
        assert result["status"] == "failed" and "encoder unavailable" in result["error"]
        queue = result["queue"]
        assert queue["failures"][0]["attempts"] == attempt
    assert queue["segments_pending"] == 0 and queue["segments_failed"] == 2
    assert queue["failures"][0]["status"] == "failed" and queue["jobs"]["failed"] == 1

    monkeypatch.setattr(embedder, "embed_documents", working)
    assert mem.maintain("embed", {}, {"apply": True})["embedded"] == 0  # parked jobs wait for a retry
    retried = mem.maintain("embed", {"retry_failed": True}, {"apply": True})
    assert retried["requeued"] == 1 and retried["embedded"] == 2
    assert _vectors(mem, stored["source_id"], 2) == 2 and "failures" not in retried["queue"]


def test_the_worker_makes_them_once_captures_pause(make_settings: Any, namespace: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deferred, "IDLE_S", 0.05)
    with Memory(make_settings(embedder="use-gated"), namespace=namespace) as memory:
        stored = _capture(memory, GERMAN)
        deadline = time.monotonic() + 120  # the worker's own pace; a loaded machine is slow
        while _waiting(memory)["segments_pending"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _waiting(memory)["segments_pending"] == 0
        assert _vectors(memory, stored["source_id"], 2) == 2
        assert _top(memory, QUESTION)[0] == GERMAN[0]


def test_repair_counts_queued_segments_apart_and_a_reindex_leaves_the_drain_nothing(mem: Memory) -> None:
    stored = _capture(mem, GERMAN)
    vectors = mem.maintain("repair", {}, {})["derived_indexes"]["vectors"]
    assert vectors["segments_queued"] == 2 and vectors["segments_missing"] == 0
    mem.maintain("reindex", {}, {"apply": True})  # embeds every segment without a vector
    assert _vectors(mem, stored["source_id"], 2) == 2
    drained = mem.maintain("embed", {}, {"apply": True})
    assert drained["embedded"] == 0 and drained["queue"]["segments_pending"] == 0


def test_a_one_shot_cli_capture_makes_its_vectors_before_it_exits(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """No worker of a one-shot command lives on, so the CLI embeds during capture (``serve`` and
    library users get the worker)."""
    import json

    from click.testing import CliRunner

    from memory_substrate.cli.main import main

    monkeypatch.setenv("MEMORY_SUBSTRATE_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("MEMORY_SUBSTRATE_EMBEDDER", "use-gated")
    messages = {"title": "notizen", "messages": [{"role": "user", "content": t} for t in GERMAN]}
    stored = CliRunner().invoke(main, ["ingest", "conversation", json.dumps(messages)])
    assert stored.exit_code == 0, stored.output
    assert "vectors" not in json.loads(stored.output)
    structure = CliRunner().invoke(main, ["maintain", "structure"])
    assert json.loads(structure.output)["deferred_vectors"]["segments_pending"] == 0

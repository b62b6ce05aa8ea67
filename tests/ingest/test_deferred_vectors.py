"""Vectors made after capture (graph/deferred.py), on both backends with the default embedder: a
German capture returns before its vectors exist and says so, the queue survives a closed store,
a failing model loses nothing, and once drained an English paraphrase finds the German turn."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.embed import foreground
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
    found = memory.query(
        "search", {"query": query}, {"result_unit": "segment", "max_items": 3, "detail": "full"}
    )
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


def test_vectors_made_later_equal_those_made_during_capture(
    make_settings: Any, namespace: str, parked: None
) -> None:
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


def test_work_left_by_a_closed_store_resumes_on_reopen(
    make_settings: Any, namespace: str, parked: None
) -> None:
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


def test_the_worker_makes_them_once_captures_pause(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_a_one_shot_cli_capture_makes_its_vectors_before_it_exits(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
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


SPANISH = "El perro de mi vecino ladra toda la noche y no me deja dormir."
SPANISH_QUESTION = "Whose dog keeps barking at night?"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch, backend: str) -> list[str]:
    """Each full load of a segment-vector matrix from the store (SQLite's cache; PostgreSQL
    searches its vectors in the database and keeps no matrix)."""
    seen: list[str] = []
    if backend == "sqlite":
        from memory_substrate.storage.sqlite.store import SQLiteSession

        plain = SQLiteSession._vector_loader

        def counted(self: Any, model: str, owner_type: str) -> Any:
            load = plain(self, model, owner_type)

            def run() -> Any:
                if owner_type == "segment":
                    seen.append(model)
                return load()

            return run

        monkeypatch.setattr(SQLiteSession, "_vector_loader", counted)
    return seen


def _ranking(memory: Memory, queries: list[str]) -> list[list[tuple[str, float, float]]]:
    out = []
    for q in queries:
        found = memory.query(
            "search", {"query": q}, {"result_unit": "segment", "max_items": 5, "detail": "full"}
        )
        out.append([(i["excerpt"], i["rank_score"], i["semantic_score"]) for i in found["items"]])
    return out


def test_search_during_a_backlog_sees_each_vector_once_made_and_the_matrix_is_never_reloaded(
    mem: Memory, make_settings: Any, namespace: str, loads: list[str]
) -> None:
    _capture(mem, [ENGLISH], title="english")  # made during capture: the matrix holds English columns only
    assert _top(mem, "bicycle office")[0] == ENGLISH
    loaded = len(loads)
    _capture(mem, GERMAN, title="notizen")
    _capture(mem, [SPANISH], title="notas")
    assert _waiting(mem)["segments_pending"] == 3
    # Neither has a vector yet: each is found by its words, not by an English paraphrase.
    assert _top(mem, "Skifahren Knie")[0] == GERMAN[0]
    assert SPANISH in _top(mem, "perro vecino")
    assert GERMAN[0] not in _top(mem, QUESTION) and SPANISH not in _top(mem, SPANISH_QUESTION)

    # Some are made (one job: the German conversation's): visible to the next search at once.
    assert mem.maintain("embed", {"limit": 1}, {"apply": True})["embedded"] == 2
    assert _top(mem, QUESTION)[0] == GERMAN[0]
    assert SPANISH not in _top(mem, SPANISH_QUESTION)
    assert SPANISH in _top(mem, "perro vecino")  # the one still waiting: by its words

    assert mem.maintain("embed", {}, {"apply": True})["embedded"] == 1
    assert _top(mem, SPANISH_QUESTION)[0] == SPANISH
    # Every batch, in new columns (a language's) too, was taken into the cached matrix in place.
    assert len(loads) == loaded

    # ... and the answers are those of a process that loads every vector from the store.
    queries = [QUESTION, SPANISH_QUESTION, "bicycle office", "Skifahren Knie", "Chefin Firma"]
    warm = _ranking(mem, queries)
    with Memory(make_settings(embedder="use-gated"), namespace=namespace) as cold:
        assert _ranking(cold, queries) == warm


def test_a_read_counts_as_in_flight_while_it_runs(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _capture(mem, GERMAN)
    embedder = mem.runtime.embedder_or_none()
    plain = embedder.embed_query  # type: ignore[union-attr]
    seen: list[int] = []

    def watched(text: str) -> Any:
        seen.append(foreground.in_flight())
        return plain(text)

    monkeypatch.setattr(embedder, "embed_query", watched)
    mem.query("search", {"query": QUESTION}, {"result_unit": "segment"})
    mem.query("context", {"task": QUESTION}, {})
    assert len(seen) >= 2 and min(seen) >= 1
    assert foreground.in_flight() == 0


def test_the_worker_waits_while_a_read_is_in_flight(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deferred, "IDLE_S", 0.05)
    monkeypatch.setattr(foreground, "STARVED_S", 3600.0)  # no piece goes ahead of a read
    with Memory(make_settings(embedder="use-gated"), namespace=namespace) as memory:
        stored = _capture(memory, [ENGLISH])  # loads the embedders
        with foreground.foreground():  # a read in flight, as QueryService.run holds it
            stored = _capture(memory, GERMAN)
            time.sleep(0.5)  # well past IDLE_S: the worker has taken the batch and waits
            assert _vectors(memory, stored["source_id"], 2) == 0
        deadline = time.monotonic() + 120  # the worker's own pace; a loaded machine is slow
        while _waiting(memory)["segments_pending"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _vectors(memory, stored["source_id"], 2) == 2


def test_a_drain_asked_for_does_not_wait_on_a_worker_that_yields(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deferred, "IDLE_S", 0.05)
    monkeypatch.setattr(foreground, "STARVED_S", 3600.0)
    # Reads that never pause: the worker would wait for ever.
    with Memory(make_settings(embedder="use-gated"), namespace=namespace) as memory, foreground.foreground():
        stored = _capture(memory, GERMAN)
        time.sleep(0.3)
        done = memory.maintain("embed", {}, {"apply": True})
        assert done["status"] == "applied" and done["queue"]["segments_pending"] == 0
        assert _vectors(memory, stored["source_id"], 2) == 2

"""Ingest embeds before it takes the namespace's write lock (both backends)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from memory_substrate import Memory
from memory_substrate.embed.static import StaticEmbedder
from memory_substrate.runtime import Runtime
from memory_substrate.storage.factory import open_store


class _WatchedStore:
    """The real store, remembering whether a write session is open right now."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.writing = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextlib.contextmanager
    def write(self, namespace: str) -> Iterator[Any]:
        with self._store.write(namespace) as session:
            self.writing += 1
            try:
                yield session
            finally:
                self.writing -= 1


class _RecordingEmbedder:
    def __init__(self, store: _WatchedStore) -> None:
        self.inner = StaticEmbedder()
        self.store = store
        self.calls_inside_write: list[int] = []
        self.calls = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.store.writing:
            self.calls_inside_write.append(len(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def test_conversation_ingest_embeds_outside_the_write_session(make_settings: Any, namespace: str) -> None:
    settings = make_settings(embedder="static")
    store = _WatchedStore(open_store(settings))
    embedder = _RecordingEmbedder(store)
    runtime = Runtime(store, namespace, settings, _embedder=embedder, _loaded=True)
    mem = Memory(settings, store=store, runtime=runtime)
    try:
        msgs = [{"role": "user", "content": f"turn {i} about the vector index rebuild"} for i in range(30)]
        out = mem.ingest("conversation", {"title": "index rebuild", "messages": msgs})
        assert embedder.calls >= 1 and embedder.calls_inside_write == []
        # The vectors made outside the session are the ones stored, for segments and the source.
        hits = mem.query(
            "search", {"query": "vector index rebuild"}, {"result_unit": "segment", "detail": "full"}
        )
        assert "semantic" in hits["items"][0]["retrieval_sources"]
        with store.read(namespace) as s:
            got = s.get_vectors(embedder.name, "segment", [f"{out['source_id']}#seg-1"])
            want = embedder.inner.embed_documents([msgs[0]["content"]])[0]
            assert np.allclose(got[f"{out['source_id']}#seg-1"], want, atol=1e-5)
            assert embedder.name in {m for _, m in s.vector_owners("object")}
    finally:
        store.close()


def test_a_grown_conversation_embeds_only_its_new_messages(make_settings: Any, namespace: str) -> None:
    """An agent's session is captured again after every reply: each capture embeds what it added."""
    settings = make_settings(embedder="static")
    store = _WatchedStore(open_store(settings))
    embedder = _RecordingEmbedder(store)
    texts: list[str] = []
    embed = embedder.embed_documents

    def recording(batch: list[str]) -> np.ndarray:
        texts.extend(batch)
        return embed(batch)

    embedder.embed_documents = recording  # type: ignore[method-assign, assignment]
    runtime = Runtime(store, namespace, settings, _embedder=embedder, _loaded=True)
    mem = Memory(settings, store=store, runtime=runtime)
    try:
        msgs = [{"role": "user", "content": f"turn {i} about the vector index rebuild"} for i in range(40)]
        first = mem.ingest("conversation", {"title": "rebuild", "thread_id": "t-1", "messages": msgs[:30]})
        texts.clear()
        grown = mem.ingest("conversation", {"title": "rebuild", "thread_id": "t-1", "messages": msgs})
        assert grown["appended_messages"] == 10 and grown["source_id"] == first["source_id"]
        assert [t for t in texts if t.startswith("turn")] == [m["content"] for m in msgs[30:]]
        with store.read(namespace) as s:
            ids = [f"{first['source_id']}#seg-{i}" for i in range(1, 41)]
            assert set(s.get_vectors(embedder.name, "segment", ids)) == set(ids)
    finally:
        store.close()

"""A process that froze its heap (``memory-substrate serve`` does, memory_substrate.heap) freezes
again once an embedder has loaded its model on first use, so the model's vocabularies and
tokenizers stay out of the collector's full passes; a process that never froze is left alone."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from memory_substrate import Memory, Settings, heap


def _memory(tmp_path: Path) -> Memory:
    return Memory(Settings(root=tmp_path / "store", embedder="static"), namespace="heap")


def _first_searches(mem: Memory) -> None:
    mem.ingest(
        "conversation", {"title": "t", "messages": [{"role": "user", "content": "the brakes were fixed"}]}
    )
    mem.query("search", {"query": "brakes"})
    mem.query("search", {"query": "fixed"})


def test_a_frozen_process_freezes_the_model_once_it_has_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heap, "_settled", False)
    mem = _memory(tmp_path)
    loaded_at_freeze: list[bool] = []

    def freeze() -> None:  # recorded instead of run: the test process is not frozen
        emb = mem.runtime._built.get("static", (None, None))[0]
        loaded_at_freeze.append(getattr(emb, "_matrix", None) is not None)

    monkeypatch.setattr(gc, "freeze", freeze)
    monkeypatch.setattr(gc, "collect", lambda *a: 0)
    try:
        heap.freeze_long_lived()  # what serve does before it serves: nothing loaded yet
        assert loaded_at_freeze == [False]
        _first_searches(mem)
        # once more, when the model had loaded (not when the embedder object was built), and only once
        assert loaded_at_freeze == [False, True]
    finally:
        mem.close()


def test_a_process_that_never_froze_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_settled", False)
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    mem = _memory(tmp_path)
    try:
        _first_searches(mem)
    finally:
        mem.close()
    assert calls == []

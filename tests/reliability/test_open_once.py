"""A path is checked and opened as one step, every file a walker reads is treated alike, and the
store's own files are denied wherever the store lives (issue 37, items 3-5).

* Open once: a thread swaps ``allowed/race`` between a directory and a symlink out of the allowed
  root while 300 ingests name ``allowed/race/secret.txt``; not one captures the outside file.
* The repo walker reads ``.gitignore`` as it reads every file: a FIFO, a symlink to ``/dev/zero``
  or a symlink out of the root is passed over with a diagnostic within a second, and its rules
  are not applied.
* With ``sqlite:///`` pointing under an allowed root, the database, ``-wal``, ``-shm`` and
  ``-writer.lock`` get the same refusal as a missing path, and a repo capture does not list them.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.settings import Settings

SECRET = "zqoutsidesecretzq"
SWAPS = 300


def _attempt(memory: Memory, mode: str, data: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"ok": memory.ingest(mode, data)}
    except MemorySubstrateError as exc:
        return {"error": exc.code, "message": exc.message}


@pytest.fixture
def restricted(make_settings: Callable[..., Settings], namespace: str, tmp_path: Path) -> Iterator[Memory]:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    mem = Memory(make_settings(allow_paths=[allowed]), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


def _swapper(race: Path, outside: Path, stop: threading.Event) -> None:
    """Swap ``race`` between its real directory and a symlink to ``outside`` until stopped."""
    parked = race.with_name("race.dir")
    while not stop.is_set():
        os.rename(race, parked)
        os.symlink(outside, race, target_is_directory=True)
        time.sleep(0)
        os.unlink(race)
        os.rename(parked, race)
        time.sleep(0.001)  # longer as a directory, so some ingests find the inside file in place


def test_symlink_swaps_during_ingest_capture_nothing_outside(restricted: Memory, tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    race = allowed / "race"
    race.mkdir()
    (race / "secret.txt").write_text("inside the allowed root\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    stop = threading.Event()
    swapper = threading.Thread(target=_swapper, args=(race, outside, stop), daemon=True)
    swapper.start()
    results = []
    try:
        for _ in range(SWAPS):
            results.append(_attempt(restricted, "file", {"path": str(race / "secret.txt")}))
    finally:
        stop.set()
        swapper.join(5)
    captured = [r for r in results if "ok" in r]
    refused = {r["error"] for r in results if "error" in r}
    assert refused <= {"memory_capture_not_found"}, refused
    assert captured, "the swaps never left the inside file in place: the race was not exercised"
    assert restricted.query("search", {"query": SECRET})["count"] == 0
    assert SECRET not in json.dumps(results)


def _repo_with(tmp_path: Path, make_gitignore: Callable[[Path], object], *, nested: bool = False) -> Path:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "notes.md").write_text("# Notes\n\nKept whatever the ignore file says.\n")
    (repo / "main.py").write_text("def kept():\n    return 1\n")
    make_gitignore(repo / ".gitignore")
    if nested:  # a subdirectory's ignore file is read without the top level's is_file() check
        make_gitignore(repo / "sub" / ".gitignore")
    return repo


def _outside_ignore(tmp_path: Path) -> Callable[[Path], None]:
    outside = tmp_path / "outside.gitignore"
    outside.write_text("*.md\n*.py\n")
    return lambda p: p.symlink_to(outside)


GITIGNORES: dict[str, Callable[[Path], Callable[[Path], None]]] = {
    "fifo": lambda _tmp: os.mkfifo,
    "dev_zero": lambda _tmp: lambda p: p.symlink_to("/dev/zero"),
    "symlink_out": _outside_ignore,
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("shape", sorted(GITIGNORES))
def test_a_hostile_gitignore_is_passed_over_within_a_second(
    memory: Memory, tmp_path: Path, shape: str
) -> None:
    # Not /dev/zero below the top: on a walker that reads it, it would fill the test machine's memory.
    repo = _repo_with(tmp_path, GITIGNORES[shape](tmp_path), nested=shape != "dev_zero")
    done: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: done.update(_attempt(memory, "repo", {"path": str(repo)})), daemon=True
    )
    started = time.monotonic()
    worker.start()
    worker.join(10)
    elapsed = time.monotonic() - started
    if worker.is_alive() and shape == "fifo":  # release the blocked reader so the thread can end
        os.close(os.open(repo / "sub" / ".gitignore", os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
    assert not worker.is_alive(), f"the capture of a repo with a {shape} .gitignore hangs"
    assert elapsed < 1.0 + 2.0, elapsed  # a second for the walk, slack for a loaded test machine
    assert "ok" in done, done
    reasons = [s["reason"] for s in done["ok"].get("skipped", []) if s["path"] == ".gitignore"]
    assert any(r.startswith("gitignore_") for r in reasons), done["ok"].get("skipped")
    # The file's rules were not applied: both files are in the map.
    assert memory.query("search", {"query": "Kept whatever the ignore file says"})["count"] > 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_or_device_is_refused_as_a_file_without_blocking(memory: Memory, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    for path in (fifo, Path("/dev/zero"), tmp_path / "zero.md"):
        started = time.monotonic()
        res = _attempt(memory, "markdown", {"path": str(path)})
        assert res.get("error") == "memory_capture_not_a_file", (path, res)
        assert time.monotonic() - started < 1.0


def test_every_read_of_a_repo_is_bounded_by_max_file_bytes(
    make_settings: Callable[..., Settings], namespace: str, tmp_path: Path
) -> None:
    repo = _repo_with(tmp_path, lambda p: p.write_text("*.md\n" + "#" * 5000 + "\n"))
    mem = Memory(make_settings(max_file_bytes=1000), namespace=namespace)
    try:
        res = mem.ingest("repo", {"path": str(repo)})
    finally:
        mem.close()
    reasons = [s["reason"] for s in res.get("skipped", []) if s["path"] == ".gitignore"]
    assert "gitignore_file_too_large" in reasons, res.get("skipped")


def _store_elsewhere(tmp_path: Path) -> tuple[Settings, Path]:
    allowed = tmp_path / "allowed"
    (allowed / "elsewhere").mkdir(parents=True)
    (allowed / "notes.md").write_text("# Notes\n\nBeside the store.\n")
    db = allowed / "elsewhere" / "mem.sqlite3"
    settings = Settings(
        root=tmp_path / "root", embedder="none", database_url=f"sqlite:///{db}", allow_paths=[allowed]
    )
    return settings, db


def test_the_store_files_are_denied_wherever_the_store_lives(tmp_path: Path) -> None:
    settings, db = _store_elsewhere(tmp_path)
    memory = Memory(settings)
    try:
        memory.ingest("conversation", {"messages": [{"role": "user", "content": "hello store"}]})
        Path(f"{db}-writer.lock").touch(exist_ok=True)  # made by the first write; touched in case it is not
        names = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}-writer.lock")]
        assert all(p.exists() for p in names), [p for p in names if not p.exists()]
        probes = [*names, db.with_name("no-such-file.sqlite3")]
        shapes = set()
        for path in probes:
            for mode in ("file", "markdown", "pdf"):
                res = _attempt(memory, mode, {"path": str(path)})
                assert res.get("error") == "memory_capture_not_found", (path, mode, res)
                shapes.add(res["message"].replace(repr(str(path)), "<PATH>"))
        assert len(shapes) == 1, shapes
        captured = memory.ingest("repo", {"path": str(tmp_path / "allowed")})
        with memory.runtime.read_with_expired() as s:
            source = s.get_object(captured["source_id"])
        assert source is not None
        listed = json.dumps([source.payload, captured])
        assert "mem.sqlite3" not in listed, listed[:2000]
        assert "notes.md" in listed
    finally:
        memory.close()

"""A broken store never breaks a Claude Code session: with the hooks ``setup`` installed pointing
at a root that is a file, at a corrupt SQLite file, or at a store another process holds locked,
the real client runs the whole session (its tool call included) and exits 0, and every hook it
ran exited normally."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agents import anthropic_stub as an
from tests.agents.clients import require
from tests.e2e.e2e_support import OPEN, Machine, hook_records, namespace_of


def _root_is_a_file(dev: Machine, project: Path) -> Callable[[], None]:
    dev.root.write_text("not a directory\n")
    return lambda: None


def _corrupt_file(dev: Machine, project: Path) -> Callable[[], None]:
    dev.root.mkdir()
    (dev.root / "memory.sqlite3").write_bytes(b"this is not an SQLite database\x00" * 400)
    return lambda: None


def _held_lock(dev: Machine, project: Path) -> Callable[[], None]:
    from memory_substrate import Memory, Settings

    with Memory(Settings(root=dev.root, namespace=namespace_of(project), embedder="none")) as mem:
        mem.ingest(
            "conversation",
            {
                "thread_id": "earlier",
                "messages": [
                    {"role": "user", "content": "Why does the nightly fail?"},
                    {"role": "assistant", "content": "Because TZ is unset in CI."},
                ],
            },
            {},
        )
    blocker = sqlite3.connect(dev.root / "memory.sqlite3", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")

    def release() -> None:
        blocker.execute("ROLLBACK")
        blocker.close()

    return release


@pytest.mark.parametrize(
    "breakage",
    [_root_is_a_file, _corrupt_file, _held_lock],
    ids=["root-is-a-file", "corrupt-sqlite", "held-lock"],
)
def test_the_session_completes_normally(
    tmp_path: Path, breakage: Callable[[Machine, Path], Callable[[], None]]
) -> None:
    require("claude-code")
    dev = Machine(tmp_path)
    project = dev.project("shop", {"README.md": "# shop\n"})
    dev.setup_claude(project)
    release = breakage(dev, project)
    try:
        # A short deadline for the locked store (a documented setting), so the test waits seconds, not the
        # defaults' tens of seconds; the other breakages fail at once whatever the deadline.
        session = dev.claude(
            project,
            "Why does the nightly fail?",
            [[an.bash("cat README.md")], an.text("Done.")],
            env={"MEMORY_SUBSTRATE_HOOK_TIMEOUT_S": "2"},
        )
    finally:
        release()
    session.run.check()
    assert session.run.result == "Done."
    assert len(session.requests) == 2 and "# shop" in session.everything  # the tool ran, its result came back
    assert OPEN not in session.everything
    assert session.run.transcript is not None
    records = hook_records(session.run.transcript)
    assert records["stop"], "the Stop hook did not run"
    for rec in records["stop"]:
        assert rec["hookErrors"] == [] and not rec["preventedContinuation"]
    assert all(a.get("exitCode") == 0 for a in records["success"])

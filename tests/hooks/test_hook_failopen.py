"""A hook never blocks or stalls the client: with a root that is a file, a corrupt store, a held
lock, a deadline passed, bad input or a bad config, every event exits 0, prints nothing and
leaves one line in the hook log (or, when the root cannot hold it, in the fallback log)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from memory_substrate.hooks.project import project_namespace
from tests.hooks.hook_support import Hooks, Transcript, context, episodes, project
from tests.hooks.test_hook_events import CHECKOUT

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
PROMPT = "Why was the checkout timing out on the payments call?"


def _event(t: Transcript, name: str) -> dict[str, object]:
    extra = {
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": PROMPT},
        "PreCompact": {"trigger": "manual"},
        "SessionEnd": {"reason": "other"},
    }.get(name, {})
    return t.event(name, **extra)


def _setup(tmp_path: Path, **env: str) -> tuple[Hooks, Transcript]:
    hooks = Hooks(tmp_path, TMPDIR=str(tmp_path), **env)
    repo = project(tmp_path, "shop")
    t = Transcript(hooks.home / ".claude" / "projects" / "shop" / "s1.jsonl", "s1", repo).add(*CHECKOUT)
    return hooks, t


def _fallback_log(tmp_path: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in tmp_path.glob("memory-substrate-hooks-*.log"))


def test_a_root_that_is_a_file(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    hooks.root.write_text("not a directory", encoding="utf-8")
    for name in EVENTS:
        assert hooks.run(_event(t, name)).stdout == ""
    lines = _fallback_log(tmp_path).splitlines()
    assert len(lines) == len(EVENTS) and all("is not a directory" in line for line in lines)
    assert hooks.root.read_text(encoding="utf-8") == "not a directory"


def test_a_corrupt_store(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    hooks.root.mkdir()
    (hooks.root / "memory.sqlite3").write_bytes(b"this is not an SQLite database\x00" * 200)
    for name in EVENTS:
        proc = hooks.run(_event(t, name))
        assert proc.stdout == "", name
    log = hooks.log().splitlines()
    assert {line.split()[2] for line in log} >= {"SessionStart", "UserPromptSubmit", "Stop"}
    assert all("failed" in line for line in log)


def test_a_held_lock_gives_up_at_the_deadline_and_loses_nothing(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    hooks.run(_event(t, "Stop"))
    namespace = project_namespace(t.cwd)
    assert [n for _, n in episodes(hooks.root, namespace)] == [4]
    t.add(("user", "Add a retry with backoff to the payments client."), ("assistant", "Added three retries."))
    blocker = sqlite3.connect(hooks.root / "memory.sqlite3", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        for name in ("Stop", "UserPromptSubmit", "SessionStart"):
            started = time.perf_counter()
            proc = hooks.run(_event(t, name), env={"MEMORY_SUBSTRATE_HOOK_TIMEOUT_S": "3"})
            assert proc.stdout == "" and time.perf_counter() - started < 15, name
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert "deadline" in hooks.log() or "busy" in hooks.log()
    # However long the event's deadline, a hook waits a couple of seconds for a lock, not more.
    blocker = sqlite3.connect(hooks.root / "memory.sqlite3", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        started = time.perf_counter()
        assert hooks.run(_event(t, "Stop")).stdout == ""
        assert time.perf_counter() - started < 12
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert "the store is busy" in hooks.log().splitlines()[-1]
    hooks.run(_event(t, "Stop"))  # the lock is gone: what the blocked capture missed is captured now
    assert [n for _, n in episodes(hooks.root, namespace)] == [6]


def test_the_deadline_ends_the_hook(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    hooks.run(_event(t, "Stop"))
    t.add(("user", "One more question about the payments timeout."), ("assistant", "Ask away."))
    for name in ("UserPromptSubmit", "Stop"):
        started = time.perf_counter()
        proc = hooks.run(_event(t, name), env={"MEMORY_SUBSTRATE_HOOK_TIMEOUT_S": "0.2"})
        assert proc.stdout == "" and time.perf_counter() - started < 10
    assert hooks.log().count("deadline: gave up") == 2


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"session_id": "x"}', b"\xff\xfe\x00"])
def test_input_that_is_no_event(tmp_path: Path, stdin: bytes) -> None:
    hooks, _ = _setup(tmp_path)
    assert hooks.run({}, raw=stdin).stdout == ""
    assert "not a hook event" in hooks.log()


def test_an_unknown_event_or_client_prints_nothing(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    assert hooks.run(t.event("Notification", message="hi")).stdout == ""
    assert hooks.run(_event(t, "Stop"), client="cursor").stdout == ""
    assert "unknown client 'cursor'" in hooks.log()
    assert not (hooks.root / "memory.sqlite3").exists()


def test_a_bad_config_file_turns_the_hooks_off(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    (hooks.root / "hooks").mkdir(parents=True)
    (hooks.root / "hooks" / "config.toml").write_text("exclude = [unclosed\n", encoding="utf-8")
    for name in ("Stop", "SessionStart"):
        assert hooks.run(_event(t, name)).stdout == ""
    assert hooks.log().count("config:") == 2
    assert not (hooks.root / "memory.sqlite3").exists()  # nothing captured while the exclusions are unknown
    bad_env = hooks.run(_event(t, "Stop"), env={"MEMORY_SUBSTRATE_HOOK_PROMPT_BUDGET": "lots"})
    assert bad_env.stdout == ""


def test_an_excluded_project_is_neither_captured_nor_given_context(tmp_path: Path) -> None:
    hooks, t = _setup(tmp_path)
    hooks.run(_event(t, "Stop"))
    secret = project(tmp_path, "secret-client")
    s = Transcript(hooks.home / ".claude" / "projects" / "secret" / "x.jsonl", "x", secret).add(*CHECKOUT)
    env = {"MEMORY_SUBSTRATE_HOOK_EXCLUDE": str(tmp_path / "secret-*")}
    hooks.run(_event(s, "Stop"), env=env)
    assert episodes(hooks.root, project_namespace(secret)) == []
    assert hooks.run(_event(s, "UserPromptSubmit"), env=env).stdout == ""
    # Its sub-folders are excluded with it; the other project is untouched.
    (secret / "api").mkdir()
    inner = Transcript(s.path.with_name("y.jsonl"), "y", secret / "api").add(*CHECKOUT)
    hooks.run(_event(inner, "Stop"), env=env)
    assert episodes(hooks.root, project_namespace(secret)) == []
    later = Transcript(t.path.with_name("s2.jsonl"), "s2", t.cwd)
    assert context(hooks.run(_event(later, "UserPromptSubmit"), env=env), "UserPromptSubmit") is not None


def test_an_environment_the_command_line_refuses_still_exits_0(tmp_path: Path) -> None:
    """Variables the hook inherits from the user's shell may be anything: none of them can make
    the hook block the client."""
    hooks, t = _setup(tmp_path)
    for env in (
        {"MEMORY_SUBSTRATE_NAMESPACE": "not a namespace"},
        {"MEMORY_SUBSTRATE_ROOT": "~no-such-user-here/x"},
    ):
        assert hooks.run(_event(t, "UserPromptSubmit"), env=env).stdout == ""

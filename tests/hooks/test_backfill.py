"""``memory-substrate backfill claude-code|codex [PATH]`` imports the transcripts already on disk,
each into its own project's namespace; a second run adds nothing and a grown transcript appends
only its new turns, and the hooks continue where a backfill stopped."""

from __future__ import annotations

import json
from pathlib import Path

from memory_substrate.hooks.project import project_namespace
from tests.hooks.hook_support import Hooks, Transcript, context, episodes, project
from tests.hooks.test_hook_events import CHECKOUT, GARDEN


def _claude_home(tmp_path: Path, hooks: Hooks) -> tuple[Path, Path, dict[str, Transcript]]:
    shop, garden = project(tmp_path, "shop"), project(tmp_path, "garden")
    base = hooks.home / ".claude" / "projects"
    sessions = {
        "s1": Transcript(base / "-shop" / "s1.jsonl", "s1", shop).add(*CHECKOUT),
        "s2": Transcript(base / "-shop" / "s2.jsonl", "s2", shop).add(*CHECKOUT[:2]),
        "g1": Transcript(base / "-garden" / "g1.jsonl", "g1", garden).add(*GARDEN),
    }
    # A subagent of s1, its own thread; a transcript that is only noise; a corrupt line in another.
    Transcript(base / "-shop" / "s1" / "subagents" / "agent-a1.jsonl", "s1", shop).add(
        ("user", "List the payment client settings."), ("assistant", "timeout_ms, retries, backoff_ms.")
    )
    (base / "-shop" / "noise.jsonl").write_text(
        json.dumps({"type": "summary", "summary": "x"}) + "\n", encoding="utf-8"
    )
    with sessions["g1"].path.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    return shop, garden, sessions


def test_backfill_imports_each_session_into_its_project(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    shop, garden, sessions = _claude_home(tmp_path, hooks)
    first = hooks.backfill("claude-code")
    assert first["transcripts"] == 5 and first["sessions"] == 4 and first["stored"] == 4
    assert first["turns"] == 4 + 2 + 2 + 2 and first["added"] == 10
    assert first["skipped"] == 1 and first["errors"] == 0 and first["seconds"] >= 0
    assert len(episodes(hooks.root, project_namespace(shop))) == 3
    assert [n for _, n in episodes(hooks.root, project_namespace(garden))] == [2]

    again = hooks.backfill("claude-code")
    assert again["added"] == 0 and again["unchanged"] == 4 and again["stored"] == 0

    sessions["s2"].add(*CHECKOUT[2:])
    grown = hooks.backfill("claude-code")
    assert grown["appended"] == 1 and grown["added"] == 2 and grown["stored"] == 0
    assert sorted(n for _, n in episodes(hooks.root, project_namespace(shop))) == [2, 4, 4]

    forced = hooks.backfill("claude-code", "--force")
    assert forced["added"] == 0 and forced["unchanged"] == 0 and forced["sessions"] == 4

    # The hooks share the backfill's cursors: a Stop on a backfilled session adds nothing.
    hooks.run(sessions["s1"].event("Stop"))
    assert sorted(n for _, n in episodes(hooks.root, project_namespace(shop))) == [2, 4, 4]
    later = Transcript(sessions["s1"].path.with_name("s9.jsonl"), "s9", shop)
    given = context(
        hooks.run(later.event("UserPromptSubmit", prompt="Why was the checkout timing out on payments?")),
        "UserPromptSubmit",
    )
    assert given is not None and "450 ms" in given


def test_backfill_of_one_file_and_of_codex_sessions(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    hooks = Hooks(tmp_path, CODEX_HOME=str(codex))
    repo = project(tmp_path, "shop")
    day = codex / "sessions" / "2026" / "11" / "29"
    day.mkdir(parents=True)
    lines = [
        {
            "timestamp": "2026-11-29T09:00:00Z",
            "type": "session_meta",
            "payload": {
                "id": "c1",
                "cwd": str(repo),
                "cli_version": "0.169.0",
                "timestamp": "2026-11-29T09:00:00Z",
            },
        }
    ]
    for role, text in CHECKOUT:
        kind = "input_text" if role == "user" else "output_text"
        lines.append(
            {
                "timestamp": "2026-11-29T09:01:00Z",
                "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
            }
        )
    (day / "rollout-2026-11-29T09-00-00-c1.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )
    done = hooks.backfill("codex")
    assert done["sessions"] == 1 and done["added"] == 4
    assert [n for _, n in episodes(hooks.root, project_namespace(repo))] == [4]

    claude = Transcript(tmp_path / "elsewhere" / "one.jsonl", "one", repo).add(*GARDEN)
    one = hooks.backfill("claude-code", str(claude.path))
    assert one["transcripts"] == 1 and one["added"] == 2


def test_backfill_of_a_path_that_does_not_exist(tmp_path: Path) -> None:
    import subprocess

    from tests.helpers import entry_point

    hooks = Hooks(tmp_path)
    proc = subprocess.run(
        [entry_point(), "backfill", "claude-code", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        env=hooks.env,
        timeout=120,
    )
    assert proc.returncode == 2 and "no transcripts at" in proc.stderr

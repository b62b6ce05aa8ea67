"""The Codex rollout parser on rollouts recorded from the real client (tests/agents/record.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_substrate.hooks.transcripts import INJECTED_OPEN, read_codex, to_conversation
from memory_substrate.hooks.transcripts.codex import PARSER
from memory_substrate.ingest.schemas import ConversationInput
from tests.agents.record import CODEX_SUBAGENT_TASK, FAKE_KEY, PROMPT_CONTEXT, START_CONTEXT
from tests.hooks.transcript_support import (
    DATA,
    assert_bad_lines_skipped,
    assert_partial_line_left,
    assert_pieces_equal_whole,
    contents,
)

SESSION = DATA / "codex" / "debug-session.jsonl"
MAIN = DATA / "codex" / "subagent-main.jsonl"
AGENT = DATA / "codex" / "subagent-agent.jsonl"


def _items(path: Path) -> list[dict[str, Any]]:
    return [
        d["payload"]
        for d in map(json.loads, path.read_text().splitlines())
        if d.get("type") == "response_item"
    ]


def test_prompts_and_assistant_text_are_kept() -> None:
    chunk = read_codex(SESSION)
    assert chunk.parser == PARSER == "codex-rollout.v1"
    assert contents(chunk.turns, "prompt") == [
        "The discount test fails. Find out why and fix it.",
        "Also add a CHANGELOG entry. For the record, the staging password: hunter2-staging",
    ]
    texts = contents(chunk.turns, "text")
    assert texts[0] == "Let me look at the README first." and texts[-1] == "Added CHANGELOG.md with the fix."
    for turn in chunk.turns:
        assert (turn.role, turn.name) in (("user", None), ("assistant", "codex"))
        assert turn.timestamp and turn.timestamp.startswith("20") and turn.content


def test_reasoning_developer_messages_codex_context_and_injected_context_are_dropped() -> None:
    items = _items(SESSION)
    developer = [
        c["text"]
        for i in items
        if i.get("type") == "message" and i.get("role") == "developer"
        for c in i["content"]
    ]
    # The recording holds what must not be captured: our hooks' context as developer messages
    # (SessionStart and UserPromptSubmit), Codex's own instructions, reasoning, environment context.
    assert START_CONTEXT in developer and PROMPT_CONTEXT in developer
    assert any(i.get("type") == "reasoning" for i in items)
    raw = SESSION.read_text()
    assert "<environment_context>" in raw and "ACME Corp" in raw

    text = "\n".join(contents(read_codex(SESSION).turns))
    for absent in (
        "The user says a test fails",
        "boundary was exclusive",
        "owned by Dana",
        INJECTED_OPEN,
        PROMPT_CONTEXT,
        "environment_context",
        "skills_instructions",
        "ACME Corp",
        "<private>",
        "Chunk ID",
        "Wall time",
    ):
        assert absent not in text, absent


def test_each_tool_call_is_one_line_with_its_command() -> None:
    assert contents(read_codex(SESSION).turns, "tool_call") == [
        "[tool exec_command] cat README.md",
        "[tool exec_command] sed -n '1,40p' app.py",
        "[tool exec_command] python3 test_app.py",
        "[tool exec_command] cat docs/design.md",
        "[tool exec_command] grep OPENAI .env",
        "[tool exec_command] seq 1 1500",
        "[tool apply_patch] update app.py",  # an apply_patch heredoc through exec_command
        "[tool exec_command] python3 test_app.py && echo PASS",
        "[tool exec_command] printf '# Changelog\\n\\n- Orders of exactly 100 EUR now get the discount.\\n' > CHANGELOG.md",
    ]


def test_results_are_bounded_errors_kept_with_their_exit_code() -> None:
    turns = read_codex(SESSION).turns
    seq = next(t for t in turns if t.content.startswith("[result] 1\n2\n3"))
    assert len(seq.content) < 1200 and "characters omitted" in seq.content
    assert seq.content.rstrip().endswith("1499\n1500")
    errors = contents(turns, "tool_error")
    assert len(errors) == 2
    assert (
        errors[0].startswith("[error] exit 1\nTraceback")
        and "AssertionError: discount(100) = 100" in errors[0]
    )
    assert errors[1] == "[error] exit 1\ncat: docs/design.md: No such file or directory"
    results = contents(turns, "tool_result")
    assert "[result] ok\nPASS" in results
    assert "[result] Success. Updated the following files:\nM app.py" in results
    assert f"[result] OPENAI_API_KEY={FAKE_KEY}" in results  # the secret scan's to remove, not the parser's


def test_file_reads_become_references() -> None:
    turns = read_codex(SESSION).turns
    results = contents(turns, "tool_result")
    assert "[result] read README.md (5 lines)" in results
    assert "[result] read app.py (2 lines)" in results
    text = "\n".join(contents(turns))
    assert "return total * 0.9" not in text and "A tiny shop." not in text
    assert "return total * 0.9" in SESSION.read_text()


def test_subagent_rollout_is_a_sidechain_of_the_parent_session() -> None:
    main, agent = read_codex(MAIN), read_codex(AGENT)
    assert not any(t.sidechain for t in main.turns) and main.meta.agent_id is None
    assert contents(main.turns, "tool_call")[0] == f"[tool spawn_agent] {CODEX_SUBAGENT_TASK}"
    assert agent.turns and all(t.sidechain for t in agent.turns)
    assert contents(agent.turns, "prompt") == [CODEX_SUBAGENT_TASK]
    assert contents(agent.turns, "tool_call") == ["[tool exec_command] grep -rn 'discount(' --include=*.py ."]
    # The subagent's rollout names the parent session; its own thread id is the agent's.
    assert agent.meta.session_id == main.meta.session_id
    assert agent.meta.agent_id and agent.meta.agent_id != agent.meta.session_id
    assert agent.meta.agent_id in contents(main.turns, "tool_result")[0]
    data = to_conversation(agent)
    assert (
        data["thread_id"]
        == f"codex:{main.meta.session_id}:{agent.meta.agent_id}"
        != to_conversation(main)["thread_id"]
    )
    assert data["title"].startswith("codex subagent Find every caller")
    assert data["messages"][0]["metadata"]["sidechain"] is True


def test_session_metadata() -> None:
    meta = read_codex(SESSION).meta
    first = json.loads(SESSION.read_text().split("\n", 1)[0])
    assert first["type"] == "session_meta" and first["payload"]["id"] == meta.session_id
    assert (meta.client, meta.cwd, meta.git_branch, meta.client_version) == (
        "codex",
        "/home/dev/shop",
        "main",
        "0.169.0",
    )
    assert meta.started_at == first["payload"]["timestamp"]
    assert meta.first_prompt == "The discount test fails. Find out why and fix it."


@pytest.mark.parametrize("name", ["debug-session.jsonl", "subagent-main.jsonl", "subagent-agent.jsonl"])
def test_reading_in_pieces_gives_the_whole(name: str, tmp_path: Path) -> None:
    assert_pieces_equal_whole(read_codex, DATA / "codex" / name, tmp_path)


def test_offsets_and_partial_lines(tmp_path: Path) -> None:
    whole = read_codex(SESSION)
    assert whole.end_offset == SESSION.stat().st_size
    later = read_codex(SESSION, whole.end_offset)
    assert later.turns == [] and later.meta == whole.meta
    line = {
        "timestamp": "2026-12-07T03:00:00.000Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "One more"}],
        },
    }
    assert_partial_line_left(read_codex, SESSION, tmp_path, line)


def test_unknown_and_corrupt_lines_are_skipped(tmp_path: Path) -> None:
    assert_bad_lines_skipped(read_codex, SESSION, tmp_path)
    assert read_codex(SESSION).skipped == 0


def test_older_shapes_of_calls_and_outputs(tmp_path: Path) -> None:
    """Shapes earlier Codex versions wrote: shell with argv, JSON-wrapped output with an exit code,
    a custom apply_patch call, and user messages without content kinds."""
    meta = json.loads(SESSION.read_text().split("\n", 1)[0])
    items = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<user_instructions>be brief</user_instructions>"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run the tests"}]},
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"], "workdir": "/home/dev/shop"}),
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps(
                {"output": "1 failed", "metadata": {"exit_code": 1, "duration_seconds": 0.4}}
            ),
        },
        {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "c2",
            "input": "*** Begin Patch\n*** Update File: /home/dev/shop/app.py\n@@\n-a\n+b\n*** Add File: notes.md\n+x\n*** End Patch",
        },
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "Done!"},
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "c3",
            "arguments": json.dumps({"command": ["cat", "app.py"]}),
        },
        {
            "type": "function_call_output",
            "call_id": "c3",
            "output": json.dumps({"output": "x = 1\ny = 2\n", "metadata": {"exit_code": 0}}),
        },
    ]
    path = tmp_path / "older.jsonl"
    path.write_text(
        "".join(
            json.dumps(d) + "\n"
            for d in [meta]
            + [
                {"timestamp": "2026-12-07T03:00:00.000Z", "type": "response_item", "payload": i}
                for i in items
            ]
        )
    )
    assert contents(read_codex(path).turns) == [
        "Run the tests",
        "[tool shell] pytest -q",
        "[error] exit 1\n1 failed",
        "[tool apply_patch] update app.py, add notes.md",
        "[result] Done!",
        "[tool shell] cat app.py",
        "[result] read app.py (2 lines)",
    ]


def test_to_conversation_is_valid_memory_ingest_input() -> None:
    chunk = read_codex(SESSION)
    data = to_conversation(chunk)
    ConversationInput.model_validate(data)
    assert data["thread_id"] == f"codex:{chunk.meta.session_id}"
    assert data["title"] == "codex session The discount test fails. Find out why and …"
    assert data["origin"] == {"host": "codex", "project": "/home/dev/shop"}
    assert [m["role"] for m in data["messages"]][:3] == ["user", "assistant", "assistant"]
    assert data["messages"][1]["name"] == "codex"

"""The Claude Code transcript parser on transcripts recorded from the real client (tests/agents/record.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_substrate.hooks.transcripts import (
    INJECTED_OPEN,
    read_claude_code,
    subagent_transcripts,
    to_conversation,
)
from memory_substrate.hooks.transcripts.claude_code import PARSER
from memory_substrate.ingest.schemas import ConversationInput
from tests.agents.record import FAKE_KEY, PROMPT_CONTEXT, START_CONTEXT, SUBAGENT_PROMPT
from tests.hooks.transcript_support import (
    DATA,
    assert_bad_lines_skipped,
    assert_partial_line_left,
    assert_pieces_equal_whole,
    contents,
)

SESSION = DATA / "claude-code" / "debug-session.jsonl"
NO_GIT = DATA / "claude-code" / "no-git.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_prompts_and_assistant_text_are_kept() -> None:
    chunk = read_claude_code(SESSION)
    assert chunk.parser == PARSER == "claude-code-jsonl.v1"
    assert contents(chunk.turns, "prompt") == [
        "The discount test fails. Find out why and fix it.",
        "Also add a CHANGELOG entry. For the record, the staging password: hunter2-staging",
    ]
    texts = contents(chunk.turns, "text")
    assert texts[0] == "Let me look at the README first."
    assert texts[-1] == "Added CHANGELOG.md with the fix."
    assert any(t.startswith("Fixed: `discount` used `total > 100`") for t in texts)
    for turn in chunk.turns:
        assert (turn.role, turn.name) in (("user", None), ("assistant", "claude-code"))
        assert turn.timestamp and turn.timestamp.startswith("20")
        assert turn.content == turn.content.strip() and turn.content


def test_thinking_reminders_attachments_and_injected_context_are_dropped() -> None:
    raw = SESSION.read_text()
    kinds = {(d.get("type"), (d.get("attachment") or {}).get("type")) for d in _lines(SESSION)}
    # What must not be captured is in the recording, in the places the client puts it.
    assert {
        ("attachment", "hook_success"),
        ("attachment", "hook_additional_context"),
        ("system", None),
        ("api-request-blob", None),
    } <= kinds
    thinking = "The user says a test fails. Start with the README"
    for present in (
        thinking,
        START_CONTEXT,
        PROMPT_CONTEXT,
        "<system-reminder>",
        "ACME Corp",
        '"type":"thinking"',
    ):
        assert present.replace("\n", "\\n") in raw or present in raw, present

    text = "\n".join(contents(read_claude_code(SESSION).turns))
    for absent in (
        thinking,
        "boundary was exclusive",
        "owned by Dana",
        "checks the 100 EUR boundary",
        INJECTED_OPEN,
        "memory-substrate-context",
        "system-reminder",
        "ACME Corp",
        "<private>",
        "durationMs",
        "gitStatus",
        "You are an agent",
    ):
        assert absent not in text, absent


def test_each_tool_call_is_one_line_with_its_command_or_path() -> None:
    assert contents(read_claude_code(SESSION).turns, "tool_call") == [
        "[tool Bash] cat README.md",
        "[tool Read] app.py",
        "[tool Bash] python3 test_app.py",
        "[tool Read] docs/design.md",
        "[tool Bash] cat .env",
        "[tool Bash] seq 1 1500",
        "[tool Agent] general-purpose: Find discount callers",
        "[tool Edit] app.py",
        "[tool Bash] python3 test_app.py && echo PASS",
        "[tool Write] CHANGELOG.md",
    ]


def test_results_are_bounded_and_errors_kept() -> None:
    turns = read_claude_code(SESSION).turns
    long_output = "\n".join(str(n) for n in range(1, 1501))
    assert long_output in SESSION.read_text().replace("\\n", "\n")
    seq = next(t for t in turns if t.content.startswith("[result] 1\n2\n3"))
    assert len(seq.content) < 1200 < len(long_output)
    assert "characters omitted" in seq.content and seq.content.rstrip().endswith("1499\n1500")

    errors = contents(turns, "tool_error")
    assert len(errors) == 2
    assert errors[0].startswith("[error] Exit code 1") and "AssertionError: discount(100) = 100" in errors[0]
    assert errors[1].startswith("[error] File does not exist.")
    assert "[result] ok\nPASS" in contents(turns, "tool_result")
    # Secrets in tool output are the secret scan's to remove, not the parser's: it keeps the text.
    assert any(FAKE_KEY in t for t in contents(turns, "tool_result"))


def test_file_reads_and_writes_become_references() -> None:
    turns = read_claude_code(SESSION).turns
    results = contents(turns, "tool_result")
    assert "[result] read app.py (lines 1-3 of 3)" in results
    assert "[result] edited app.py" in results and "[result] created CHANGELOG.md" in results
    text = "\n".join(contents(turns))
    assert "return total * 0.9" not in text  # the file's contents, which the Read and Edit carried
    assert "Orders of exactly 100 EUR now get the discount" not in text  # what Write wrote
    assert "return total * 0.9" in SESSION.read_text()


def test_subagent_is_a_marked_sidechain_with_its_own_thread() -> None:
    main = read_claude_code(SESSION)
    assert not any(t.sidechain for t in main.turns)
    assert (
        "[result] subagent general-purpose: discount() is defined in ./app.py:1 and called only from "
        "./test_app.py:3." in contents(main.turns)
    )

    (sub_path,) = subagent_transcripts(SESSION)
    sub = read_claude_code(sub_path)
    assert sub.turns and all(t.sidechain for t in sub.turns)
    assert {t.metadata["agent_id"] for t in sub.turns} == {sub.meta.agent_id}
    assert sub_path.name == f"agent-{sub.meta.agent_id}.jsonl"
    assert contents(sub.turns, "prompt") == [SUBAGENT_PROMPT]
    assert contents(sub.turns, "tool_call") == ["[tool Bash] grep -rn 'discount(' --include=*.py ."]
    assert sub.meta.session_id == main.meta.session_id and main.meta.agent_id is None
    sub_thread, main_thread = to_conversation(sub)["thread_id"], to_conversation(main)["thread_id"]
    assert sub_thread == f"claude-code:{main.meta.session_id}:{sub.meta.agent_id}" != main_thread
    assert to_conversation(sub)["messages"][0]["metadata"]["sidechain"] is True
    assert subagent_transcripts(NO_GIT) == []


def test_session_metadata() -> None:
    meta = read_claude_code(SESSION).meta
    ids = {d["sessionId"] for d in _lines(SESSION) if "sessionId" in d}
    assert ids == {meta.session_id}
    assert (meta.client, meta.cwd, meta.git_branch, meta.client_version) == (
        "claude-code",
        "/home/dev/shop",
        "main",
        "2.1.328",
    )
    assert meta.started_at and meta.started_at.startswith("20") and meta.started_at.endswith("Z")
    assert meta.first_prompt == "The discount test fails. Find out why and fix it."
    # Outside a repository Claude Code writes the branch as "HEAD": no branch.
    assert '"gitBranch":"HEAD"' in NO_GIT.read_text()
    assert read_claude_code(NO_GIT).meta.git_branch is None


@pytest.mark.parametrize("name", ["debug-session.jsonl", "no-git.jsonl"])
def test_reading_in_pieces_gives_the_whole(name: str, tmp_path: Path) -> None:
    assert_pieces_equal_whole(read_claude_code, DATA / "claude-code" / name, tmp_path)


def test_subagent_read_in_pieces_gives_the_whole(tmp_path: Path) -> None:
    assert_pieces_equal_whole(read_claude_code, subagent_transcripts(SESSION)[0], tmp_path)


def test_offsets_partial_lines_and_a_file_replaced_by_a_shorter_one(tmp_path: Path) -> None:
    whole = read_claude_code(SESSION)
    assert whole.end_offset == SESSION.stat().st_size
    assert read_claude_code(SESSION, whole.end_offset).turns == []
    assert read_claude_code(SESSION, whole.end_offset).meta == whole.meta
    # An offset past the end (the file was replaced by a shorter one) reads it from the start.
    assert read_claude_code(NO_GIT, whole.end_offset).turns == read_claude_code(NO_GIT).turns
    line = {
        "type": "user",
        "isSidechain": False,
        "message": {"role": "user", "content": "One more question"},
        "timestamp": "2026-12-07T03:00:00.000Z",
        "sessionId": whole.meta.session_id,
    }
    assert_partial_line_left(read_claude_code, SESSION, tmp_path, line)


def test_unknown_and_corrupt_lines_are_skipped(tmp_path: Path) -> None:
    assert_bad_lines_skipped(read_claude_code, SESSION, tmp_path)
    assert read_claude_code(SESSION).skipped == 0


def test_injected_context_is_removed_wherever_it_appears(tmp_path: Path) -> None:
    """Our markers inside a prompt, an assistant reply or a tool result: the span goes, the rest stays."""
    lines = _lines(SESSION)
    prompt = next(d for d in lines if d["type"] == "user" and isinstance(d["message"]["content"], str))
    reply = next(
        d for d in lines if d["type"] == "assistant" and d["message"]["content"][0]["type"] == "text"
    )
    result = next(d for d in lines if d["type"] == "user" and isinstance(d["message"]["content"], list))
    injected = f"{INJECTED_OPEN}\nremembered: the owner is Dana\n</memory-substrate-context>"
    prompt["message"]["content"] = f"Fix the bug.\n{injected}\nThanks."
    reply["message"]["content"][0]["text"] = injected
    result["message"]["content"][0]["content"] = f"output line\n{injected}"
    result.pop("toolUseResult", None)
    path = tmp_path / "injected.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in (prompt, reply, result)))
    turns = read_claude_code(path).turns
    assert contents(turns) == [
        "Fix the bug.\n\nThanks.",
        "[result] output line",
    ]  # the reply was only context


def test_to_conversation_is_valid_memory_ingest_input() -> None:
    chunk = read_claude_code(SESSION)
    data = to_conversation(chunk)
    parsed = ConversationInput.model_validate(data)
    assert data["thread_id"] == f"claude-code:{chunk.meta.session_id}"
    assert data["title"] == "claude-code session The discount test fails. Find out why and …"
    assert data["origin"] == {"host": "claude-code", "project": "/home/dev/shop"}
    assert len(parsed.messages) == len(chunk.turns)
    first = data["messages"][0]
    assert first["role"] == "user" and "name" not in first and first["created_at"] == chunk.turns[0].timestamp
    assert first["metadata"]["session"] == {
        "session_id": chunk.meta.session_id,
        "cwd": "/home/dev/shop",
        "git_branch": "main",
        "client_version": "2.1.328",
        "started_at": chunk.meta.started_at,
        "parser": PARSER,
    }
    assert data["messages"][2]["name"] == "claude-code" and data["messages"][2]["metadata"]["tool"] == "Bash"
    # A later piece of the same session keeps the thread and the title.
    later = to_conversation(read_claude_code(SESSION, chunk.end_offset // 2))
    assert (later["thread_id"], later["title"]) == (data["thread_id"], data["title"])

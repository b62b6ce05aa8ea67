"""What both transcript parsers share: cleaning, bounding, the conversation input, a light import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memory_substrate.hooks.transcripts import (
    INJECTED_CLOSE,
    INJECTED_OPEN,
    Chunk,
    SessionMeta,
    clean_text,
    to_conversation,
)
from memory_substrate.hooks.transcripts.common import bound, own_tool


def test_the_parsers_import_nothing_heavy() -> None:
    """They run on a hook's cold path: no pydantic, numpy, settings, store or application."""
    code = (
        "import json, sys, memory_substrate.hooks.transcripts.claude_code, memory_substrate.hooks.transcripts.codex;"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    heavy = {m for m in loaded if m.split(".")[0] in ("numpy", "pydantic", "pydantic_core", "sqlite3", "mcp")}
    ours = {
        m for m in loaded if m.startswith("memory_substrate.") and not m.startswith("memory_substrate.hooks")
    }
    assert not heavy and ours <= {"memory_substrate.version"}, (heavy, ours)


def test_injected_context_reminders_and_private_spans_are_removed() -> None:
    text = (
        f"Keep this. {INJECTED_OPEN}\nfrom memory\n{INJECTED_CLOSE} and this.\n"
        "<system-reminder>client note</system-reminder>\n<private>secret plan</private> End."
    )
    assert clean_text(text) == "Keep this. and this.\n\nEnd."
    # An unclosed span (a cut transcript) is removed to the end.
    assert clean_text(f"Before {INJECTED_OPEN} half of a packa") == "Before"
    assert clean_text(f"{INJECTED_OPEN}only context{INJECTED_CLOSE}") == ""
    plain = "a < b and c > d"
    assert clean_text(plain) == plain


def test_bound_keeps_head_and_tail() -> None:
    assert bound("short") == "short"
    long = "".join(f"line {i}\n" for i in range(2000))
    kept = bound(long)
    assert kept.startswith("line 0\nline 1\n") and kept.endswith("line 1999\n")
    omitted = len(long) - 600 - 400
    assert f"… [{omitted} characters omitted] …" in kept and len(kept) < 1100


def test_an_empty_chunk_gives_no_messages() -> None:
    data = to_conversation(Chunk([], SessionMeta("codex", session_id="s1"), 0, "codex-rollout.v1"))
    assert data["messages"] == [] and data["thread_id"] == "codex:s1" and "origin" not in data


@pytest.mark.parametrize(
    ("name", "ours"),
    [
        ("mcp__memory-substrate__memory_query", True),
        ("mcp__plugin_memory-substrate_memory-substrate__memory_remember", True),
        ("mcp__memory__memory_ingest", True),  # the server registered under a name of the user's
        ("memory.memory_maintain", True),
        ("memory_query", True),
        ("mcp__github__create_issue", False),
        ("Bash", False),
        ("mcp__notes__memory_query_helper", False),
    ],
)
def test_our_own_tools_are_known_by_name_whatever_the_server_is_called(name: str, ours: bool) -> None:
    assert own_tool(name) is ours

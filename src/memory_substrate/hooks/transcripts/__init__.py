"""Read Claude Code and Codex session transcripts into turns for capture.

Versioned parsers (``PARSER`` in each module) that keep prompts, assistant text, one compact
line per tool call and bounded tool results, and never keep thinking, reasoning, system
reminders, attachments or the context our own hooks injected. Standard library only: this is
imported on a hook's cold path.
"""

from memory_substrate.hooks.transcripts.claude_code import read_claude_code, subagent_transcripts
from memory_substrate.hooks.transcripts.codex import read_codex
from memory_substrate.hooks.transcripts.common import (
    INJECTED_CLOSE,
    INJECTED_OPEN,
    Chunk,
    SessionMeta,
    Turn,
    clean_text,
    to_conversation,
)

__all__ = [
    "INJECTED_CLOSE",
    "INJECTED_OPEN",
    "Chunk",
    "SessionMeta",
    "Turn",
    "clean_text",
    "read_claude_code",
    "read_codex",
    "subagent_transcripts",
    "to_conversation",
]

"""A loopback stub of the Anthropic Messages API, scripted per request, for the real Claude Code CLI.

``POST /v1/messages`` with ``stream: true`` answers with the SSE event sequence the real API sends
(message_start, content_block_start / ping / content_block_delta / content_block_stop per block,
message_delta, message_stop). A reply is a list of blocks: text, thinking, or tool_use; when it
holds tool_use blocks the real client runs the tools (Bash, Read, Agent, ...) and sends the
tool_results in its next request. ``count_tokens`` and non-streaming calls are answered simply.
Every request is recorded in ``requests``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.stub_server import ScriptedStub, pieces, send_event, send_json, start_sse, tokens


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    thinking: str
    signature: str = "c3R1Yi1zaWduYXR1cmU="


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: f"toolu_{uuid.uuid4().hex[:24]}")


Block = Text | Thinking | ToolUse
Reply = list[Block]


def text(value: str) -> Reply:
    return [Text(value)]


def bash(command: str, description: str = "Run a command") -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": description})


def read(path: str) -> ToolUse:
    return ToolUse("Read", {"file_path": path})


def agent(
    prompt: str,
    description: str = "Look something up",
    subagent_type: str = "general-purpose",
    background: bool = False,
) -> ToolUse:
    """An Agent (subagent) call; answer its turns with :meth:`AnthropicStub.subagent`."""
    return ToolUse(
        "Agent",
        {
            "description": description,
            "prompt": prompt,
            "subagent_type": subagent_type,
            "run_in_background": background,
        },
    )


def first_user_text(body: dict[str, Any]) -> str:
    """The first user message's own text (system reminders left out): which conversation a request is."""
    for msg in body.get("messages") or []:
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            b.get("text", "")
            for b in content or []
            if isinstance(b, dict)
            and b.get("type") == "text"
            and not b.get("text", "").lstrip().startswith("<system-reminder>")
        )
    return ""


class AnthropicStub(ScriptedStub[Reply]):
    """Use as a context manager; ``url`` is the ANTHROPIC_BASE_URL to give the client."""

    endpoint = "/v1/messages"
    text_keys = ("system", "messages")
    default_model = "claude-stub"
    default_reply = text("Done.")

    def subagent(self, prompt: str, replies: Iterable[Reply]) -> None:
        """Answer the subagent launched with ``prompt`` (its conversation starts with it) from ``replies``."""
        self.route(lambda body: prompt in first_user_text(body), replies)

    def is_model_request(self, record: dict[str, Any]) -> bool:
        # Only streamed calls are the agent's turns; side calls are answered without the script.
        return super().is_model_request(record) and bool(record["body"].get("stream"))

    # -- protocol -----------------------------------------------------------------------------
    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        path = h.path.split("?")[0]
        if h.command != "POST":
            send_json(h, {"type": "error", "error": {"type": "not_found_error", "message": path}}, 404)
        elif path == "/v1/messages/count_tokens":
            send_json(h, {"input_tokens": tokens(body)})
        elif path != "/v1/messages":
            send_json(h, {"type": "error", "error": {"type": "not_found_error", "message": path}}, 404)
        elif body.get("stream"):
            self._stream(h, body, self.next_reply(body))
        else:
            # Side calls (titles, summaries) get a short plain answer without consuming the script.
            send_json(h, self._message(body, [{"type": "text", "text": "ok"}], "end_turn", 1))

    def _message(
        self, body: dict[str, Any], content: list[dict[str, Any]], stop: str | None, out_tokens: int
    ) -> dict[str, Any]:
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": tokens(body),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": out_tokens,
            },
        }

    def _stream(self, h: BaseHTTPRequestHandler, body: dict[str, Any], reply: Reply) -> None:
        start_sse(h)
        send_event(h, "message_start", {"type": "message_start", "message": self._message(body, [], None, 1)})
        out_tokens = 1
        for i, block in enumerate(reply):
            if isinstance(block, Text):
                start: dict[str, Any] = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": part} for part in pieces(block.text)]
            elif isinstance(block, Thinking):
                start = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [{"type": "thinking_delta", "thinking": part} for part in pieces(block.thinking)]
                deltas.append({"type": "signature_delta", "signature": block.signature})
            else:
                start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
                deltas = [
                    {"type": "input_json_delta", "partial_json": part}
                    for part in pieces(json.dumps(block.input))
                ]
            send_event(
                h, "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
            )
            if i == 0:
                send_event(h, "ping", {"type": "ping"})
            for delta in deltas:
                send_event(
                    h, "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
                )
            send_event(h, "content_block_stop", {"type": "content_block_stop", "index": i})
            out_tokens += sum(len(json.dumps(d)) for d in deltas) // 4
        stop = "tool_use" if any(isinstance(b, ToolUse) for b in reply) else "end_turn"
        send_event(
            h,
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
        )
        send_event(h, "message_stop", {"type": "message_stop"})


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last user message (what the client ran and got back)."""
    messages = body.get("messages") or []
    for msg in reversed(messages):
        if msg.get("role") == "user" and isinstance(msg.get("content"), list):
            found = [b for b in msg["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            if found:
                return found
    return []

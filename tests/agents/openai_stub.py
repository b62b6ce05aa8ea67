"""A loopback stub of the OpenAI Responses API, scripted per request, for the real Codex CLI.

``POST /v1/responses`` answers with the Responses SSE stream (response.created, in_progress, then
per output item: output_item.added, its deltas, output_item.done; response.completed last). A reply
is a list of items: assistant messages, reasoning summaries, or function calls; Codex runs the
function calls (``exec_command``) and sends their ``function_call_output`` in its next request.
Codex is pointed here by a model provider with ``wire_api = "responses"``. Every request is
recorded in ``requests``.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.agents.stub_server import ScriptedStub, pieces, send_event, send_json, start_sse, tokens


@dataclass(frozen=True)
class Message:
    text: str


@dataclass(frozen=True)
class Reasoning:
    summary: str


@dataclass(frozen=True)
class FunctionCall:
    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")
    namespace: str | None = None  # a namespaced tool's namespace (the subagent tools: "multi_agent_v1")


Item = Message | Reasoning | FunctionCall
Reply = list[Item]


def say(value: str) -> Reply:
    return [Message(value)]


def exec_command(cmd: str) -> FunctionCall:
    """Codex's shell tool (unified exec): runs ``cmd`` in the session's working directory."""
    return FunctionCall("exec_command", {"cmd": cmd, "yield_time_ms": 5000})


class OpenAIStub(ScriptedStub[Reply]):
    """Use as a context manager; ``base_url`` is the provider's base_url (``<url>/v1``)."""

    endpoint = "/v1/responses"
    text_keys = ("instructions", "input")
    default_model = "gpt-stub"
    default_reply = say("Done.")
    _seq = 0  # the stream's sequence_number

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        path = h.path.split("?")[0]
        if h.command == "POST" and path == "/v1/responses":
            self._stream(h, body, self.next_reply(body))
        elif path == "/v1/models":
            send_json(
                h, {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "stub"}]}
            )
        else:
            send_json(h, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}, 404)

    def _event(self, h: BaseHTTPRequestHandler, data: dict[str, Any]) -> None:
        self._seq += 1
        send_event(h, data["type"], {**data, "sequence_number": self._seq})

    def _response(
        self, body: dict[str, Any], rid: str, status: str, output: list[dict[str, Any]], out_tokens: int = 0
    ) -> dict[str, Any]:
        resp: dict[str, Any] = {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": body.get("model") or self.model,
            "output": output,
        }
        if status == "completed":
            tin = tokens(body)
            resp["usage"] = {
                "input_tokens": tin,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": out_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": tin + out_tokens,
            }
        return resp

    def _stream(self, h: BaseHTTPRequestHandler, body: dict[str, Any], reply: Reply) -> None:
        rid = f"resp_{uuid.uuid4().hex[:24]}"
        start_sse(h)
        self._event(h, {"type": "response.created", "response": self._response(body, rid, "in_progress", [])})
        self._event(
            h, {"type": "response.in_progress", "response": self._response(body, rid, "in_progress", [])}
        )
        done: list[dict[str, Any]] = []
        for idx, entry in enumerate(reply):
            done.append(self._item(h, idx, entry))
        out_tokens = max(1, len(json.dumps(done)) // 4)
        self._event(
            h,
            {
                "type": "response.completed",
                "response": self._response(body, rid, "completed", done, out_tokens),
            },
        )

    def _item(self, h: BaseHTTPRequestHandler, idx: int, entry: Item) -> dict[str, Any]:
        if isinstance(entry, Message):
            iid = f"msg_{uuid.uuid4().hex[:24]}"
            item: dict[str, Any] = {
                "id": iid,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            self._event(h, {"type": "response.output_item.added", "output_index": idx, "item": item})
            part = {"type": "output_text", "text": "", "annotations": []}
            self._event(
                h,
                {
                    "type": "response.content_part.added",
                    "item_id": iid,
                    "output_index": idx,
                    "content_index": 0,
                    "part": part,
                },
            )
            for piece in pieces(entry.text):
                self._event(
                    h,
                    {
                        "type": "response.output_text.delta",
                        "item_id": iid,
                        "output_index": idx,
                        "content_index": 0,
                        "delta": piece,
                    },
                )
            self._event(
                h,
                {
                    "type": "response.output_text.done",
                    "item_id": iid,
                    "output_index": idx,
                    "content_index": 0,
                    "text": entry.text,
                },
            )
            full = {"type": "output_text", "text": entry.text, "annotations": []}
            self._event(
                h,
                {
                    "type": "response.content_part.done",
                    "item_id": iid,
                    "output_index": idx,
                    "content_index": 0,
                    "part": full,
                },
            )
            item = {**item, "status": "completed", "content": [full]}
        elif isinstance(entry, Reasoning):
            iid = f"rs_{uuid.uuid4().hex[:24]}"
            item = {"id": iid, "type": "reasoning", "summary": []}
            self._event(h, {"type": "response.output_item.added", "output_index": idx, "item": item})
            self._event(
                h,
                {
                    "type": "response.reasoning_summary_part.added",
                    "item_id": iid,
                    "output_index": idx,
                    "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""},
                },
            )
            for piece in pieces(entry.summary):
                self._event(
                    h,
                    {
                        "type": "response.reasoning_summary_text.delta",
                        "item_id": iid,
                        "output_index": idx,
                        "summary_index": 0,
                        "delta": piece,
                    },
                )
            self._event(
                h,
                {
                    "type": "response.reasoning_summary_text.done",
                    "item_id": iid,
                    "output_index": idx,
                    "summary_index": 0,
                    "text": entry.summary,
                },
            )
            item = {**item, "summary": [{"type": "summary_text", "text": entry.summary}]}
        else:
            iid = f"fc_{uuid.uuid4().hex[:24]}"
            args = json.dumps(entry.arguments)
            item = {
                "id": iid,
                "type": "function_call",
                "status": "in_progress",
                "call_id": entry.call_id,
                "name": entry.name,
                "arguments": "",
            }
            if entry.namespace:
                item["namespace"] = entry.namespace
            self._event(h, {"type": "response.output_item.added", "output_index": idx, "item": item})
            for piece in pieces(args):
                self._event(
                    h,
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": iid,
                        "output_index": idx,
                        "delta": piece,
                    },
                )
            self._event(
                h,
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": iid,
                    "output_index": idx,
                    "arguments": args,
                },
            )
            item = {**item, "status": "completed", "arguments": args}
        self._event(h, {"type": "response.output_item.done", "output_index": idx, "item": item})
        return item


def function_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function_call_output items a request carries (what Codex ran and got back)."""
    return [
        i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


def messages(body: dict[str, Any], role: str) -> list[str]:
    """Texts of a request's input messages of one role ("developer", "user", "assistant")."""
    out = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == role:
            out.append("".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)))
    return out

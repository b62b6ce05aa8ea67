"""Any OpenAI-compatible chat endpoint: OpenAI, Ollama (``/v1``), vLLM, llama.cpp server, LM Studio.

``POST {base_url}/chat/completions`` with ``response_format`` set to the extraction JSON Schema
(servers that do not support ``json_schema`` are asked once more with ``json_object``). The HTTP
client is httpx's API (the ``httpx2`` distribution the MCP SDK installs, or ``httpx``).

Answers are streamed (server-sent events) so that a slow local model is judged by its progress,
not by one fixed timeout: ``read_timeout_s`` bounds the wait for the first token (prefill) and
between chunks, ``window_timeout_s`` the whole answer. Hanging up a stream lets llama.cpp and
Ollama stop generating at their next token; a request still in prefill runs on, so the endpoint
is treated as busy for as long again (``EndpointGate``) and nobody queues a retry behind it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping
from typing import ClassVar
from urllib.parse import urlparse

from memory_substrate.embed.openai_compat import _http_client_module
from memory_substrate.json_types import JsonObject
from memory_substrate.llm.base import Completion, LLMError, RetryableError, StructuredModel
from memory_substrate.llm.chat_request import ChatRequest


class EndpointGate:
    """At most ``limit`` requests in flight to one endpoint, and none while a request the client
    abandoned may still be running there."""

    _gates: ClassVar[dict[tuple[str, int], EndpointGate]] = {}  # one per endpoint (and limit) per process
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, limit: int) -> None:
        self.slots = threading.BoundedSemaphore(max(1, limit))
        self.busy_until = 0.0
        self._mu = threading.Lock()

    @classmethod
    def of(cls, endpoint: str, limit: int) -> EndpointGate:
        with cls._lock:
            gate = cls._gates.get((endpoint, limit))
            if gate is None:
                gate = cls._gates[(endpoint, limit)] = cls(limit)
            return gate

    def acquire(self) -> None:
        self.slots.acquire()
        while (wait := self.busy_until - time.monotonic()) > 0:
            time.sleep(wait)

    def release(self, *, abandoned_after_s: float = 0.0) -> None:
        if abandoned_after_s > 0:
            with self._mu:
                self.busy_until = max(self.busy_until, time.monotonic() + abandoned_after_s)
        self.slots.release()


class OpenAICompatibleChat(StructuredModel):
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        window_timeout_s: float = 900.0,
        max_retries: int = 3,
        backoff_s: float = 2.0,
        max_in_flight: int = 1,
        temperature: float = 0.0,
    ) -> None:
        super().__init__(max_retries=max_retries, backoff_s=backoff_s)
        if not base_url or not model:
            raise ValueError("an OpenAI-compatible model needs a base URL and a model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.window_timeout_s = window_timeout_s
        self.temperature = temperature
        self.name = f"llm:{model}@{urlparse(self.base_url).netloc or self.base_url}"
        self.gate = EndpointGate.of(self.base_url, max_in_flight)
        self._schema_mode = "json_schema"
        self._usage_in_stream = True

    def _complete(
        self, messages: list[dict[str, str]], schema: JsonObject, schema_name: str, max_tokens: int | None
    ) -> Completion:
        body: ChatRequest = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "stream": True,
        }
        if self._usage_in_stream:
            body["stream_options"] = {"include_usage": True}
        if max_tokens:
            body["max_tokens"] = max_tokens
        if self._schema_mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema},
            }
        else:
            body["response_format"] = {"type": "json_object"}
        self.gate.acquire()
        started = time.monotonic()
        abandoned = 0.0
        try:
            return self._request(body)
        except _Refused as refused:
            if refused.field == "stream_options":
                self._usage_in_stream = False  # token counts are then unknown, the answer is not
            else:
                self._schema_mode = (
                    "json_object"  # the prompt describes the schema; the server just can't enforce it
                )
        except RetryableError as exc:
            abandoned = exc.abandoned_after_s
            raise
        except BaseException:
            abandoned = time.monotonic() - started
            raise
        finally:
            self.gate.release(abandoned_after_s=abandoned)
        return self._complete(messages, schema, schema_name, max_tokens)

    def _request(self, body: ChatRequest) -> Completion:
        httpx = _http_client_module()
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        started = time.monotonic()
        timeout = httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 30.0))
        try:
            with httpx.stream(
                "POST", f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=timeout
            ) as resp:
                if resp.status_code >= 400:
                    self._refuse(resp.status_code, resp.read().decode("utf-8", "replace"), body)
                if "text/event-stream" not in resp.headers.get("content-type", ""):
                    return self._whole(
                        resp.read().decode("utf-8", "replace")
                    )  # a server that ignores "stream"
                return self._stream(resp.iter_lines(), started)
        except httpx.TimeoutException as exc:
            raise RetryableError(
                f"timed out ({type(exc).__name__}) after {time.monotonic() - started:.1f} s",
                abandoned_after_s=time.monotonic() - started,
            ) from None
        except httpx.TransportError as exc:
            raise RetryableError(f"{type(exc).__name__}: {exc}") from None

    def _refuse(self, status: int, text: str, body: ChatRequest) -> None:
        if status == 400 and body["response_format"]["type"] == "json_schema" and "response_format" in text:
            raise _Refused("response_format")
        if status == 400 and "stream_options" in body and "stream_options" in text:
            raise _Refused("stream_options")
        if status == 429 or status >= 500:
            raise RetryableError(f"HTTP {status}")
        raise LLMError(f"{self.name}: HTTP {status}: {text[:300]}", details={"status": status})

    def _stream(self, lines: Iterable[str], started: float) -> Completion:
        """Read server-sent events to ``[DONE]``; each line is a chunk of the answer."""
        parts: list[str] = []
        finish: str | None = None
        usage: dict[str, int] = {}
        for line in lines:
            elapsed = time.monotonic() - started
            if elapsed > self.window_timeout_s:
                raise RetryableError(
                    f"no complete answer within {self.window_timeout_s:.0f} s (window deadline)",
                    abandoned_after_s=0.0,
                )
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                chunk = json.loads(data)
                for choice in chunk.get("choices") or []:
                    parts.append((choice.get("delta") or {}).get("content") or "")
                    finish = choice.get("finish_reason") or finish
                if chunk.get("usage"):
                    usage = _usage(chunk["usage"])
            except (ValueError, AttributeError, TypeError):
                raise LLMError(
                    f"{self.name}: stream chunk is not a chat completion chunk", details={"chunk": data[:300]}
                ) from None
        if finish is None and not parts:
            raise RetryableError("the stream ended before any answer")
        return Completion("".join(parts), finish, usage)

    def _whole(self, text: str) -> Completion:
        try:
            data = json.loads(text)
            choice = data["choices"][0]
            return Completion(
                choice["message"]["content"] or "",
                choice.get("finish_reason"),
                _usage(data.get("usage") or {}),
            )
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(
                f"{self.name}: response is not a chat completion", details={"body": text[:500]}
            ) from None


class _Refused(Exception):
    """The server refused an optional field (``response_format: json_schema``, ``stream_options``)."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def _usage(raw: Mapping[str, object]) -> dict[str, int]:
    return {k: _tokens(raw.get(k)) for k in ("prompt_tokens", "completion_tokens")}


def _tokens(value: object) -> int:
    """``int(value or 0)`` for a count of the server's JSON: a number, or a numeric string."""
    value = value or 0
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"a token count must be a number, not {type(value).__name__}")

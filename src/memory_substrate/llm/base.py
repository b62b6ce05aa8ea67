"""The chat-model port and the template every provider shares.

A provider implements one method, ``_complete`` (one HTTP call or one sampling request that
returns the model's text and why it stopped). ``StructuredModel.complete`` does the rest the same
way for all: retries with exponential backoff on rate limits, server errors and timeouts only,
and token accounting. Reading the answer (JSON, schema, item-by-item salvage) is the caller's
(``graph/salvage.py``): a model's answer is data, and nothing in it may crash a run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TypedDict

from pydantic import ValidationError as PydanticValidationError

from memory_substrate.errors import MemorySubstrateError
from memory_substrate.json_types import JsonObject

MAX_BACKOFF_S = 120.0


class LLMError(MemorySubstrateError):
    """The model could not be reached or refused the request (after retries)."""

    code = "memory_llm_error"


class LLMOutputError(MemorySubstrateError):
    """The model answered, but not with output that fits the schema; nothing was written."""

    code = "memory_llm_output_invalid"


class LLMTruncatedError(MemorySubstrateError):
    """The model's answer was cut at ``max_tokens`` before any item of it was complete."""

    code = "memory_llm_output_truncated"


class RetryableError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection reset).

    ``abandoned_after_s``: the client hung up on a request the server may still be working on
    (a timeout), after that many seconds; the retry waits at least as long again."""

    def __init__(self, message: str, *, abandoned_after_s: float = 0.0) -> None:
        super().__init__(message)
        self.abandoned_after_s = abandoned_after_s


@dataclass
class Completion:
    """One answer: its text, why generation stopped ("stop", "length" = cut at max_tokens, or
    None when the server did not say), token usage and the attempts it took."""

    text: str
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    attempts: int = 1
    errors: list[str] = field(default_factory=list)  # the retried failures, in order

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    latency_ms: list[float] = field(default_factory=list)


class StructuredModel:
    """Base class of chat providers: ``complete`` returns the model's answer, retried as needed."""

    name = "model"

    def __init__(self, *, max_retries: int = 3, backoff_s: float = 0.5) -> None:
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.usage = Usage()

    def _complete(
        self, messages: list[dict[str, str]], schema: JsonObject, schema_name: str, max_tokens: int | None
    ) -> Completion:
        """One request. Raise ``RetryableError`` for transient failures."""
        raise NotImplementedError

    def complete(
        self,
        messages: list[dict[str, str]],
        schema: JsonObject,
        *,
        schema_name: str,
        max_tokens: int | None = None,
    ) -> Completion:
        """The model's answer to ``messages``; raises ``LLMError`` after ``max_retries`` retries."""
        attempt = 0
        errors: list[str] = []
        while True:
            started = time.perf_counter()
            try:
                answer = self._complete([dict(m) for m in messages], schema, schema_name, max_tokens)
                break
            except RetryableError as exc:
                attempt += 1
                errors.append(str(exc))
                self.usage.retries += 1
                if attempt > self.max_retries:
                    raise LLMError(
                        f"{self.name}: gave up after {attempt} attempts: {exc}",
                        details={"model": self.name, "attempts": attempt, "errors": errors},
                    ) from None
                # Exponential backoff, and never less than the abandoned request ran: a local
                # server works on until its prefill ends, and a retry would queue behind it.
                time.sleep(
                    min(MAX_BACKOFF_S, max(self.backoff_s * (2 ** (attempt - 1)), exc.abandoned_after_s))
                )
            finally:
                self.usage.latency_ms.append(round((time.perf_counter() - started) * 1000, 2))
        self.usage.calls += 1
        self.usage.prompt_tokens += answer.usage.get("prompt_tokens", 0)
        self.usage.completion_tokens += answer.usage.get("completion_tokens", 0)
        answer.attempts, answer.errors = attempt + 1, errors
        return answer


def strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip()


class SchemaError(TypedDict):
    """One of pydantic's errors as plain JSON: where, what, and its error type."""

    loc: str
    msg: str
    type: str


def error_list(exc: PydanticValidationError, limit: int = 20) -> list[SchemaError]:
    """Pydantic's errors as plain JSON (its ``ctx`` may hold the raised exception itself)."""
    return [
        {
            "loc": ".".join(str(p) for p in e.get("loc", ())),
            "msg": str(e.get("msg")),
            "type": str(e.get("type")),
        }
        for e in exc.errors(include_url=False, include_input=False)[:limit]
    ]

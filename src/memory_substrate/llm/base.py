"""The chat-model port and the template every provider shares.

A provider implements one method, ``_complete`` (one HTTP call or one sampling request that
returns the model's text). ``StructuredModel.generate`` does the rest the same way for all:
retries with exponential backoff on rate limits, server errors and timeouts only; JSON parsing and
validation into a typed model; token accounting. It never mutates the caller's messages.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.errors import MemorySubstrateError

M = TypeVar("M", bound=BaseModel)


class LLMError(MemorySubstrateError):
    """The model could not be reached or refused the request (after retries)."""

    code = "memory_llm_error"


class LLMOutputError(MemorySubstrateError):
    """The model answered, but not with output that fits the schema; nothing was written."""

    code = "memory_llm_output_invalid"


class RetryableError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection reset)."""


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    latency_ms: list[float] = field(default_factory=list)


class StructuredModel:
    """Base class of chat providers: ``generate`` returns a validated model instance."""

    name = "model"

    def __init__(self, *, max_retries: int = 3, backoff_s: float = 0.5) -> None:
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.usage = Usage()

    def _complete(self, messages: list[dict[str, str]], schema: dict[str, Any], schema_name: str) -> tuple[str, dict[str, int]]:
        """One request; returns (text, usage). Raise ``RetryableError`` for transient failures."""
        raise NotImplementedError

    def generate(self, messages: list[dict[str, str]], model: type[M], *, schema_name: str) -> tuple[M, str]:
        """(validated output, raw text). Raises ``LLMError`` or ``LLMOutputError``."""
        schema = model.model_json_schema()
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                text, usage = self._complete([dict(m) for m in messages], schema, schema_name)
                break
            except RetryableError as exc:
                attempt += 1
                self.usage.retries += 1
                if attempt > self.max_retries:
                    raise LLMError(f"{self.name}: gave up after {attempt} attempts: {exc}", details={"model": self.name}) from None
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
            finally:
                self.usage.latency_ms.append(round((time.perf_counter() - started) * 1000, 2))
        self.usage.calls += 1
        self.usage.prompt_tokens += usage.get("prompt_tokens", 0)
        self.usage.completion_tokens += usage.get("completion_tokens", 0)
        return parse_output(text, model, self.name), text


def _strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip()


def parse_output(text: str, model: type[M], name: str) -> M:
    try:
        data = json.loads(_strip_fences(text))
    except json.JSONDecodeError as exc:
        raise LLMOutputError(f"{name}: output is not JSON ({exc.msg})", details={"raw": text[:2000]}) from None
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        raise LLMOutputError(
            f"{name}: output does not fit the extraction schema ({len(errors)} errors)",
            details={"errors": errors[:20], "raw": text[:2000]},
        ) from None

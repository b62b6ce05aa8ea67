"""Extraction through MCP sampling: the connected client's own model does the work.

Opt-in (``memory_maintain`` mode ``extract`` with ``options.extractor="sampling"``) and only when
the client declares the sampling capability. The MCP server hands in ``ask``, a blocking function
that sends one sampling request and returns the text; this class adds the shared retry, schema
validation and accounting of ``StructuredModel``.
"""

from __future__ import annotations

from collections.abc import Callable

from memory_substrate.json_types import JsonObject
from memory_substrate.llm.base import Completion, StructuredModel

Ask = Callable[[str, str, int], str]  # (system prompt, user text, max tokens) -> model text


class SamplingExtractor(StructuredModel):
    def __init__(self, ask: Ask, *, client_name: str = "client", max_tokens: int = 4096) -> None:
        super().__init__(max_retries=1, backoff_s=0.2)
        self._ask = ask
        self.max_tokens = max_tokens
        self.name = f"sampling:{client_name}"

    def _complete(
        self, messages: list[dict[str, str]], schema: JsonObject, schema_name: str, max_tokens: int | None
    ) -> Completion:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        user = "\n\n".join(m["content"] for m in messages if m["role"] != "system")
        return Completion(self._ask(system, user, min(max_tokens or self.max_tokens, self.max_tokens)))

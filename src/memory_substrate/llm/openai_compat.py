"""Any OpenAI-compatible chat endpoint: OpenAI, Ollama (``/v1``), vLLM, llama.cpp server, LM Studio.

``POST {base_url}/chat/completions`` with ``response_format`` set to the extraction JSON Schema
(servers that do not support ``json_schema`` are asked once more with ``json_object``). The HTTP
client is httpx's API (the ``httpx2`` distribution the MCP SDK installs, or ``httpx``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from memory_substrate.embed.openai_compat import _http_client_module
from memory_substrate.llm.base import LLMError, RetryableError, StructuredModel


class OpenAICompatibleChat(StructuredModel):
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        temperature: float = 0.0,
    ) -> None:
        super().__init__(max_retries=max_retries, backoff_s=backoff_s)
        if not base_url or not model:
            raise ValueError("an OpenAI-compatible model needs a base URL and a model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.name = f"llm:{model}@{urlparse(self.base_url).netloc or self.base_url}"
        self._schema_mode = "json_schema"

    def _post(self, body: dict[str, Any]) -> Any:
        httpx = _http_client_module()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            return httpx.post(f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout_s)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise RetryableError(f"{type(exc).__name__}: {exc}") from None

    def _complete(self, messages: list[dict[str, str]], schema: dict[str, Any], schema_name: str) -> tuple[str, dict[str, int]]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self._schema_mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema}}
        else:
            body["response_format"] = {"type": "json_object"}
        resp = self._post(body)
        if resp.status_code == 400 and self._schema_mode == "json_schema" and "response_format" in resp.text:
            self._schema_mode = "json_object"  # the schema is still in the prompt; the server just can't enforce it
            return self._complete(messages, schema, schema_name)
        if resp.status_code == 429 or resp.status_code >= 500:
            raise RetryableError(f"HTTP {resp.status_code}")
        if resp.status_code >= 400:
            raise LLMError(f"{self.name}: HTTP {resp.status_code}: {resp.text[:300]}", details={"status": resp.status_code})
        try:
            data = resp.json()
            text = data["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(f"{self.name}: response is not a chat completion", details={"body": resp.text[:500]}) from None
        usage = data.get("usage") or {}
        return text, {k: int(usage.get(k) or 0) for k in ("prompt_tokens", "completion_tokens")}

"""Embeddings from any OpenAI-compatible HTTP endpoint (``POST {base_url}/embeddings``).

Works with OpenAI, Azure-style gateways, vLLM, llama.cpp server, Ollama's ``/v1`` and similar.
The HTTP client is ``httpx`` (or its drop-in ``httpx2``, which the MCP SDK already installs),
imported on first use.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from memory_substrate.errors import NotAvailableError
from memory_substrate.json_types import JsonObject


def _http_client_module() -> Any:
    try:
        import httpx

        return httpx
    except ImportError:
        pass
    try:
        import httpx2

        return httpx2
    except ImportError as exc:
        raise NotAvailableError(
            "the 'openai' embedder needs an HTTP client: pip install 'memory-substrate[openai]' (httpx)",
            details={"provider": "openai", "extra": "openai", "missing": "httpx"},
        ) from exc


class OpenAICompatibleEmbedder:
    """``Embedder`` over ``/v1/embeddings``. Vectors are L2-normalised here whatever the server does.

    ``name`` is ``openai:<model>@<host>`` (so a different model or server is a different name);
    ``dimensions`` is taken from the first response unless given.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        request_dimensions: bool = False,
        batch_size: int = 64,
        timeout_s: float = 30.0,
    ) -> None:
        if not base_url:
            raise ValueError("the 'openai' embedder needs a base URL (e.g. http://localhost:8000/v1)")
        if not model:
            raise ValueError("the 'openai' embedder needs a model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self._dimensions = dimensions
        self.request_dimensions = request_dimensions and dimensions is not None
        self.batch_size = max(1, batch_size)
        self.timeout_s = timeout_s
        self._client: Any = None
        host = urlparse(self.base_url).netloc or self.base_url
        suffix = f"-{dimensions}d" if self.request_dimensions else ""
        self.name = f"openai:{model}{suffix}@{host}"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self._dimensions = int(self._post(["dimension probe"]).shape[1])
        return self._dimensions

    def _http(self) -> Any:
        if self._client is None:
            httpx = _http_client_module()
            headers = {"Content-Type": "application/json"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout_s)
        return self._client

    def _post(self, texts: list[str]) -> npt.NDArray[np.float32]:
        payload: JsonObject = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.request_dimensions:
            payload["dimensions"] = self._dimensions
        resp = self._http().post("/embeddings", json=payload)
        if resp.status_code >= 400:
            raise NotAvailableError(
                f"embedding endpoint {self.base_url} answered HTTP {resp.status_code}",
                details={"provider": "openai", "status": resp.status_code, "body": resp.text[:500]},
            )
        data = resp.json().get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            raise NotAvailableError(
                f"embedding endpoint {self.base_url} returned {0 if not isinstance(data, list) else len(data)} "
                f"vectors for {len(texts)} inputs",
                details={"provider": "openai"},
            )
        rows = sorted(data, key=lambda d: d.get("index", 0))
        out = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalized: npt.NDArray[np.float32] = out / norms
        return normalized

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        parts = [self._post(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = np.concatenate(parts, axis=0)
        if self._dimensions is None:
            self._dimensions = int(out.shape[1])
        return out

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.embed_documents([text])[0]
        return vector

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

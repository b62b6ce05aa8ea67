"""Provider registry, and the OpenAI-compatible provider against a loopback stub server."""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
import pytest

from memory_substrate.embed import Embedder, StaticEmbedder, available, create_embedder, register
from memory_substrate.embed.gated import LanguageGatedEmbedder
from memory_substrate.embed.openai_compat import OpenAICompatibleEmbedder
from memory_substrate.embed.universal import UniversalSentenceEncoder
from memory_substrate.errors import NotAvailableError, ValidationError
from tests.loopback import serve_loopback


def test_default_is_bundled_and_lazy() -> None:
    e = create_embedder()
    assert isinstance(e, LanguageGatedEmbedder)  # the bundled English model and the USE encoder
    assert isinstance(e.english, StaticEmbedder) and isinstance(e.multilingual, UniversalSentenceEncoder)
    assert not e.english.loaded and not e.multilingual.loaded
    english = create_embedder("static")
    assert isinstance(english, StaticEmbedder) and not english.loaded
    assert create_embedder("none") is None
    assert {
        "use-gated",
        "use",
        "static-multilingual",
        "static",
        "openai",
        "sentence-transformers",
        "none",
    } <= set(available())


def test_unknown_provider_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="unknown embedder"):
        create_embedder("word2vec-from-the-moon")


def test_register_custom_provider() -> None:
    class Fixed:
        name = "fixed:unit"
        dimensions = 2

        def embed_documents(self, texts: list[str]) -> Any:
            return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

        def embed_query(self, text: str) -> Any:
            return np.array([1.0, 0.0], dtype=np.float32)

    register("fixed-test", lambda **_: Fixed(), replace=True)
    e = create_embedder("fixed-test")
    assert isinstance(e, Embedder) and e.name == "fixed:unit"
    with pytest.raises(ValueError, match="already registered"):
        register("fixed-test", lambda **_: Fixed())


def test_sentence_transformers_needs_path_and_names_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="local model folder"):
        create_embedder("sentence-transformers")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # simulate: extra not installed
    e = create_embedder("sentence-transformers", model="/models/all-MiniLM-L6-v2")
    assert e is not None and e.name.startswith("sentence-transformers:")
    with pytest.raises(NotAvailableError, match=r"memory-substrate\[sentence-transformers\]"):
        e.embed_query("hello")


def test_openai_needs_url_and_model() -> None:
    with pytest.raises(ValidationError, match="embedder_url"):
        create_embedder("openai", model="m")


def test_openai_missing_http_client_names_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    monkeypatch.setitem(sys.modules, "httpx2", None)
    e = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m")
    with pytest.raises(NotAvailableError, match=r"memory-substrate\[openai\]"):
        e.embed_query("x")


# ---------------------------------------------------------------- stub /v1/embeddings server
class _Stub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail_with: int | None = None


def _vector(text: str, dims: int = 8) -> list[float]:
    # deterministic, not normalised (the client must normalise)
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    vector: list[float] = (rng.normal(size=dims) * 3.0).tolist()
    return vector


@pytest.fixture
def stub_server() -> Iterator[tuple[str, _Stub]]:
    state = _Stub()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            state.requests.append(body)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path != "/v1/embeddings" or state.fail_with:
                self.send_response(state.fail_with or 404)
                self.end_headers()
                self.wfile.write(b'{"error": "nope"}')
                return
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(inputs)
            ]
            data.reverse()  # servers may answer out of order; ``index`` is authoritative
            payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    with serve_loopback(Handler) as base:
        yield f"{base}/v1", state


def test_openai_compatible_against_stub(stub_server: tuple[str, _Stub]) -> None:
    url, state = stub_server
    e = create_embedder("openai", model="stub-embed-1", url=url, api_key="sk-test", batch_size=2)
    assert isinstance(e, OpenAICompatibleEmbedder)
    try:
        assert e.name == f"openai:stub-embed-1@{url.split('//')[1].split('/')[0]}"
        texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
        v = e.embed_documents(texts)
        assert v.shape == (5, 8) and v.dtype == np.float32
        assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
        expected = np.array([_vector(t) for t in texts], dtype=np.float32)
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        assert np.allclose(v, expected, atol=1e-5)  # order restored from ``index``
        assert [r["input"] for r in state.requests] == [["alpha", "beta"], ["gamma", "delta"], ["epsilon"]]
        assert all(r["model"] == "stub-embed-1" for r in state.requests)
        assert state.headers[0]["authorization"] == "Bearer sk-test"
        assert e.dimensions == 8
        assert np.allclose(e.embed_query("beta"), v[1], atol=1e-6)
    finally:
        e.close()


def test_openai_compatible_dimensions_probe_and_http_error(stub_server: tuple[str, _Stub]) -> None:
    url, state = stub_server
    e = OpenAICompatibleEmbedder(url, "stub-embed-1")
    try:
        assert e.dimensions == 8  # probed with one request
        assert len(state.requests) == 1
        state.fail_with = 503
        with pytest.raises(NotAvailableError, match="HTTP 503"):
            e.embed_query("x")
    finally:
        e.close()

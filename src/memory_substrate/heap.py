"""Keep the objects a server lives with out of the garbage collector's full passes.

A full collection walks every tracked object. In a serving process most of them live as long as
the process: the modules, the MCP SDK's and our pydantic models (each with its compiled schema,
whose traversal is costly: importing ``mcp`` alone makes every full pass markedly longer), the
store's prepared state. CPython starts a full pass whenever the objects that survived younger
passes grow by a quarter of the long-lived ones, so under load it lands, every few dozen
requests, on whichever search or compile is running then: the tails of their latency
(notebooks/context-compiler-log.md).

``freeze_long_lived()`` runs one full collection and then ``gc.freeze()``: every object alive at that moment
moves to the permanent generation, which no pass visits. A server calls it once it is built and
before it serves: ``memory-substrate serve`` (stdio and http) and ``memory-substrate inspect``, from
``cli/`` only, before any background thread starts. What is frozen is never collected, so only
long-lived state should be alive at that point. A program embedding ``Memory``, or calling
``serve_http`` / ``serve_inspector`` itself, decides for itself (``freeze_heap=True``): nothing
freezes on import or by default.

An embedder loads its model on first use, after the server froze its heap, and a model is not
only numpy arrays: the multilingual encoder's vocabularies and tokenizers are lists of
30,000-128,000 strings and a few thousand objects the collector walks. So a process that froze
once (``freeze_long_lived``) freezes again when an embedder has loaded its model
(``settle_after_load``, called by each embedder's loader once the model is in); one that never
froze is left alone. Freezing again keeps the model's objects out of the passes too, so the
longest full pass stays short once the model is in (a process that never froze walks everything).
"""

from __future__ import annotations

import gc

_settled = False  # this process froze its heap once: state loaded later is frozen too


def freeze_long_lived() -> int:
    """Collect once, then freeze every object alive; returns how many are frozen now."""
    global _settled
    _settled = True
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def settle_after_load() -> None:
    """After long-lived state was loaded lazily (an embedder's model): freeze again, if and only if
    this process froze its heap before. A request running beside the load may have a few objects
    of its own frozen with it; they are still freed when their last reference goes (only a cycle
    among them would outlive the request)."""
    if _settled:
        freeze_long_lived()

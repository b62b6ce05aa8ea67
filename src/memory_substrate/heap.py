"""Keep the objects a server lives with out of the garbage collector's full passes.

A full collection walks every tracked object. In a serving process most of them live as long as
the process: the modules, the MCP SDK's and our pydantic models (each with its compiled schema,
whose traversal is costly: importing ``mcp`` alone makes one full pass take ~50 ms on the
machines measured here), the store's prepared state. CPython starts a full pass whenever the
objects that survived younger passes grow by a quarter of the long-lived ones, so under load it
lands, every few dozen requests, on whichever search or compile is running then: the tails of
their latency (docs/context-compiler-log.md).

``freeze_long_lived()`` runs one full collection and then ``gc.freeze()``: every object alive at that moment
moves to the permanent generation, which no pass visits. A server calls it once it is built and
before it serves: ``memory-substrate serve`` (stdio and http) and ``memory-substrate inspect``, from
``cli/`` only, before any background thread starts. What is frozen is never collected, so only
long-lived state should be alive at that point; the models loaded lazily afterwards are mostly
numpy arrays, which the collector does not track. A program embedding ``Memory``, or calling
``serve_http`` / ``serve_inspector`` itself, decides for itself (``freeze_heap=True``): nothing
freezes on import or by default.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> int:
    """Collect once, then freeze every object alive; returns how many are frozen now."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()

"""Traces: what a compile or an extraction run decided and why, stored for the inspector and
``memory_query trace``."""

from __future__ import annotations

from collections.abc import Mapping

from memory_substrate.json_types import JsonObject
from memory_substrate.models import Trace
from memory_substrate.redaction import redact_value
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import new_id, now_iso


def new_trace(kind: str, subject_id: str | None, data: JsonObject) -> Trace:
    """A trace of ``data`` as given: its builder has scanned what it took from outside the store
    (a compile's task, compiler/trace.py), so a compile on the hot path scans no stored text again."""
    return Trace(new_id("trace"), kind, subject_id, now_iso(), data)


def record(session: StoreSession, kind: str, subject_id: str | None, data: Mapping[str, object]) -> Trace:
    # An extraction trace keeps what a model answered (raw, when it failed to parse): the secret
    # scan runs over it as over every other stored text. Off the hot path. The trace is a dict
    # (a ``TypedDict`` is one at run time); ``dict`` types it as the JSON object it is stored as.
    trace = new_trace(kind, subject_id, redact_value(dict(data)))
    session.record_trace(trace)
    return trace

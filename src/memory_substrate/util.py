"""Small shared helpers: ids, time, hashing, JSON."""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import UTC, datetime
from typing import Any

ID_PREFIXES = {
    "source": "src",
    "knowledge": "know",
    "activity": "act",
    "work_item": "work",
    "node": "node",
    "entity": "ent",
    "relation": "rel",
    "patch": "patch",
    "event": "evt",
    "job": "job",
    "trace": "trace",
}

_last_ms = 0
_seq = 0


def new_id(object_type: str) -> str:
    """A typed, time-ordered id such as ``know:0190f3c2a1b2-4f9a2c``."""
    global _last_ms, _seq
    ms = int(time.time() * 1000)
    if ms == _last_ms:
        _seq += 1
    else:
        _last_ms, _seq = ms, 0
    return f"{ID_PREFIXES[object_type]}:{ms:012x}{_seq:03x}{os.urandom(3).hex()}"


def object_type_of(object_id: str) -> str | None:
    prefix = object_id.split(":", 1)[0]
    for kind, p in ID_PREFIXES.items():
        if p == prefix:
            return kind
    return None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 timestamp; naive values are taken as UTC."""
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)

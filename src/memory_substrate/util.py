"""Small shared helpers: ids, time, hashing, JSON, text sizes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from datetime import UTC, datetime
from typing import Any

from memory_substrate.analysis import scripts

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


# Chinese, Japanese and Korean characters carry about as much text as four Latin ones (about a
# token each, where English averages four characters a token): a size counts each as
# ``WIDE_CHAR_WEIGHT`` characters (``document_chunker.v1``'s chunk bound, the encoder's input).
WIDE_CHAR_WEIGHT = 4
WIDE = re.compile(f"[{scripts.WIDE}]")


def text_size(text: str) -> int:
    """Characters, each CJK or Hangul character counted ``WIDE_CHAR_WEIGHT`` times."""
    if text.isascii():
        return len(text)
    return len(text) + (WIDE_CHAR_WEIGHT - 1) * len(WIDE.findall(text))


def head_of_size(text: str, size: int) -> str:
    """The longest start of ``text`` whose ``text_size`` is at most ``size``."""
    if len(text) * WIDE_CHAR_WEIGHT <= size:
        return text
    cut = text[:size]
    total = last = 0  # the size of cut[:last]
    for m in WIDE.finditer(cut):
        narrow = m.start() - last
        if total + narrow > size:  # the bound falls among the narrow characters before it
            break
        if total + narrow + WIDE_CHAR_WEIGHT > size:
            return cut[: m.start()]
        total += narrow + WIDE_CHAR_WEIGHT
        last = m.end()
    return cut[: last + max(0, size - total)]

"""Small shared helpers: ids, time, hashing, JSON, text sizes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
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
# Fixed ids (``fix_ids``): a seed, and how many ids of each type were drawn under it.
_fixed_seed: str | None = None
_fixed_count: dict[str, int] = {}
_fixed_lock = threading.Lock()
# The time part of a fixed id: a plausible millisecond count (2024-06), so fixed ids look like
# generated ones and keep their type's creation order.
_FIXED_BASE_MS = 0x0190_0000_0000


def fix_ids(seed: str | None) -> None:
    """Benchmarks and tests: draw ids from ``seed`` instead of the clock and ``os.urandom``
    (``None``: back to those). The n-th id of a type under one seed is always the same, so two
    stores built by the same steps hold the same ids. Why: the short form an id is cited by in a
    context package is its random part (``ids.short_forms``), and random hex costs a varying
    number of tokens, so with generated ids a turn at the budget's edge fits one build and not
    the next. Seeds name what they build (a namespace, say): ids under two seeds differ in their
    sequence digits as well as their random ones, so a store can hold both."""
    global _fixed_seed
    with _fixed_lock:
        _fixed_seed = seed
        _fixed_count.clear()


def _fixed_id(prefix: str, seed: str) -> str:
    with _fixed_lock:
        n = _fixed_count.get(prefix, 0)
        _fixed_count[prefix] = n + 1
    seq = hashlib.sha256(seed.encode()).hexdigest()[:3]
    tail = hashlib.sha256(f"{seed}:{prefix}:{n}".encode()).hexdigest()[:6]
    return f"{prefix}:{_FIXED_BASE_MS + n:012x}{seq}{tail}"


def new_id(object_type: str) -> str:
    """A typed, time-ordered id such as ``know:0190f3c2a1b2-4f9a2c``."""
    global _last_ms, _seq
    if _fixed_seed is not None:
        return _fixed_id(ID_PREFIXES[object_type], _fixed_seed)
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

"""Response shaping shared by every tool mode: compact detail, excerpts, cursor pagination.

An agent pays for every token a tool returns. ``compact`` detail (the default) therefore drops
what only a debugger needs (content hashes, raw stream scores and ranks, nulls); ``full`` keeps
everything. Lists are cut to ``max_items`` and continue through an opaque ``next_cursor``, so
nothing is lost, only deferred. Any mode (including new ones) shapes its result with
:func:`shape` and pages a list with :func:`paginate` / :class:`Cursor`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from memory_substrate.errors import ValidationError
from memory_substrate.json_types import JsonObject

Detail = Literal["compact", "full"]

# Fields that explain how a result was computed rather than what it is.
INTERNAL_KEYS = frozenset(
    {"hash", "rank_score", "lexical_score", "semantic_score", "retrieval_ranks", "distance", "chunk_id"}
)


def prune(value: object, drop: frozenset[str] = INTERNAL_KEYS) -> object:
    """``value`` without None entries and without ``drop`` keys, at every depth.

    Empty containers are kept: an empty ``applied_filters`` still says "no filter applied".
    """
    if isinstance(value, dict):
        return prune_object(value, drop)
    if isinstance(value, list):
        return [prune(v, drop) for v in value if v is not None]
    return value


def prune_object(result: JsonObject, drop: frozenset[str] = INTERNAL_KEYS) -> JsonObject:
    """:func:`prune` of a JSON object, typed as one."""
    return {k: prune(v, drop) for k, v in result.items() if v is not None and k not in drop}


def shape(result: JsonObject, detail: Detail) -> JsonObject:
    """The result as the caller asked for it: everything (``full``) or pruned (``compact``)."""
    return result if detail == "full" else prune_object(result)


# --------------------------------------------------------------------------- excerpts
_WORD = re.compile(r"\w+", re.UNICODE)


def first_match(lower: str, terms: Iterable[str]) -> int:
    """Where the first word of ``lower`` that starts with one of ``terms`` begins, or -1.

    One pass over the text for all terms: each word is tried against the set of terms by its
    prefixes of the terms' lengths (a handful), so the cost is the text's length times the number
    of distinct term lengths, not times the number of terms (a long query has hundreds). A term
    that is not one word (it holds punctuation) is searched for on its own.
    """
    words: set[str] = set()
    others: list[str] = []
    for term in terms:
        if term and len(term) >= 2:
            t = term.lower()
            if _WORD.fullmatch(t):
                words.add(t)
            else:
                others.append(t)
    pos = -1
    for t in dict.fromkeys(others):
        m = re.search(r"(?<!\w)" + re.escape(t), lower)
        if m and (pos < 0 or m.start() < pos):
            pos = m.start()
    if words:
        lengths = sorted({len(t) for t in words})
        for m in _WORD.finditer(lower, 0, pos if pos >= 0 else len(lower)):
            w = m.group()
            if any(w[:n] in words for n in lengths if n <= len(w)):
                return m.start()
    return pos


def excerpt(text: str, terms: Iterable[str], limit: int) -> str:
    """At most ``limit`` characters of ``text``, cut around the first place a term matches.

    Terms are the normalised query terms (lower case, possibly stemmed), so they are matched as
    word prefixes, case-insensitively. Without a match the text's start is kept. Cuts fall on
    word boundaries and are marked with an ellipsis.
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    pos = first_match(text.lower(), terms)
    if pos < 0:
        start = 0
    else:
        start = max(0, pos - limit // 4)
        if start and start + limit > len(text):  # near the end: show a full window
            start = max(0, len(text) - limit + 1)
        if start and text[start - 1] != " ":  # mid-word: begin at the next word, never past the match
            space = text.find(" ", start, pos)
            start = space + 1 if space >= 0 and space - start < 20 else start
    room = limit - (1 if start else 0)
    end = start + room
    if end < len(text):
        end -= 1  # room for the closing ellipsis
        space = text.rfind(" ", start, end + 1)
        end = space if space > start + room // 2 else end
    body = text[start:end].strip()
    return ("…" if start else "") + body + ("…" if end < len(text) else "")


# --------------------------------------------------------------------------- pagination
@dataclass(frozen=True)
class Cursor:
    """Where the next page starts, bound to the request it continues.

    The fingerprint covers the mode, the input and the options that decide the order of the
    list (not ``max_items``, ``detail`` or the cursor), so a cursor from another request is
    refused instead of silently returning an unrelated slice.
    """

    offset: int
    fingerprint: str

    @staticmethod
    def fingerprint_of(mode: str, input_data: object, options: Mapping[str, object]) -> str:
        ordered = {k: v for k, v in options.items() if k not in ("max_items", "detail", "cursor")}
        raw = json.dumps([mode, input_data, ordered], sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]

    def encode(self) -> str:
        raw = json.dumps({"o": self.offset, "f": self.fingerprint}, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str | None, fingerprint: str) -> int:
        """The offset a cursor points at (0 without one); a foreign or damaged cursor is an error."""
        if not token:
            return 0
        try:
            raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            offset, fp = int(raw["o"]), str(raw["f"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValidationError(
                "options.cursor is not a cursor this server issued", details={"cursor": token}
            ) from exc
        if fp != fingerprint or offset < 0:
            raise ValidationError(
                "options.cursor belongs to a different request; repeat the same mode, input_data and options",
                details={"cursor": token},
            )
        return offset


Item = TypeVar("Item")


def paginate(
    items: Sequence[Item], offset: int, max_items: int, fingerprint: str
) -> tuple[list[Item], str | None]:
    """``items[offset:offset+max_items]`` and the cursor of the rest (None at the end).

    ``items`` must hold at least ``offset + max_items + 1`` entries when more exist: callers
    fetch one extra to know whether a next page exists.
    """
    page = list(items[offset : offset + max_items])
    more = len(items) > offset + max_items
    return page, (Cursor(offset + max_items, fingerprint).encode() if more else None)


# --------------------------------------------------------------------------- token budget
RESPONSE_TOKENS = 1450  # default responses stay under 1.5k tokens (counted as in memory_substrate.tokens)


def fit_list(
    result: JsonObject, key: str, *, offset: int, fingerprint: str, budget: int = RESPONSE_TOKENS
) -> JsonObject:
    """Cut ``result[key]`` (already pruned to what is sent) to what fits in ``budget`` tokens.

    Items that do not fit are deferred, not dropped: ``next_cursor`` then points just after the
    last item kept. At least one item is always kept. Token counts are additive over JSON
    pieces (punctuation is a token of its own), so each item is counted once.
    """
    from memory_substrate.tokens import count_tokens, wire_json

    items = listed(result, key)
    if not items or len(wire_json(result)) <= budget:  # a token is at least one character
        return result
    used, kept = count_tokens(wire_json({**result, key: []})), 0
    for item in items:  # one pass; items past the budget are never counted
        used += count_tokens(wire_json(item)) + 1
        if used > budget and kept:
            break
        kept += 1
    if kept < len(items):
        result[key] = items[:kept]
        if "count" in result:
            result["count"] = kept
        result["next_cursor"] = Cursor(offset + kept, fingerprint).encode()
    return result


def say_shortfall(result: JsonObject, key: str, requested: int, *, returned: int | None = None) -> JsonObject:
    """State ``requested``, ``returned`` and the reason when a page holds fewer than asked.

    ``response_budget``: a default page was cut to the response budget, ``next_cursor`` brings
    the rest of the same ranked list; ``no_more_results``: fewer exist (after filters).
    """
    if returned is None:
        returned = len(listed(result, key))
    if returned < requested:
        result["requested"], result["returned"] = requested, returned
        result["shortfall_reason"] = "response_budget" if result.get("next_cursor") else "no_more_results"
    return result


def take_within(items: Sequence[Item], budget: int) -> list[Item]:
    """The longest prefix of ``items`` whose compact JSON fits ``budget`` tokens (at least one)."""
    from memory_substrate.tokens import count_tokens, wire_json

    kept: list[Item] = []
    used = 0
    for item in items:
        used += count_tokens(wire_json(prune(item))) + 1
        if used > budget and kept:
            break
        kept.append(item)
    return kept


def fit_together(result: JsonObject, keys: Sequence[str], budget_each: int) -> int | None:
    """Cut several lists paged by one cursor to a common length that fits ``budget_each`` each.

    One cursor moves every list by the same count, so when any list must be cut, all are cut
    to the shortest fitting length. Returns that length, or None when nothing was cut.
    """
    lists = [k for k in keys if result.get(k)]
    n = common_cut([listed(result, k) for k in lists], budget_each)
    if n is None:
        return None
    for k in lists:
        result[k] = listed(result, k)[:n]
    return n


def common_cut(lists: Iterable[Sequence[object]], budget_each: int) -> int | None:
    """The length :func:`fit_together` cuts these lists to (empty ones aside), or None when each
    fits ``budget_each`` whole: for a caller that cuts its own typed lists."""
    cut = [(len(items), len(take_within(items, budget_each))) for items in lists if items]
    short = [n for whole, n in cut if n < whole]
    return min(short) if short else None


def fit_sections(result: JsonObject, keys: Sequence[str], *, budget: int = RESPONSE_TOKENS) -> JsonObject:
    """Cut entries from the ends of several lists of ``result`` until it fits ``budget`` tokens.

    For reports whose sections carry full totals elsewhere (``counts``): the longest section
    loses its last entry first, each section keeps at least one, and ``truncated[key]`` is set
    for every section cut. ``max_items`` or ``detail: "full"`` bring the rest.
    """
    from memory_substrate.tokens import count_tokens, wire_json

    sizes = {k: [count_tokens(wire_json(e)) + 1 for e in listed(result, k)] for k in keys}
    total = count_tokens(wire_json({**result, **{k: [] for k in keys}})) + sum(sum(v) for v in sizes.values())
    cut: dict[str, int] = {}
    while total > budget:
        key = max((k for k in keys if len(sizes[k]) > 1), key=lambda k: sum(sizes[k]), default=None)
        if key is None:
            break
        total -= sizes[key].pop()
        cut[key] = len(sizes[key])
    for key, n in cut.items():
        result[key] = listed(result, key)[:n]
        truncated = result.get("truncated")
        if isinstance(truncated, dict):
            truncated[key] = True
    return result


def listed(result: JsonObject, key: str) -> list[object]:
    """``result[key]``, a list every pass here reads by key; ``[]`` when it is absent or empty."""
    value = result.get(key)
    return value if isinstance(value, list) else []


def listed_objects(result: JsonObject, key: str) -> list[JsonObject]:
    """The JSON objects of ``result[key]``, a list of them wherever a pass reads one by key."""
    return [v for v in listed(result, key) if isinstance(v, dict)]

"""Short ids: an object's id abbreviated git-style, resolved inside the caller's namespace only.

A generated id (``util.new_id``) is ``PREFIX:`` + 12 hex digits of milliseconds + 3 of a
sequence + 6 random ones, e.g. ``src:01a213d0620f00020b56d``. Its short form keeps the type
prefix and the *end* of the id, the random part: ``src:20b56d``. The context compiler writes
each id in its package in the shortest form of at least ``SHORT_MIN`` hex digits that no other
object of that type in the namespace ends with (``short_forms``: one indexed query for all ids
of a package); where one does, the form grows a digit at a time, and an id with no unique
shorter form is written whole. 6 digits: 16.7 million values, so in a namespace of 100,000
sources about 1 id in 170 needs a seventh digit; 8 digits recalled less at 1,500 tokens
(notebooks/context-compiler-log.md).

Every tool that takes an object id accepts a short form (``expand_short_ids``, applied once
where the arguments enter: ``app.Memory`` for the ``memory_*`` tools and the graph toolset's
tool boundary), before validation, so nothing below the boundary ever sees one and nothing
stores one. A value is a short form only when it is an object prefix and 6-20 hex digits
(optionally ``#segment``); an object whose full id is exactly that wins; otherwise the
objects of that type in the caller's namespace whose id ends with those digits: one is the
answer, several are an ``AmbiguousIdError`` naming them (an object written since the package
was rendered may share the digits: never a silent pick), none leaves the value as given, so the
tool answers its usual not-found. Only objects have short forms (not traces, patches,
relations).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from memory_substrate.errors import AmbiguousIdError, ValidationError
from memory_substrate.storage.base import ID_TAIL_CHARS, StoreSession
from memory_substrate.util import ID_PREFIXES

SHORT_MIN = ID_TAIL_CHARS  # hex digits of the shortest form (the stored index covers exactly these)
OBJECT_PREFIXES = tuple(
    ID_PREFIXES[t] for t in ("source", "knowledge", "activity", "work_item", "node", "entity")
)
_P = "|".join(OBJECT_PREFIXES)
SHORT_RE = re.compile(rf"({_P}):([0-9a-f]{{{SHORT_MIN},20}})(#.*)?", re.DOTALL)
ABBREVIABLE_RE = re.compile(rf"({_P}):([0-9a-f]{{{SHORT_MIN + 1},21}})")
# Argument names whose values are object ids (strings or lists of strings), in every tool's
# input_data and options. Subtrees that hold the caller's own data are never read, nor portable
# contract documents (a graph snapshot's node ids are its own; a selection is validated as written).
ID_FIELDS = frozenset(
    {
        "id",
        "ids",
        "source_id",
        "source_ids",
        "node_id",
        "node_ids",
        "object_id",
        "object_ids",
        "knowledge_id",
        "knowledge_ids",
        "work_item_id",
        "old_knowledge_id",
        "new_knowledge_id",
        "canonical_knowledge_id",
        "episode_id",
        "episode_ids",
        "fact_id",
        "fact_ids",
        "from_id",
        "to_id",
        "source_entity_id",
        "target_entity_id",
        "subject_refs",
        "source_refs",
        "related_node_refs",
        "subject",
        "object",
    }
)
# Fields named like ids that hold something else: scope names, segment ids (``seg-N``), a
# conversation's own thread id (tests/query/test_short_ids.py checks every input model's fields).
NOT_OBJECT_IDS = frozenset({"scope_refs", "segment_id", "segment_ids", "thread_id"})
OPAQUE = frozenset(
    {"payload", "metadata", "locator", "properties", "text", "summary", "title", "snapshot", "selection"}
)


def is_short(value: str) -> bool:
    return SHORT_RE.fullmatch(value) is not None


# --- writing: the shortest unique form of each id --------------------------------------------
def short_forms(session: StoreSession, ids: Iterable[str]) -> dict[str, str]:
    """{full id: its shortest unique form} for the abbreviable ones among ``ids`` (ids left
    out are written whole). One query: every object of the namespace sharing a last-6 tail."""
    full = [i for i in dict.fromkeys(ids) if ABBREVIABLE_RE.fullmatch(i)]
    if not full:
        return {}
    by_tail: dict[str, list[str]] = defaultdict(list)
    for other in session.ids_by_tail([i[-ID_TAIL_CHARS:] for i in full]):
        by_tail[other[-ID_TAIL_CHARS:]].append(other)
    out: dict[str, str] = {}
    for i in full:
        prefix, rest = i.split(":", 1)
        rivals = [o for o in by_tail[i[-ID_TAIL_CHARS:]] if o != i and o.startswith(prefix + ":")]
        for n in range(SHORT_MIN, len(rest)):
            if not any(o.endswith(rest[-n:]) for o in rivals):
                out[i] = f"{prefix}:{rest[-n:]}"
                break
    return out


# --- reading: short forms back to full ids, at the boundary ------------------------------------
def _matches(session: StoreSession, refs: Iterable[str]) -> dict[str, tuple[list[str], str]]:
    """{short form: (the objects it may name, its ``#fragment``)}: the object whose whole id it
    is, else every object of its type whose id ends with its digits."""
    shorts = {r: m for r in dict.fromkeys(refs) if (m := SHORT_RE.fullmatch(r))}
    if not shorts:
        return {}
    found = session.ids_by_tail([m.group(2)[-ID_TAIL_CHARS:] for m in shorts.values()])
    # By tail, so each value looks at the few objects sharing its last digits: a request of many
    # short-looking values (each with its own #fragment) over a large namespace stays linear.
    exact = set(found)
    by_tail: dict[str, list[str]] = defaultdict(list)
    for o in found:
        by_tail[o[-ID_TAIL_CHARS:]].append(o)
    out: dict[str, tuple[list[str], str]] = {}
    for ref, m in shorts.items():
        prefix, digits, fragment = m.group(1), m.group(2), m.group(3) or ""
        head = f"{prefix}:{digits}"
        if head in exact:
            named = [head]
        else:
            named = [
                o
                for o in by_tail[digits[-ID_TAIL_CHARS:]]
                if o.startswith(prefix + ":") and o.endswith(digits)
            ]
        out[ref] = (named, fragment)
    return out


def resolve(session: StoreSession, refs: Iterable[str]) -> dict[str, str]:
    """{short form (``#segment`` kept): full id} for the short forms among ``refs`` that name
    one object in this namespace. Raises ``AmbiguousIdError`` where several do."""
    out: dict[str, str] = {}
    for ref, (named, fragment) in _matches(session, refs).items():
        if len(named) > 1:
            digits = ref.split(":", 1)[1].split("#", 1)[0]
            raise AmbiguousIdError(
                f"id {ref} is ambiguous: {len(named)} objects end with {digits} ({', '.join(named[:5])}); "
                "give more digits or the full id",
                details={"id": ref, "matches": named},
            )
        if named and named[0] + fragment != ref:
            out[ref] = named[0] + fragment
    return out


def candidates(session: StoreSession, refs: Iterable[str]) -> list[str]:
    """``refs`` with each short form replaced by every object it may name (search: an id stated
    in a query is a candidate, and a short one that several objects end with names them all)."""
    refs = list(refs)
    named = _matches(session, refs)
    return list(dict.fromkeys(i for r in refs for i in (named[r][0] if r in named else [r])))


def _collect(value: Any, key: str | None, into: list[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in OPAQUE:
                _collect(v, k, into)
    elif isinstance(value, list):
        for v in value:
            _collect(v, key, into)
    elif isinstance(value, str) and key in ID_FIELDS and is_short(value):
        into.append(value)


def _replace(value: Any, key: str | None, full: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: v if k in OPAQUE else _replace(v, k, full) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, key, full) for v in value]
    if isinstance(value, str) and key in ID_FIELDS:
        return full.get(value, value)
    return value


def expand_short_ids(read: Callable[[], AbstractContextManager[StoreSession]], *args: Any) -> tuple[Any, ...]:
    """``args`` (a tool's input_data, options, keyword arguments) with every short id in an id
    field replaced by its full id, read in one session of the caller's namespace (``read``);
    unchanged, and nothing read, when no id field holds a short form."""
    refs: list[str] = []
    try:
        for a in args:
            _collect(a, None, refs)
    except RecursionError:  # nested deeper than any tool's input: refused as validation would
        raise ValidationError("input nested too deeply") from None
    if not refs:
        return args
    with read() as session:
        full = resolve(session, refs)
    try:
        return tuple(_replace(a, None, full) for a in args)
    except RecursionError:
        raise ValidationError("input nested too deeply") from None

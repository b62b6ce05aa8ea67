"""Read a model's answer for one extraction window item by item, keeping everything valid.

A small model's answer is valid JSON that misses the schema in places, is cut at the token cap,
copies the prompt's own words, or cites every segment of the episode. Nothing here raises on
what the model wrote: each entity, fact and procedure is validated on its own, and an invalid one
is dropped with its reason (``Reading.dropped``) while the others are kept. Then three rules:

- leaks: a fact, entity or alias whose names occur in the prompt but not in the episode is dropped
  (the model copied the instructions); an alias the episode never writes is the model's own
  knowledge of the thing's other names, kept and marked as the model's (``model_aliases``);
- evidence (``graph/grounding.py``): every kept fact and procedure cites segments that share a
  name with it;
- truncation: an answer cut at ``max_tokens`` keeps the items completed before the cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.graph.extraction_trace import Citation, DroppedItem
from memory_substrate.graph.grounding import ground
from memory_substrate.graph.schemas import ExtractedEntity, ExtractedFact, ExtractedProcedure, Extraction
from memory_substrate.llm.base import error_list, strip_fences
from memory_substrate.redaction import redact_text
from memory_substrate.taxonomy import MAX_ENTITIES_PER_EPISODE, normalize_name

Item = TypeVar("Item", bound=BaseModel)


@dataclass
class Reading:
    """What one answer yields: the valid items, the dropped ones with reasons, and whether the
    answer as a whole was unreadable (``error``) or cut at the token cap (``truncated``)."""

    extraction: Extraction = field(default_factory=Extraction)
    dropped: list[DroppedItem] = field(default_factory=list)
    grounding: list[Citation] = field(default_factory=list)
    error: str | None = None
    truncated: bool = False
    schema_errors: int = 0  # items that failed the schema (the repair request quotes them)

    @property
    def items(self) -> int:
        ex = self.extraction
        return len(ex.entities) + len(ex.facts) + len(ex.procedures)


def parse_json(text: str, *, truncated: bool) -> tuple[object, str | None]:
    """The answer's JSON value and, when only a prefix could be read, why."""
    body = strip_fences(text)
    start = body.find("{")
    if start < 0:
        return None, "the answer holds no JSON object"
    try:
        value, _end = json.JSONDecoder().raw_decode(body[start:])
        return value, None
    except json.JSONDecodeError as exc:
        prefix = complete_prefix(body[start:])
        why = (
            "truncated at the token cap (finish_reason: length)"
            if truncated
            else f"output is not JSON ({exc.msg} at character {exc.pos})"
        )
        return prefix, why


def complete_prefix(text: str) -> object:
    """The items of a cut-off JSON object that were complete before the cut: the text is closed
    after the last value that ended inside an array, and parsed again."""
    stack: list[str] = []
    in_string = escaped = False
    cut: tuple[int, list[str]] | None = None
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
            if stack and stack[-1] == "]":
                cut = (i + 1, list(stack))
    if cut is None:
        return None
    end, open_ = cut
    try:
        return json.loads(text[:end] + "".join(reversed(open_)))
    except json.JSONDecodeError:
        return None


@dataclass
class _Kept:
    """The items of an answer that fit the schema, section by section."""

    entities: list[ExtractedEntity]
    facts: list[ExtractedFact]
    procedures: list[ExtractedProcedure]


def _validate_items(data: Mapping[str, object], reading: Reading) -> _Kept:
    return _Kept(
        entities=_validate_section(data, "entities", ExtractedEntity, MAX_ENTITIES_PER_EPISODE, reading),
        facts=_validate_section(data, "facts", ExtractedFact, 100, reading),
        procedures=_validate_section(data, "procedures", ExtractedProcedure, 20, reading),
    )


def _validate_section(
    data: Mapping[str, object], section: str, model: type[Item], limit: int, reading: Reading
) -> list[Item]:
    """The items of one section that fit ``model``, at most ``limit``; the others are dropped."""
    raw = data.get(section) or []
    if not isinstance(raw, list):
        reading.dropped.append({"item": section, "reason": f"{section} is not a list"})
        reading.schema_errors += 1
        raw = []
    kept: list[Item] = []
    for i, item in enumerate(raw):
        where = f"{section}[{i}]"
        if len(kept) >= limit:
            reading.dropped.append({"item": where, "reason": f"more than {limit} {section} in one window"})
            continue
        try:
            kept.append(model.model_validate(item))
        except PydanticValidationError as exc:
            reading.schema_errors += 1
            reasons = "; ".join(f"{e['loc'] or 'item'}: {e['msg']}" for e in error_list(exc, 5))
            reading.dropped.append({"item": where, "reason": reasons, "value": _short(item)})
        except Exception as exc:  # a validator that raised something else is still the model's fault
            reading.schema_errors += 1
            reading.dropped.append(
                {"item": where, "reason": f"{type(exc).__name__}: {exc}", "value": _short(item)}
            )
    return kept


def _short(item: object) -> str:
    return json.dumps(item, ensure_ascii=False, default=str)[:300]


def _in(name: str, text: str) -> bool:
    """``name`` occurs in ``text`` (both normalised) as whole words."""
    norm = normalize_name(name)
    return bool(norm) and re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", text) is not None


def _drop_leaks(kept: _Kept, prompt: str, episode: str, reading: Reading) -> None:
    """Names the prompt holds and the episode does not are the model copying its instructions."""

    def leaked(*names: object) -> list[str]:
        return [
            n
            for n in names
            if isinstance(n, str) and len(n.strip()) >= 3 and _in(n, prompt) and not _in(n, episode)
        ]

    ents = []
    for ent in kept.entities:
        if leaked(ent.name):
            reading.dropped.append(
                {"item": f"entity {ent.name!r}", "reason": "names the prompt, not the episode"}
            )
            continue
        copied = [a for a in ent.aliases if not _in(a, episode) and _in(a, prompt)]
        if copied:
            reading.dropped.append(
                {
                    "item": f"aliases of {ent.name!r}",
                    "reason": "names the prompt, not the episode",
                    "value": copied,
                }
            )
        # A secret the model gave as a name is no name once redacted (the whole answer is redacted
        # before it is applied): nothing would ever call the thing "[REDACTED:github_token]".
        secrets = [a for a in ent.aliases if a not in copied and redact_text(a) != a]
        if secrets:
            reading.dropped.append(
                {
                    "item": f"aliases of {ent.name!r}",
                    "reason": "a redacted secret, not a name",
                    "value": secrets,
                }
            )
        aliases = [a for a in ent.aliases if a not in copied and a not in secrets]
        # What else the thing is called, from the model's own knowledge: the bridge between a
        # task's words and the episode's. Kept, marked as the model's.
        known = [a for a in aliases if not _in(a, episode)]
        ent = ent.model_copy(
            update={"aliases": aliases, "model_aliases": list(dict.fromkeys([*ent.model_aliases, *known]))}
        )
        ents.append(ent)
    kept.entities = ents
    facts = []
    for fact in kept.facts:
        names = leaked(fact.subject, fact.object, fact.value)
        if names:
            reading.dropped.append(
                {
                    "item": f"fact {fact.subject} {fact.predicate} {fact.object or fact.value}",
                    "reason": f"names {', '.join(map(repr, names))} from the prompt, not the episode",
                }
            )
            continue
        facts.append(fact)
    kept.facts = facts


def read_answer(text: str, *, truncated: bool, prompt: str, segments: dict[str, str]) -> Reading:
    """Read one window's answer. ``prompt``: the instructions the model was given (not the episode);
    ``segments``: the window's segment ids and their rendered text (speaker included)."""
    reading = Reading(truncated=truncated)
    try:
        data, why = parse_json(text, truncated=truncated)
        reading.truncated = truncated and why is not None  # an answer complete at the cap is not cut
        reading.error = why if data is None else None
        if why:
            tail = (
                "; the items completed before it are kept" if data is not None else "; no item was complete"
            )
            reading.dropped.append({"item": "answer", "reason": why + tail})
        if data is None:
            return reading
        if not isinstance(data, dict):
            reading.error = f"the answer is a JSON {type(data).__name__}, not an object"
            return reading
        kept = _validate_items(data, reading)
        episode = normalize_name(" ".join(segments.values()))
        _drop_leaks(kept, normalize_name(prompt), episode, reading)
        kept.facts, kept.procedures = ground(
            kept.facts, kept.procedures, segments, reading.dropped, reading.grounding
        )
        reading.extraction = Extraction.model_construct(
            entities=kept.entities, facts=kept.facts, procedures=kept.procedures
        )
    except Exception as exc:  # nothing the model wrote may end a run: the window reports it instead
        reading.error = f"the answer could not be read ({type(exc).__name__}: {exc})"
        reading.extraction = Extraction()
    return reading


def repair_messages(messages: Sequence[dict[str, str]], text: str, reading: Reading) -> list[dict[str, str]]:
    """One more request quoting what was wrong with an answer that yielded nothing valid."""
    problems = [reading.error] if reading.error else []
    problems += [
        f"{d['item']}: {d['reason']}" + (f" in {d['value']}" if d.get("value") else "")
        for d in reading.dropped[:12]
    ]
    quoted = "\n".join(f"- {p}" for p in problems if p)
    return [
        *messages,
        {"role": "assistant", "content": text[:4000]},
        {
            "role": "user",
            "content": "That answer could not be used:\n" + quoted + "\nAnswer again with one JSON object "
            "in the format described, fixing these problems. Every fact needs subject, predicate and exactly one of "
            "object or value.",
        },
    ]

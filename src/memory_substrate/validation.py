"""Strict input models: unknown fields fail with "Extra inputs are not permitted"."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.errors import UnsupportedModeError, ValidationError

M = TypeVar("M", bound=BaseModel)

# The one rule for a namespace name on every surface (CLI, MCP over stdio and HTTP, the graph
# toolset's owner_id, tokens, the inspector): 1-128 ASCII letters, digits, '-', '_' or '@'.
# ASCII only, so no control, bidi (RTL) or zero-width character can make two names look alike,
# and no '/' or '.' can make a name a path.
NAMESPACE_RULE = "1-128 letters, digits, '-', '_' or '@'"
NAMESPACE_RE = re.compile(r"[A-Za-z0-9_@\-]{1,128}")


def is_namespace(value: object) -> bool:
    """Whether ``value`` is a valid namespace name (``NAMESPACE_RULE``)."""
    return isinstance(value, str) and NAMESPACE_RE.fullmatch(value) is not None


def namespace_problem(value: object, field: str = "namespace") -> str:
    """What is wrong with an invalid namespace name. The name is shown with ``ascii()`` so an
    invisible or right-to-left character in it is visible, and an overlong one is cut."""
    shown = ascii(value if not isinstance(value, str) or len(value) <= 80 else value[:80] + "...")
    return f"{field} {shown} is invalid: use {NAMESPACE_RULE}"


def namespace_name(value: object, field: str = "namespace") -> str:
    """``value`` if it is a valid namespace name, else ``ValidationError`` naming the rule."""
    if not is_namespace(value):
        raise ValidationError(namespace_problem(value, field), details={"field": field})
    return cast(str, value)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def describe(err: PydanticValidationError, prefix: str) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


def parse(model: type[M], data: Any, prefix: str) -> M:
    """Validate ``data`` into ``model`` or raise ``ValidationError`` naming each failing field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValidationError(f"{prefix} must be an object")
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        raise ValidationError(
            describe(exc, prefix), details={"errors": exc.errors(include_url=False, include_input=False)}
        ) from None


class NoOptions(Strict):
    """Modes that take no options."""


@dataclass(frozen=True)
class Mode:
    """One mode of an envelope tool, declared once (``<service>/modes.py``): the service dispatches
    on it, the MCP server lists it, docs/modes.md and ``memory-substrate modes`` are rendered from it."""

    tool: str
    name: str
    input_model: type[BaseModel]
    options_model: type[BaseModel]
    handler: str  # the service's method that runs the mode
    help: str  # one line: what the mode does and what input_data it takes
    writes: bool  # False: read-only (the store is not changed)


def mode_of(modes: Sequence[Mode], name: str) -> Mode:
    """The declaration of mode ``name``, or ``UnsupportedModeError`` listing the tool's modes."""
    for mode in modes:
        if mode.name == name:
            return mode
    tool = modes[0].tool if modes else "this tool"
    raise UnsupportedModeError(
        f"unsupported {tool} mode {name!r}; allowed: {', '.join(m.name for m in modes)}"
    )


_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")


def _bad_char(text: str) -> str | None:
    if "\x00" in text:
        return "NUL"
    if text.isascii() or _BAD_CHAR.search(text) is None:  # isascii is O(1); the search is C-speed
        return None
    return "lone surrogate"


def _shown(text: str) -> str:
    """``text`` with NUL and surrogates escaped, so a path naming them is printable and encodable."""
    return _BAD_CHAR.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


MAX_PROBLEMS = 20  # a document with more is refused naming the first ones


def input_problems(value: Any, path: str, *, strings: bool = True) -> list[tuple[str, str, str]]:
    """(dotted path, message, type) of every value in ``value`` that no store can keep and every
    reader can read back: a non-finite number (NaN, Infinity, -Infinity, which JSON cannot
    write and SQLite's JSON functions refuse to read) and, with ``strings``, a string or key
    holding NUL or a lone surrogate. One walk of any depth (a stack, not recursion), a dict's
    keys before its values, stopping at ``MAX_PROBLEMS``."""
    if _clean(value, strings):
        return []
    found: list[tuple[str, str, str]] = []
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack and len(found) < MAX_PROBLEMS:
        value, path = stack.pop()
        if isinstance(value, str):
            if strings and (what := _bad_char(value)):
                found.append((path, f"must not contain {what} characters", "string_characters"))
        elif isinstance(value, float):
            if not math.isfinite(value):
                found.append((path, "must be a finite number", "finite_number"))
        elif isinstance(value, dict):
            children = []
            for k, v in value.items():
                key = _shown(str(k))
                sub = f"{path}.{key}" if path else key
                if strings and isinstance(k, str) and (what := _bad_char(k)):
                    found.append((f"{sub} (key)", f"must not contain {what} characters", "string_characters"))
                else:
                    children.append((v, sub))
            stack.extend(reversed(children))  # popped in document order
        elif isinstance(value, list | tuple):
            stack.extend((v, f"{path}.{i}" if path else str(i)) for i, v in reversed(list(enumerate(value))))
    return found[:MAX_PROBLEMS]


def _clean(value: Any, strings: bool) -> bool:
    """Whether ``input_problems`` would find nothing: the same rule, walked without building a
    path per value (every call's input is walked; almost all are clean, and the paths cost more
    than the checks)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        if isinstance(item, str):
            if strings and _bad_char(item):
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            if strings:
                extend(item)  # the keys, checked as strings
            extend(item.values())
        elif isinstance(item, list | tuple):
            extend(item)
    return True


def check_input(value: Any, path: str, *, strings: bool = True) -> None:
    """Refuse, with ``ValidationError`` naming each field's dotted path, what ``input_problems``
    finds: one rule for every field of every mode and tool (strings and dict keys, nested lists
    and objects). Nothing downstream (hashing, JSON, SQLite, PostgreSQL, a later read) can then
    fail on them. ``strings=False`` checks numbers only: for stored data coming back (an
    import), whose text may hold NUL captured from a file."""
    found = input_problems(value, path, strings=strings)
    if found:
        errors = [{"field": p, "message": m, "type": t} for p, m, t in found]
        raise ValidationError(
            "; ".join(f"{e['field']}: {e['message']}" for e in errors), details={"errors": errors}
        )

"""Reading the values a memory object's ``payload`` and ``metadata`` hold.

Those are free-form JSON (``JsonObject``): a list of ids or names, a count, a timestamp, as this
package wrote them. These read one with the type it was written with; what is absent reads as
empty, as the ``value or []`` idiom they replace did.
"""

from __future__ import annotations


def listed(value: object) -> list[object]:
    """A stored list, copied; absent (or not a list) reads as empty."""
    return list(value) if isinstance(value, list) else []


def str_list(value: object) -> list[str]:
    """The strings of a stored list of ids or names."""
    return [v for v in listed(value) if isinstance(v, str)]


def text_or_none(value: object) -> str | None:
    """A stored string (a timestamp, an id); None when absent."""
    return value if isinstance(value, str) else None


def count(value: object, default: int) -> int:
    """``int(value or default)`` for a stored count: a JSON number, or a numeric string."""
    value = value or default
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"a count must be a number, not {type(value).__name__}")

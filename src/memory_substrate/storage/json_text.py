"""JSON as both stores keep it, and what a store does about stored JSON no reader can use.

Every JSON column is written by ``dumps``: strict JSON, so a non-finite number (NaN,
Infinity), which Python's ``json`` would write as a bare ``NaN`` token, is refused before it
reaches the database. Inputs are refused earlier (``validation.check_input``); this is the
last line, for a value made inside the server. A store written before either check may hold
such tokens: SQLite keeps JSON as text and its JSON functions then fail on the row
("malformed JSON") in every search that touches it. ``StoredJson`` names such a row and
``scrub`` works out its repair: each non-finite number becomes ``null``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from memory_substrate.errors import StorageError

NON_FINITE = "non_finite_number"  # JSON text holding NaN or Infinity: repaired (they become null)
NOT_JSON = "not_json"  # text that is not JSON at all: reported, left for a person (no write makes it)


def dumps(value: object) -> str:
    """``value`` as strict JSON text (UTF-8 kept); ``StorageError`` for a non-finite number."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise StorageError(
            "a value to store holds a non-finite number (NaN or Infinity), which JSON cannot hold; nothing was written"
        ) from None


class StoredJsonRow(TypedDict):
    """A ``StoredJson`` as repair and doctor answers list it."""

    table: str
    column: str
    key: dict[str, str]
    problem: str
    fields: NotRequired[list[str]]


@dataclass(frozen=True)
class StoredJson:
    """One stored row whose JSON column readers cannot use."""

    table: str
    column: str
    key: dict[str, str]  # the row's key within its namespace: {"id": ...}, {"source_id": ..., "id": ...}
    problem: str  # NON_FINITE or NOT_JSON
    fields: list[str] = field(default_factory=list)  # NON_FINITE: dotted paths of the numbers, in the column

    def to_dict(self) -> StoredJsonRow:
        out: StoredJsonRow = {
            "table": self.table,
            "column": self.column,
            "key": self.key,
            "problem": self.problem,
        }
        if self.fields:
            out["fields"] = self.fields
        return out


def scrub(text: str) -> tuple[object, list[str]] | None:
    """The value of JSON ``text`` with every non-finite number replaced by ``None``, and the
    dotted paths where they were; None when ``text`` is not JSON at all. Python's parser reads
    the ``NaN``/``Infinity`` tokens its own writer produced, which is how such rows were made."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    found: list[str] = []
    return _finite(value, "", found), found


def _finite(value: object, path: str, found: list[str]) -> object:
    # Stored documents are ours, built by json.dumps, hence of a depth it could write: recursion is safe.
    if isinstance(value, float) and not math.isfinite(value):
        found.append(path or "(root)")
        return None
    if isinstance(value, dict):
        return {k: _finite(v, f"{path}.{k}" if path else str(k), found) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v, f"{path}.{i}" if path else str(i), found) for i, v in enumerate(value)]
    return value

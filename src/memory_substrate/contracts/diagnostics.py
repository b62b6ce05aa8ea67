"""Validation findings with stable codes. A code, once published, keeps its meaning: other
runtimes assert on them (docs/contracts.md lists every one, and a test keeps the list honest).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memory_substrate.json_types import JsonObject

ERROR = "error"
WARNING = "warning"

# code -> (severity, what it means). Order here is the order of the docs table.
CODES: dict[str, tuple[str, str]] = {
    "parse_error": (ERROR, "the file is not valid YAML or JSON"),
    "schema_version_missing": (ERROR, "the document has no `schema_version`"),
    "schema_version_mismatch": (ERROR, "`schema_version` is not the version this contract expects"),
    "required_field_missing": (ERROR, "a required field is absent"),
    "wrong_type": (ERROR, "a value has the wrong JSON type (string, integer, array, object...)"),
    "unknown_field": (ERROR, "a field the contract does not define (extensions go under `attributes`)"),
    "invalid_value": (
        ERROR,
        "a value of the right type outside what the contract allows (empty, out of range...)",
    ),
    "invalid_timestamp": (ERROR, "a timestamp that is not ISO-8601"),
    "unknown_node_kind": (ERROR, "a node `kind` outside the node vocabulary"),
    "unknown_edge_kind": (ERROR, "an edge `kind` outside the edge vocabulary"),
    "unknown_event_kind": (ERROR, "an event `kind` outside the event vocabulary"),
    "unknown_memory_kind": (
        ERROR,
        "a profile memory kind outside reasoning, conversation, knowledge, package",
    ),
    "duplicate_id": (ERROR, "an id used twice in one graph (nodes, edges and events share one id space)"),
    "edge_missing_node": (ERROR, "an edge whose `source` or `target` names no node of the graph"),
    "event_missing_ref": (ERROR, "an event whose `refs` name no node or edge of the graph"),
    "selection_missing_node": (ERROR, "a selection names a node the graph does not have"),
    "selection_missing_edge": (ERROR, "a selection names an edge the graph does not have"),
    "selection_missing_event": (ERROR, "a selection names an event the graph does not have"),
    "non_positive_limit": (ERROR, "a profile activation limit (`max_items`, `max_tokens`) below 1"),
    "store_kind_undeclared": (
        ERROR,
        "a profile store for a memory kind that `memory_kinds` does not declare",
    ),
    "reference_unresolved": (ERROR, "a selection's `graph` or `profile` reference cannot be read"),
    "store_missing": (WARNING, "a declared memory kind without a store (this runtime's own store serves it)"),
    "duplicate_selection_entry": (WARNING, "a selection lists the same id twice (it is packed once)"),
}


@dataclass(frozen=True)
class Diagnostic:
    code: str
    path: str  # JSONPath into the document, e.g. "$.nodes[3].kind"
    message: str
    file: str | None = None  # set when the finding is in a referenced document

    @property
    def severity(self) -> str:
        return CODES[self.code][0]

    def to_dict(self) -> JsonObject:
        """The finding as answers and reports carry it (a surface reads it by key)."""
        out: JsonObject = {
            "code": self.code,
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
        }
        if self.file is not None:
            out["file"] = self.file
        return out

    def in_file(self, file: str) -> Diagnostic:
        return Diagnostic(self.code, self.path, self.message, self.file or file)


_SEGMENT = re.compile(r"\[(\d+)\]|\.([^.\[]+)")


def path_key(path: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders "$.nodes[10]" after "$.nodes[9]"."""
    return tuple((0, int(i)) if i else (1, name) for i, name in _SEGMENT.findall(path))


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """A stable, document-ordered list without repeats."""
    unique = dict.fromkeys(diags)
    return sorted(unique, key=lambda d: (d.file or "", path_key(d.path), d.code, d.message))


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity == ERROR for d in diags)


def child(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"

"""Validate profile, graph and selection documents: the shipped JSON Schema first, then the
checks a schema cannot express (ids, references, timestamps). Every finding is a
``Diagnostic`` with a stable code and a JSONPath.

Speed: a valid document is checked by a compiled validator (fastjsonschema, tens of
milliseconds for 10k nodes); only an invalid one is walked again by ``jsonschema``, which
reports every error, not just the first, so each can be mapped to our codes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import cache

import fastjsonschema
import jsonschema

from memory_substrate.contracts import vocab
from memory_substrate.contracts.diagnostics import Diagnostic, child, sort_diagnostics
from memory_substrate.contracts.loader import schema
from memory_substrate.json_types import JsonObject
from memory_substrate.validation import input_problems

KIND_CODES = {"nodes": "unknown_node_kind", "edges": "unknown_edge_kind", "events": "unknown_event_kind"}
_REQUIRED = re.compile(r"^'(.+)' is a required property$")
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def json_type(value: object) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


GRAPH_SECTIONS = {"nodes": "node", "edges": "edge", "events": "event"}


def _member(document: JsonObject, key: str) -> JsonObject:
    """A member of a shipped schema that is an object (every one this module reads is)."""
    value = document[key]
    return value if isinstance(value, dict) else {}


def _part_schema(version: str, part: str | None) -> JsonObject:
    """The whole schema (``part=None``), a graph's top level with its item schemas left open
    (``"top"``), or one item definition of a graph (``"node"``, ``"edge"``, ``"event"``)."""
    full = schema(version)
    if part is None:
        return full
    if part == "top":
        properties = dict(_member(full, "properties"))
        for section in GRAPH_SECTIONS:
            properties[section] = {"type": "array"}
        return {**full, "properties": properties}
    return {"$schema": full["$schema"], **_member(_member(full, "definitions"), part)}


@cache
def _fast(version: str, part: str | None = None) -> Callable[[object], object]:
    return fastjsonschema.compile(_part_schema(version, part))


@cache
def _full(version: str, part: str | None = None) -> jsonschema.protocols.Validator:
    return jsonschema.Draft7Validator(_part_schema(version, part))


def _schema_findings(document: JsonObject, version: str) -> list[Diagnostic]:
    try:
        _fast(version)(document)
        return []
    except fastjsonschema.JsonSchemaException as fast_error:
        first = str(fast_error)
    if version != vocab.GRAPH_V1:
        found = [d for err in _full(version).iter_errors(document) for d in _map_error(err)]
    else:
        # The full walk of jsonschema costs seconds on 10k nodes; the compiled validator finds
        # the broken items, and only those are walked again for every finding.
        found = [d for err in _full(version, "top").iter_errors(document) for d in _map_error(err)]
        for section, part in GRAPH_SECTIONS.items():
            items = document.get(section)
            for i, item in enumerate(items if isinstance(items, list) else []):
                try:
                    _fast(version, part)(item)
                except fastjsonschema.JsonSchemaException:
                    found += [
                        d
                        for err in _full(version, part).iter_errors(item)
                        for d in _map_error(err, [section, i])
                    ]
    # The two validators implement the same draft; should they ever disagree, the finding is
    # still reported rather than lost.
    return found or [Diagnostic("invalid_value", "$", first)]


def _map_error(err: jsonschema.ValidationError, prefix: list[str | int] | None = None) -> list[Diagnostic]:
    prefix = prefix or []
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in prefix) + err.json_path[1:]
    parts = [*prefix, *err.absolute_path]
    if err.validator == "required":
        match = _REQUIRED.match(err.message)
        name = match.group(1) if match else "?"
        return [
            Diagnostic("required_field_missing", child(path, name), f"required field '{name}' is missing")
        ]
    if err.validator == "additionalProperties":
        known = set(err.schema.get("properties", {})) if isinstance(err.schema, dict) else set()
        extras = sorted(k for k in err.instance if k not in known) if isinstance(err.instance, dict) else []
        return [
            Diagnostic(
                "unknown_field",
                child(path, k),
                f"field '{k}' is not part of the contract; put extensions under 'attributes'",
            )
            for k in extras
        ] or [Diagnostic("unknown_field", path, err.message)]
    if err.validator == "type":
        return [
            Diagnostic(
                "wrong_type",
                path,
                f"expected {_expected(err.validator_value)}, got {json_type(err.instance)}",
            )
        ]
    if err.validator == "enum":
        if not isinstance(err.instance, str) and "string" in str(err.schema.get("type", "")):
            return []  # reported once, as wrong_type
        if len(parts) == 3 and parts[0] in KIND_CODES and parts[2] == "kind":
            what = parts[0][:-1]
            return [Diagnostic(KIND_CODES[parts[0]], path, f"unknown {what} kind {err.instance!r}")]
        if parts and parts[0] == "memory_kinds":
            return [
                Diagnostic(
                    "unknown_memory_kind",
                    path,
                    f"unknown memory kind {err.instance!r}; allowed: {', '.join(vocab.MEMORY_KINDS)}",
                )
            ]
        return [Diagnostic("invalid_value", path, f"{err.instance!r} is not one of {err.validator_value}")]
    if err.validator == "minimum" and parts[:1] == ["activation"]:
        return [
            Diagnostic(
                "non_positive_limit",
                path,
                f"activation.{parts[-1]} must be a positive integer, got {err.instance!r}",
            )
        ]
    return [Diagnostic("invalid_value", path, err.message)]


def _expected(value: object) -> str:
    return " or ".join(value) if isinstance(value, list) else str(value)


def _version_findings(document: object, expected: str) -> list[Diagnostic]:
    if not isinstance(document, dict):
        return [
            Diagnostic("wrong_type", "$", f"a {expected} document is an object, got {json_type(document)}")
        ]
    if "schema_version" not in document:
        return [
            Diagnostic(
                "schema_version_missing",
                "$.schema_version",
                f"schema_version is missing; expected {expected!r}",
            )
        ]
    got = document["schema_version"]
    if got != expected:
        return [
            Diagnostic(
                "schema_version_mismatch",
                "$.schema_version",
                f"schema_version is {got!r}; expected {expected!r}",
            )
        ]
    return []


def _timestamp_ok(value: str) -> bool:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        return False
    return True


def _list(document: Mapping[str, object], key: str) -> list[object]:
    value = document.get(key)
    return value if isinstance(value, list) else []


def _graph_findings(graph: Mapping[str, object]) -> Iterable[Diagnostic]:
    seen: dict[str, str] = {}
    node_ids: set[str] = set()
    edge_ids: set[str] = set()

    def register(item: object, path: str, bucket: set[str]) -> None:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            return
        item_id = item["id"]
        if item_id in seen:
            raise_dup.append(
                Diagnostic(
                    "duplicate_id", child(path, "id"), f"id {item_id!r} is already used at {seen[item_id]}"
                )
            )
        else:
            seen[item_id] = path
            bucket.add(item_id)

    raise_dup: list[Diagnostic] = []
    for section, bucket, stamps in (
        ("nodes", node_ids, ("created_at", "valid_from", "valid_until")),
        ("edges", edge_ids, ()),
        ("events", set(), ("at",)),
    ):
        for i, item in enumerate(_list(graph, section)):
            path = f"$.{section}[{i}]"
            register(item, path, bucket)
            if isinstance(item, dict):
                for key in stamps:
                    value = item.get(key)
                    if isinstance(value, str) and value and not _timestamp_ok(value):
                        yield Diagnostic(
                            "invalid_timestamp", child(path, key), f"{value!r} is not an ISO-8601 timestamp"
                        )
    yield from raise_dup
    for i, edge in enumerate(_list(graph, "edges")):
        if not isinstance(edge, dict):
            continue
        for end in ("source", "target"):
            ref = edge.get(end)
            if isinstance(ref, str) and ref not in node_ids:
                yield Diagnostic(
                    "edge_missing_node",
                    f"$.edges[{i}].{end}",
                    f"edge {end} {ref!r} is not a node of this graph",
                )
    for i, event in enumerate(_list(graph, "events")):
        refs = event.get("refs") if isinstance(event, dict) else None
        for j, ref in enumerate(refs if isinstance(refs, list) else []):
            if isinstance(ref, str) and ref not in node_ids and ref not in edge_ids:
                yield Diagnostic(
                    "event_missing_ref",
                    f"$.events[{i}].refs[{j}]",
                    f"event ref {ref!r} is not a node or edge of this graph",
                )


def _profile_findings(profile: Mapping[str, object]) -> Iterable[Diagnostic]:
    kinds = [k for k in _list(profile, "memory_kinds") if isinstance(k, str)]
    declared = profile.get("stores")
    stores = declared if isinstance(declared, dict) else {}
    for key in stores:
        if key not in kinds:
            yield Diagnostic(
                "store_kind_undeclared",
                f"$.stores.{key}",
                f"store for {key!r}, which memory_kinds does not declare",
            )
    for i, kind in enumerate(_list(profile, "memory_kinds")):
        if isinstance(kind, str) and kind in vocab.MEMORY_KINDS and kind not in stores:
            yield Diagnostic(
                "store_missing",
                f"$.memory_kinds[{i}]",
                f"no store declared for {kind!r}; this runtime's own store serves it",
            )


def _selection_findings(selection: Mapping[str, object]) -> Iterable[Diagnostic]:
    for section in ("nodes", "edges", "events"):
        seen: set[str] = set()
        for i, ref in enumerate(_list(selection, section)):
            if isinstance(ref, str):
                if ref in seen:
                    yield Diagnostic(
                        "duplicate_selection_entry", f"$.{section}[{i}]", f"{ref!r} is selected twice"
                    )
                seen.add(ref)


_SEMANTIC = {"graph": _graph_findings, "profile": _profile_findings, "selection": _selection_findings}


def validate(document: object, contract: str) -> list[Diagnostic]:
    """All findings for ``document`` read as ``contract`` ("graph", "profile" or "selection")."""
    version = vocab.CONTRACTS[contract]
    found = _version_findings(document, version)
    if found or not isinstance(document, dict):  # a document that is no object has a finding
        return found  # another contract or version: checking its fields against this one would only add noise
    found = _schema_findings(document, version)
    found.extend(_SEMANTIC[contract](document))
    found.extend(_non_finite_findings(document))
    return sort_diagnostics(found)


_INDEX = re.compile(r"\.(\d+)(?=\.|$)")


def _non_finite_findings(document: object) -> list[Diagnostic]:
    """NaN and Infinity (YAML's ``.nan``/``.inf``, JSON's non-standard tokens): no JSON reader
    or store takes them, so a document holding one is invalid wherever it sits."""
    return [
        Diagnostic(
            "invalid_value", _INDEX.sub(r"[\1]", path), "must be a finite number (not NaN or Infinity)"
        )
        for path, _, _ in input_problems(document, "$", strings=False)
    ]


def check_selection_against_graph(
    selection: Mapping[str, object], graph: Mapping[str, object]
) -> list[Diagnostic]:
    """Selection entries that name nothing in the graph."""
    ids = {
        section: {
            item["id"]
            for item in _list(graph, section)
            if isinstance(item, dict) and isinstance(item.get("id"), str)
        }
        for section in ("nodes", "edges", "events")
    }
    found = []
    for section in ("nodes", "edges", "events"):
        code = f"selection_missing_{section[:-1]}"
        for i, ref in enumerate(_list(selection, section)):
            if isinstance(ref, str) and ref not in ids[section]:
                found.append(
                    Diagnostic(code, f"$.{section}[{i}]", f"the graph has no {section[:-1]} {ref!r}")
                )
    return found

"""Pack a selection into a ContextPackage (``memory-substrate.context-package.v1``).

Selected nodes become items in selection order, then selected events become synthetic items;
the profile's ``activation.max_items`` / ``max_tokens`` are applied greedily in that order
(an item that does not fit the remaining token budget is skipped, later smaller ones may still
fit). Selected edges, and edges implied between packed nodes, go into ``metadata.edges``.

The output is a pure function of the parsed inputs: no clock, no paths of this machine, keys
sorted when serialised, so the same inputs give the same bytes anywhere. The package id is
the hash of its own content.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from memory_substrate.contracts import vocab
from memory_substrate.contracts.diagnostics import Diagnostic, has_errors, sort_diagnostics
from memory_substrate.contracts.documents import (
    GraphDocument,
    GraphEvent,
    GraphNode,
    ProfileActivation,
    ProfileDocument,
    SelectionDocument,
)
from memory_substrate.contracts.loader import DocumentError, load_document
from memory_substrate.contracts.results import (
    ContextPackage,
    DocumentRef,
    ItemContent,
    OmittedEntry,
    PackageContent,
    PackageEdge,
    PackageItem,
)
from memory_substrate.contracts.validate import check_selection_against_graph, validate
from memory_substrate.json_types import JsonObject
from memory_substrate.version import __version__

TOKEN_METHOD = "utf8_chars_div_4_ceil"
NODE_FIELDS: tuple[
    Literal[
        "status", "created_at", "valid_from", "valid_until", "confidence", "tags", "provenance", "attributes"
    ],
    ...,
] = (
    "status",
    "created_at",
    "valid_from",
    "valid_until",
    "confidence",
    "tags",
    "provenance",
    "attributes",
)
EVENT_FIELDS: tuple[Literal["at", "refs", "actor", "data"], ...] = ("at", "refs", "actor", "data")
READ_FIELDS: tuple[Literal["attributes", "data", "provenance"], ...] = ("attributes", "data", "provenance")


def canonical(document: object) -> str:
    return json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(document: object) -> str:
    return hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()


def estimate_tokens(item: ItemContent) -> int:
    """About four characters per token, counted over everything an agent would read."""
    extra = {k: item[k] for k in READ_FIELDS if item.get(k)}
    text = f"{item['title']}\n{item['text']}" + (canonical(extra) if extra else "")
    return math.ceil(len(text) / 4)


@dataclass
class Limits:
    max_items: int | None = None
    max_tokens: int | None = None
    source: str = "none"  # profile | override | none

    @classmethod
    def of(cls, profile: ProfileDocument | None, override: dict[str, int | None] | None = None) -> Limits:
        activation: ProfileActivation = (profile.get("activation") if profile else None) or {}
        limits = cls(
            activation.get("max_items"), activation.get("max_tokens"), "profile" if activation else "none"
        )
        for key, value in (override or {}).items():
            if value is not None:
                setattr(limits, key, value)
                limits.source = "override"
        return limits


@dataclass
class Resolved:
    """A selection with its graph and profile read and checked. The documents keep the type
    of caller JSON: only one whose diagnostics hold no error has its schema's shape."""

    selection: JsonObject
    graph: JsonObject | None = None
    profile: JsonObject | None = None
    graph_ref: str = "inline"
    profile_ref: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _resolve_ref(
    value: object, key: str, base: Path | None, contract: str, resolved: Resolved
) -> tuple[JsonObject | None, str | None]:
    if isinstance(value, dict):
        found = [Diagnostic(d.code, f"$.{key}{d.path[1:]}", d.message) for d in validate(value, contract)]
        resolved.diagnostics.extend(found)
        return value, "inline"
    if not isinstance(value, str):
        return None, None
    if base is None:
        resolved.diagnostics.append(
            Diagnostic(
                "reference_unresolved",
                f"$.{key}",
                f"{key} {value!r}: only inline documents are accepted here",
            )
        )
        return None, value
    try:
        document = load_document(base / value)
    except DocumentError as exc:
        resolved.diagnostics.append(
            Diagnostic("reference_unresolved", f"$.{key}", f"{key} {value!r}: {exc.diagnostic.message}")
        )
        return None, value
    resolved.diagnostics.extend(d.in_file(value) for d in validate(document, contract))
    # A file that holds no object has a wrong_type error: nothing is packed from it.
    return (document if isinstance(document, dict) else None), value


def resolve(
    selection: object,
    base: Path | None,
    *,
    profile_override: object = None,
    profile_override_ref: str | None = None,
) -> Resolved:
    """Validate a selection, then read and validate the graph and profile it names.

    String references are paths relative to ``base``; with ``base=None`` (the MCP surface)
    only inline documents are accepted.
    """
    resolved = Resolved(selection=selection if isinstance(selection, dict) else {})
    resolved.diagnostics = validate(selection, "selection")
    if has_errors(resolved.diagnostics) and not isinstance(selection, dict):
        return resolved
    graph, graph_ref = _resolve_ref(resolved.selection.get("graph"), "graph", base, "graph", resolved)
    resolved.graph, resolved.graph_ref = graph, graph_ref or "inline"
    if profile_override is not None:
        # A profile that is no object has a wrong_type error: nothing is packed with it.
        resolved.profile = profile_override if isinstance(profile_override, dict) else None
        resolved.profile_ref = profile_override_ref
        resolved.diagnostics.extend(
            d.in_file(profile_override_ref or "profile") for d in validate(profile_override, "profile")
        )
    elif "profile" in resolved.selection:
        resolved.profile, resolved.profile_ref = _resolve_ref(
            resolved.selection["profile"], "profile", base, "profile", resolved
        )
    if graph is not None and not has_errors(resolved.diagnostics):
        resolved.diagnostics.extend(check_selection_against_graph(resolved.selection, graph))
    resolved.diagnostics = sort_diagnostics(resolved.diagnostics)
    return resolved


def _node_item(node: GraphNode) -> PackageItem:
    item: ItemContent = {
        "id": node["id"],
        "item_type": "node",
        "kind": node["kind"],
        "title": node["title"],
        "text": node.get("text", ""),
    }
    for key in NODE_FIELDS:
        if key in node:
            item[key] = node[key]
    return {**item, "tokens": estimate_tokens(item)}


def _event_item(event: GraphEvent, titles: dict[str, str]) -> PackageItem:
    about = ", ".join(titles.get(ref, ref) for ref in event["refs"])
    item: ItemContent = {
        "id": event["id"],
        "item_type": "event",
        "kind": event["kind"],
        "title": f"{event['kind']}: {about}",
        "text": event.get("text", ""),
    }
    for key in EVENT_FIELDS:
        if key in event:
            item[key] = event[key]
    return {**item, "tokens": estimate_tokens(item)}


def _ref_info(
    document: SelectionDocument | GraphDocument | ProfileDocument | None, ref: str | None
) -> DocumentRef | None:
    if document is None:
        return None
    return {
        "id": document.get("id"),
        "ref": ref,
        "schema_version": document.get("schema_version"),
        "sha256": digest(document),
    }


def _hashable_selection(selection: SelectionDocument, resolved: Resolved) -> SelectionDocument:
    """The selection with inline documents replaced by their hashes (already in provenance),
    so a large inline graph is hashed once."""
    out = selection.copy()
    keys: tuple[tuple[Literal["graph", "profile"], JsonObject | None], ...] = (
        ("graph", resolved.graph),
        ("profile", resolved.profile),
    )
    for key, document in keys:
        if isinstance(out.get(key), dict) and document is not None:
            out[key] = "inline"
    return out


def build_package(resolved: Resolved, override: dict[str, int | None] | None = None) -> ContextPackage:
    """The ContextPackage of a resolved selection whose diagnostics hold no error."""
    # No error: validate() passed each document against its contract's schema, so each has its shape.
    selection = cast(SelectionDocument, resolved.selection)
    graph = cast(GraphDocument, resolved.graph or {})
    profile = cast(ProfileDocument | None, resolved.profile)
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    edges = {e["id"]: e for e in graph.get("edges", [])}
    events = {e["id"]: e for e in graph.get("events", [])}
    titles = {
        **{i: n["title"] for i, n in nodes.items()},
        **{i: f"{e['source']} {e['kind']} {e['target']}" for i, e in edges.items()},
    }
    limits = Limits.of(profile, override)

    candidates = [_node_item(nodes[i]) for i in dict.fromkeys(selection.get("nodes", []))]
    candidates += [_event_item(events[i], titles) for i in dict.fromkeys(selection.get("events", []))]
    items: list[PackageItem] = []
    omitted: list[OmittedEntry] = []
    used = 0
    for item in candidates:
        reason = None
        if limits.max_items is not None and len(items) >= limits.max_items:
            reason = "max_items"
        elif limits.max_tokens is not None and used + item["tokens"] > limits.max_tokens:
            reason = "max_tokens"
        if reason:
            omitted.append(
                {"id": item["id"], "item_type": item["item_type"], "reason": reason, "tokens": item["tokens"]}
            )
            continue
        items.append(item)
        used += item["tokens"]

    packed = {i["id"] for i in items if i["item_type"] == "node"}
    dropped = {o["id"] for o in omitted}
    kept: list[PackageEdge] = []
    for edge_id in dict.fromkeys(selection.get("edges", [])):
        edge = edges[edge_id]
        if edge["source"] in dropped or edge["target"] in dropped:
            omitted.append({"id": edge_id, "item_type": "edge", "reason": "endpoint_not_packed"})
        else:
            kept.append({**edge, "origin": "selected"})
    if selection.get("include_implied_edges", True):
        chosen = {e["id"] for e in kept}
        kept += [
            {**e, "origin": "implied"}
            for e in graph.get("edges", [])
            if e["id"] not in chosen and e["source"] in packed and e["target"] in packed
        ]

    content: PackageContent = {
        "schema_version": vocab.PACKAGE_V1,
        "title": selection.get("title") or f"Selection {selection['id']}",
        "items": items,
        "metadata": {
            "edges": kept,
            "omitted": omitted,
            "limits": {"max_items": limits.max_items, "max_tokens": limits.max_tokens, "from": limits.source},
            "counts": {
                "items": len(items),
                "node_items": len(packed),
                "event_items": len(items) - len(packed),
                "edges": len(kept),
                "omitted": len(omitted),
            },
        },
        "token_estimate": {"total": used, "method": TOKEN_METHOD},
        "provenance": {
            "generator": f"memory-substrate {__version__}",
            "selection": _ref_info(_hashable_selection(selection, resolved), None),
            "graph": _ref_info(graph if resolved.graph is not None else None, resolved.graph_ref),
            "profile": _ref_info(profile, resolved.profile_ref),
        },
    }
    if selection.get("purpose"):
        content["purpose"] = selection["purpose"]
    return {**content, "id": "pkg:" + digest(content)[:16]}


def pack_file(
    path: Path, *, profile_path: Path | None = None, override: dict[str, int | None] | None = None
) -> tuple[ContextPackage | None, list[Diagnostic]]:
    """Read a selection file and pack it. Returns (package or None, diagnostics)."""
    try:
        selection = load_document(path)
    except DocumentError as exc:
        return None, [exc.diagnostic]
    profile: object = None
    if profile_path is not None:
        try:
            profile = load_document(profile_path)
        except DocumentError as exc:
            return None, [exc.diagnostic.in_file(str(profile_path))]
    resolved = resolve(
        selection,
        path.parent,
        profile_override=profile,
        profile_override_ref=profile_path.name if profile_path else None,
    )
    if has_errors(resolved.diagnostics):
        return None, resolved.diagnostics
    return build_package(resolved, override), resolved.diagnostics

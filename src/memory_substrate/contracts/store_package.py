"""memory_query ``package``: pack a selection of this namespace's objects into a ContextPackage.

The selection names store ids (objects, segments as ``src:...#seg-N``, audit events as
``evt:...``); its graph is the namespace itself (``memory://namespace``), exported for just
the selected objects, then validated and packed exactly as ``contracts graph pack`` packs a
file. The same objects give the same package bytes.
"""

from __future__ import annotations

from memory_substrate.contracts.diagnostics import Diagnostic, has_errors
from memory_substrate.contracts.documents import GraphDocument
from memory_substrate.contracts.inputs import NAMESPACE_GRAPH, PackageInput, PackageOptions
from memory_substrate.contracts.pack import build_package, resolve
from memory_substrate.contracts.snapshot_export import export_snapshot
from memory_substrate.errors import ValidationError
from memory_substrate.json_types import JsonObject
from memory_substrate.runtime import Runtime


def _invalid(diagnostics: list[Diagnostic]) -> ValidationError:
    found = [d.to_dict() for d in diagnostics]
    first = next(d for d in found if d["severity"] == "error")
    return ValidationError(
        f"input_data.selection cannot be packed ({len(found)} findings; first: [{first['code']}] "
        f"{first['path']}: {first['message']})",
        details={"diagnostics": found[:200]},
    )


COMPACT_ATTRIBUTES = (
    "object_type",
    "object_kind",
    "payload",
    "evidence_refs",
    "source_id",
    "segment_id",
    "locator",
)


def _compact(graph: GraphDocument) -> None:
    """Keep what an agent reads; a source's payload (a repository map, say) is not that."""
    for node in graph["nodes"]:
        attributes = node.get("attributes") or {}
        keep = [
            k
            for k in COMPACT_ATTRIBUTES
            if k in attributes and not (k == "payload" and attributes["object_type"] == "source")
        ]
        node["attributes"] = {k: attributes[k] for k in keep}


def store_package(rt: Runtime, data: PackageInput, opts: PackageOptions) -> JsonObject:
    """A ``package_result``: the package and the selection's diagnostics (warnings only)."""
    selection = dict(data.selection)
    selection.setdefault("graph", NAMESPACE_GRAPH)
    graph_ref = selection["graph"]
    namespace_ref = f"memory://{rt.namespace}"
    if graph_ref == NAMESPACE_GRAPH:
        nodes = selection.get("nodes")
        node_refs = [r for r in nodes if isinstance(r, str)] if isinstance(nodes, list) else []
        object_ids = list(dict.fromkeys(r.partition("#")[0] for r in node_refs))
        with rt.read() as session:
            graph, _ = export_snapshot(
                session, ids=object_ids, segments=any("#" in r for r in node_refs), snapshot_id=namespace_ref
            )
        if opts.detail == "compact":
            _compact(graph)
        if opts.include_history:
            chosen = set(node_refs)
            history = [e["id"] for e in graph["events"] if chosen & set(e["refs"])]
            events = selection.get("events")
            listed: list[object] = events if isinstance(events, list) else []
            selection["events"] = list(dict.fromkeys([*listed, *history]))
        selection["graph"] = graph
    elif not isinstance(graph_ref, dict):
        raise ValidationError(
            f"input_data.selection.graph must be {NAMESPACE_GRAPH!r} (this namespace) or an inline graph.v1 document; "
            "the server reads no files",
            details={"graph": graph_ref},
        )
    resolved = resolve(selection, None)
    if has_errors(resolved.diagnostics):
        raise _invalid(resolved.diagnostics)
    if graph_ref == NAMESPACE_GRAPH:
        resolved.graph_ref = namespace_ref
    package = build_package(resolved, {"max_items": opts.max_items, "max_tokens": opts.max_tokens})
    return {
        "result_type": "package_result",
        "package": package,
        "diagnostics": [d.to_dict() for d in resolved.diagnostics],
    }

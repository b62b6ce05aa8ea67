"""The store <-> graph.v1 mapping tables agree with docs/contracts.md; the boundary catalogue
names only contracts that exist."""

from __future__ import annotations

from pathlib import Path

from memory_substrate.contracts import mapping, vocab
from tests.contracts.documents import load_object

ROOT = Path(__file__).resolve().parents[2]


def test_every_mapping_entry_is_in_the_docs() -> None:
    text = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    for kind, node in mapping.KNOWLEDGE_KIND_TO_NODE.items():
        assert f"| `knowledge` | `{kind}` | `{node}` |" in text
    edges_section = text.split("### Relations → edges", 1)[1].split("###", 1)[0]
    for rel, edge in mapping.REL_TYPE_TO_EDGE.items():
        if rel == edge:
            continue  # documented as "an edge kind -> the same kind"
        row = next(line for line in edges_section.splitlines() if line.startswith("|") and f"`{rel}`" in line)
        assert row.rstrip().endswith(f"| `{edge}` |"), row
    for action, event in mapping.ACTION_TO_EVENT.items():
        assert f"| `{action}` | `{event}` |" in text
    for status, event in mapping.STATUS_TO_EVENT.items():
        assert f"| `status_change` to `{status}` | `{event}` |" in text


def test_mapped_kinds_are_in_the_vocabularies() -> None:
    assert set(mapping.KNOWLEDGE_KIND_TO_NODE.values()) <= set(vocab.NODE_KINDS)
    assert set(mapping.OBJECT_TYPE_DEFAULT_NODE.values()) <= set(vocab.NODE_KINDS)
    assert set(mapping.REL_TYPE_TO_EDGE.values()) <= set(vocab.EDGE_KINDS)
    assert set(mapping.ACTION_TO_EVENT.values()) | set(mapping.STATUS_TO_EVENT.values()) <= set(
        vocab.EVENT_KINDS
    )
    for kind in vocab.NODE_KINDS:
        object_type, _ = mapping.object_for_node_kind(kind)
        assert object_type in ("knowledge", "node", "work_item", "activity", "source")


def test_closest_kinds() -> None:
    assert mapping.node_kind_for("knowledge", "fact") == ("source_fact", True)
    assert mapping.node_kind_for("knowledge", "decision") == ("decision", True)
    assert mapping.node_kind_for("knowledge", "setting") == ("memory", False)
    assert mapping.node_kind_for("entity", "person") == ("entity", True)
    assert mapping.node_kind_for("entity", "document") == ("document", True)
    assert mapping.node_kind_for("trace", "compile") == ("memory", False)
    assert mapping.node_kind_for("source", "conversation", conversation=True) == ("episode", True)
    assert mapping.edge_kind_for("about") == "references" and mapping.edge_kind_for("owns") == "relates_to"
    assert (
        mapping.event_kind_for(
            "status_change", {"changes": {"status": {"from": "candidate", "to": "active"}}}
        )
        == "activated"
    )


def test_runtime_boundary_catalogue() -> None:
    catalogue = load_object(ROOT / "examples" / "memory" / "runtime-adapter-boundaries.yaml")
    assert catalogue["executes"] is False
    ids = [b["id"] for b in catalogue["boundaries"]]
    assert ids == [
        "memory.runtime.kontextual-engine",
        "memory.runtime.phased-memory",
        "memory.store.external-graph",
        "memory.store.vector",
        "memory.extract.llm-assisted",
        "memory.policy.enterprise-pdp",
        "memory.registry.remote",
        "memory.audit.sink",
    ]
    known = set(vocab.CONTRACTS.values())
    assert set(catalogue["contracts"].values()) == known
    for boundary in catalogue["boundaries"]:
        assert boundary["responsibility"] and boundary["memory_substrate"]
        assert set(boundary["accepts"]) | set(boundary["emits"]) <= known

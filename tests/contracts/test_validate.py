"""Every diagnostic code, asserted exactly, on the shipped fixtures and on small documents."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memory_substrate.contracts import vocab
from memory_substrate.contracts.diagnostics import CODES
from memory_substrate.contracts.loader import DocumentError, parse_text, schema
from memory_substrate.contracts.validate import check_selection_against_graph, validate
from tests.contracts.documents import load_object

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "memory"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"


def _found(document: Any, contract: str) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in validate(document, contract)]


def _graph() -> Any:
    return copy.deepcopy(load_object(EXAMPLES / "decision-graph.yaml"))


@pytest.mark.parametrize("name", ["decision-graph", "conversation-path", "knowledge-neighborhood"])
def test_valid_graph_fixtures_have_no_findings(name: str) -> None:
    assert validate(load_object(EXAMPLES / f"{name}.yaml"), "graph") == []


@pytest.mark.parametrize("name", ["decision-graph", "conversation-path", "knowledge-neighborhood"])
def test_valid_selection_fixtures_have_no_findings(name: str) -> None:
    selection = load_object(EXAMPLES / f"{name}-selection.yaml")
    assert validate(selection, "selection") == []
    graph = load_object(EXAMPLES / selection["graph"])
    assert check_selection_against_graph(selection, graph) == []


def test_local_profile_is_valid() -> None:
    assert validate(load_object(EXAMPLES / "memory-profile.local.yaml"), "profile") == []


def test_invalid_graph_fixture_gives_exactly_these_codes() -> None:
    assert _found(load_object(EXAMPLES / "invalid-memory-graph.yaml"), "graph") == [
        ("unknown_edge_kind", "$.edges[1].kind"),
        ("edge_missing_node", "$.edges[2].target"),
        ("unknown_event_kind", "$.events[1].kind"),
        ("event_missing_ref", "$.events[2].refs[0]"),
        ("unknown_node_kind", "$.nodes[1].kind"),
        ("duplicate_id", "$.nodes[2].id"),
        ("required_field_missing", "$.nodes[3].title"),
        ("wrong_type", "$.nodes[4].confidence"),
        ("unknown_field", "$.nodes[5].colour"),
        ("invalid_timestamp", "$.nodes[6].created_at"),
    ]


def test_invalid_profile_fixture_gives_exactly_these_codes() -> None:
    assert _found(load_object(EXAMPLES / "invalid-memory-profile.yaml"), "profile") == [
        ("non_positive_limit", "$.activation.max_items"),
        ("non_positive_limit", "$.activation.max_tokens"),
        ("unknown_memory_kind", "$.memory_kinds[1]"),
        ("store_kind_undeclared", "$.stores.knowledge"),
    ]


def test_schema_version_missing_and_mismatch_stop_further_checks() -> None:
    graph = _graph()
    del graph["schema_version"]
    graph["nodes"][0]["kind"] = "nonsense"
    assert _found(graph, "graph") == [("schema_version_missing", "$.schema_version")]
    graph["schema_version"] = "markitect.memory.graph.v2"
    assert _found(graph, "graph") == [("schema_version_mismatch", "$.schema_version")]
    # a profile handed to the graph validator is a mismatch, not a pile of unknown fields
    profile = load_object(EXAMPLES / "memory-profile.local.yaml")
    assert _found(profile, "graph") == [("schema_version_mismatch", "$.schema_version")]


def test_top_level_must_be_an_object() -> None:
    assert _found(["not", "a", "graph"], "graph") == [("wrong_type", "$")]


def test_missing_required_top_level_fields_and_wrong_types() -> None:
    graph = {"schema_version": vocab.GRAPH_V1, "edges": {}}
    assert _found(graph, "graph") == [
        ("wrong_type", "$.edges"),
        ("required_field_missing", "$.id"),
        ("required_field_missing", "$.nodes"),
    ]


def test_edge_missing_source_and_event_ref_to_an_edge_is_fine() -> None:
    graph = _graph()
    graph["edges"][0]["source"] = "nowhere"
    graph["events"][1]["refs"] = ["e-constraint-dec", "dec-boundary"]
    assert _found(graph, "graph") == [("edge_missing_node", "$.edges[0].source")]


def test_ids_are_unique_across_nodes_edges_and_events() -> None:
    graph = _graph()
    graph["events"][0]["id"] = "dec-boundary"
    assert _found(graph, "graph") == [("duplicate_id", "$.events[0].id")]


def test_invalid_values() -> None:
    graph = _graph()
    graph["nodes"][1]["confidence"] = 1.5
    graph["nodes"][2]["title"] = ""
    graph["events"][0]["refs"] = []
    assert [c for c, _ in _found(graph, "graph")] == ["invalid_value", "invalid_value", "invalid_value"]


def test_selection_findings() -> None:
    selection = load_object(EXAMPLES / "decision-graph-selection.yaml")
    selection["nodes"].append("dec-boundary")
    selection["color"] = "red"
    assert _found(selection, "selection") == [
        ("unknown_field", "$.color"),
        ("duplicate_selection_entry", "$.nodes[6]"),
    ]
    selection = load_object(EXAMPLES / "decision-graph-selection.yaml")
    selection["nodes"].append("ghost")
    selection["edges"].append("ghost-edge")
    selection["events"].append("ghost-event")
    found = [(d.code, d.path) for d in check_selection_against_graph(selection, _graph())]
    assert found == [
        ("selection_missing_node", "$.nodes[6]"),
        ("selection_missing_edge", "$.edges[1]"),
        ("selection_missing_event", "$.events[2]"),
    ]


def test_profile_store_missing_is_a_warning() -> None:
    profile = load_object(EXAMPLES / "memory-profile.local.yaml")
    del profile["stores"]["package"]
    diags = validate(profile, "profile")
    assert [(d.code, d.severity, d.path) for d in diags] == [
        ("store_missing", "warning", "$.memory_kinds[3]")
    ]


def test_profile_limits_must_be_integers() -> None:
    profile = load_object(EXAMPLES / "memory-profile.local.yaml")
    profile["activation"]["max_items"] = "8"
    assert _found(profile, "profile") == [("wrong_type", "$.activation.max_items")]


def test_parse_error_and_yaml_keeps_timestamps_as_strings() -> None:
    with pytest.raises(DocumentError) as err:
        parse_text("nodes: [unclosed")
    assert err.value.diagnostic.code == "parse_error"
    doc = parse_text("at: 2026-05-01T10:00:00Z\nday: 2026-05-01\n")
    assert doc == {"at": "2026-05-01T10:00:00Z", "day": "2026-05-01"}


def test_yaml_and_json_forms_validate_alike(tmp_path: Path) -> None:
    graph = load_object(EXAMPLES / "invalid-memory-graph.yaml")
    path = tmp_path / "g.json"
    path.write_text(json.dumps(graph))
    assert _found(load_object(path), "graph") == _found(graph, "graph")


def test_schemas_carry_the_vocabularies_exactly() -> None:
    graph = schema(vocab.GRAPH_V1)["definitions"]
    assert isinstance(graph, dict)
    assert graph["node"]["properties"]["kind"]["enum"] == list(vocab.NODE_KINDS)
    assert graph["edge"]["properties"]["kind"]["enum"] == list(vocab.EDGE_KINDS)
    assert graph["event"]["properties"]["kind"]["enum"] == list(vocab.EVENT_KINDS)
    assert len(vocab.NODE_KINDS) == 34 and len(vocab.EDGE_KINDS) == 13 and len(vocab.EVENT_KINDS) == 10
    for version in (vocab.PROFILE_V1, vocab.GRAPH_V1, vocab.SELECTION_V1, vocab.PACKAGE_V1):
        assert schema(version)["title"] == version


def test_every_code_is_documented_and_every_documented_code_exists() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_]+)` \| (?:error|warning) \|", text, flags=re.M))
    assert documented == set(CODES)


def test_a_kind_of_the_wrong_type_is_reported_once_and_odd_shapes_do_not_crash() -> None:
    graph = _graph()
    graph["nodes"][0]["kind"] = ["decision"]
    graph["edges"][0] = "not an edge"
    graph["events"][0]["refs"] = "q-boundary"
    assert _found(graph, "graph") == [
        ("wrong_type", "$.edges[0]"),
        ("wrong_type", "$.events[0].refs"),
        ("wrong_type", "$.nodes[0].kind"),
    ]


def test_every_code_is_asserted_by_some_test() -> None:
    here = Path(__file__).parent
    text = "".join(
        p.read_text(encoding="utf-8") for p in here.glob("test_*.py") if p.name != Path(__file__).name
    )
    text += (
        Path(__file__).read_text(encoding="utf-8").split("def test_every_code_is_asserted_by_some_test")[0]
    )
    assert [code for code in CODES if f'"{code}"' not in text] == []

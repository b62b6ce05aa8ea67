"""Packing: limits, edges, events as items, and byte-identical output."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import jsonschema
import pytest

from memory_substrate.contracts import vocab
from memory_substrate.contracts.loader import dump, parse_text, schema
from memory_substrate.contracts.pack import build_package, pack_file, resolve
from tests.contracts.documents import load_object

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "memory"
SELECTIONS = ["decision-graph-selection", "conversation-path-selection", "knowledge-neighborhood-selection"]


@pytest.mark.parametrize("name", SELECTIONS)
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_two_runs_one_hash(name: str, fmt: str) -> None:
    hashes = set()
    for _ in range(2):
        package, diags = pack_file(EXAMPLES / f"{name}.yaml")
        assert package is not None and diags == []
        hashes.add(hashlib.sha256(dump(package, fmt).encode()).hexdigest())
    assert len(hashes) == 1


@pytest.mark.parametrize("name", SELECTIONS)
def test_packages_match_the_package_schema_and_round_trip_through_yaml(name: str) -> None:
    package, _ = pack_file(EXAMPLES / f"{name}.yaml")
    jsonschema.Draft7Validator(schema(vocab.PACKAGE_V1)).validate(package)
    assert parse_text(dump(package, "yaml")) == package


def test_decision_package_contents() -> None:
    package, _ = pack_file(EXAMPLES / "decision-graph-selection.yaml")
    assert package is not None
    assert [i["id"] for i in package["items"]] == [
        "dec-boundary",
        "claim-determinism",
        "constraint-no-network",
        "alt-runtime-inside",
        "ev-bench",
        "fu-adapter-catalog",
        "ev-policy-dec",
        "ev-alt-deactivated",
    ]
    events = [i for i in package["items"] if i["item_type"] == "event"]
    assert events[1]["title"] == "deactivated: Put storage and retrieval in the contract layer"
    edges = {e["id"]: e["origin"] for e in package["metadata"]["edges"]}
    # the selected edge first, then every graph edge between packed nodes
    assert edges == {
        "e-constraint-dec": "selected",
        "e-ev-claim": "implied",
        "e-claim-dec": "implied",
        "e-alt-dec": "implied",
        "e-dec-fu": "implied",
    }
    assert package["token_estimate"]["total"] == sum(i["tokens"] for i in package["items"])
    assert package["metadata"]["limits"] == {"max_items": 8, "max_tokens": 2400, "from": "profile"}
    graph = package["provenance"]["graph"]
    assert graph is not None and graph["ref"] == "decision-graph.yaml"
    assert package["id"].startswith("pkg:")


def test_max_items_and_max_tokens_are_honoured() -> None:
    package, _ = pack_file(EXAMPLES / "knowledge-neighborhood-selection.yaml")
    assert package is not None
    assert len(package["items"]) == 8
    assert [(o["id"], o["reason"]) for o in package["metadata"]["omitted"]] == [
        ("entity-bench", "max_items"),
        ("pref-yaml", "max_items"),
        ("kv-refresh", "max_items"),
    ]
    small, _ = pack_file(EXAMPLES / "decision-graph-selection.yaml", override={"max_tokens": 120})
    assert small is not None
    assert small["token_estimate"]["total"] <= 120
    kept = [i["id"] for i in small["items"]]
    # dec-boundary (62) and claim-determinism (44) fit; later items are skipped unless they still fit
    assert kept[:2] == ["dec-boundary", "claim-determinism"]
    assert all(o["reason"] in ("max_tokens", "endpoint_not_packed") for o in small["metadata"]["omitted"])
    assert small["metadata"]["limits"]["from"] == "override"
    packed = set(kept)
    for edge in small["metadata"]["edges"]:
        assert edge["origin"] == "selected" or {edge["source"], edge["target"]} <= packed


def test_package_does_not_depend_on_where_the_files_are(tmp_path: Path) -> None:
    for name in ("decision-graph.yaml", "decision-graph-selection.yaml", "memory-profile.local.yaml"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
    a, _ = pack_file(EXAMPLES / "decision-graph-selection.yaml")
    b, _ = pack_file(tmp_path / "decision-graph-selection.yaml")
    assert dump(a, "json") == dump(b, "json")


def test_inline_graph_and_missing_references() -> None:
    selection = load_object(EXAMPLES / "decision-graph-selection.yaml")
    inline = copy.deepcopy(selection)
    inline["graph"] = load_object(EXAMPLES / "decision-graph.yaml")
    inline["profile"] = load_object(EXAMPLES / "memory-profile.local.yaml")
    resolved = resolve(inline, None)
    assert resolved.diagnostics == []
    graph = build_package(resolved)["provenance"]["graph"]
    assert graph is not None and graph["ref"] == "inline"
    # a file reference where only inline documents are allowed
    resolved = resolve(selection, None)
    assert [(d.code, d.path) for d in resolved.diagnostics] == [
        ("reference_unresolved", "$.graph"),
        ("reference_unresolved", "$.profile"),
    ]
    inline["graph"]["nodes"][0]["kind"] = "hunch"
    assert [(d.code, d.path) for d in resolve(inline, None).diagnostics] == [
        ("unknown_node_kind", "$.graph.nodes[0].kind")
    ]


def test_findings_in_a_referenced_file_name_that_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text((EXAMPLES / "invalid-memory-graph.yaml").read_text())
    selection = load_object(EXAMPLES / "decision-graph-selection.yaml")
    selection["graph"] = "bad.yaml"
    del selection["profile"]
    resolved = resolve(selection, tmp_path)
    assert {d.file for d in resolved.diagnostics} == {"bad.yaml"}
    assert "duplicate_id" in {d.code for d in resolved.diagnostics}

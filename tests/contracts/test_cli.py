"""`memory-substrate contracts ...` through its entry point: exit codes 0 / 1 / 2 and --json."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memory_substrate.cli.main import main
from tests.helpers import entry_point

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "memory"
EXE = entry_point()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    env = {**os.environ, "MEMORY_SUBSTRATE_EMBEDDER": "none"}
    return subprocess.run([*cmd, "contracts", *args], capture_output=True, text=True, env=env, timeout=120)


def test_exit_codes_through_the_entry_point() -> None:
    ok = _run("graph", "validate", str(EXAMPLES / "decision-graph.yaml"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "valid markitect.memory.graph.v1 (10 nodes, 10 edges, 3 events)" in ok.stdout
    bad = _run("graph", "validate", "--json", str(EXAMPLES / "invalid-memory-graph.yaml"))
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    assert report["valid"] is False
    assert {d["code"] for d in report["diagnostics"]} >= {
        "unknown_node_kind",
        "duplicate_id",
        "edge_missing_node",
    }
    missing = _run("graph", "validate", str(EXAMPLES / "no-such-file.yaml"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    usage = _run("graph", "pack", str(EXAMPLES / "decision-graph-selection.yaml"), "--format", "xml")
    assert usage.returncode == 2


def test_pack_is_byte_identical_across_processes() -> None:
    outs = [
        _run("graph", "pack", str(EXAMPLES / "conversation-path-selection.yaml"), "--format", "yaml")
        for _ in range(2)
    ]
    assert all(o.returncode == 0 for o in outs), outs[0].stderr
    assert len({hashlib.sha256(o.stdout.encode()).hexdigest() for o in outs}) == 1
    assert "schema_version: memory-substrate.context-package.v1" in outs[0].stdout


def test_profile_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        main, ["contracts", "profile", "validate", str(EXAMPLES / "memory-profile.local.yaml")]
    )
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(
        main, ["contracts", "profile", "validate", "--json", str(EXAMPLES / "invalid-memory-profile.yaml")]
    )
    assert bad.exit_code == 1
    assert [d["code"] for d in json.loads(bad.output)["diagnostics"]] == [
        "non_positive_limit",
        "non_positive_limit",
        "unknown_memory_kind",
        "store_kind_undeclared",
    ]
    plan = runner.invoke(
        main, ["contracts", "profile", "plan", "--json", str(EXAMPLES / "memory-profile.local.yaml")]
    )
    assert plan.exit_code == 0
    result = json.loads(plan.output)
    assert [k["memory_kind"] for k in result["kinds"]] == [
        "reasoning",
        "conversation",
        "knowledge",
        "package",
    ]
    assert result["launches"] == [] and result["activation"]["max_items"] == 8
    text = runner.invoke(main, ["contracts", "profile", "plan", str(EXAMPLES / "memory-profile.local.yaml")])
    assert "launches: nothing" in text.output
    assert (
        runner.invoke(
            main, ["contracts", "profile", "plan", str(EXAMPLES / "invalid-memory-profile.yaml")]
        ).exit_code
        == 1
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text("schema_version: [unclosed\n")
    parsed = runner.invoke(main, ["contracts", "graph", "validate", str(broken)])
    assert parsed.exit_code == 1 and "[parse_error]" in parsed.output


def test_pack_failures_and_options(tmp_path: Path) -> None:
    runner = CliRunner()
    selection = tmp_path / "sel.yaml"
    text = (
        (EXAMPLES / "decision-graph-selection.yaml")
        .read_text()
        .replace("graph: decision-graph.yaml", "graph: missing.yaml")
    )
    selection.write_text(text)
    bad = runner.invoke(main, ["contracts", "graph", "pack", "--json", str(selection)])
    assert bad.exit_code == 1
    codes = [d["code"] for d in json.loads(bad.output)["diagnostics"]]
    assert codes == ["reference_unresolved", "reference_unresolved"]  # graph and (relative) profile
    out = tmp_path / "pkg.json"
    ok = runner.invoke(
        main,
        [
            "contracts",
            "graph",
            "pack",
            str(EXAMPLES / "decision-graph-selection.yaml"),
            "--max-items",
            "2",
            "-o",
            str(out),
        ],
    )
    assert ok.exit_code == 0, ok.output
    package = json.loads(out.read_text())
    assert len(package["items"]) == 2 and package["metadata"]["limits"]["from"] == "override"
    zero = runner.invoke(
        main,
        ["contracts", "graph", "pack", str(EXAMPLES / "decision-graph-selection.yaml"), "--max-items", "0"],
    )
    assert zero.exit_code == 2


def _store_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(tmp_path / "root"), "MEMORY_SUBSTRATE_EMBEDDER": "none"}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=120)


def test_export_import_graph_snapshot_through_the_cli(tmp_path: Path) -> None:
    data = json.dumps(
        {
            "kind": "decision",
            "title": "Use WAL mode",
            "summary": "SQLite runs in WAL mode.",
            "reason": "r",
            "memory_source": "user_declared",
            "scope_refs": ["scope:db"],
        }
    )
    assert _store_run(tmp_path, "--namespace", "a", "remember", "knowledge", data).returncode == 0
    snap = tmp_path / "a.yaml"
    out = _store_run(tmp_path, "--namespace", "a", "export", "--format", "graph.v1", "-o", str(snap))
    assert out.returncode == 0, out.stderr
    report_a = json.loads(out.stderr)
    assert report_a["counts"]["nodes"] == 1 and snap.read_text().startswith("edges:")
    assert _run("graph", "validate", str(snap)).returncode == 0
    imported = _store_run(tmp_path, "--namespace", "b", "import", str(snap), "--scope", "scope:copied")
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["created"] == {"event": 1, "knowledge": 1}
    again = _store_run(tmp_path, "--namespace", "b", "export", "--format", "graph.v1")
    assert json.loads(again.stderr)["content_sha256"] == report_a["content_sha256"]
    assert json.loads(again.stdout)["schema_version"] == "markitect.memory.graph.v1"
    # the JSON Lines backup stays the default format
    jsonl = _store_run(tmp_path, "--namespace", "a", "export")
    assert json.loads(jsonl.stdout.splitlines()[0])["format"] == "memory-substrate.export"
    found = _store_run(
        tmp_path, "--namespace", "a", "export", "--format", "graph.v1", "--query", "nothing matches zzz"
    )
    assert json.loads(found.stdout)["nodes"] == []
    bad = _store_run(tmp_path, "--namespace", "c", "import", str(EXAMPLES / "invalid-memory-graph.yaml"))
    assert bad.returncode == 2 and "[memory_validation_error]" in bad.stderr

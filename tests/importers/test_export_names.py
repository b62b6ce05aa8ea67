"""``export --format mcp-memory`` after the README's two imports: one entity per name (the
reference server keys entities by name), the merge reported; an existing file is kept unless
``--force``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from memory_substrate.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_export_writes_one_entity_per_name_and_keeps_an_existing_file(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--root", str(tmp_path / "store"), "--embedder", "none"]
    for kind, path in (("mcp-memory", FIXTURES / "mcp_memory.jsonl"), ("markdown", FIXTURES / "vault")):
        res = runner.invoke(main, [*base, "import-from", kind, str(path)])
        assert res.exit_code == 0, res.output
    out = tmp_path / "memory.jsonl"
    res = runner.invoke(main, [*base, "export", "--format", "mcp-memory", "-o", str(out)])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stderr)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    names = Counter(r["name"] for r in records if r["type"] == "entity")
    assert names and max(names.values()) == 1, names  # Alice Johnson is a person and a vault note
    assert (
        summary["entities"] == len(names)
        and summary["merged"] >= 1
        and "Alice Johnson" in summary["merged_names"]
    )
    alice = next(r for r in records if r.get("name") == "Alice Johnson")
    assert alice["entityType"] == "person" and "Speaks fluent Spanish" in alice["observations"]
    relations = [(r["from"], r["relationType"], r["to"]) for r in records if r["type"] == "relation"]
    assert len(relations) == len(set(relations)) == summary["relations"]

    # The file exists now: kept, unless --force.
    out.write_text("mine\n", encoding="utf-8")
    again = runner.invoke(main, [*base, "export", "--format", "mcp-memory", "-o", str(out)])
    assert again.exit_code == 2
    assert again.stderr.startswith("error [memory_validation_error]:") and "--force" in again.stderr
    assert out.read_text(encoding="utf-8") == "mine\n"
    for fmt in ("jsonl", "graph.v1"):
        assert runner.invoke(main, [*base, "export", "--format", fmt, "-o", str(out)]).exit_code == 2
    forced = runner.invoke(main, [*base, "export", "--format", "mcp-memory", "-o", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert out.read_text(encoding="utf-8").count('"type": "entity"') == len(names)

"""Importing a folder of Markdown notes (an Obsidian-style vault) on both backends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memory_substrate import Memory
from memory_substrate.cli.main import main
from memory_substrate.importers.markdown_notes import import_markdown

VAULT = Path(__file__).parent / "fixtures" / "vault"


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "vault"
    shutil.copytree(VAULT, dest)
    return dest


def _facts(memory: Memory, name: str) -> set[tuple[str, str]]:
    items = memory.query("facts", {"subject": name}, {"max_items": 100})["items"]
    return {(f["predicate"], f["object"]["name"]) for f in items if f.get("object")}


def _patches(memory: Memory) -> int:
    with memory.store.read(memory.namespace) as s:
        return len(s.list_patches(limit=100_000))


def test_notes_links_and_tags_become_sources_entities_and_relations(memory: Memory, tmp_path: Path) -> None:
    vault = _copy(tmp_path)
    report = import_markdown(memory, vault)
    assert (
        report["counts"]["notes_new"] == 3
        and report["counts"]["links_found"] == 5
        and report["counts"]["tags_found"] == 5
    )

    falcon = _facts(memory, "Falcon Launch")
    assert falcon == {
        ("links_to", "Payments Gateway v2"),
        ("links_to", "Ledger Service"),
        ("links_to", "Alice Johnson"),
        ("tagged", "#launch"),
        ("tagged", "#planning"),
        ("tagged", "#risk/high"),
    }
    assert _facts(memory, "Ledger Service") == {
        ("links_to", "Payments Gateway v2"),
        ("tagged", "#rust"),
        ("tagged", "#payments-core"),
    }
    # A note and the link that names it are one entity; links and tags inside code are ignored.
    assert ("links_to", "Falcon Launch") in _facts(memory, "Alice Johnson")
    everything = json.dumps(memory.query("entities", {"type": "document"}, {"max_items": 50, "max_facts": 0}))
    assert "Inside Code" not in everything
    tags = memory.query("entities", {"type": "pattern"}, {"max_items": 50, "max_facts": 0})["items"]
    assert {t["name"] for t in tags} == {"#launch", "#planning", "#risk/high", "#rust", "#payments-core"}

    # Each note is a markdown source with document_chunker.v1 segments; the frontmatter is kept.
    note = memory.query("entities", {"name": "Falcon Launch"}, {"max_facts": 0})["items"][0]
    assert "Falcon launch plan" in note["aliases"] and "Falcon plan" in note["aliases"]
    with memory.store.read(memory.namespace) as s:
        sources = s.list_objects(object_types=["source"], limit=10)
        falcon_src = next(o for o in sources if o.title == "Falcon launch plan")
        segs = s.get_segments(falcon_src.id)
    assert falcon_src.kind == "markdown" and len(sources) == 3
    assert segs[0].metadata["chunk_kind"] == "frontmatter" and "aliases: [Falcon plan]" in segs[0].text
    assert all(seg.metadata["chunker"] == "document_chunker.v1" for seg in segs)
    fact = next(
        f
        for f in memory.query("facts", {"subject": "Falcon Launch", "predicate": "links_to"}, {})["items"]
        if f["object"]["name"] == "Alice Johnson"
    )
    cited = fact["evidence_refs"][0]
    assert cited["source_id"] == falcon_src.id and "[[Alice Johnson]]" in next(
        g.text for g in segs if g.id == cited["segment_id"]
    )


def test_reimport_of_an_unchanged_folder_is_a_noop(memory: Memory, tmp_path: Path) -> None:
    vault = _copy(tmp_path)
    import_markdown(memory, vault)
    before = _patches(memory)
    again = import_markdown(memory, vault)
    assert (
        again["status"] == "noop" and again["counts"] == {"notes_unchanged": 3} and _patches(memory) == before
    )

    note = vault / "Alice Johnson.md"
    note.write_text(note.read_text() + "\nNow also on [[Ledger Service]]. #oncall\n")
    third = import_markdown(memory, vault)
    assert third["counts"]["notes_changed"] == 1 and third["counts"]["notes_unchanged"] == 2
    assert {("links_to", "Ledger Service"), ("tagged", "#oncall"), ("links_to", "Falcon Launch")} <= _facts(
        memory, "Alice Johnson"
    )
    assert third["counts"].get("entities_new", 0) == 1  # only #oncall is new; the rest resolved


def test_skips_are_reported(memory: Memory, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Database.md").write_text(
        "A note whose name is a generic concept links [[Kafka Cluster Nine]].\n"
    )
    (vault / "Ops Notes.md").write_text("Links to [[Authentication]] and tags #api.\n")
    (vault / "id_rsa.md").write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    report = import_markdown(memory, vault)
    reasons = {(s["reason"], Path(str(s["path"])).name) for s in report["skipped"]}
    assert ("note_name_too_generic", "Database.md") in reasons
    assert ("link_generic_concept", "Ops Notes.md") in reasons
    assert any(name == "id_rsa.md" for _, name in reasons)
    assert ("tagged", "#api") in _facts(memory, "Ops Notes")


def test_cli_import_markdown(memory: Memory, tmp_path: Path, make_settings: Any) -> None:
    vault = _copy(tmp_path)
    settings = make_settings()
    base = ["--root", str(settings.root), "--namespace", memory.namespace, "--embedder", "none"]
    if settings.database_url:
        base += ["--database-url", settings.database_url]
    res = CliRunner().invoke(main, [*base, "import-from", "markdown", str(vault)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["counts"]["notes_new"] == 3
    res = CliRunner().invoke(main, [*base, "import-from", "markdown", str(vault / "Alice Johnson.md")])
    assert res.exit_code != 0

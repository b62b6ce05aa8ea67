"""The inspector's graph-health page computes the section on its own; it must equal the section
of the full ``memory_maintain`` ``report`` (both backends)."""

from __future__ import annotations

from pathlib import Path

from memory_substrate import Memory
from memory_substrate.importers.mcp_memory import import_mcp_memory
from memory_substrate.inspector.data import HEALTH_ITEMS, health_report
from memory_substrate.maintain.health_section import graph_health_section

FIXTURE = Path(__file__).resolve().parents[1] / "importers" / "fixtures" / "mcp_memory.jsonl"


def test_graph_health_alone_equals_the_reports_section(memory: Memory) -> None:
    import_mcp_memory(memory, FIXTURE)
    memory.ingest(
        "conversation", {"title": "t", "messages": [{"role": "user", "content": "Alice uses Kuzu at Acme."}]}
    )
    report = memory.maintain("report", {}, {"max_items": HEALTH_ITEMS, "detail": "full"})
    alone = graph_health_section(memory.runtime, HEALTH_ITEMS)
    assert alone == report["graph_health"]
    assert alone["counts"]["canonical"]["nodes"] > 10 and alone["counts"]["canonical"]["relations"] > 0
    assert health_report(memory)["graph_health"] == report["graph_health"]
    # A smaller cap lists fewer items, as report's max_items does.
    small = graph_health_section(memory.runtime, 1)
    assert small == memory.maintain("report", {}, {"max_items": 1, "detail": "full"})["graph_health"]

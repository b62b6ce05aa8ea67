"""The README is a user's guide: its two commands, no measurement log (figures live in
docs/benchmarks.md, each with its command and date), and the design pages end without logs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
BENCHMARKS = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")


def test_readme_gives_the_two_commands_and_ci_runs_the_second() -> None:
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/memory-substrate serve" in README
    assert "```bash\n./scripts/test\n```" in README
    assert "./scripts/test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_holds_no_measurement_log() -> None:
    assert not re.search(r"\b[Rr]ounds? \d", README), "round numbers belong in docs/benchmarks.md"
    assert not re.search(r"\b(load|loads) \d", README), "machine load belongs in docs/benchmarks.md"
    assert not re.search(r"--baseline-ref|\b[0-9a-f]{7}\b(?![0-9a-f])", README), (
        "baseline commits belong in docs/benchmarks.md"
    )
    assert not re.search(r"\b\d+(\.\d+)? ms\b", README), "latencies belong in docs/benchmarks.md"
    assert "docs/benchmarks.md" in README


def test_readme_configuration_table_is_one_table() -> None:
    section = README.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    start = section.splitlines().index(rows[0])
    block = section.splitlines()[start : start + len(rows)]
    assert block == rows, "a table row outside the table"
    assert all(r.count("|") == 4 for r in rows), rows


def test_every_summary_figure_has_its_command_and_date() -> None:
    summary = BENCHMARKS.split("## Summary", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in summary.splitlines() if r.startswith("| ") and not r.startswith("| what")]
    assert len(rows) >= 20
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        command, date = cells[-2], cells[-1]
        assert re.fullmatch(r"2026-\d\d-\d\d", date), row
        assert (
            command == "same"
            or command.startswith("`python bench/")
            or command.startswith(("docs/", "notebooks/"))
        ), row


def test_design_pages_end_without_measurement_logs() -> None:
    for page in ("retrieval.md", "multilingual.md", "architecture.md"):
        text = (REPO / "docs" / page).read_text(encoding="utf-8")
        assert "benchmarks.md" in text, page
        assert not re.search(r"^#+ .*([Rr]ound \d|before and after)", text, re.M), page
        last = text.rsplit("\n## ", 1)[1]
        assert "--baseline-ref" not in last and not re.search(r"^### ", last, re.M), (page, last[:200])

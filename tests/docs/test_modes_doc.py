"""docs/modes.md is what scripts/gen_modes_doc.py writes from the models, so it cannot drift."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memory_substrate.modes_reference import collect, render, tool_modes, undescribed

ROOT = Path(__file__).resolve().parents[2]


def test_committed_modes_doc_matches_the_generator() -> None:
    entries = collect()
    assert undescribed(entries) == [], "every mode validates input_data and options with a model"
    committed = (ROOT / "docs" / "modes.md").read_text(encoding="utf-8")
    assert committed == render(entries), "docs/modes.md is stale: run python scripts/gen_modes_doc.py"


def test_every_listed_mode_is_documented_with_its_fields() -> None:
    text = (ROOT / "docs" / "modes.md").read_text(encoding="utf-8")
    for tool, (_, modes) in tool_modes().items():
        section = text.split(f"## {tool}\n", 1)[1].split("\n## ", 1)[0]
        for mode in modes:
            assert f"### `{mode}`" in section, (tool, mode)
    # The modes the issue named, with fields a user needs.
    for fragment in (
        "`old_knowledge_id`",
        "`entries`",
        "`outcome`",
        "`canonical_knowledge_id`",
        "`source_id`",
    ):
        assert fragment in text


def test_check_mode_of_the_script_passes() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_modes_doc.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr

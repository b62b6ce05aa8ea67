"""memory_maintain through the MCP tool surface, in process."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import tool_error
from tests.maintain.conftest import soft_pair


async def _call(client: Client, args: dict[str, Any]) -> Any:
    return await client.call_tool("memory_maintain", {"args": args})


@pytest.mark.anyio
async def test_report_dry_run_resolve_and_errors_over_mcp(memory: Memory) -> None:
    a, b = soft_pair(memory)
    async with Client(build_server(memory)) as client:
        report = await _call(
            client,
            {
                "mode": "report",
                "input_data": {"min_confidence": 0.75, "min_evidence": 1, "stale_after_days": 30},
            },
        )
        assert not report.is_error
        entry = report.structured_content["soft_duplicate_candidates"][0]
        assert entry["object_ids"] == [a, b]

        suggestion = entry["suggested_resolution"]
        dry = await _call(client, {"mode": suggestion["mode"], "input_data": suggestion["input_data"]})
        assert dry.structured_content["dry_run"] is True and dry.structured_content["applied"] is False
        done = await _call(
            client,
            {
                "mode": suggestion["mode"],
                "input_data": suggestion["input_data"],
                "options": suggestion["options"],
            },
        )
        assert done.structured_content["status"] == "applied"

        bad = await _call(
            client, {"mode": "cycle", "input_data": {"unexpected": 1}, "options": {"apply": True}}
        )
        assert bad.is_error
        bad_error = tool_error(bad.content[0].text)
        assert bad_error["code"] == "memory_validation_error"
        assert "input_data.unexpected: Extra inputs are not permitted" in bad_error["message"]

        refused = await _call(
            client,
            {"mode": "configure", "input_data": {"graph_backend": "falkordb"}, "options": {"apply": True}},
        )
        assert refused.is_error
        error = tool_error(refused.content[0].text)
        assert error["code"] == "memory_not_available" and "MEMORY_SUBSTRATE_FALKORDB_URL" in error["message"]

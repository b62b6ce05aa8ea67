"""Every file-like ingest mode end to end through the service and MCP (adapters are unit-tested
in tests/ingest_adapters)."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.mcp.server import build_server
from tests.helpers import ToolFailed, call, knowledge
from tests.ingest_adapters.conftest import make_pdf

REPO_ROOT = Path(__file__).resolve().parents[2]


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / ".codex").mkdir()
    (root / ".codex" / "state.json").write_text('{"session": 1}')
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / "node_modules" / "x" / "index.js").write_text("function hidden() {}\n")
    (root / ".gitignore").write_text("ignored.py\n")
    (root / "ignored.py").write_text("def nope():\n    pass\n")
    (root / "pkg" / "core.py").write_text(
        '"""Core."""\n\nimport os\n\n\nclass Engine:\n    def start(self):\n        return 1\n\n\ndef compile_context(task):\n    """Build a context."""\n    return task\n'
    )
    (root / "README.md").write_text("# Demo\n\nIntro text.\n\n## Usage\n\nRun it.\n")
    return root


@pytest.mark.anyio
async def test_repo_preflight_noop_force_and_page_unavailable(memory: Memory, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    async with Client(build_server(memory)) as c:
        out = await call(c, "memory_ingest", "repo", {"path": str(root)})
        assert out["result_type"] == "repo_ingest_result"
        assert out["status"] == "completed_with_pending_decisions" and out["requires_decision"] is True
        assert out["excluded_by_preflight"] == [".codex"]
        assert out["pending_decisions"][0] == {
            "path": ".codex",
            "kind": "local_agent_state",
            "reason": out["pending_decisions"][0]["reason"],
            "suggested_action": "exclude",
        }
        assert out["suggested_exclude_patterns"] == [".codex"]
        assert any(".codex" in w for w in out["warnings"])
        page = await call(c, "memory_query", "page", {"id": out["source_id"]}, {"max_items": 50})
        paths = [e["path"] for e in page["object"]["payload"]["code_index"]["items"]]
        assert "pkg/core.py" in paths and "ignored.py" not in paths
        assert not any(p.startswith(("node_modules", ".codex")) for p in paths)
        full = await call(c, "memory_query", "page", {"id": out["source_id"]}, {"detail": "full"})
        assert full["result_type"] == "page_unavailable" and full["status"] == "unsupported"
        found = await call(
            c,
            "memory_query",
            "search",
            {"query": "compile_context"},
            {"result_unit": "segment", "detail": "full"},
        )
        loc = found["items"][0]["locator"]
        assert loc["path"] == "pkg/core.py" and loc["line_start"] == 11 and loc["line_end"] == 13
        # Unchanged, but the preflight still has not passed: nothing is written, the decision stays open.
        again = await call(c, "memory_ingest", "repo", {"path": str(root)})
        assert again["status"] == "completed_with_pending_decisions" and again["requires_decision"] is True
        assert again["applied_operations"] == 0 and again["patch_id"] is None
        assert again["pending_decisions"][0]["path"] == ".codex"
        # Excluding the agent state explicitly captures the same files: the decision is settled
        # and nothing changed, so it is the spec's noop, answering with the first capture...
        clean = await call(c, "memory_ingest", "repo", {"path": str(root), "exclude_patterns": [".codex"]})
        assert clean["status"] == "noop" and clean["requires_decision"] is False
        assert clean["source_id"] == out["source_id"]
        # ...and so is every unchanged capture after it.
        noop = await call(c, "memory_ingest", "repo", {"path": str(root), "exclude_patterns": [".codex"]})
        assert noop == {
            "result_type": "repo_ingest_result",
            "status": "noop",
            "requires_decision": False,
            "patch_id": None,
            "source_id": clean["source_id"],
            "applied_operations": 0,
            "audit_event_ids": [],
            "projection_count": 0,
            "reason": "repo_fingerprint_unchanged",
        }
        forced = await call(
            c, "memory_ingest", "repo", {"path": str(root)}, {"force": True, "detail": "full"}
        )
        assert forced["status"] == "completed" and forced["superseded_source_id"] == clean["source_id"]
        suggestions = forced["memory_suggestions"]
        assert suggestions["agent_extraction"]["protocol"] == "agent_extraction.v1"
        assert set(suggestions["candidate_diagnostics"]["counts"]) == {"skipped", "eligible", "returned"}


def test_markdown_reingest_keeps_old_capture_addressable(memory: Memory, tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(
        "---\ntitle: Guide\n---\n# Setup\n\nInstall it.\n\n```bash\n# not a heading\nmake\n```\n\n## Context Pack\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    first = memory.ingest("markdown", {"path": str(doc)})
    page = memory.query("page", {"id": first["source_id"]}, {"detail": "full"})
    kinds = [s["locator"].get("heading_path") for s in page["segments"]]
    assert ["Setup"] in kinds and ["Setup", "Context Pack"] in kinds
    assert page["object"]["metadata"]["adapter"]["mode"] == "markdown"
    seg = page["segments"][1]
    cite = memory.remember(
        "knowledge",
        knowledge(
            evidence_refs=[
                {"source_id": first["source_id"], "segment_id": seg["segment_id"], "hash": seg["hash"]}
            ]
        ),
    )
    assert memory.ingest("markdown", {"path": str(doc)})["status"] == "noop"
    doc.write_text(doc.read_text() + "\n## Later\n\nNew section.\n")
    second = memory.ingest("markdown", {"path": str(doc)})
    assert second["status"] == "completed" and second["superseded_source_id"] == first["source_id"]
    old = memory.query("page", {"id": first["source_id"]})["object"]
    assert old["status"] == "superseded" and old["metadata"]["freshness"]["is_current"] is False
    new = memory.query("page", {"id": second["source_id"]})["object"]
    assert new["metadata"]["freshness"]["is_current"] is True
    # The old evidence still resolves.
    assert (
        memory.query("expand", {"id": cite["object_id"]}, {"detail": "full"})["evidence"][0]["hash"]
        == seg["hash"]
    )


def test_file_mode_secret_and_size_rules(make_settings: Any, namespace: str, tmp_path: Path) -> None:
    mem = Memory(make_settings(max_file_bytes=200), namespace=namespace)
    try:
        big = tmp_path / "big.txt"
        big.write_text("x" * 500)
        with pytest.raises(MemorySubstrateError) as exc:
            mem.ingest("file", {"path": str(big)})
        assert exc.value.code == "memory_capture_file_too_large"
        token = tmp_path / "notes.txt"
        token.write_text("deploy key ghp_" + "a" * 36 + "\n")
        out = mem.ingest("file", {"path": str(token)})
        assert out["withheld"][0]["reason"] == "secret_redacted"
        text = mem.query("page", {"id": out["source_id"]}, {"detail": "full"})["segments"][0]["text"]
        assert "ghp_" not in text
        assert mem.status()["counts"]["by_object_type"] == {"source": 1}
    finally:
        mem.close()


def test_pdf_pages_and_errors(memory: Memory, tmp_path: Path) -> None:
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(make_pdf(["Alpha page about graphs", "Beta page about vectors"]))
    out = memory.ingest("pdf", {"path": str(pdf)})
    hits = memory.query("search", {"query": "vectors"}, {"result_unit": "segment", "detail": "full"})
    assert hits["items"][0]["locator"] == {"kind": "page", "page": 2}
    assert out["segment_count"] == 2
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 nonsense")
    with pytest.raises(MemorySubstrateError):
        memory.ingest("pdf", {"path": str(broken)})


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><head><title>Loopback Doc</title></head><body><article><h1>Retrieval</h1><p>Reciprocal rank fusion merges ranked lists from several retrievers into one list.</p></article></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_web_on_loopback_needs_permission(make_settings: Any, namespace: str) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/doc"
    try:
        strict = Memory(make_settings(), namespace=namespace)
        with pytest.raises(MemorySubstrateError) as exc:
            strict.ingest("web", {"url": url})
        assert exc.value.code == "memory_capture_web_blocked_address"
        strict.close()
        mem = Memory(make_settings(web_allow_private=True), namespace=namespace)
        out = mem.ingest("web", {"url": url})
        src = mem.query("page", {"id": out["source_id"]}, {"detail": "full"})
        payload = src["object"]["payload"]
        # trafilatura may prefer the article heading over <title>; either comes from the page.
        assert payload["final_url"] == url and payload["title"] in ("Loopback Doc", "Retrieval")
        assert payload["fetched_at"] and len(payload["content_hash"]) == 64
        assert mem.query("search", {"query": "reciprocal rank fusion"})["items"][0]["id"] == out["source_id"]
        mem.close()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.anyio
async def test_mcp_errors_for_capture_failures(memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(memory)) as c:
        with pytest.raises(ToolFailed) as exc:
            await call(c, "memory_ingest", "file", {"path": str(tmp_path / "missing.txt")})
        assert exc.value.code == "memory_capture_not_found"


def test_ingest_this_repository_and_find_a_function(memory: Memory) -> None:
    out = memory.ingest("repo", {"path": str(REPO_ROOT), "exclude_patterns": [".venv", "bench/results"]})
    assert out["status"] in ("completed", "completed_with_pending_decisions")
    hits = memory.query("search", {"query": "sanitize_query"}, {"result_unit": "segment", "detail": "full"})
    top = hits["items"][0]["locator"]
    assert top["path"] == "src/memory_substrate/search/sanitize.py"
    source_lines = (REPO_ROOT / top["path"]).read_text().splitlines()
    assert source_lines[top["line_start"] - 1].startswith("def sanitize_query")

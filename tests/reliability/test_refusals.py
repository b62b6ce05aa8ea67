"""Hostile paths and URLs through the MCP surface: nothing outside a repo, no private address.

A repository capture must not follow a symlink (file or directory) out of the repository, nor
let an include pattern climb out of it; web capture must refuse every non-public address in every
notation before connecting (the tests run offline: no URL here names a host that needs DNS).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate.mcp.server import build_server
from tests.helpers import ToolFailed, call
from tests.reliability.common import report

pytestmark = pytest.mark.anyio

SECRET = "outsidesecretzq"

BLOCKED_URLS = [
    "http://127.0.0.1/",
    "http://localhost/",
    "http://localhost.:8080/x",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fc00::1]/",
    "http://224.0.0.1/",
    "http://[::]/",
    "http://user:pass@127.0.0.1:8080/",
    "https://127.0.0.1:443/",
    "http://[::ffff:10.0.0.1]/",
    "http://3232235777/",
    "http://0xa9fea9fe/",
]
INVALID_URLS = [
    "file:///etc/passwd",
    "ftp://127.0.0.1/",
    "gopher://127.0.0.1:25/",
    "javascript:alert(1)",
    "http://",
    "//127.0.0.1/",
    "data:text/html,hi",
]


def _repo(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{SECRET} file outside the repository\n")
    (outside / "sub" / "deep.md").write_text(f"# {SECRET}\n")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "main.py").write_text("def main():\n    return 'inside'\n")
    (repo / "README.md").write_text("# Repo\n\nInside text.\n")
    (repo / "link_to_secret.txt").symlink_to(outside / "secret.txt")
    (repo / "link_to_dir").symlink_to(outside, target_is_directory=True)
    (repo / "src" / "abs_link.md").symlink_to("/etc/hostname")
    (repo / "src" / "loop").symlink_to(repo, target_is_directory=True)
    return repo


async def test_repo_capture_stays_inside_the_repository(memory: Any, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    tried = 0
    async with Client(build_server(memory)) as c:
        for patterns in ([], ["../*"], ["../outside/*", "**/*"], ["/etc/*", "*"], ["link_to_dir/*"]):
            tried += 1
            out = await call(
                c, "memory_ingest", "repo", {"path": str(repo), "include_patterns": patterns}, {"force": True}
            )
            if out.get("source_id") is None:
                continue
            page = await call(c, "memory_query", "page", {"id": out["source_id"]}, {"max_items": 500})
            text = json.dumps(page)
            assert SECRET not in text and str(tmp_path / "outside") not in text
        found = await call(c, "memory_query", "search", {"query": SECRET}, {"result_unit": "segment"})
        assert found["count"] == 0 and found["sources"] == [], found["sources"]
    report(f"repo_escape[{memory.store.backend}]", tried=tried, refused_or_contained=tried, leaked=0)


async def test_web_capture_refuses_every_non_public_address(memory: Any) -> None:
    refused: dict[str, str] = {}
    async with Client(build_server(memory)) as c:
        for url in BLOCKED_URLS + INVALID_URLS:
            with pytest.raises(ToolFailed) as exc:
                await call(c, "memory_ingest", "web", {"url": url})
            refused[url] = str(exc.value.code)
    wrong = {
        u: code
        for u, code in refused.items()
        if code not in ("memory_capture_web_blocked_address", "memory_capture_web_invalid_url")
    }
    assert wrong == {}, wrong
    # httpx itself rejects the octal form as a URL; refused either way, and never fetched.
    not_blocked = {
        u: c for u, c in refused.items() if u in BLOCKED_URLS and c != "memory_capture_web_blocked_address"
    }
    assert set(not_blocked) <= {"http://0177.0.0.1/"}, not_blocked
    report(f"web_ssrf[{memory.store.backend}]", tried=len(refused), refused=len(refused), fetched=0)

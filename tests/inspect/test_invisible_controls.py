"""The inspector shows stored bidi controls and zero-width characters as ``[U+202E]`` on every
page and in the graph's labels, on both backends; what is stored stays as sent."""

from __future__ import annotations

from starlette.testclient import TestClient

from memory_substrate import Memory
from memory_substrate.inspector import build_inspector

LOCAL = "http://127.0.0.1"
HIDDEN = "\u202e\u200b"
SCOPE = ["scope:project"]


def test_every_page_shows_invisible_controls_instead_of_passing_them(memory: Memory) -> None:
    ep = memory.ingest(
        "conversation",
        {
            "title": f"deploy{HIDDEN} log",
            "messages": [
                {
                    "role": "user",
                    "name": f"da{HIDDEN}na",
                    "content": f"The gateway{HIDDEN} uses Vault for keys.",
                }
            ],
        },
    )["source_id"]
    memory.remember(
        "extraction",
        {
            "episode_id": ep,
            "reason": "notes",
            "memory_source": "user_declared",
            "scope_refs": SCOPE,
            "entities": [
                {"name": f"Gate{HIDDEN}way", "type": "service"},
                {"name": "Vault", "type": "technology"},
            ],
            "facts": [
                {
                    "subject": f"Gate{HIDDEN}way",
                    "predicate": "uses",
                    "object": "Vault",
                    "segment_ids": ["seg-1"],
                }
            ],
        },
    )
    entity = memory.query("entities", {"name": "Vault"}, {"max_facts": 0})["items"][0]["id"]
    fact = memory.query("facts", {"subject": f"Gate{HIDDEN}way"})["items"][0]["id"]
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    ns = memory.namespace
    pages = [
        f"/ns/{ns}/sources",
        f"/ns/{ns}/source/{ep}",
        f"/ns/{ns}/object/{fact}",
        f"/ns/{ns}/entities",
        f"/ns/{ns}/entity/{entity}",
        f"/ns/{ns}/search?q=gateway+Vault&unit=segment",
        f"/ns/{ns}/api/graph?id={entity}",
    ]
    for page in pages:
        resp = client.get(page)
        assert resp.status_code == 200, page
        text = resp.text if "/api/" not in page else str(resp.json())
        assert "\u202e" not in text and "\u200b" not in text, page
        assert "[U+202E][U+200B]" in text, page
    assert memory.query("page", {"id": ep})["object"]["title"] == f"deploy{HIDDEN} log"  # stored as sent

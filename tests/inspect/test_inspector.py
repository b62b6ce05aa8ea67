"""The inspector over HTTP (Starlette's test client), on both backends: pages, escaping,
read-only behaviour, and token access (standalone and beside the HTTP transport)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from memory_substrate import Memory
from memory_substrate.inspector import build_inspector
from memory_substrate.inspector.data import compile_candidates
from memory_substrate.mcp.http import build_app, create_token
from tests.inspect.seed import XSS, seed

LOCAL = "http://127.0.0.1"  # the bound address: the inspector answers no other Host (hosts.py)


@pytest.fixture
def seeded(memory: Memory) -> dict[str, Any]:
    return seed(memory)


def _entity(memory: Memory, name: str) -> str:
    return str(memory.query("entities", {"name": name}, {"max_facts": 0})["items"][0]["id"])


def _patch_count(memory: Memory) -> int:
    with memory.store.read(memory.namespace) as s:
        return len(s.list_patches(limit=10_000))


def test_every_page_renders_and_writes_nothing(memory: Memory, seeded: dict[str, Any]) -> None:
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    ns = memory.namespace
    gateway = _entity(memory, "Payments Gateway")
    before = _patch_count(memory)
    pages = [
        "/ns/{ns}/",
        "/ns/{ns}/health",
        "/ns/{ns}/search?q=CockroachDB",
        "/ns/{ns}/search?q=CockroachDB&unit=segment",
        "/ns/{ns}/entities",
        "/ns/{ns}/entities?type=technology",
        "/ns/{ns}/entities?name=Argo%20CD",
        f"/ns/{{ns}}/entity/{gateway}",
        f"/ns/{{ns}}/graph?id={gateway}",
        "/ns/{ns}/graph",
        "/ns/{ns}/sources",
        f"/ns/{{ns}}/source/{seeded['episodes'][0]}",
        f"/ns/{{ns}}/object/{seeded['decision']}",
        "/ns/{ns}/log",
        "/ns/{ns}/traces",
        "/ns/{ns}/traces?kind=extraction",
        f"/ns/{{ns}}/trace/{seeded['trace']}",
        "/ns/{ns}/procedures",
    ]
    for page in pages:
        resp = client.get(page.format(ns=ns))
        assert resp.status_code == 200, page
        assert resp.headers["content-security-policy"].startswith("default-src 'self'")
        assert "<script>window.__pwned" not in resp.text, page
    assert client.post(f"/ns/{ns}/search", data={"q": "x"}).status_code == 405
    assert _patch_count(memory) == before


def test_stored_html_is_escaped(memory: Memory, seeded: dict[str, Any]) -> None:
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    for page in (
        "/ns/{ns}/sources",
        f"/ns/{{ns}}/source/{seeded['episodes'][2]}",
        "/ns/{ns}/search?q=Untrusted",
        "/ns/{ns}/",
    ):
        text = client.get(page.format(ns=memory.namespace)).text
        assert "&lt;script&gt;window.__pwned" in text, page
        assert XSS not in text


def test_overview_counts_and_extraction_queue(memory: Memory, seeded: dict[str, Any]) -> None:
    text = TestClient(build_inspector(memory), base_url=LOCAL).get(f"/ns/{memory.namespace}/").text
    assert re.search(r"<b>5</b><span>entities</span>", text)
    assert "pending 1" in text and "done 2" in text  # the third episode still waits for extraction
    assert seeded["episodes"][2] in text


def test_entity_page_lays_facts_on_a_timeline_with_supersession(
    memory: Memory, seeded: dict[str, Any]
) -> None:
    text = (
        TestClient(build_inspector(memory), base_url=LOCAL)
        .get(f"/ns/{memory.namespace}/entity/{_entity(memory, 'Payments Gateway')}")
        .text
    )
    rows = re.findall(r'<div class="trow( superseded)?">(.*?)</svg>', text, re.S)
    labels = {("old" if sup else "live"): body for sup, body in rows}
    assert len(rows) == 4
    assert "uses PostgreSQL" in labels["old"]
    assert "superseded by" in text and "2026-03-02" in text
    assert 'class="bar bar-old"' in text and 'class="bar bar-open"' in text


def test_graph_of_an_unknown_id_is_404(memory: Memory, seeded: dict[str, Any]) -> None:
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    page = client.get(f"/ns/{memory.namespace}/graph?id=ent:nope")
    assert page.status_code == 404 and "ent:nope" in page.text and 'id="graph"' not in page.text
    data = client.get(f"/ns/{memory.namespace}/api/graph?id=ent:nope")
    assert data.status_code == 404 and data.json()["error"]["code"] == "memory_not_found"


def test_graph_json_is_the_neighbourhood(memory: Memory, seeded: dict[str, Any]) -> None:
    gateway = _entity(memory, "Payments Gateway")
    data = (
        TestClient(build_inspector(memory), base_url=LOCAL)
        .get(f"/ns/{memory.namespace}/api/graph?id={gateway}")
        .json()
    )
    labels = {n["data"]["label"] for n in data["nodes"]}
    assert {"Payments Gateway", "PostgreSQL", "CockroachDB", "Argo CD", "Alice Johnson"} <= labels
    edge_types = {e["data"]["label"] for e in data["edges"]}
    assert {"uses", "owns", "depends_on"} <= edge_types
    ids = {n["data"]["id"] for n in data["nodes"]}
    assert all(e["data"]["source"] in ids and e["data"]["target"] in ids for e in data["edges"])


def test_compile_trace_bars_read_the_trace_generically(memory: Memory, seeded: dict[str, Any]) -> None:
    text = (
        TestClient(build_inspector(memory), base_url=LOCAL)
        .get(f"/ns/{memory.namespace}/trace/{seeded['trace']}")
        .text
    )
    rows = len(re.findall(r'<tr class="cand', text))
    assert rows >= 3  # the stored shape {found, selected, rejected, ...} of a real compile
    for dim in ("relevance", "recency", "stability", "provenance"):
        assert len(re.findall(rf'class="dbar dim-{dim}"', text)) == rows
    listing = TestClient(build_inspector(memory), base_url=LOCAL).get(f"/ns/{memory.namespace}/traces").text
    assert f'<td class="num">{rows}</td>' in listing
    # Other plausible shapes of a compile trace: scores at the top level, selected/dropped lists.
    flat = compile_candidates(
        {
            "selected": [{"id": "know:a", "relevance": 0.5, "recency": 0.2}],
            "dropped": [{"object_id": "know:b", "scores": {"stability": 0.9}}],
        }
    )
    assert flat[0]["dims"] == {"relevance": 0.5, "recency": 0.2} and flat[0]["selected"] is True
    assert (
        flat[1]["id"] == "know:b" and flat[1]["dims"] == {"stability": 0.9} and flat[1]["selected"] is False
    )


def test_procedures_show_confidence_and_observations(memory: Memory, seeded: dict[str, Any]) -> None:
    text = TestClient(build_inspector(memory), base_url=LOCAL).get(f"/ns/{memory.namespace}/procedures").text
    assert "Roll back a Payments Gateway deploy" in text
    row = text[text.index("Roll back a Payments") :]
    assert re.search(r'<td class="num">2</td><td class="num">2</td>', row)  # two observations, two episodes


def test_unknown_things_are_404(memory: Memory, seeded: dict[str, Any]) -> None:
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    for page in (
        "/ns/nope/",
        "/ns/{ns}/entity/ent:missing",
        "/ns/{ns}/source/src:missing",
        "/ns/{ns}/trace/trace:x",
        "/ns/{ns}/object/know:missing",
    ):
        assert client.get(page.format(ns=memory.namespace)).status_code == 404


# --- tokens -------------------------------------------------------------------------------------
def test_token_access_shows_only_the_tokens_namespace(memory: Memory, seeded: dict[str, Any]) -> None:
    other = memory.for_namespace(memory.namespace + "-other")
    other.ingest(
        "conversation",
        {"title": "secret plans of the other team", "messages": [{"role": "user", "content": "x"}]},
    )
    token = create_token(memory.store, memory.namespace, "inspector test")
    client = TestClient(build_inspector(memory, require_token=True), base_url=LOCAL)
    ns = memory.namespace

    refused = client.get(f"/ns/{ns}/")
    assert (
        refused.status_code == 401
        and 'name="token"' in refused.text
        and seeded["episodes"][0] not in refused.text
    )
    assert client.get(f"/ns/{ns}/api/graph").status_code == 401
    assert client.get(f"/ns/{ns}/", headers={"Authorization": "Bearer mst_wrong"}).status_code == 401

    auth = {"Authorization": f"Bearer {token}"}
    ok = client.get(f"/ns/{ns}/", headers=auth)
    assert (
        ok.status_code == 200 and other.namespace not in ok.text
    )  # the picker lists only the token's namespace
    hidden = client.get(f"/ns/{other.namespace}/sources", headers=auth)
    assert hidden.status_code == 404 and "secret plans" not in hidden.text
    assert client.get("/", headers=auth, follow_redirects=False).headers["location"] == f"/ns/{ns}/"


def test_sign_in_form_sets_an_httponly_cookie(memory: Memory, seeded: dict[str, Any]) -> None:
    token = create_token(memory.store, memory.namespace)
    client = TestClient(build_inspector(memory, require_token=True), base_url=LOCAL)
    foreign = client.post(
        "/login", data={"token": token}, headers={"Origin": "https://evil.example"}, follow_redirects=False
    )
    assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
    bad = client.post("/login", data={"token": "mst_nope"}, follow_redirects=False)
    assert bad.status_code == 401 and "not valid" in bad.text and "set-cookie" not in bad.headers
    good = client.post("/login", data={"token": token}, follow_redirects=False)
    assert good.status_code == 303 and good.headers["location"] == f"/ns/{memory.namespace}/"
    cookie = good.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get(f"/ns/{memory.namespace}/sources").status_code == 200  # the cookie now signs requests
    client.get("/logout")
    assert client.get(f"/ns/{memory.namespace}/sources").status_code == 401


def test_inspector_beside_the_http_transport_takes_its_tokens(memory: Memory, seeded: dict[str, Any]) -> None:
    token = create_token(memory.store, memory.namespace)
    with TestClient(build_app(memory, inspector=True), base_url=LOCAL) as client:
        assert client.get(f"/inspect/ns/{memory.namespace}/").status_code == 401
        page = client.get(f"/inspect/ns/{memory.namespace}/", headers={"Authorization": f"Bearer {token}"})
        assert page.status_code == 200 and 'href="/inspect/static/app.css"' in page.text
        assert client.get("/inspect/static/vendor/cytoscape-3.34.4.min.js").status_code == 200
        assert client.get("/healthz").status_code == 200


def test_inspect_command_serves_on_loopback(tmp_path: Any, backend: str) -> None:
    """The real entry point: ``memory-substrate inspect`` starts, answers, and stops on SIGTERM."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    if backend != "sqlite":
        pytest.skip("the command's wiring does not depend on the backend")
    from tests.inspect.browser import free_port

    mem = Memory.open(root=tmp_path, namespace="cli", embedder="none")
    mem.ingest("conversation", {"title": "hello", "messages": [{"role": "user", "content": "hi"}]})
    mem.close()
    port = free_port()
    exe = os.path.join(os.path.dirname(sys.executable), "memory-substrate")
    proc = subprocess.Popen(
        [exe, "--root", str(tmp_path), "--embedder", "none", "inspect", "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ns/cli/sources", timeout=2) as resp:
                    body = resp.read().decode()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        assert "hello" in body
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
        assert proc.stderr is not None
        proc.stderr.close()

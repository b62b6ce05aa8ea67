"""The outbox keeps derived backends recoverable: a process killed between commit and mirror
loses nothing, and ``repair`` measures drift (counts, checksums) and brings a backend back in
line; ``reindex`` rebuilds one from scratch. Real processes, real servers, both stores.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.derived.access import graph_reader, mirror_of
from memory_substrate.derived.falkordb_graph import PREFIX
from memory_substrate.errors import BackendError
from memory_substrate.storage.factory import open_store
from tests.derived.conftest import configure
from tests.maintain.conftest import claim, know

CLI = str(Path(sys.executable).with_name("memory-substrate"))


def _blackhole() -> socket.socket:
    """A loopback listener that never answers: a FalkorDB that hangs, so the child blocks in its mirror."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


def _cli_env(settings: Any, falkordb_url: str) -> dict[str, str]:
    env = {
        **os.environ,
        "MEMORY_SUBSTRATE_ROOT": str(settings.root),
        "MEMORY_SUBSTRATE_EMBEDDER": "none",
        "MEMORY_SUBSTRATE_FALKORDB_URL": falkordb_url,
    }
    if settings.database_url:
        env["MEMORY_SUBSTRATE_DATABASE_URL"] = settings.database_url
    return env


def test_sigkill_between_commit_and_mirror_then_repair_restores_the_backend(
    open_memory: Any, settings_for: Any, falkordb_url: str
) -> None:
    mem: Memory = open_memory("falkordb")
    know(mem, "A uses B", subject_refs=["node:a"], payload=claim("node:a", "uses", "node:b"))
    configure(mem, "falkordb")
    settings = settings_for("falkordb")
    hang = _blackhole()
    data = {
        "kind": "fact",
        "title": "B depends on C",
        "summary": "s",
        "reason": "r",
        "memory_source": "user_declared",
        "scope_refs": ["scope:p"],
        "subject_refs": ["node:b"],
        "payload": claim("node:b", "depends_on", "node:c"),
    }
    child = subprocess.Popen(
        [CLI, "--namespace", mem.namespace, "remember", "knowledge", json.dumps(data)],
        env=_cli_env(settings, f"redis://127.0.0.1:{hang.getsockname()[1]}"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    canonical = open_store(settings)  # the store itself: opening it replays nothing
    try:
        deadline = time.monotonic() + 60
        pending = 0
        while time.monotonic() < deadline and child.poll() is None:
            with canonical.read(mem.namespace) as session:
                pending = session.outbox_count()
            if pending:
                break
            time.sleep(0.05)
        assert pending, (
            f"the child never committed (exit {child.poll()}): {repr(child.stderr.read()) if child.stderr else ''}"
        )
        time.sleep(0.2)
        assert child.poll() is None  # committed, now stuck mirroring into the hung server
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        hang.close()
        with canonical.read(mem.namespace) as session:
            assert session.outbox_count() == pending  # nothing lost: the rows committed with the write
            written = [
                o for o in session.list_objects(object_types=["knowledge"]) if o.title == "B depends on C"
            ]
            assert written and not mirror_of(mem.runtime).check(session, mem.namespace)["falkordb"]["in_line"]  # type: ignore[union-attr]
    finally:
        if child.poll() is None:
            child.kill()
        canonical.close()

    # The next process replays the outbox (at start, or in repair); repair confirms the backend is in line.
    result = subprocess.run(
        [CLI, "--namespace", mem.namespace, "maintain", "repair", "{}", "--options", '{"apply": true}'],
        env=_cli_env(settings, falkordb_url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["derived_indexes"]["derived_backends"]
    assert report["backends"]["falkordb"]["built"] is True
    after = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]
    assert after["outbox_pending"] == 0 and after["backends"]["falkordb"]["in_line"] is True
    with mem.store.read(mem.namespace) as session:
        reader = graph_reader(mem.runtime, session)
        assert reader.name == "falkordb"
        assert [p.node_ids for p in reader.paths("node:a", "node:c")] == [["node:a", "node:b", "node:c"]]


@pytest.mark.parametrize("graph", ["falkordb", "kuzu"])
def test_repair_reports_drift_by_counts_and_checksums_and_fixes_it(open_memory: Any, graph: str) -> None:
    mem: Memory = open_memory(graph)
    configure(mem, graph)
    k1 = know(mem, "A uses B", subject_refs=["node:a"], payload=claim("node:a", "uses", "node:b"))
    know(mem, "B depends on C", subject_refs=["node:b"], payload=claim("node:b", "depends_on", "node:c"))
    clean = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]["backends"][graph]
    assert clean["in_line"] is True
    # Damage the mirror behind the store's back: lose a node's state and an edge.
    backend: Any = mirror_of(mem.runtime).indexes.backend(graph)  # type: ignore[union-attr]
    if graph == "falkordb":
        g = backend._client().select_graph(PREFIX + mem.namespace)
        g.query("MATCH (n:Obj {id: $id}) SET n.status = 'archived'", {"id": k1})
        g.query("MATCH ()-[r:REL {rel_type: 'depends_on'}]->() DELETE r")
    else:
        from memory_substrate.derived.kuzu_graph import _tables

        node, rel, _ = _tables(mem.namespace)
        backend._run(f"MATCH (n:{node}) WHERE n.id = $id SET n.status = 'archived'", {"id": k1})
        backend._run(f"MATCH ()-[r:{rel}]->() WHERE r.rel_type = 'depends_on' DELETE r")

    dry = mem.maintain("repair", {})
    drift = dry["derived_indexes"]["derived_backends"]["backends"][graph]
    assert drift["in_line"] is False and dry["status"] == "dry_run"
    objects, relations = drift["families"]["objects"], drift["families"]["relations"]
    assert objects["changed"] == 1 and objects["sample"]["changed"] == [k1]
    assert objects["canonical"]["checksum"] != objects["backend"]["checksum"]
    assert relations["missing"] == 1 and relations["backend"]["count"] == relations["canonical"]["count"] - 1

    health = mem.maintain("report", {})["graph_health"]["derived_backend"]
    assert health["backend"] == graph and health["in_line"] is False
    assert health["counts"]["relations"]["backend"] == health["counts"]["relations"]["canonical"] - 1

    fixed = mem.maintain("repair", {}, {"apply": True})
    assert fixed["status"] == "applied" and fixed["derived_backends_repaired"]["remirrored"][graph][
        "ids"
    ] == {"objects": 1, "relations": 1}
    after = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]["backends"][graph]
    assert after["in_line"] is True
    assert after["families"]["relations"]["backend"] == after["families"]["relations"]["canonical"]


@pytest.mark.parametrize(("graph", "semantic"), [("falkordb", "builtin"), ("kuzu", "lancedb")])
def test_reindex_rebuilds_backends_from_scratch(open_memory: Any, graph: str, semantic: str) -> None:
    mem: Memory = open_memory(graph, semantic, embedder="static")
    configure(mem, graph, semantic)
    for i in range(5):
        know(
            mem,
            f"Service {i} calls service {i + 1}",
            subject_refs=[f"node:s{i}"],
            payload=claim(f"node:s{i}", "calls", f"node:s{i + 1}"),
        )
    for name in (graph, semantic):
        if name != "builtin":
            mirror_of(mem.runtime).indexes.backend(name).drop(mem.namespace)  # type: ignore[union-attr]
    plan = mem.maintain("reindex", {})
    assert plan["derived_backends"]["planned"] == [n for n in (graph, semantic) if n != "builtin"]
    done = mem.maintain("reindex", {}, {"apply": True})
    assert done["status"] == "applied" and set(done["derived_backends"]["rebuilt"]) == set(
        plan["derived_backends"]["planned"]
    )
    assert done["derived_backends"]["rebuilt"][graph]["relations"] == 10
    state = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]
    assert all(b["in_line"] and b["built"] for b in state["backends"].values()), state
    with mem.store.read(mem.namespace) as session:
        assert (
            len(graph_reader(mem.runtime, session).paths("node:s0", "node:s5", max_depth=5)[0].node_ids) == 6
        )


def test_a_backend_that_is_down_never_fails_a_write(open_memory: Any, falkordb_url: str) -> None:
    mem: Memory = open_memory("falkordb")
    configure(mem, "falkordb")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    down = open_memory("falkordb", falkordb_url=f"redis://127.0.0.1:{port}")
    k = know(down, "Written while FalkorDB is down", subject_refs=["node:x"])
    assert down.query("page", {"id": k})["object"]["title"] == "Written while FalkorDB is down"
    state = down.maintain("repair", {})["derived_indexes"]["derived_backends"]
    assert state["outbox_pending"] >= 1 and "FalkorDB" in state["last_sync_error"]
    assert state["error"]["code"] == "memory_backend_error"
    health = down.maintain("structure", {})["derived_backends"]
    assert health["falkordb"]["reachable"] is False and health["outbox_pending"] >= 1
    with mem.store.read(mem.namespace) as session:
        assert mirror_of(mem.runtime).health(session, mem.namespace)["falkordb"] == {  # type: ignore[union-attr]
            "reachable": True,
            "built": True,
            "vector_index": True,
        }
    # Back up (the original URL): the next write replays the backlog too.
    know(mem, "Written once it is back", subject_refs=["node:x"])
    after = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]
    assert after["outbox_pending"] == 0 and after["backends"]["falkordb"]["in_line"] is True


def test_configure_while_the_server_is_down_saves_nothing_and_works_once_it_is_up(
    open_memory: Any, falkordb_url: str
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    down = open_memory("falkordb", falkordb_url=f"redis://127.0.0.1:{port}")
    know(down, "A uses B", subject_refs=["node:a"], payload=claim("node:a", "uses", "node:b"))
    with pytest.raises(BackendError) as refused:  # atomic: the setting is saved only with a built index
        down.maintain("configure", {"graph_backend": "falkordb"}, {"apply": True})
    assert refused.value.details["backend"] == "falkordb" and "Nothing was saved" in refused.value.message
    assert down.maintain("structure", {}, {})["config"].get("graph_backend") is None
    assert down.query("graph", {"id": "node:a"}, {"depth": 1})["counts"]["nodes"] == 3  # canonical tables
    up = open_memory("falkordb", ns=down.namespace)
    result = up.maintain("configure", {"graph_backend": "falkordb"}, {"apply": True})
    assert result["status"] == "applied" and result["derived_backends"]["built"]["falkordb"]["relations"] == 2
    assert up.maintain("repair", {})["derived_indexes"]["derived_backends"]["backends"]["falkordb"]["in_line"]

"""The ``graph`` and ``falkordb-server`` commands through the entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.derived.conftest import need

EXE = str(Path(sys.executable).with_name("memory-substrate"))


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(tmp_path / "root"), "MEMORY_SUBSTRATE_EMBEDDER": "none"}
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=env, timeout=120)


def test_graph_command_reads_the_configured_backend(tmp_path: Path) -> None:
    data = {
        "kind": "fact",
        "title": "A uses B",
        "summary": "s",
        "reason": "r",
        "memory_source": "user_declared",
        "scope_refs": ["scope:p"],
        "subject_refs": ["node:a"],
        "payload": {"subject": "node:a", "predicate": "uses", "object": "node:b", "value": None},
    }
    assert _run(tmp_path, "remember", "knowledge", json.dumps(data)).returncode == 0
    need("kuzu")
    backend = "kuzu"
    done = _run(
        tmp_path,
        "maintain",
        "configure",
        json.dumps({"graph_backend": backend}),
        "--options",
        '{"apply": true}',
    )
    assert done.returncode == 0, done.stderr
    hood = json.loads(_run(tmp_path, "graph", "node:a", "--depth", "1").stdout)
    assert hood["backend"] == backend and hood["nodes"]["node:b"] == 1 and not hood["truncated"]
    paths = json.loads(_run(tmp_path, "graph", "node:a", "node:b", "--paths").stdout)
    assert [p["node_ids"] for p in paths["paths"]] == [["node:a", "node:b"]]
    assert paths["paths"][0]["relations"][0]["rel_type"] == "uses"
    bad = _run(tmp_path, "graph", "node:a", "--paths")
    assert bad.returncode != 0 and "exactly two ids" in bad.stderr


def test_falkordb_server_command_prints_a_url_and_stops_cleanly(tmp_path: Path) -> None:
    need("falkordb")
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(tmp_path / "r")}
    proc = subprocess.Popen([EXE, "falkordb-server"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("export MEMORY_SUBSTRATE_FALKORDB_URL=unix://")
        from falkordb import FalkorDB

        db = FalkorDB.from_url(line.split("=", 1)[1].split()[0])
        assert db.select_graph("probe").query("RETURN 1").result_set == [[1]]
        db.connection.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    time.sleep(0.1)
    assert (tmp_path / "r" / "derived" / "falkordb" / "dump.rdb").exists()  # persisted on shutdown

"""``namespace list`` and ``namespace delete`` through the CLI, on both backends."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from memory_substrate import Memory
from memory_substrate.cli.main import main
from tests.helpers import conversation


def _args(settings: Any) -> list[str]:
    args = ["--root", str(settings.root), "--embedder", "none"]
    if settings.database_url:
        args += ["--database-url", settings.database_url]
    return args


def _fill(settings: Any, namespace: str) -> None:
    mem = Memory(settings, namespace=namespace)
    try:
        src = mem.ingest("conversation", conversation(["the gateway rotates keys monthly", "noted"]))
        mem.remember(
            "extraction",
            {
                "episode_id": src["source_id"],
                "reason": "r",
                "memory_source": "agent_inferred",
                "scope_refs": ["scope:p"],
                "entities": [{"name": "Webhook Gateway", "type": "service"}],
                "facts": [
                    {
                        "subject": "Webhook Gateway",
                        "predicate": "rotation",
                        "value": "monthly",
                        "segment_ids": ["seg-1"],
                    }
                ],
            },
        )
        mem.query("context", {"task": "gateway keys"})  # leaves a compile trace
        mem.maintain("configure", {"token_budget": 1000}, {"apply": True})
    finally:
        mem.close()


def _counts(settings: Any, namespace: str) -> dict[str, Any]:
    mem = Memory(settings, namespace=namespace)
    try:
        status = mem.status()
        found = mem.query("search", {"query": "gateway rotates keys"})
        with mem.store.read(namespace) as s:
            return {
                "objects": status["counts"]["by_object_type"],
                "hits": len(found["items"]),
                "traces": len(s.list_traces()),
                "config": s.get_config(),
                "patches": len(s.list_patches()),
            }
    finally:
        mem.close()


def test_list_and_delete_with_confirmation(make_settings: Any, namespace: str) -> None:
    settings = make_settings()
    gone, kept = namespace + "-gone", namespace + "-kept"
    _fill(settings, gone)
    _fill(settings, kept)
    before = _counts(settings, kept)
    runner = CliRunner()

    listed = runner.invoke(main, [*_args(settings), "namespace", "list"])
    assert listed.exit_code == 0, listed.output
    rows = {r["namespace"]: r for r in json.loads(listed.output)["namespaces"]}
    assert rows[gone]["objects"] > 0 and rows[gone]["segments"] == 2 and rows[gone]["protected"] is False

    refused = runner.invoke(main, [*_args(settings), "namespace", "delete", gone], input="n\n")
    assert refused.exit_code == 1 and "nothing deleted" in refused.output
    assert _counts(settings, gone)["hits"] > 0

    done = runner.invoke(main, [*_args(settings), "namespace", "delete", gone], input="y\n")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output[done.output.index("{") :])
    assert report["deleted"] == gone and report["total_rows"] > 0
    assert {"objects", "segments", "traces", "config", "patches"} <= set(report["rows"])
    assert _counts(settings, gone) == {"objects": {}, "hits": 0, "traces": 0, "config": {}, "patches": 0}
    assert _counts(settings, kept) == before
    listed = json.loads(runner.invoke(main, [*_args(settings), "namespace", "list"]).output)
    assert gone not in {r["namespace"] for r in listed["namespaces"]}


def test_delete_refuses_default_and_unknown(make_settings: Any, namespace: str) -> None:
    settings = make_settings()
    runner = CliRunner()
    protected = runner.invoke(main, [*_args(settings), "namespace", "delete", "default", "--yes"])
    assert (
        protected.exit_code == 1 and "memory_conflict" in protected.output and "protected" in protected.output
    )
    missing = runner.invoke(main, [*_args(settings), "namespace", "delete", namespace + "-none", "--yes"])
    assert missing.exit_code == 1 and "memory_not_found" in missing.output
    _fill(settings, namespace)
    yes = runner.invoke(main, [*_args(settings), "namespace", "delete", namespace, "--yes"])
    assert yes.exit_code == 0 and _counts(settings, namespace)["hits"] == 0

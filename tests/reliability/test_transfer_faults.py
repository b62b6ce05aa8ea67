"""Export/import under damage: a truncated or corrupted file is refused and leaves nothing behind.

One good export of a namespace with sources, segments, knowledge, relations, patches, events and
vectors is damaged in many ways (cut at every kind of boundary, bytes flipped, lines dropped,
duplicated or swapped, records edited so that they stay valid JSON); each damaged file must be
refused with a one-line ``memory_validation_error`` (CLI exit 2, no traceback) and the target
namespace must stay empty. Both backends.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from memory_substrate import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.transfer import export_namespace, import_namespace
from tests.helpers import conversation, knowledge
from tests.reliability.common import report, scale


def _fill(memory: Memory) -> None:
    src = memory.ingest(
        "conversation", conversation(["we run sqlite in wal mode", "and keep backups nightly"])
    )
    memory.remember(
        "knowledge",
        knowledge(
            title="WAL mode",
            evidence_refs=[{"source_id": src["source_id"], "segment_id": "seg-1"}],
            subject_refs=["node:sqlite"],
        ),
    )
    memory.remember("knowledge", knowledge(title="Backups nightly", summary="Backups run every night."))


def _damaged(good: str, rng: random.Random) -> dict[str, str]:
    lines = good.splitlines(keepends=True)
    body = lines[1:]
    cases: dict[str, str] = {
        "empty": "",
        "header only": lines[0],
        "cut mid-header": lines[0][: len(lines[0]) // 2],
        "last line dropped": "".join(lines[:-1]),
        "first record dropped": lines[0] + "".join(body[1:]),
        "cut mid-record": good[: len(good) - len(lines[-1]) // 2 - 1],
        "cut one byte short": good[:-2],
        "record duplicated": good + lines[1],
        "records swapped": lines[0] + "".join(reversed(body)),
        "garbage appended": good + "this is not json\n",
        "binary appended": good + "\x00\x01\x02\n",
    }
    for i in range(scale(6, 60)):
        chars = list(good)
        at = rng.randrange(len(lines[0]) + 1, len(chars) - 1)
        chars[at] = rng.choice('x{}":,0\\ ') if chars[at] != "x" else "y"
        cases[f"byte flipped #{i}"] = "".join(chars)
    for i, line in enumerate(body[: scale(4, 40)]):
        record = json.loads(line)
        data = record["data"]
        key = next((k for k in ("text", "title", "summary", "content_hash", "created_at") if k in data), None)
        if key is not None and isinstance(data[key], str):
            data[key] = data[key] + " (edited)"
            cases[f"record edited #{i} ({record['type']}.{key})"] = lines[0] + "".join(
                json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n" if j == i else b
                for j, b in enumerate(body)
            )
    return cases


def _empty(memory: Memory) -> bool:
    with memory.store.read(memory.namespace) as s:
        return not (
            s.count_objects()
            or s.count_segments()
            or s.list_patches(limit=1)
            or s.get_config()
            or s.list_events(limit=1)
            or s.list_relations(limit=1)
            or s.vector_stats()
        )


def test_damaged_exports_are_refused_and_leave_nothing(memory: Memory, backend: str) -> None:
    _fill(memory)
    buf = io.StringIO()
    export_namespace(memory.runtime, buf)
    good = buf.getvalue()
    rng = random.Random(1234)
    refused: dict[str, str] = {}
    accepted: list[str] = []
    crashed: dict[str, str] = {}
    for name, text in _damaged(good, rng).items():
        target = memory.for_namespace(f"{memory.namespace}-{len(refused) + len(accepted)}")
        try:
            import_namespace(memory.runtime, io.StringIO(text), namespace=target.namespace)
        except MemorySubstrateError as exc:
            refused[name] = exc.code
        except Exception as exc:  # collected, so one run shows every kind of damage that crashes
            crashed[name] = f"{type(exc).__name__}: {exc}"
        else:
            accepted.append(name)
        if name not in accepted:
            assert _empty(target), f"{name}: refused but left data behind"
    assert crashed == {}, f"damaged exports crashed the import: {crashed}"
    assert accepted == [], f"damaged exports accepted: {accepted}"
    assert set(refused.values()) == {"memory_validation_error"}, refused
    # The undamaged file still imports.
    done = import_namespace(memory.runtime, io.StringIO(good), namespace=memory.namespace + "-good")
    assert done["counts"]["object"] > 0
    report(f"transfer_faults[{backend}]", tried=len(refused), refused=len(refused), accepted=0, left_behind=0)


def test_cli_refuses_a_truncated_file_in_one_line(tmp_path: Path) -> None:
    from tests.cli.test_cli import _run

    msg = {"title": "t", "messages": [{"role": "user", "content": "remember the lighthouse"}]}
    assert _run(tmp_path, "ingest", "conversation", json.dumps(msg)).returncode == 0
    out = tmp_path / "export.jsonl"
    assert _run(tmp_path, "export", "-o", str(out)).returncode == 0
    out.write_bytes(out.read_bytes()[:-7])
    bad = _run(tmp_path, "--namespace", "restored", "import", str(out))
    assert bad.returncode == 2 and bad.stderr.startswith("error [memory_validation_error]:"), bad.stderr
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    status = _run(tmp_path, "--namespace", "restored", "status")
    assert json.loads(status.stdout)["counts"]["by_object_type"] == {}


def test_version_1_files_without_an_end_record_still_import(memory: Memory) -> None:
    _fill(memory)
    buf = io.StringIO()
    export_namespace(memory.runtime, buf)
    lines = buf.getvalue().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["version"] = 1
    old = json.dumps(header) + "\n" + "".join(lines[1:-1])
    done = import_namespace(memory.runtime, io.StringIO(old), namespace=memory.namespace + "-v1")
    assert done["counts"]["object"] == header["counts"]["object"]

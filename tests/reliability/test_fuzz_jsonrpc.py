"""Raw JSON-RPC over the real stdio server: malformed frames and hostile requests.

Hostile *valid* JSON-RPC requests must each get an answer with their id: a result (a tool error
being our JSON document) or a JSON-RPC error. Frames that are not JSON at all (garbage, bytes that
are not UTF-8, lone-surrogate escapes, truncated or absurdly deep documents) cannot be answered,
since they carry no readable id; the SDK drops them. Either way the server must stay up and keep
answering, and exit cleanly when its stdin closes.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pydantic_core
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import tool_error
from tests.reliability.common import SOAK, SRC, report, scale
from tests.reliability.hostile import KEYS, values

GARBAGE_FRAMES = [
    b"not json",
    b"{",
    b"}",
    b"[]",
    b"[1,2",
    b"null",
    b"42",
    b'"str"',
    b"\xff\xfe\x00garbage",
    b"\xc3\x28",
    b'{"jsonrpc":"2.0","id":99,"method":"tools/list"',
    b'{"jsonrpc":"1.0","id":98,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":97,"method":"tools/call","params":{"name":"memory_query","arguments":{"q":"\\ud800"}}}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b" " * 1000,
    b"\x00",
    b'{"jsonrpc":"2.0","id":{"nested":1},"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":[1],"method":"x"}',
    b'{"jsonrpc":"2.0","id":96,"method":"tools/call","params":"not an object"}',
]


class StdioServer:
    """``memory-substrate serve`` as a child process, spoken to in raw frames."""

    def __init__(self, root: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
        env.update(
            MEMORY_SUBSTRATE_ROOT=str(root),
            MEMORY_SUBSTRATE_EMBEDDER="none",
            PYTHONPATH=SRC + os.pathsep + env.get("PYTHONPATH", ""),
        )
        self.log = (root.parent / "stdio-server.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memory_substrate.cli.main", "serve"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1000

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, frame: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            reply = self.replies.get(timeout=max(0.1, deadline - time.monotonic()))
            if reply.get("id") == request_id:
                return reply

    def request(self, method: str, params: Any = None, *, raw_params: bool = False) -> tuple[Any, bytes]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None or raw_params:
            message["params"] = params
        return self.next_id, json.dumps(message).encode()

    def alive_and_answering(self) -> None:
        rid, frame = self.request("tools/list")
        self.send(frame)
        tools = self.wait_for(rid)["result"]["tools"]
        assert {t["name"] for t in tools} >= {"memory_query", "memory_remember"}


def _parseable(frame: bytes) -> bool:
    try:
        pydantic_core.from_json(frame)
    except ValueError:
        return False
    return True


def test_raw_frames_and_hostile_requests_over_stdio(tmp_path: Path) -> None:
    server = StdioServer(tmp_path / "store")
    counts = {"answered": 0, "tool_errors": 0, "rpc_errors": 0, "unparseable_dropped": 0, "garbage_frames": 0}
    try:
        rid, frame = server.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "0"},
            },
        )
        server.send(frame)
        assert "result" in server.wait_for(rid)
        server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())

        for frame in GARBAGE_FRAMES:
            server.send(frame)
            counts["garbage_frames"] += 1
        server.alive_and_answering()

        @settings(
            max_examples=scale(60, 600),
            deadline=None,
            database=None,
            derandomize=not SOAK,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            st.one_of(
                st.tuples(
                    st.sampled_from(
                        ["memory_query", "memory_remember", "memory_ingest", "memory_maintain", "nope"]
                    ),
                    st.dictionaries(
                        st.sampled_from(["args", *"xyz"]),
                        st.fixed_dictionaries(
                            {
                                "mode": st.sampled_from(
                                    ["search", "page", "knowledge", "batch", "structure", "web"]
                                )
                                | values()
                            },
                            optional={
                                "input_data": st.dictionaries(
                                    st.sampled_from(["query", "id", "title", "url", "task"]) | KEYS,
                                    values(),
                                    max_size=3,
                                ),
                                "options": st.dictionaries(KEYS, values(), max_size=2),
                            },
                        )
                        | values(),
                        max_size=2,
                    ),
                ),
                st.tuples(values(), values()),
            )
        )
        def hostile(drawn: tuple[Any, Any]) -> None:
            name, arguments = drawn
            rid, frame = server.request("tools/call", {"name": name, "arguments": arguments})
            server.send(frame)
            if not _parseable(frame):
                counts["unparseable_dropped"] += 1
                return
            reply = server.wait_for(rid)
            counts["answered"] += 1
            if "error" in reply:
                assert isinstance(reply["error"]["code"], int) and reply["error"]["message"], reply
                counts["rpc_errors"] += 1
            elif reply["result"].get("isError"):
                error = tool_error(reply["result"]["content"][0]["text"])
                assert error["code"] != "memory_internal_error", (name, error)
                counts["tool_errors"] += 1

        hostile()
        # Deep documents, built as text (json.dumps on this side would hit Python's recursion limit).
        for depth in (100, 1000, 5000, 20_000):
            server.next_id += 1
            rid = server.next_id
            frame = (
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_query",'
                b'"arguments":{"args":{"mode":"search","input_data":{"query":"x","deep":'
                % rid
                + b"[" * depth
                + b"]" * depth
                + b"}}}}}"
            )
            server.send(frame)
            if _parseable(frame):
                reply = server.wait_for(rid)
                text = reply["result"]["content"][0]["text"] if "result" in reply else None
                assert "error" in reply or tool_error(text or "")["code"] != "memory_internal_error"
                counts["answered"] += 1
            else:
                counts["unparseable_dropped"] += 1
        server.alive_and_answering()
        assert server.proc.poll() is None, "the server died"
    finally:
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        code = server.proc.wait(30)
        server.log.close()
    log = (tmp_path / "stdio-server.log").read_text(errors="replace")
    assert code == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    report("fuzz_jsonrpc_stdio", **counts, crashes=0)

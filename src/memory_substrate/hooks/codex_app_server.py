"""A short conversation with ``codex app-server`` (JSON-RPC 2.0 over stdio, one JSON message a
line, the ``jsonrpc`` field left out), used to have Codex itself trust the hooks a set-up wrote.

Codex runs a hook only once its definition is trusted, and keys that trust to a hash Codex
computes (``currentHash`` in ``hooks/list``). The hash is Codex's business: a set-up reads it
from ``hooks/list`` and hands it back through ``config/batchWrite``, so Codex writes its own
``config.toml``; nothing here computes one.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from memory_substrate.version import __version__

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject

# Starting Codex and answering a few local requests takes a second or two; a stuck one must not
# hang a set-up.
DEADLINE_S = 60.0


class AppServerError(Exception):
    """Codex's app-server could not be started or did not answer as its protocol says."""


class AppServer:
    """``with AppServer(codex) as server: server.request("hooks/list", {...})``."""

    def __init__(
        self, codex: Path, env: dict[str, str] | None = None, deadline_s: float = DEADLINE_S
    ) -> None:
        self.codex = codex
        self.env = env
        self.deadline = time.monotonic() + deadline_s
        self._next_id = 0
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: list[str] = []

    def __enter__(self) -> AppServer:
        try:
            self._proc = subprocess.Popen(
                [str(self.codex), "app-server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                env=self.env or dict(os.environ),
            )
        except OSError as exc:
            raise AppServerError(f"cannot start {self.codex} app-server: {exc.strerror or exc}") from None
        threading.Thread(target=self._pump, args=(self._proc.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True).start()
        self.request(
            "initialize",
            {
                "clientInfo": {
                    "name": "memory-substrate",
                    "title": "memory-substrate setup",
                    "version": __version__,
                },
                "capabilities": {"experimentalApi": True},
            },
        )
        self._send({"method": "initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait(timeout=10)

    @staticmethod
    def _pump(stream: Iterable[str], lines: queue.Queue[str | None]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def _drain(self, stream: Iterable[str]) -> None:
        for line in stream:
            if len(self._stderr) < 50:
                self._stderr.append(line.rstrip())

    def _send(self, message: JsonObject) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(message) + "\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise AppServerError(f"codex app-server stopped: {exc.strerror or exc}{self._why()}") from None

    def _why(self) -> str:
        tail = [line for line in self._stderr if line.strip()][-3:]
        return (": " + " | ".join(tail)) if tail else ""

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """The ``result`` of ``method``; notifications and server requests met on the way are skipped."""
        self._next_id += 1
        rid = self._next_id
        self._send({"id": rid, "method": method, "params": params})
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise AppServerError(f"codex app-server did not answer {method} in time")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AppServerError(f"codex app-server exited before answering {method}{self._why()}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("id") != rid or "method" in message:
                continue
            if "error" in message:
                error = message["error"] or {}
                raise AppServerError(f"codex app-server refused {method}: {error.get('message', error)}")
            result = message.get("result")
            return result if isinstance(result, dict) else {}


def list_hooks(server: AppServer, cwd: Path) -> list[JsonObject]:
    """Every hook Codex sees for a session in ``cwd``, as ``hooks/list`` describes them."""
    result = server.request("hooks/list", {"cwds": [str(cwd)]})
    hooks: list[JsonObject] = []
    data = result.get("data")  # a list of {cwd, hooks}
    for entry in data if isinstance(data, list) else []:
        hooks.extend(h for h in entry.get("hooks") or [] if isinstance(h, dict))
    return hooks


def trust(server: AppServer, hashes: dict[str, str]) -> None:
    """Record ``hashes`` (hook key → the ``currentHash`` Codex reported) as trusted, merged into the
    user's ``[hooks.state]`` by Codex; keys hold dots and slashes, so the table is the key path."""
    if hashes:
        server.request(
            "config/batchWrite",
            {
                "edits": [
                    {
                        "keyPath": "hooks.state",
                        "mergeStrategy": "upsert",
                        "value": {k: {"trusted_hash": h} for k, h in hashes.items()},
                    }
                ]
            },
        )

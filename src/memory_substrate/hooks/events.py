"""One command for every hook event: read the event JSON, do what the event asks, answer.

| event | does | prints |
|---|---|---|
| ``SessionStart`` | compiles what the session should start with (open work, decisions, the latest sessions) | context, or nothing |
| ``UserPromptSubmit`` | compiles the prompt as a task | context, or nothing |
| ``Stop``, ``PreCompact``, ``SessionEnd`` (and ``SubagentStop``) | captures what the transcript gained | nothing |

Context goes out as ``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``,
the JSON both Claude Code and Codex read from a hook's stdout on exit 0, with TEXT wrapped in the
markers the capture drops. Any other event is answered with nothing. The event's fields are
those both clients send: ``session_id``, ``transcript_path`` (Codex may send null), ``cwd``,
``hook_event_name``, and ``source`` (SessionStart) or ``prompt`` (UserPromptSubmit).

Only what an event needs is imported: a capture of a transcript that did not grow reads a file's
size and ends; the store, the compiler and the embedder load only when there is work for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from memory_substrate.hooks.config import HookConfig
from memory_substrate.hooks.failopen import HookLog
from memory_substrate.hooks.store_settings import LockWait, StoreOverrides

if TYPE_CHECKING:
    from memory_substrate.app import Memory
    from memory_substrate.hooks.inject import Injection
    from memory_substrate.hooks.warm import WarmInjection

CAPTURE_EVENTS = ("Stop", "PreCompact", "SessionEnd", "SubagentStop")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
RESET_SOURCES = ("compact", "clear")  # the session's context was replaced: what it held is gone
SQLITE_FILE = "memory.sqlite3"  # Settings.sqlite_path, named here so a read need not import the settings


@dataclass
class Event:
    client: str
    name: str
    session_id: str
    cwd: str | None
    transcript: Path | None
    data: Mapping[str, object]  # the event as the client sent it; the fields above are read from it


def parse_event(client: str, raw: bytes) -> Event | None:
    """The event on stdin, or None when it is not one (empty, not JSON, no event name)."""
    try:
        data = json.loads(raw.decode("utf-8", "replace") or "null")
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("hook_event_name"), str):
        return None
    transcript = data.get("transcript_path")
    cwd = data.get("cwd")
    return Event(
        client=client,
        name=data["hook_event_name"],
        session_id=str(data.get("session_id") or ""),
        cwd=cwd if isinstance(cwd, str) and cwd else None,
        transcript=Path(transcript).expanduser() if isinstance(transcript, str) and transcript else None,
        data=data,
    )


class StoreAccess(Protocol):
    """Where an event's memory work reads and writes: the hook's own store (``Stores``), or a
    running server's (mcp/client_hooks_route.py)."""

    def memory(self, namespace: str, *, create: bool = True) -> Memory: ...

    def exists(self) -> bool: ...


@dataclass
class Stores:
    """The store, opened once and only when an event needs it, with a ``Memory`` per namespace.

    ``overrides`` are the CLI's settings (database URL, embedder); the root is the hooks'. Reads
    never create a store: a root with none yet has nothing to recall. In a hook (``hook``), the
    vectors a capture may leave to the background are left to the next process that runs the
    worker (a running ``serve``): a hook must end in a moment. Otherwise (a backfill) every
    vector is made during capture, as in every one-shot command."""

    config: HookConfig
    overrides: StoreOverrides = field(default_factory=lambda: StoreOverrides())
    hook: bool = True
    lock_timeout_s: float | None = None  # how long a write waits for another process's lock
    _first: Memory | None = None
    _views: dict[str, Memory] = field(default_factory=dict)

    def memory(self, namespace: str, *, create: bool = True) -> Memory:
        if namespace in self._views:
            return self._views[namespace]
        if self._first is None:
            from memory_substrate.app import Memory
            from memory_substrate.graph import deferred
            from memory_substrate.settings import Settings
            from memory_substrate.storage.factory import open_store

            if self.hook:
                deferred.hold_workers()
            wait: LockWait = {"lock_timeout_s": self.lock_timeout_s} if self.lock_timeout_s else {}
            settings = Settings(
                **self.overrides,
                root=self.config.root,
                namespace=namespace,
                embed_in_background=self.hook,
                **wait,
            )
            self._first = Memory(settings, store=open_store(settings, create=create))
            self._views[namespace] = self._first
            return self._first
        view = self._first.for_namespace(namespace)
        self._views[namespace] = view
        return view

    def exists(self) -> bool:
        """Whether there is a store to read (a server database always is; the embedded file
        ``Settings.sqlite_path`` once the first capture made it)."""
        return bool(self.overrides.get("database_url")) or (self.config.root / SQLITE_FILE).is_file()

    def close(self) -> None:
        if self._first is not None:
            store = self._first.store
            self._first.close()
            store.close()  # a store handed to Memory stays the caller's to close
            self._first = None
            self._views.clear()


def handle(
    event: Event, config: HookConfig, stores: StoreAccess, log: HookLog, *, warm: bool = True
) -> str | None:
    """What the client is told (a JSON line), or None. ``warm=False``: never ask a running server
    (``hooks/warm.py``), as when a server handles the event itself."""
    log.event = event.name
    if event.name in CAPTURE_EVENTS:
        if config.capture:
            _capture(event, config, stores, log, warm=warm)
        return None
    if event.name not in CONTEXT_EVENTS or not config.inject or event.cwd is None:
        return None
    from memory_substrate.hooks.project import excluded, project_namespace

    if excluded(event.cwd, config):
        return None
    from memory_substrate.hooks import state

    if event.name == "SessionStart":
        state.prune_sessions(config.state_dir)
        if event.data.get("source") in RESET_SOURCES:
            state.forget_session(config.state_dir, event.client, event.session_id)
    namespace = project_namespace(event.cwd, config)
    given = state.injected(config.state_dir, event.client, event.session_id) if event.session_id else set()
    own = _own_episodes(event, config)
    prompt = event.data.get("prompt")
    if event.name == "UserPromptSubmit" and not isinstance(prompt, str):
        return None
    budget = config.session_budget if event.name == "SessionStart" else config.prompt_budget
    found = _warm_context(event, namespace, budget, given, own, log) if warm else False
    if found is False:  # no server answered: the work is done here
        if not stores.exists():
            return None  # no store yet: nothing to recall (and a read creates none)
        from memory_substrate.hooks import inject

        mem = stores.memory(namespace, create=False)
        if event.name == "SessionStart":
            found = inject.session_injection(mem, budget=budget, given=given, own=own)
        else:
            found = inject.prompt_injection(mem, str(prompt), budget=budget, given=given, own=own)
    if found is None:
        return None
    if event.session_id:
        state.add_injected(config.state_dir, event.client, event.session_id, list(found.ids))
    return context_output(event.name, found.text)


def context_output(event_name: str, text: str) -> str:
    """The line a context event prints: the JSON both clients read from a hook's stdout."""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}, ensure_ascii=False
    )


def _warm_context(
    event: Event, namespace: str, budget: int, given: set[str], own: set[str], log: HookLog
) -> Injection | WarmInjection | Literal[False] | None:
    """The running server's answer (hooks/warm.py): an injection, None (nothing to give), or
    False when there is no server to ask or it did not answer."""
    from memory_substrate.hooks import warm

    if not warm.configured():
        return False
    got = warm.context(
        event.client,
        dict(event.data),
        namespace=namespace,
        budget=budget,
        given=given,
        own=own,
        log=log.write,
    )
    return False if got is None else got.injection


def _own_episodes(event: Event, config: HookConfig) -> set[str]:
    """The episodes this session's transcripts were captured to (its turns are the conversation)."""
    from memory_substrate.hooks.capture import transcripts_of
    from memory_substrate.hooks.state import load_cursor

    path = _transcript(event)
    if path is None:
        return set()
    cursors = (load_cursor(config.state_dir, p) for p in transcripts_of(event.client, path))
    return {c.source_id for c in cursors if c is not None and c.source_id}


def _transcript(event: Event) -> Path | None:
    if event.transcript is not None:
        return event.transcript
    if event.client == "codex" and event.session_id:
        from memory_substrate.hooks.capture import find_codex_rollout

        return find_codex_rollout(event.session_id)
    return None


def _capture(event: Event, config: HookConfig, stores: StoreAccess, log: HookLog, *, warm: bool) -> None:
    from memory_substrate.hooks.capture import capture, transcripts_of

    path = _transcript(event)
    if path is None:
        log.write("capture: the event names no transcript and none was found")
        return
    agent_transcript = event.data.get("agent_transcript_path")
    if event.name == "SubagentStop" and isinstance(agent_transcript, str):
        paths = [Path(agent_transcript).expanduser()]
    else:
        paths = transcripts_of(event.client, path)
    from memory_substrate.hooks import warm as warm_path

    # Through a running server when one is configured (hooks/warm.py), else (or when it fails) here.
    memory = (
        warm_path.memory_factory(event.client, event.data, stores.memory, log=log.write)
        if warm and warm_path.configured()
        else stores.memory
    )
    for one in paths:
        done = capture(event.client, one, config, memory, cwd=event.cwd)
        if done.status == "missing" and one == path:
            log.write(f"capture: cannot read {one}: {done.reason}")
        elif done.reason and done.status != "missing":
            log.write(f"capture: {one}: {done.reason}")

"""``POST /hooks/{client}/event``: a context event sent by the client itself (Claude Code's
``http`` hook type), answered by a running ``serve`` on the same machine.

The hook command (``memory-substrate hook``) is a process the client starts for every event; even
through the warm path (mcp/hooks_route.py) a prompt pays for Python's start and the hook's imports.
A client that can post its event itself removes that process: the event arrives here exactly as
the client would write it to a hook's stdin, and the answer is what the hook command would print
(an empty body for nothing). Everything the hook command works out on its own machine is worked
out here the same way, with the same code (``hooks.events.handle``): the project's namespace from
the event's ``cwd``, what the session was already given, the session's own episodes. So this
route serves a ``serve`` on the machine that runs the client, with the hooks' root as its root.

Only the context events (SessionStart, UserPromptSubmit) are answered here, and Claude Code 2.1
sends only UserPromptSubmit this way (it skips an http hook on SessionStart). A capture reads the
transcript file and stays with the hook command, whose cold path keeps working when no server is up.

Access is the other routes': a bearer token (401 without), the body limit (413), and the
project's namespace must be the token's (403 ``memory_forbidden`` otherwise).
"""

from __future__ import annotations

from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from memory_substrate.app import Memory
from memory_substrate.errors import ForbiddenError, MemorySubstrateError, ValidationError
from memory_substrate.mcp.hooks_route import error_status, token_namespace_and_client

EVENT_PATH = "/hooks/{client}/event"


class ClientHookRoute:
    """The ASGI endpoint of ``POST /hooks/{client}/event``, behind the app's bearer authentication."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._views: dict[str, Memory] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response: Response
        try:
            output = await self._answer(request)
            response = Response(output or "", media_type="application/json")
        except MemorySubstrateError as exc:
            response = JSONResponse({"error": exc.to_dict()}, status_code=error_status(exc))
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> str | None:
        allowed, client = token_namespace_and_client(request)
        from memory_substrate.hooks.events import CONTEXT_EVENTS, parse_event

        event = parse_event(client, await request.body())
        if event is None:
            raise ValidationError("the body is not a hook event (a JSON object with hook_event_name)")
        if event.name not in CONTEXT_EVENTS:
            raise ValidationError(
                f"{event.name} is not sent here: only {' and '.join(CONTEXT_EVENTS)} are; a capture "
                "reads the transcript and stays with the `memory-substrate hook` command",
                details={"event": event.name},
            )
        return await anyio.to_thread.run_sync(self._handle, event, allowed)

    def _handle(self, event: Any, allowed: str) -> str | None:
        from memory_substrate.hooks.config import ConfigError, load
        from memory_substrate.hooks.events import handle
        from memory_substrate.hooks.failopen import HookLog
        from memory_substrate.hooks.project import project_namespace

        try:
            config = load(self.memory.settings.root)
        except ConfigError as exc:
            raise ValidationError(f"the hooks' config: {exc}") from None
        if event.cwd is not None and project_namespace(event.cwd, config) != allowed:
            # Checked before any read, with the same answer whatever the other namespace holds.
            raise ForbiddenError("this token is bound to another namespace than the project's")
        return handle(
            event, config, _TokenStore(self, allowed), HookLog(config.root, event.client), warm=False
        )

    def view(self, namespace: str) -> Memory:
        found = self._views.get(namespace)
        if found is None:  # the store and its embedder are shared: a view costs no model load
            found = (
                self.memory if self.memory.namespace == namespace else self.memory.for_namespace(namespace)
            )
            self._views[namespace] = found
        return found


class _TokenStore:
    """The server's store as ``hooks.events.handle`` reads it: the token's namespace, no other."""

    def __init__(self, route: ClientHookRoute, allowed: str) -> None:
        self.route, self.allowed = route, allowed

    def memory(self, namespace: str, *, create: bool = True) -> Memory:
        if namespace != self.allowed:
            raise ForbiddenError("this token is bound to another namespace than the project's")
        return self.route.view(namespace)

    def exists(self) -> bool:
        return True

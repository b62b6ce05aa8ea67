"""``POST /hooks/{client}``: a hook's memory work, done by a running ``serve --transport http``.

A hook started cold pays for Python, the imports, opening the store and loading the embedder on
every prompt; a running server has all of that warm. The hook (``hooks/warm.py``) therefore posts
its event here first and falls back to doing the work itself when the server is down or refuses.

What stays with the hook is what lives on its machine: the transcript file, what this session was
already given, the capture cursors, the project's namespace (its git root). So the body is the
event exactly as the hook read it on stdin plus one key the hook adds::

    "memory_substrate": {"namespace": NS,
                         "budget": N, "given": [ids], "own": [episode ids],           # context events
                         "ingest": {"mode": "conversation", "input_data": {...},       # capture events
                                    "options": {...}}}

and the answer is what the hook prints (``output``, empty for nothing) with what it records:
``injection`` (``{"text", "ids"}`` or null) for SessionStart / UserPromptSubmit, the ingest's
``result`` for a capture. The compile is the hook's own (``hooks.inject``) on this server's store,
so the answer is the cold path's for the same store.

Access is the ``/mcp`` endpoint's: a bearer token (401 without), a body limit (413), and the
namespace named in the body (or the ``X-Memory-Substrate-Namespace`` header) must be the token's
(403 ``memory_forbidden`` otherwise): a token reaches its own namespace and no other. Captures run
in the namespace's slow-work bulkhead (``mcp/bulkhead.py``, 429 ``memory_rate_limited`` when full),
compiles on the worker threads reads use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from memory_substrate.app import Memory
from memory_substrate.errors import ForbiddenError, MemorySubstrateError, RateLimitedError, ValidationError
from memory_substrate.hooks.warm import EXTRA
from memory_substrate.json_types import JsonObject
from memory_substrate.mcp.bulkhead import Bulkhead
from memory_substrate.mcp.hook_answers import CaptureAnswer, ContextAnswer, HookAnswer
from memory_substrate.validation import Strict, parse

if TYPE_CHECKING:
    from memory_substrate.hooks.events import Event
    from memory_substrate.hooks.inject import Injection

HOOKS_PATH = "/hooks/{client}"
CLIENTS = ("claude-code", "codex")
NAMESPACE_HEADER = "x-memory-substrate-namespace"
MAX_IDS = 10_000  # of ``given`` / ``own``: a session's worth, not a store's


class HookIngest(Strict):
    """A capture: what a hook captures is a conversation; path-taking modes stay with their own surfaces."""

    mode: Literal["conversation"]
    input_data: JsonObject
    options: JsonObject = Field(default_factory=dict)


class HookExtra(Strict):
    """The key the hook adds to its event (``hooks/warm.py``)."""

    namespace: str | None = None
    budget: int | None = Field(default=None, ge=0, strict=True)
    given: list[str] = Field(default_factory=list, max_length=MAX_IDS)
    own: list[str] = Field(default_factory=list, max_length=MAX_IDS)
    ingest: HookIngest | None = None


class HookRoute:
    """The ASGI endpoint of ``POST /hooks/{client}``, behind the app's bearer authentication."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._views: dict[str, Memory] = {}
        self._bulkheads: dict[str, Bulkhead] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            answer = await self._answer(request)
            response = JSONResponse(answer)
        except MemorySubstrateError as exc:
            response = JSONResponse({"error": exc.to_dict()}, status_code=error_status(exc))
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> HookAnswer:
        allowed, client = token_namespace_and_client(request)
        body, extra = _body(await request.body())
        namespace = extra.namespace or request.headers.get(NAMESPACE_HEADER)
        if not isinstance(namespace, str) or not namespace:
            raise ValidationError(
                f"the body's {EXTRA}.namespace (or the {NAMESPACE_HEADER} header) names no namespace"
            )
        if namespace != allowed:
            raise ForbiddenError(
                f"this token is bound to another namespace than {namespace!r}",
                details={"namespace": namespace},
            )
        from memory_substrate.hooks.events import CAPTURE_EVENTS, CONTEXT_EVENTS, parse_event

        event = parse_event(client, json.dumps(body).encode())
        if event is None:
            raise ValidationError("the body is not a hook event (a JSON object with hook_event_name)")
        memory = self._view(namespace)
        if event.name in CONTEXT_EVENTS:
            return await self._context(memory, event, extra)
        if event.name in CAPTURE_EVENTS and extra.ingest is not None:
            return await self._capture(memory, namespace, extra.ingest)
        return {"output": "", "injection": None}

    async def _context(self, memory: Memory, event: Event, extra: HookExtra) -> ContextAnswer:
        from memory_substrate.hooks import inject

        budget = extra.budget
        if budget is None:
            raise ValidationError(f"{EXTRA}.budget: a context event needs its budget in tokens, 0 or more")
        given, own = set(extra.given), set(extra.own)
        job: Callable[[], Injection | None]
        if event.name == "SessionStart":

            def job() -> Injection | None:
                return inject.session_injection(memory, budget=budget, given=given, own=own)
        else:
            prompt = event.data.get("prompt")
            if not isinstance(prompt, str):
                return {"output": "", "injection": None}

            def job() -> Injection | None:
                return inject.prompt_injection(memory, prompt, budget=budget, given=given, own=own)

        found = await anyio.to_thread.run_sync(job)
        if found is None:
            return {"output": "", "injection": None}
        from memory_substrate.hooks.events import context_output

        return {
            "output": context_output(event.name, found.text),
            "injection": {"text": found.text, "ids": list(found.ids)},
        }

    async def _capture(self, memory: Memory, namespace: str, spec: HookIngest) -> CaptureAnswer:
        bulkhead = self._bulkhead(namespace)
        result = await bulkhead.run(
            "memory_ingest", spec.mode, memory.ingest, spec.mode, spec.input_data, spec.options
        )
        return {"output": "", "result": result}

    def _view(self, namespace: str) -> Memory:
        view = self._views.get(namespace)
        if view is None:  # the store and its embedder are shared: a view costs no model load
            view = self.memory if self.memory.namespace == namespace else self.memory.for_namespace(namespace)
            self._views[namespace] = view
        return view

    def _bulkhead(self, namespace: str) -> Bulkhead:
        bulkhead = self._bulkheads.get(namespace)
        if bulkhead is None:
            settings = self.memory.settings
            bulkhead = Bulkhead(namespace, concurrency=settings.slow_concurrency, queue=settings.slow_queue)
            self._bulkheads[namespace] = bulkhead
        return bulkhead


def token_namespace_and_client(request: Request) -> tuple[str, str]:
    """The namespace the request's token is bound to, and the client its path names (checked)."""
    user = request.scope.get("user")
    if not isinstance(user, AuthenticatedUser):  # RequireAuthMiddleware stops these first
        raise RuntimeError("unauthenticated request reached a hooks route")
    client = str(request.path_params.get("client", ""))
    if client not in CLIENTS:
        raise ValidationError(
            f"unknown hook client {client!r}: use one of {', '.join(CLIENTS)}", details={"client": client}
        )
    return str((user.access_token.claims or {})["namespace"]), client


def _body(raw: bytes) -> tuple[JsonObject, HookExtra]:
    """The event (without the hook's key) and the hook's key."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValidationError("the body is not JSON") from None
    if not isinstance(body, dict):
        raise ValidationError("the body must be a JSON object: the hook's event")
    return body, parse(HookExtra, body.pop(EXTRA, None), EXTRA)


def error_status(exc: MemorySubstrateError) -> int:
    if isinstance(exc, ForbiddenError):
        return 403
    if isinstance(exc, RateLimitedError):
        return 429
    if isinstance(exc, ValidationError):
        return 400
    return 500

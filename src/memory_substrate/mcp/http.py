"""MCP over streamable HTTP, for several clients and several server processes.

Design. ``build_server`` binds one ``Memory`` (one namespace) to one MCP server, and a
bearer token is bound to one namespace. So the HTTP app keeps one MCP server (and its
streamable-HTTP session manager) per namespace, built the first time a token of that
namespace is seen, all sharing one store. Each request goes through:

1. ``AuthenticationMiddleware`` + ``BearerAuthBackend`` (the SDK's): the token's sha256 is
   looked up in the store (``namespace_for_token``); unknown or missing -> 401 from the
   SDK's ``RequireAuthMiddleware``, before any body is read.
2. ``RequestBodyLimitMiddleware`` (the SDK's): bodies over the limit -> 413.
3. the namespace router: the request is handed to the session manager of the token's
   namespace, and only that one. A session id minted for namespace A is unknown to B's
   manager, so a token can never reach another namespace, even with a stolen session id.

The session managers are stateless with JSON responses, so any process behind a load
balancer can answer any request (no sticky sessions). SIGTERM/SIGINT stop accepting
connections, let in-flight requests finish (up to a grace period), stop the session
managers and close the store; the process then exits 0.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.abc
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memory_substrate.app import Memory
from memory_substrate.bearer import TOKEN_PREFIX as TOKEN_PREFIX  # `X as X`: re-exported (the HTTP API)
from memory_substrate.bearer import create_token as create_token
from memory_substrate.bearer import hash_token
from memory_substrate.bearer import new_token as new_token
from memory_substrate.errors import ValidationError
from memory_substrate.heap import freeze_long_lived
from memory_substrate.hosts import HostRule, TrustedHosts, bind_address, is_loopback, url_host
from memory_substrate.process import STOP_HINT, run_uvicorn
from memory_substrate.storage.base import Store

MCP_PATH = "/mcp"
INSPECT_PATH = "/inspect"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


def closed_unless_allowed(memory: Memory) -> Memory:
    """``memory`` as HTTP callers may use it: with no allowed roots configured (``allow_paths``
    None, the stdio default), no path-taking mode reads the server's disk (docs/security.md).
    The `serve` command already closes it; this holds for every caller of ``build_app``."""
    if memory.settings.allow_paths is not None:
        return memory
    closed = memory.settings.model_copy(update={"allow_paths": []})
    return Memory(closed, runtime=dataclasses.replace(memory.runtime, settings=closed))


def public_bind_check(store: Store, host: str, what: str = "serve --transport http") -> str | None:
    """None on loopback; else the one stderr line to print. Raises ``ValidationError`` with no token."""
    if is_loopback(host):
        return None
    count = len(store.list_tokens())
    if count == 0:
        raise ValidationError(
            f"{what} on the non-loopback address {host!r} needs at least one token: create one with "
            "`memory-substrate token create --namespace NS` (docs/security.md)",
            details={"host": host},
        )
    return (
        f"memory-substrate: listening on non-loopback {host}: {count} token(s) can reach it; "
        "use TLS in front (docs/security.md)"
    )


class StoreTokenVerifier:
    """The SDK's ``TokenVerifier`` over the store's token table.

    No cache: every request looks its token up (one indexed read), so a token revoked or expired
    by any process is refused on its next request.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's namespace as an ``AccessToken`` (in ``claims``), or None if unknown."""
        digest = hash_token(token)
        namespace = await anyio.to_thread.run_sync(self.store.namespace_for_token, digest)
        if namespace is None:
            return None
        # client_id identifies the token, so the SDK binds a stateful session to it.
        return AccessToken(
            token=digest, client_id=f"token:{digest[:16]}", scopes=[], claims={"namespace": namespace}
        )


class NamespaceServers:
    """One MCP server and session manager per namespace, created on first use."""

    def __init__(self, memory: Memory, *, host: str, max_body_bytes: int, toolset: str = "substrate") -> None:
        self.memory = memory
        self.toolset = toolset
        self.host = host
        self.max_body_bytes = max_body_bytes
        self._managers: dict[str, StreamableHTTPSessionManager] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep the session managers running while the app is up (its lifespan)."""
        # anyio primitives belong to the running event loop, so they are made here.
        self._lock = anyio.Lock()
        self._stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self._tg = None
                self._stop.set()

    async def manager(self, namespace: str) -> StreamableHTTPSessionManager:
        """The session manager serving ``namespace``, started on first use."""
        manager = self._managers.get(namespace)
        if manager is not None:
            return manager
        async with self._lock:
            manager = self._managers.get(namespace)
            if manager is None:
                if self._tg is None:
                    raise RuntimeError("the HTTP app is not running")
                manager = self._build(namespace)
                await self._tg.start(self._keep, manager)
                self._managers[namespace] = manager
        return manager

    def _build(self, namespace: str) -> StreamableHTTPSessionManager:
        from memory_substrate.mcp.server import build_server

        memory = self.memory if self.memory.namespace == namespace else self.memory.for_namespace(namespace)
        # bound: the graph tools' owner_id cannot reach past the token's namespace.
        server = build_server(memory, self.toolset, bound=True)
        # streamable_http_app() creates the server's session manager; its Starlette wrapper is
        # unused. The SDK's own Host check is off: the app checks Host for every route by one rule
        # (hosts.py), which also admits the names an operator configured.
        server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            max_request_body_size=self.max_body_bytes,
            host=self.host,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return server.session_manager

    async def _keep(
        self,
        manager: StreamableHTTPSessionManager,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        async with manager.run():
            task_status.started()
            await self._stop.wait()


def build_app(
    memory: Memory,
    *,
    host: str = "127.0.0.1",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    toolset: str = "substrate",
    inspector: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> Starlette:
    """The ASGI app: ``/mcp`` (authenticated MCP), ``/hooks/{client}`` (the hooks' warm path, same
    tokens), ``/hooks/{client}/event`` (a client's own http hook, same tokens) and ``/healthz``
    (unauthenticated liveness); with ``inspector``, the read-only web
    inspector at ``/inspect/``, behind the same tokens.

    Every route answers only requests whose Host names ``host`` or one of ``allowed_hosts`` and
    the settings' ``allowed_hosts`` (hosts.py); others get 421. The app does not close the store;
    the caller owns ``memory``.
    """
    memory = closed_unless_allowed(memory)
    servers = NamespaceServers(memory, host=host, max_body_bytes=max_body_bytes, toolset=toolset)

    async def route_to_namespace(scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):  # RequireAuthMiddleware stops these first
            raise RuntimeError("unauthenticated request reached the namespace router")
        namespace = str((user.access_token.claims or {})["namespace"])
        manager = await servers.manager(namespace)
        await manager.handle_request(scope, receive, send)

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with servers.running():
            yield

    endpoint = RequireAuthMiddleware(
        RequestBodyLimitMiddleware(route_to_namespace, max_body_bytes), required_scopes=[]
    )
    from memory_substrate.mcp.client_hooks_route import EVENT_PATH, ClientHookRoute
    from memory_substrate.mcp.hooks_route import HOOKS_PATH, HookRoute

    # The hooks' warm path (mcp/hooks_route.py) and the client's own http hooks
    # (mcp/client_hooks_route.py): the same token check, body limit and namespace rule.
    hooks = RequireAuthMiddleware(
        RequestBodyLimitMiddleware(HookRoute(memory), max_body_bytes), required_scopes=[]
    )
    client_hooks = RequireAuthMiddleware(
        RequestBodyLimitMiddleware(ClientHookRoute(memory), max_body_bytes), required_scopes=[]
    )
    routes: list[Any] = [
        Route(MCP_PATH, endpoint=endpoint),
        Route("/healthz", healthz, methods=["GET"]),
        Route(HOOKS_PATH, endpoint=hooks, methods=["POST"]),
        Route(EVENT_PATH, endpoint=client_hooks, methods=["POST"]),
    ]
    if inspector:
        from starlette.routing import Mount

        from memory_substrate.inspector import build_inspector

        # host=None: this app's own Host check covers the mounted inspector.
        routes.append(
            Mount(
                INSPECT_PATH,
                app=build_inspector(memory, require_token=True, root_path=INSPECT_PATH, host=None),
            )
        )
    rule = HostRule(host, [*memory.settings.allowed_hosts, *allowed_hosts])
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(TrustedHosts, rule=rule),
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(StoreTokenVerifier(memory.store))),
            Middleware(AuthContextMiddleware),
        ],
        lifespan=lifespan,
    )


def serve_http(
    memory: Memory,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    log_level: str = "warning",
    toolset: str = "substrate",
    inspector: bool = False,
    freeze_heap: bool = False,
    allowed_hosts: Sequence[str] = (),
    describe: str = "",
) -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` until SIGTERM/SIGINT.

    Closes ``memory`` (its store) on the way out. ``describe`` is added to the start-up line,
    printed once the port is held (a busy port is a ``ValidationError`` instead). ``freeze_heap``: once the app is built, move
    every object alive out of the collector's full passes (``memory_substrate.heap``; what
    ``memory-substrate serve`` asks for: it owns its process).
    """
    try:
        public_line = public_bind_check(memory.store, host)
    except ValidationError:
        memory.close()
        raise
    app = build_app(
        memory,
        host=host,
        max_body_bytes=max_body_bytes,
        toolset=toolset,
        inspector=inspector,
        allowed_hosts=allowed_hosts,
    )
    if freeze_heap:
        freeze_long_lived()

    def announce() -> None:
        extra = f" {describe}" if describe else ""
        print(
            f"memory-substrate: serving MCP on http://{url_host(host)}:{port}{MCP_PATH}{extra} ({STOP_HINT})",
            file=sys.stderr,
            flush=True,
        )
        if public_line:
            print(public_line, file=sys.stderr, flush=True)

    try:
        run_uvicorn(app, bind_address(host), port, announce=announce, log_level=log_level, lifespan="on")
    finally:
        memory.close()

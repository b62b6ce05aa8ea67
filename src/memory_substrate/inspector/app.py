"""The inspector: a read-only web UI over one store, server-rendered with Starlette + Jinja2.

Access. Standalone (``memory-substrate inspect``) it binds to 127.0.0.1 and shows every
namespace of the store. With ``require_token`` (``inspect --require-token``, or mounted beside
the HTTP transport) it accepts the HTTP transport's bearer tokens: a token is bound to one
namespace, and the inspector shows that namespace only. A browser signs in through a form that
sets the token in an HttpOnly, SameSite=Strict cookie; scripts may send ``Authorization: Bearer``.
A request without a valid token gets 401 and the sign-in form; a namespace the token does not
cover answers 404, as if it did not exist.

Every route is a GET (plus the sign-in POST, which only sets a cookie); page handlers are plain
functions, so Starlette runs their blocking store reads in its thread pool.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from memory_substrate.app import Memory
from memory_substrate.bearer import hash_token
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.hosts import HostRule, TrustedHosts, bind_address, url_host
from memory_substrate.inspector import data
from memory_substrate.inspector.health_cache import HealthCache
from memory_substrate.inspector.views import PageContext
from memory_substrate.reader_text import visible
from memory_substrate.taxonomy import ENTITY_TYPES
from memory_substrate.validation import is_namespace

HERE = Path(__file__).parent
COOKIE = "ms_inspect_token"
CYTOSCAPE = "vendor/cytoscape-3.34.4.min.js"
NAMESPACES_TTL_S = 5.0
# Its own default port, beside the HTTP transport's 8765, so that both can run at once.
DEFAULT_PORT = 8766
SECURITY_HEADERS = {
    # Everything is served from the package: no script, style or image from elsewhere.
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class Inspector:
    """Routes and access rules around one ``Memory`` (its store; namespaces are views of it)."""

    def __init__(self, memory: Memory, *, require_token: bool, root_path: str = "") -> None:
        self.memory = memory
        self.health_cache = HealthCache(data.HEALTH_ITEMS)  # graph health, reused until the store changes
        self.require_token = require_token
        self.root_path = root_path.rstrip("/")
        # Autoescape every template: stored text (titles, segments, payloads) is untrusted HTML;
        # and every value printed shows its invisible controls (bidi overrides, zero-width
        # characters) as [U+202E], so none reorders or hides what the page shows.
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True, finalize=_shown
        )
        self.templates = Jinja2Templates(env=env)
        self.templates.env.globals.update(
            url=self.url, quote=quote, dims=data.RANK_DIMENSIONS, cytoscape=CYTOSCAPE
        )
        self._views: dict[str, Memory] = {}
        self._namespaces: tuple[float, list[str]] | None = None

    # --- access ---------------------------------------------------------------------------
    def url(self, path: str) -> str:
        return f"{self.root_path}{path}"

    def _token(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            return header[7:].strip() or None
        return request.cookies.get(COOKIE) or None

    def allowed(self, request: Request) -> list[str] | None:
        """Namespaces this request may see; None when no valid token was shown but one is needed."""
        if not self.require_token:
            now = time.monotonic()
            if self._namespaces is None or self._namespaces[0] < now:
                # Listing namespaces scans every object's key; a few seconds of staleness is fine.
                self._namespaces = (
                    now + NAMESPACES_TTL_S,
                    self.memory.store.namespaces() or [self.memory.namespace],
                )
            return self._namespaces[1]
        token = self._token(request)
        if not token:
            return None
        ns = self.memory.store.namespace_for_token(hash_token(token))
        return [ns] if ns else None

    def view(self, namespace: str) -> Memory:
        mem = self._views.get(namespace)
        if mem is None:
            mem = self.memory if namespace == self.memory.namespace else self.memory.for_namespace(namespace)
            self._views[namespace] = mem
        return mem

    # --- responses ------------------------------------------------------------------------
    def render(
        self, request: Request, template: str, /, *, status_code: int = 200, **ctx: object
    ) -> Response:
        ctx.setdefault("ns", None)
        ctx.setdefault("namespaces", [])
        ctx["elapsed_ms"] = round((time.perf_counter() - request.state.started) * 1000, 1)
        resp = self.templates.TemplateResponse(request, template, ctx, status_code=status_code)
        resp.headers.update(SECURITY_HEADERS)
        return resp

    def refuse(self, request: Request, message: str = "") -> Response:
        if request.url.path.startswith(self.url("/api/")) or "/api/" in request.url.path:
            return JSONResponse(
                {"error": {"code": "unauthorized", "message": "a valid token is required"}}, 401
            )
        return self.render(request, "login.html", status_code=401, message=message)

    def not_found(
        self, request: Request, what: str, namespaces: list[str] | None = None, ns: str | None = None
    ) -> Response:
        return self.render(
            request, "not_found.html", status_code=404, what=what, namespaces=namespaces or [], ns=ns
        )

    # A handler's third argument is the namespace's ``Memory`` under /ns/, and ``None`` for the
    # home page: no one parameter type accepts both kinds of handler.
    def page(self, handler: Callable[[Request, list[str], Any], Response]) -> Callable[[Request], Response]:
        """Wrap a page handler: timing, the access check, the namespace check, error pages."""

        def endpoint(request: Request) -> Response:
            request.state.started = time.perf_counter()
            allowed = self.allowed(request)
            if allowed is None:
                return self.refuse(request)
            ns = request.path_params.get("ns")
            if ns is not None and (not is_namespace(ns) or ns not in allowed):  # the one rule (validation.py)
                return self.not_found(request, f"namespace {ns}", allowed)
            try:
                return handler(request, allowed, self.view(ns) if ns is not None else None)
            except MemorySubstrateError as exc:
                return self.render(
                    request, "error.html", status_code=400, ns=ns, namespaces=allowed, error=exc.to_dict()
                )

        return endpoint

    # --- pages ----------------------------------------------------------------------------
    def home(self, request: Request, allowed: list[str], _: Memory | None) -> Response:
        if len(allowed) == 1:
            return RedirectResponse(self.url(f"/ns/{quote(allowed[0], safe='')}/"), status_code=303)
        return self.render(request, "home.html", namespaces=allowed)

    def _ctx(self, request: Request, allowed: list[str], mem: Memory, page: str) -> PageContext:
        return {
            "ns": mem.namespace,
            "namespaces": allowed,
            "active": page,
            "base": self.url(f"/ns/{quote(mem.namespace, safe='')}"),
        }

    def overview(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        return self.render(
            request, "overview.html", **self._ctx(request, allowed, mem, "overview"), o=data.overview(mem)
        )

    def health(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        rep = self.health_cache.get(mem, refresh=request.query_params.get("refresh") == "1")
        return self.render(
            request,
            "health.html",
            **self._ctx(request, allowed, mem, "overview"),
            r=rep,
            json=data.pretty(rep["graph_health"]),
        )

    def search(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        q = request.query_params.get("q", "").strip()
        unit = "segment" if request.query_params.get("unit") == "segment" else "object"
        res = data.search(mem, q, unit) if q else None
        return self.render(
            request, "search.html", **self._ctx(request, allowed, mem, "search"), q=q, unit=unit, res=res
        )

    def entities(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        etype = request.query_params.get("type") or None
        if etype not in ENTITY_TYPES:
            etype = None
        name = request.query_params.get("name", "").strip() or None
        rows = data.entities(mem, etype, name)
        return self.render(
            request,
            "entities.html",
            **self._ctx(request, allowed, mem, "entities"),
            rows=rows,
            types=ENTITY_TYPES,
            etype=etype,
            name=name or "",
        )

    def entity(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        found = data.entity(mem, request.path_params["id"])
        if found is None:
            return self.not_found(request, f"entity {request.path_params['id']}", allowed, mem.namespace)
        return self.render(request, "entity.html", **self._ctx(request, allowed, mem, "entities"), e=found)

    def graph(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        asked = request.query_params.get("id", "").strip()
        if asked and not data.exists(mem, asked):  # drawn, it would be a lone "missing" node
            return self.not_found(request, f"object {asked}", allowed, mem.namespace)
        focus = asked or data.default_focus(mem)
        depth = 2 if request.query_params.get("depth") == "2" else 1
        return self.render(
            request, "graph.html", **self._ctx(request, allowed, mem, "graph"), focus=focus, depth=depth
        )

    def graph_json(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        asked = request.query_params.get("id", "").strip()
        if asked and not data.exists(mem, asked):
            return JSONResponse(
                {"error": {"code": "memory_not_found", "message": f"object {asked} not found"}},
                404,
                headers=SECURITY_HEADERS,
            )
        focus = asked or data.default_focus(mem)
        if not focus:
            return JSONResponse({"focus": None, "nodes": [], "edges": [], "truncated": False})
        depth = 2 if request.query_params.get("depth") == "2" else 1
        resp = JSONResponse(data.neighbourhood(mem, focus, depth))
        resp.headers.update(SECURITY_HEADERS)
        return resp

    def obj(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        oid = request.path_params["id"]
        if oid.startswith("ent:"):
            return RedirectResponse(
                self.url(f"/ns/{quote(mem.namespace, safe='')}/entity/{quote(oid, safe=':')}"), 303
            )
        if oid.startswith("src:"):
            return RedirectResponse(
                self.url(f"/ns/{quote(mem.namespace, safe='')}/source/{quote(oid, safe=':')}"), 303
            )
        found = data.object_detail(mem, oid)
        if found is None:
            return self.not_found(request, f"object {oid}", allowed, mem.namespace)
        return self.render(request, "object.html", **self._ctx(request, allowed, mem, ""), d=found)

    def sources(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        page = _int(request.query_params.get("page"))
        return self.render(
            request, "sources.html", **self._ctx(request, allowed, mem, "sources"), d=data.sources(mem, page)
        )

    def source(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        page = _int(request.query_params.get("page"))
        found = data.source(mem, request.path_params["id"], page)
        if found is None:
            return self.not_found(request, f"source {request.path_params['id']}", allowed, mem.namespace)
        return self.render(request, "source.html", **self._ctx(request, allowed, mem, "sources"), d=found)

    def log(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        return self.render(request, "log.html", **self._ctx(request, allowed, mem, "log"), d=data.log(mem))

    def traces(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        kind = "extraction" if request.query_params.get("kind") == "extraction" else "compile"
        return self.render(
            request,
            "traces.html",
            **self._ctx(request, allowed, mem, "traces"),
            kind=kind,
            rows=data.traces(mem, kind),
        )

    def trace(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        found = data.trace(mem, request.path_params["id"])
        if found is None:
            return self.not_found(request, f"trace {request.path_params['id']}", allowed, mem.namespace)
        return self.render(request, "trace.html", **self._ctx(request, allowed, mem, "traces"), d=found)

    def procedures(self, request: Request, allowed: list[str], mem: Memory) -> Response:
        return self.render(
            request,
            "procedures.html",
            **self._ctx(request, allowed, mem, "procedures"),
            rows=data.procedures(mem),
        )

    # --- sign-in -----------------------------------------------------------------------------
    async def login(self, request: Request) -> Response:
        request.state.started = time.perf_counter()
        if request.method == "GET":
            return self.render(request, "login.html")
        origin = request.headers.get("origin")
        if origin and origin.rstrip("/") != f"{request.url.scheme}://{request.url.netloc}":
            # A sign-in posted from another site (login CSRF) would sign the browser into that site's token.
            return self.render(request, "login.html", status_code=403, message="Sign in from this page.")
        form = await request.form()
        token = str(form.get("token", "")).strip()
        from starlette.concurrency import run_in_threadpool

        ns = (
            await run_in_threadpool(self.memory.store.namespace_for_token, hash_token(token))
            if token
            else None
        )
        if ns is None:
            return self.render(request, "login.html", status_code=401, message="That token is not valid.")
        resp = RedirectResponse(self.url(f"/ns/{quote(ns, safe='')}/"), status_code=303)
        resp.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=self.url("/") or "/",
        )
        return resp

    def logout(self, request: Request) -> Response:
        resp = RedirectResponse(self.url("/login"), status_code=303)
        resp.delete_cookie(COOKIE, path=self.url("/") or "/")
        return resp

    def routes(self) -> list[BaseRoute]:
        p = self.page
        ns = "/ns/{ns}"
        return [
            Route("/", p(self.home)),
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", self.logout, methods=["GET"]),
            Route(f"{ns}/", p(self.overview)),
            Route(f"{ns}/health", p(self.health)),
            Route(f"{ns}/search", p(self.search)),
            Route(f"{ns}/entities", p(self.entities)),
            Route(f"{ns}/entity/{{id:path}}", p(self.entity)),
            Route(f"{ns}/graph", p(self.graph)),
            Route(f"{ns}/api/graph", p(self.graph_json)),
            Route(f"{ns}/object/{{id:path}}", p(self.obj)),
            Route(f"{ns}/sources", p(self.sources)),
            Route(f"{ns}/source/{{id:path}}", p(self.source)),
            Route(f"{ns}/log", p(self.log)),
            Route(f"{ns}/traces", p(self.traces)),
            Route(f"{ns}/trace/{{id:path}}", p(self.trace)),
            Route(f"{ns}/procedures", p(self.procedures)),
            Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
        ]


def _shown(value: object) -> object:
    """A value as a template prints it, invisible controls made visible (reader_text.visible)."""
    if isinstance(value, Markup):
        return Markup(visible(str(value)))  # ASCII markers only: the markup stays as safe as it was
    if value is None or isinstance(value, (bool, int, float, jinja2.Undefined)):
        return value
    return visible(str(value))


def _int(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


def build_inspector(
    memory: Memory,
    *,
    require_token: bool = False,
    root_path: str = "",
    host: str | None = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
) -> Starlette:
    """The inspector as an ASGI app. ``root_path`` is where it is mounted ("" standalone,
    "/inspect" beside the HTTP transport). The caller owns ``memory`` (and closes it).

    Requests whose Host names neither ``host`` (the bound address) nor one of ``allowed_hosts``
    and the settings' ``allowed_hosts`` get 421 (hosts.py); ``host=None`` leaves that check to
    the app it is mounted in."""
    inspector = Inspector(memory, require_token=require_token, root_path=root_path)
    if host is None:
        return Starlette(routes=inspector.routes())
    rule = HostRule(host, [*memory.settings.allowed_hosts, *allowed_hosts])
    return Starlette(routes=inspector.routes(), middleware=[Middleware(TrustedHosts, rule=rule)])


def serve_inspector(
    memory: Memory,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    require_token: bool = False,
    log_level: str = "warning",
    freeze_heap: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the inspector until stopped (Ctrl-C or SIGTERM); closes ``memory`` on the way out.
    ``freeze_heap``: as ``mcp.http.serve_http``'s (``memory-substrate inspect`` asks for it)."""
    import sys

    from memory_substrate.heap import freeze_long_lived
    from memory_substrate.process import STOP_HINT, run_uvicorn

    app = build_inspector(memory, require_token=require_token, host=host, allowed_hosts=allowed_hosts)
    if freeze_heap:
        freeze_long_lived()  # long-lived objects out of the collector's full passes (memory_substrate.heap)

    def announce() -> None:
        print(
            f"memory-substrate: inspector on http://{url_host(host)}:{port}/ ({STOP_HINT})",
            file=sys.stderr,
            flush=True,
        )

    try:
        run_uvicorn(app, bind_address(host), port, announce=announce, log_level=log_level)
    finally:
        memory.close()

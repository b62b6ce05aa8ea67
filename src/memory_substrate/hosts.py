"""Which Host names a served HTTP surface answers to: one rule for /mcp, /healthz and the inspector.

DNS rebinding: a page on ``attacker.example`` whose name the attacker then points at 127.0.0.1
makes the victim's browser send requests to this server, same-origin as far as the browser
knows, with ``Host: attacker.example``. Refusing every Host the server was not meant to answer
to stops it. A request is answered when its Host (and its Origin, when a browser sends one)
names:

- the bound address itself (any port: a port mapping or proxy may change it);
- for a loopback bind, any loopback address or ``localhost``;
- for a wildcard bind (``0.0.0.0``, ``::``), any address literal or ``localhost``: a literal
  address cannot be rebound, and the interfaces such a bind answers on are not known here;
- a configured name (``--allowed-host``, ``MEMORY_SUBSTRATE_ALLOWED_HOSTS``): ``name`` admits
  every port, ``name:port`` that port only.

Anything else gets 421 Misdirected Request (403 for a foreign Origin), before any route runs.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOCAL_NAMES = ("localhost", "localhost.")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (a name that is not loopback counts as public)."""
    if host.strip().lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def bind_address(host: str) -> str:
    """``host`` as a socket binds it: ``[::1]`` (the URL spelling) is ``::1``."""
    host = host.strip()
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def url_host(host: str) -> str:
    """``host`` as a URL spells it: IPv6 addresses in brackets."""
    bare = bind_address(host)
    return f"[{bare}]" if ":" in bare else bare


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a Host header or ``--allowed-host`` entry; host lower-cased, without
    brackets or a trailing dot. None when it cannot be a host."""
    value = value.strip().lower()
    if not value:
        return None
    port: str | None = None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                return None
            port = rest[1:]
    elif value.count(":") == 1:
        host, port = value.split(":")
    elif ":" in value:  # a bare IPv6 address (only an allowlist entry may be written so)
        host = value
    else:
        host = value
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
        return None
    host = host.rstrip(".")
    return (host, int(port) if port is not None else None) if host else None


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class HostRule:
    """The hosts one server answers to (see the module docstring)."""

    def __init__(self, bound: str, names: Iterable[str] = ()) -> None:
        self.bound = bind_address(bound).lower().rstrip(".")
        self.names = [entry for entry in (split_host(n) for n in names) if entry is not None]
        self.bound_address = _address(self.bound)
        self.local = is_loopback(self.bound) or (
            self.bound_address is not None and self.bound_address.is_unspecified
        )

    def trusts(self, value: str | None) -> bool:
        """Whether a request whose Host header is ``value`` is meant for this server."""
        parsed = split_host(value or "")
        if parsed is None:
            return False
        host, port = parsed
        if any(host == name and (want is None or want == port) for name, want in self.names):
            return True
        address = _address(host)
        if self.local and (host in LOCAL_NAMES or (address is not None and address.is_loopback)):
            return True
        if address is not None and self.bound_address is not None:
            return self.bound_address.is_unspecified or address == self.bound_address
        return host == self.bound

    def describe(self) -> str:
        names = ", ".join(f"{n}:{p}" if p else n for n, p in self.names) or "none"
        return f"its bound address ({url_host(self.bound)}) and the configured names ({names})"


class TrustedHosts:
    """ASGI middleware: 421 for a request whose Host this server does not answer to, 403 for a
    browser request from a foreign Origin."""

    def __init__(self, app: ASGIApp, rule: HostRule) -> None:
        self.app = app
        self.rule = rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not self.rule.trusts(host):
            response = PlainTextResponse(
                f"Misdirected request: this server does not answer to the host {host!r}; it answers to "
                f"{self.rule.describe()}. Add a name with --allowed-host (docs/security.md).",
                status_code=421,
            )
            await response(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and not self.rule.trusts(urlsplit(origin).netloc if "://" in origin else None):
            response = PlainTextResponse(
                f"Forbidden: requests from the origin {origin!r} are refused.", status_code=403
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

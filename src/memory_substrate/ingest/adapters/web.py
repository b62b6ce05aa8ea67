"""``web`` capture: fetch one page and keep its main text as line-addressed chunks.

The fetch is guarded against server-side request forgery: every hop (the first URL and
each redirect) is resolved, all of its addresses must be public unless ``allow_private``,
and the connection then goes to the address that was checked (Host header and TLS SNI
keep the name), so a DNS answer that changes between check and connect is not followed.
One deadline (``timeout_s``) covers the whole fetch: every lookup, connect, redirect hop and
the body (deadline.py).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory_substrate.ingest.adapters import deadline as deadlines
from memory_substrate.ingest.adapters._files import sha256_hex
from memory_substrate.ingest.adapters.chunker import CHUNKER_NAME, ChunkLimits, chunk_markdown, chunk_text
from memory_substrate.ingest.adapters.errors import CaptureError, missing_dependency
from memory_substrate.ingest.adapters.html_text import decode_html, extract_main_text
from memory_substrate.ingest.adapters.secret_files import scan_text
from memory_substrate.ingest.captured import CapturedSegment, CapturedSource
from memory_substrate.json_types import JsonObject

DEFAULT_TIMEOUT_S = 15.0
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_REDIRECTS = 5
USER_AGENT = "memory-substrate/0.1 (+evidence capture)"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
_TRANSFORMATIONS = ["http_fetch", "main_text_extraction", "redact_secrets", CHUNKER_NAME]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _httpx() -> Any:
    # mcp 2.x already installs httpx2 (the maintained fork, same API); plain httpx also works.
    try:
        import httpx2

        return httpx2
    except ImportError:
        try:
            import httpx
        except ImportError as exc:
            raise missing_dependency("httpx", "web capture") from exc
        return httpx


def is_blocked_address(ip: IPAddress) -> bool:
    """True for loopback, private, link-local, shared, reserved, multicast and unspecified addresses."""
    # ::ffff:127.0.0.1 and 64:ff9b::/96 (NAT64) would otherwise smuggle IPv4 targets through.
    ip = _unmapped(ip)
    return not ip.is_global or ip.is_multicast


def _unmapped(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in ipaddress.IPv6Network("64:ff9b::/96"):
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


WEB_PORTS = (80, 443)


def _entry_port(entry: str) -> tuple[str, tuple[int, ...]]:
    """An allowlist entry's host part and the ports it admits: its own (``10.1.2.3:8080``,
    ``[fd00::1]:8080``, ``wiki.corp:8080``), else the web's ports 80 and 443 only."""
    entry = entry.strip()
    if entry.startswith("["):
        inner, _, rest = entry[1:].partition("]")
        if rest.startswith(":") and rest[1:].isdigit():
            return inner, (int(rest[1:]),)
        return inner, WEB_PORTS
    head, sep, tail = entry.rpartition(":")
    if sep and tail.isdigit() and ":" not in head:  # a bare IPv6 address has several colons
        return head, (int(tail),)
    return entry, WEB_PORTS


def allowlisted(ip: IPAddress, host: str, allow: tuple[str, ...], port: int | None = None) -> bool:
    """Whether a non-public ``ip`` that ``host`` resolved to may be fetched on ``port`` under ``allow``.

    An address or CIDR entry admits the addresses inside it, whatever name led there. A name
    entry ("wiki.corp", or ".corp" for every name under it) admits only private-network
    addresses (RFC 1918, unique local): never loopback, link-local (cloud metadata),
    unspecified or multicast, so a name cannot be pointed at the server itself. An entry admits
    the port it names ("10.1.2.3:8080"), else only 80 and 443: a bare address never admits the
    other services on it, this server's own port among them. ``port`` None: ports not checked.
    """
    ip = _unmapped(ip)
    name = host.lower().rstrip(".")
    for raw in allow:
        entry, ports = _entry_port(raw)
        if port is not None and port not in ports:
            continue
        try:
            net = ipaddress.ip_network(entry.strip("[]"), strict=False)
        except ValueError:
            net = None
        if net is not None:
            if ip.version == net.version and ip in net:
                return True
            continue
        want = entry.strip().lower().rstrip(".")
        bare = want.lstrip("*.")
        named = name == bare or (want.startswith((".", "*.")) and name.endswith("." + bare))
        if (
            named
            and ip.is_private
            and not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)
        ):
            return True
    return False


def resolve_host(
    host: str,
    port: int,
    *,
    allow_private: bool,
    allow: tuple[str, ...] = (),
    deadline: deadlines.Deadline | None = None,
) -> list[str]:
    """Addresses for ``host`` in resolver order; raises ``web_blocked_address`` if any is non-public
    and not admitted by ``allow`` (see ``allowlisted``)."""
    try:
        literal: IPAddress | None = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    name = host.lower().rstrip(".")
    if literal is not None:
        addrs = [literal]
    elif not allow_private and not allow and (name == "localhost" or name.endswith(".localhost")):
        # RFC 6761: always loopback, whatever a resolver (or its absence) says.
        raise CaptureError(
            "web_blocked_address", f"{host} is a loopback name; refused", details={"host": host}
        )
    else:
        try:
            if deadline is None:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            else:
                infos = deadline.getaddrinfo(host, port)
        except deadlines.DeadlineExpired:
            raise CaptureError("web_fetch_failed", f"timed out resolving {host}") from None
        except (OSError, UnicodeError) as exc:
            raise CaptureError("web_fetch_failed", f"cannot resolve {host}: {exc}") from None
        addrs = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))
    if not allow_private:
        # Any bad answer blocks the host: a mixed answer is how rebinding attacks start.
        bad = [str(a) for a in addrs if is_blocked_address(a) and not allowlisted(a, host, allow, port)]
        if bad:
            raise CaptureError(
                "web_blocked_address",
                f"{host} resolves to a non-public address ({', '.join(bad)}); refused on port {port} (an "
                "allowlist entry admits ports 80 and 443 unless it names one, e.g. 10.1.2.3:8080)",
                details={"host": host, "addresses": bad, "port": port},
            )
    return [str(a) for a in addrs]


@dataclass
class _Fetched:
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    redirects: list[str]


def _fetch(
    url: str,
    *,
    timeout_s: float,
    max_bytes: int,
    allow_private: bool,
    max_redirects: int,
    allow: tuple[str, ...] = (),
) -> _Fetched:
    httpx = _httpx()
    deadline = deadlines.Deadline(timeout_s)
    redirects: list[str] = []
    current = url
    with deadlines.client(
        httpx, deadline, follow_redirects=False, headers={"User-Agent": USER_AGENT}
    ) as client:
        for _hop in range(max_redirects + 1):
            try:
                target = httpx.URL(current)
            except Exception as exc:  # httpx raises several types for unparseable URLs
                raise CaptureError("web_invalid_url", f"not a valid URL: {current!r} ({exc})") from None
            if target.scheme not in ("http", "https") or not target.host:
                raise CaptureError(
                    "web_invalid_url", f"only absolute http(s) URLs can be captured: {current!r}"
                )
            port = target.port or (443 if target.scheme == "https" else 80)
            addresses = resolve_host(
                target.host, port, allow_private=allow_private, allow=allow, deadline=deadline
            )
            response = _send(client, httpx, target, addresses, timeout_s)
            try:
                location = response.headers.get("location")
                if response.status_code in (301, 302, 303, 307, 308) and location:
                    current = _redirect_target(target, location, current)
                    redirects.append(current)
                    continue
                if response.status_code >= 400:
                    raise CaptureError(
                        "web_fetch_failed",
                        f"{current} answered HTTP {response.status_code}",
                        details={"status": response.status_code},
                    )
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if ctype and ctype not in _HTML_TYPES | _TEXT_TYPES:
                    raise CaptureError("web_unsupported_content", f"{current} is {ctype}, not HTML or text")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise CaptureError("web_too_large", f"{current} is {declared} bytes, over {max_bytes}")
                body = _read_capped(response, httpx, current, max_bytes, deadline)
                return _Fetched(
                    current, response.status_code, ctype, response.charset_encoding, body, redirects
                )
            finally:
                response.close()
    raise CaptureError("web_fetch_failed", f"more than {max_redirects} redirects from {url}")


def _redirect_target(target: Any, location: str, current: str) -> str:
    """The absolute URL a redirect names; one httpx cannot parse (an IPv4 address in octal,
    ``0177.0.0.2``) is refused as the same URL given directly would be."""
    try:
        return str(target.join(location))
    except Exception as exc:  # httpx raises several types for unparseable URLs
        raise CaptureError(
            "web_invalid_url",
            f"{current} redirected to an invalid URL: {location!r} ({exc})",
            details={"location": location},
        ) from None


def _send(client: Any, httpx: Any, target: Any, addresses: list[str], timeout_s: float) -> Any:
    """Connect to a vetted address (the next one if it refuses), keeping the name for Host/SNI."""
    last: Exception | None = None
    for address in addresses:
        request = client.build_request(
            "GET",
            target.copy_with(host=address),
            headers={"Host": target.netloc.decode("ascii")},
            extensions={"sni_hostname": target.host} if target.scheme == "https" else {},
        )
        try:
            return client.send(request, stream=True)
        except httpx.ConnectError as exc:
            last = exc
        except httpx.TimeoutException:
            raise CaptureError(
                "web_fetch_failed",
                f"timed out fetching {target}: the whole fetch, redirects included, has {timeout_s:g} s",
                details={"timeout_s": timeout_s},
            ) from None
        except httpx.HTTPError as exc:
            raise CaptureError("web_fetch_failed", f"could not fetch {target}: {exc}") from None
    raise CaptureError("web_fetch_failed", f"could not connect to {target.host}: {last}")


def _read_capped(response: Any, httpx: Any, url: str, max_bytes: int, deadline: deadlines.Deadline) -> bytes:
    # Content-Length can lie or be absent; the cap is enforced on the bytes actually read.
    parts: list[bytes] = []
    size = 0
    try:
        for piece in response.iter_bytes():
            size += len(piece)
            if size > max_bytes:
                raise CaptureError("web_too_large", f"{url} sent more than {max_bytes} bytes")
            if deadline.left() <= 0:
                raise CaptureError("web_fetch_failed", f"timed out reading {url}")
            parts.append(piece)
    except httpx.TimeoutException:
        raise CaptureError(
            "web_fetch_failed",
            f"timed out reading {url}: the whole fetch, redirects included, has {deadline.seconds:g} s",
            details={"timeout_s": deadline.seconds},
        ) from None
    except httpx.HTTPError as exc:
        raise CaptureError("web_fetch_failed", f"error reading {url}: {exc}") from None
    return b"".join(parts)


def capture_web(
    url: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_bytes: int = DEFAULT_MAX_BYTES,
    allow_private: bool = False,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    limits: ChunkLimits | None = None,
    allow: tuple[str, ...] | list[str] = (),
) -> CapturedSource:
    """Fetch ``url`` (following redirects) and capture the page's main text.

    Segments are chunks of the extracted text with ``{"kind": "line", "url", ...}`` locators.
    Raises ``CaptureError``: ``web_invalid_url``, ``web_blocked_address`` (a hop resolves to a
    non-public address and ``allow_private`` is false), ``web_fetch_failed`` (DNS, connect,
    timeout, HTTP >= 400, too many redirects), ``web_too_large``, ``web_unsupported_content``
    or ``web_no_text``.
    """
    fetched = _fetch(
        url,
        timeout_s=timeout_s,
        max_bytes=max_bytes,
        allow_private=allow_private,
        max_redirects=max_redirects,
        allow=tuple(allow),
    )
    text_body = decode_html(fetched.body, fetched.charset)
    looks_html = fetched.content_type in _HTML_TYPES or (
        not fetched.content_type and "<html" in text_body[:2048].lower()
    )
    if looks_html:
        extracted = extract_main_text(text_body, fetched.final_url)
        text, title, extractor, markdown = extracted.text, extracted.title, extracted.extractor, True
    else:
        text, title, extractor = text_body.strip(), None, "plain_text"
        markdown = fetched.content_type in ("text/markdown", "text/x-markdown")
    if not text.strip():
        raise CaptureError("web_no_text", f"no readable text at {fetched.final_url}")
    scan = scan_text(text, fetched.final_url)
    chunker = chunk_markdown if markdown else chunk_text
    chunks = chunker(scan.text, fetched.final_url, limits=limits)
    segments = []
    for i, c in enumerate(chunks):
        locator = {k: v for k, v in c.locator().items() if k != "path"}
        locator["url"] = fetched.final_url
        meta: JsonObject = {"chunk_kind": c.chunk_kind, "chunk_index": i, "chunker": CHUNKER_NAME}
        segments.append(CapturedSegment(text=c.text, locator=locator, metadata=meta))
    content_hash = sha256_hex(fetched.body)
    return CapturedSource(
        kind="web",
        title=title or fetched.final_url,
        uri=url,
        fingerprint=sha256_hex(scan.text.encode("utf-8")),
        payload={
            "url": url,
            "final_url": fetched.final_url,
            "redirects": fetched.redirects,
            "title": title,
            "fetched_at": datetime.now(UTC).isoformat(),
            "status_code": fetched.status,
            "content_type": fetched.content_type,
            "content_hash": content_hash,
            "size_bytes": len(fetched.body),
            "extractor": extractor,
            "text_line_count": len(scan.text.split("\n")),
        },
        segments=segments,
        metadata={"redacted": scan.redacted, "allow_private": allow_private},
        withheld=scan.withheld,
        adapter_name="web_adapter",
        declared_transformations=list(_TRANSFORMATIONS),
        text_scanned=True,
        origin_classification="web",
    )

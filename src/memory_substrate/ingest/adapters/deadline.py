"""One deadline over a whole web fetch: DNS, connect, TLS, every redirect hop and the body.

httpx's timeouts bound each socket operation, not the request: a chain of redirects that each
answer just inside the timeout, or a server that sends one byte per read, would hold the
capture's worker for (hops + 1) x timeout or longer. Here every socket operation is given only
what is left of one deadline, so a fetch ends by its deadline whatever the server does.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

try:
    import httpcore2 as httpcore
except ImportError:  # plain httpx brings httpcore
    import httpcore  # type: ignore[no-redef]

# getaddrinfo cannot be interrupted; lookups run here so the caller can stop waiting at the
# deadline. Bounded: hung lookups queue behind each other rather than growing threads, and 16
# is four namespaces' worth of captures at the bulkhead's default (mcp/bulkhead.py).
_DNS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="memory-substrate-dns")


class DeadlineExpired(TimeoutError):
    """The fetch's deadline passed."""


class Deadline:
    """A point in time every step of one fetch must finish by."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def bound(self, timeout: float | None, expired: type[Exception] = DeadlineExpired) -> float:
        """``timeout`` cut to what is left; raises ``expired`` when nothing is."""
        left = self.left()
        if left <= 0:
            raise expired("deadline passed")
        return left if timeout is None else min(timeout, left)

    def getaddrinfo(self, host: str, port: int) -> list[Any]:
        """``socket.getaddrinfo`` for a stream socket, given up on at the deadline."""
        future = _DNS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            return future.result(timeout=self.bound(None))
        except FutureTimeout:
            future.cancel()
            raise DeadlineExpired(f"resolving {host} passed the deadline") from None


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: Any, deadline: Deadline) -> None:
        self.inner = inner
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self.inner.read(max_bytes, self.deadline.bound(timeout, httpcore.ReadTimeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.deadline.bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        bounded = self.deadline.bound(timeout, httpcore.ConnectTimeout)
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, bounded), self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, deadline: Deadline) -> None:
        self.inner = httpcore.SyncBackend()
        self.deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = self.deadline.bound(timeout, httpcore.ConnectTimeout)
        stream = self.inner.connect_tcp(host, port, bounded, local_address, socket_options)
        return _Stream(stream, self.deadline)

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, max(self.deadline.left(), 0.0)))


def client(httpx: Any, deadline: Deadline, **kwargs: Any) -> Any:
    """An ``httpx.Client`` whose every socket operation ends by ``deadline``."""
    made = httpx.Client(timeout=httpx.Timeout(deadline.seconds), trust_env=False, **kwargs)
    transport = made._transport
    # httpx takes no network backend; its transport's pool does (httpcore's public API), so the
    # pool is rebuilt with the same TLS context around the deadline-bound backend.
    pool = getattr(transport, "_pool", None)
    if not isinstance(pool, httpcore.ConnectionPool):
        raise RuntimeError("this httpx has no connection pool to bound by a deadline")
    transport._pool = httpcore.ConnectionPool(
        ssl_context=pool._ssl_context, network_backend=_Backend(deadline)
    )
    return made

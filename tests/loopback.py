"""Serve a stub HTTP handler on loopback for the length of a test (stub servers that speak a real protocol)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serve_loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Yield ``http://127.0.0.1:<port>`` while ``handler`` serves there; shut down cleanly after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

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


def send_redirect(handler: BaseHTTPRequestHandler, location: str, status: int = 302) -> None:
    """Answer ``handler``'s request with a redirect to ``location`` and no body."""
    handler.send_response(status)
    handler.send_header("Location", location)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def send_page(
    handler: BaseHTTPRequestHandler, body: bytes, content_type: str = "text/html; charset=utf-8"
) -> None:
    """Answer ``handler``'s request with 200 and ``body``."""
    handler.send_response(200)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)

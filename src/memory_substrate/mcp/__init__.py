"""The spec-001 MCP toolset (``server.py``) and its streamable-HTTP transport with bearer tokens (``http.py``)."""

"""The MCP toolsets (``server.py``) and their streamable-HTTP transport with bearer tokens (``http.py``)."""

"""The ``memory-substrate`` command line: serve MCP, call any tool mode, manage namespaces, tokens and backends."""

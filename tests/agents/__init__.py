"""Real agent clients (Claude Code, Codex) run offline against loopback stubs of their model APIs."""

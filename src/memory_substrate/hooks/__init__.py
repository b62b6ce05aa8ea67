"""Memory for coding agents through their hooks: capture every session, hand each prompt its context.

``memory-substrate hook claude-code|codex`` runs for every hook event of the client (the event
JSON on stdin, ``events.py``); ``backfill`` imports the transcripts already on disk. Nothing in
this package is imported until a hook or a backfill runs, and each event imports only what it needs.
"""

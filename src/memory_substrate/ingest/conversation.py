"""Conversation capture: one source per conversation, one segment per message, in input order."""

from __future__ import annotations

import hashlib
import json
import uuid

from memory_substrate.ingest.captured import CapturedSegment, CapturedSource
from memory_substrate.ingest.schemas import ConversationInput
from memory_substrate.json_types import JsonObject
from memory_substrate.redaction import Redactions, redact_fields


def capture_conversation(data: ConversationInput) -> CapturedSource:
    # Secrets go first, before anything is hashed: a fingerprint of the text with a short password
    # in it would let whoever reads the store guess the password offline.
    found = Redactions()
    redact_fields(data, found)
    segments = []
    digest = hashlib.sha256()
    prefixes: list[str] = []
    for i, msg in enumerate(data.messages):
        created = msg.created_at.isoformat() if msg.created_at else None
        meta: JsonObject = {
            "role": msg.role,
            "name": msg.name,
            "created_at": created,
            "metadata": msg.metadata,
        }
        segments.append(
            CapturedSegment(text=msg.content, locator={"kind": "message", "index": i}, metadata=meta)
        )
        digest.update(json.dumps([msg.role, msg.name, created, msg.content], ensure_ascii=False).encode())
        prefixes.append(digest.copy().hexdigest())
    origin = data.origin.model_dump() if data.origin else None
    # The thread a later, longer capture of the same conversation is appended to.
    thread = hashlib.sha256(
        json.dumps(
            [data.thread_id or data.title, None if data.thread_id else origin], ensure_ascii=False
        ).encode()
    ).hexdigest()[:32]
    speakers = sorted({m.name or m.role for m in data.messages})
    first = data.messages[0].created_at
    last = data.messages[-1].created_at
    return CapturedSource(
        kind="conversation",
        title=data.title,
        # Each new conversation is its own capture (an episode); a repeat of the same content is a
        # noop and a grown one is appended (ingest/service.py), found by fingerprint and thread keys.
        uri=f"conversation:{uuid.uuid4().hex}",
        fingerprint=digest.hexdigest(),
        payload={
            "message_count": len(data.messages),
            "speakers": speakers,
            "started_at": first.isoformat() if first else None,
            "ended_at": last.isoformat() if last else None,
            "origin": origin,
            **({"thread_id": data.thread_id} if data.thread_id else {}),
        },
        segments=segments,
        metadata={"origin": origin} if origin else {},
        adapter_name="conversation",
        declared_transformations=["split_messages_into_segments", "preserve_message_metadata"],
        origin_classification="agent_conversation",
        prefix_fingerprints=prefixes,
        thread=thread,
        text_scanned=True,
        redactions=found,
    )

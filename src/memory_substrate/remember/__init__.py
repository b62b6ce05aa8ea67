"""memory_remember: governed durable writes (knowledge, activity, work items, extraction, graph snapshots)."""

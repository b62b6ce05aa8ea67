"""memory_maintain: governed upkeep of a namespace (merge, decay, expire, reindex, repair, report, backends)."""

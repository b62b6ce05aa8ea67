"""Portable contracts (spec 003): profile, graph and selection documents, ContextPackages, graph.v1 snapshots."""

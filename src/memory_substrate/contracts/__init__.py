"""Portable contracts: profile, graph and selection documents, ContextPackages, graph.v1 snapshots."""

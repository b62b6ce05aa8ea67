"""The spec-002 graph-memory toolset: Fact and Entity nodes, typed edges, triplets, TTL and
versions, served as an opt-in MCP toolset over the same store and model as spec 001.

docs/graph-toolset.md maps every spec-002 concept onto the one model.
"""

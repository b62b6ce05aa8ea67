"""The graph-memory toolset: Fact and Entity nodes, typed edges, triplets, TTL and versions,
served as an opt-in MCP toolset over the same store and model as the four memory tools.

docs/graph-toolset.md maps every concept of the toolset onto the one model.
"""

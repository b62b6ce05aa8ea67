"""The knowledge graph: entities, temporal facts and procedures, kept as objects of the one model."""

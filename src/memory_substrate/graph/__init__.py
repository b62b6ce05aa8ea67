"""The knowledge graph of spec 004: entities, temporal facts and procedures, kept as objects of the one model."""

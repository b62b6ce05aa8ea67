"""How answers are shaped for a reader: views of objects and segments, excerpts, token fitting,
paging cursors and pruning."""

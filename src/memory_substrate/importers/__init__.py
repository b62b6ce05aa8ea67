"""Importers from the memory tools people already use, and exporters back to their formats."""

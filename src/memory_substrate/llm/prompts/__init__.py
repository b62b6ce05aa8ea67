"""Prompts are code: one module per task, a version string stored with every run."""

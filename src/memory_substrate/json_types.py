"""The type of a JSON object whose shape the code does not fix.

A result whose fields are known is a ``TypedDict`` where it is built (each package's
``results.py``): mypy then checks every key and value, and the wire gets the very dict it got
before, so serialisation cannot drift. ``JsonObject`` is for what has no fixed shape: a memory
object's free-form ``payload`` and ``metadata``, caller input before its pydantic model has
validated it, and a finished result that a surface or a generic pass (pruning by detail level,
cutting a page to its budget) handles by key. Its values are ``object``, not ``Any``: a reader
narrows a value (``isinstance``, a pydantic model) before it relies on its type.
"""

from __future__ import annotations

JsonObject = dict[str, object]

"""Every error code a client can see is listed in docs/errors.md, and is in the memory_ family."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import memory_substrate
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.ingest.adapters.errors import CAPTURE_ERROR_CODES
from memory_substrate.mcp import errors as mcp_errors

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def _all_codes() -> set[str]:
    for info in pkgutil.walk_packages(memory_substrate.__path__, "memory_substrate."):
        try:  # optional integrations may lack their extra here; their errors are still subclasses
            importlib.import_module(info.name)
        except ImportError:
            continue
    codes: set[str] = set()
    stack = [MemorySubstrateError]
    while stack:
        cls = stack.pop()
        codes.add(cls.code)
        stack.extend(cls.__subclasses__())
    codes |= set(CAPTURE_ERROR_CODES)
    codes |= {
        mcp_errors.UNKNOWN_TOOL,
        mcp_errors.INTERNAL_ERROR,
        mcp_errors.TOOL_ERROR,
        mcp_errors.VALIDATION_ERROR,
    }
    codes |= set(
        re.findall(
            r"error \[(memory_[a-z_]+)\]",
            (Path(memory_substrate.__file__).parent / "cli" / "main.py").read_text(),
        )
    )
    return codes


def test_every_code_is_documented_and_in_the_memory_family() -> None:
    from memory_substrate.graphmem.errors import ERROR_CODES as SPEC_002_CODES

    text = DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(memory_[a-z_]+)` \|", text, re.M))
    codes = _all_codes()
    # spec 002 names two codes of its own; they are documented in their own table
    foreign = {c for c in SPEC_002_CODES if not c.startswith("memory_")}
    assert all(f"| `{c}` |" in text for c in foreign)
    codes = (codes | set(SPEC_002_CODES)) - foreign
    assert all(code.startswith("memory_") for code in codes), sorted(
        c for c in codes if not c.startswith("memory_")
    )
    assert codes - documented == set(), f"codes missing from docs/errors.md: {sorted(codes - documented)}"
    assert documented - codes == set(), (
        f"docs/errors.md lists codes nothing raises: {sorted(documented - codes)}"
    )

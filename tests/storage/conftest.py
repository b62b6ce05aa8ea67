"""The ``store`` fixture of the storage contract suite (one per backend, see tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_substrate.storage.base import Store
from memory_substrate.storage.factory import open_store


@pytest.fixture
def store(make_settings: Any) -> Iterator[Store]:
    s = open_store(make_settings())
    try:
        yield s
    finally:
        s.close()

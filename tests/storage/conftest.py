"""Storage unit tests run without a server."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: needs a local PySpark session (slow start)")


@pytest.fixture(autouse=True)
def no_column_cache():
    """Storage tests count pages read and decoded: the decoded-column cache (on by default in a server) is
    off unless a test turns it on (tests/storage/test_column_cache.py)."""
    from storage.segment.column_cache import COLUMNS

    limit = COLUMNS.limit
    COLUMNS.clear()
    COLUMNS.limit = 0
    yield COLUMNS
    COLUMNS.clear()
    COLUMNS.limit = limit

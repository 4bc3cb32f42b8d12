"""The process's DuckDB database: one in-memory instance, one cursor (a connection of its own) per running
statement, so registered Arrow inputs are private to the statement and a statement can be interrupted.

DuckDB's own working memory (hash tables, sorts) is one budget for the whole database: 40% of the
machine's memory, beyond which its operators spill to a temporary folder; what a statement materializes
for its result is bounded per statement by exec_mem_limit (planner/guard.py).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

MEMORY_SHARE = 0.4

_lock = threading.Lock()
_database: duckdb.DuckDBPyConnection | None = None


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def database() -> duckdb.DuckDBPyConnection:
    global _database
    with _lock:
        if _database is None:
            config = {"threads": max(1, os.cpu_count() or 1),
                      "temp_directory": os.path.join(tempfile.gettempdir(), f"dorislite-duckdb-{os.getpid()}")}
            memory = _physical_memory()
            if memory:
                config["memory_limit"] = f"{int(memory * MEMORY_SHARE) // (1 << 20)}MB"
            _database = duckdb.connect(":memory:", config=config)
        return _database


@contextmanager
def cursor() -> Iterator[duckdb.DuckDBPyConnection]:
    cur = database().cursor()
    try:
        yield cur
    finally:
        cur.close()

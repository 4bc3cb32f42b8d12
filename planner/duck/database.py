"""The process's DuckDB database: one in-memory instance, one cursor (a connection of its own) per running
statement, so registered Arrow inputs are private to the statement and a statement can be interrupted.

DuckDB's own working memory (hash tables, sorts) is one budget for the whole database: 40% of the
machine's memory, beyond which its operators spill to a temporary folder (the server puts it under its
storage root: `use_spill_directory`). Per statement, exec_mem_limit bounds what the statement
materializes for its result and, while its DuckDB query runs, the database's working memory
(planner/guard.py polls `memory_in_use`).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from storage.segment.column_cache import physical_memory

MEMORY_SHARE = 0.4

_lock = threading.Lock()
_database: duckdb.DuckDBPyConnection | None = None
_spill_directory = os.path.join(tempfile.gettempdir(), f"dorislite-duckdb-{os.getpid()}")


def use_spill_directory(path: str) -> None:
    """Where DuckDB's operators spill what does not fit in memory (the server: <storage root>/tmp/duckdb)."""
    global _spill_directory
    with _lock:
        _spill_directory = path
        if _database is not None:
            _database.execute("SET temp_directory = ?", [path])


def memory_in_use() -> int:
    """Bytes DuckDB's buffer manager holds now (all statements')."""
    with cursor() as cur:
        row = cur.execute("SELECT sum(memory_usage_bytes)::BIGINT FROM duckdb_memory()").fetchone()
    return int(row[0] or 0) if row else 0


def database() -> duckdb.DuckDBPyConnection:
    global _database
    with _lock:
        if _database is None:
            config = {"threads": max(1, os.cpu_count() or 1), "temp_directory": _spill_directory}
            config["memory_limit"] = f"{int(physical_memory() * MEMORY_SHARE) // (1 << 20)}MB"
            _database = duckdb.connect(":memory:", config=config)
        return _database


@contextmanager
def cursor() -> Iterator[duckdb.DuckDBPyConnection]:
    cur = database().cursor()
    try:
        yield cur
    finally:
        cur.close()

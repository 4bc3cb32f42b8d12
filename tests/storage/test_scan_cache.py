"""The rows kept from whole-tablet scans: reused only by a snapshot that extends the same rowsets, bounded."""

from __future__ import annotations

import pyarrow as pa

from storage.tablet.scan_cache import MAX_ROWS, MIN_ROWSETS, TabletScanCache


def rows(n: int) -> pa.Table:
    return pa.table({"k": pa.array(range(n), pa.int64())})


def test_a_kept_scan_serves_only_snapshots_that_extend_it() -> None:
    cache, columns = TabletScanCache(1 << 20), object()
    ids = tuple(f"r{i}" for i in range(MIN_ROWSETS))
    cache.keep("t", ids, columns, rows(10))
    assert cache.extends("t", ids, columns).rows.num_rows == 10  # the same rowsets
    assert cache.extends("t", ids + ("r9",), columns) is not None  # newer ones after them
    assert cache.extends("t", ids[:-1], columns) is None  # an older snapshot
    assert cache.extends("t", ("c0",) + ids[1:] + ("r9",), columns) is None  # a compaction replaced one
    assert cache.extends("t", ids, object()) is None  # read through another schema
    assert cache.extends("u", ids, columns) is None


def test_what_is_kept_is_bounded() -> None:
    columns = object()
    few = tuple(f"r{i}" for i in range(MIN_ROWSETS - 1))
    many = few + ("rx",)
    cache = TabletScanCache(1 << 20)
    cache.keep("a", few, columns, rows(10))  # a tablet of few rowsets is read at once
    assert cache.extends("a", few, columns) is None
    cache.keep("b", many, columns, rows(MAX_ROWS + 1))
    assert cache.extends("b", many, columns) is None
    one = rows(1000).nbytes
    cache = TabletScanCache(one * 5)
    for name in "abcdef":
        cache.keep(name, many, columns, rows(1000))
    assert cache.extends("a", many, columns) is None  # the least recently used went first
    assert all(cache.extends(name, many, columns) is not None for name in "cdef")
    cache.keep("c", many, columns, rows(10))
    cache.keep("c", few, columns, rows(10))  # no longer worth keeping: the old entry goes too
    assert cache.extends("c", many, columns) is None


def test_many_chunks_become_one() -> None:
    cache, columns = TabletScanCache(1 << 20), object()
    ids = tuple(f"r{i}" for i in range(MIN_ROWSETS))
    table = pa.concat_tables([rows(2)] * 40)
    cache.keep("t", ids, columns, table)
    kept = cache.extends("t", ids, columns).rows
    assert kept.column(0).num_chunks == 1 and kept.equals(table)

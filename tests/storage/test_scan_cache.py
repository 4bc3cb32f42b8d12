"""The rows kept from whole-tablet scans: reused only by a snapshot holding the same versions, bounded."""

from __future__ import annotations

import pyarrow as pa

from storage.tablet.scan_cache import MAX_ROWS, MIN_ROWSETS, TabletScanCache


def rows(n: int) -> pa.Table:
    return pa.table({"k": pa.array(range(n), pa.int64())})


def chain(*ends: int, first: int = 0) -> list[tuple[int, int]]:
    """A version path: rowsets first-e1, e1+1-e2, ..."""
    out, start = [], first
    for end in ends:
        out.append((start, end))
        start = end + 1
    return out


def test_a_kept_scan_serves_only_snapshots_holding_its_versions() -> None:
    cache, columns = TabletScanCache(1 << 20), object()
    path = chain(1, 2, 3, 4)
    assert len(path) >= MIN_ROWSETS
    cache.keep("t", path, columns, rows(10))
    kept, covered = cache.extends("t", path, columns)
    assert (kept.first, kept.last, covered, kept.rows.num_rows) == (0, 4, 4, 10)  # the same rowsets
    assert cache.extends("t", chain(1, 2, 3, 4, 5, 6), columns)[1] == 4  # newer ones after them: those are read
    assert cache.extends("t", chain(4, 5), columns)[1] == 1  # compacted up to where it ends: still the same rows
    assert cache.extends("t", chain(2, 4, 6), columns)[1] == 2
    assert cache.extends("t", chain(3), columns) is None  # an older snapshot
    assert cache.extends("t", chain(2, 5, 6), columns) is None  # a compaction across its last version
    assert cache.extends("t", chain(4, first=1), columns) is None  # not from the same first version
    assert cache.extends("t", chain(7), columns) is None  # an overwrite: one rowset 0-v of a new version
    assert cache.extends("t", path, object()) is None  # read through another schema
    assert cache.extends("u", path, columns) is None
    assert cache.extends("t", [], columns) is None


def test_what_is_kept_is_bounded() -> None:
    columns = object()
    few = chain(*range(1, MIN_ROWSETS))
    many = chain(*range(1, MIN_ROWSETS + 1))
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
    path = chain(*range(1, MIN_ROWSETS + 1))
    table = pa.concat_tables([rows(2)] * 40)
    cache.keep("t", path, columns, table)
    kept = cache.extends("t", path, columns)[0].rows
    assert kept.column(0).num_chunks == 1 and kept.equals(table)

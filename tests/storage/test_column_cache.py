"""The decoded-column cache (Doris's storage page cache, be.conf storage_page_cache_limit): scans give the
same rows from it as from the pages, the budget is kept, deleted segments leave it, and be.conf turns it off."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from storage_specs import key, spec, table_rows, value

from storage.catalog.model import KEYS_DUP
from storage.engine import ScanRequest, StorageEngine
from storage.predicate import ColumnPredicate, Op
from storage.segment import column_cache
from storage.segment.column_cache import COLUMNS, ColumnCache, parse_limit

SCHEMA = pa.schema([("k", pa.int32()), ("d", pa.date32()), ("s", pa.string()), ("v", pa.decimal128(15, 2))])


@pytest.fixture
def engine(tmp_path: Path):
    e = StorageEngine(tmp_path / "storage", {"tablet_rowset_stale_sweep_time_sec": "0"})
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def _table(engine: StorageEngine):
    s = spec("t", KEYS_DUP, [key("k", "INT"), value("d", "DATE", "NONE"), value("s", "VARCHAR(8)", "NONE"),
                             value("v", "DECIMAL(15, 2)", "NONE")], buckets=1)
    table = engine.catalog.create_table("db", s)
    n = 50_000
    rng = np.random.default_rng(3)
    days = rng.integers(0, 400, n)
    rows = pa.table({"k": pa.array(np.arange(n, dtype=np.int32)),
                     "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in days]),
                     "s": pa.array([f"s{x % 7}" for x in days]),
                     "v": pa.array([Decimal(int(x) * 3) for x in days], pa.decimal128(15, 2))})
    engine.load(table, rows)
    return engine.catalog.get_table_by_id(table.table_id)


QUERIES = [
    [],
    [ColumnPredicate("d", Op.LE, (dt.date(2024, 12, 1),))],  # keeps most rows (whole columns filtered)
    [ColumnPredicate("d", Op.GE, (dt.date(2025, 1, 20),))],  # keeps few
    [ColumnPredicate("k", Op.IN, tuple(range(100, 40_000, 997)))],  # short key points
    [ColumnPredicate("k", Op.GE, (10_000,)), ColumnPredicate("k", Op.LT, (10_050,))],  # one key range
]


@pytest.mark.parametrize("predicates", QUERIES)
def test_cached_scans_give_the_same_rows(engine: StorageEngine, no_column_cache, predicates) -> None:
    table = _table(engine)

    def scan(preds=predicates):
        return table_rows(engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names,
                                                  predicates=preds)).table)

    expected = scan()  # from the pages
    no_column_cache.limit = 1 << 30
    assert scan() == expected  # a read of most rows fills the cache, a narrow one decodes its pages only
    scan([])  # a whole scan fills it
    assert no_column_cache.used_bytes > 0
    assert scan() == expected  # from the cache
    assert no_column_cache.hits > 0


def test_budget_lru_and_forget() -> None:
    cache = ColumnCache(limit=8000)
    a = pa.array(np.arange(200, dtype=np.int64))  # 1600 bytes
    for name in ("f1", "f2", "f3", "f4", "f5"):
        cache.put(name, "c", a)
        if name == "f2":
            assert cache.get("f1", "c") is a  # f1 is now more recent than f2
    assert cache.used_bytes == 8000
    cache.put("f6", "c", a)
    assert cache.used_bytes <= 8000 and cache.get("f2", "c") is None and cache.get("f1", "c") is a
    cache.put("big", "c", pa.array(np.arange(1000, dtype=np.int64)))  # over a quarter of the budget
    assert cache.get("big", "c") is None
    cache.forget({"f1"})
    assert cache.get("f1", "c") is None and cache.get("f6", "c") is a


def test_forget_drops_every_column_of_a_path_and_keeps_the_budget_exact() -> None:
    cache = ColumnCache(limit=1 << 20)
    a = pa.array(np.arange(100, dtype=np.int64))  # 800 bytes
    for path in ("p1", "p2"):
        for column in ("a", "b", "c"):
            cache.put(path, column, a)
    cache.put("p1", "a", a)  # replaced, not counted twice
    assert cache.used_bytes == 6 * 800
    cache.forget({"p1", "never-cached"})
    assert [cache.get("p1", c) for c in "abc"] == [None] * 3
    assert all(cache.get("p2", c) is a for c in "abc") and cache.used_bytes == 3 * 800
    small = ColumnCache(limit=4 * 800)  # evictions leave the path index in step with the entries
    for n in range(10):
        small.put(f"q{n}", "a", a)
    small.forget({f"q{n}" for n in range(10)})
    assert small.used_bytes == 0 and not small._by_path


def test_limits_and_be_conf(tmp_path: Path) -> None:
    assert parse_limit("512M") == 512 << 20 and parse_limit("2G") == 2 << 30 and parse_limit("1000") == 1000
    assert 0 < parse_limit("20%") < parse_limit("40%")
    e = StorageEngine(tmp_path / "off", {"disable_storage_page_cache": "true"})
    assert COLUMNS.limit == 0
    e = StorageEngine(tmp_path / "on", {"storage_page_cache_limit": "64M"})
    assert COLUMNS.limit == 64 << 20
    column_cache.configure(None, disabled=True)
    del e


def test_compacted_rowsets_leave_the_cache(engine: StorageEngine, no_column_cache) -> None:
    """A compaction's inputs no longer serve new queries: their columns leave the cache when they retire, so
    the output's columns get the room (a full cache kept them until the stale sweep)."""
    from storage.compaction.merge import compact_rowsets

    table = _table(engine)
    rng = np.random.default_rng(5)
    more = pa.table({"k": pa.array(rng.integers(0, 10, 100).astype(np.int32)),
                     "d": pa.array([dt.date(2024, 2, 2)] * 100), "s": pa.array(["x"] * 100),
                     "v": pa.array([Decimal(1)] * 100, pa.decimal128(15, 2))})
    engine.load(table, more)
    no_column_cache.limit = 1 << 30
    before = table_rows(engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names)).table)
    filled = no_column_cache.used_bytes
    assert filled > 0
    (tablet,) = engine.catalog.tablets(table.table_id)
    inputs = engine.catalog.rowsets(tablet.tablet_id, 1 << 62)
    compact_rowsets(engine, table, table.base_index, tablet, inputs, inputs[0].start_version, inputs[-1].end_version)
    assert no_column_cache.used_bytes < filled  # the inputs' columns went
    after = table_rows(engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names)).table)
    assert after == before


def test_concurrent_misses_of_one_column_decode_it_once() -> None:
    import threading
    import time

    cache = ColumnCache(1 << 30)
    made: list[int] = []
    release = threading.Event()

    def make() -> pa.Array:
        made.append(1)
        release.wait(5)
        return pa.array(np.arange(1000))

    got: list[pa.Array] = []
    threads = [threading.Thread(target=lambda: got.append(cache.fill("seg", "k", make))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)  # every thread is in fill(): one making, seven waiting
    release.set()
    for t in threads:
        t.join()
    assert len(made) == 1 and len(got) == 8 and all(g.equals(got[0]) for g in got)
    assert cache.get("seg", "k") is not None

    def failing() -> pa.Array:
        raise OSError("unreadable")

    with pytest.raises(OSError):
        cache.fill("seg", "v", failing)
    assert cache.fill("seg", "v", lambda: pa.array([1])).to_pylist() == [1]  # a failed maker leaves no waiter stuck

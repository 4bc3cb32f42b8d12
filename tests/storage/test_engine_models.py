"""Seed 004's data-model examples, loaded in the seed's batches and read back exactly as the seed shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from storage_specs import (
    AGG_EXAMPLE_COLUMNS,
    AGG_EXAMPLE_SCHEMA,
    AGG_EXAMPLE_WITH_TS_COLUMNS,
    AGG_EXAMPLE_WITH_TS_SCHEMA,
    DATETIME,
    LARGEINT,
    d,
    key,
    rows_table,
    spec,
    table_rows,
    ts,
    value,
)

from storage.catalog.model import KEYS_AGG, KEYS_DUP, KEYS_UNIQUE, OlapTable
from storage.engine import ScanRequest, StorageEngine

AGG_BATCH_1 = [
    (10000, d("2017-10-01"), "北京", 20, 0, ts("2017-10-01 06:00:00"), 20, 10, 10),
    (10000, d("2017-10-01"), "北京", 20, 0, ts("2017-10-01 07:00:00"), 15, 2, 2),
    (10001, d("2017-10-01"), "北京", 30, 1, ts("2017-10-01 17:05:45"), 2, 22, 22),
    (10002, d("2017-10-02"), "上海", 20, 1, ts("2017-10-02 12:59:12"), 200, 5, 5),
    (10003, d("2017-10-02"), "广州", 32, 0, ts("2017-10-02 11:20:00"), 30, 11, 11),
    (10004, d("2017-10-01"), "深圳", 35, 0, ts("2017-10-01 10:00:15"), 100, 3, 3),
    (10004, d("2017-10-03"), "深圳", 35, 0, ts("2017-10-03 10:20:22"), 11, 6, 6),
]
AGG_STORED_1 = [
    (10000, d("2017-10-01"), "北京", 20, 0, ts("2017-10-01 07:00:00"), 35, 10, 2),
    (10001, d("2017-10-01"), "北京", 30, 1, ts("2017-10-01 17:05:45"), 2, 22, 22),
    (10002, d("2017-10-02"), "上海", 20, 1, ts("2017-10-02 12:59:12"), 200, 5, 5),
    (10003, d("2017-10-02"), "广州", 32, 0, ts("2017-10-02 11:20:00"), 30, 11, 11),
    (10004, d("2017-10-01"), "深圳", 35, 0, ts("2017-10-01 10:00:15"), 100, 3, 3),
    (10004, d("2017-10-03"), "深圳", 35, 0, ts("2017-10-03 10:20:22"), 11, 6, 6),
]
AGG_BATCH_2 = [
    (10004, d("2017-10-03"), "深圳", 35, 0, ts("2017-10-03 11:22:00"), 44, 19, 19),
    (10005, d("2017-10-03"), "长沙", 29, 1, ts("2017-10-03 18:11:02"), 3, 1, 1),
]
AGG_STORED_2 = [
    (10000, d("2017-10-01"), "北京", 20, 0, ts("2017-10-01 07:00:00"), 35, 10, 2),
    (10001, d("2017-10-01"), "北京", 30, 1, ts("2017-10-01 17:05:45"), 2, 22, 22),
    (10002, d("2017-10-02"), "上海", 20, 1, ts("2017-10-02 12:59:12"), 200, 5, 5),
    (10003, d("2017-10-02"), "广州", 32, 0, ts("2017-10-02 11:20:00"), 30, 11, 11),
    (10004, d("2017-10-01"), "深圳", 35, 0, ts("2017-10-01 10:00:15"), 100, 3, 3),
    (10004, d("2017-10-03"), "深圳", 35, 0, ts("2017-10-03 11:22:00"), 55, 19, 6),
    (10005, d("2017-10-03"), "长沙", 29, 1, ts("2017-10-03 18:11:02"), 3, 1, 1),
]
AGG_TS_ROWS = [
    (10000, d("2017-10-01"), ts("2017-10-01 08:00:05"), "北京", 20, 0, ts("2017-10-01 06:00:00"), 20, 10, 10),
    (10000, d("2017-10-01"), ts("2017-10-01 09:00:05"), "北京", 20, 0, ts("2017-10-01 07:00:00"), 15, 2, 2),
    (10001, d("2017-10-01"), ts("2017-10-01 18:12:10"), "北京", 30, 1, ts("2017-10-01 17:05:45"), 2, 22, 22),
    (10002, d("2017-10-02"), ts("2017-10-02 13:10:00"), "上海", 20, 1, ts("2017-10-02 12:59:12"), 200, 5, 5),
    (10003, d("2017-10-02"), ts("2017-10-02 13:15:00"), "广州", 32, 0, ts("2017-10-02 11:20:00"), 30, 11, 11),
    (10004, d("2017-10-01"), ts("2017-10-01 12:12:48"), "深圳", 35, 0, ts("2017-10-01 10:00:15"), 100, 3, 3),
    (10004, d("2017-10-03"), ts("2017-10-03 12:38:20"), "深圳", 35, 0, ts("2017-10-03 10:20:22"), 11, 6, 6),
]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[StorageEngine]:
    e = StorageEngine(tmp_path / "storage")
    e.open()
    e.catalog.create_database("example_db")
    yield e
    e.close()


def scan_all(engine: StorageEngine, table: OlapTable, schema: pa.Schema, **kw) -> pa.Table:
    columns = kw.pop("columns", schema.names)
    return engine.scan(ScanRequest(table=table, schema=schema, columns=columns, **kw)).table


@pytest.mark.parametrize("buckets", [1, 3])
def test_aggregate_example_batches(engine: StorageEngine, buckets: int) -> None:
    t = engine.catalog.create_table("example_db", spec("example_tbl", KEYS_AGG, AGG_EXAMPLE_COLUMNS,
                                                       buckets=buckets, hash_cols=["user_id"]))
    engine.load(t, rows_table(AGG_EXAMPLE_SCHEMA, AGG_BATCH_1))
    got = scan_all(engine, t, AGG_EXAMPLE_SCHEMA)
    assert got.schema == AGG_EXAMPLE_SCHEMA
    assert table_rows(got) == AGG_STORED_1
    engine.load(t, rows_table(AGG_EXAMPLE_SCHEMA, AGG_BATCH_2))
    assert table_rows(scan_all(engine, t, AGG_EXAMPLE_SCHEMA)) == AGG_STORED_2
    # without merge-on-read both batches' rows for 10004/2017-10-03 are still there
    raw = scan_all(engine, t, AGG_EXAMPLE_SCHEMA, merge=False)
    assert raw.num_rows == len(AGG_STORED_1) + len(AGG_BATCH_2)


def test_aggregate_example_with_timestamp_keeps_detail(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("example_db", spec("example_tbl2", KEYS_AGG, AGG_EXAMPLE_WITH_TS_COLUMNS))
    engine.load(t, rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, AGG_TS_ROWS))
    assert table_rows(scan_all(engine, t, AGG_EXAMPLE_WITH_TS_SCHEMA)) == sorted(AGG_TS_ROWS)


def test_rollups_of_the_aggregate_example(engine: StorageEngine) -> None:
    """Seed: ROLLUP(user_id, cost) and ROLLUP(city, age, cost, max_dwell_time, min_dwell_time)."""
    t = engine.catalog.create_table("example_db", spec("example_tbl2", KEYS_AGG, AGG_EXAMPLE_WITH_TS_COLUMNS,
                                                       hash_cols=["user_id"]))
    cols = {c.name: c for c in t.columns}
    r1 = engine.catalog.add_index(t.table_id, "r_user_cost", [cols["user_id"], cols["cost"]], 1)
    r2 = engine.catalog.add_index(t.table_id, "r_city_age", [cols[c] for c in (
        "city", "age", "cost", "max_dwell_time", "min_dwell_time")], 2)
    t = engine.catalog.get_table_by_id(t.table_id)
    engine.load(t, rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, AGG_TS_ROWS[:4]))
    engine.load(t, rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, AGG_TS_ROWS[4:]))
    got1 = scan_all(engine, t, AGG_EXAMPLE_WITH_TS_SCHEMA, columns=["user_id", "cost"], index_id=r1.index_id)
    assert table_rows(got1) == [(10000, 35), (10001, 2), (10002, 200), (10003, 30), (10004, 111)]
    got2 = scan_all(engine, t, AGG_EXAMPLE_WITH_TS_SCHEMA, index_id=r2.index_id,
                    columns=["city", "age", "cost", "max_dwell_time", "min_dwell_time"])
    assert table_rows(got2) == sorted([
        ("北京", 20, 35, 10, 2), ("北京", 30, 2, 22, 22), ("上海", 20, 200, 5, 5), ("广州", 32, 30, 11, 11),
        ("深圳", 35, 111, 6, 3),
    ])
    # the base index keeps the detail
    assert table_rows(scan_all(engine, t, AGG_EXAMPLE_WITH_TS_SCHEMA)) == sorted(AGG_TS_ROWS)


AGG_LIMIT_SCHEMA = pa.schema([("user_id", LARGEINT), ("date", pa.date32()), ("cost", pa.int64())])


def test_aggregate_merge_on_read_needs_all_keys(engine: StorageEngine) -> None:
    """Seed's "聚合模型的局限性" example: two batches, merged at read time to 4 rows."""
    t = engine.catalog.create_table("example_db", spec(
        "limits", KEYS_AGG, [key("user_id", "LARGEINT"), key("date", "DATE"), value("cost", "BIGINT", "SUM")]))
    engine.load(t, rows_table(AGG_LIMIT_SCHEMA, [(10001, d("2017-11-20"), 50), (10002, d("2017-11-21"), 39)]))
    engine.load(t, rows_table(AGG_LIMIT_SCHEMA, [(10001, d("2017-11-20"), 1), (10001, d("2017-11-21"), 5),
                                                 (10003, d("2017-11-22"), 22)]))
    got = scan_all(engine, t, AGG_LIMIT_SCHEMA)
    assert table_rows(got) == [(10001, d("2017-11-20"), 51), (10001, d("2017-11-21"), 5),
                               (10002, d("2017-11-21"), 39), (10003, d("2017-11-22"), 22)]
    # count(*) semantics: reading only user_id still merges on all keys -> 4 rows, not 3 or 5
    assert scan_all(engine, t, AGG_LIMIT_SCHEMA, columns=["user_id"]).num_rows == 4
    assert scan_all(engine, t, AGG_LIMIT_SCHEMA, columns=["user_id"], merge=False).num_rows == 5
    assert min(scan_all(engine, t, AGG_LIMIT_SCHEMA, columns=["cost"]).column("cost").to_pylist()) == 5


UNIQUE_COLUMNS = (
    key("user_id", "BIGINT"), key("username", "VARCHAR(50)"),
    value("city", "VARCHAR(20)", "REPLACE"), value("age", "SMALLINT", "REPLACE"), value("sex", "TINYINT", "REPLACE"),
    value("phone", "LARGEINT", "REPLACE"), value("address", "VARCHAR(500)", "REPLACE"),
    value("register_time", "DATETIME", "REPLACE"),
)
UNIQUE_SCHEMA = pa.schema([
    ("user_id", pa.int64()), ("username", pa.string()), ("city", pa.string()), ("age", pa.int16()),
    ("sex", pa.int8()), ("phone", LARGEINT), ("address", pa.string()), ("register_time", DATETIME),
])


def test_unique_newest_row_wins(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("example_db", spec("uniq", KEYS_UNIQUE, UNIQUE_COLUMNS, buckets=2,
                                                       hash_cols=["user_id"]))
    engine.load(t, rows_table(UNIQUE_SCHEMA, [
        (1, "alice", "北京", 20, 1, 13800000000, "addr1", ts("2020-01-01 00:00:00")),
        (2, "bob", "上海", 30, 0, 13900000000, "addr2", ts("2020-01-02 00:00:00")),
        (1, "alice", "广州", 21, 1, 13800000001, "addr3", ts("2020-01-03 00:00:00")),  # same batch: later wins
    ]))
    assert table_rows(scan_all(engine, t, UNIQUE_SCHEMA)) == [
        (1, "alice", "广州", 21, 1, 13800000001, "addr3", ts("2020-01-03 00:00:00")),
        (2, "bob", "上海", 30, 0, 13900000000, "addr2", ts("2020-01-02 00:00:00")),
    ]
    engine.load(t, rows_table(UNIQUE_SCHEMA, [
        (2, "bob", None, None, None, None, None, None),  # a newer row replaces every value, NULLs included
        (3, "carol", "深圳", 40, 1, 1, "addr4", ts("2020-01-04 00:00:00")),
    ]))
    assert table_rows(scan_all(engine, t, UNIQUE_SCHEMA)) == [
        (1, "alice", "广州", 21, 1, 13800000001, "addr3", ts("2020-01-03 00:00:00")),
        (2, "bob", None, None, None, None, None, None),
        (3, "carol", "深圳", 40, 1, 1, "addr4", ts("2020-01-04 00:00:00")),
    ]
    assert table_rows(scan_all(engine, t, UNIQUE_SCHEMA, columns=["age"])) == [(None,), (21,), (40,)]


DUP_COLUMNS = (
    key("timestamp", "DATETIME"), key("type", "INT"), key("error_code", "INT"),
    value("error_msg", "VARCHAR(1024)"), value("op_id", "BIGINT"), value("op_time", "DATETIME"),
)
DUP_SCHEMA = pa.schema([
    ("timestamp", DATETIME), ("type", pa.int32()), ("error_code", pa.int32()), ("error_msg", pa.string()),
    ("op_id", pa.int64()), ("op_time", DATETIME),
])


def test_duplicate_keeps_every_row(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("example_db", spec("dup", KEYS_DUP, DUP_COLUMNS, hash_cols=["type"]))
    row = (ts("2017-10-01 08:00:05"), 1, 404, "not found", 7, ts("2017-10-01 09:00:00"))
    other = (ts("2017-10-01 08:00:05"), 1, 404, "retry", 8, None)
    engine.load(t, rows_table(DUP_SCHEMA, [row, row, other]))
    engine.load(t, rows_table(DUP_SCHEMA, [row]))
    got = scan_all(engine, t, DUP_SCHEMA)
    assert table_rows(got) == sorted([row, row, row, other], key=lambda r: tuple((v is not None, v) for v in r))
    assert scan_all(engine, t, DUP_SCHEMA, columns=["op_id"]).num_rows == 4

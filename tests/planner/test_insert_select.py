"""INSERT ... SELECT binding: a query result cast to the target schema with the same checks."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
import sqlglot

from planner.loads.convert import bind_insert_query_result
from planner.query import ArrowTableSource, QueryContext, execute_query
from sql.errors import SqlError
from sql.types import parse_type

COLUMNS = [
    ("k", parse_type("INT"), False, None),
    ("v", parse_type("DECIMAL(6, 2)"), True, None),
    ("s", parse_type("VARCHAR(4)"), True, "z"),
    ("d", parse_type("DATE"), True, None),
]

SRC = pa.table({
    "a": pa.array([1, 2, 3], pa.int64()),
    "x": pa.array([1.234, 2.5, 3.0]),
    "name": pa.array(["ab", "abcd", "abcde"]),
    "day": pa.array(["2020-01-01", "2020-02-30", None]),
})


def query(sql: str) -> pa.Table:
    src = ArrowTableSource("src", SRC)
    return execute_query(sqlglot.parse_one(sql, read="doris"), QueryContext("db", lambda db, n: src))


def test_casts_to_target_types_and_fills_defaults() -> None:
    result = query("SELECT a, x FROM src WHERE a < 3")
    table, filtered = bind_insert_query_result(COLUMNS, ["k", "v"], result)
    assert filtered == 0
    assert [f.type for f in table.schema] == [pa.int32(), pa.decimal128(6, 2), pa.string(), pa.date32()]
    assert table.to_pylist() == [
        {"k": 1, "v": decimal.Decimal("1.23"), "s": "z", "d": None},
        {"k": 2, "v": decimal.Decimal("2.50"), "s": "z", "d": None},
    ]


def test_strict_mode_rejects_too_long_string() -> None:
    with pytest.raises(SqlError) as info:
        bind_insert_query_result(COLUMNS, ["k", "s"], query("SELECT a, name FROM src"))
    assert info.value.code == 1105 and "column(s) value is too long: 'abcde'" in info.value.message


def test_strict_mode_rejects_bad_date_and_non_strict_counts() -> None:
    result = query("SELECT a, day FROM src")
    with pytest.raises(SqlError) as info:
        bind_insert_query_result(COLUMNS, ["k", "d"], result)
    assert "column(d) value is incorrect: '2020-02-30'" in info.value.message
    table, filtered = bind_insert_query_result(COLUMNS, ["k", "d"], result, strict=False)
    assert filtered == 1
    assert table.column("d").to_pylist() == [dt.date(2020, 1, 1), None]


def test_out_of_range_and_null_into_not_null() -> None:
    big = pa.table({"a": pa.array([1, 2**40], pa.int64())})
    with pytest.raises(SqlError) as info:
        bind_insert_query_result(COLUMNS, ["k"], big)
    assert "column(k) value is incorrect: '1099511627776'" in info.value.message
    nulls = pa.table({"a": pa.array([1, None], pa.int64())})
    with pytest.raises(SqlError) as info:
        bind_insert_query_result(COLUMNS, ["k"], nulls)
    assert "column(k) is NULL but the column is not nullable" in info.value.message


def test_decimal_overflow_from_query() -> None:
    big = pa.table({"a": pa.array([1], pa.int64()), "x": pa.array([12345.678])})
    with pytest.raises(SqlError) as info:
        bind_insert_query_result(COLUMNS, ["k", "v"], big)
    assert "column(v) value is incorrect" in info.value.message


def test_column_count_mismatch() -> None:
    with pytest.raises(SqlError) as info:
        bind_insert_query_result(COLUMNS, ["k"], query("SELECT a, x FROM src"))
    assert info.value.code == 1136

"""INSERT ... VALUES binding: types, defaults, and every strict-mode check (Doris error 1105: 5025 breaks the MariaDB client)."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
import sqlglot

from planner.context import QueryContext
from planner.loads.convert import bind_insert_values
from sql.errors import SqlError
from sql.types import parse_type

NOW = dt.datetime(2024, 5, 6, 7, 8, 9)

COLUMNS = [
    ("k", parse_type("INT"), False, None),
    ("t", parse_type("TINYINT"), True, None),
    ("b", parse_type("BIGINT"), True, "7"),
    ("v", parse_type("DECIMAL(5, 2)"), True, None),
    ("s", parse_type("VARCHAR(5)"), True, "dflt"),
    ("c", parse_type("CHAR(2)"), True, None),
    ("d", parse_type("DATE"), True, None),
    ("ts", parse_type("DATETIME"), True, "CURRENT_TIMESTAMP"),
    ("f", parse_type("DOUBLE"), True, None),
    ("txt", parse_type("STRING"), True, None),
]


def ctx() -> QueryContext:
    def no_table(db: str | None, name: str):  # noqa: ANN202
        raise AssertionError("no tables in VALUES")

    return QueryContext("db", no_table, lambda scope, name: None, now=NOW)


def rows_of(values_sql: str) -> list[list[sqlglot.exp.Expression]]:
    stmt = sqlglot.parse_one(f"INSERT INTO x VALUES {values_sql}", read="doris")
    return [list(t.expressions) for t in stmt.expression.expressions]


def insert(values_sql: str, targets: list[str] | None = None, strict: bool = True,
           columns: list | None = None) -> tuple[pa.Table, int]:
    return bind_insert_values(columns or COLUMNS, targets, rows_of(values_sql), strict, ctx())


def strict_error(values_sql: str, targets: list[str] | None = None) -> SqlError:
    with pytest.raises(SqlError) as info:
        insert(values_sql, targets)
    return info.value


def test_all_types_in_table_order_with_exact_arrow_types() -> None:
    table, filtered = insert("(1, -5, -9000000000, 123.456, 'abc', 'xy', '2020-02-29', '2020-01-02 03:04:05', "
                             "1.5e3, 'long text')")
    assert filtered == 0
    assert [f.type for f in table.schema] == [pa.int32(), pa.int8(), pa.int64(), pa.decimal128(5, 2), pa.string(),
                                             pa.string(), pa.date32(), pa.timestamp("s"), pa.float64(), pa.string()]
    assert table.to_pylist() == [{
        "k": 1, "t": -5, "b": -9000000000, "v": decimal.Decimal("123.46"), "s": "abc", "c": "xy",
        "d": dt.date(2020, 2, 29), "ts": dt.datetime(2020, 1, 2, 3, 4, 5), "f": 1500.0, "txt": "long text",
    }]


def test_target_columns_defaults_and_functions() -> None:
    table, _ = insert("(2, DEFAULT, now()), (3, '0.5', CAST('2021-01-01' AS DATE))", ["K", "v", "d"])
    got = table.to_pylist()
    assert got[0]["k"] == 2 and got[0]["v"] is None and got[0]["d"] == NOW.date()
    assert got[0]["b"] == 7  # DEFAULT '7'
    assert got[0]["s"] == "dflt"
    assert got[0]["ts"] == NOW  # DEFAULT CURRENT_TIMESTAMP
    assert got[0]["t"] is None  # nullable without default
    assert got[1]["v"] == decimal.Decimal("0.50") and got[1]["d"] == dt.date(2021, 1, 1)


def test_negative_numbers_null_and_booleans() -> None:
    table, _ = insert("(-1, NULL, -0, -1.005, NULL, NULL, NULL, NULL, -2.5, TRUE)")
    r = table.to_pylist()[0]
    assert r["k"] == -1 and r["t"] is None and r["b"] == 0
    assert r["v"] == decimal.Decimal("-1.01")  # half up, away from zero, as Doris
    assert r["f"] == -2.5 and r["txt"] == "1"


def test_decimal_rounds_half_up() -> None:
    table, _ = insert("(1, 1.005), (2, 1.004), (3, '2.675'), (4, 999.994)", ["k", "v"])
    assert table.column("v").to_pylist() == [decimal.Decimal(x) for x in ("1.01", "1.00", "2.68", "999.99")]


def test_column_count_mismatch() -> None:
    e = strict_error("(1, 2)", ["k"])
    assert (e.code, e.sqlstate) == (1136, "21S01")
    assert "Column count doesn't match value count" in e.message
    assert strict_error("(1), (1, 2)", ["k"]).code == 1136


def test_unknown_and_duplicate_target_column() -> None:
    e = strict_error("(1)", ["nope"])
    assert e.code == 1054 and "Unknown column 'nope'" in e.message
    assert strict_error("(1, 2)", ["k", "K"]).code == 1110


def test_not_null_column_without_default_must_be_given() -> None:
    e = strict_error("(1)", ["v"])
    assert e.code == 1364 and "column=k" in e.message


BAD_VALUES = [
    ("(1, 128)", ["k", "t"], "column(t) value is incorrect: '128'"),
    ("(1, -129)", ["k", "t"], "column(t) value is incorrect: '-129'"),
    ("(2147483648)", ["k"], "column(k) value is incorrect: '2147483648'"),
    ("('12abc')", ["k"], "column(k) value is incorrect: '12abc'"),
    ("(1, 'abc')", ["k", "v"], "column(v) value is incorrect: 'abc'"),
    ("(1, 1000)", ["k", "v"], "column(v) value is incorrect: '1000'"),
    ("(1, 999.995)", ["k", "v"], "column(v) value is incorrect: '999.995'"),
    ("(1, '2020-13-01')", ["k", "d"], "column(d) value is incorrect: '2020-13-01'"),
    ("(1, '2021-02-29')", ["k", "d"], "column(d) value is incorrect: '2021-02-29'"),
    ("(1, '2020-01-01 25:00:00')", ["k", "ts"], "column(ts) value is incorrect: '2020-01-01 25:00:00'"),
    ("(1, 'abcdef')", ["k", "s"], "column(s) value is too long: 'abcdef'"),
    ("(1, 'ééé')", ["k", "c"], "column(c) value is too long: 'ééé'"),  # 6 bytes into CHAR(2)
    ("(NULL)", ["k"], "column(k) is NULL but the column is not nullable"),
    ("(1, 'x1.5')", ["k", "f"], "column(f) value is incorrect: 'x1.5'"),
]


@pytest.mark.parametrize(("values", "targets", "reason"), BAD_VALUES)
def test_strict_mode_rejects_bad_value(values: str, targets: list[str], reason: str) -> None:
    e = strict_error(f"(5, NULL), {values}" if len(targets) == 2 else f"(5), {values}", targets)
    assert e.code == 1105
    assert e.message.startswith("errCode = 2, detailMessage = Insert has filtered data in strict mode. Reason: ")
    assert reason in e.message
    assert "src line [" in e.message


@pytest.mark.parametrize(("values", "targets", "reason"), BAD_VALUES)
def test_non_strict_mode_drops_and_counts_bad_rows(values: str, targets: list[str], reason: str) -> None:
    good = "(5, NULL)" if len(targets) == 2 else "(5)"
    table, filtered = insert(f"{good}, {values}, {good}", targets, strict=False)
    assert filtered == 1
    assert table.num_rows == 2 and table.column("k").to_pylist() == [5, 5]


def test_varchar_length_counts_utf8_bytes() -> None:
    table, _ = insert("(1, 'éé')", ["k", "s"])  # 4 bytes fit VARCHAR(5)
    assert table.column("s").to_pylist() == ["éé"]
    assert strict_error("(1, 'ééé')", ["k", "s"]).code == 1105  # 6 bytes do not


def test_every_row_filtered_in_non_strict_mode() -> None:
    with pytest.raises(SqlError) as info:
        insert("('x')", ["k"], strict=False)
    assert "all partitions have no load data" in info.value.message


def test_strings_accepted_for_numbers_and_dates() -> None:
    table, _ = insert("(' 42 ', '20200102', '2020-01-02 03:04', '1e2')", ["k", "d", "ts", "f"])
    r = table.to_pylist()[0]
    assert r["k"] == 42 and r["d"] == dt.date(2020, 1, 2) and r["ts"] == dt.datetime(2020, 1, 2, 3, 4)
    assert r["f"] == 100.0

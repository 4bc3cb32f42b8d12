"""Scalar functions with MySQL/Doris semantics, checked against explicit values."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest
import sqlglot

from planner.query import ArrowTableSource, QueryContext, execute_query

NOW = dt.datetime(2024, 2, 29, 13, 45, 30)

T = pa.table({
    "s": pa.array(["hello", "Ab", None, "ünï"]),
    "n": pa.array([10, -7, None, 3], pa.int32()),
    "x": pa.array([2.5, -2.5, None, 0.0]),
    "m": pa.array([decimal.Decimal("1.25"), decimal.Decimal("-3.50"), None, decimal.Decimal("0")],
                  pa.decimal128(6, 2)),
    "d": pa.array([dt.date(2020, 1, 31), dt.date(2019, 12, 1), None, dt.date(2024, 2, 29)]),
    "ts": pa.array([dt.datetime(2020, 1, 31, 8, 5, 9), dt.datetime(2019, 12, 1, 23, 59, 59), None,
                    dt.datetime(2024, 2, 29, 0, 0, 0)], pa.timestamp("us")),
})


@pytest.fixture()
def ctx() -> QueryContext:
    src = ArrowTableSource("t", T)
    return QueryContext("db", lambda db, name: src, lambda scope, name: None, now=NOW)


def col(ctx: QueryContext, expr: str) -> list:
    t = execute_query(sqlglot.parse_one(f"SELECT {expr} FROM t", read="doris"), ctx)
    return t.column(0).to_pylist()


def one(ctx: QueryContext, expr: str) -> object:
    t = execute_query(sqlglot.parse_one(f"SELECT {expr}", read="doris"), ctx)
    return t.column(0).to_pylist()[0]


STRING_CASES = [
    ("concat(s, '-', n)", ["hello-10", "Ab--7", None, "ünï-3"]),
    ("concat_ws(',', s, n, NULL)", ["hello,10", "Ab,-7", "", "ünï,3"]),
    ("upper(s)", ["HELLO", "AB", None, "ÜNÏ"]),
    ("lcase(s)", ["hello", "ab", None, "ünï"]),
    ("length(s)", [5, 2, None, 5]),  # bytes
    ("char_length(s)", [5, 2, None, 3]),
    ("substring(s, 2)", ["ello", "b", None, "nï"]),
    ("substr(s, 2, 2)", ["el", "b", None, "nï"]),
    ("substring(s, -3, 2)", ["ll", "", None, "ün"]),
    ("left(s, 2)", ["he", "Ab", None, "ün"]),
    ("right(s, 2)", ["lo", "Ab", None, "nï"]),
    ("trim(concat('  ', s, ' '))", ["hello", "Ab", None, "ünï"]),
    ("ltrim(concat('  ', s))", ["hello", "Ab", None, "ünï"]),
    ("rtrim(concat(s, '  '))", ["hello", "Ab", None, "ünï"]),
    ("replace(s, 'l', 'L')", ["heLLo", "Ab", None, "ünï"]),
    ("locate('l', s)", [3, 0, None, 0]),
    ("instr(s, 'ï')", [0, 0, None, 3]),
    ("lpad(s, 4, '*')", ["hell", "**Ab", None, "*ünï"]),
    ("rpad(s, 6, 'xy')", ["hellox", "Abxyxy", None, "ünïxyx"]),
    ("reverse(s)", ["olleh", "bA", None, "ïnü"]),
    ("repeat(s, 2)", ["hellohello", "AbAb", None, "ünïünï"]),
    ("s LIKE 'h%'", [True, False, None, False]),
    ("s LIKE '_b'", [False, True, None, False]),
    ("s NOT LIKE '%l%'", [False, True, None, True]),
    ("s REGEXP '^[a-z]+$'", [True, False, None, False]),
]


@pytest.mark.parametrize(("expr", "expected"), STRING_CASES)
def test_string_functions(ctx: QueryContext, expr: str, expected: list) -> None:
    assert col(ctx, expr) == expected


DATE_CASES = [
    ("year(d)", [2020, 2019, None, 2024]),
    ("month(ts)", [1, 12, None, 2]),
    ("day(d)", [31, 1, None, 29]),
    ("dayofmonth(ts)", [31, 1, None, 29]),
    ("hour(ts)", [8, 23, None, 0]),
    ("minute(ts)", [5, 59, None, 0]),
    ("second(ts)", [9, 59, None, 0]),
    ("quarter(d)", [1, 4, None, 1]),
    ("dayofweek(d)", [6, 1, None, 5]),
    ("dayofyear(d)", [31, 335, None, 60]),
    ("weekofyear(d)", [5, 48, None, 9]),
    ("date(ts)", [dt.date(2020, 1, 31), dt.date(2019, 12, 1), None, dt.date(2024, 2, 29)]),
    ("date_add(d, INTERVAL 1 MONTH)", [dt.date(2020, 2, 29), dt.date(2020, 1, 1), None, dt.date(2024, 3, 29)]),
    ("date_sub(d, INTERVAL 1 YEAR)", [dt.date(2019, 1, 31), dt.date(2018, 12, 1), None, dt.date(2023, 2, 28)]),
    ("adddate(d, INTERVAL 2 DAY)", [dt.date(2020, 2, 2), dt.date(2019, 12, 3), None, dt.date(2024, 3, 2)]),
    ("date_add(ts, INTERVAL 1 HOUR)", [dt.datetime(2020, 1, 31, 9, 5, 9), dt.datetime(2019, 12, 2, 0, 59, 59),
                                       None, dt.datetime(2024, 2, 29, 1, 0, 0)]),
    ("d + INTERVAL 1 DAY", [dt.date(2020, 2, 1), dt.date(2019, 12, 2), None, dt.date(2024, 3, 1)]),
    ("datediff(d, '2020-01-01')", [30, -31, None, 1520]),
    ("date_format(ts, '%Y-%m-%d %H:%i:%s')", ["2020-01-31 08:05:09", "2019-12-01 23:59:59", None,
                                              "2024-02-29 00:00:00"]),
    ("date_format(d, '%d/%m/%y %W %M %e')", ["31/01/20 Friday January 31", "01/12/19 Sunday December 1", None,
                                             "29/02/24 Thursday February 29"]),
    ("date_trunc(ts, 'month')", [dt.datetime(2020, 1, 1), dt.datetime(2019, 12, 1), None, dt.datetime(2024, 2, 1)]),
    ("last_day(d)", [dt.date(2020, 1, 31), dt.date(2019, 12, 31), None, dt.date(2024, 2, 29)]),
    ("to_date(ts)", [dt.date(2020, 1, 31), dt.date(2019, 12, 1), None, dt.date(2024, 2, 29)]),
]


@pytest.mark.parametrize(("expr", "expected"), DATE_CASES)
def test_date_functions(ctx: QueryContext, expr: str, expected: list) -> None:
    assert col(ctx, expr) == expected


def test_current_time_functions_use_statement_time(ctx: QueryContext) -> None:
    assert one(ctx, "now()") == NOW
    assert one(ctx, "current_timestamp") == NOW
    assert one(ctx, "curdate()") == NOW.date()
    assert one(ctx, "current_date") == NOW.date()


def test_str_to_date_and_unix_time(ctx: QueryContext) -> None:
    assert one(ctx, "str_to_date('31/01/2020', '%d/%m/%Y')") == dt.date(2020, 1, 31)
    assert one(ctx, "str_to_date('2020-01-31 10:11:12', '%Y-%m-%d %H:%i:%s')") == dt.datetime(2020, 1, 31, 10, 11, 12)
    assert one(ctx, "str_to_date('nope', '%Y-%m-%d')") is None
    ts = one(ctx, "unix_timestamp('2020-01-01 00:00:00')")
    assert one(ctx, f"from_unixtime({ts})") == "2020-01-01 00:00:00"
    assert one(ctx, f"from_unixtime({ts}, '%Y')") == "2020"


MATH_CASES = [
    ("abs(n)", [10, 7, None, 3]),
    ("ceil(x)", [3, -2, None, 0]),
    ("floor(x)", [2, -3, None, 0]),
    ("round(x)", [3.0, -3.0, None, 0.0]),
    ("round(m, 1)", [decimal.Decimal("1.3"), decimal.Decimal("-3.5"), None, decimal.Decimal("0.0")]),
    ("truncate(m, 1)", [decimal.Decimal("1.2"), decimal.Decimal("-3.5"), None, decimal.Decimal("0.0")]),
    ("mod(n, 3)", [1, -1, None, 0]),
    ("n % 4", [2, -3, None, 3]),
    ("n DIV 4", [2, -1, None, 0]),
    ("n / 4", [2.5, -1.75, None, 0.75]),
    ("power(n, 2)", [100.0, 49.0, None, 9.0]),
    ("sign(n)", [1, -1, None, 1]),
    ("greatest(n, 0)", [10, 0, None, 3]),
    ("least(n, 0)", [0, -7, None, 0]),
    ("m * 2", [decimal.Decimal("2.50"), decimal.Decimal("-7.00"), None, decimal.Decimal("0.00")]),
    ("m + n", [decimal.Decimal("11.25"), decimal.Decimal("-10.50"), None, decimal.Decimal("3.00")]),
]


@pytest.mark.parametrize(("expr", "expected"), MATH_CASES)
def test_math_functions(ctx: QueryContext, expr: str, expected: list) -> None:
    assert col(ctx, expr) == expected


def test_math_scalars(ctx: QueryContext) -> None:
    assert one(ctx, "sqrt(16)") == 4.0
    assert one(ctx, "sqrt(-1)") is None
    assert one(ctx, "ln(0)") is None
    assert one(ctx, "log10(1000)") == pytest.approx(3.0)
    assert one(ctx, "log2(8)") == pytest.approx(3.0)
    assert one(ctx, "log(2, 8)") == pytest.approx(3.0)
    assert one(ctx, "exp(0)") == 1.0
    assert one(ctx, "pi()") == pytest.approx(3.141592653589793)
    assert one(ctx, "round(2.5)") == 3
    assert one(ctx, "round(-2.5)") == -3
    assert one(ctx, "round(1.005, 2)") == decimal.Decimal("1.01")


CONDITIONAL_CASES = [
    ("if(n > 0, 'p', 'np')", ["p", "np", "np", "p"]),
    ("ifnull(s, 'z')", ["hello", "Ab", "z", "ünï"]),
    ("nullif(n, 10)", [None, -7, None, 3]),
    ("coalesce(NULL, n, 0)", [10, -7, 0, 3]),
    ("CASE n WHEN 10 THEN 'ten' WHEN 3 THEN 'three' END", ["ten", None, None, "three"]),
    ("CASE WHEN n > 5 THEN 1 WHEN n < 0 THEN -1 ELSE 0 END", [1, -1, 0, 0]),
    ("n IS NULL", [False, False, True, False]),
    ("n BETWEEN 0 AND 10", [True, False, None, True]),
    ("n IN (3, 10)", [True, False, None, True]),
    ("n NOT IN (3, NULL)", [None, None, None, False]),
    ("n <=> NULL", [False, False, True, False]),
]


@pytest.mark.parametrize(("expr", "expected"), CONDITIONAL_CASES)
def test_conditionals(ctx: QueryContext, expr: str, expected: list) -> None:
    assert col(ctx, expr) == expected


CAST_CASES = [
    ("CAST('12' AS SIGNED)", 12),
    ("CAST('abc' AS SIGNED)", None),
    ("CAST('1.7' AS INT)", 1),
    ("CAST(-1.7 AS BIGINT)", -1),
    ("CAST('3' AS UNSIGNED)", 3),
    ("CONVERT('42', SIGNED)", 42),
    ("CAST(12 AS CHAR)", "12"),
    ("CAST(1.50 AS VARCHAR(10))", "1.50"),
    ("CAST(3 AS STRING)", "3"),
    ("CAST('1.235' AS DECIMAL(5,2))", decimal.Decimal("1.24")),
    ("CAST('-1.235' AS DECIMAL(5,2))", decimal.Decimal("-1.24")),
    ("CAST('12345' AS DECIMAL(5,2))", None),
    ("CAST('2020-02-29' AS DATE)", dt.date(2020, 2, 29)),
    ("CAST('2021-02-29' AS DATE)", None),
    ("CAST('2020-01-02 03:04:05' AS DATETIME)", dt.datetime(2020, 1, 2, 3, 4, 5)),
    ("CAST('1.5' AS DOUBLE)", 1.5),
    ("DATE '2020-05-06'", dt.date(2020, 5, 6)),
    ("TIMESTAMP '2020-05-06 07:08:09'", dt.datetime(2020, 5, 6, 7, 8, 9)),
    ("CAST(DATE '2020-05-06' AS CHAR)", "2020-05-06"),
    ("CAST(TIMESTAMP '2020-05-06 07:08:09' AS CHAR)", "2020-05-06 07:08:09"),
    ("'10' + 5", 15.0),
    ("'2020-01-01' < DATE '2020-01-02'", True),
]


@pytest.mark.parametrize(("expr", "expected"), CAST_CASES)
def test_casts_and_literals(ctx: QueryContext, expr: str, expected: object) -> None:
    assert one(ctx, expr) == expected


def test_cast_types(ctx: QueryContext) -> None:
    t = execute_query(sqlglot.parse_one("SELECT CAST(n AS BIGINT), CAST(n AS DECIMAL(10,3)), CAST(d AS DATETIME), "
                                        "CAST(n AS DOUBLE), CAST(n AS CHAR) FROM t", read="doris"), ctx)
    assert [f.type for f in t.schema] == [pa.int64(), pa.decimal128(10, 3), pa.timestamp("us"), pa.float64(),
                                         pa.string()]


def test_sleep_waits_once_and_returns_zero() -> None:
    import time

    import sqlglot

    from planner.context import QueryContext
    from planner.query import execute_query

    start = time.monotonic()
    out = execute_query(sqlglot.parse_one("SELECT SLEEP(0.3)", read="doris"),
                        QueryContext(None, lambda db, name: None))
    assert out.column(0).to_pylist() == [0]
    assert 0.25 <= time.monotonic() - start < 3

"""Window functions and QUALIFY: answers checked against DuckDB run directly on the same tables (with
Doris's NULL order), result types checked against Doris's rules, and the errors Doris gives."""

from __future__ import annotations

import decimal

import duckdb
import pyarrow as pa
import pytest
import sqlglot

from planner.query import QueryContext, execute_query
from sql.errors import SqlError
from tests.planner.test_select import TABLES


def run(ctx: QueryContext, sql: str) -> pa.Table:
    return execute_query(sqlglot.parse_one(sql, read="doris"), ctx)


def duck(sql: str) -> list[tuple]:
    con = duckdb.connect()
    con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")
    for name, table in TABLES.items():
        con.register(name, table)
    return con.execute(sql).fetchall()


def _norm(v: object) -> object:
    # DuckDB's avg of a DECIMAL is a DOUBLE; Doris's (and ours) a DECIMAL with 4 more digits
    if isinstance(v, float | decimal.Decimal):
        return round(float(v), 4)
    return v


def same(got: pa.Table, expected: list[tuple]) -> bool:
    rows = [tuple(_norm(v) for v in r.values()) for r in got.to_pylist()]
    return sorted(rows, key=repr) == sorted((tuple(_norm(v) for v in r) for r in expected), key=repr)


# (dorislite SQL, DuckDB SQL when it differs)
CASES = [
    ("SELECT k, g, row_number() OVER (PARTITION BY g ORDER BY k) FROM fact WHERE k < 200", None),
    ("SELECT k, rank() OVER (ORDER BY grp), dense_rank() OVER (ORDER BY grp DESC) FROM fact WHERE k < 300", None),
    ("SELECT k, i, rank() OVER (PARTITION BY g ORDER BY i) FROM fact WHERE k < 300", None),
    ("SELECT k, ntile(4) OVER (ORDER BY k), percent_rank() OVER (ORDER BY grp), cume_dist() OVER (ORDER BY grp) "
     "FROM fact WHERE k < 100", None),
    ("SELECT k, lag(k) OVER (ORDER BY k), lead(k, 2) OVER (ORDER BY k), lag(grp, 1, -1) OVER (ORDER BY k) "
     "FROM fact WHERE k < 50", None),
    ("SELECT k, first_value(i) OVER (PARTITION BY g ORDER BY k), last_value(i) OVER (PARTITION BY g ORDER BY k) "
     "FROM fact WHERE k < 100", None),
    ("SELECT k, sum(i) OVER (PARTITION BY g), avg(i) OVER (PARTITION BY g), count(*) OVER (), "
     "count(i) OVER (PARTITION BY grp), min(v) OVER (PARTITION BY g), max(d) OVER () FROM fact WHERE k < 400", None),
    ("SELECT k, sum(i) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), "
     "avg(f) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), "
     "sum(v) OVER (ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM fact WHERE k < 60", None),
    ("SELECT g, sum(i), rank() OVER (ORDER BY sum(i) DESC), sum(sum(i)) OVER () FROM fact GROUP BY g", None),
    ("SELECT g, grp, count(*) AS c, row_number() OVER (PARTITION BY g ORDER BY count(*) DESC, grp) AS r "
     "FROM fact GROUP BY g, grp QUALIFY r <= 2",
     "SELECT g, grp, count(*) AS c, row_number() OVER (PARTITION BY g ORDER BY count(*) DESC, grp) AS r "
     "FROM fact GROUP BY g, grp QUALIFY r <= 2"),
    ("SELECT k FROM fact WHERE k < 100 QUALIFY rank() OVER (PARTITION BY grp ORDER BY k DESC) = 1", None),
    ("SELECT k, i + rank() OVER (ORDER BY k) * 2 FROM fact WHERE k < 20", None),
]


@pytest.mark.parametrize("sql, duck_sql", CASES)
def test_window_answers_equal_duckdb(ctx: QueryContext, sql: str, duck_sql: str | None) -> None:
    assert same(run(ctx, sql), duck(duck_sql or sql))


def test_window_order_by_in_the_outer_query(ctx: QueryContext) -> None:
    got = run(ctx, "SELECT k, row_number() OVER (ORDER BY k DESC) AS rn FROM fact WHERE k < 5 ORDER BY rn")
    assert got.to_pylist() == [{"k": 4, "rn": 1}, {"k": 3, "rn": 2}, {"k": 2, "rn": 3}, {"k": 1, "rn": 4},
                               {"k": 0, "rn": 5}]
    ordered = run(ctx, "SELECT k FROM fact WHERE k < 4 ORDER BY row_number() OVER (ORDER BY k DESC)")
    assert ordered.column(0).to_pylist() == [3, 2, 1, 0]


def test_nulls_sort_first_ascending_in_windows(ctx: QueryContext) -> None:
    got = run(ctx, "SELECT g, row_number() OVER (ORDER BY g) AS r FROM fact WHERE k < 200 ORDER BY r LIMIT 1")
    assert got.to_pylist()[0]["g"] is None
    got = run(ctx, "SELECT g, row_number() OVER (ORDER BY g DESC) AS r FROM fact WHERE k < 200 ORDER BY r DESC LIMIT 1")
    assert got.to_pylist()[0]["g"] is None


def test_window_result_types(ctx: QueryContext) -> None:
    got = run(ctx, "SELECT row_number() OVER (ORDER BY k), sum(grp) OVER (), sum(v) OVER (), avg(v) OVER (), "
                   "avg(grp) OVER (), lag(d) OVER (ORDER BY k), count(*) OVER () FROM fact WHERE k < 3")
    assert got.schema.types == [pa.int64(), pa.int64(), pa.decimal128(38, 2), pa.decimal128(38, 4), pa.float64(),
                                pa.date32(), pa.int64()]


@pytest.mark.parametrize("sql, message", [
    ("SELECT k FROM fact WHERE rank() OVER (ORDER BY k) = 1", "WHERE clause can not contain window functions"),
    ("SELECT sum(k) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM fact",
     "WindowFrame clause requires OrderBy clause"),
    ("SELECT sum(k) OVER (ORDER BY k RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM fact",
     "RANGE window frames only support UNBOUNDED and CURRENT ROW bounds"),
    ("SELECT ntile(0) OVER (ORDER BY k) FROM fact", "The bucket number of NTILE must be a constant positive integer"),
    ("SELECT lag(k, -1) OVER (ORDER BY k) FROM fact", "must be a constant positive integer"),
    ("SELECT g, rank() OVER (ORDER BY k) FROM fact GROUP BY g", "must appear in the GROUP BY clause"),
    ("SELECT count(DISTINCT k) OVER () FROM fact", "DISTINCT in the window function"),
    ("SELECT upper(g) OVER () FROM fact", "is not a window function"),
])
def test_window_errors(ctx: QueryContext, sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(ctx, sql)

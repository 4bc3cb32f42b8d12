"""Analysis errors come back as SqlError with Doris-like text and MySQL codes, never as tracebacks."""

from __future__ import annotations

import pyarrow as pa
import pytest
import sqlglot

from planner.query import ArrowTableSource, QueryContext, execute_query
from sql.errors import SqlError

T = pa.table({"k": pa.array([1, 2], pa.int32()), "v": pa.array(["a", "b"])})
U = pa.table({"k": pa.array([1], pa.int32()), "w": pa.array([5])})


@pytest.fixture()
def ctx() -> QueryContext:
    tables = {"t": ArrowTableSource("t", T), "u": ArrowTableSource("u", U)}

    def resolve(db: str | None, name: str) -> ArrowTableSource:
        if name not in tables:
            raise SqlError(f"errCode = 2, detailMessage = Table [{name}] does not exist in database [db].",
                           1146, "42S02")
        return tables[name]

    def variables(scope: str, name: str) -> object:
        raise SqlError(f"Unknown system variable '{name}'", 1193, "HY000")

    return QueryContext("db", resolve, variables)


def fails(ctx: QueryContext, sql: str) -> SqlError:
    with pytest.raises(SqlError) as info:
        execute_query(sqlglot.parse_one(sql, read="doris"), ctx)
    return info.value


def test_unknown_column(ctx: QueryContext) -> None:
    e = fails(ctx, "SELECT nope FROM t")
    assert (e.code, e.sqlstate) == (1054, "42S22")
    assert "Unknown column 'nope' in 'table list'" in e.message
    assert fails(ctx, "SELECT k FROM t WHERE zz = 1").code == 1054
    assert fails(ctx, "SELECT t.zz FROM t").code == 1054
    assert fails(ctx, "SELECT x.k FROM t").code == 1054


def test_column_names_are_case_insensitive(ctx: QueryContext) -> None:
    t = execute_query(sqlglot.parse_one("SELECT K, T.V FROM t WHERE k = 1", read="doris"), ctx)
    assert t.column_names == ["K", "V"] and t.to_pylist() == [{"K": 1, "V": "a"}]


def test_ambiguous_column(ctx: QueryContext) -> None:
    e = fails(ctx, "SELECT k FROM t JOIN u ON t.k = u.k")
    assert e.code == 1052 and "ambiguous" in e.message


def test_non_grouped_column(ctx: QueryContext) -> None:
    e = fails(ctx, "SELECT k, v, count(*) FROM t GROUP BY k")
    assert "'v' must appear in the GROUP BY clause or be used in an aggregate function" in e.message
    e = fails(ctx, "SELECT v, count(*) FROM t")
    assert "must appear in the GROUP BY clause" in e.message


def test_unknown_function(ctx: QueryContext) -> None:
    e = fails(ctx, "SELECT no_such_fn(k) FROM t")
    assert e.code == 1105 and "Can not found function 'no_such_fn'" in e.message


def test_aggregate_in_where(ctx: QueryContext) -> None:
    e = fails(ctx, "SELECT k FROM t WHERE count(*) > 1")
    assert e.code == 1111


def test_missing_table_error_passes_through(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT * FROM missing").code == 1146


def test_unknown_variable_passes_through(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT @@no_such_var").code == 1193


def test_union_column_count_mismatch(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT k FROM t UNION SELECT k, w FROM u").code == 1222


def test_scalar_subquery_with_many_rows(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT (SELECT k FROM t)").code == 1242


def test_bad_cast_target(ctx: QueryContext) -> None:
    e = fails(ctx, "SELECT CAST(k AS JSONB) FROM t")
    assert e.message.startswith("errCode = 2, detailMessage = ")


def test_unknown_order_position(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT k FROM t ORDER BY 3").code == 1054


def test_star_without_from(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT *").code == 1096


def test_derived_table_needs_alias(ctx: QueryContext) -> None:
    assert fails(ctx, "SELECT * FROM (SELECT 1)").code == 1248

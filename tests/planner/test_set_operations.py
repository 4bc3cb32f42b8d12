"""INTERSECT / EXCEPT / MINUS [ALL | DISTINCT]: answers checked against DuckDB run directly on the same
tables, types widened as UNION widens them, and the errors."""

from __future__ import annotations

import pyarrow as pa
import pytest

from planner.query import QueryContext
from sql.errors import SqlError
from tests.planner.test_window import duck, run, same

CASES = [
    "SELECT grp FROM fact INTERSECT SELECT grp FROM dim WHERE weight > 60",
    "SELECT g, grp FROM fact INTERSECT ALL SELECT g, grp FROM fact WHERE k < 500",
    "SELECT grp FROM dim EXCEPT SELECT grp FROM fact",
    "SELECT g FROM fact EXCEPT ALL SELECT g FROM fact WHERE k < 1000",
    "SELECT g FROM fact WHERE k < 100 EXCEPT SELECT label FROM dim",
    "SELECT grp FROM dim INTERSECT SELECT k FROM fact",
    "(SELECT grp FROM dim INTERSECT SELECT grp FROM fact) UNION ALL SELECT 99",
]


@pytest.mark.parametrize("sql", CASES)
def test_set_operations_equal_duckdb(ctx: QueryContext, sql: str) -> None:
    assert same(run(ctx, sql), duck(sql))


def test_widened_types(ctx: QueryContext) -> None:
    got = run(ctx, "SELECT grp, weight FROM dim EXCEPT SELECT grp, i FROM fact ORDER BY grp LIMIT 2")
    assert got.schema.types == [pa.int32(), pa.int64()]
    assert got.column(0).to_pylist() == sorted(got.column(0).to_pylist())
    mixed = run(ctx, "SELECT v FROM fact WHERE k < 10 INTERSECT SELECT grp FROM dim")
    assert pa.types.is_decimal(mixed.schema.types[0])


def test_set_operation_errors(ctx: QueryContext) -> None:
    with pytest.raises(SqlError, match="different number of columns"):
        run(ctx, "SELECT k, g FROM fact EXCEPT SELECT grp FROM dim")
    with pytest.raises(SqlError, match="Unsupported INTERSECT"):
        run(ctx, "SELECT g FROM fact INTERSECT SELECT grp FROM dim")

"""GROUP BY ROLLUP / CUBE / GROUPING SETS / WITH ROLLUP with GROUPING() and GROUPING_ID(): answers checked
against DuckDB run directly on the same tables, and the errors."""

from __future__ import annotations

import pytest

from planner.query import QueryContext
from sql.errors import SqlError
from tests.planner.test_window import duck, run, same

CASES = [
    ("SELECT g, grp % 3 AS m, count(*), sum(i), avg(v), grouping(g), grouping_id(g, grp % 3) FROM fact "
     "GROUP BY ROLLUP(g, grp % 3)", None),
    ("SELECT g, grp % 2, sum(f), grouping_id(g, grp % 2) FROM fact GROUP BY CUBE(g, grp % 2)", None),
    ("SELECT g, d, count(*) FROM fact WHERE k < 300 GROUP BY GROUPING SETS ((g, d), (g), ())", None),
    ("SELECT g, grp % 2 AS m, max(k) FROM fact GROUP BY g, grp % 2 WITH ROLLUP",
     "SELECT g, grp % 2 AS m, max(k) FROM fact GROUP BY ROLLUP(g, grp % 2)"),
    ("SELECT g, grp % 2 AS m, min(k) FROM fact GROUP BY g, ROLLUP(grp % 2)", None),
    ("SELECT g, sum(i) FROM fact GROUP BY ROLLUP(g) HAVING grouping(g) = 1 OR sum(i) > 0", None),
    ("SELECT g, sum(i), rank() OVER (PARTITION BY grouping(g) ORDER BY sum(i)) FROM fact GROUP BY ROLLUP(g)",
     None),
]


@pytest.mark.parametrize("sql, duck_sql", CASES)
def test_grouping_sets_equal_duckdb(ctx: QueryContext, sql: str, duck_sql: str | None) -> None:
    assert same(run(ctx, sql), duck(duck_sql or sql))


def test_rolled_up_rows(ctx: QueryContext) -> None:
    got = run(ctx, "SELECT label, count(*), grouping(label) FROM dim GROUP BY ROLLUP(label) ORDER BY label")
    assert got.to_pylist()[0] == {"label": None, "count(*)": 40, "grouping(label)": 1}
    assert len(got) == 8


@pytest.mark.parametrize("sql, message", [
    ("SELECT grouping(g) FROM fact GROUP BY g", "can only be used with GROUP BY GROUPING SETS, ROLLUP or CUBE"),
    ("SELECT grouping(k) FROM fact GROUP BY ROLLUP(g)", "must be in the GROUP BY clause"),
    ("SELECT count(*) FROM fact GROUP BY CUBE(k, g, i, d, f, v, grp, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6)",
     "Too many sets in GROUP BY clause"),
    ("SELECT g, corr(f.i, f.k) FROM fact f, dim d WHERE f.grp = d.grp GROUP BY ROLLUP(g)",
     "Unsupported aggregate with ROLLUP"),
])
def test_grouping_set_errors(ctx: QueryContext, sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        run(ctx, sql)

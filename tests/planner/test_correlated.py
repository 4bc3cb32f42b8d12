"""Correlated subqueries (EXISTS, NOT EXISTS, IN, NOT IN, scalar; in WHERE, the select list and HAVING;
nested two deep): answers checked against DuckDB run directly on the same tables."""

from __future__ import annotations

import pytest
import sqlglot

from planner.duck.plan import DuckRegion
from planner.physical.plan import to_physical
from planner.query import QueryContext, plan_query
from sql.errors import SqlError
from tests.planner.test_window import duck, run, same

CASES = [
    "SELECT d.grp FROM dim d WHERE EXISTS (SELECT 1 FROM fact f WHERE f.grp = d.grp AND f.i > 45)",
    "SELECT d.grp FROM dim d WHERE NOT EXISTS (SELECT 1 FROM fact f WHERE f.grp = d.grp)",
    "SELECT d.grp, (SELECT max(k) FROM fact f WHERE f.grp = d.grp) AS m FROM dim d",
    "SELECT k FROM fact f WHERE f.i > (SELECT avg(weight) FROM dim d WHERE d.grp = f.grp) - 50",
    "SELECT grp FROM dim d WHERE grp NOT IN (SELECT grp FROM fact f WHERE f.g = d.label)",
    "SELECT grp FROM dim d WHERE grp IN (SELECT grp FROM fact f WHERE f.i = d.weight)",
    # TPC-H Q17 / Q2 / Q21 shapes
    "SELECT sum(f.v) / 7.0 FROM fact f, dim d WHERE d.grp = f.grp AND d.label = 'L3' "
    "AND f.i < (SELECT 0.2 * avg(i) FROM fact f2 WHERE f2.grp = d.grp)",
    "SELECT d.label, f.k FROM fact f, dim d WHERE f.grp = d.grp AND f.v = (SELECT min(f2.v) FROM fact f2 "
    "WHERE f2.grp = d.grp)",
    "SELECT d.label, count(*) FROM dim d, fact f1 WHERE f1.grp = d.grp AND EXISTS (SELECT * FROM fact f2 "
    "WHERE f2.grp = f1.grp AND f2.k <> f1.k) AND NOT EXISTS (SELECT * FROM fact f3 WHERE f3.grp = f1.grp "
    "AND f3.k <> f1.k AND f3.i > 48) GROUP BY d.label",
    # nested: the innermost subquery reads the outermost query
    "SELECT d.grp FROM dim d WHERE EXISTS (SELECT 1 FROM fact f WHERE f.grp = d.grp AND f.k IN "
    "(SELECT k FROM fact f2 WHERE f2.i = d.grp))",
    # in HAVING, and correlated through a derived table
    "SELECT g, count(*) FROM fact f GROUP BY g HAVING count(*) > (SELECT count(*) / 10 FROM fact)",
    "SELECT d.grp FROM dim d WHERE 3 < (SELECT count(*) FROM (SELECT k FROM fact f WHERE f.grp = d.grp "
    "AND f.i > 40) t)",
]


@pytest.mark.parametrize("sql", CASES)
def test_correlated_subqueries_equal_duckdb(ctx: QueryContext, sql: str) -> None:
    assert same(run(ctx, sql), duck(sql))


def test_a_correlated_filter_runs_in_duckdb(ctx: QueryContext) -> None:
    import sqlglot

    bound = plan_query(sqlglot.parse_one("SELECT d.grp FROM dim d WHERE EXISTS (SELECT 1 FROM fact f "
                                         "WHERE f.grp = d.grp)", read="doris"), ctx)
    assert isinstance(to_physical(bound.plan, ctx), DuckRegion)


def test_correlated_errors(ctx: QueryContext) -> None:
    with pytest.raises(SqlError, match="Operand should contain 1 column"):
        run(ctx, "SELECT grp FROM dim d WHERE grp IN (SELECT grp, k FROM fact f WHERE f.i = d.weight)")
    with pytest.raises(SqlError, match="Unknown column 'nope'"):
        run(ctx, "SELECT grp FROM dim d WHERE EXISTS (SELECT 1 FROM fact f WHERE f.grp = nope)")


def test_expressions_duckdb_lacks_run_as_evaluator_functions(ctx: QueryContext) -> None:
    # TPC-H Q22's shape: substring() next to a correlated NOT EXISTS, in one DuckDB query
    got = run(ctx, "SELECT d.grp FROM dim d WHERE substring(d.label, 2, 1) = '3' AND NOT EXISTS "
                   "(SELECT 1 FROM fact f WHERE f.grp = d.grp AND f.i > 40)")
    assert same(got, duck("SELECT d.grp FROM dim d WHERE substring(d.label, 2, 1) = '3' AND NOT EXISTS "
                          "(SELECT 1 FROM fact f WHERE f.grp = d.grp AND f.i > 40)"))
    got = run(ctx, "SELECT f.k, upper(d.label) FROM fact f JOIN dim d ON f.grp = d.grp WHERE f.k < 3")
    assert sorted(got.to_pylist(), key=lambda r: r["k"]) == [{"k": 0, "upper(d.label)": "L0"},
                                                            {"k": 1, "upper(d.label)": "L1"},
                                                            {"k": 2, "upper(d.label)": "L2"}]
    with pytest.raises(SqlError, match="Unsupported expression types"):  # the evaluator's own error
        run(ctx, "SELECT count(*) FROM fact f JOIN dim d ON f.grp = d.grp WHERE d.label REGEXP '('")


def test_exists_reads_no_column_of_its_query(ctx) -> None:
    """EXISTS (SELECT * ...) is planned as SELECT 1: its scan reads only what its WHERE needs; an aggregate
    without GROUP BY (always one row) keeps its meaning."""
    from planner.bind.bind_expr import _exists_query

    def scan_widths(sql: str) -> list[int]:
        from planner.logical import LogicalScan
        from planner.query import plan_query

        bound = plan_query(sqlglot.parse_one(sql, read="doris"), ctx)
        found = []
        for node in bound.plan.walk():
            for e in node.expressions():
                for sub in e.walk():
                    if hasattr(sub, "plan") and sub.__class__.__name__ == "SubqueryExpr":
                        found += [len(n.columns) for n in sub.plan.walk() if isinstance(n, LogicalScan)]
        return found

    assert _exists_query(sqlglot.parse_one("SELECT count(*) FROM t WHERE k < 0", read="doris")).sql() == \
        "SELECT COUNT(*) FROM t WHERE k < 0"
    assert _exists_query(sqlglot.parse_one("SELECT * FROM t WHERE k < 0", read="doris")).sql() == \
        "SELECT 1 FROM t WHERE k < 0"
    widths = scan_widths("SELECT 1 FROM fact f WHERE EXISTS (SELECT * FROM dim d WHERE d.grp = f.grp)")
    assert widths and max(widths) == 1

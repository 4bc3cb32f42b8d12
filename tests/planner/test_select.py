"""SELECT over ArrowTableSource tables: results checked against DuckDB on the same data where SQL
semantics agree, and against explicit values where MySQL/Doris differ (names, NULL order, types)."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import sqlglot

from planner.query import ArrowTableSource, QueryContext, execute_query
from sql.errors import SqlError


def make_tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(7)
    n = 2000
    k = np.arange(n, dtype=np.int32)
    g_choices = np.array(["a", "b", "c", "d", "e"])
    g = g_choices[rng.integers(0, 5, n)].astype(object)
    g[rng.random(n) < 0.05] = None
    v = [decimal.Decimal(int(x)).scaleb(-2) for x in rng.integers(-10000, 10000, n)]
    v = [None if rng.random() < 0.05 else x for x in v]
    f = rng.normal(size=n)
    i = rng.integers(-50, 50, n).astype(np.int64)
    d = (np.datetime64("2020-01-01") + rng.integers(0, 800, n).astype("timedelta64[D]"))
    fact = pa.table({
        "k": pa.array(k),
        "g": pa.array(list(g), pa.string()),
        "v": pa.array(v, pa.decimal128(10, 2)),
        "f": pa.array(f),
        "i": pa.array(i, pa.int64(), mask=rng.random(n) < 0.05),
        "d": pa.array(d, pa.date32()),
        "grp": pa.array((k % 37).astype(np.int32)),
    })
    dim = pa.table({
        "grp": pa.array(np.arange(0, 40, dtype=np.int32)),
        "label": pa.array([f"L{x % 7}" for x in range(40)]),
        "weight": pa.array(np.arange(40, dtype=np.int64) * 3),
    })
    return {"fact": fact, "dim": dim}


TABLES = make_tables()


@pytest.fixture()
def ctx() -> QueryContext:
    sources = {name: ArrowTableSource(name, t) for name, t in TABLES.items()}

    def resolve(db: str | None, name: str) -> ArrowTableSource:
        if name not in sources:
            raise SqlError(f"Table '{db or 'test'}.{name}' doesn't exist", 1146, "42S02")
        return sources[name]

    variables = {("session", "version_comment"): "Doris version doris-2.1.0", ("user", "x"): 42,
                 ("global", "max_allowed_packet"): 16777216, ("session", "sql_mode"): "ONLY_FULL_GROUP_BY"}
    return QueryContext("test", resolve, lambda scope, name: variables[(scope, name.lower())],
                        {"database": lambda: "test", "user": lambda: "root@127.0.0.1",
                         "connection_id": lambda: 7, "version": lambda: "5.7.99"})


def run(ctx: QueryContext, sql: str) -> pa.Table:
    return execute_query(sqlglot.parse_one(sql, read="doris"), ctx)


def _norm(v: object) -> object:
    if isinstance(v, (float, decimal.Decimal)):
        f = float(v)
        return None if math.isnan(f) else round(f, 6)
    return v


def rows(t: pa.Table) -> list[tuple]:
    return [tuple(_norm(x) for x in r.values()) for r in t.to_pylist()]


def duck(sql: str) -> list[tuple]:
    con = duckdb.connect()
    for name, t in TABLES.items():
        con.register(name, t)
    return [tuple(_norm(x) for x in r) for r in con.execute(sql).fetchall()]


def _key(r: tuple) -> tuple:
    return tuple((x is None, str(type(x)), x if x is not None else 0) for x in r)


# -- results agree with DuckDB ---------------------------------------------------------------------

SAME_AS_DUCKDB = [
    "SELECT k, g, v FROM fact WHERE k < 50",
    "SELECT k, v FROM fact WHERE v > 10 AND g = 'a'",
    "SELECT k FROM fact WHERE g IN ('a', 'c') OR i BETWEEN -3 AND 3",
    "SELECT k FROM fact WHERE g NOT IN ('a', 'c')",
    "SELECT k FROM fact WHERE g IS NULL",
    "SELECT k, i FROM fact WHERE i IS NOT NULL AND NOT (i > 0)",
    "SELECT k FROM fact WHERE d >= '2021-01-01' AND d < '2021-02-01'",
    "SELECT k FROM fact WHERE g LIKE 'a%' AND k % 7 = 3",
    "SELECT g, count(*), count(i), sum(i), min(v), max(v), sum(v) FROM fact GROUP BY g",
    "SELECT g, count(DISTINCT grp) FROM fact GROUP BY g",
    "SELECT g, grp, sum(v) FROM fact WHERE k < 500 GROUP BY g, grp",
    "SELECT g, count(*) FROM fact GROUP BY g HAVING count(*) > 380",
    "SELECT count(*), sum(i), min(d), max(d) FROM fact",
    "SELECT count(*), sum(i), max(g) FROM fact WHERE 1 = 0",
    "SELECT DISTINCT g FROM fact",
    "SELECT DISTINCT g, grp % 3 FROM fact",
    "SELECT f.k, dim.label FROM fact f JOIN dim ON f.grp = dim.grp WHERE f.k < 100",
    "SELECT f.k, dim.label FROM fact f, dim WHERE f.grp = dim.grp AND dim.weight > 60",
    "SELECT dim.label, count(*), sum(f.i) FROM fact f INNER JOIN dim ON f.grp = dim.grp GROUP BY dim.label",
    "SELECT d.grp, f.k FROM dim d LEFT JOIN fact f ON f.grp = d.grp AND f.k < 40",
    "SELECT d.grp, f.k FROM fact f RIGHT JOIN dim d ON f.grp = d.grp AND f.k < 40",
    "SELECT f.k, d.grp FROM fact f JOIN dim d ON f.grp = d.grp AND f.i > d.weight",
    "SELECT count(*) FROM dim a CROSS JOIN dim b",
    "SELECT k FROM fact WHERE grp IN (SELECT grp FROM dim WHERE weight > 100)",
    "SELECT k FROM fact WHERE grp NOT IN (SELECT grp FROM dim WHERE weight > 10)",
    "SELECT k FROM fact WHERE i > (SELECT avg(weight) FROM dim) - 60",
    "SELECT count(*) FROM fact WHERE EXISTS (SELECT 1 FROM dim WHERE weight > 1000)",
    "SELECT grp FROM dim UNION SELECT grp FROM fact",
    "SELECT grp FROM dim UNION ALL SELECT grp FROM fact WHERE k < 10",
    "SELECT s.g, s.c FROM (SELECT g, count(*) AS c FROM fact GROUP BY g) AS s WHERE s.c > 300",
    "WITH w AS (SELECT grp, weight FROM dim WHERE weight < 30) SELECT w.grp, count(*) FROM w JOIN fact USING (grp) GROUP BY w.grp",
    "SELECT k, CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero' END FROM fact WHERE k < 200",
    "SELECT k, coalesce(g, 'none'), upper(g), length(g) FROM fact WHERE k < 200",
    "SELECT k, i * 2 + 1, -i, abs(i) FROM fact WHERE k < 200",
]


@pytest.mark.parametrize("sql", SAME_AS_DUCKDB)
def test_matches_duckdb(ctx: QueryContext, sql: str) -> None:
    got = sorted(rows(run(ctx, sql)), key=_key)
    want = sorted(duck(sql), key=_key)
    assert got == want


ORDERED_SAME_AS_DUCKDB = [
    "SELECT k, g FROM fact WHERE g IS NOT NULL ORDER BY k DESC LIMIT 10",
    "SELECT k FROM fact ORDER BY k LIMIT 5 OFFSET 100",
    "SELECT g, count(*) AS c FROM fact WHERE g IS NOT NULL GROUP BY g ORDER BY c DESC, g",
    "SELECT grp, sum(i) AS s FROM fact GROUP BY grp ORDER BY 2 DESC, 1 LIMIT 7",
    "SELECT k, f FROM fact ORDER BY f DESC LIMIT 3",
    "SELECT k, d FROM fact ORDER BY d, k LIMIT 20",
]


@pytest.mark.parametrize("sql", ORDERED_SAME_AS_DUCKDB)
def test_ordered_matches_duckdb(ctx: QueryContext, sql: str) -> None:
    assert rows(run(ctx, sql)) == duck(sql)


# -- MySQL / Doris specific behaviour ------------------------------------------------------------------


def test_select_without_from_names_and_types(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT 1, 1.5, 'x', NULL, 1 + 1, 7 / 2, 7 DIV 2, -7 % 3, 5 / 0, 5 % 0")
    # Doris's labels: binary operators in parentheses
    assert t.column_names == ["1", "1.5", "x", "NULL", "(1 + 1)", "(7 / 2)", "(7 DIV 2)", "(-7 % 3)", "(5 / 0)",
                              "(5 % 0)"]
    assert t.schema.field(0).type == pa.int64()
    assert t.schema.field(1).type == pa.decimal128(2, 1)
    assert t.schema.field(2).type == pa.string()
    assert t.schema.field(5).type == pa.float64()
    assert t.to_pylist()[0] == {
        "1": 1, "1.5": decimal.Decimal("1.5"), "x": "x", "NULL": None, "(1 + 1)": 2, "(7 / 2)": 3.5,
        "(7 DIV 2)": 3, "(-7 % 3)": -1, "(5 / 0)": None, "(5 % 0)": None,
    }


def test_from_dual_and_where_false(ctx: QueryContext) -> None:
    assert run(ctx, "SELECT 'a' AS x FROM DUAL").to_pylist() == [{"x": "a"}]
    t = run(ctx, "SELECT '' TABLE_SCHEM, '' TABLE_catalog FROM DUAL WHERE 1=0")
    assert t.num_rows == 0 and t.column_names == ["TABLE_SCHEM", "TABLE_catalog"]


def test_column_names_keep_select_list_spelling(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT K, fact.G, count(*), sum(I) AS Total, v FROM fact GROUP BY K, fact.G, v LIMIT 1")
    assert t.column_names == ["K", "G", "count(*)", "Total", "v"]


def test_star_and_qualified_star(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT * FROM dim WHERE grp = 1")
    assert t.column_names == ["grp", "label", "weight"]
    t = run(ctx, "SELECT d.*, f.k FROM dim d JOIN fact f ON f.grp = d.grp WHERE f.k = 5")
    assert t.to_pylist() == [{"grp": 5, "label": "L5", "weight": 15, "k": 5}]


def test_using_join_star_shows_column_once(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT * FROM dim JOIN fact USING (grp) WHERE k = 3")
    assert t.column_names.count("grp") == 1


def test_result_types(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT grp, count(*), sum(grp), sum(v), avg(v), avg(grp), min(d), max(g), k + 1, f * 2 "
                 "FROM fact GROUP BY grp, k, f LIMIT 1")
    types = [f.type for f in t.schema]
    assert types[0] == pa.int32()  # INT keeps its width
    assert types[1] == pa.int64()  # count -> BIGINT
    assert types[2] == pa.int64()  # sum(INT) -> BIGINT
    assert types[3] == pa.decimal128(38, 2)  # sum(DECIMAL(10,2)) -> DECIMAL(38,2)
    assert types[4] == pa.decimal128(38, 4)  # avg(DECIMAL(p,2)) -> scale max(s, 4), as Doris
    assert types[5] == pa.float64()  # avg(INT) -> DOUBLE
    assert types[6] == pa.date32()
    assert types[7] == pa.string()
    assert types[8] == pa.int64()
    assert types[9] == pa.float64()


def test_avg_decimal_value(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT avg(v) FROM (SELECT CAST('1.00' AS DECIMAL(10,2)) AS v UNION ALL "
                 "SELECT CAST('2.00' AS DECIMAL(10,2)) UNION ALL SELECT CAST('2.00' AS DECIMAL(10,2))) s")
    assert t.column(0).to_pylist() == [decimal.Decimal("1.6667")]


def test_aggregate_over_empty_input_gives_one_row(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT count(*), count(g), sum(i), avg(i), min(g) FROM fact WHERE k < 0")
    assert t.to_pylist() == [{"count(*)": 0, "count(g)": 0, "sum(i)": None, "avg(i)": None, "min(g)": None}]
    assert run(ctx, "SELECT g, count(*) FROM fact WHERE k < 0 GROUP BY g").num_rows == 0


def test_null_ordering_is_mysql(ctx: QueryContext) -> None:
    asc = run(ctx, "SELECT g FROM fact WHERE k < 100 ORDER BY g").column(0).to_pylist()
    assert asc[0] is None and asc[-1] is not None
    desc = run(ctx, "SELECT g FROM fact WHERE k < 100 ORDER BY g DESC").column(0).to_pylist()
    assert desc[-1] is None and desc[0] is not None
    nulls_last = run(ctx, "SELECT g FROM fact WHERE k < 100 ORDER BY g ASC NULLS LAST").column(0).to_pylist()
    assert nulls_last[-1] is None


def test_order_by_alias_position_expression_and_hidden_column(ctx: QueryContext) -> None:
    by_alias = run(ctx, "SELECT k AS key_col FROM fact WHERE k < 5 ORDER BY key_col DESC").column(0).to_pylist()
    assert by_alias == [4, 3, 2, 1, 0]
    by_pos = run(ctx, "SELECT g, k FROM fact WHERE k < 5 ORDER BY 2 DESC").column(1).to_pylist()
    assert by_pos == [4, 3, 2, 1, 0]
    hidden = run(ctx, "SELECT g FROM fact WHERE k < 5 ORDER BY k DESC")
    assert hidden.column_names == ["g"]
    assert hidden.column(0).to_pylist() == [r["g"] for r in TABLES["fact"].slice(0, 5).to_pylist()][::-1]
    expr = run(ctx, "SELECT k FROM fact WHERE k < 5 ORDER BY k % 2, k").column(0).to_pylist()
    assert expr == [0, 2, 4, 1, 3]


def test_group_by_position_alias_and_expression(ctx: QueryContext) -> None:
    a = sorted(run(ctx, "SELECT g AS x, count(*) FROM fact GROUP BY x").to_pylist(), key=lambda r: str(r["x"]))
    b = sorted(run(ctx, "SELECT g, count(*) FROM fact GROUP BY 1").to_pylist(), key=lambda r: str(r["g"]))
    assert [r["count(*)"] for r in a] == [r["count(*)"] for r in b]
    t = run(ctx, "SELECT grp % 2 AS parity, count(*) FROM fact GROUP BY grp % 2 ORDER BY parity")
    assert t.column(0).to_pylist() == [0, 1]
    assert sum(t.column(1).to_pylist()) == 2000


def test_count_distinct_multiple_columns(ctx: QueryContext) -> None:
    got = run(ctx, "SELECT count(DISTINCT g, grp) FROM fact").column(0).to_pylist()[0]
    want = duck("SELECT count(*) FROM (SELECT DISTINCT g, grp FROM fact WHERE g IS NOT NULL)")[0][0]
    assert got == want


def test_variables_and_session_functions(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT @@version_comment, @@session.sql_mode, @@global.max_allowed_packet, @x, "
                 "database(), user(), connection_id(), version()")
    assert t.column_names == ["@@version_comment", "@@session.sql_mode", "@@global.max_allowed_packet", "@x",
                              "database()", "user()", "connection_id()", "version()"]
    assert list(t.to_pylist()[0].values()) == ["Doris version doris-2.1.0", "ONLY_FULL_GROUP_BY", 16777216, 42,
                                                "test", "root@127.0.0.1", 7, "5.7.99"]


def test_union_column_names_and_types(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT 'TABLE' TABLE_TYPE UNION SELECT 'SYSTEM VIEW' TABLE_TYPE UNION SELECT 'VIEW' TABLE_TYPE "
                 "ORDER BY TABLE_TYPE")
    assert t.column_names == ["TABLE_TYPE"]
    assert t.column(0).to_pylist() == ["SYSTEM VIEW", "TABLE", "VIEW"]
    t = run(ctx, "SELECT 1 AS a UNION ALL SELECT 2.5 UNION ALL SELECT 1")
    assert t.schema.field(0).type == pa.decimal128(20, 1)
    assert sorted(t.column(0).to_pylist()) == [1, 1, decimal.Decimal("2.5")]


def test_scalar_subquery_in_select(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT (SELECT max(weight) FROM dim) AS m, (SELECT weight FROM dim WHERE grp = 100) AS none")
    assert t.to_pylist() == [{"m": 117, "none": None}]


def test_predicates_pushed_into_scan_and_columns_pruned() -> None:
    src = ArrowTableSource("fact", TABLES["fact"])
    ctx = QueryContext("test", lambda db, name: src)
    t = run(ctx, "SELECT k FROM fact WHERE d = '2020-03-01' AND grp IN (1, 2) AND g IS NOT NULL AND "
                 "i BETWEEN -5 AND 5 AND k > 3.5")
    cols, preds = src.scans[-1]
    assert set(cols) == {"k", "d", "grp", "g", "i"}
    pushed = {(p.column, p.op.value, p.values) for p in preds}
    assert ("d", "=", (dt.date(2020, 3, 1),)) in pushed
    assert ("grp", "in", (1, 2)) in pushed
    assert ("g", "is not null", ()) in pushed
    assert ("i", ">=", (-5,)) in pushed and ("i", "<=", (5,)) in pushed
    assert not any(c == "k" for c, _, _ in pushed)  # 3.5 is not an INT: not pushed, still filtered
    want = duck("SELECT k FROM fact WHERE d = DATE '2020-03-01' AND grp IN (1, 2) AND g IS NOT NULL "
                "AND i BETWEEN -5 AND 5 AND k > 3.5")
    assert sorted(rows(t)) == sorted(want)


def test_source_returning_extra_rows_is_still_filtered() -> None:
    class Lazy(ArrowTableSource):
        def scan(self, columns, predicates):  # ignores predicates, as a coarse storage scan may
            return self.table.select(list(columns))

    ctx = QueryContext("test", lambda db, name: Lazy("dim", TABLES["dim"]))
    assert run(ctx, "SELECT grp FROM dim WHERE grp = 3").column(0).to_pylist() == [3]


def test_comma_join_becomes_hash_join(ctx: QueryContext) -> None:
    from planner.logical import LogicalJoin
    from planner.query import plan_query

    bq = plan_query(sqlglot.parse_one("SELECT a.k FROM fact a, dim b WHERE a.grp = b.grp AND b.weight > 3",
                                      read="doris"), ctx)
    joins = [n for n in bq.plan.walk() if isinstance(n, LogicalJoin)]
    assert joins and joins[0].kind == "inner" and len(joins[0].left_keys) == 1


def test_in_subquery_metadata_style(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT label FROM dim WHERE grp IN (SELECT grp FROM fact WHERE k IN (1, 2, 3)) ORDER BY label")
    assert t.column(0).to_pylist() == ["L1", "L2", "L3"]


def test_having_without_group_by_filters_on_alias(ctx: QueryContext) -> None:
    t = run(ctx, "SELECT label AS TABLE_TYPE, grp FROM dim WHERE grp < 10 HAVING TABLE_TYPE IN ('L1', 'L2') "
                 "ORDER BY grp")
    assert t.column("grp").to_pylist() == [1, 2, 8, 9]

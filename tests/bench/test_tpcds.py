"""TPC-DS benchmark kit without running it: Doris's 99 query texts and DDL parse, the DDL and the generator agree
on columns, DuckDB's copies bind, the comparison (ties at the LIMIT included) and the report (no dsdgen venv, no
server)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from bench.dbgen import ddl_columns, duckdb_type
from bench.tpc import QueryResult, Reference, Report, split_statements
from bench.tpcds.compare import compare
from bench.tpcds.generate import default_out, is_generated, select_list
from bench.tpcds.queries import DUCKDB_SETUP, QUERIES, SOURCES, duckdb_sql, queries
from bench.tpcds.run import KIT
from bench.tpcds.schema import DEFAULT_BUCKETS, SOURCE_COLUMNS, TABLES, all_ddl, columns, ddl, doris_ddl
from sql import statements as st
from sql.parse import parse

STATEMENTS = [(name, i, s) for name, text in QUERIES.items() for i, s in enumerate(split_statements(text))]


def test_99_queries() -> None:
    assert list(QUERIES) == [f"q{i}" for i in range(1, 100)] == list(SOURCES)
    assert queries() is QUERIES and KIT.query_count == 99
    assert SOURCES["q7"] == "tools/tpcds-tools/queries/sf1/query7.sql"
    assert sum(s.startswith("tools/tpcds-tools/queries/sf1/") for s in SOURCES.values()) == 41
    assert [n for n, t in QUERIES.items() if len(split_statements(t)) != 1] == ["q24"]
    assert all(t.endswith(";\n") for t in QUERIES.values())  # as published
    with pytest.raises(ValueError):
        queries("sf100")


def test_split_statements() -> None:
    assert split_statements("select 1;\n select ';' -- a; comment\n;") == ["select 1", "select ';' -- a; comment"]
    assert split_statements("select 1") == ["select 1"]
    assert split_statements(" ;\n") == []


@pytest.mark.parametrize(("name", "i", "text"), STATEMENTS, ids=[f"{n}.{i}" for n, i, _ in STATEMENTS])
def test_query_parses(name: str, i: int, text: str) -> None:  # Doris's texts as published
    [statement] = parse(text)
    assert isinstance(statement, st.Query)


def test_ddl_parses_and_matches_columns() -> None:
    statements = [parse(text)[0] for text in all_ddl()]
    assert len(TABLES) == 24 and "dbgen_version" not in TABLES
    assert sum(len(columns(t)) for t in TABLES) == 425
    for table, create in zip(TABLES, statements, strict=True):
        assert isinstance(create, st.CreateTable) and create.name == table
        assert [c.name for c in create.columns] == [name for name, _ in columns(table)]
        assert create.keys.type == "DUPLICATE"
        assert create.distribution.type == "HASH" and create.distribution.buckets == DEFAULT_BUCKETS[table]
        assert "colocate_with" not in dict(create.properties)
    assert '"colocate_with" = "store"' in doris_ddl("store_sales") and "BUCKETS 32" in doris_ddl("store_sales")
    assert DEFAULT_BUCKETS["store_sales"] == 4 and DEFAULT_BUCKETS["item"] == 2 and DEFAULT_BUCKETS["store"] == 1
    assert parse(ddl("store_returns", 3))[0].distribution.buckets == 3
    assert [c for c, _ in columns("catalog_sales")][:3] == ["cs_item_sk", "cs_order_number", "cs_sold_date_sk"]
    assert ("p_response_targe", "integer") in columns("promotion")
    assert duckdb_type("char(16)") == "VARCHAR" and duckdb_type("integer") == "INTEGER"
    assert duckdb_type("decimal(7,2)") == "DECIMAL(7,2)" and duckdb_type("datetime") == "TIMESTAMP"
    assert ddl_columns("CREATE TABLE t (\n  a int,\n  b char(2)\n)\nDUPLICATE KEY(a)") == [("a", "int"), ("b", "char(2)")]


def _tables(con: duckdb.DuckDBPyConnection, names: dict[str, str] | None = None) -> None:
    for table in TABLES:
        cols = ", ".join(f"{(names or {}).get(n, n)} {duckdb_type(t)}" for n, t in columns(table))
        con.execute(f"CREATE TABLE {table} ({cols})")


@pytest.fixture(scope="module")
def con():
    """Empty tables of the Parquet files' types and names, with the runner's settings."""
    c = duckdb.connect()
    for statement in DUCKDB_SETUP:
        c.execute(statement)
    _tables(c)
    yield c
    c.close()


def test_duckdb_copies_bind(con) -> None:
    for name, _, text in STATEMENTS:
        con.execute(duckdb_sql(text)).fetchall()  # fails on the first that DuckDB refuses
        assert duckdb_sql(text) == text or name == "q90"
    assert ') "at",' in duckdb_sql(QUERIES["q90"])
    assert con.execute("SELECT 1 / 0, 0.0 / 0.0").fetchall() == [(None, None)]  # Doris: NULL


def test_generator_select_runs_on_dsdgen_names() -> None:
    c = duckdb.connect()
    _tables(c, {doris: dsdgen for doris, dsdgen in SOURCE_COLUMNS.items()})
    for table in TABLES:
        described = c.execute(f"DESCRIBE SELECT {select_list(table)} FROM {table}").fetchall()
        assert [r[0] for r in described] == [name for name, _ in columns(table)]
    assert "CAST(p_response_target AS INTEGER) AS p_response_targe" in select_list("promotion")
    assert default_out(0.1).name == "tpcds-sf0.1" and not is_generated(Path("/nonexistent"))


@pytest.fixture()
def ties():
    c = duckdb.connect()
    for statement in DUCKDB_SETUP:
        c.execute(statement)
    c.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a', 10), (2, 'b', 10), (3, 'c', 20), (4, 'd', 20), "
              "(5, 'e', 20), (6, 'f', 30), (7, NULL, NULL)) v(id, name, g)")

    def ref(sql: str) -> tuple[list[tuple], Reference]:
        cur = c.execute(sql)
        rows = cur.fetchall()
        return rows, Reference(c, sql, tuple(d[0] for d in cur.description))
    yield ref
    c.close()


def test_compare_ties_at_limit(ties) -> None:
    expected, ref = ties("select id, name, g from t order by g limit 5")
    assert expected[0] == (7, None, None)  # Doris's NULL order: first ascending
    assert compare(list(expected), expected, ref) == (None, None)
    other = next(r for r in [(3, "c", 20), (4, "d", 20), (5, "e", 20)] if r not in expected)
    diff, note = compare([*expected[:4], other], expected, ref)  # another of the three rows tied on g = 20
    assert diff is None and "3 rows share the boundary sort key (20,)" in note and "1 a different pick" in note
    # a row after the boundary, a row before it missing, a wrong value: still different, with the reason
    diff, _ = compare([(7, None, None), (1, "a", 10), (2, "b", 10), (5, "e", 20), (6, "f", 30)], expected, ref)
    assert "1 returned rows have the boundary sort key (20,), 2 should" in diff
    diff, _ = compare([(7, None, None), (1, "a", 10), (3, "c", 20), (5, "e", 20), (4, "d", 20)], expected, ref)
    assert diff is not None
    diff, _ = compare([(7, None, None), (1, "a", 10), (2, "b", 10), (5, "e", 21), (4, "d", 20)], expected, ref)
    assert diff is not None
    # an ORDER BY expression over output columns; a LIMIT without ORDER BY (any rows are right)
    expected, ref = ties("select id, name, g from t order by case when g > 15 then 1 else 0 end desc limit 2")
    assert compare([(4, "d", 20), (6, "f", 30)], expected, ref)[0] is None
    expected, ref = ties("select id from t limit 2")
    assert compare([(6,), (5,)], expected, ref)[0] is None
    # fewer rows than the LIMIT: no tie to break
    expected, ref = ties("select g, count(*) from t group by g order by 2 limit 10")
    assert compare([(10, 2), (20, 3), (30, 1), (None, 1)], expected, ref)[0] is None
    assert compare([(10, 2), (20, 3), (30, 2), (None, 1)], expected, ref)[0] is not None


def test_compare_values() -> None:
    assert compare([(2, "b"), (1, "a")], [(1, "a"), (2, "b")]) == (None, None)
    diff, note = compare([("A", Decimal("25.5376"))], [("A", 25.537587116854997)])
    assert diff is None and "rounded" in note
    assert compare([(None,)], [(0.0,)])[0] is not None
    # Doris rounds the exact decimal (-227.06875 half up), not the double's binary expansion (q18's ROLLUP row)
    diff, note = compare([(None, Decimal("-227.0688"), Decimal("2.7768"))], [(None, -227.06875, 2.7767857142857144)])
    assert diff is None and "rounded" in note
    # per-row DECIMAL rounding summed up (q66's sum(jan_sales / w_warehouse_sq_ft) at scale 6)
    diff, note = compare([("w", Decimal("27.191292"))], [("w", 27.191293471891115)])
    assert diff is None and "within 1e-06 relative" in note
    assert compare([("w", Decimal("27.191392"))], [("w", 27.191293471891115)])[0] is not None
    assert compare([("w", 27.191292)], [("w", 27.191293471891115)])[0] is not None  # DOUBLE both: 1e-9


def test_report_markdown() -> None:
    report = Report(sf=0.1, variant="base", rows={t: 10 for t in TABLES}, generate_s=8.0, load_s={"store": 30.0},
                    peak_rss_kb=300 * 1024, kit_name="TPC-DS", query_count=99)
    report.queries = [QueryResult(f"q{i}", 0.1 * i, 0.1, 1) for i in range(1, 31)]
    report.queries += [QueryResult("q70", None, 0.05, None, error="(1054) errCode = 2, detailMessage = Unknown"),
                       QueryResult("q90", 0.08, 0.02, 1, difference="1 of 1 rows differ: (None,) != (nan,)")]
    text = report.markdown()
    assert text.startswith("### TPC-DS, SF 0.1 (240 rows in 24 tables)")
    assert "| q70 |  | 50 |  |  | ERROR: (1054) errCode = 2, detailMessage = Unknown |" in text
    assert "| q90 | 80 | 20 | 4.00 | 1 | **DIFFERENT** |" in text
    assert "Correct: 30/32 queries equal DuckDB (a subset of the 99 was run)" in text
    assert "Slowest correct queries (ratio): q30 30.00, q29 29.00" in text
    assert "- q90 DIFFERENT: 1 of 1 rows differ" in text and "300 MiB" in text

"""TPC-H benchmark kit without running it: Doris's 22 query texts and DDL parse, the DDL and the generator
agree on columns, DuckDB's copies bind, the result comparison and the report (no dbgen venv, no server)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from bench.tpch.compare import compare, decimal_scales
from bench.tpch.generate import default_out, is_generated, select_list
from bench.tpch.queries import QUERIES, SF1_QUERIES, duckdb_sql, queries
from bench.tpch.run import QueryResult, Report
from bench.tpch.schema import DEFAULT_BUCKETS, REVENUE0_VIEW, TABLES, all_ddl, columns, ddl, duckdb_type
from sql import statements as st
from sql.parse import parse


def test_22_queries() -> None:
    assert list(QUERIES) == [f"q{i}" for i in range(1, 23)]
    assert set(SF1_QUERIES) == {"q9", "q14", "q22"}
    assert queries("sf1")["q9"] == SF1_QUERIES["q9"] and queries("base")["q9"] == QUERIES["q9"]
    assert all(not q.rstrip().endswith(";") and not q.lstrip().startswith("--") for q in QUERIES.values())
    with pytest.raises(ValueError):
        queries("sf100")


@pytest.mark.parametrize("name", list(QUERIES))
def test_query_parses(name: str) -> None:  # Doris's texts as published, join hints (q9) included
    [statement] = parse(QUERIES[name])
    assert isinstance(statement, st.Query)


@pytest.mark.parametrize("name", list(SF1_QUERIES))
def test_sf1_query_parses(name: str) -> None:
    [statement] = parse(SF1_QUERIES[name])
    assert isinstance(statement, st.Query)


def test_ddl_parses_and_matches_columns() -> None:
    statements = [parse(text)[0] for text in all_ddl()]
    assert [type(s) for s in statements] == [st.CreateTable] * 8 + [st.CreateView]
    for table, create in zip(TABLES, statements, strict=False):
        assert create.name == table
        assert [c.name for c in create.columns] == [name for name, _ in columns(table)]
        assert create.keys.type == "DUPLICATE"
        assert create.distribution.type == "HASH" and create.distribution.buckets == DEFAULT_BUCKETS[table]
        assert "colocate_with" not in dict(create.properties)
    assert parse(ddl("lineitem", 3))[0].distribution.buckets == 3
    assert [c for c, _ in columns("lineitem")][:2] == ["l_shipdate", "l_orderkey"]
    assert columns("orders")[1] == ("o_orderdate", "DATE")
    assert duckdb_type("decimal(15, 2)") == "DECIMAL(15,2)" and duckdb_type("int(11)") == "INTEGER"
    assert duckdb_type("bigint") == "BIGINT" and duckdb_type("VARCHAR(25)") == "VARCHAR"


@pytest.fixture(scope="module")
def con():
    """Empty tables of the Parquet files' types (dbgen's columns in Doris's order), and the view."""
    c = duckdb.connect()
    for table in TABLES:
        cols = ", ".join(f"{name} {duckdb_type(t)}" for name, t in columns(table))
        c.execute(f"CREATE TABLE {table} ({cols})")
    c.execute(REVENUE0_VIEW)
    yield c
    c.close()


@pytest.mark.parametrize("name", list(QUERIES))
def test_duckdb_copy_binds(con, name: str) -> None:
    con.execute(duckdb_sql(QUERIES[name])).fetchall()
    if name in SF1_QUERIES:
        con.execute(duckdb_sql(SF1_QUERIES[name])).fetchall()


def test_duckdb_spelling() -> None:
    q9, q22 = duckdb_sql(QUERIES["q9"]), duckdb_sql(QUERIES["q22"])
    assert "[shuffle]" not in q9 and "[broadcast]" not in q9 and "join part on" in q9
    assert "right anti join" not in q22 and "customer c anti join orders on" in q22
    assert all(duckdb_sql(q) == q for n, q in QUERIES.items() if n not in ("q9", "q22"))


def test_generator_select_runs_in_duckdb(con) -> None:
    for table in TABLES:
        described = con.execute(f"DESCRIBE SELECT {select_list(table)} FROM {table}").fetchall()
        assert [r[0] for r in described] == [name for name, _ in columns(table)]
    assert default_out(0.1).name == "tpch-sf0.1" and not is_generated(Path("/nonexistent"))


def test_compare() -> None:
    assert compare([(2, "b"), (1, "a")], [(1, "a"), (2, "b")]) == (None, None)
    assert compare([(Decimal("10.00"),)], [(10,)]) == (None, None)
    assert compare([(11,)], [(10,)])[0] is not None
    assert compare([(1,)], [])[0] is not None
    # AVG / decimal division: Doris's DECIMAL at its scale vs DuckDB's DOUBLE.
    diff, note = compare([("A", Decimal("25.5376"))], [("A", 25.537587116854997)])
    assert diff is None and "rounded" in note and "scale 4" in note
    diff, note = compare([(1995, Decimal("0.02864874"))], [(1995, 0.028648741305617557)])
    assert diff is None and "column 2 at scale 8" in note
    diff, note = compare([(Decimal("0.028649"),)], [(0.028648741305617557,)])
    assert diff is None and "rounded" in note
    diff, note = compare([(Decimal("0.028648"),)], [(0.028648741305617557,)])
    assert diff is None and "truncated" in note
    assert compare([(Decimal("0.028650"),)], [(0.028648741305617557,)])[0] is not None
    # Both DECIMAL: no rounding allowance, a wrong scale is a difference.
    assert compare([(Decimal("168597.29"),)], [(Decimal("168597.2860"),)])[0] is not None
    assert decimal_scales([(Decimal("1.5"), Decimal("2.125"), 3.0)]) == {0: 1, 1: 3}


def test_report_markdown() -> None:
    report = Report(sf=0.1, variant="base", rows={t: 10 for t in TABLES}, generate_s=12.0,
                    load_s={"region": 30.0, "lineitem": 10.0}, peak_rss_kb=600 * 1024)
    report.queries = [QueryResult("q1", 0.2, 0.1, 4), QueryResult("q2", 0.8, 0.1, 44),
                      QueryResult("q9", None, 0.05, None, error="(1064) Syntax error in line 13:\nEncountered: ["),
                      QueryResult("q19", 1.0, 0.1, 1, difference="1 of 1 rows differ")]
    text = report.markdown()
    assert "| q9 |  | 50 |  |  | ERROR: (1064) Syntax error in line 13: |" in text
    assert "| q19 | 1,000 | 100 | 10.00 | 1 | **DIFFERENT** |" in text
    assert "**4.00**" in text  # geomean of 2 and 8, the correct queries only
    assert "Correct: 2/4" in text and "Encountered: [" in text and "600 MiB" in text
    assert report.errors == [] and len(report.correct) == 2

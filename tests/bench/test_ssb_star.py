"""SSB star-schema kit without running it: Doris's 13 join queries and 5 DDL statements parse, the DDL and the
SSB generator agree on tables and columns (names and order: the load maps by position), the kit's folder links
the generator's files, DuckDB's copies bind and the report names the kit (no server, no large data)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from bench.dbgen import duckdb_type, is_generated, table_glob
from bench.ssb import generate as ssb_generate
from bench.ssb.star import DEFAULT_BUCKETS, KIT, QUERIES, TABLES, columns, ddl, link_tables, queries
from bench.tpc import QueryResult, Report
from sql import statements as st
from sql.parse import parse

TINY = ssb_generate.Cardinalities(customers=10, suppliers=10, parts=10, orders=20)
NAMES = [f"q{family}.{i}" for family, n in ((1, 3), (2, 3), (3, 4), (4, 3)) for i in range(1, n + 1)]


def test_13_queries() -> None:
    assert list(QUERIES) == NAMES and queries() is QUERIES and KIT.query_count == 13
    assert all(not q.rstrip().endswith(";") and q.startswith("SELECT") for q in QUERIES.values())
    assert all(" date," not in q and not q.rstrip().endswith(" date") for q in QUERIES.values())  # `dates`
    with pytest.raises(ValueError):
        queries("sf1")


@pytest.mark.parametrize("name", NAMES)
def test_query_parses(name: str) -> None:  # Doris's texts as published
    [statement] = parse(QUERIES[name])
    assert isinstance(statement, st.Query)


def test_ddl_parses() -> None:
    assert DEFAULT_BUCKETS == {"lineorder": 8, "customer": 2, "dates": 1, "supplier": 2, "part": 2}
    for table in TABLES:
        [create] = parse(ddl(table))
        assert isinstance(create, st.CreateTable) and create.name == table
        assert [c.name for c in create.columns] == [name for name, _ in columns(table)]
        assert create.keys.type == "DUPLICATE" and create.keys.columns[0] == columns(table)[0][0]
        assert create.distribution.type == "HASH" and create.distribution.buckets == DEFAULT_BUCKETS[table]
        assert not {"colocate_with", "in_memory"} & set(dict(create.properties))
    assert parse(ddl("lineorder", 3))[0].distribution.buckets == 3
    assert ("s_address", "varchar(41)") in columns("supplier")  # the generator's addresses reach 40 characters
    assert KIT.database == "ssb_star" and KIT.out(0.1).name == "ssb-star-sf0.1"


def _generated() -> dict[str, list[str]]:
    """Column names of each table as bench.ssb.generate writes it (tiny tables; lineorder without the flat-only
    column it drops before writing)."""
    rng = np.random.default_rng(0)
    lo = ssb_generate.gen_lineorder(rng, TINY)
    tables = {"lineorder": lo.drop_columns(["_commit_date"]), "customer": ssb_generate.gen_customer(rng, 5),
              "dates": ssb_generate.gen_dates(), "supplier": ssb_generate.gen_supplier(rng, 5),
              "part": ssb_generate.gen_part(rng, 5)}
    return {t: tables[t].column_names for t in TABLES}


def test_ddl_columns_are_the_generators() -> None:
    assert _generated() == {t: [name for name, _ in columns(t)] for t in TABLES}


def test_link_tables_and_duckdb_binds(tmp_path: Path) -> None:
    source, out = tmp_path / "ssb-sf0.01", tmp_path / "ssb-star-sf0.01"
    rng = np.random.default_rng(1)
    dims = {"customer": ssb_generate.gen_customer(rng, 5), "supplier": ssb_generate.gen_supplier(rng, 5),
            "part": ssb_generate.gen_part(rng, 5), "dates": ssb_generate.gen_dates()}
    (source / "lineorder").mkdir(parents=True)
    for name, table in dims.items():
        pq.write_table(table, source / f"{name}.parquet")
    lo = ssb_generate.gen_lineorder(rng, TINY)
    half = lo.num_rows // 2
    for i in range(2):
        pq.write_table(lo.drop_columns(["_commit_date"]).slice(i * half, None if i else half),
                       source / "lineorder" / f"part-{i:05d}.parquet")
    assert link_tables(source, out) == {"lineorder": 2, "customer": 1, "dates": 1, "supplier": 1, "part": 1}
    assert is_generated(out) and (out / "dates" / "part-00000.parquet").is_symlink()
    assert link_tables(source, out)["lineorder"] == 2  # again: the old links replaced
    con = duckdb.connect()
    for table in TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{table_glob(out, table)}')")
    assert con.execute("SELECT COUNT(*) FROM lineorder").fetchone()[0] == lo.num_rows
    assert con.execute("SELECT COUNT(*) FROM dates").fetchone()[0] == ssb_generate.DATE_DAYS
    for name, text in QUERIES.items():
        con.execute(KIT.duckdb_sql(text)).fetchall()  # binds and runs on the generator's types
        assert KIT.duckdb_sql(text) == text, name
    con.close()
    assert duckdb_type("int(11)") == "INTEGER" and duckdb_type("varchar(16)") == "VARCHAR"


def test_report_markdown() -> None:
    report = Report(sf=0.1, variant="base", rows={t: 10 for t in TABLES}, load_s={"dates": 20.0},
                    peak_rss_kb=500 * 1024, kit_name=KIT.name, query_count=KIT.query_count)
    report.queries = [QueryResult("q1.1", 0.02, 0.01, 1), QueryResult("q4.3", 0.08, 0.01, 12),
                      QueryResult("q3.4", None, 0.01, None, error="(1105) errCode = 2, detailMessage = boom")]
    text = report.markdown()
    assert text.startswith("### SSB star, SF 0.1 (50 rows in 5 tables)")
    assert "**4.00**" in text and "Correct: 2/3 queries equal DuckDB (a subset of the 13 was run)" in text
    assert "| q3.4 |  | 10 |  |  | ERROR: (1105) errCode = 2, detailMessage = boom |" in text and "500 MiB" in text

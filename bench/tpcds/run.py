"""TPC-DS benchmark: the 99 queries on dorislite over MySQL vs DuckDB over the same Parquet files, results checked.

    python -m bench.tpcds.run --sf 0.1 [--query q1 ...] [--repeat 3] [--timeout 600] [--slow 60]

`bench.tpc` runs it, as for TPC-H: generates the Parquet files with DuckDB's dsdgen if they are missing
(`bench.tpcds.generate`), starts one server, creates the 24 tables with Doris's DDL (`bench.tpcds.schema`),
loads each with `INSERT INTO t SELECT * FROM local("file_path" = "...", "format" = "parquet")` (smallest first)
and checks its row count, then runs each query (`bench.tpcds.queries`, Doris's texts; q24's file holds two
statements, both run) over MySQL with `SET query_timeout` and in DuckDB over the same files with Doris's NULL
order, one warm-up then best of --repeat, and compares the answers with `bench.tpcds.compare` (rows in any order,
numeric tolerance, DECIMAL-vs-DOUBLE rounding, and a different pick among rows tied at the final LIMIT). The
Markdown table (times, ratio, = DuckDB / DIFFERENT / ERROR with the message, geomean over the correct queries,
correct count out of 99, the slowest by ratio, server peak RSS) goes to bench/out/tpcds-sf<SF>.md.

Exits 0 whatever the queries answer; 1 when the harness itself broke (the server did not start, a table was
refused or loaded the wrong row count, DuckDB failed a query).
"""

from __future__ import annotations

from bench import tpc
from bench.tpcds.compare import compare
from bench.tpcds.generate import generate
from bench.tpcds.queries import DUCKDB_SETUP, VARIANTS, duckdb_sql, queries
from bench.tpcds.schema import TABLES, ddl

__all__ = ["KIT", "main"]

KIT = tpc.Kit(name="TPC-DS", slug="tpcds", tables=TABLES, ddl=ddl, queries=queries, variants=VARIANTS,
              duckdb_sql=duckdb_sql, generate=generate, check=compare, duckdb_setup=DUCKDB_SETUP)


def main() -> None:
    tpc.main(KIT, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()

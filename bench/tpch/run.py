"""TPC-H benchmark: the 22 queries on dorislite over MySQL vs DuckDB over the same Parquet files, results checked.

    python -m bench.tpch.run --sf 0.1 [--query q1 ...] [--repeat 3] [--variant base|sf1] [--timeout 600]

`bench.tpc` runs it (generate with dbgen if missing, one server, the 8 tables with Doris's DDL loaded with
`INSERT INTO t SELECT * FROM local(...)` and counted, the view `revenue0`, each query over MySQL and in DuckDB,
one warm-up then best of --repeat, answers compared with `bench.tpch.compare`, peak RSS) and writes the table to
bench/out/tpch-sf<SF>.md (`-sf1` added for --variant sf1).

Exits 0 whatever the queries answer (the report says how many are right); 1 when the harness itself broke
(the server did not start, a table was refused or loaded the wrong row count, DuckDB failed a query).
"""

from __future__ import annotations

from bench import tpc
from bench.tpc import QueryResult, Report
from bench.tpch.compare import compare
from bench.tpch.generate import generate
from bench.tpch.queries import VARIANTS, duckdb_sql, queries
from bench.tpch.schema import REVENUE0_VIEW, TABLES, ddl

__all__ = ["KIT", "QueryResult", "Report", "main"]

KIT = tpc.Kit(name="TPC-H", slug="tpch", tables=TABLES, ddl=ddl, queries=queries, variants=VARIANTS,
              duckdb_sql=duckdb_sql, generate=generate, check=lambda actual, expected, _ref: compare(actual, expected),
              views=(("revenue0", REVENUE0_VIEW),))


def main() -> None:
    tpc.main(KIT, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()

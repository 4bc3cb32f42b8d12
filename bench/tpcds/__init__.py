"""TPC-DS: dsdgen data as Parquet (DuckDB's tpcds extension, in its own venv), Doris's DDL and 99 queries,
and a runner comparing dorislite with DuckDB.

    python -m bench.tpcds.generate --sf 0.1                 # Parquet only (the runner does this too)
    python -m bench.tpcds.run --sf 0.1 [--query q1 ...] [--repeat 3] [--timeout 600]
"""

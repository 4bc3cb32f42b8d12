"""TPC-H: dbgen data as Parquet (DuckDB's tpch extension, in its own venv), Doris's DDL and 22 queries,
and a runner comparing dorislite with DuckDB.

    python -m bench.tpch.generate --sf 0.1                  # Parquet only (the runner does this too)
    python -m bench.tpch.run --sf 0.1 [--query q1 ...] [--repeat 3] [--variant sf1]
"""

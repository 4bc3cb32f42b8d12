"""TPC-H data as Parquet, made by DuckDB's dbgen: one folder per table under bench/out/tpch-sf<SF>/.

    python -m bench.tpch.generate --sf 1 [--out bench/out/tpch-sf1]

dbgen is DuckDB's `tpch` extension, run by `bench.dbgen` in its own virtualenv (bench/out/.duckdb-gen-venv:
the PyPI build of the extension loads only into duckdb 1.5.5, not the project's 2.0.1): `CALL dbgen(sf = SF)`,
then each table is written as Parquet files of about 1,000,000 rows (`<table>/part-<i>.parquet`).

Column names stay lowercase as dbgen makes them. Columns are written in the order of Doris's DDL
(`bench.tpch.schema`: lineitem starts with l_shipdate, orders' second column is o_orderdate) and cast to its
types (INT keys as INTEGER, DECIMAL(15,2), DATE, VARCHAR), because the runner loads them with
`INSERT INTO t SELECT * FROM local(...)`, which maps columns by position. A given SF always gives the same
rows (the COPY is multi-threaded, so their order within lineitem's files may change from run to run).
`_SUCCESS` (with the row counts) is written last: a complete data set has it.
"""

from __future__ import annotations

from pathlib import Path

from bench import dbgen
from bench.dbgen import is_generated, sf_label, table_glob
from bench.tpch.schema import TABLES, columns

__all__ = ["default_out", "generate", "is_generated", "select_list", "sf_label", "table_glob"]


def select_list(table: str) -> str:
    """dbgen's columns in Doris's DDL order, cast to the types the Doris table has."""
    return dbgen.select_list(columns(table))


def generate(sf: float, out: Path, venv_dir: Path = dbgen.GEN_VENV) -> dict[str, int]:
    """Write every TPC-H table as Parquet under `out/<table>/`; returns row counts per table."""
    return dbgen.generate("tpch", sf, {t: select_list(t) for t in TABLES}, out, venv_dir)


def default_out(sf: float) -> Path:
    return dbgen.default_out("tpch", sf)


def main() -> None:
    dbgen.main("TPC-H", generate, default_out, __doc__.splitlines()[0],
               "scale factor (SF 1 = about 6,000,000 lineitem rows)")


if __name__ == "__main__":
    main()

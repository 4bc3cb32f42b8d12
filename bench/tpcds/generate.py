"""TPC-DS data as Parquet, made by DuckDB's dsdgen: one folder per table under bench/out/tpcds-sf<SF>/.

    python -m bench.tpcds.generate --sf 1 [--out bench/out/tpcds-sf1]

dsdgen is DuckDB's `tpcds` extension, run by `bench.dbgen` in its own virtualenv (bench/out/.duckdb-gen-venv,
shared with the TPC-H kit's dbgen: the PyPI build of the extension loads only into duckdb 1.5.5, not the
project's 2.0.1): `CALL dsdgen(sf = SF)`, then each of the 24 tables is written as Parquet files of about
1,000,000 rows (`<table>/part-<i>.parquet`).

Columns are written in the order of Doris's DDL (`bench.tpcds.schema`: the keys first, e.g. catalog_sales starts
with cs_item_sk, cs_order_number) under Doris's names (`p_response_targe`, `s_tax_precentage` as Doris spells
them, from dsdgen's p_response_target / s_tax_percentage) and cast to its types (BIGINT keys, INTEGER,
DECIMAL(p,s), DATE; CHAR(n) and VARCHAR(n) as VARCHAR), because the runner loads them with
`INSERT INTO t SELECT * FROM local(...)`, which maps columns by position. A given SF always gives the same rows.
`_SUCCESS` (with the row counts) is written last: a complete data set has it. SF 0.1 takes about 8 s and makes
1,175,873 rows (store_sales 288,464).
"""

from __future__ import annotations

from pathlib import Path

from bench import dbgen
from bench.dbgen import is_generated, sf_label, table_glob
from bench.tpcds.schema import SOURCE_COLUMNS, TABLES, columns

__all__ = ["default_out", "generate", "is_generated", "select_list", "sf_label", "table_glob"]


def select_list(table: str) -> str:
    """dsdgen's columns in Doris's DDL order, under Doris's names, cast to the types the Doris table has."""
    return dbgen.select_list(columns(table), SOURCE_COLUMNS)


def generate(sf: float, out: Path, venv_dir: Path = dbgen.GEN_VENV) -> dict[str, int]:
    """Write every TPC-DS table as Parquet under `out/<table>/`; returns row counts per table."""
    return dbgen.generate("tpcds", sf, {t: select_list(t) for t in TABLES}, out, venv_dir)


def default_out(sf: float) -> Path:
    return dbgen.default_out("tpcds", sf)


def main() -> None:
    dbgen.main("TPC-DS", generate, default_out, __doc__.splitlines()[0],
               "scale factor (SF 1 = about 2,880,000 store_sales rows)")


if __name__ == "__main__":
    main()

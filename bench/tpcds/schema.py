"""DDL of the 24 TPC-DS tables as Doris's TPC-DS kit creates them: `create-tpcds-tables-sf1.sql` beside this
module is apache/doris tools/tpcds-tools/ddl/create-tpcds-tables-sf1.sql as published (its `ddl/` folder has one
file per scale factor; sf1 is the one for small data). DUPLICATE KEY tables with BIGINT surrogate keys, INTEGER,
DECIMAL(7,2) / (5,2) / (15,2), CHAR(n), VARCHAR(n) and DATE columns, DISTRIBUTED BY HASH on the key columns;
the sales and returns tables of a channel colocated.

`ddl(table)` takes the file's statement and changes, for dorislite, nothing else than:

* bucket counts: Doris's sf1 file has 32 (the 7 fact tables: the three sales, three returns and inventory),
  12 (customer, customer_address, customer_demographics, date_dim, item, time_dim), 3 (household_demographics,
  catalog_page) and 1 (the small dimensions). On this single 2-core node they are divided by 8, rounded up:
  4, 2, 1 and 1 (`DEFAULT_BUCKETS`): fewer, larger tablets, as bench/ssb and bench/tpch do (per-tablet work
  dominates small scans; SF 0.1's largest table, store_sales, has 288,464 rows);
* `"colocate_with" = "catalog" | "web" | "store"` is dropped from PROPERTIES: dorislite refuses it ("Unknown
  properties: {colocate_with=...}"); colocation only places a group's tablets on the same BEs, which one node
  does anyway.

The file's 25th table, `dbgen_version` (dsdgen's run metadata, which no query reads and DuckDB's dsdgen does not
make), is left out: `TABLES` are the 24 TPC-DS tables in the file's order.

Column order matters: the runner loads with `INSERT INTO t SELECT * FROM local(...)`, which maps Parquet
columns by position, so the generator writes each table's columns in this order and with these types
(`columns`). Doris's keys come first (catalog_sales starts with cs_item_sk, cs_order_number), unlike dsdgen's
order. Two of Doris's column names differ from dsdgen's: `p_response_targe` (dsdgen: p_response_target) and
`s_tax_precentage` (dsdgen: s_tax_percentage); `SOURCE_COLUMNS` maps them.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.dbgen import ddl_columns, duckdb_type

__all__ = ["DDL_FILE", "DEFAULT_BUCKETS", "SOURCE_COLUMNS", "TABLES", "all_ddl", "columns", "ddl", "doris_ddl",
           "duckdb_type"]

DDL_FILE = Path(__file__).resolve().parent / "create-tpcds-tables-sf1.sql"
_SKIPPED = ("dbgen_version",)
_CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)", re.IGNORECASE)
_BUCKETS = re.compile(r"(\bbuckets\s+)(\d+)", re.IGNORECASE)
_COLOCATE = re.compile(r',\s*"colocate_with"\s*=\s*"\w+"', re.IGNORECASE)

SOURCE_COLUMNS: dict[str, str] = {"p_response_targe": "p_response_target", "s_tax_precentage": "s_tax_percentage"}


def _statements() -> dict[str, str]:
    """Table name -> its CREATE TABLE statement (without the `;`), in the file's order."""
    text = "\n".join(ln for ln in DDL_FILE.read_text().splitlines() if not ln.startswith("--"))
    out: dict[str, str] = {}
    for stmt in text.split(";"):
        stmt = stmt.strip()
        m = _CREATE.search(stmt)
        if m:
            out[m.group(1)] = stmt
    return out


_DORIS_DDL = _statements()
TABLES: tuple[str, ...] = tuple(t for t in _DORIS_DDL if t not in _SKIPPED)
DORIS_BUCKETS: dict[str, int] = {t: int(_BUCKETS.search(_DORIS_DDL[t]).group(2)) for t in TABLES}
# Doris's sf1 counts / 8, rounded up (see the module docstring).
DEFAULT_BUCKETS: dict[str, int] = {t: -(-n // 8) for t, n in DORIS_BUCKETS.items()}


def doris_ddl(table: str) -> str:
    """The statement as Doris's file has it."""
    return _DORIS_DDL[table]


def ddl(table: str, buckets: int | None = None) -> str:
    """`CREATE TABLE` for one of `TABLES` with `buckets` (default `DEFAULT_BUCKETS[table]`), without
    colocate_with."""
    text = _COLOCATE.sub("", _DORIS_DDL[table])
    return _BUCKETS.sub(lambda m: m.group(1) + str(buckets or DEFAULT_BUCKETS[table]), text)


def all_ddl(buckets: dict[str, int] | None = None) -> list[str]:
    """The 24 tables in the order the runner creates them."""
    return [ddl(t, (buckets or {}).get(t)) for t in TABLES]


def columns(table: str) -> list[tuple[str, str]]:
    """(name, Doris type) of a table's columns in DDL order, e.g. ("cs_item_sk", "bigint")."""
    return ddl_columns(_DORIS_DDL[table])

"""SSB star-schema benchmark: Doris's 13 join queries (Q1.1 .. Q4.3 over lineorder and its dimensions) on
dorislite over MySQL vs DuckDB over the same Parquet files, results checked.

    python -m bench.ssb.star --sf 0.1 [--query q1.1 ...] [--repeat 3] [--timeout 600] [--slow 60]

A `bench.tpc` kit, run as the TPC-H and TPC-DS kits are (one server, each table created with Doris's DDL and
loaded with `INSERT INTO t SELECT * FROM local("file_path" = "...", "format" = "parquet")`, smallest first, and
counted; each query over MySQL with `SET query_timeout` and in DuckDB over `read_parquet` views of the same
files, one warm-up then best of --repeat; answers compared with `bench.tpch.compare`; server peak RSS). The
Markdown table (times, ratio, = DuckDB / DIFFERENT / ERROR, geomean over the correct queries, correct count)
goes to bench/out/ssb-star-sf<SF>.md. The database is `ssb_star`.

Data: `bench.ssb.generate` (the SSB generator bench/ssb/run.py uses) writes customer.parquet, supplier.parquet,
part.parquet, dates.parquet and lineorder/part-*.parquet under bench/out/ssb-sf<SF>/; its table and column
names, column order and value domains are SSB dbgen's, which are Doris's (`dates`, `d_datekey` INT yyyymmdd,
`lo_orderdate` / `lo_commitdate` INT yyyymmdd ...). The runner reads `<folder>/<table>/*.parquet`, so this kit's
folder bench/out/ssb-star-sf<SF>/ holds one symlink per file into ssb-sf<SF>/ (`link_tables`; generated first
if missing). The generator's narrower integer types (TINYINT lo_quantity, lo_discount, p_size ...) are cast to
the DDL's INT by the load; DuckDB computes on them as they are (no product overflows INTEGER at SSB's domains).

DDL (`ddl`): apache/doris tools/ssb-tools/ddl/create-ssb-tables.sql, changed for dorislite only in

* bucket counts: Doris's 48 (lineorder), 12 (customer, supplier, part) and 1 (dates) divided by 6, i.e. 8, 2,
  2, 2 and 1 (`DEFAULT_BUCKETS`; lineorder's 8 as bench/ssb/schema.py's flat table): one 2-core node, not a
  cluster, so fewer, larger tablets (per-tablet work dominates small scans);
* `"colocate_with" = "groupa<n>"` dropped from PROPERTIES: dorislite refuses it ("Unknown properties"), and
  colocation only places a group's tablets on the same BEs, which one node does anyway;
* `"in_memory" = "false"` dropped from PROPERTIES: dorislite refuses it as a table property ("Unknown
  properties: {in_memory=false}"; it accepts it per partition), and false is the default anyway;
* `s_address` varchar(41) instead of varchar(26) (c_address's width): bench.ssb.generate draws both addresses
  with 10..40 characters (TPC-H's length; SSB dbgen's supplier addresses have at most 25), and the insert, strict
  as in Doris, refuses the longer ones ("column(s_address) value is too long ... (schema length: 26)": 89 of
  SF 0.1's 200 suppliers). The generator is left as it is: its flat table (bench/ssb/run.py) holds the same
  addresses. No query reads s_address.

Queries (`QUERIES`): apache/doris tools/ssb-tools/ssb-queries/q1.1.sql .. q4.3.sql from the first line after
the license header, without the final `;`. Older copies of five files (q1.3, q3.1, q3.2, q3.4, q4.1) read
`FROM ..., date`; the current ones, used here, read `dates` as the DDL names the table. DuckDB runs the texts
unchanged.

Exits 0 whatever the queries answer (the report says how many are right); 1 when the harness itself broke.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from bench import tpc
from bench.dbgen import ddl_columns, duckdb_type
from bench.ssb import generate as ssb_generate
from bench.tpch.compare import compare

__all__ = ["DEFAULT_BUCKETS", "KIT", "QUERIES", "TABLES", "columns", "ddl", "duckdb_type", "generate",
           "link_tables", "main", "queries"]

TABLES = ("lineorder", "customer", "dates", "supplier", "part")  # the DDL file's order
DORIS_BUCKETS: dict[str, int] = {"lineorder": 48, "customer": 12, "dates": 1, "supplier": 12, "part": 12}
DEFAULT_BUCKETS: dict[str, int] = {t: max(1, n // 6) for t, n in DORIS_BUCKETS.items()}

_PROPERTIES = """PROPERTIES (
"replication_num" = "1",
"storage_format" = "DEFAULT"
)"""

_DDL: dict[str, str] = {
    "lineorder": """CREATE TABLE IF NOT EXISTS `lineorder` (
  `lo_orderkey` int(11) NOT NULL COMMENT "",
  `lo_linenumber` int(11) NOT NULL COMMENT "",
  `lo_custkey` int(11) NOT NULL COMMENT "",
  `lo_partkey` int(11) NOT NULL COMMENT "",
  `lo_suppkey` int(11) NOT NULL COMMENT "",
  `lo_orderdate` int(11) NOT NULL COMMENT "",
  `lo_orderpriority` varchar(16) NOT NULL COMMENT "",
  `lo_shippriority` int(11) NOT NULL COMMENT "",
  `lo_quantity` int(11) NOT NULL COMMENT "",
  `lo_extendedprice` int(11) NOT NULL COMMENT "",
  `lo_ordtotalprice` int(11) NOT NULL COMMENT "",
  `lo_discount` int(11) NOT NULL COMMENT "",
  `lo_revenue` int(11) NOT NULL COMMENT "",
  `lo_supplycost` int(11) NOT NULL COMMENT "",
  `lo_tax` int(11) NOT NULL COMMENT "",
  `lo_commitdate` int(11) NOT NULL COMMENT "",
  `lo_shipmode` varchar(11) NOT NULL COMMENT ""
) ENGINE=OLAP
DUPLICATE KEY(`lo_orderkey`)
COMMENT "OLAP"
PARTITION BY RANGE(`lo_orderdate`)
(PARTITION p1 VALUES [("-2147483648"), ("19930101")),
PARTITION p2 VALUES [("19930101"), ("19940101")),
PARTITION p3 VALUES [("19940101"), ("19950101")),
PARTITION p4 VALUES [("19950101"), ("19960101")),
PARTITION p5 VALUES [("19960101"), ("19970101")),
PARTITION p6 VALUES [("19970101"), ("19980101")),
PARTITION p7 VALUES [("19980101"), ("19990101")))
DISTRIBUTED BY HASH(`lo_orderkey`) BUCKETS {buckets}
""" + _PROPERTIES,
    "customer": """CREATE TABLE IF NOT EXISTS `customer` (
  `c_custkey` int(11) NOT NULL COMMENT "",
  `c_name` varchar(26) NOT NULL COMMENT "",
  `c_address` varchar(41) NOT NULL COMMENT "",
  `c_city` varchar(11) NOT NULL COMMENT "",
  `c_nation` varchar(16) NOT NULL COMMENT "",
  `c_region` varchar(13) NOT NULL COMMENT "",
  `c_phone` varchar(16) NOT NULL COMMENT "",
  `c_mktsegment` varchar(11) NOT NULL COMMENT ""
) ENGINE=OLAP
DUPLICATE KEY(`c_custkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`c_custkey`) BUCKETS {buckets}
""" + _PROPERTIES,
    "dates": """CREATE TABLE IF NOT EXISTS `dates` (
  `d_datekey` int(11) NOT NULL COMMENT "",
  `d_date` varchar(20) NOT NULL COMMENT "",
  `d_dayofweek` varchar(10) NOT NULL COMMENT "",
  `d_month` varchar(11) NOT NULL COMMENT "",
  `d_year` int(11) NOT NULL COMMENT "",
  `d_yearmonthnum` int(11) NOT NULL COMMENT "",
  `d_yearmonth` varchar(9) NOT NULL COMMENT "",
  `d_daynuminweek` int(11) NOT NULL COMMENT "",
  `d_daynuminmonth` int(11) NOT NULL COMMENT "",
  `d_daynuminyear` int(11) NOT NULL COMMENT "",
  `d_monthnuminyear` int(11) NOT NULL COMMENT "",
  `d_weeknuminyear` int(11) NOT NULL COMMENT "",
  `d_sellingseason` varchar(14) NOT NULL COMMENT "",
  `d_lastdayinweekfl` int(11) NOT NULL COMMENT "",
  `d_lastdayinmonthfl` int(11) NOT NULL COMMENT "",
  `d_holidayfl` int(11) NOT NULL COMMENT "",
  `d_weekdayfl` int(11) NOT NULL COMMENT ""
) ENGINE=OLAP
DUPLICATE KEY(`d_datekey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`d_datekey`) BUCKETS {buckets}
""" + _PROPERTIES,
    "supplier": """CREATE TABLE IF NOT EXISTS `supplier` (
  `s_suppkey` int(11) NOT NULL COMMENT "",
  `s_name` varchar(26) NOT NULL COMMENT "",
  `s_address` varchar(41) NOT NULL COMMENT "",
  `s_city` varchar(11) NOT NULL COMMENT "",
  `s_nation` varchar(16) NOT NULL COMMENT "",
  `s_region` varchar(13) NOT NULL COMMENT "",
  `s_phone` varchar(16) NOT NULL COMMENT ""
) ENGINE=OLAP
DUPLICATE KEY(`s_suppkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`s_suppkey`) BUCKETS {buckets}
""" + _PROPERTIES,
    "part": """CREATE TABLE IF NOT EXISTS `part` (
  `p_partkey` int(11) NOT NULL COMMENT "",
  `p_name` varchar(23) NOT NULL COMMENT "",
  `p_mfgr` varchar(7) NOT NULL COMMENT "",
  `p_category` varchar(8) NOT NULL COMMENT "",
  `p_brand` varchar(10) NOT NULL COMMENT "",
  `p_color` varchar(12) NOT NULL COMMENT "",
  `p_type` varchar(26) NOT NULL COMMENT "",
  `p_size` int(11) NOT NULL COMMENT "",
  `p_container` varchar(11) NOT NULL COMMENT ""
) ENGINE=OLAP
DUPLICATE KEY(`p_partkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`p_partkey`) BUCKETS {buckets}
""" + _PROPERTIES,
}

QUERIES: dict[str, str] = {
    "q1.1": """SELECT SUM(lo_extendedprice * lo_discount) AS REVENUE
FROM lineorder, dates
WHERE
    lo_orderdate = d_datekey
    AND d_year = 1993
    AND lo_discount BETWEEN 1 AND 3
    AND lo_quantity < 25""",
    "q1.2": """SELECT SUM(lo_extendedprice * lo_discount) AS REVENUE
FROM lineorder, dates
WHERE
    lo_orderdate = d_datekey
    AND d_yearmonth = 'Jan1994'
    AND lo_discount BETWEEN 4 AND 6
    AND lo_quantity BETWEEN 26 AND 35""",
    "q1.3": """SELECT
    SUM(lo_extendedprice * lo_discount) AS REVENUE
FROM lineorder, dates
WHERE
    lo_orderdate = d_datekey
    AND d_weeknuminyear = 6
    AND d_year = 1994
    AND lo_discount BETWEEN 5 AND 7
    AND lo_quantity BETWEEN 26 AND 35""",
    "q2.1": """SELECT SUM(lo_revenue), d_year, p_brand
FROM lineorder, dates, part, supplier
WHERE
    lo_orderdate = d_datekey
    AND lo_partkey = p_partkey
    AND lo_suppkey = s_suppkey
    AND p_category = 'MFGR#12'
    AND s_region = 'AMERICA'
GROUP BY d_year, p_brand
ORDER BY d_year, p_brand""",
    "q2.2": """SELECT SUM(lo_revenue), d_year, p_brand
FROM lineorder, dates, part, supplier
WHERE
    lo_orderdate = d_datekey
    AND lo_partkey = p_partkey
    AND lo_suppkey = s_suppkey
    AND p_brand BETWEEN 'MFGR#2221' AND 'MFGR#2228'
    AND s_region = 'ASIA'
GROUP BY d_year, p_brand
ORDER BY d_year, p_brand""",
    "q2.3": """SELECT SUM(lo_revenue), d_year, p_brand
FROM lineorder, dates, part, supplier
WHERE
    lo_orderdate = d_datekey
    AND lo_partkey = p_partkey
    AND lo_suppkey = s_suppkey
    AND p_brand = 'MFGR#2239'
    AND s_region = 'EUROPE'
GROUP BY d_year, p_brand
ORDER BY d_year, p_brand""",
    "q3.1": """SELECT
    c_nation,
    s_nation,
    d_year,
    SUM(lo_revenue) AS REVENUE
FROM customer, lineorder, supplier, dates
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_orderdate = d_datekey
    AND c_region = 'ASIA'
    AND s_region = 'ASIA'
    AND d_year >= 1992
    AND d_year <= 1997
GROUP BY c_nation, s_nation, d_year
ORDER BY d_year ASC, REVENUE DESC""",
    "q3.2": """SELECT
    c_city,
    s_city,
    d_year,
    SUM(lo_revenue) AS REVENUE
FROM customer, lineorder, supplier, dates
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_orderdate = d_datekey
    AND c_nation = 'UNITED STATES'
    AND s_nation = 'UNITED STATES'
    AND d_year >= 1992
    AND d_year <= 1997
GROUP BY c_city, s_city, d_year
ORDER BY d_year ASC, REVENUE DESC""",
    "q3.3": """SELECT
    c_city,
    s_city,
    d_year,
    SUM(lo_revenue) AS REVENUE
FROM customer, lineorder, supplier, dates
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_orderdate = d_datekey
    AND (
        c_city = 'UNITED KI1'
        OR c_city = 'UNITED KI5'
    )
    AND (
        s_city = 'UNITED KI1'
        OR s_city = 'UNITED KI5'
    )
    AND d_year >= 1992
    AND d_year <= 1997
GROUP BY c_city, s_city, d_year
ORDER BY d_year ASC, REVENUE DESC""",
    "q3.4": """SELECT
    c_city,
    s_city,
    d_year,
    SUM(lo_revenue) AS REVENUE
FROM customer, lineorder, supplier, dates
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_orderdate = d_datekey
    AND (
        c_city = 'UNITED KI1'
        OR c_city = 'UNITED KI5'
    )
    AND (
        s_city = 'UNITED KI1'
        OR s_city = 'UNITED KI5'
    )
    AND d_yearmonth = 'Dec1997'
GROUP BY c_city, s_city, d_year
ORDER BY d_year ASC, REVENUE DESC""",
    "q4.1": """SELECT
    d_year,
    c_nation,
    SUM(lo_revenue - lo_supplycost) AS PROFIT
FROM dates, customer, supplier, part, lineorder
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_partkey = p_partkey
    AND lo_orderdate = d_datekey
    AND c_region = 'AMERICA'
    AND s_region = 'AMERICA'
    AND (
        p_mfgr = 'MFGR#1'
        OR p_mfgr = 'MFGR#2'
    )
GROUP BY d_year, c_nation
ORDER BY d_year, c_nation""",
    "q4.2": """SELECT
    d_year,
    s_nation,
    p_category,
    SUM(lo_revenue - lo_supplycost) AS PROFIT
FROM dates, customer, supplier, part, lineorder
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_partkey = p_partkey
    AND lo_orderdate = d_datekey
    AND c_region = 'AMERICA'
    AND s_region = 'AMERICA'
    AND (
        d_year = 1997
        OR d_year = 1998
    )
    AND (
        p_mfgr = 'MFGR#1'
        OR p_mfgr = 'MFGR#2'
    )
GROUP BY d_year, s_nation, p_category
ORDER BY d_year, s_nation, p_category""",
    "q4.3": """SELECT
    d_year,
    s_city,
    p_brand,
    SUM(lo_revenue - lo_supplycost) AS PROFIT
FROM dates, customer, supplier, part, lineorder
WHERE
    lo_custkey = c_custkey
    AND lo_suppkey = s_suppkey
    AND lo_partkey = p_partkey
    AND lo_orderdate = d_datekey
    AND s_nation = 'UNITED STATES'
    AND (
        d_year = 1997
        OR d_year = 1998
    )
    AND p_category = 'MFGR#14'
GROUP BY d_year, s_city, p_brand
ORDER BY d_year, s_city, p_brand""",
}

VARIANTS = ("base",)


def ddl(table: str, buckets: int | None = None) -> str:
    """`CREATE TABLE` for one of `TABLES`, with `buckets` (default `DEFAULT_BUCKETS[table]`)."""
    return _DDL[table].replace("{buckets}", str(buckets or DEFAULT_BUCKETS[table]))


def columns(table: str) -> list[tuple[str, str]]:
    """(name, Doris type) of a table's columns in DDL order, e.g. ("lo_orderdate", "int(11)")."""
    return ddl_columns(_DDL[table])


def queries(variant: str = "base") -> dict[str, str]:
    """q1.1 .. q4.3 as published (one variant only)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    return QUERIES


def source_files(source: Path) -> dict[str, list[Path]]:
    """Table -> its Parquet files in a `bench.ssb.generate` folder (a dimension is one file, lineorder a folder)."""
    source = Path(source).resolve()
    return {t: sorted((source / t).glob("*.parquet")) if t == "lineorder" else [source / f"{t}.parquet"]
            for t in TABLES}


def link_tables(source: Path, out: Path) -> dict[str, int]:
    """`out/<table>/<file>.parquet` symlinks to the SSB generator's files in `source` (the layout the runner
    reads), then `_SUCCESS`; returns the number of files per table."""
    out = Path(out)
    (out / "_SUCCESS").unlink(missing_ok=True)
    files = source_files(source)
    for table, paths in files.items():
        folder = out / table
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.parquet"):
            old.unlink()
        for path in paths:
            if not path.exists():
                raise FileNotFoundError(path)
            os.symlink(path, folder / (path.name if table == "lineorder" else "part-00000.parquet"))
    (out / "_SUCCESS").write_text(f"symlinks to {Path(source).resolve()}\n")
    return {t: len(p) for t, p in files.items()}


def generate(sf: float, out: Path) -> Mapping[str, int]:
    """The kit's folder for `sf`: the SSB generator's bench/out/ssb-sf<SF> (generated first if missing), linked."""
    source = ssb_generate.default_out(sf)
    if not ssb_generate.is_generated(source):
        print(f"  bench.ssb.generate SF {ssb_generate.sf_label(sf)} into {source} ...", flush=True)
        ssb_generate.generate(sf, source)
    return link_tables(source, out)


def _check(actual: tpc.Rows, expected: tpc.Rows, _ref: tpc.Reference) -> tuple[str | None, str | None]:
    return compare(actual, expected)


KIT = tpc.Kit(name="SSB star", slug="ssb-star", tables=TABLES, ddl=ddl, queries=queries, variants=VARIANTS,
              duckdb_sql=str, generate=generate, check=_check)


def main() -> None:
    tpc.main(KIT, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()

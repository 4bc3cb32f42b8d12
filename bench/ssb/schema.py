"""DDL of `lineorder_flat` as Doris's SSB-flat benchmark creates it (INT yyyymmdd LO_ORDERDATE, one
partition per year, DUPLICATE KEY(LO_ORDERDATE, LO_ORDERKEY), HASH(LO_ORDERKEY)).

Doris uses 48 buckets for a 3-BE cluster; on this single 2-core node the default is 8 (fewer, larger
tablets: less per-tablet overhead in the scan, still enough tasks for Spark's local[*] writers).
"""

from __future__ import annotations

DEFAULT_BUCKETS = 8
# --rollups: 7 partitions x 8 buckets = 56 tablets per index cost more per-tablet work (open, prune, decode
# at least a page per column) than the few rows a rollup leaves to read; 2 buckets halve the query times at SF 0.1
ROLLUP_BUCKETS = 2

_COLUMNS = """
  `LO_ORDERDATE` int(11) NOT NULL,
  `LO_ORDERKEY` int(11) NOT NULL,
  `LO_LINENUMBER` tinyint(4) NOT NULL,
  `LO_CUSTKEY` int(11) NOT NULL,
  `LO_PARTKEY` int(11) NOT NULL,
  `LO_SUPPKEY` int(11) NOT NULL,
  `LO_ORDERPRIORITY` varchar(100) NOT NULL,
  `LO_SHIPPRIORITY` tinyint(4) NOT NULL,
  `LO_QUANTITY` tinyint(4) NOT NULL,
  `LO_EXTENDEDPRICE` int(11) NOT NULL,
  `LO_ORDTOTALPRICE` int(11) NOT NULL,
  `LO_DISCOUNT` tinyint(4) NOT NULL,
  `LO_REVENUE` int(11) NOT NULL,
  `LO_SUPPLYCOST` int(11) NOT NULL,
  `LO_TAX` tinyint(4) NOT NULL,
  `LO_COMMITDATE` date NOT NULL,
  `LO_SHIPMODE` varchar(100) NOT NULL,
  `C_NAME` varchar(100) NOT NULL,
  `C_ADDRESS` varchar(100) NOT NULL,
  `C_CITY` varchar(100) NOT NULL,
  `C_NATION` varchar(100) NOT NULL,
  `C_REGION` varchar(100) NOT NULL,
  `C_PHONE` varchar(100) NOT NULL,
  `C_MKTSEGMENT` varchar(100) NOT NULL,
  `S_NAME` varchar(100) NOT NULL,
  `S_ADDRESS` varchar(100) NOT NULL,
  `S_CITY` varchar(100) NOT NULL,
  `S_NATION` varchar(100) NOT NULL,
  `S_REGION` varchar(100) NOT NULL,
  `S_PHONE` varchar(100) NOT NULL,
  `P_NAME` varchar(100) NOT NULL,
  `P_MFGR` varchar(100) NOT NULL,
  `P_CATEGORY` varchar(100) NOT NULL,
  `P_BRAND` varchar(100) NOT NULL,
  `P_COLOR` varchar(100) NOT NULL,
  `P_TYPE` varchar(100) NOT NULL,
  `P_SIZE` tinyint(4) NOT NULL,
  `P_CONTAINER` varchar(100) NOT NULL"""

_PARTITIONS = """(PARTITION p1992 VALUES [("-2147483648"), ("19930101")),
PARTITION p1993 VALUES [("19930101"), ("19940101")),
PARTITION p1994 VALUES [("19940101"), ("19950101")),
PARTITION p1995 VALUES [("19950101"), ("19960101")),
PARTITION p1996 VALUES [("19960101"), ("19970101")),
PARTITION p1997 VALUES [("19970101"), ("19980101")),
PARTITION p1998 VALUES [("19980101"), ("19990101")))"""


def flat_ddl(table: str = "lineorder_flat", buckets: int = DEFAULT_BUCKETS, rollups: bool = False) -> str:
    """The table; `rollups=True` adds `ROLLUP (...)` (`ROLLUPS` below) so the load writes them too."""
    rollup = rollup_clause() + "\n" if rollups else ""
    return (f"CREATE TABLE `{table}` ({_COLUMNS}\n) ENGINE=OLAP\n"
            "DUPLICATE KEY(`LO_ORDERDATE`, `LO_ORDERKEY`)\n"
            "COMMENT 'OLAP'\n"
            f"PARTITION BY RANGE(`LO_ORDERDATE`)\n{_PARTITIONS}\n"
            f"DISTRIBUTED BY HASH(`LO_ORDERKEY`) BUCKETS {buckets}\n"
            f"{rollup}"
            'PROPERTIES ("replication_num" = "1")')


# Rollups for the 13 queries (`python -m bench.ssb.run --rollups`). Each is a DUPLICATE rollup holding only
# the columns its queries read, sorted by their filter columns, so the short key index (a VARCHAR key ends
# the 36-byte prefix) and the page zone maps of the later key columns skip most pages. Selection (doris-
# reference §5.2) takes the longest prefix of the index's key columns matched by the query's equality
# (continue) and range (stop) predicates, then the fewest columns; the base index scores 1 on any
# LO_ORDERDATE range, so a rollup must start with a column the query filters to be chosen over it. Hence
# one rollup per filter shape, not one per family: Q3.1 / Q3.2 / Q3.3-4 and Q4.1-2 / Q4.3 differ.
# (name, key columns, value columns)
ROLLUPS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # Q1.x: LO_DISCOUNT range (then zone maps on LO_QUANTITY and LO_ORDERDATE); the year is a partition
    ("r_q1", ("LO_DISCOUNT", "LO_QUANTITY", "LO_ORDERDATE"), ("LO_EXTENDEDPRICE",)),
    # Q2.x: P_CATEGORY = (Q2.1); P_BRAND range or = (Q2.2, Q2.3: no index matches, fewest columns wins;
    # P_BRAND starts with its category, so its zone maps prune), then S_REGION =
    ("r_q2", ("P_CATEGORY", "P_BRAND", "S_REGION", "LO_ORDERDATE"), ("LO_REVENUE",)),
    # Q3.1: C_REGION =, S_REGION =
    ("r_q31", ("C_REGION", "S_REGION", "C_NATION", "S_NATION", "LO_ORDERDATE"), ("LO_REVENUE",)),
    # Q3.2: C_NATION =, S_NATION =
    ("r_q32", ("C_NATION", "S_NATION", "C_CITY", "S_CITY", "LO_ORDERDATE"), ("LO_REVENUE",)),
    # Q3.3, Q3.4: C_CITY IN, S_CITY IN, LO_ORDERDATE range
    ("r_q33", ("C_CITY", "S_CITY", "LO_ORDERDATE"), ("LO_REVENUE",)),
    # Q4.1, Q4.2: C_REGION =, S_REGION =, P_MFGR IN, LO_ORDERDATE range (Q4.2)
    ("r_q41", ("C_REGION", "S_REGION", "P_MFGR", "LO_ORDERDATE"),
     ("C_NATION", "S_NATION", "P_CATEGORY", "LO_REVENUE", "LO_SUPPLYCOST")),
    # Q4.3: S_NATION =, P_CATEGORY =, LO_ORDERDATE range
    ("r_q43", ("S_NATION", "P_CATEGORY", "LO_ORDERDATE"), ("S_CITY", "P_BRAND", "LO_REVENUE", "LO_SUPPLYCOST")),
)


def _rollup_spec(name: str, keys: tuple[str, ...], values: tuple[str, ...]) -> str:
    cols = ", ".join(f"`{c}`" for c in keys + values)
    return f"{name} ({cols}) DUPLICATE KEY ({', '.join(f'`{c}`' for c in keys)})"


def rollup_clause() -> str:
    """`ROLLUP (...)` for CREATE TABLE: the rollups are written by the load itself."""
    return "ROLLUP (" + ",\n  ".join(_rollup_spec(*r) for r in ROLLUPS) + ")"


def add_rollups_sql(table: str = "lineorder_flat") -> str:
    """One batch `ALTER TABLE ... ADD ROLLUP` job building every rollup from the loaded base index."""
    return f"ALTER TABLE `{table}` ADD ROLLUP " + ",\n  ".join(_rollup_spec(*r) for r in ROLLUPS)

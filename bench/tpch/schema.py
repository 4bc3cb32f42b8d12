"""DDL of the 8 TPC-H tables and the `revenue0` view as Doris's TPC-H kit creates them (apache/doris
tools/tpch-tools/ddl/create-tpch-tables.sql: DUPLICATE KEY tables with DATE, DECIMAL(15, 2) and VARCHAR(n)
columns, DISTRIBUTED BY HASH on the first key column; `lineitem`/`orders` and `part`/`partsupp` colocated).

Changed for dorislite, nothing else:

* bucket counts: Doris uses 96 (lineitem, orders), 24 (partsupp, part, customer), 12 (supplier) and 1
  (nation, region) for a cluster; on this single 2-core node they are divided by 12 (8, 8, 2, 2, 2, 1, 1, 1:
  `DEFAULT_BUCKETS`): fewer, larger tablets, as bench/ssb does (per-tablet work dominates small scans);
* `"colocate_with" = "lineitem_orders"` (lineitem, orders) and `"colocate_with" = "part_partsupp"` (partsupp,
  part) are dropped from PROPERTIES: dorislite refuses them ("Unknown properties: {colocate_with=...}");
  colocation only places tablets of a group on the same BEs, which one node does anyway;
* the file's `drop table if exists` / `drop view if exists` lines are left out (the runner creates a fresh
  database).

The server accepts the rest as written. Column order matters: the runner loads
with `INSERT INTO t SELECT * FROM local(...)`, which maps the Parquet columns by position, so the generator
writes each table's columns in this order and with these types (`columns`).
"""

from __future__ import annotations

from bench.dbgen import ddl_columns, duckdb_type

__all__ = ["DEFAULT_BUCKETS", "REVENUE0_VIEW", "TABLES", "all_ddl", "columns", "ddl", "duckdb_type"]

TABLES = ("lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region")

# Doris's counts / 12 (see the module docstring).
DEFAULT_BUCKETS: dict[str, int] = {"lineitem": 8, "orders": 8, "partsupp": 2, "part": 2, "customer": 2,
                                   "supplier": 1, "nation": 1, "region": 1}

_DDL: dict[str, str] = {
    "lineitem": """CREATE TABLE lineitem (
    l_shipdate    DATE NOT NULL,
    l_orderkey    bigint NOT NULL,
    l_linenumber  int not null,
    l_partkey     int NOT NULL,
    l_suppkey     int not null,
    l_quantity    decimal(15, 2) NOT NULL,
    l_extendedprice  decimal(15, 2) NOT NULL,
    l_discount    decimal(15, 2) NOT NULL,
    l_tax         decimal(15, 2) NOT NULL,
    l_returnflag  VARCHAR(1) NOT NULL,
    l_linestatus  VARCHAR(1) NOT NULL,
    l_commitdate  DATE NOT NULL,
    l_receiptdate DATE NOT NULL,
    l_shipinstruct VARCHAR(25) NOT NULL,
    l_shipmode     VARCHAR(10) NOT NULL,
    l_comment      VARCHAR(44) NOT NULL
)ENGINE=OLAP
DUPLICATE KEY(`l_shipdate`, `l_orderkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`l_orderkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "orders": """CREATE TABLE orders  (
    o_orderkey       bigint NOT NULL,
    o_orderdate      DATE NOT NULL,
    o_custkey        int NOT NULL,
    o_orderstatus    VARCHAR(1) NOT NULL,
    o_totalprice     decimal(15, 2) NOT NULL,
    o_orderpriority  VARCHAR(15) NOT NULL,
    o_clerk          VARCHAR(15) NOT NULL,
    o_shippriority   int NOT NULL,
    o_comment        VARCHAR(79) NOT NULL
)ENGINE=OLAP
DUPLICATE KEY(`o_orderkey`, `o_orderdate`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`o_orderkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "partsupp": """CREATE TABLE partsupp (
    ps_partkey          int NOT NULL,
    ps_suppkey     int NOT NULL,
    ps_availqty    int NOT NULL,
    ps_supplycost  decimal(15, 2)  NOT NULL,
    ps_comment     VARCHAR(199) NOT NULL
)ENGINE=OLAP
DUPLICATE KEY(`ps_partkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`ps_partkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "part": """CREATE TABLE part (
    p_partkey          int NOT NULL,
    p_name        VARCHAR(55) NOT NULL,
    p_mfgr        VARCHAR(25) NOT NULL,
    p_brand       VARCHAR(10) NOT NULL,
    p_type        VARCHAR(25) NOT NULL,
    p_size        int NOT NULL,
    p_container   VARCHAR(10) NOT NULL,
    p_retailprice decimal(15, 2) NOT NULL,
    p_comment     VARCHAR(23) NOT NULL
)ENGINE=OLAP
DUPLICATE KEY(`p_partkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`p_partkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "customer": """CREATE TABLE customer (
    c_custkey     int NOT NULL,
    c_name        VARCHAR(25) NOT NULL,
    c_address     VARCHAR(40) NOT NULL,
    c_nationkey   int NOT NULL,
    c_phone       VARCHAR(15) NOT NULL,
    c_acctbal     decimal(15, 2)   NOT NULL,
    c_mktsegment  VARCHAR(10) NOT NULL,
    c_comment     VARCHAR(117) NOT NULL
)ENGINE=OLAP
DUPLICATE KEY(`c_custkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`c_custkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "supplier": """CREATE TABLE supplier (
    s_suppkey       int NOT NULL,
    s_name        VARCHAR(25) NOT NULL,
    s_address     VARCHAR(40) NOT NULL,
    s_nationkey   int NOT NULL,
    s_phone       VARCHAR(15) NOT NULL,
    s_acctbal     decimal(15, 2) NOT NULL,
    s_comment     VARCHAR(101) NOT NULL
)ENGINE=OLAP
DUPLICATE KEY(`s_suppkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`s_suppkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "nation": """CREATE TABLE `nation` (
  `n_nationkey` int(11) NOT NULL,
  `n_name`      varchar(25) NOT NULL,
  `n_regionkey` int(11) NOT NULL,
  `n_comment`   varchar(152) NULL
) ENGINE=OLAP
DUPLICATE KEY(`N_NATIONKEY`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`N_NATIONKEY`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
    "region": """CREATE TABLE region  (
    r_regionkey      int NOT NULL,
    r_name       VARCHAR(25) NOT NULL,
    r_comment    VARCHAR(152)
)ENGINE=OLAP
DUPLICATE KEY(`r_regionkey`)
COMMENT "OLAP"
DISTRIBUTED BY HASH(`r_regionkey`) BUCKETS {buckets}
PROPERTIES (
    "replication_num" = "1"
)""",
}

# Q15 reads this view (Doris creates it with the tables). DuckDB runs the same text.
REVENUE0_VIEW = """create view revenue0 (supplier_no, total_revenue) as
select
    l_suppkey,
    sum(l_extendedprice * (1 - l_discount))
from
    lineitem
where
    l_shipdate >= date '1996-01-01'
    and l_shipdate < date '1996-01-01' + interval '3' month
group by
    l_suppkey"""


def ddl(table: str, buckets: int | None = None) -> str:
    """`CREATE TABLE` for one of `TABLES`, with `buckets` (default `DEFAULT_BUCKETS[table]`)."""
    return _DDL[table].replace("{buckets}", str(buckets or DEFAULT_BUCKETS[table]))


def all_ddl(buckets: dict[str, int] | None = None) -> list[str]:
    """The 8 tables then the view, in the order the runner executes them."""
    return [ddl(t, (buckets or {}).get(t)) for t in TABLES] + [REVENUE0_VIEW]


def columns(table: str) -> list[tuple[str, str]]:
    """(name, Doris type) of a table's columns in DDL order, e.g. ("l_quantity", "decimal(15, 2)")."""
    return ddl_columns(_DDL[table])

"""Partition DDL and SHOW PARTITIONS through the real server: ALTER TABLE ADD / DROP / MODIFY PARTITION,
TRUNCATE TABLE ... PARTITION, their errors (Doris's messages and codes), loads into added partitions,
rollup tablets of added partitions, restarts, and SHOW PARTITIONS' columns, values, WHERE, ORDER BY, LIMIT.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymysql
import pytest

from server.show_partitions import COLUMNS, readable_size
from storage.spark.tables import read_only_engine
from tests.conftest import ServerProcess
from tests.server.test_rollup import rollup_rows

RANGE_DDL = """
CREATE TABLE {name} (k DATE NOT NULL, id INT NOT NULL, v BIGINT SUM DEFAULT "0")
AGGREGATE KEY(k, id)
PARTITION BY RANGE(k) (
    PARTITION p202001 VALUES LESS THAN ("2020-02-01"),
    PARTITION p202003 VALUES [("2020-03-01"), ("2020-04-01"))
)
DISTRIBUTED BY HASH(id) BUCKETS 2
PROPERTIES ("replication_num" = "1")
"""
LIST_DDL = """
CREATE TABLE {name} (city VARCHAR(20) NOT NULL, id INT NOT NULL, v INT)
DUPLICATE KEY(city, id)
PARTITION BY LIST(city) (PARTITION p_bj VALUES IN ("Beijing"), PARTITION p_sh VALUES IN ("Shanghai", "Suzhou"))
DISTRIBUTED BY HASH(id) BUCKETS 1
PROPERTIES ("replication_num" = "1")
"""
PLAIN_DDL = """
CREATE TABLE {name} (id INT NOT NULL, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3
PROPERTIES ("replication_num" = "1")
"""
ERR = "errCode = 2, detailMessage = "


def error_of(cur, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.MySQLError) as info:
        cur.execute(sql)
    return info.value.args[0], info.value.args[1]


def show(cur, sql: str) -> list[dict]:
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def partitions(cur, table: str) -> list[dict]:
    return show(cur, f"SHOW PARTITIONS FROM {table}")


def names(cur, table: str) -> list[str]:
    return [p["PartitionName"] for p in partitions(cur, table)]


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def tablet_dirs(storage: Path, db: str, table: str, partition: str) -> list[Path]:
    engine = read_only_engine(storage)
    try:
        t = engine.catalog.get_table(db, table)
        p = t.partition(partition)
        return [engine.tablet_dir(tb.tablet_id) for tb in engine.catalog.tablets(t.table_id, p.partition_id)]
    finally:
        engine.close()


# -- ADD PARTITION ----------------------------------------------------------------------------------------


def test_add_range_partitions_every_form(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute('ALTER TABLE t ADD PARTITION p202002 VALUES LESS THAN ("2020-03-01")')
    cur.execute('ALTER TABLE t ADD PARTITION p202005 VALUES [("2020-05-01"), ("2020-06-01")) ("replication_num" = "1")')
    cur.execute("ALTER TABLE t ADD PARTITION pmax VALUES LESS THAN MAXVALUE")
    ps = partitions(cur, "t")
    # SHOW PARTITIONS lists them in range order, whatever the order they were added in
    assert [p["PartitionName"] for p in ps] == ["p202001", "p202002", "p202003", "p202005", "pmax"]
    ranges = {p["PartitionName"]: p["Range"] for p in ps}
    assert ranges["p202002"] == ("[types: [DATEV2]; keys: [2020-02-01]; ..types: [DATEV2]; keys: [2020-03-01]; )")
    # LESS THAN after a gap starts at the largest upper bound below it
    assert ranges["pmax"] == ("[types: [DATEV2]; keys: [2020-06-01]; ..types: [DATEV2]; keys: [MAXVALUE]; )")
    ids = [int(p["PartitionId"]) for p in ps]
    assert len(set(ids)) == 5 and max(ids[1], ids[3], ids[4]) > max(ids[0], ids[2])  # new ids
    assert all(p["Buckets"] == "2" and p["VisibleVersion"] == "1" for p in ps)  # the table's default


def test_add_partition_if_not_exists_and_buckets(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute('ALTER TABLE t ADD PARTITION p202002 VALUES LESS THAN ("2020-03-01") '
                "DISTRIBUTED BY HASH(id) BUCKETS 5")
    # IF NOT EXISTS on an existing name does nothing, whatever the values say
    cur.execute('ALTER TABLE t ADD PARTITION IF NOT EXISTS p202002 VALUES LESS THAN ("2030-01-01")')
    cur.execute('ALTER TABLE t ADD PARTITION p202004 VALUES LESS THAN ("2020-05-01") DISTRIBUTED BY HASH(id)')
    cur.execute('ALTER TABLE t ADD PARTITION p202005 VALUES LESS THAN ("2020-06-01") '
                'DISTRIBUTED BY HASH(id) BUCKETS 3 PROPERTIES ("replication_num" = "1")')
    buckets = {p["PartitionName"]: p["Buckets"] for p in partitions(cur, "t")}
    assert buckets == {"p202001": "2", "p202002": "5", "p202003": "2", "p202004": "10", "p202005": "3"}


def test_add_list_partitions(cur) -> None:
    cur.execute(LIST_DDL.format(name="t"))
    cur.execute('ALTER TABLE t ADD PARTITION p_gz VALUES IN ("Guangzhou", "Shenzhen")')
    ps = partitions(cur, "t")
    assert [p["PartitionName"] for p in ps] == ["p_bj", "p_gz", "p_sh"]  # by listed keys, as Doris orders them
    assert ps[1]["Range"] == ("[types: [VARCHAR]; keys: [Guangzhou]; , types: [VARCHAR]; keys: [Shenzhen]; ]")
    assert ps[0]["Range"] == "[types: [VARCHAR]; keys: [Beijing]; ]"
    assert ps[1]["PartitionKey"] == "city"
    cur.execute("INSERT INTO t VALUES ('Shenzhen', 1, 10), ('Beijing', 2, 20)")
    assert rows(cur, "SELECT city, v FROM t PARTITION (p_gz)") == [("Shenzhen", 10)]
    code, msg = error_of(cur, 'ALTER TABLE t ADD PARTITION p_x VALUES IN ("Wuhan", "Suzhou")')
    assert (code, msg) == (1105, ERR + 'Invalid list value format: errCode = 2, detailMessage = The partition '
                           "key[(\"Suzhou\")] in partition item[('Wuhan','Suzhou')] is conflict with current "
                           'partitionKeys[(("Shanghai"),("Suzhou"))]')


def test_add_multi_column_list_and_range(cur) -> None:
    cur.execute("""CREATE TABLE l (a INT NOT NULL, b VARCHAR(5) NOT NULL, v INT) DUPLICATE KEY(a, b)
                   PARTITION BY LIST(a, b) (PARTITION p1 VALUES IN ((1, "x"), (2, "y")))
                   DISTRIBUTED BY HASH(a) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    cur.execute('ALTER TABLE l ADD PARTITION p2 VALUES IN ((3, "z"))')
    assert partitions(cur, "l")[1]["Range"] == "[types: [INT, VARCHAR]; keys: [3, z]; ]"
    assert partitions(cur, "l")[1]["PartitionKey"] == "a, b"
    cur.execute("""CREATE TABLE r (a INT NOT NULL, b SMALLINT NOT NULL, v INT) DUPLICATE KEY(a, b)
                   PARTITION BY RANGE(a, b) (PARTITION p1 VALUES LESS THAN ("10", "500"))
                   DISTRIBUTED BY HASH(a, b) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    cur.execute('ALTER TABLE r ADD PARTITION p2 VALUES LESS THAN ("30")')  # missing values are the minimum
    p2 = show(cur, "SHOW PARTITIONS FROM r WHERE PartitionName = 'p2'")[0]
    assert p2["Range"] == ("[types: [INT, SMALLINT]; keys: [10, 500]; ..types: [INT, SMALLINT]; "
                           "keys: [30, -32768]; )")
    code, msg = error_of(cur, 'ALTER TABLE r ADD PARTITION p3 VALUES LESS THAN ("40") DISTRIBUTED BY HASH(a) BUCKETS 5')
    assert (code, msg) == (1105, ERR + "Cannot assign hash distribution with different distribution cols. "
                           "new is: [`a` INT NOT NULL] default is: [`a` INT NOT NULL, `b` SMALLINT NOT NULL]")


@pytest.mark.parametrize("sql,code,message", [
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2020-01-15")', 1105,
     "Range [types: [DATEV2]; keys: [0000-01-01]; ..types: [DATEV2]; keys: [2020-01-15]; ) is intersected with "
     "range: [types: [DATEV2]; keys: [0000-01-01]; ..types: [DATEV2]; keys: [2020-02-01]; )"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES [("2020-03-15"), ("2020-05-01"))', 1105,
     "Range [types: [DATEV2]; keys: [2020-03-15]; ..types: [DATEV2]; keys: [2020-05-01]; ) is intersected with "
     "range: [types: [DATEV2]; keys: [2020-03-01]; ..types: [DATEV2]; keys: [2020-04-01]; )"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES [("2020-05-01"), ("2020-04-01"))', 1105,
     "The lower values must smaller than upper values"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2020-13-45")', 1105, "date literal [2020-13-45] is invalid"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2020-05-01", "7")', 1105,
     "Partition values number is more than partition column number: ('2020-05-01', '7')"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES IN ("2020-05-01")', 1105,
     "partitions types is invalid, expected FIXED or LESS in range partitions and IN in list partitions"),
    ('ALTER TABLE t ADD PARTITION p202003 VALUES LESS THAN ("2021-01-01")', 1517,
     "Duplicate partition name p202003"),
    ('ALTER TABLE t ADD PARTITION P202003 VALUES LESS THAN ("2021-01-01")', 1517,
     "Duplicate partition name P202003"),
    ('ALTER TABLE t ADD PARTITION 9p VALUES LESS THAN ("2021-01-01")', 1567, "Incorrect partition name '9p'"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2021-01-01") DISTRIBUTED BY HASH(k) BUCKETS 3', 1105,
     "Cannot assign hash distribution with different distribution cols. new is: [`k` DATEV2 NOT NULL] "
     "default is: [`id` INT NOT NULL]"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2021-01-01") DISTRIBUTED BY RANDOM BUCKETS 3', 1105,
     "Cannot assign different distribution type. default is: HASH"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2021-01-01") DISTRIBUTED BY HASH(id) BUCKETS 0', 1105,
     "Cannot assign hash distribution buckets less than 1"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2021-01-01") DISTRIBUTED BY HASH(nope) BUCKETS 2', 1105,
     "Distribution column(nope) doesn't exist"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("2021-01-01") ("in_memory" = "true")', 1105,
     "Not support set 'in_memory'='true' now!"),
    ('ALTER TABLE t ADD TEMPORARY PARTITION tp VALUES LESS THAN ("2021-01-01") DISTRIBUTED BY HASH(id) BUCKETS 0',
     1105, "Cannot assign hash distribution buckets less than 1"),
])
def test_add_partition_errors(cur, sql: str, code: int, message: str) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    assert error_of(cur, sql) == (code, ERR + message)
    assert names(cur, "t") == ["p202001", "p202003"]  # nothing was added


def test_less_than_after_a_maxvalue_partition_overlaps(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute("ALTER TABLE t ADD PARTITION pmax VALUES LESS THAN MAXVALUE")
    code, msg = error_of(cur, 'ALTER TABLE t ADD PARTITION p2021 VALUES LESS THAN ("2021-01-01")')
    assert (code, msg) == (1105, ERR + "Range [types: [DATEV2]; keys: [2020-04-01]; ..types: [DATEV2]; keys: "
                           "[2021-01-01]; ) is intersected with range: [types: [DATEV2]; keys: [2020-04-01]; "
                           "..types: [DATEV2]; keys: [MAXVALUE]; )")


def test_add_partition_to_unpartitioned_table(cur) -> None:
    cur.execute(PLAIN_DDL.format(name="t"))
    assert error_of(cur, 'ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("10")') == (
        1105, ERR + "Only support adding partition to range and list partitioned table")


def test_wrong_value_types(cur) -> None:
    cur.execute(LIST_DDL.format(name="l"))
    cur.execute("""CREATE TABLE n (k INT NOT NULL, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k)
                   (PARTITION p1 VALUES LESS THAN ("10")) DISTRIBUTED BY HASH(k) BUCKETS 1""")
    assert error_of(cur, 'ALTER TABLE n ADD PARTITION p2 VALUES LESS THAN ("abc")') == (
        1105, ERR + "Invalid number format: abc")
    assert error_of(cur, 'ALTER TABLE n ADD PARTITION p2 VALUES LESS THAN ("99999999999")') == (
        1105, ERR + "Number out of range[99999999999]. type: INT")
    assert error_of(cur, 'ALTER TABLE l ADD PARTITION p2 VALUES IN (("a", "b"))') == (
        1105, ERR + "partition key desc list size[2] is not equal to partition column size[1]")
    assert error_of(cur, 'ALTER TABLE l ADD PARTITION p2 VALUES LESS THAN ("x")') == (
        1105, ERR + "partitions types is invalid, expected FIXED or LESS in range partitions and IN in list "
        "partitions")


def test_dynamic_partition_tables_refuse_add_and_drop(cur) -> None:
    dynamic = ('"dynamic_partition.enable" = "{}", "dynamic_partition.time_unit" = "DAY", '
               '"dynamic_partition.start" = "-3", "dynamic_partition.end" = "3", "dynamic_partition.prefix" = "p"')
    ddl = """CREATE TABLE {name} (k DATE NOT NULL, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k)
             (PARTITION p20200101 VALUES [("2020-01-01"), ("2020-01-02")))
             DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1", {props})"""
    cur.execute(ddl.format(name="dyn", props=dynamic.format("true")))
    refusal = (1105, ERR + "Cannot add/drop partition on a Dynamic Partition Table, Use command `ALTER TABLE "
               'tbl_name SET ("dynamic_partition.enable" = "false")` firstly.')
    assert error_of(cur, 'ALTER TABLE dyn ADD PARTITION p1999 VALUES [("1999-01-01"), ("1999-01-02"))') == refusal
    assert error_of(cur, "ALTER TABLE dyn DROP PARTITION p20200101") == refusal
    assert error_of(cur, "ALTER TABLE dyn DROP PARTITION IF EXISTS p20200101") == refusal
    # temporary partitions are exempt from the rule (there are none to drop)
    assert error_of(cur, "ALTER TABLE dyn DROP TEMPORARY PARTITION p20200101") == (
        1507, ERR + "Error in list of partitions to p20200101")
    cur.execute(ddl.format(name="manual", props=dynamic.format("false")))
    cur.execute('ALTER TABLE manual ADD PARTITION p1999 VALUES [("1999-01-01"), ("1999-01-02"))')
    cur.execute("ALTER TABLE manual DROP PARTITION p20200101")
    assert "p1999" in names(cur, "manual") and "p20200101" not in names(cur, "manual")


def test_unknown_table_and_database(cur, db: str) -> None:
    assert error_of(cur, 'ALTER TABLE nope ADD PARTITION p VALUES LESS THAN ("1")') == (
        1146, ERR + f"Table [nope] does not exist in database [{db}].")
    assert error_of(cur, "ALTER TABLE nodb.t DROP PARTITION p")[0] == 1049
    assert error_of(cur, "ALTER TABLE nope MODIFY PARTITION p SET ('replication_num' = '1')")[0] == 1146


# -- loads into added partitions, rollups --------------------------------------------------------------------


def test_loads_route_into_an_added_partition(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    code, msg = error_of(cur, "INSERT INTO t VALUES ('2020-02-10', 1, 5)")
    assert "no partition for this tuple" in msg
    cur.execute('ALTER TABLE t ADD PARTITION p202002 VALUES LESS THAN ("2020-03-01")')
    cur.execute("INSERT INTO t VALUES ('2020-02-10', 1, 5), ('2020-01-10', 1, 7), ('2020-02-10', 1, 1)")
    assert rows(cur, "SELECT k, id, v FROM t PARTITION (p202002)") == [(__import__("datetime").date(2020, 2, 10), 1, 6)]
    assert rows(cur, "SELECT count(*) FROM t") == [(2,)]
    cur.execute("EXPLAIN SELECT * FROM t WHERE k = '2020-02-10'")
    assert "partitions=1/3 (p202002)" in "\n".join(r[0] for r in cur.fetchall())


def test_add_partition_creates_rollup_tablets(server: ServerProcess, db: str, cur) -> None:
    cur.execute("""CREATE TABLE t (k DATE NOT NULL, city VARCHAR(10) NOT NULL, id INT NOT NULL, v BIGINT SUM)
                   AGGREGATE KEY(k, city, id) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("2020-02-01"))
                   DISTRIBUTED BY HASH(id) BUCKETS 2 ROLLUP (r_city (city, v))
                   PROPERTIES ("replication_num" = "1")""")
    cur.execute('ALTER TABLE t ADD PARTITION p2 VALUES LESS THAN ("2020-03-01") DISTRIBUTED BY HASH(id) BUCKETS 3')
    engine = read_only_engine(server.storage)
    try:
        t = engine.catalog.get_table(db, "t")
        p2 = t.partition("p2")
        per_index = {i.name: len(engine.catalog.tablets(t.table_id, p2.partition_id, i.index_id)) for i in t.indexes}
    finally:
        engine.close()
    assert per_index == {"t": 3, "r_city": 3}
    cur.execute("INSERT INTO t VALUES ('2020-02-03', 'bj', 1, 10), ('2020-02-04', 'bj', 2, 5), "
                "('2020-01-05', 'sh', 3, 1)")
    stored: dict[str, int] = {}
    for city, v in rollup_rows(server.storage, db, "t", "r_city"):  # per tablet: merged within each bucket
        stored[city] = stored.get(city, 0) + v
    assert stored == {"bj": 15, "sh": 1}
    cur.execute("EXPLAIN SELECT city, sum(v) FROM t GROUP BY city")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert f"TABLE: {db}.t(r_city)" in plan and "tablets=5/5" in plan  # the rollup's 2 + 3 tablets
    assert rows(cur, "SELECT city, sum(v) FROM t GROUP BY city ORDER BY city") == [("bj", 15), ("sh", 1)]


# -- DROP PARTITION ----------------------------------------------------------------------------------------


def test_drop_partition_removes_data_and_files(server: ServerProcess, db: str, cur) -> None:
    cur.execute("""CREATE TABLE t (k DATE NOT NULL, id INT NOT NULL, v BIGINT SUM DEFAULT "0")
                   AGGREGATE KEY(k, id) PARTITION BY RANGE(k) (
                     PARTITION p1 VALUES LESS THAN ("2020-02-01"), PARTITION p2 VALUES LESS THAN ("2020-03-01"))
                   DISTRIBUTED BY HASH(id) BUCKETS 2 ROLLUP (r_id (id, v)) PROPERTIES ("replication_num" = "1")""")
    cur.execute("INSERT INTO t VALUES ('2020-01-10', 1, 5), ('2020-02-10', 2, 7), ('2020-02-11', 3, 1)")
    dirs = tablet_dirs(server.storage, db, "t", "p2")
    assert len(dirs) == 4 and any(d.exists() and any(d.iterdir()) for d in dirs)  # base + rollup tablets
    cur.execute("ALTER TABLE t DROP PARTITION p2")
    assert names(cur, "t") == ["p1"]
    assert rows(cur, "SELECT id, v FROM t ORDER BY id") == [(1, 5)]
    assert rows(cur, "SELECT id, sum(v) FROM t GROUP BY id") == [(1, 5)]
    assert not any(d.exists() for d in dirs)
    code, msg = error_of(cur, "INSERT INTO t VALUES ('2020-02-10', 2, 7)")
    assert "no partition for this tuple" in msg
    # the range is free again
    cur.execute('ALTER TABLE t ADD PARTITION p2 VALUES LESS THAN ("2020-03-01")')
    assert rows(cur, "SELECT count(*) FROM t PARTITION (p2)") == [(0,)]


def test_drop_partition_forms_and_errors(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute(PLAIN_DDL.format(name="plain"))
    cur.execute("ALTER TABLE t DROP PARTITION IF EXISTS nope")
    assert error_of(cur, "ALTER TABLE t DROP PARTITION nope") == (1507, ERR + "Error in list of partitions to nope")
    cur.execute("ALTER TABLE t DROP PARTITION P202003 FORCE")  # names are case-insensitive
    assert names(cur, "t") == ["p202001"]
    assert error_of(cur, "ALTER TABLE plain DROP PARTITION plain") == (
        1105, ERR + "Alter table [plain] failed. Not a partitioned table")
    # the last partition may go too (Doris 2.1 keeps ERR_DROP_LAST_PARTITION unused)
    cur.execute("ALTER TABLE t DROP PARTITION p202001")
    assert partitions(cur, "t") == []


# -- MODIFY PARTITION ----------------------------------------------------------------------------------------


def test_modify_partition_properties(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute('ALTER TABLE t ADD PARTITION p202004 VALUES LESS THAN ("2020-05-01")')
    cur.execute('ALTER TABLE t MODIFY PARTITION p202001 SET ("replication_num" = "3")')
    cur.execute('ALTER TABLE t MODIFY PARTITION (p202003, p202004) SET ("storage_medium" = "SSD")')
    ps = {p["PartitionName"]: p for p in partitions(cur, "t")}
    assert (ps["p202001"]["ReplicationNum"], ps["p202001"]["ReplicaAllocation"]) == ("3", "tag.location.default: 3")
    assert [ps[n]["StorageMedium"] for n in ("p202001", "p202003", "p202004")] == ["HDD", "SSD", "SSD"]
    cur.execute('ALTER TABLE t MODIFY PARTITION (*) SET ("replication_allocation" = "tag.location.default: 1", '
                '"storage_cooldown_time" = "2030-01-01 00:00:00", "mutable" = "false", "in_memory" = "false")')
    for p in partitions(cur, "t"):
        assert (p["ReplicationNum"], p["CooldownTime"], p["IsMutable"], p["IsInMemory"]) == (
            "1", "2030-01-01 00:00:00", "false", "false")
    assert error_of(cur, 'ALTER TABLE t MODIFY PARTITION (p202001, nope) SET ("replication_num" = "1")') == (
        1105, ERR + "Partition[nope] does not exist in table[t]")
    assert error_of(cur, 'ALTER TABLE t MODIFY PARTITION p202001 SET ("in_memory" = "true")') == (
        1105, ERR + "Not support set 'in_memory'='true' now!")
    assert error_of(cur, 'ALTER TABLE t MODIFY PARTITION p202001 SET ("storage_medium" = "tape")') == (
        1105, ERR + "Invalid storage_medium: tape")


# -- TRUNCATE TABLE ... PARTITION ----------------------------------------------------------------------------


def test_truncate_partitions(server: ServerProcess, db: str, cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute('ALTER TABLE t ADD PARTITION p202002 VALUES LESS THAN ("2020-03-01") DISTRIBUTED BY HASH(id) BUCKETS 4')
    cur.execute("INSERT INTO t VALUES ('2020-01-10', 1, 5), ('2020-02-10', 2, 7), ('2020-03-10', 3, 1)")
    before = {p["PartitionName"]: p for p in partitions(cur, "t")}
    old_dirs = tablet_dirs(server.storage, db, "t", "p202002")
    cur.execute("TRUNCATE TABLE t PARTITION (p202001, p202002)")
    after = {p["PartitionName"]: p for p in partitions(cur, "t")}
    assert rows(cur, "SELECT id FROM t") == [(3,)]
    assert [after[n]["VisibleVersion"] for n in ("p202001", "p202002", "p202003")] == ["1", "1", "2"]
    assert after["p202002"]["Buckets"] == "4" and after["p202002"]["DataSize"] == "0.000 "
    assert after["p202002"]["PartitionId"] != before["p202002"]["PartitionId"]
    assert after["p202003"]["PartitionId"] == before["p202003"]["PartitionId"]
    assert not any(d.exists() for d in old_dirs)
    assert error_of(cur, "TRUNCATE TABLE t PARTITION (p202003, p9)") == (1105, ERR + "Partition p9 does not exist")
    assert rows(cur, "SELECT id FROM t") == [(3,)]


# -- SHOW PARTITIONS ------------------------------------------------------------------------------------------


def test_show_partitions_columns_and_values(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute("SHOW PARTITIONS FROM t")
    assert tuple(d[0] for d in cur.description) == COLUMNS
    assert len(COLUMNS) == 20
    p = dict(zip(COLUMNS, cur.fetchall()[0], strict=True))
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", p["VisibleVersionTime"])
    assert int(p["PartitionId"]) >= 10000
    expected = {
        "PartitionName": "p202001", "VisibleVersion": "1", "State": "NORMAL", "PartitionKey": "k",
        "Range": "[types: [DATEV2]; keys: [0000-01-01]; ..types: [DATEV2]; keys: [2020-02-01]; )",
        "DistributionKey": "id", "Buckets": "2", "ReplicationNum": "1", "StorageMedium": "HDD",
        "CooldownTime": "9999-12-31 23:59:59", "RemoteStoragePolicy": "", "LastConsistencyCheckTime": None,
        "DataSize": "0.000 ", "IsInMemory": "false", "ReplicaAllocation": "tag.location.default: 1",
        "IsMutable": "true", "SyncWithBaseTables": "true", "UnsyncTables": None,
    }
    assert {k: p[k] for k in expected} == expected


def test_visible_version_counts_loads_and_data_size(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    for i in range(3):
        cur.execute(f"INSERT INTO t VALUES ('2020-01-0{i + 1}', {i}, 1)")
    cur.execute("INSERT INTO t VALUES ('2020-03-05', 9, 1), ('2020-01-05', 9, 1)")
    ps = {p["PartitionName"]: p for p in partitions(cur, "t")}
    assert (ps["p202001"]["VisibleVersion"], ps["p202003"]["VisibleVersion"]) == ("5", "2")
    assert re.fullmatch(r"\d+\.\d{3} (B|KB)", ps["p202001"]["DataSize"])
    assert ps["p202001"]["DataSize"] != "0.000 "


def test_readable_size() -> None:
    assert [readable_size(n) for n in (0, 1, 512, 1024, 1025, 1536, 5 * 1024**2 + 1, 3 * 1024**3 + 1)] == [
        "0.000 ", "1.000 B", "512.000 B", "1024.000 B", "1.001 KB", "1.500 KB", "5.000 MB", "3.000 GB"]


def test_show_partitions_where_order_limit(cur) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    cur.execute('ALTER TABLE t ADD PARTITION p202002 VALUES LESS THAN ("2020-03-01") DISTRIBUTED BY HASH(id) BUCKETS 5')
    cur.execute('ALTER TABLE t ADD PARTITION x202004 VALUES LESS THAN ("2020-05-01") DISTRIBUTED BY HASH(id) BUCKETS 3')

    def q(tail: str) -> list[str]:
        return [p["PartitionName"] for p in show(cur, "SHOW PARTITIONS FROM t " + tail)]

    assert q("") == ["p202001", "p202002", "p202003", "x202004"]
    assert q("WHERE PartitionName = 'p202002'") == ["p202002"]
    assert q("WHERE PartitionName = 'P202002'") == []  # `=` is exact
    assert q("WHERE PartitionName LIKE 'P2020%'") == ["p202001", "p202002", "p202003"]  # LIKE ignores case
    assert q("WHERE PartitionName LIKE 'p20200?'") == ["p202001", "p202002", "p202003"]
    assert q("WHERE Buckets > 2") == ["p202002", "x202004"]
    assert q("WHERE Buckets >= 2 AND Buckets != 5 AND State = 'NORMAL'") == ["p202001", "p202003", "x202004"]
    assert q("WHERE ReplicationNum = 1 AND State LIKE 'norm%'") == ["p202001", "p202002", "p202003", "x202004"]
    first = show(cur, "SHOW PARTITIONS FROM t")[0]["PartitionId"]
    assert q(f"WHERE PartitionId = {first}") == ["p202001"]
    assert q(f"WHERE PartitionId > {first}") == ["p202002", "p202003", "x202004"]
    assert q("ORDER BY Buckets DESC, PartitionName") == ["p202002", "x202004", "p202001", "p202003"]
    assert q("ORDER BY PartitionName DESC") == ["x202004", "p202003", "p202002", "p202001"]
    assert q("ORDER BY PartitionId LIMIT 2") == ["p202001", "p202003"]
    assert q("ORDER BY PartitionId LIMIT 2 OFFSET 1") == ["p202003", "p202002"]
    assert q("LIMIT 1, 2") == ["p202002", "p202003"]
    assert q("WHERE Buckets = 2 ORDER BY PartitionName DESC LIMIT 1") == ["p202003"]
    assert q("LIMIT 10 OFFSET 7") == []


@pytest.mark.parametrize("tail,code,message", [
    ("WHERE VisibleVersion = 1", 1105, "Only the columns of PartitionId/PartitionName/State/Buckets/ReplicationNum/"
     "LastConsistencyCheckTime are supported."),
    ("WHERE PartitionName = 'a' OR Buckets = 1", 1105, "Only allow compound predicate with operator AND"),
    ("WHERE PartitionName != 'a'", 1105, "Only operator =|like are supported for PartitionName"),
    ("WHERE Buckets LIKE '1%'", 1105, 'Where clause : PartitionName|State like "p20191012|NORMAL"'),
    ("WHERE PartitionName IN ('a', 'b')", 1105, "Only operator =|>=|<=|>|<|!=|like are supported."),
    ("WHERE PartitionName = concat('p', '1')", 1105, "Not Supported. Use `select * from partitions(...)` instead"),
    ("WHERE LastConsistencyCheckTime > 5", 1105,
     'Where clause : LastConsistencyCheckTime =|>=|<=|>|<|!= "2019-12-22|2019-12-22 22:22:00"'),
    ("ORDER BY nope", 1166, "Incorrect column name 'nope'. Column regex is "
     "'^[_a-zA-Z@0-9\\s/][.a-zA-Z0-9_+-/?@#$%^&*\"\\s,:]{0,255}$'"),
])
def test_show_partitions_filter_errors(cur, tail: str, code: int, message: str) -> None:
    cur.execute(RANGE_DDL.format(name="t"))
    assert error_of(cur, "SHOW PARTITIONS FROM t " + tail) == (code, ERR + message)


def test_show_partitions_of_unpartitioned_and_other_tables(cur, db: str) -> None:
    cur.execute(PLAIN_DDL.format(name="plain"))
    [p] = partitions(cur, "plain")
    assert (p["PartitionName"], p["PartitionKey"], p["Range"], p["DistributionKey"], p["Buckets"]) == (
        "plain", "", "", "id", "3")
    cur.execute("""CREATE TABLE rnd (id INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY RANDOM BUCKETS 4
                   PROPERTIES ("replication_num" = "1")""")
    assert partitions(cur, "rnd")[0]["DistributionKey"] == "RANDOM"
    cur.execute("SHOW TEMPORARY PARTITIONS FROM plain")
    assert tuple(d[0] for d in cur.description) == COLUMNS and cur.fetchall() == ()
    cur.execute(f"SHOW PARTITIONS FROM {db}.plain")
    assert len(cur.fetchall()) == 1
    assert error_of(cur, "SHOW PARTITIONS FROM nope") == (1146, ERR + f"Table [nope] does not exist in database [{db}].")
    assert error_of(cur, "SHOW PARTITIONS FROM nodb.plain") == (1049, ERR + "Unknown database 'nodb'")
    assert error_of(cur, "SHOW PARTITIONS FROM information_schema.tables") == (
        1105, ERR + "table type is not OLAP, tableName=tables, type=SCHEMA")


def test_buckets_auto_sizes_added_partitions_from_previous_ones(cur) -> None:
    cur.execute("""CREATE TABLE t (k DATE NOT NULL, id INT NOT NULL, v INT) DUPLICATE KEY(k, id)
                   PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("2020-02-01"))
                   DISTRIBUTED BY HASH(id) BUCKETS AUTO PROPERTIES ("replication_num" = "1")""")
    # no partition holds data yet: the table's default (10 without estimate_partition_size)
    cur.execute('ALTER TABLE t ADD PARTITION p2 VALUES LESS THAN ("2020-03-01")')
    cur.execute("INSERT INTO t VALUES ('2020-01-05', 1, 1), ('2020-02-05', 2, 2)")
    # a few KB of history: the seed's rule gives 1 bucket (<= 100 MB)
    cur.execute('ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN ("2020-04-01")')
    cur.execute('ALTER TABLE t ADD PARTITION p4 VALUES LESS THAN ("2020-05-01") DISTRIBUTED BY HASH(id) BUCKETS 4')
    cur.execute('ALTER TABLE t ADD PARTITION p5 VALUES LESS THAN ("2020-06-01") DISTRIBUTED BY HASH(id) BUCKETS AUTO')
    buckets = {p["PartitionName"]: p["Buckets"] for p in partitions(cur, "t")}
    assert buckets == {"p1": "10", "p2": "10", "p3": "1", "p4": "4", "p5": "1"}
    cur.execute("SHOW CREATE TABLE t")
    assert "BUCKETS AUTO" in cur.fetchall()[0][1]


# -- restart ------------------------------------------------------------------------------------------------


def test_restart_keeps_added_and_dropped_partitions(fresh_server: ServerProcess) -> None:
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("USE d")
        cur.execute(RANGE_DDL.format(name="t"))
        cur.execute('ALTER TABLE t ADD PARTITION p202002 VALUES LESS THAN ("2020-03-01") '
                    "DISTRIBUTED BY HASH(id) BUCKETS 3")
        cur.execute('ALTER TABLE t MODIFY PARTITION p202002 SET ("storage_medium" = "SSD")')
        cur.execute("INSERT INTO t VALUES ('2020-02-10', 2, 7), ('2020-03-10', 3, 1)")
        cur.execute("ALTER TABLE t DROP PARTITION p202001")
        before = partitions(cur, "t")
    fresh_server.stop()
    fresh_server.start()
    with fresh_server.connect("d") as conn, conn.cursor() as cur:
        assert partitions(cur, "t") == before
        assert [p["PartitionName"] for p in before] == ["p202002", "p202003"]
        assert before[0]["StorageMedium"] == "SSD" and before[0]["Buckets"] == "3"
        assert rows(cur, "SELECT id, v FROM t ORDER BY id") == [(2, 7), (3, 1)]
        cur.execute("INSERT INTO t VALUES ('2020-02-11', 4, 1)")
        assert partitions(cur, "t")[0]["VisibleVersion"] == "3"

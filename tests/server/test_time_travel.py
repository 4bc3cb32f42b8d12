"""Time travel (issue 17): FOR VERSION AS OF / FOR TIME AS OF, SHOW TABLE VERSIONS, the table property
time_travel_retention keeping compaction inputs (across a restart too), restores, and the errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from tests.conftest import ServerProcess, own_database
from tests.server.test_compaction import run_compaction, start, tablets
from tests.server.test_rollup import wait_jobs

TABLE = ("CREATE TABLE {name} (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
         "PROPERTIES ('replication_num' = '1'{props})")
KEEP = ", 'time_travel_retention' = '1d'"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # compaction only when asked; its inputs swept at once unless a retention keeps them
    server = start(tmp_path_factory.mktemp("time_travel"), disable_auto_compaction="true")
    yield server
    server.stop()


@pytest.fixture
def cur(srv: ServerProcess) -> Iterator:
    yield from own_database(srv)




def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return list(cur.fetchall())


def versions(cur, table: str, where: str = "") -> list[dict]:
    cur.execute(f"SHOW TABLE VERSIONS FROM {table} {where}")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def error(cur, sql: str) -> str:
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute(sql)
    return str(e.value.args[1])


def test_each_publish_is_a_version_read_in_any_query_shape(cur) -> None:
    cur.execute(TABLE.format(name="t", props=KEEP))
    cur.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    cur.execute("INSERT INTO t VALUES (3, 30)")
    cur.execute("DELETE FROM t WHERE k = 1")
    listed = versions(cur, "t")
    assert [(v["Version"], v["Kind"], v["Rows"], v["PartitionVersions"]) for v in listed] == [
        (1, "RETENTION", 0, "t=1"), (2, "LOAD", 2, "t=2"), (3, "LOAD", 1, "t=3"), (4, "DELETE", 0, "t=4")]
    assert listed[0]["Label"] is None and listed[1]["Label"].startswith("label_") and listed[1]["TxnId"] > 0
    assert [v["Version"] for v in versions(cur, "t", "WHERE Kind = 'LOAD' ORDER BY Version DESC LIMIT 1")] == [3]
    assert rows(cur, "SELECT * FROM t FOR VERSION AS OF 1") == []
    assert rows(cur, "SELECT * FROM t FOR VERSION AS OF 3 ORDER BY k") == [(1, 10), (2, 20), (3, 30)]
    assert rows(cur, "SELECT * FROM t FOR VERSION AS OF 4 ORDER BY k") == rows(cur, "SELECT * FROM t ORDER BY k") \
        == [(2, 20), (3, 30)]
    # joins, subqueries, views, and the same table at two versions in one statement
    assert rows(cur, "SELECT a.k, b.k FROM t FOR VERSION AS OF 2 a LEFT JOIN t b ON a.k = b.k ORDER BY a.k") == [
        (1, None), (2, 2)]
    assert rows(cur, "SELECT k FROM t FOR VERSION AS OF 3 WHERE k NOT IN (SELECT k FROM t) ") == [(1,)]
    assert rows(cur, "SELECT count(*) FROM (SELECT * FROM t FOR VERSION AS OF 2) x") == [(2,)]
    cur.execute("CREATE VIEW old_t AS SELECT k, v FROM t FOR VERSION AS OF 2")
    cur.execute("INSERT INTO t VALUES (9, 90)")
    assert rows(cur, "SELECT k FROM old_t ORDER BY k") == [(1,), (2,)]
    cur.execute("EXPLAIN SELECT * FROM t FOR VERSION AS OF 3 WHERE k > 1")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert "TABLE VERSION: 3 (LOAD, " in plan and "partition versions: t=3" in plan
    # a repeated statement gives the same answer (a time travel's plan is not kept: its window moves)
    assert rows(cur, "SELECT count(*) FROM t FOR VERSION AS OF 3") == rows(cur, "SELECT count(*) FROM t FOR VERSION AS OF 3") \
        == [(3,)]


def test_for_time_as_of_reads_the_version_visible_then(cur) -> None:
    cur.execute(TABLE.format(name="t", props=KEEP))
    cur.execute("INSERT INTO t VALUES (1, 1)")
    time.sleep(1.1)
    cur.execute("INSERT INTO t VALUES (2, 2)")
    first, second = versions(cur, "t", "WHERE Kind = 'LOAD'")
    assert first["Time"] < second["Time"]
    assert rows(cur, f"SELECT k FROM t FOR TIME AS OF '{first['Time']}'") == [(1,)]
    assert rows(cur, f"SELECT k FROM t FOR TIME AS OF '{second['Time']}' ORDER BY k") == [(1,), (2,)]
    time.sleep(1.0)  # now() is to the second
    assert rows(cur, "SELECT count(*) FROM t FOR TIME AS OF now()") == [(2,)]
    assert rows(cur, "SELECT count(*) FROM t FOR TIME AS OF now() - INTERVAL 1 SECOND") in ([(1,)], [(2,)])
    assert "still to come" in error(cur, "SELECT * FROM t FOR TIME AS OF now() + INTERVAL 1 HOUR")
    # a session time zone moves the wall clock the text means
    cur.execute("SET time_zone = '+00:00'")
    utc = versions(cur, "t", "WHERE Kind = 'LOAD'")[0]["Time"]
    assert rows(cur, f"SELECT k FROM t FOR TIME AS OF '{utc}'") == [(1,)]


def test_compaction_keeps_inputs_inside_the_retention_and_a_restart_too(tmp_path: Path) -> None:
    server = start(tmp_path, disable_auto_compaction="true")
    try:
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE d")
            cur.execute("USE d")
            cur.execute(TABLE.format(name="kept", props=KEEP))
            cur.execute(TABLE.format(name="plain", props=""))
            for name in ("kept", "plain"):
                for i in range(6):
                    cur.execute(f"INSERT INTO {name} VALUES ({i}, {i})")
                run_compaction(server, int(tablets(cur, name)[0]["TabletId"]))
                assert tablets(cur, name)[0]["VersionCount"] == "1"
            assert rows(cur, "SELECT k FROM kept FOR VERSION AS OF 3 ORDER BY k") == [(0,), (1,)]
            assert "Time travel is off for table plain" in error(cur, "SELECT * FROM plain FOR VERSION AS OF 3")
            assert rows(cur, "SELECT count(*) FROM plain FOR VERSION AS OF 6") == [(6,)]  # its current version
            kept = rows(cur, "SHOW DATA FROM kept")
            plain = rows(cur, "SHOW DATA FROM plain")
            assert kept[-1][-1] != "0.000 " and plain[-1][-1] == "0.000 "  # RetainedSize of the Total row
        server.stop()
        server.start()
        with server.connect("d") as conn, conn.cursor() as cur:
            assert rows(cur, "SELECT k FROM kept FOR VERSION AS OF 4 ORDER BY k") == [(0,), (1,), (2,)]
            # switched off: the retained inputs go, and the older versions with them
            cur.execute("ALTER TABLE kept SET ('time_travel_retention' = '0')")
            assert "Time travel is off" in error(cur, "SELECT * FROM kept FOR VERSION AS OF 4")
            assert rows(cur, "SHOW DATA FROM kept")[-1][-1] == "0.000 "
    finally:
        server.stop()


def test_retention_window_and_switching_it_on(cur) -> None:
    cur.execute(TABLE.format(name="t", props=""))
    cur.execute("INSERT INTO t VALUES (0, 0)")
    cur.execute("INSERT INTO t VALUES (1, 1)")
    cur.execute("ALTER TABLE t SET ('time_travel_retention' = '2s')")
    cur.execute("INSERT INTO t VALUES (2, 2)")
    assert [v["Kind"] for v in versions(cur, "t")] == ["LOAD", "LOAD", "RETENTION", "LOAD"]
    # a version replaced before time travel was on cannot be read; the one current when it was switched on can
    message = error(cur, "SELECT * FROM t FOR VERSION AS OF 1")
    assert "older than what its time_travel_retention (2s) keeps: the oldest readable time is" in message
    assert rows(cur, "SELECT count(*) FROM t FOR VERSION AS OF 2") == rows(cur, "SELECT count(*) FROM t FOR VERSION AS OF 3") == [(2,)]
    time.sleep(2.5)  # out of the window now
    assert "the oldest readable time is" in error(cur, "SELECT * FROM t FOR VERSION AS OF 3")
    assert rows(cur, "SELECT count(*) FROM t FOR VERSION AS OF 4") == [(3,)]  # the current one always


def test_a_rollup_built_later_is_not_read_for_older_versions(cur) -> None:
    cur.execute("CREATE TABLE t (k INT, c INT, v BIGINT SUM) AGGREGATE KEY(k, c) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                f"PROPERTIES ('replication_num' = '1'{KEEP})")
    cur.execute("INSERT INTO t VALUES (1, 1, 5)")
    cur.execute("INSERT INTO t VALUES (2, 1, 7)")
    cur.execute("ALTER TABLE t ADD ROLLUP r (c, v)")  # back-filled at version 3
    assert [j["State"] for j in wait_jobs(cur, "t")] == ["FINISHED"]
    cur.execute("INSERT INTO t VALUES (3, 2, 1)")

    def index(sql: str) -> str:
        cur.execute("EXPLAIN " + sql)
        return next(r[0] for r in cur.fetchall() if "TABLE:" in r[0]).split("(")[1].split(")")[0]

    assert index("SELECT c, sum(v) FROM t GROUP BY c") == "r"
    assert index("SELECT c, sum(v) FROM t FOR VERSION AS OF 2 GROUP BY c") == "t"
    assert rows(cur, "SELECT c, sum(v) FROM t FOR VERSION AS OF 2 GROUP BY c") == [(1, 5)]
    assert index("SELECT c, sum(v) FROM t FOR VERSION AS OF 3 GROUP BY c") == "r"
    assert rows(cur, "SELECT c, sum(v) FROM t FOR VERSION AS OF 3 GROUP BY c") == [(1, 12)]
    assert rows(cur, "SELECT c, sum(v) FROM t GROUP BY c ORDER BY c") == [(1, 12), (2, 1)]


def test_restore_by_insert_overwrite_and_create_table_as_select(cur) -> None:
    cur.execute(TABLE.format(name="t", props=KEEP))
    cur.execute("INSERT INTO t VALUES (1, 1), (2, 2)")
    cur.execute("DELETE FROM t WHERE k = 1")
    cur.execute("CREATE TABLE t_old AS SELECT * FROM t FOR VERSION AS OF 2")
    assert rows(cur, "SELECT * FROM t_old ORDER BY k") == [(1, 1), (2, 2)]
    cur.execute("INSERT OVERWRITE TABLE t SELECT * FROM t FOR VERSION AS OF 2")
    assert rows(cur, "SELECT * FROM t ORDER BY k") == [(1, 1), (2, 2)]
    assert versions(cur, "t")[-1]["Kind"] == "OVERWRITE"
    assert rows(cur, "SELECT * FROM t FOR VERSION AS OF 3") == [(2, 2)]  # the overwritten data stays readable


def test_drop_partition_inside_the_retention_needs_force(cur) -> None:
    cur.execute("CREATE TABLE p (d DATE, k INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) ("
                "PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'), "
                "PARTITION p3 VALUES LESS THAN ('2024-04-01')) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                f"PROPERTIES ('replication_num' = '1'{KEEP})")
    cur.execute("INSERT INTO p VALUES ('2024-01-05', 1), ('2024-02-05', 2)")
    assert "DROP PARTITION p1 FORCE" in error(cur, "ALTER TABLE p DROP PARTITION p1")
    cur.execute("ALTER TABLE p DROP PARTITION p3")  # never held rows: nothing kept
    cur.execute("ALTER TABLE p DROP PARTITION p1 FORCE")
    assert "holds a partition dropped since" in error(cur, "SELECT * FROM p FOR VERSION AS OF 2")
    cur.execute("ALTER TABLE p ADD PARTITION p4 VALUES LESS THAN ('2024-05-01')")
    cur.execute("INSERT INTO p VALUES ('2024-04-05', 4)")
    listed = versions(cur, "p")
    assert [v["Kind"] for v in listed] == ["RETENTION", "LOAD", "DROP PARTITION", "DROP PARTITION", "LOAD"]
    assert listed[-1]["PartitionVersions"] == "p2=2, p4=2"
    assert rows(cur, "SELECT k FROM p FOR VERSION AS OF 5 ORDER BY k") == [(2,), (4,)]
    cur.execute("TRUNCATE TABLE p")  # new empty partitions: a version of its own, the older ones gone with the data
    assert versions(cur, "p")[-1]["Kind"] == "TRUNCATE"
    assert rows(cur, "SELECT count(*) FROM p FOR VERSION AS OF 6") == [(0,)]
    assert "holds a partition dropped since" in error(cur, "SELECT * FROM p FOR VERSION AS OF 5")


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT * FROM t FOR VERSION AS OF 99", "Table t has no version 99: its newest is 2"),
    ("SELECT * FROM t FOR VERSION AS OF 0", "Table t has no version 0"),
    ("SELECT * FROM t FOR VERSION AS OF k", "Unknown column 'k'"),
    ("SELECT * FROM t FOR VERSION AS OF 'x'", "needs a constant table version number"),
    ("SELECT * FROM t FOR TIME AS OF 'yesterday'", "needs a constant DATETIME"),
    ("SELECT * FROM t FOR TIME AS OF '1999-01-01 00:00:00'", "the oldest readable time is"),
    ("SELECT * FROM v FOR VERSION AS OF 1", "reads tables; v is not one"),
    ("SELECT * FROM information_schema.tables FOR VERSION AS OF 1", "reads tables; tables is not one"),
    ("SELECT * FROM t FOR VERSION BETWEEN 1 AND 2", "Only FOR VERSION AS OF"),
    ("SHOW TABLE VERSIONS FROM nope", "does not exist"),
    ("ALTER TABLE t SET ('time_travel_retention' = 'a week')", "Invalid time_travel_retention: a week"),
    ("ALTER TABLE t SET ('time_travel_retention' = '400d')", "longer than the most it keeps: 366d"),
    ("CREATE TABLE t2 (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES "
     "('replication_num' = '1', 'time_travel_retention' = '-1d')", "Invalid time_travel_retention"),
])
def test_errors(cur, sql: str, message: str) -> None:
    cur.execute(TABLE.format(name="t", props=KEEP))
    cur.execute("INSERT INTO t VALUES (1, 1)")
    cur.execute("CREATE VIEW v AS SELECT * FROM t")
    assert message in error(cur, sql)

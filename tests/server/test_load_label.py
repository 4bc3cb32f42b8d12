"""LOAD LABEL (issue 15): Doris's Broker Load and Spark Load over files on this machine, as asynchronous jobs
SHOW LOAD follows; one label over several files and tables, all or nothing; resources for Spark Load."""

from __future__ import annotations

import time
from pathlib import Path

import pymysql
import pytest

from tests.conftest import ServerProcess, free_port

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


def wait_load(cur, label: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        cur.execute(f"SHOW LOAD WHERE LABEL = '{label}'")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        if rows and rows[-1]["State"] in ("FINISHED", "CANCELLED") or time.monotonic() > deadline:
            return rows[-1]  # the newest job of the label
        time.sleep(0.2)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"a": tmp_path / "a.csv", "b": tmp_path / "b.csv", "bad": tmp_path / "bad.csv", "j": tmp_path / "c.json"}
    out["a"].write_text("1,10\n2,20\n")
    out["b"].write_text("3|30\n")
    out["bad"].write_text("4|x\n")
    out["j"].write_text('{"k": 5, "v": 50}\n{"k": 6, "v": 60}\n')
    return out


def test_broker_load_of_several_files_and_tables(files, cur, db) -> None:
    cur.execute(f"CREATE TABLE t (k INT, v INT, w INT) DUPLICATE KEY(k) {PROPS}")
    cur.execute(f"CREATE TABLE u (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
    cur.execute(f"""LOAD LABEL {db}.l1 (
        DATA INFILE("file://{files['a']}") INTO TABLE t COLUMNS TERMINATED BY "," (k, tmp) SET (v = tmp, w = tmp * 2)
            WHERE k > 1,
        DATA INFILE("{files['b']}") INTO TABLE u COLUMNS TERMINATED BY "|",
        DATA INFILE("{files['j']}") INTO TABLE u FORMAT AS "json"
    ) WITH LOCAL PROPERTIES ("timeout" = "600") COMMENT 'nightly'""")
    job = wait_load(cur, "l1")
    assert (job["State"], job["Type"], job["Comment"]) == ("FINISHED", "BROKER", "nightly"), job["ErrorMsg"]
    cur.execute("SELECT k, v, w FROM t ORDER BY k")
    assert cur.fetchall() == ((2, 20, 40),)
    cur.execute("SELECT k, v FROM u ORDER BY k")
    assert cur.fetchall() == ((3, 30), (5, 50), (6, 60))
    with pytest.raises(pymysql.err.OperationalError, match="has already been used"):
        cur.execute(f'LOAD LABEL l1 (DATA INFILE("{files["a"]}") INTO TABLE u) WITH LOCAL')
    # a bad row in the second file: nothing of the label lands, in either table
    cur.execute(f"""LOAD LABEL l2 (
        DATA INFILE("{files['a']}") INTO TABLE u COLUMNS TERMINATED BY ",",
        DATA INFILE("{files['bad']}") INTO TABLE u COLUMNS TERMINATED BY "|"
    ) WITH BROKER "hdfs_broker" ("username" = "x")""")
    job = wait_load(cur, "l2")
    assert job["State"] == "CANCELLED" and "value is incorrect" in job["ErrorMsg"], job
    cur.execute("SELECT count(*) FROM u")
    assert cur.fetchone() == (3,)
    # the label of a cancelled load may be used again
    cur.execute(f'LOAD LABEL l2 (DATA INFILE("{files["a"]}") INTO TABLE u COLUMNS TERMINATED BY ",") '
                'PROPERTIES ("max_filter_ratio" = "0.5")')
    assert wait_load(cur, "l2")["State"] == "FINISHED"
    for sql, message in (
        (f'LOAD LABEL l3 (DATA INFILE("{files["a"]}") INTO TABLE nope)', "does not exist"),
        ('LOAD LABEL l3 (DATA INFILE("hdfs://nn/x.csv") INTO TABLE u)', "own disk only"),
        (f'LOAD LABEL l3 (DATA INFILE("{files["a"]}") INTO TABLE u) PROPERTIES ("bogus" = "1")', "Unknown properties"),
        (f'LOAD LABEL l3 (DATA INFILE("{files["a"]}") INTO TABLE u) WITH RESOURCE "nope"', "does not exist"),
        ('LOAD LABEL l3 (DATA INFILE INTO TABLE u)', "Syntax error"),
    ):
        with pytest.raises(pymysql.err.MySQLError, match=message):
            cur.execute(sql)


def test_spark_load_with_a_resource(files, server, cur, db) -> None:
    cur.execute(f"CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
    cur.execute("CREATE EXTERNAL RESOURCE 'spark_t' PROPERTIES ('type' = 'spark', 'spark.master' = 'local[*]', "
                "'spark.executor.memory' = '1g')")
    try:
        cur.execute("SHOW RESOURCES WHERE Name = 'spark_t'")
        rows = cur.fetchall()
        assert [d[0] for d in cur.description] == ["Name", "ResourceType", "Item", "Value"]
        assert ("spark_t", "spark", "spark.master", "local[*]") in rows
        with pytest.raises(pymysql.err.OperationalError, match="already exist"):
            cur.execute("CREATE EXTERNAL RESOURCE 'spark_t' PROPERTIES ('type' = 'spark', 'spark.master' = 'x')")
        cur.execute(f'LOAD LABEL sp1 (DATA INFILE("{files["a"]}") INTO TABLE t COLUMNS TERMINATED BY ",") '
                    'WITH RESOURCE "spark_t" ("spark.executor.memory" = "1g")')
        job = wait_load(cur, "sp1")
        assert (job["State"], job["Type"]) == ("FINISHED", "SPARK"), job["ErrorMsg"]
        cur.execute("SELECT sum(v) FROM t")
        assert cur.fetchone() == (30,)
        cur.execute("CREATE EXTERNAL RESOURCE 'yarn_t' PROPERTIES ('type' = 'spark', 'spark.master' = 'yarn')")
        with pytest.raises(pymysql.err.OperationalError, match="one process holds one Spark session"):
            cur.execute(f'LOAD LABEL sp2 (DATA INFILE("{files["a"]}") INTO TABLE t) WITH RESOURCE "yarn_t"')
        for sql, message in (("CREATE EXTERNAL RESOURCE 'r' PROPERTIES ('type' = 'odbc_catalog')", "spark"),
                             ("CREATE EXTERNAL RESOURCE 'r' PROPERTIES ('spark.master' = 'x')", "type can't be null"),
                             ("CREATE EXTERNAL RESOURCE 'r' PROPERTIES ('type' = 'spark')", "spark.master"),
                             ("DROP RESOURCE 'nope'", "does not exist")):
            with pytest.raises(pymysql.err.OperationalError, match=message):
                cur.execute(sql)
    finally:
        cur.execute("DROP RESOURCE IF EXISTS 'spark_t'")
        cur.execute("DROP RESOURCE IF EXISTS 'yarn_t'")
    cur.execute("SHOW RESOURCES")
    assert not [r for r in cur.fetchall() if r[0] in ("spark_t", "yarn_t")]


def test_resources_survive_a_restart_and_need_admin_or_usage(tmp_path: Path) -> None:
    """CREATE / DROP RESOURCE need ADMIN; a Spark Load needs USAGE_PRIV on its resource (GRANT USAGE_PRIV ON
    RESOURCE 'r' or RESOURCE *), and SHOW RESOURCES lists the ones a user may use."""
    csv = tmp_path / "in.csv"
    csv.write_text("1,10\n2,20\n")
    srv = ServerProcess(free_port(), tmp_path / "data").start()
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE EXTERNAL RESOURCE 'keep' PROPERTIES ('type' = 'spark', 'spark.master' = 'local[2]')")
            cur.execute("CREATE EXTERNAL RESOURCE 'other' PROPERTIES ('type' = 'spark', 'spark.master' = 'local')")
            cur.execute("CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'")
            cur.execute("CREATE DATABASE rdb")
            cur.execute(f"CREATE TABLE rdb.t (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
            cur.execute("GRANT LOAD_PRIV, SELECT_PRIV ON rdb.* TO 'plain'@'%'")
        load = (f'LOAD LABEL rdb.{{}} (DATA INFILE("{csv}") INTO TABLE t COLUMNS TERMINATED BY ",") '
                'WITH RESOURCE "keep"')
        with srv.connect(user="plain", password="pw") as conn, conn.cursor() as cur:
            with pytest.raises(pymysql.err.OperationalError, match="ADMIN"):
                cur.execute("CREATE EXTERNAL RESOURCE 'x' PROPERTIES ('type' = 'spark', 'spark.master' = 'a')")
            with pytest.raises(pymysql.err.OperationalError, match="ADMIN"):
                cur.execute("DROP RESOURCE 'keep'")
            cur.execute("SHOW RESOURCES")
            assert cur.fetchall() == ()
            with pytest.raises(pymysql.err.OperationalError,
                               match=r"USAGE denied to user 'plain'@'127.0.0.1' for resource 'keep'"):
                cur.execute(load.format("denied"))
            with pytest.raises(pymysql.err.OperationalError, match="GRANT"):  # no GRANT_PRIV to pass it on
                cur.execute("GRANT USAGE_PRIV ON RESOURCE 'keep' TO 'plain'@'%'")
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("GRANT USAGE_PRIV ON RESOURCE 'keep' TO 'plain'@'%'")
            cur.execute("SHOW GRANTS FOR 'plain'@'%'")
            row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
            assert row["ResourcePrivs"] == "keep: Usage_priv"
            assert row["DatabasePrivs"] == "internal.rdb: Select_priv,Load_priv"
            for sql, message in (
                    ("GRANT SELECT_PRIV ON RESOURCE 'keep' TO 'plain'@'%'",
                     "Can not grant/revoke SELECT_PRIV on resource to/from any other users or roles"),
                    ("GRANT USAGE_PRIV ON rdb.* TO 'plain'@'%'",
                     "Can not grant/revoke USAGE_PRIV to/from database or table"),
                    ("GRANT USAGE_PRIV ON RESOURCE 'keep' TO 'nobody'@'%'", "does not exist")):
                with pytest.raises(pymysql.err.OperationalError, match=message):
                    cur.execute(sql)
        with srv.connect(user="plain", password="pw") as conn, conn.cursor() as cur:
            cur.execute("SHOW RESOURCES")
            assert {r[0] for r in cur.fetchall()} == {"keep"}
            cur.execute("USE rdb")
            cur.execute(load.format("allowed"))
            job = wait_load(cur, "allowed")
            assert (job["State"], job["Type"]) == ("FINISHED", "SPARK"), job["ErrorMsg"]
            cur.execute("SELECT sum(v) FROM rdb.t")
            assert cur.fetchone() == (30,)
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("REVOKE USAGE_PRIV ON RESOURCE 'keep' FROM 'plain'@'%'")
            cur.execute("GRANT USAGE_PRIV ON RESOURCE * TO 'plain'@'%'")  # every resource: a global privilege
            cur.execute("SHOW GRANTS FOR 'plain'@'%'")
            row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
            assert (row["GlobalPrivs"], row["ResourcePrivs"]) == ("Usage_priv", None)
        with srv.connect(user="plain", password="pw") as conn, conn.cursor() as cur:
            cur.execute("SHOW RESOURCES")
            assert {r[0] for r in cur.fetchall()} == {"keep", "other"}
            cur.execute("SELECT 1 FROM rdb.t LIMIT 1")  # USAGE_PRIV gives no data access beyond what was granted
        srv.stop()
        srv.start()
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("SHOW RESOURCES")
            assert ("keep", "spark", "spark.master", "local[2]") in cur.fetchall()
    finally:
        srv.stop()

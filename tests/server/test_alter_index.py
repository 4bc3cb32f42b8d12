"""ADD / DROP INDEX, CREATE / DROP INDEX and ALTER TABLE SET bloom_filter_columns through the real server:
the statements and their errors, the schema-change job (SHOW ALTER TABLE COLUMN) that rewrites a table's
existing rowsets with the new index, answers unchanged, loads during the job counted once."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

from storage.segment.reader import SegmentReader
from storage.spark.tables import read_only_engine

DDL = """
CREATE TABLE {name} (k INT NOT NULL, c VARCHAR(20), d INT, f DOUBLE, v BIGINT {agg})
{keys} KEY(k{extra}) DISTRIBUTED BY HASH(k) BUCKETS 2
{rollup}
PROPERTIES ("replication_num" = "1")
"""

SHOW_COLUMNS = ["JobId", "TableName", "CreateTime", "FinishTime", "IndexName", "IndexId", "OriginIndexId",
                "SchemaVersion", "TransactionId", "State", "Msg", "Progress", "Timeout"]


def dup_table(cur, name: str = "t", rollup: str = "") -> None:
    cur.execute(DDL.format(name=name, agg="", keys="DUPLICATE", extra="", rollup=rollup))


def error(cur, sql: str) -> str:
    with pytest.raises(pymysql.MySQLError) as e:
        cur.execute(sql)
    return e.value.args[1].removeprefix("errCode = 2, detailMessage = ")


def wait_jobs(cur, table: str, timeout: float = 20) -> list[dict]:
    deadline = time.time() + timeout
    while True:
        cur.execute("SHOW ALTER TABLE COLUMN")
        names = [d[0] for d in cur.description]
        jobs = [dict(zip(names, r, strict=True)) for r in cur.fetchall() if r[1] == table]
        if jobs and all(j["State"] in ("FINISHED", "CANCELLED") for j in jobs):
            return jobs
        assert time.time() < deadline, jobs
        time.sleep(0.1)


def segment_metas(storage, db: str, table: str) -> list[dict]:
    """Footer column metas of every segment of every visible rowset (all indexes)."""
    engine = read_only_engine(storage)
    try:
        t = engine.catalog.get_table(db, table)
        out = []
        for tablet in engine.catalog.tablets(t.table_id):
            part = next(p for p in t.partitions if p.partition_id == tablet.partition_id)
            for rs in engine.catalog.rowsets(tablet.tablet_id, part.visible_version):
                for path in engine.segment_paths(rs):
                    out.append({m.name: m for m in SegmentReader(path).footer.columns})
        return out
    finally:
        engine.close()


def test_index_statements_and_errors(cur):
    dup_table(cur)
    cur.execute("CREATE TABLE a (k INT NOT NULL, c VARCHAR(20), v BIGINT SUM) AGGREGATE KEY(k, c) "
                "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    cur.execute("ALTER TABLE t ADD INDEX i_d (d) USING BITMAP COMMENT 'by d'")
    cur.execute("CREATE INDEX i_c ON t (c) USING BITMAP")
    cur.execute("CREATE INDEX IF NOT EXISTS i_c ON t (c) USING BITMAP")
    cur.execute("SHOW INDEX FROM t")
    assert [(r[2], r[4], r[10], r[11]) for r in cur.fetchall()] == [
        ("i_d", "d", "BITMAP", "by d"), ("i_c", "c", "BITMAP", "")]
    cur.execute("SHOW CREATE TABLE t")
    text = cur.fetchone()[1]
    assert "INDEX i_d (`d`) USING BITMAP COMMENT 'by d'" in text and "INDEX i_c (`c`) USING BITMAP" in text
    assert error(cur, "ALTER TABLE t ADD INDEX i_d (k) USING BITMAP") == "index name must be unique."
    assert error(cur, "CREATE INDEX i_c ON t (k) USING BITMAP") == "index name must be unique."
    assert error(cur, "ALTER TABLE t ADD INDEX i_x (nope) USING BITMAP") == \
        "Column does not exist in table. invalid column: nope"
    assert "is not supported in BITMAP index" in error(cur, "ALTER TABLE t ADD INDEX i_f (f) USING BITMAP")
    assert "key columns of AGG_KEYS table" in error(cur, "ALTER TABLE a ADD INDEX i_v (v) USING BITMAP")
    cur.execute("ALTER TABLE a ADD INDEX i_k (k) USING BITMAP")
    assert error(cur, "ALTER TABLE t DROP INDEX nope") == "index nope does not exist"
    assert error(cur, "DROP INDEX nope ON t") == "index nope does not exist"
    cur.execute("DROP INDEX IF EXISTS nope ON t")
    cur.execute("ALTER TABLE t DROP INDEX i_d")
    cur.execute("DROP INDEX i_c ON t")
    cur.execute("SHOW INDEX FROM t")
    assert cur.fetchall() == ()
    # bloom filter properties
    cur.execute('ALTER TABLE t SET ("bloom_filter_columns" = "c, d", "bloom_filter_fpp" = "0.01")')
    cur.execute("DESC t")
    extra = {r[0]: r[5] for r in cur.fetchall()}
    assert extra["c"] == "NONE,BLOOM_FILTER" and extra["d"] == "NONE,BLOOM_FILTER"
    cur.execute("SHOW CREATE TABLE t")
    text = cur.fetchone()[1]
    assert '"bloom_filter_columns" = "c, d"' in text and '"bloom_filter_fpp" = "0.01"' in text
    assert "does not exist in table" in error(cur, 'ALTER TABLE t SET ("bloom_filter_columns" = "zz")')
    assert "DOUBLE is not supported in bloom filter index" in error(
        cur, 'ALTER TABLE t SET ("bloom_filter_columns" = "f")')
    assert error(cur, 'ALTER TABLE t SET ("bloom_filter_fpp" = "0.5")') == \
        "Bloom filter fpp should in [1.0E-4, 0.05]"
    assert "AGG_KEYS" in error(cur, 'ALTER TABLE a SET ("bloom_filter_columns" = "v")')
    cur.execute('ALTER TABLE t SET ("bloom_filter_columns" = "")')
    cur.execute("SHOW CREATE TABLE t")
    assert "bloom_filter" not in cur.fetchone()[1]
    # empty tables change at once: no job
    cur.execute("SHOW ALTER TABLE COLUMN")
    assert [d[0] for d in cur.description] == SHOW_COLUMNS and cur.fetchall() == ()


def test_add_index_rewrites_existing_data(server, db, cur):
    dup_table(cur, rollup="ROLLUP (r_dc (d, c, v))")
    values = ",".join(f"({i}, 'c{i % 50}', {i % 30}, {i / 7}, {i * 3})" for i in range(2000))
    cur.execute(f"INSERT INTO t VALUES {values}")
    cur.execute(f"INSERT INTO t VALUES {values}")
    cur.execute("SELECT d, count(*), sum(v) FROM t GROUP BY d ORDER BY d")
    before = cur.fetchall()
    assert all(m["d"].bitmap_index is None for m in segment_metas(server.storage, db, "t"))

    # loads go on while the job runs: every one is counted once
    stop = threading.Event()
    loaded = []

    def load() -> None:
        with server.connect(db) as conn, conn.cursor() as c:
            n = 0
            while not stop.is_set() and n < 20:
                c.execute(f"INSERT INTO t VALUES ({100000 + n}, 'x', 7, 1.0, 1)")
                loaded.append(n)
                n += 1

    thread = threading.Thread(target=load)
    thread.start()
    cur.execute("ALTER TABLE t ADD INDEX i_d (d) USING BITMAP")
    cur.execute("SHOW INDEX FROM t")  # the definition shows at once
    assert [r[2] for r in cur.fetchall()] == ["i_d"]
    (job,) = wait_jobs(cur, "t")
    stop.set()
    thread.join()
    assert job["State"] == "FINISHED", job
    assert job["IndexName"] == "t" and job["Timeout"] == "86400"
    metas = segment_metas(server.storage, db, "t")
    assert metas and all(m["d"].bitmap_index is not None for m in metas)
    cur.execute("SELECT d, count(*), sum(v) FROM t WHERE k < 100000 GROUP BY d ORDER BY d")
    assert cur.fetchall() == before
    cur.execute("SELECT count(*), sum(v) FROM t WHERE k >= 100000")
    assert tuple(cur.fetchone()) == (len(loaded), len(loaded))
    cur.execute("SELECT count(*) FROM t WHERE d = 7")
    assert cur.fetchone()[0] == 2 * sum(1 for i in range(2000) if i % 30 == 7) + len(loaded)

    # one ALTER at a time is not violated afterwards; a bloom filter change is a job too
    cur.execute('ALTER TABLE t SET ("bloom_filter_columns" = "c")')
    jobs = wait_jobs(cur, "t")
    assert [j["State"] for j in jobs] == ["FINISHED", "FINISHED"]
    metas = segment_metas(server.storage, db, "t")
    assert all(m["c"].bloom_filter is not None for m in metas)
    cur.execute("SELECT count(*) FROM t WHERE c = 'c7'")
    assert cur.fetchone()[0] == 2 * sum(1 for i in range(2000) if i % 50 == 7)

    # DROP INDEX is immediate; answers stay exact
    cur.execute("ALTER TABLE t DROP INDEX i_d")
    cur.execute("SHOW INDEX FROM t")
    assert cur.fetchall() == ()
    cur.execute("SELECT count(*) FROM t WHERE d = 7")
    assert cur.fetchone()[0] == 2 * sum(1 for i in range(2000) if i % 30 == 7) + len(loaded)
    cur.execute("INSERT INTO t VALUES (200000, 'y', 7, 1.0, 1)")
    assert len(wait_jobs(cur, "t")) == 2


def test_cancel_alter_table_column(cur):
    dup_table(cur)
    assert "NORMAL" in error(cur, "CANCEL ALTER TABLE COLUMN FROM t")


# -- paused scheduler: restart in the middle of a job, CANCEL restores the definition ----------------------

def test_index_job_survives_a_restart_and_cancel_restores_the_definition(tmp_path) -> None:
    from tests.conftest import free_port
    from tests.server.test_rollup import ConfServer, _conf

    srv = ConfServer(free_port(), tmp_path / "data")
    srv.conf = _conf(tmp_path / "paused", scheduler=False)
    srv.start()
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE d1")
            cur.execute("USE d1")
            for name in ("t", "u"):
                dup_table(cur, name)
                cur.execute(f"INSERT INTO {name} VALUES (1, 'a', 1, 1.0, 10), (2, 'b', 2, 2.0, 20)")
                cur.execute(f"ALTER TABLE {name} ADD INDEX idx_d (d) USING BITMAP")
            cur.execute("CANCEL ALTER TABLE COLUMN FROM u")
            cur.execute("SHOW INDEX FROM u")
            assert cur.fetchall() == ()  # the cancelled index is gone from the definition
            cur.execute("SHOW ALTER TABLE COLUMN")
            assert sorted((r[1], r[9]) for r in cur.fetchall()) == [("t", "PENDING"), ("u", "CANCELLED")]
    finally:
        srv.stop()
    srv.conf = _conf(tmp_path / "running", scheduler=True)
    srv.start()  # the PENDING job of t resumes after the restart and finishes
    try:
        with srv.connect("d1") as conn, conn.cursor() as cur:
            [job] = wait_jobs(cur, "t")
            assert job["State"] == "FINISHED"
            assert all(m["d"].bitmap_index is not None for m in segment_metas(srv.storage, "d1", "t"))
            cur.execute("SELECT k FROM t WHERE d = 2")
            assert cur.fetchall() == ((2,),)
    finally:
        srv.stop()

"""Where an INSERT ... SELECT runs (issue 15): a small input in-process, as INSERT VALUES; a larger one on Spark,
which the server starts in the background at startup (fe.conf spark_prestart) so the first load does not wait
for its JVM."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from tests.conftest import ServerProcess, free_port

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


def _spark_started(srv: ServerProcess) -> bool:
    assert srv.log is not None
    return "Spark started" in srv.log.read_text()


def test_a_small_insert_select_runs_in_process(tmp_path: Path) -> None:
    srv = ServerProcess(free_port(), tmp_path / "data",
                        fe_overrides={"spark_prestart": "false", "insert_spark_threshold_mb": "64"}).start()
    try:
        csv = tmp_path / "in.csv"
        csv.write_text("".join(f"{i},{i * 2}\n" for i in range(1000)))
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE d")
            cur.execute("USE d")
            cur.execute(f"CREATE TABLE a (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
            cur.execute(f"CREATE TABLE b (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
            started = time.monotonic()
            cur.execute(f"INSERT INTO a SELECT * FROM local('file_path' = '{csv}', 'format' = 'csv', "
                        "'column_separator' = ',', 'csv_schema' = 'k:int;v:int')")
            cur.execute("INSERT INTO b SELECT k, v + 1 FROM a WHERE k < 10")
            elapsed = time.monotonic() - started
            cur.execute("SELECT count(*), sum(v) FROM a")
            assert cur.fetchone() == (1000, 999000)
            cur.execute("SELECT sum(v) FROM b")
            assert cur.fetchone() == (100,)
            cur.execute("SHOW LOAD")
            jobs = cur.fetchall()
            assert [r[2] for r in jobs] == ["FINISHED", "FINISHED"]
            details = json.loads(jobs[0][14])  # JobDetails: the file the first load read
            assert (details["FileNumber"], details["FileSize"]) == (1, csv.stat().st_size)
        assert not _spark_started(srv), "a small INSERT ... SELECT started Spark"
        assert elapsed < 30  # generous: in-process it is well under a second; Spark's start alone takes longer
    finally:
        srv.stop()


def test_spark_starts_in_the_background_at_startup(tmp_path: Path) -> None:
    srv = ServerProcess(free_port(), tmp_path / "data",
                        fe_overrides={"spark_prestart": "true", "insert_spark_threshold_mb": "0"}).start()
    try:
        with srv.connect() as conn, conn.cursor() as cur:  # the server answers while Spark starts
            cur.execute("SELECT 1")
            assert cur.fetchone() == (1,)
        deadline = time.monotonic() + 180
        while not _spark_started(srv) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _spark_started(srv)
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE d")
            cur.execute("USE d")
            cur.execute(f"CREATE TABLE a (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
            cur.execute("INSERT INTO a VALUES (1, 2), (3, 4)")
            cur.execute(f"CREATE TABLE b (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
            cur.execute("INSERT INTO b SELECT * FROM a")  # on Spark (threshold 0), already up
            cur.execute("SELECT sum(v) FROM b")
            assert cur.fetchone() == (6,)
        assert srv.log is not None and srv.log.read_text().count("Spark started") == 1
    finally:
        srv.stop()


@pytest.fixture
def both_paths(tmp_path: Path, server) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """A server that runs small INSERT ... SELECTs in-process, and the shared test server, which runs them on
    Spark."""
    local = ServerProcess(free_port(), tmp_path / "data",
                          fe_overrides={"spark_prestart": "false", "insert_spark_threshold_mb": "64"}).start()
    yield local, server
    local.stop()


def test_typed_csv_values_that_do_not_convert(tmp_path: Path, both_paths) -> None:
    """A csv_schema-typed value that does not convert ('abc' as INT) fails a strict INSERT, in-process and on
    Spark, as Doris's strict mode refuses the row; a non-strict one loads it as NULL."""
    csv = tmp_path / "typed.csv"
    csv.write_text("1,3.00\nabc,4.00\n")
    select = (f"SELECT * FROM local('file_path' = '{csv}', 'format' = 'csv', 'column_separator' = ',', "
              "'csv_schema' = 'id:int;amount:decimal(10,2)')")
    for srv in both_paths:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS typed_csv")
            cur.execute("USE typed_csv")
            cur.execute("DROP TABLE IF EXISTS t")
            cur.execute("CREATE TABLE t (id INT, amount DECIMAL(10, 2)) DUPLICATE KEY(id) DISTRIBUTED BY "
                        "HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
            with pytest.raises(pymysql.err.OperationalError, match=r"column\(id\) value is incorrect: 'abc'"):
                cur.execute(f"INSERT INTO t {select}")
            cur.execute("SELECT count(*) FROM t")
            assert cur.fetchone() == (0,)
            cur.execute("SET enable_insert_strict = false")
            cur.execute(f"INSERT INTO t {select}")
            cur.execute("SELECT id, amount FROM t ORDER BY amount")
            assert [(i, str(a)) for i, a in cur.fetchall()] == [(1, "3.00"), (None, "4.00")]
            cur.execute("DROP DATABASE typed_csv")


def test_max_filter_ratio_bounds_a_non_strict_insert_on_both_paths(both_paths) -> None:
    """insert_max_filter_ratio limits the share of rows a non-strict INSERT ... SELECT may filter, in-process and
    on Spark alike (Doris: `Insert has too many filtered data`)."""
    for srv in both_paths:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS ratio")
            cur.execute("USE ratio")
            cur.execute("DROP TABLE IF EXISTS src")
            cur.execute("DROP TABLE IF EXISTS t")
            cur.execute(f"CREATE TABLE src (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
            cur.execute(f"CREATE TABLE t (k INT NOT NULL, v INT) DUPLICATE KEY(k) {PROPS}")
            cur.execute("INSERT INTO src VALUES " + ", ".join(
                f"({'NULL' if i % 2 else i}, {i})" for i in range(10)))
            cur.execute("SET enable_insert_strict = false")
            cur.execute("SET insert_max_filter_ratio = 0.1")
            with pytest.raises(pymysql.err.OperationalError, match=r"too many filtered data 5/10"):
                cur.execute("INSERT INTO t SELECT k, v FROM src")
            cur.execute("SELECT count(*) FROM t")
            assert cur.fetchone() == (0,)
            cur.execute("SET insert_max_filter_ratio = 0.6")
            cur.execute("INSERT INTO t SELECT k, v FROM src")
            cur.execute("SELECT count(*), sum(v) FROM t")
            assert cur.fetchone() == (5, 20)
            cur.execute("DROP DATABASE ratio")

"""Schema changes that rewrite the rows (issue 13): MODIFY COLUMN to a type the old rows cannot be read as,
dropping or moving a key column, ORDER BY over keys. The statement returns at once; a job (SHOW ALTER TABLE
COLUMN) converts every changed index and swaps it in; queries answer from the old schema until then, loads
during the job land once, CANCEL ALTER TABLE COLUMN undoes it, a value that does not convert cancels it."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

from tests.server.test_alter_index import wait_jobs
from tests.server.test_schema_change import PROPS, error, rows


def numbers(cur, n: int) -> str:
    """A query of the numbers 0 .. n-1 (column `number`), n <= 1,000,000."""
    cur.execute(f"CREATE TABLE IF NOT EXISTS digits (x INT) DUPLICATE KEY(x) DISTRIBUTED BY HASH(x) BUCKETS 1 {PROPS}")
    if rows(cur, "SELECT count(*) FROM digits") == [(0,)]:
        cur.execute("INSERT INTO digits VALUES " + ", ".join(f"({i})" for i in range(1000)))
    return f"(SELECT a.x * 1000 + b.x AS number FROM digits a CROSS JOIN digits b WHERE a.x * 1000 + b.x < {n}) n"


def finished(cur, table: str) -> dict:
    job = wait_jobs(cur, table)[-1]
    assert job["State"] == "FINISHED", job
    return job


@pytest.mark.parametrize("model, keys, agg", [("DUPLICATE", "DUPLICATE KEY(k, s)", ""),
                                              ("AGGREGATE", "AGGREGATE KEY(k, s)", " SUM"),
                                              ("UNIQUE", "UNIQUE KEY(k, s)", "")])
def test_key_type_change_per_model(cur, model: str, keys: str, agg: str) -> None:
    cur.execute(f"CREATE TABLE m (k INT, s VARCHAR(10), v BIGINT{agg}) {keys} DISTRIBUTED BY HASH(k) BUCKETS 2 "
                f"{PROPS}")
    cur.execute("INSERT INTO m VALUES (1, '10', 1), (1, '9', 2), (2, '100', 3)")
    cur.execute("INSERT INTO m VALUES (1, '9', 4)")
    cur.execute("ALTER TABLE m MODIFY COLUMN s BIGINT KEY")
    job = finished(cur, "m")
    assert job["IndexName"] == "m" and job["IndexId"] != job["OriginIndexId"]
    nine = {"DUPLICATE": [(1, 9, 2), (1, 9, 4)], "AGGREGATE": [(1, 9, 6)], "UNIQUE": [(1, 9, 4)]}[model]
    assert rows(cur, "SELECT * FROM m ORDER BY k, s, v") == [*nine, (1, 10, 1), (2, 100, 3)]
    cur.execute("DESC m")
    assert [r[1] for r in cur.fetchall()] == ["INT", "BIGINT", "BIGINT"]
    assert rows(cur, "SELECT k FROM m WHERE s > 9 ORDER BY k") == [(1,), (2,)]  # numeric now, not text
    cur.execute("INSERT INTO m VALUES (3, 30, 5)")
    assert rows(cur, "SELECT count(*) FROM m") == [(len(nine) + 3,)]


def test_drop_and_reorder_key_columns(cur) -> None:
    cur.execute(f"CREATE TABLE d (a INT, b INT, c INT, v INT) DUPLICATE KEY(a, b, c) DISTRIBUTED BY HASH(a) "
                f"BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO d VALUES (1, 3, 2, 10), (1, 1, 3, 20), (2, 2, 1, 30)")
    cur.execute("ALTER TABLE d ORDER BY (a, c, b, v)")
    finished(cur, "d")
    cur.execute("SHOW CREATE TABLE d")
    assert "DUPLICATE KEY(`a`, `c`, `b`)" in cur.fetchone()[1]
    assert rows(cur, "SELECT * FROM d") == [(1, 2, 3, 10), (1, 3, 1, 20), (2, 1, 2, 30)]  # stored in the new order
    cur.execute("ALTER TABLE d DROP COLUMN c")
    finished(cur, "d")
    assert rows(cur, "SELECT * FROM d ORDER BY a, b") == [(1, 1, 20), (1, 3, 10), (2, 2, 30)]
    cur.execute("INSERT INTO d VALUES (3, 3, 3)")
    assert rows(cur, "SELECT sum(v) FROM d") == [(63,)]


def test_value_conversions_and_rollups(cur) -> None:
    cur.execute(f"CREATE TABLE r (k INT, d DATETIME, s VARCHAR(20), v INT SUM) AGGREGATE KEY(k, d, s) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 2 ROLLUP (r_s (s, v)) {PROPS}")
    cur.execute("INSERT INTO r VALUES (1, '2024-01-02 10:00:00', '5', 1), (1, '2024-01-02 11:00:00', '5', 2), "
                "(2, '2024-02-03 00:00:00', '40', 3)")
    cur.execute("ALTER TABLE r MODIFY COLUMN d DATE KEY, MODIFY COLUMN s INT KEY")
    jobs = wait_jobs(cur, "r")
    assert {(j["IndexName"], j["State"]) for j in jobs} == {("r", "FINISHED"), ("r_s", "FINISHED")}
    assert rows(cur, "SELECT k, CAST(d AS CHAR), s, v FROM r ORDER BY k") == [(1, "2024-01-02", 5, 3),
                                                                             (2, "2024-02-03", 40, 3)]
    cur.execute("EXPLAIN SELECT s, sum(v) FROM r GROUP BY s")
    assert "r_s" in "\n".join(r[0] for r in cur.fetchall())
    assert rows(cur, "SELECT s, sum(v) FROM r GROUP BY s ORDER BY s") == [(5, 3), (40, 3)]


def test_errors(cur) -> None:
    cur.execute(f"CREATE TABLE e (k INT, p DATE, s VARCHAR(10), dt DATETIME) DUPLICATE KEY(k) "
                f"PARTITION BY RANGE(p) (PARTITION p1 VALUES LESS THAN ('2030-01-01')) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    assert error(cur, "ALTER TABLE e MODIFY COLUMN k BIGINT KEY") == \
        "errCode = 2, detailMessage = Can not modify distribution column[k]. index[e]"
    assert error(cur, "ALTER TABLE e MODIFY COLUMN p DATETIME") == \
        "errCode = 2, detailMessage = Can not modify partition column[p]. index[e]"
    assert error(cur, "ALTER TABLE e MODIFY COLUMN dt INT") == \
        "errCode = 2, detailMessage = Can not change DATETIME to INT"
    assert error(cur, "ALTER TABLE e MODIFY COLUMN s DATETIME") == \
        "errCode = 2, detailMessage = Can not change VARCHAR(10) to DATETIME"
    assert "rename" in error(cur, "ALTER TABLE e MODIFY COLUMN s INT, RENAME COLUMN dt dt2").lower()


def test_value_that_does_not_convert_cancels_the_job(cur) -> None:
    cur.execute(f"CREATE TABLE bad (k INT, s VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO bad VALUES (1, '12'), (2, 'abc')")
    cur.execute("ALTER TABLE bad MODIFY COLUMN s INT")
    [job] = wait_jobs(cur, "bad")
    assert job["State"] == "CANCELLED"
    assert "Failed to convert column 's' from VARCHAR(10) to INT: value 'abc'" in job["Msg"]
    assert rows(cur, "SELECT * FROM bad ORDER BY k") == [(1, "12"), (2, "abc")]
    cur.execute("ALTER TABLE bad ADD COLUMN n INT DEFAULT '1'")  # the table is NORMAL again
    assert rows(cur, "SELECT n FROM bad") == [(1,), (1,)]


def test_cancel_and_busy_table(server, db, cur) -> None:
    cur.execute(f"CREATE TABLE big (k INT, s VARCHAR(12), v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8 "
                f"{PROPS}")
    cur.execute(f"INSERT INTO big SELECT number, CAST(number AS VARCHAR), 1 FROM {numbers(cur, 200000)}")
    cur.execute("ALTER TABLE big MODIFY COLUMN s BIGINT")
    try:
        cur.execute("ALTER TABLE big ADD COLUMN x INT")
        busy = ""
    except pymysql.err.MySQLError as e:
        busy = e.args[1]
    assert busy in ("", "errCode = 2, detailMessage = Table[big]'s state(SCHEMA_CHANGE) is not NORMAL. Do not "
                        "allow doing ALTER ops")
    if busy:
        cur.execute("CANCEL ALTER TABLE COLUMN FROM big")
    [job] = wait_jobs(cur, "big")
    if job["State"] == "CANCELLED":
        cur.execute("DESC big")
        assert [r[1] for r in cur.fetchall()] == ["INT", "VARCHAR(12)", "INT"]
    assert rows(cur, "SELECT count(*), sum(v) FROM big") == [(200000, 200000)]


def test_loads_and_queries_during_the_job(server, db, cur) -> None:
    cur.execute(f"CREATE TABLE live (k INT, s VARCHAR(12), v INT) DUPLICATE KEY(k, s) DISTRIBUTED BY HASH(k) "
                f"BUCKETS 4 {PROPS}")
    cur.execute(f"INSERT INTO live SELECT number, CAST(number AS VARCHAR), 1 FROM {numbers(cur, 300000)}")
    stop = threading.Event()
    loaded: list[int] = []
    failures: list[str] = []

    def loader() -> None:
        conn = server.connect(db)
        with conn.cursor() as c:
            i = 0
            while not stop.is_set():
                try:
                    c.execute(f"INSERT INTO live VALUES ({1000000 + i}, '{i}', 1)")
                    loaded.append(i)
                except pymysql.err.MySQLError as e:  # a load the swap overtook is refused whole, never half
                    failures.append(str(e))
                i += 1
                c.execute("SELECT count(*) FROM live")
        conn.close()

    thread = threading.Thread(target=loader)
    thread.start()
    time.sleep(0.3)
    cur.execute("ALTER TABLE live MODIFY COLUMN s BIGINT KEY")
    finished(cur, "live")
    time.sleep(0.3)
    stop.set()
    thread.join()
    assert all("load again" in f for f in failures), failures
    assert rows(cur, "SELECT count(*), sum(v) FROM live") == [(300000 + len(loaded), 300000 + len(loaded))]
    assert rows(cur, "SELECT count(*) FROM live WHERE s >= 0") == [(300000 + len(loaded),)]


def test_delete_refused_while_rewriting(cur) -> None:
    cur.execute(f"CREATE TABLE dl (k INT, s VARCHAR(12)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8 {PROPS}")
    cur.execute(f"INSERT INTO dl SELECT number, CAST(number AS VARCHAR) FROM {numbers(cur, 300000)}")
    cur.execute("ALTER TABLE dl MODIFY COLUMN s BIGINT")
    try:
        cur.execute("DELETE FROM dl WHERE k = 1")
        deleted = True
    except pymysql.err.MySQLError as e:
        assert e.args[1] == "errCode = 2, detailMessage = Table's state is not normal: dl"
        deleted = False
    finished(cur, "dl")
    assert rows(cur, "SELECT count(*) FROM dl") == [(300000 - deleted,)]

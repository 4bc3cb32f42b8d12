"""Restarts keep everything; a SIGKILL during a stream of INSERTs loses no acknowledged row and exposes
no partial INSERT."""

from __future__ import annotations

import signal
import threading
import time

import pymysql

ROWS_PER_BATCH = 25


def test_restart_keeps_databases_tables_rows_and_properties(fresh_server) -> None:
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE keep_db")
        cur.execute("USE keep_db")
        cur.execute("""CREATE TABLE t (k INT NOT NULL, d DATE, v DECIMAL(10, 2) SUM DEFAULT "0")
                       AGGREGATE KEY(k, d) DISTRIBUTED BY HASH(k) BUCKETS 4
                       PROPERTIES ("replication_num" = "1", "light_schema_change" = "true")""")
        cur.execute("INSERT INTO t VALUES (1, '2024-01-01', 1.50), (2, '2024-01-02', 2.25), (1, '2024-01-01', 1)")
        cur.execute("SHOW CREATE TABLE t")
        create_before = cur.fetchone()[1]
    fresh_server.stop(signal.SIGTERM)
    fresh_server.start()
    with fresh_server.connect("keep_db") as conn, conn.cursor() as cur:
        cur.execute("SHOW DATABASES")
        assert ("keep_db",) in cur.fetchall()
        cur.execute("SHOW CREATE TABLE t")
        assert cur.fetchone()[1] == create_before
        cur.execute("SELECT k, d, v FROM t ORDER BY k")
        rows = cur.fetchall()
        assert [(r[0], str(r[1]), str(r[2])) for r in rows] == [(1, "2024-01-01", "2.50"), (2, "2024-01-02", "2.25")]


def test_sigkill_during_insert_stream_loses_nothing_acknowledged(fresh_server) -> None:
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE crash_db")
        cur.execute("""CREATE TABLE crash_db.s (batch INT NOT NULL, i INT NOT NULL, payload VARCHAR(64))
                       DUPLICATE KEY(batch, i) DISTRIBUTED BY HASH(i) BUCKETS 3
                       PROPERTIES ("replication_num" = "1")""")

    acked: list[int] = []
    in_flight: list[int] = []

    def stream() -> None:
        try:
            conn = fresh_server.connect("crash_db")
            with conn.cursor() as cur:
                for batch in range(10_000):
                    in_flight.append(batch)
                    values = ", ".join(f"({batch}, {i}, 'p{batch}_{i}')" for i in range(ROWS_PER_BATCH))
                    cur.execute(f"INSERT INTO s VALUES {values}")
                    acked.append(batch)
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError, ConnectionError, OSError):
            return

    writer = threading.Thread(target=stream, daemon=True)
    writer.start()
    deadline = time.monotonic() + 60
    while len(acked) < 15 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(acked) >= 15, "the insert stream did not get going"
    fresh_server.stop(signal.SIGKILL)
    writer.join(10)

    fresh_server.start()
    with fresh_server.connect("crash_db") as conn, conn.cursor() as cur:
        cur.execute("SELECT batch, count(*) FROM s GROUP BY batch")
        counts = dict(cur.fetchall())
    for batch in acked:
        assert counts.get(batch) == ROWS_PER_BATCH, f"acknowledged batch {batch} lost rows: {counts.get(batch)}"
    unacked = set(counts) - set(acked)
    assert unacked <= {in_flight[-1]}, f"unknown batches visible: {unacked}"
    for batch in unacked:
        assert counts[batch] == ROWS_PER_BATCH, "a partial INSERT became visible"

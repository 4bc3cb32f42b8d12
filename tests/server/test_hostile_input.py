"""Statements and clients that ask for too much (issue 14): each gets an ERR packet with Doris's message and the
server stays up for everyone else."""

from __future__ import annotations

import socket
import time

import pymysql
import pytest

PROPS = "PROPERTIES ('replication_num' = '1')"


def _err(cur, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute(sql)
    return info.value.args[0], info.value.args[1]


def test_buckets_are_bounded_before_any_work(cur) -> None:
    code, message = _err(cur, "CREATE TABLE b (k INT) DISTRIBUTED BY HASH(k) BUCKETS 2147483647")
    assert code == 1105 and "exceeds the maximum allowed value (768)" in message
    assert "max_bucket_num_per_partition" in message
    cur.execute(f"CREATE TABLE p (k INT, d DATE) DUPLICATE KEY(k) PARTITION BY RANGE(d) () "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    assert "exceeds the maximum" in _err(cur, "ALTER TABLE p ADD PARTITION p1 VALUES LESS THAN ('2020-01-01') "
                                             "DISTRIBUTED BY HASH(k) BUCKETS 100000")[1]
    assert "exceeds the maximum" in _err(cur, "ALTER TABLE p MODIFY DISTRIBUTION DISTRIBUTED BY HASH(k) "
                                             "BUCKETS 5000")[1]
    cur.execute("SELECT 1")


def test_thousands_of_listed_partitions(cur) -> None:
    parts = ", ".join(f"PARTITION p{i} VALUES LESS THAN ('{i * 10}')" for i in range(1, 3001))
    cur.execute(f"CREATE TABLE many (k INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) ({parts}) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("SHOW PARTITIONS FROM many WHERE PartitionName = 'p3000'")
    assert cur.fetchone()[1] == "p3000"
    overlapping = "PARTITION a VALUES [('0'), ('10')), PARTITION b VALUES [('5'), ('20'))"
    assert "is intersected with range" in _err(cur, f"CREATE TABLE bad (k INT) DUPLICATE KEY(k) PARTITION BY "
                                                     f"RANGE(k) ({overlapping}) DISTRIBUTED BY HASH(k) BUCKETS 1")[1]


def test_max_allowed_packet_is_applied(server) -> None:
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("SET GLOBAL max_allowed_packet = 1048576")
    try:
        big = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                              max_allowed_packet=64 * 1024 * 1024)
        with pytest.raises(pymysql.err.OperationalError) as info:
            big.cursor().execute("SELECT '" + "x" * (2 * 1024 * 1024) + "'")
        assert info.value.args[0] == 1153
    finally:
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("SET GLOBAL max_allowed_packet = 16777216")
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT 1")


def test_sockets_that_never_log_in_cannot_lock_users_out(fresh_server) -> None:
    idle = []
    for _ in range(80):  # until the cap answers (the start-up probe's socket may still count for a moment)
        s = socket.create_connection(("127.0.0.1", fresh_server.port))
        s.settimeout(10)
        idle.append(s)
        packet = s.recv(5)
        if packet[4:5] == b"\xff":  # an ERR packet in place of the greeting: Too many connections
            break
    else:
        raise AssertionError("80 sockets that never log in were all greeted")
    assert len(idle) <= 66
    try:
        with pytest.raises(pymysql.err.OperationalError) as info:
            fresh_server.connect()
        assert info.value.args[0] == 1040
    finally:
        for s in idle:
            s.close()
    for _ in range(50):
        try:
            with fresh_server.connect() as conn, conn.cursor() as cur:
                cur.execute("SELECT 1")
                assert cur.fetchone() == (1,)
            break
        except pymysql.err.OperationalError:
            time.sleep(0.1)  # the closed sockets are noticed as their reads end
    else:
        raise AssertionError("logins stayed refused after the idle sockets closed")

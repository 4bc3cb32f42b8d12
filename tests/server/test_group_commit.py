"""Group commit (issue 18): concurrent small INSERT ... VALUES (and Stream Loads with the group_commit header) into
one table share one transaction per interval; async_mode answers once the rows are in the write-ahead log, which a
restart after kill -9 loads exactly once; sync_mode answers once they are visible."""

from __future__ import annotations

import base64
import concurrent.futures
import http.client
import json
import re
import signal
import time
from pathlib import Path

import pymysql
import pytest

from tests.conftest import ServerProcess, free_port


def _table(cur, name: str, interval_ms: int) -> None:
    cur.execute(f"CREATE TABLE {name} (k INT NOT NULL, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                f"PROPERTIES ('replication_num' = '1', 'group_commit_interval_ms' = '{interval_ms}')")


def _info(cur) -> dict[str, str]:
    text = cur._result.message.decode()  # the OK packet's info, as the mysql client prints it
    return dict(re.findall(r"'(\w+)':'([^']*)'", text))


def test_async_and_sync_modes(server, cur, db) -> None:
    _table(cur, "g", 800)
    cur.execute("SET group_commit = async_mode")
    cur.execute("INSERT INTO g VALUES (1, 10), (2, 20)")
    info = _info(cur)
    assert info["status"] == "PREPARE" and info["label"].startswith("group_commit_") and int(info["txnId"]) > 0
    assert cur.rowcount == 2
    deadline = time.monotonic() + 10
    while True:  # visible once the batch's interval ends
        cur.execute("SELECT count(*), sum(v) FROM g")
        got = cur.fetchone()
        if got == (2, 30) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert got == (2, 30)
    cur.execute("SET group_commit = sync_mode")
    cur.execute("INSERT INTO g VALUES (3, 30)")
    assert _info(cur)["status"] == "VISIBLE"
    cur.execute("SELECT count(*) FROM g")
    assert cur.fetchone() == (3,)
    # a row that does not fit fails its own statement only
    with pytest.raises(pymysql.err.OperationalError, match="not nullable"):
        cur.execute("INSERT INTO g VALUES (NULL, 1)")
    # a labelled INSERT keeps its own transaction
    cur.execute("INSERT INTO g WITH LABEL own_label VALUES (4, 40)")
    assert _info(cur) == {"label": "own_label", "status": "VISIBLE", "txnId": _info(cur)["txnId"]}
    with pytest.raises(pymysql.err.OperationalError, match="group_commit"):
        cur.execute("SET group_commit = sometimes")
    cur.execute("SET group_commit = off_mode")
    cur.execute("INSERT INTO g VALUES (5, 50)")
    assert not _info(cur)["label"].startswith("group_commit_")


def test_concurrent_inserts_share_transactions(server, db) -> None:
    with server.connect(db) as conn, conn.cursor() as cur:
        _table(cur, "many", 300)

    def insert(i: int) -> str:
        with server.connect(db) as conn, conn.cursor() as cur:
            cur.execute("SET group_commit = sync_mode")
            cur.execute(f"INSERT INTO many VALUES ({i}, {i}), ({i + 1000}, {i})")
            info = _info(cur)
            assert info["status"] == "VISIBLE"
            return info["txnId"]

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        txns = list(pool.map(insert, range(64)))
    assert len(set(txns)) < 64 / 4  # batched: a few transactions for 64 statements
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*), count(DISTINCT k), sum(v) FROM many")
        assert cur.fetchone() == (128, 128, 2 * sum(range(64)))


def test_acknowledged_async_rows_survive_kill_9(tmp_path: Path) -> None:
    srv = ServerProcess(free_port(), tmp_path / "data").start()
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE w")
            cur.execute("USE w")
            _table(cur, "t", 600000)  # a batch that would wait ten minutes
            cur.execute("SET group_commit = async_mode")
            for i in range(5):
                cur.execute(f"INSERT INTO t VALUES ({i}, {i})")
                assert _info(cur)["status"] == "PREPARE"
            cur.execute("SELECT count(*) FROM t")
            assert cur.fetchone() == (0,)
        srv.stop(signal.SIGKILL)
        for _ in range(2):  # loaded at the first start, and not again at the next
            srv.start()
            with srv.connect("w") as conn, conn.cursor() as cur:
                cur.execute("SELECT count(*), count(DISTINCT k), sum(v) FROM t")
                assert cur.fetchone() == (5, 5, 10)
            srv.stop()
        assert not list((tmp_path / "data" / "wal").rglob("*.arrow"))
    finally:
        srv.stop()


def test_stream_load_with_the_group_commit_header(server, cur, db) -> None:
    _table(cur, "s", 500)
    auth = "Basic " + base64.b64encode(b"root:").decode()
    replies = []
    for body in (b"1,1\n2,2\n", b"3,3\n"):
        conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=60)
        conn.request("PUT", f"/api/{db}/s/_stream_load", body=body,
                     headers={"Authorization": auth, "column_separator": ",", "group_commit": "sync_mode"})
        replies.append(json.loads(conn.getresponse().read()))
        conn.close()
    for reply in replies:
        assert reply["Status"] == "Success" and reply["GroupCommit"] is True, reply
        assert reply["Label"].startswith("group_commit_") and reply["TxnId"] > 0
    cur.execute("SELECT count(*), sum(v) FROM s")
    assert cur.fetchone() == (3, 6)


def test_log_keeps_every_acknowledged_record_and_stops_at_a_torn_one(tmp_path: Path) -> None:
    import pyarrow as pa

    from server.loads.group_commit import _Log, _records

    schema = pa.schema([("k", pa.int32()), ("v", pa.int32())])
    path = tmp_path / "wal" / "7" / "group_commit_x.arrow"
    wal = _Log(path, schema)

    def append(i: int) -> None:
        wal.append(pa.table({"k": pa.array([i, i + 100], pa.int32()), "v": pa.array([i, i], pa.int32())}))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:  # appends share fsyncs; none is lost
        list(pool.map(append, range(40)))
    assert wal.durable == wal.appended == 40
    wal.close()
    records = _records(path)
    assert sorted(k for r in records for k in r.column("k").to_pylist()) == sorted(
        [i for i in range(40)] + [i + 100 for i in range(40)])
    size = path.stat().st_size
    with path.open("r+b") as f:  # a crash in the middle of the last record
        f.truncate(size - 7)
    assert len(_records(path)) == 39

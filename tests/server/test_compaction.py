"""Compaction through the server (issue 7): the HTTP API's JSON and errors, SHOW TABLETS, the producer and
the table property disable_auto_compaction, -235, and the same query answers before and after."""

from __future__ import annotations

import base64
import json
import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from tests.conftest import ROOT, ServerProcess, free_port, own_database

SHOW_TABLETS_COLUMNS = [
    "TabletId", "ReplicaId", "BackendId", "SchemaHash", "Version", "LstSuccessVersion", "LstFailedVersion",
    "LstFailedTime", "LocalDataSize", "RemoteDataSize", "RowCount", "State", "LstConsistencyCheckTime",
    "CheckVersion", "VersionCount", "QueryHits", "PathHash", "Path", "MetaUrl", "CompactionStatus",
    "CooldownReplicaId", "CooldownMetaId",
]
TABLE = ("CREATE TABLE {name} (k INT, tag VARCHAR(8), v BIGINT SUM, m INT MAX) AGGREGATE KEY(k, tag) "
         "DISTRIBUTED BY HASH(k) BUCKETS {buckets} PROPERTIES ('replication_num' = '1'{props})")


def conf_dir(folder: Path, **be: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("fe.conf", "be.conf"):
        shutil.copy(ROOT / "conf" / name, folder / name)
    with (folder / "be.conf").open("a") as f:
        f.write("\n" + "".join(f"{k} = {v}\n" for k, v in be.items()))
    return folder


def start(tmp: Path, **be: str) -> ServerProcess:
    srv = ServerProcess(free_port(), tmp / "data")
    srv.conf = conf_dir(tmp / "conf", cumulative_compaction_skip_window_seconds="0",
                        tablet_rowset_stale_sweep_time_sec="0", **be)
    return srv.start()


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start(tmp_path_factory.mktemp("compaction_manual"), disable_auto_compaction="true")
    yield srv
    srv.stop()


def http(srv: ServerProcess, path: str, method: str = "GET", auth: str | None = "root:") -> tuple[int, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{srv.http_port}{path}", method=method)
    if auth is not None:
        req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.headers["Content-Type"] == "application/json"
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def tablets(cur, table: str) -> list[dict]:
    cur.execute(f"SHOW TABLETS FROM {table}")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def load(cur, table: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        cur.execute(f"INSERT INTO {table} VALUES ({i % 3}, 'a', {i}, {i}), ({i % 5}, 'b', 1, {-i}), (100, 'c', 1, 1)")


def run_compaction(srv: ServerProcess, tablet_id: int) -> None:
    """A cumulative compaction of the tablet through the HTTP API, waited for."""
    status, ran = http(srv, f"/api/compaction/run?tablet_id={tablet_id}&compact_type=cumulative", "POST")
    assert (status, ran) == (200, {"status": "Success", "msg": "compaction task is successfully triggered."})
    deadline = time.monotonic() + 30
    while http(srv, f"/api/compaction/run_status?tablet_id={tablet_id}")[1]["run_status"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture
def cur(manual: ServerProcess) -> Iterator:
    yield from own_database(manual)


def test_show_tablets_and_a_manual_compaction(manual: ServerProcess, cur) -> None:
    cur.execute(TABLE.format(name="t", buckets=1, props=", 'bloom_filter_columns' = 'tag'"))
    load(cur, "t", 7)
    queries = ["SELECT * FROM t ORDER BY k, tag", "SELECT tag, SUM(v), MAX(m) FROM t GROUP BY tag ORDER BY tag",
               "SELECT * FROM t WHERE tag = 'b' ORDER BY k"]
    before = []
    for q in queries:
        cur.execute(q)
        before.append(cur.fetchall())
    cur.execute("SHOW TABLETS FROM t")
    assert [d[0] for d in cur.description] == SHOW_TABLETS_COLUMNS
    (row,) = tablets(cur, "t")
    tablet_id = int(row["TabletId"])
    assert row["VersionCount"] == "7" and row["Version"] == "8" and row["State"] == "NORMAL"
    assert row["CompactionStatus"] == f"http://127.0.0.1:{manual.http_port}/api/compaction/show?tablet_id={tablet_id}"
    assert row["RowCount"] == str(7 * 3)

    status, shown = http(manual, f"/api/compaction/show?tablet_id={tablet_id}")
    assert status == 200 and shown["cumulative policy type"] == "SIZE_BASED"
    assert [r.split(" ")[0] for r in shown["rowsets"]] == [f"[{v}-{v}]" for v in range(2, 9)]
    assert shown["missing_rowsets"] == [] and shown["stale version path"] == []

    run_compaction(manual, tablet_id)
    (row,) = tablets(cur, "t")
    assert row["VersionCount"] == "1"
    assert int(row["RowCount"]) < 7 * 3  # equal keys became one row
    status, shown = http(manual, f"/api/compaction/show?tablet_id={tablet_id}")
    assert shown["rowsets"][0].startswith("[2-8] 1 DATA NONOVERLAPPING ")
    assert not shown["last cumu success time"].startswith("1970-")
    for q, expected in zip(queries, before, strict=True):
        cur.execute(q)
        assert cur.fetchall() == expected
    # the bloom filter of the output still prunes
    cur.execute("SET enable_profile = true")
    cur.execute("SELECT * FROM t WHERE tag = 'ab'")  # inside the zone map's a .. c
    assert cur.fetchall() == ()
    cur.execute('SHOW QUERY PROFILE "/"')
    query_id = cur.fetchall()[-1][0]
    cur.execute(f'SHOW QUERY PROFILE "/{query_id}"')
    profile = " ".join(str(v) for r in cur.fetchall() for v in r)
    assert re.search(r"RowsBloomFilterFiltered: [1-9]", profile), profile
    cur.execute("SET enable_profile = false")
    # nothing left to merge: Doris's failure answer
    status, ran = http(manual, f"/api/compaction/run?tablet_id={tablet_id}&compact_type=cumulative", "POST")
    assert (status, ran) == (200, {"status": "Fail", "msg": "fail to execute compaction, error = -2000"})


def test_show_tablets_partitions_where_and_order(cur) -> None:
    cur.execute("CREATE TABLE p (d DATE, k INT, v BIGINT SUM) AGGREGATE KEY(d, k) PARTITION BY RANGE(d) "
                "(PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01')) "
                "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO p VALUES ('2024-01-05', 1, 1), ('2024-02-05', 2, 1)")
    rows = tablets(cur, "p")
    assert len(rows) == 4 and {r["Version"] for r in rows} == {"2"}
    assert len(tablets(cur, "p PARTITION (p2)")) == 2
    assert len(tablets(cur, "p PARTITION p1")) == 2
    cur.execute("SHOW TABLETS FROM p WHERE Version = 2 AND State = 'NORMAL' ORDER BY TabletId DESC LIMIT 3")
    got = [int(r[0]) for r in cur.fetchall()]
    assert got == sorted((int(r["TabletId"]) for r in rows), reverse=True)[:3]
    with pytest.raises(pymysql.err.OperationalError, match="Where clause should looks like"):
        cur.execute("SHOW TABLETS FROM p WHERE RowCount > 1")
    with pytest.raises(pymysql.err.OperationalError, match=r"Title name\[nope\] does not exist"):
        cur.execute("SHOW TABLETS FROM p ORDER BY nope")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown partition: p9"):
        cur.execute("SHOW TABLETS FROM p PARTITION (p9)")
    with pytest.raises(pymysql.err.ProgrammingError):
        cur.execute("SHOW TABLETS FROM nope")


def test_http_errors(manual: ServerProcess, cur) -> None:
    cur.execute(TABLE.format(name="t", buckets=1, props=""))
    load(cur, "t", 1)
    tablet_id = int(tablets(cur, "t")[0]["TabletId"])
    assert http(manual, "/api/compaction/show?tablet_id=999999999") == (
        200, {"status": "Fail", "msg": "Tablet not found"})
    assert http(manual, "/api/compaction/run?tablet_id=999999999&compact_type=base", "POST") == (
        200, {"status": "Fail", "msg": "Tablet not found"})
    assert http(manual, "/api/compaction/run_status?tablet_id=999999999") == (
        200, {"status": "Fail", "msg": "Tablet not found"})
    assert http(manual, "/api/compaction/show") == (
        400, {"status": "Fail", "msg": "check param failed: missing tablet_id"})
    assert http(manual, "/api/compaction/show?tablet_id=abc") == (
        400, {"status": "Fail", "msg": "convert tablet_id failed, stoull"})
    assert http(manual, "/api/compaction/run?compact_type=base", "POST") == (
        400, {"status": "Fail", "msg": "tablet id and table id can not be empty at the same time!"})
    assert http(manual, f"/api/compaction/run?tablet_id={tablet_id}&compact_type=full", "POST") == (
        400, {"status": "Fail", "msg": "The compaction type 'full' is not supported"})
    assert http(manual, f"/api/compaction/run?tablet_id={tablet_id}", "POST")[0] == 400
    assert http(manual, f"/api/compaction/run?tablet_id={tablet_id}&compact_type=base")[0] == 405
    assert http(manual, "/api/nothing")[0] == 404
    status, body = http(manual, f"/api/compaction/run?tablet_id={tablet_id}&compact_type=base", "POST")
    assert (status, body) == (200, {"status": "Fail", "msg": "fail to execute compaction, error = -808"})
    status, body = http(manual, "/api/compaction/run_status")
    assert status == 200 and set(body) == {"CumulativeCompaction", "BaseCompaction"}
    assert http(manual, f"/api/compaction/run_status?tablet_id={tablet_id}") == (200, {
        "status": "Success", "run_status": False, "msg": "this tablet_id is not running", "tablet_id": tablet_id,
        "compact_type": ""})


def test_the_producer_respects_disable_auto_compaction(tmp_path: Path) -> None:
    srv = start(tmp_path, min_compaction_failure_interval_sec="1")
    try:
        with srv.connect() as conn, conn.cursor() as c:
            c.execute("CREATE DATABASE d")
            c.execute("USE d")
            c.execute(TABLE.format(name="off", buckets=1, props=", 'disable_auto_compaction' = 'true'"))
            c.execute(TABLE.format(name="auto", buckets=1, props=""))
            load(c, "off", 8)
            load(c, "auto", 8)
            c.execute("SELECT * FROM auto ORDER BY k, tag")
            before = c.fetchall()
            deadline = time.monotonic() + 30
            while tablets(c, "auto")[0]["VersionCount"] != "1":
                assert time.monotonic() < deadline, tablets(c, "auto")
                time.sleep(0.2)
            assert tablets(c, "off")[0]["VersionCount"] == "8"
            c.execute("SELECT * FROM auto ORDER BY k, tag")
            assert c.fetchall() == before
    finally:
        srv.stop()


def test_too_many_versions(tmp_path: Path) -> None:
    srv = start(tmp_path, disable_auto_compaction="true", max_tablet_version_num="3")
    try:
        with srv.connect() as conn, conn.cursor() as c:
            c.execute("CREATE DATABASE d")
            c.execute("USE d")
            c.execute(TABLE.format(name="t", buckets=1, props=""))
            load(c, "t", 4)
            tablet_id = int(tablets(c, "t")[0]["TabletId"])
            with pytest.raises(pymysql.err.OperationalError) as err:
                load(c, "t", 1, start=4)
            assert err.value.args == (1105, (
                f"[E-235]failed to init rowset builder. version count: 4, exceed limit: 3, tablet: {tablet_id}. "
                "Please reduce the frequency of loading data or adjust the max_tablet_version_num or "
                "time_series_max_tablet_version_num in be.conf to a larger value."))
            c.execute("SELECT SUM(v) FROM t")  # the refused load left nothing
            assert c.fetchall() == ((sum(range(4)) + 8,),)
            assert tablets(c, "t")[0]["VersionCount"] == "4"
    finally:
        srv.stop()


def test_alter_table_sets_disable_auto_compaction(cur) -> None:
    cur.execute(TABLE.format(name="t", buckets=1, props=""))
    cur.execute('ALTER TABLE t SET ("disable_auto_compaction" = "true")')
    cur.execute("SHOW CREATE TABLE t")
    assert '"disable_auto_compaction" = "true"' in cur.fetchall()[0][1]
    with pytest.raises(pymysql.err.OperationalError, match="disable_auto_compaction must be `true` or `false`"):
        cur.execute('ALTER TABLE t SET ("disable_auto_compaction" = "maybe")')
    cur.execute('ALTER TABLE t SET ("disable_auto_compaction" = "false")')
    cur.execute("SHOW CREATE TABLE t")
    assert '"disable_auto_compaction" = "false"' in cur.fetchall()[0][1]


def test_meta_url_answers(manual: ServerProcess, cur) -> None:
    cur.execute(TABLE.format(name="mu", buckets=1, props=""))
    load(cur, "mu", 2)
    (row,) = tablets(cur, "mu")
    url = row["MetaUrl"]
    assert url == f"http://127.0.0.1:{manual.http_port}/api/meta/header/{row['TabletId']}"
    status, meta = http(manual, url.split(str(manual.http_port), 1)[1])
    assert status == 200 and meta["tablet_id"] == int(row["TabletId"]) and meta["tablet_state"] == "PB_RUNNING"
    assert [c["name"] for c in meta["schema"]["column"]] == ["k", "tag", "v", "m"]
    assert meta["schema"]["keys_type"] == "AGG_KEYS"
    assert [(r["start_version"], r["end_version"]) for r in meta["rs_metas"]] == [(2, 2), (3, 3)]
    assert http(manual, "/api/meta/header/999999999")[1] == {"status": "Fail", "msg": "Tablet not found"}
    assert http(manual, "/api/meta/header/abc")[0] == 400

"""The single node as Doris describes its cluster (issue 15): SHOW BACKENDS / FRONTENDS, SHOW PROC '/backends',
SHOW DATA, and the FE HTTP endpoints Doris's Spark / Flink connectors call before a Stream Load."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pymysql
import pytest

from server.nodes import BACKEND_COLUMNS, FRONTEND_COLUMNS

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def columns(cur) -> list[str]:
    return [d[0] for d in cur.description]


def get(port: int, path: str, auth: str | None = "root:") -> tuple[int, dict]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if auth is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_show_backends_frontends_and_proc(server, cur) -> None:
    (backend,) = rows(cur, "SHOW BACKENDS")
    assert columns(cur) == list(BACKEND_COLUMNS)
    b = dict(zip(BACKEND_COLUMNS, backend, strict=True))
    assert (b["Host"], b["HttpPort"], b["Alive"], b["SystemDecommissioned"]) == (
        "127.0.0.1", str(server.http_port), "true", "false")
    assert b["UsedPct"].endswith(" %") and b["Tag"] == '{"location" : "default"}'
    assert json.loads(b["Status"])["isActive"] is True
    (frontend,) = rows(cur, "SHOW FRONTENDS")
    assert columns(cur) == list(FRONTEND_COLUMNS)
    f = dict(zip(FRONTEND_COLUMNS, frontend, strict=True))
    assert (f["QueryPort"], f["HttpPort"], f["Role"], f["IsMaster"], f["CurrentConnected"]) == (
        str(server.port), str(server.fe_http_port), "FOLLOWER", "true", "Yes")
    (proc,) = rows(cur, "SHOW PROC '/backends'")
    assert columns(cur) == list(BACKEND_COLUMNS) and proc[:8] == backend[:8]
    assert ("backends",) in rows(cur, "SHOW PROC '/'")
    with pytest.raises(pymysql.err.OperationalError, match="doesn't exist"):
        cur.execute("SHOW PROC '/nope'")


def test_show_data(server, cur, db) -> None:
    cur.execute(f"CREATE TABLE a (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
    cur.execute(f"CREATE TABLE b (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
    cur.execute("ALTER TABLE a ADD ROLLUP r (v, k)")
    cur.execute("INSERT INTO a VALUES (1, 2), (3, 4), (5, 6)")
    data = rows(cur, "SHOW DATA")
    assert columns(cur) == ["TableName", "Size", "ReplicaCount", "RemoteSize", "RetainedSize"]
    assert [r[0] for r in data] == ["a", "b", "Total", "Quota", "Left"]
    assert data[1][1:3] == ("0.000 ", "2") and data[2][2] == str(int(data[0][2]) + 2)
    assert data[3][1] == "1024.000 TB"
    (base, *_rest) = rows(cur, f"SHOW DATA FROM {db}.a")
    assert columns(cur) == ["TableName", "IndexName", "Size", "ReplicaCount", "RowCount", "RemoteSize", "RetainedSize"]
    assert (base[0], base[1], base[3], base[4]) == ("a", "a", "2", "3")
    assert rows(cur, "SHOW DATA FROM a")[-1][1] == "Total"
    assert [r[1] for r in rows(cur, "SHOW DATA FROM a")] == ["a", "r", "Total"]
    with pytest.raises(pymysql.err.ProgrammingError, match="does not exist"):
        cur.execute("SHOW DATA FROM nope")
    with server.connect() as conn, conn.cursor() as nodb:  # no database selected: one row per database
        everything = rows(nodb, "SHOW DATA")
        assert columns(nodb) == ["DbId", "DbName", "Size", "RemoteSize", "RecycleSize", "RecycleRemoteSize"]
        assert any(r[1] == db and int(r[2]) > 0 for r in everything)


def test_connector_endpoints(server, cur, db) -> None:
    cur.execute(f"CREATE TABLE s (k INT, d DECIMAL(12, 2) COMMENT 'amount', day DATE NOT NULL, v BIGINT SUM) "
                f"AGGREGATE KEY(k, d, day) {PROPS}")
    status, reply = get(server.fe_http_port, "/api/backends?is_alive=true")
    assert status == 200 and reply["data"]["backends"] == [
        {"ip": "127.0.0.1", "http_port": server.http_port, "is_alive": True}]
    status, reply = get(server.fe_http_port, "/rest/v1/system?path=//backends")
    (row,) = reply["data"]["rows"]
    assert (row["Host"], row["HttpPort"], row["Alive"]) == ("127.0.0.1", str(server.http_port), "true")
    status, reply = get(server.fe_http_port, f"/api/{db}/s/_schema")
    assert reply["data"]["keysType"] == "AGG_KEYS"
    assert reply["data"]["properties"] == [
        {"type": "INT", "comment": "", "name": "k", "aggregation_type": "", "is_nullable": "Yes"},
        {"type": "DECIMAL64", "comment": "amount", "name": "d", "aggregation_type": "", "is_nullable": "Yes",
         "precision": "12", "scale": "2"},
        {"type": "DATEV2", "comment": "", "name": "day", "aggregation_type": "", "is_nullable": "No"},
        {"type": "BIGINT", "comment": "", "name": "v", "aggregation_type": "SUM", "is_nullable": "Yes"},
    ]
    assert get(server.fe_http_port, f"/api/{db}/s/_schema", auth=None)[0] == 401
    assert get(server.fe_http_port, f"/api/{db}/nope/_schema")[1]["code"] == 1
    assert get(server.http_port, "/api/health", auth=None) == (200, {"status": "OK", "msg": "To Be Added"})
    cur.execute("CREATE USER 'nodes_u'@'%' IDENTIFIED BY 'pw'")
    try:
        conn = server.connect(user="nodes_u", password="pw")
        with conn.cursor() as other, pytest.raises(pymysql.err.OperationalError, match="ADMIN"):
            other.execute("SHOW BACKENDS")
        conn.close()
        assert get(server.fe_http_port, f"/api/{db}/s/_schema", auth="nodes_u:pw")[1]["code"] == 1
    finally:
        cur.execute("DROP USER 'nodes_u'@'%'")

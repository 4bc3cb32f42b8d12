"""Issue 13's remaining DDL surface: VARCHAR(0) / CHAR(0) as Doris 2.1 maps them, colocation groups checked as
Doris checks them and shown by SHOW PROC '/colocation_group', and the FE HTTP API on fe.conf http_port
(/api/_set_config, /api/show_proc) with basic auth."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

from tests.server.test_schema_change import PROPS, error, rows


def test_zero_lengths(cur) -> None:
    cur.execute(f"CREATE TABLE z (a VARCHAR(0), b CHAR(0), c INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1 "
                f"{PROPS}")
    cur.execute("DESC z")
    assert [r[1] for r in cur.fetchall()] == ["VARCHAR(65533)", "CHAR(1)", "INT"]
    assert "Varchar size must between 1 and 65533" in error(
        cur, f"CREATE TABLE z2 (a VARCHAR(65534)) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1 {PROPS}")


def test_colocation_groups(cur) -> None:
    make = "CREATE TABLE {} (k {}, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS {} " \
           "PROPERTIES ('replication_num' = '1', 'colocate_with' = 'g1')"
    cur.execute(make.format("a", "INT", 4))
    cur.execute(make.format("b", "INT", 4))
    assert error(cur, make.format("c", "INT", 3)) == \
        "errCode = 2, detailMessage = Colocate tables must have same bucket num: 4"
    assert error(cur, make.format("c", "BIGINT", 4)) == \
        "errCode = 2, detailMessage = Colocate tables distribution columns must have the same data type: k should be INT"
    cur.execute("SHOW PROC '/colocation_group'")
    assert [d[0] for d in cur.description] == ["GroupId", "GroupName", "TableIds", "BucketsNum",
                                               "ReplicaAllocation", "DistCols", "IsStable", "ErrorMsg"]
    [row] = cur.fetchall()
    assert row[1].endswith("_g1") and len(row[2].split(", ")) == 2 and row[3:] == (
        "4", "tag.location.default: 1", "int", "true", "")
    assert rows(cur, "SHOW PROC '/'") == [("backends",), ("colocation_group",), ("frontends",)]
    assert "doesn't exist" in error(cur, "SHOW PROC '/nope'")


def _get(server, path: str, auth: str | None = "root:") -> tuple[int, dict]:
    request = urllib.request.Request(f"http://127.0.0.1:{server.fe_http_port}{path}")
    if auth is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_set_config_over_http(server, cur) -> None:
    status, body = _get(server, "/api/_set_config?expr_children_limit=5&query_port=1&nope=2")
    assert status == 200 and body["code"] == 0
    assert body["data"]["set"] == {"expr_children_limit": "5"}
    assert [(e["config_name"], e["err_info"]) for e in body["data"]["err"]] == [
        ("query_port", "Config 'query_port' is not mutable"), ("nope", "Config 'nope' does not exist")]
    cur.execute("SHOW FRONTEND CONFIG LIKE 'expr_children_limit'")
    assert cur.fetchone()[1] == "5"
    _get(server, "/api/_set_config?expr_children_limit=10000")
    assert _get(server, "/api/_set_config?expr_children_limit=5", auth=None)[0] == 401
    assert _get(server, "/api/_set_config?expr_children_limit=5", auth="root:wrong")[0] == 401
    assert _get(server, "/api/health", auth=None) == (200, {"msg": "success", "code": 0, "count": 0, "data": {
        "online_backend_num": 1, "total_backend_num": 1}})
    assert _get(server, "/api/nope")[0] == 404

"""Stream Load over HTTP (issue 15, its first part): `curl --location-trusted -u user: -H "label:.." -T file
http://host:port/api/db/t/_stream_load`, on the backend port and redirected from the frontend port, with Doris's
headers and JSON reply, loaded as one INSERT by the user who authenticated."""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import time
import urllib.request
import uuid

import pytest

PROPS = "PROPERTIES ('replication_num' = '1')"


def put(port: int, path: str, body: bytes, headers: dict[str, str], auth: str | None = "root:",
        chunked: bool = False) -> tuple[int, dict, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = dict(headers)
    if auth is not None:
        h["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    if chunked:
        conn.putrequest("PUT", path)
        for k, v in {**h, "Transfer-Encoding": "chunked"}.items():
            conn.putheader(k, v)
        conn.endheaders()
        for i in range(0, len(body), 7):
            piece = body[i:i + 7]
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    else:
        conn.request("PUT", path, body=body, headers=h)
    resp = conn.getresponse()
    data = resp.read()
    out = (resp.status, json.loads(data) if data else {}, dict(resp.getheaders()))
    conn.close()
    return out


@pytest.fixture
def t(cur, db):
    cur.execute(f"CREATE TABLE t (id INT, name VARCHAR(20), amount DECIMAL(10, 2)) DUPLICATE KEY(id) "
                f"DISTRIBUTED BY HASH(id) BUCKETS 2 {PROPS}")
    return cur


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


CSV = b"1,alice,3.50\n2,bob,4.25\n3,carol,abc\n"


def test_csv_labels_and_filtering(server, db, t) -> None:
    path = f"/api/{db}/t/_stream_load"
    status, reply, _ = put(server.http_port, path, CSV, {"label": "l1", "column_separator": ","})
    assert status == 200 and reply["Status"] == "Fail" and "too many filtered rows" in reply["Message"]
    status, reply, _ = put(server.http_port, path, CSV, {"label": "l2", "column_separator": ",",
                                                         "max_filter_ratio": "0.5"})
    assert reply["Status"] == "Success" and reply["Message"] == "OK" and reply["TxnId"] > 0
    assert (reply["NumberTotalRows"], reply["NumberLoadedRows"], reply["NumberFilteredRows"]) == (3, 2, 1)
    assert reply["Label"] == "l2" and reply["LoadBytes"] == len(CSV)
    error_log = urllib.request.urlopen(urllib.request.Request(  # noqa: S310 - the test's own server
        reply["ErrorURL"], headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode()}), timeout=10)
    assert "Reason: column(amount) value is incorrect: 'abc'. src line [3, carol, abc]" in error_log.read().decode()
    _, again, _ = put(server.http_port, path, CSV, {"label": "l2", "column_separator": ","})
    assert again["Status"] == "Label Already Exists" and again["ExistingJobStatus"] == "FINISHED"
    assert rows(t, "SELECT id, name, CAST(amount AS CHAR) FROM t ORDER BY id") == [(1, "alice", "3.50"),
                                                                                   (2, "bob", "4.25")]
    t.execute("SHOW LOAD WHERE Label = 'l2'")
    assert t.fetchone() is not None


def test_redirect_from_the_frontend_port(server, db, t) -> None:
    status, _, headers = put(server.fe_http_port, f"/api/{db}/t/_stream_load", CSV[:13],
                             {"label": "r1", "column_separator": ","})
    assert status == 307 and headers["Location"].endswith(f"/api/{db}/t/_stream_load")
    status, reply, _ = put(int(headers["Location"].split(":")[2].split("/")[0]), f"/api/{db}/t/_stream_load",
                           CSV[:13], {"label": "r1", "column_separator": ","})
    assert reply["Status"] == "Success"


def test_columns_where_and_chunked_gzip(server, db, t) -> None:
    body = b"10|x|2\n11|y|3\n12|z|4\n"
    _, reply, _ = put(server.http_port, f"/api/{db}/t/_stream_load", gzip.compress(body),
                      {"column_separator": "|", "columns": "id, name, qty, amount = qty * 1.5",
                       "where": "qty > 2", "compress_type": "GZ"}, chunked=True)
    assert reply["Status"] == "Success", reply
    assert (reply["NumberTotalRows"], reply["NumberLoadedRows"], reply["NumberUnselectedRows"]) == (3, 2, 1)
    assert rows(t, "SELECT id, name, CAST(amount AS CHAR) FROM t ORDER BY id") == [(11, "y", "4.50"),
                                                                                   (12, "z", "6.00")]


def test_json_bodies(server, db, t) -> None:
    path = f"/api/{db}/t/_stream_load"
    body = json.dumps([{"id": 20, "name": "j", "amount": 1.25}, {"id": 21, "amount": 2}]).encode()
    _, reply, _ = put(server.http_port, path, body, {"format": "json", "strip_outer_array": "true"})
    assert reply["Status"] == "Success", reply
    lines = b'{"k": 30, "n": "p"}\n{"k": 31, "n": "q"}\n'
    _, reply, _ = put(server.http_port, path, lines, {"format": "json", "jsonpaths": '["$.k", "$.n"]',
                                                      "columns": "id, name"})
    assert reply["Status"] == "Success", reply
    assert rows(t, "SELECT id, name FROM t ORDER BY id") == [(20, "j"), (21, None), (30, "p"), (31, "q")]


def test_auth_and_privileges(server, db, t) -> None:
    path = f"/api/{db}/t/_stream_load"
    assert put(server.http_port, path, CSV, {}, auth=None)[0] == 401
    assert put(server.http_port, path, CSV, {}, auth="root:wrong")[0] == 401
    user = f"sl_{uuid.uuid4().hex[:6]}"
    t.execute(f"CREATE USER '{user}' IDENTIFIED BY 'pw'")
    try:
        _, reply, _ = put(server.http_port, path, CSV[:13], {"column_separator": ","}, auth=f"{user}:pw")
        assert reply["Status"] == "Fail" and "LOAD command denied" in reply["Message"]
        t.execute(f"GRANT LOAD_PRIV ON {db}.t TO '{user}'")
        _, reply, _ = put(server.http_port, path, CSV[:13], {"column_separator": ","}, auth=f"{user}:pw")
        assert reply["Status"] == "Success", reply
    finally:
        t.execute(f"DROP USER '{user}'")


def test_bad_requests(server, db, t) -> None:
    path = f"/api/{db}/t/_stream_load"
    _, reply, _ = put(server.http_port, path, CSV, {"format": "orc"})
    assert reply["Status"] == "Fail" and "not supported" in reply["Message"]
    _, reply, _ = put(server.http_port, f"/api/{db}/nope/_stream_load", CSV, {"column_separator": ","})
    assert reply["Status"] == "Fail" and "does not exist" in reply["Message"]
    _, reply, _ = put(server.http_port, path, b"1,a\n", {"column_separator": ","})  # fewer columns than the table
    assert reply["Status"] == "Fail"


def test_two_phase_commit(server, db, t) -> None:
    """two_phase_commit: true writes and holds the rows (invisible, the label taken); _stream_load_2pc commits
    or aborts them by txn_id or label, once."""
    path = f"/api/{db}/t/_stream_load"
    status, reply, _ = put(server.http_port, path, b"1,a,1.00\n2,b,2.00\n",
                           {"label": "tp1", "column_separator": ",", "two_phase_commit": "true"})
    assert (status, reply["Status"], reply["TwoPhaseCommit"], reply["NumberLoadedRows"]) == (200, "Success", "true", 2)
    txn = reply["TxnId"]
    assert rows(t, "SELECT count(*) FROM t") == [(0,)]  # held, not visible
    _, again, _ = put(server.http_port, path, b"9,z,9.00\n", {"label": "tp1", "column_separator": ","})
    assert again["Status"] == "Label Already Exists"
    two_pc = f"/api/{db}/_stream_load_2pc"
    _, bad, _ = put(server.http_port, two_pc, b"", {"txn_id": str(txn), "txn_operation": "publish"})
    assert bad["status"] == "Fail" and "commit or abort" in bad["msg"]
    _, done, _ = put(server.http_port, two_pc, b"", {"txn_id": str(txn), "txn_operation": "commit"})
    assert done == {"status": "Success", "msg": f"transaction [{txn}] commit successfully."}
    assert rows(t, "SELECT id, name FROM t ORDER BY id") == [(1, "a"), (2, "b")]
    _, twice, _ = put(server.http_port, two_pc, b"", {"txn_id": str(txn), "txn_operation": "commit"})
    assert twice["status"] == "Fail" and "visible" in twice["msg"].lower()
    # abort by label, through the frontend port's redirect
    _, held, _ = put(server.http_port, path, b"3,c,3.00\n",
                     {"label": "tp2", "column_separator": ",", "two_phase_commit": "true"})
    status, redirect, location = put(server.fe_http_port, two_pc, b"", {"label": "tp2", "txn_operation": "abort"})
    assert status == 307 and location["Location"].endswith(two_pc)
    _, aborted, _ = put(server.http_port, two_pc, b"", {"label": "tp2", "txn_operation": "abort"})
    assert aborted == {"status": "Success", "msg": f"transaction [{held['TxnId']}] abort successfully."}
    assert rows(t, "SELECT count(*) FROM t") == [(2,)]
    _, missing, _ = put(server.http_port, two_pc, b"", {"txn_id": "99999999", "txn_operation": "commit"})
    assert missing["status"] == "Fail" and "not found" in missing["msg"]
    assert put(server.http_port, two_pc, b"", {"txn_id": str(txn), "txn_operation": "abort"}, auth=None)[0] == 401


def test_group_commit(server, db, t) -> None:
    path = f"/api/{db}/t/_stream_load"
    t.execute('ALTER TABLE t SET ("group_commit_interval_ms" = "300")')
    for mode in ("sync_mode", "async_mode"):
        _, reply, _ = put(server.http_port, path, b"1,a,1.00\n", {"group_commit": mode, "column_separator": ","})
        assert (reply["Status"], reply["GroupCommit"]) == ("Success", True) and reply["Label"].startswith(
            "group_commit_")
    time.sleep(1)  # the async batch is published at its interval's end
    assert rows(t, "SELECT count(*) FROM t") == [(2,)]
    _, off, _ = put(server.http_port, path, b"2,b,1.00\n", {"group_commit": "off_mode", "column_separator": ","})
    assert off["Status"] == "Success" and "GroupCommit" not in off
    for headers, message in (({"group_commit": "sync_mode", "label": "g1"}, "label and group_commit"),
                             ({"group_commit": "fast"}, "group_commit can only be"),
                             ({"group_commit": "sync_mode", "two_phase_commit": "true"}, "two phase commit")):
        _, reply, _ = put(server.http_port, path, b"3,c,1.00\n", {**headers, "column_separator": ","})
        assert reply["Status"] == "Fail" and message in reply["Message"]


ENCLOSED = b'id,name,amount\n1,"a, b",1.50\n2,"two\nlines",2.00\n3,"say ""hi""",\\N\n5,short\n'


def test_enclose_and_escape(server, db, t, tmp_path) -> None:
    """enclose: a field between two quotes keeps separators and line breaks; doubled quotes make a literal one;
    a short record is NULL-filled; the header skipped. The same file through Stream Load (in-process) and
    INSERT ... SELECT FROM local() on Spark. With `escape`, the escape character makes the quote literal."""
    path = f"/api/{db}/t/_stream_load"
    _, reply, _ = put(server.http_port, path, ENCLOSED, {"column_separator": ",", "enclose": '"',
                                                         "format": "csv_with_names"})
    assert (reply["Status"], reply["NumberLoadedRows"]) == ("Success", 4), reply["Message"]
    expected = [(1, "a, b", "1.50"), (2, "two\nlines", "2.00"), (3, 'say "hi"', None), (5, "short", None)]
    got = [(i, n, None if a is None else str(a)) for i, n, a in rows(t, "SELECT * FROM t ORDER BY id")]
    assert got == expected
    spooled = tmp_path / "enclosed.csv"
    spooled.write_bytes(ENCLOSED)
    t.execute("TRUNCATE TABLE t")
    t.execute(f"INSERT INTO t SELECT * FROM local('file_path' = '{spooled}', 'format' = 'csv_with_names', "
              "'column_separator' = ',', 'enclose' = '\"')")  # on Spark (the tests' threshold is 0)
    got = [(i, n, None if a is None else str(a)) for i, n, a in rows(t, "SELECT * FROM t ORDER BY id")]
    assert got == expected
    _, reply, _ = put(server.http_port, path, b'7,"x\\"y, z",4\n', {"column_separator": ",", "enclose": '"',
                                                                   "escape": "\\"})
    assert reply["Status"] == "Success", reply["Message"]
    assert rows(t, "SELECT name FROM t WHERE id = 7") == [('x"y, z',)]
    _, bad, _ = put(server.http_port, path, ENCLOSED, {"column_separator": ",", "enclose": "''"})
    assert bad["Status"] == "Fail" and "single character" in bad["Message"]


NESTED = (b'{"code": 0, "data": [{"id": 1, "who": {"name": "ann", "tags": ["x", "y"]}, "amt": 1.5},'
          b' {"id": 2, "who": {"name": "bo", "tags": []}, "amt": 2}]}')


def test_json_root_and_nested_jsonpaths(server, db, t, tmp_path) -> None:
    """json_root picks the array (or object) the rows are in; jsonpaths reach into objects and arrays; a path
    the data lacks is NULL. In-process (Stream Load) and on Spark (INSERT ... SELECT FROM local())."""
    path = f"/api/{db}/t/_stream_load"
    headers = {"format": "json", "strip_outer_array": "true", "json_root": "$.data",
               "jsonpaths": '["$.id", "$.who.tags[1]", "$.amt"]', "columns": "id, name, amount"}
    _, reply, _ = put(server.http_port, path, NESTED, headers)
    assert (reply["Status"], reply["NumberLoadedRows"]) == ("Success", 2), reply["Message"]
    expected = [(1, "y", "1.50"), (2, None, "2.00")]
    assert [(i, n, str(a)) for i, n, a in rows(t, "SELECT * FROM t ORDER BY id")] == expected
    lines = b'{"rec": {"id": 3, "who": {"name": "cy"}}}\n{"skip": 1}\n{"rec": {"id": 4, "who": {"name": "di"}}}\n'
    _, reply, _ = put(server.http_port, path, lines, {"format": "json", "read_json_by_line": "true",
                                                     "json_root": "$.rec", "jsonpaths": '["$.id", "$.who.name"]',
                                                     "columns": "id, name"})
    assert reply["Status"] == "Success", reply["Message"]
    assert rows(t, "SELECT id, name FROM t WHERE id > 2 ORDER BY id") == [(3, "cy"), (4, "di")]
    nested = tmp_path / "nested.json"
    nested.write_bytes(NESTED)
    t.execute("TRUNCATE TABLE t")
    t.execute(f"INSERT INTO t (id, name, amount) SELECT `$.id`, `$.who.tags[1]`, `$.amt` FROM local("
              f"'file_path' = '{nested}', 'format' = 'json', 'strip_outer_array' = 'true', 'json_root' = '$.data', "
              "'jsonpaths' = '[\"$.id\", \"$.who.tags[1]\", \"$.amt\"]')")  # on Spark (the tests' threshold is 0)
    assert [(i, n, str(a)) for i, n, a in rows(t, "SELECT * FROM t ORDER BY id")] == expected
    _, bad, _ = put(server.http_port, path, NESTED, {**headers, "jsonpaths": '["id"]'})
    assert bad["Status"] == "Fail" and "Invalid jsonpaths" in bad["Message"]

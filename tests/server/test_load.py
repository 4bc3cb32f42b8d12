"""Loads through the real server: INSERT ... SELECT on Spark from tables and local() files, strict mode,
labels, SHOW LOAD / CANCEL LOAD, and a kill -9 in the middle of a load.

Spark starts once per server process (the session `server` fixture); the files are written by the tests.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pymysql
import pytest

from tests.conftest import ServerProcess

DDL = "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


def local(path: Path | str, fmt: str, **props: str) -> str:
    items = {"file_path": str(path), "format": fmt, **props}
    return "local(" + ", ".join(f'"{k}" = "{v}"' for k, v in items.items()) + ")"


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def show_load(cur, label: str) -> dict:
    cur.execute(f'SHOW LOAD WHERE LABEL = "{label}"')
    names = [d[0] for d in cur.description]
    got = cur.fetchall()
    assert len(got) == 1, got
    return dict(zip(names, got[0], strict=True))


@pytest.fixture
def files(tmp_path: Path) -> Path:
    pq.write_table(pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}), tmp_path / "p1.parquet")
    pq.write_table(pa.table({"k": pa.array([3], pa.int32()), "v": ["c"]}), tmp_path / "p2.parquet")
    (tmp_path / "plain.csv").write_text("1\tx\n2\ty\n3\n")
    (tmp_path / "named.csv").write_text("k|v\n10|n1\n11|n2\n")
    (tmp_path / "typed.csv").write_text("k,v\nint,string\n20,t\n")
    (tmp_path / "rows.json").write_text('{"k": 7, "v": "j"}\n{"k": 8, "v": null}\n')
    (tmp_path / "bad.csv").write_text("1,ok\nx,bad\n2,waytoolongvalue\n3,\\N\n")
    return tmp_path


def test_select_from_local_files(cur, files: Path) -> None:
    assert rows(cur, f"SELECT * FROM {local(files / 'plain.csv', 'csv')} ORDER BY c1") == [
        ("1", "x"), ("2", "y"), ("3", None)]
    got = rows(cur, f"SELECT k + 1, v FROM {local(files / 'plain.csv', 'csv', csv_schema='k:int;v:varchar(10)')} "
                    "t WHERE t.k >= 2 ORDER BY k")
    assert got == [(3, "y"), (4, None)]
    assert rows(cur, f"SELECT v FROM {local(files / 'named.csv', 'csv_with_names', column_separator='|')} "
                     "WHERE k = '11'") == [("n2",)]
    assert rows(cur, f"SELECT * FROM {local(files / 'typed.csv', 'csv_with_names_and_types', column_separator=',')}"
                ) == [("20", "t")]
    assert rows(cur, f"SELECT k, v FROM {local(files / 'rows.json', 'json')} ORDER BY k") == [(7, "j"), (8, None)]
    assert rows(cur, f"SELECT count(*), sum(k) FROM {local(files / 'p*.parquet', 'parquet')}") == [(3, 6)]


@pytest.mark.parametrize("props, message", [
    ({"file_path": "/nonexistent/x.csv", "format": "csv"}, "No file matches the path: /nonexistent/x.csv"),
    ({"file_path": "{files}/plain.csv", "format": "xls"}, "format:xls is not supported."),
    ({"format": "csv"}, "Property 'file_path' is required."),
    ({"file_path": "{files}/plain.csv", "format": "csv", "csv_schema": "k"}, "invalid csv_schema"),
])
def test_local_errors(cur, files: Path, props: dict, message: str) -> None:
    text = ", ".join(f'"{k}" = "{v.format(files=files)}"' for k, v in props.items())
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.execute(f"SELECT * FROM local({text})")
    assert message in e.value.args[1]
    with pytest.raises(pymysql.err.OperationalError, match="is not supported: dorislite reads files"):
        cur.execute('SELECT * FROM s3("uri" = "s3://b/x.csv", "format" = "csv")')


@pytest.mark.parametrize("keys", ["DUPLICATE", "AGGREGATE", "UNIQUE"])
def test_insert_select_from_each_model(cur, keys: str) -> None:
    value = "v BIGINT SUM" if keys == "AGGREGATE" else "v BIGINT"
    cur.execute(f"CREATE TABLE src (k INT, {value}) {keys} KEY(k) {DDL}")
    cur.execute("INSERT INTO src VALUES (1, 10), (2, 20)")
    cur.execute("INSERT INTO src VALUES (1, 5)")
    cur.execute(f"CREATE TABLE dst (k INT, v BIGINT) DUPLICATE KEY(k) {DDL}")
    cur.execute("INSERT INTO dst SELECT k, v FROM src WHERE k > 0")
    expected = {"DUPLICATE": [(1, 5), (1, 10), (2, 20)], "AGGREGATE": [(1, 15), (2, 20)],
                "UNIQUE": [(1, 5), (2, 20)]}[keys]
    assert cur.rowcount == len(expected)
    assert rows(cur, "SELECT k, v FROM dst ORDER BY k, v") == expected


def test_insert_from_files_with_columns_defaults_and_label(cur, files: Path) -> None:
    cur.execute(f"CREATE TABLE t (k INT, v VARCHAR(10), d INT DEFAULT '9') DUPLICATE KEY(k) {DDL}")
    cur.execute(f"INSERT INTO t WITH LABEL parquet_glob (k, v) SELECT k, v FROM {local(files / 'p*.parquet', 'parquet')}")
    assert cur.rowcount == 3
    info = cur.connection._result.message.decode()
    assert "'label':'parquet_glob', 'status':'VISIBLE', 'txnId':'" in info
    cur.execute(f"INSERT INTO t (v, k) SELECT v, k FROM {local(files / 'named.csv', 'csv_with_names', column_separator='|')}")
    cur.execute(f"INSERT INTO t (k, v) SELECT * FROM {local(files / 'rows.json', 'json')}")
    assert rows(cur, "SELECT k, v, d FROM t ORDER BY k") == [
        (1, "a", 9), (2, "b", 9), (3, "c", 9), (7, "j", 9), (8, None, 9), (10, "n1", 9), (11, "n2", 9)]
    with pytest.raises(pymysql.err.OperationalError, match=r"Label \[parquet_glob\] has already been used"):
        cur.execute(f"INSERT INTO t WITH LABEL parquet_glob SELECT k, v, 1 FROM {local(files / 'p1.parquet', 'parquet')}")
    assert rows(cur, "SELECT count(*) FROM t") == [(7,)]
    load = show_load(cur, "parquet_glob")
    assert (load["State"], load["Type"], load["Progress"]) == ("FINISHED", "INSERT", "ETL:100%; LOAD:100%")
    assert "dpp.norm.ALL=3" in load["EtlInfo"] and load["User"] == "root" and load["ErrorMsg"] is None


def test_strict_and_non_strict(cur, files: Path) -> None:
    cur.execute(f"CREATE TABLE t (k INT NOT NULL, v VARCHAR(5) NOT NULL) DUPLICATE KEY(k) {DDL}")
    src = local(files / "bad.csv", "csv", column_separator=",")
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.execute(f"INSERT INTO t WITH LABEL strict1 SELECT * FROM {src}")
    message = e.value.args[1]
    assert "Insert has filtered data in strict mode. filtered rows: 3, sample: [" in message
    assert "column(k) value is incorrect: 'x'" in message and "src line [x, bad]" in message
    assert "value is too long: 'waytoolongvalue'" in message
    assert rows(cur, "SELECT count(*) FROM t") == [(0,)]
    load = show_load(cur, "strict1")
    assert load["State"] == "CANCELLED" and "filtered rows: 3" in load["ErrorMsg"]
    cur.execute("SET enable_insert_strict = false")
    cur.execute(f"INSERT INTO t WITH LABEL lenient SELECT * FROM {src}")
    assert cur.rowcount == 1
    assert rows(cur, "SELECT k, v FROM t") == [(1, "ok")]
    assert "dpp.abnorm.ALL=3; dpp.norm.ALL=1" in show_load(cur, "lenient")["EtlInfo"]


def test_partition_restriction_and_empty_select(cur) -> None:
    cur.execute("CREATE TABLE src (k INT, v INT) DUPLICATE KEY(k) " + DDL)
    cur.execute("INSERT INTO src VALUES (1, 1), (15, 2), (25, 3)")
    cur.execute("CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
                "(PARTITION p1 VALUES LESS THAN ('10'), PARTITION p2 VALUES LESS THAN ('20')) " + DDL)
    with pytest.raises(pymysql.err.OperationalError, match="filtered rows: 2, sample: .*no partition for this tuple"):
        cur.execute("INSERT INTO t PARTITION (p2) SELECT * FROM src")
    cur.execute("SET enable_insert_strict = false")
    cur.execute("INSERT INTO t PARTITION (p2) SELECT * FROM src")
    assert cur.rowcount == 1
    assert rows(cur, "SELECT k FROM t") == [(15,)]
    cur.execute("INSERT INTO t SELECT * FROM src WHERE k < 0")
    assert cur.rowcount == 0
    with pytest.raises(pymysql.err.OperationalError, match="Unknown partition 'p9'"):
        cur.execute("INSERT INTO t PARTITION (p9) SELECT * FROM src")


@pytest.mark.parametrize("keys", ["DUPLICATE", "AGGREGATE"])
def test_loads_that_select_nothing_succeed(cur, tmp_path: Path, keys: str) -> None:
    """Doris loads zero rows and succeeds: an empty table, a filter nothing passes, a join with an empty
    side, a constant filter Spark folds away (so it runs fewer tasks than buckets), empty files."""
    value = "v INT SUM" if keys == "AGGREGATE" else "v INT"
    cur.execute(f"CREATE TABLE src (k INT, {value}) {keys} KEY(k) {DDL}")
    cur.execute(f"CREATE TABLE empty_src (k INT, {value}) {keys} KEY(k) {DDL}")
    cur.execute(f"CREATE TABLE dst (k INT, {value}) {keys} KEY(k) {DDL}")
    cur.execute("INSERT INTO src VALUES (1, 1), (2, 2)")
    cur.execute("INSERT INTO dst VALUES (5, 5)")
    pq.write_table(pa.table({"k": pa.array([], pa.int32()), "v": pa.array([], pa.int32())}), tmp_path / "e.parquet")
    (tmp_path / "e.csv").write_text("")
    (tmp_path / "header.csv").write_text("k,v\n")
    sources = {
        "empty_table": "SELECT * FROM empty_src",
        "no_match": "SELECT * FROM src WHERE k > 100",
        "empty_join": "SELECT src.k, src.v FROM src JOIN empty_src e ON src.k = e.k",
        "folded": "SELECT k, v FROM src WHERE 1 = 0",
        "empty_agg": "SELECT k, sum(v) FROM empty_src GROUP BY k",
        "empty_parquet": f"SELECT * FROM {local(tmp_path / 'e.parquet', 'parquet')}",
        "empty_csv": f"SELECT * FROM {local(tmp_path / 'e.csv', 'csv', csv_schema='k:int;v:int')}",
        "header_only": f"SELECT * FROM {local(tmp_path / 'header.csv', 'csv_with_names', column_separator=',')}",
    }
    for label, select in sources.items():
        cur.execute(f"INSERT INTO dst WITH LABEL {label} {select}")
        assert cur.rowcount == 0, label
        load = show_load(cur, label)
        assert (load["State"], load["ErrorMsg"]) == ("FINISHED", None), (label, load)
        assert "dpp.norm.ALL=0" in load["EtlInfo"]
    assert rows(cur, "SELECT k, v FROM dst") == [(5, 5)]
    cur.execute("INSERT INTO dst SELECT * FROM src")  # the table still loads afterwards
    assert rows(cur, "SELECT k, v FROM dst ORDER BY k") == [(1, 1), (2, 2), (5, 5)]


def test_empty_json_file_has_no_columns(cur, tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text("")
    (tmp_path / "a.json").write_text("[]")
    for source in (local(tmp_path / "e.json", "json"), local(tmp_path / "a.json", "json", strip_outer_array="true")):
        with pytest.raises(pymysql.err.OperationalError, match="The first line is empty, can not parse column numbers"):
            cur.execute(f"SELECT * FROM {source}")


def _big_parquet(path: Path, n: int) -> Path:
    keys = np.arange(n, dtype=np.int64)
    pq.write_table(pa.table({"k": keys, "v": pa.array(np.char.add("value-", keys.astype(str)))}), path)
    return path


def _wait_state(server: ServerProcess, db: str, label: str, states: tuple[str, ...], timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    with server.connect(db) as conn, conn.cursor() as cur:
        while time.monotonic() < deadline:
            cur.execute(f'SHOW LOAD WHERE LABEL = "{label}"')
            got = cur.fetchall()
            if got and got[0][2] in states:
                return got[0][2]
            time.sleep(0.1)
    raise AssertionError(f"load {label} never reached {states}")


def _start_load(server: ServerProcess, db: str, sql: str) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run() -> None:
        try:
            with server.connect(db) as conn, conn.cursor() as cur:
                cur.execute(sql)
                outcome.append(cur.rowcount)
        except Exception as e:  # noqa: BLE001 - the test inspects it
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


BIG_DDL = "DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')"


def test_cancel_running_load(server: ServerProcess, db: str, cur, tmp_path: Path) -> None:
    source = _big_parquet(tmp_path / "big.parquet", 3_000_000)
    cur.execute(f"CREATE TABLE big (k BIGINT, v VARCHAR(40)) UNIQUE KEY(k) {BIG_DDL}")
    thread, outcome = _start_load(server, db, f"INSERT INTO big WITH LABEL slow SELECT * FROM {local(source, 'parquet')}")
    _wait_state(server, db, "slow", ("LOADING",))
    time.sleep(1.0)
    cur.execute('CANCEL LOAD WHERE LABEL = "slow"')
    thread.join(120)
    assert outcome and isinstance(outcome[0], pymysql.err.OperationalError), outcome
    assert "cancelled" in outcome[0].args[1]
    load = show_load(cur, "slow")
    assert load["State"] == "CANCELLED" and load["ErrorMsg"] == "type:USER_CANCEL; msg:user cancel"
    assert rows(cur, "SELECT count(*) FROM big") == [(0,)]
    with pytest.raises(pymysql.err.OperationalError, match="There is no uncompleted job"):
        cur.execute('CANCEL LOAD WHERE LABEL = "slow"')
    with pytest.raises(pymysql.err.OperationalError, match="Load job does not exist"):
        cur.execute('CANCEL LOAD WHERE LABEL = "nothing"')


def test_kill_query_cancels_load(server: ServerProcess, db: str, cur, tmp_path: Path) -> None:
    source = _big_parquet(tmp_path / "big.parquet", 3_000_000)
    cur.execute(f"CREATE TABLE big (k BIGINT, v VARCHAR(40)) DUPLICATE KEY(k) {BIG_DDL}")
    thread, outcome = _start_load(server, db, f"INSERT INTO big WITH LABEL killed SELECT * FROM {local(source, 'parquet')}")
    _wait_state(server, db, "killed", ("LOADING",))
    cur.execute("SHOW PROCESSLIST")
    target = [r[1] for r in cur.fetchall() if r[11] and "killed" in str(r[11])]
    assert target
    cur.execute(f"KILL QUERY {target[0]}")
    thread.join(120)
    assert outcome and isinstance(outcome[0], pymysql.err.OperationalError), outcome
    assert show_load(cur, "killed")["State"] == "CANCELLED"
    assert rows(cur, "SELECT count(*) FROM big") == [(0,)]


def test_crash_during_load_leaves_all_or_nothing(fresh_server: ServerProcess, tmp_path: Path) -> None:
    n = 2_000_000
    source = _big_parquet(tmp_path / "big.parquet", n)
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE crash")
        cur.execute(f"CREATE TABLE crash.big (k BIGINT, v VARCHAR(40)) DUPLICATE KEY(k) {BIG_DDL}")
        cur.execute("INSERT INTO crash.big VALUES (-1, 'before')")
    _start_load(fresh_server, "crash", f"INSERT INTO big WITH LABEL crash1 SELECT * FROM {local(source, 'parquet')}")
    _wait_state(fresh_server, "crash", "crash1", ("LOADING", "FINISHED"))
    time.sleep(2.0)
    fresh_server.stop(signal.SIGKILL)
    fresh_server.start(timeout=120)
    with fresh_server.connect("crash") as conn, conn.cursor() as cur:
        count = rows(cur, "SELECT count(*) FROM big")[0][0]
        assert count in (1, n + 1)
        state = show_load(cur, "crash1")["State"]
        assert state == ("FINISHED" if count == n + 1 else "CANCELLED")
        assert not list((fresh_server.storage / "staging").glob("txn_*"))

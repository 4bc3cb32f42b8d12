"""SELECT ... INTO OUTFILE (issue 15): the result as CSV / CSV with names and types / Parquet / ORC files on the
server's disk, split at max_file_size, with Doris's result row; refused unless fe.conf enable_outfile_to_local."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pymysql
import pytest

from tests.conftest import ServerProcess, free_port

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


@pytest.fixture
def out_server(tmp_path: Path):
    srv = ServerProcess(free_port(), tmp_path / "data", fe_overrides={
        "spark_prestart": "false", "insert_spark_threshold_mb": "64", "enable_outfile_to_local": "true"}).start()
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("USE d")
        cur.execute(f"CREATE TABLE t (k INT, s VARCHAR(10), v DECIMAL(10, 2), day DATE, at DATETIME) "
                    f"DUPLICATE KEY(k) {PROPS}")
        cur.execute("INSERT INTO t VALUES (1, 'a', 1.50, '2024-01-02', '2024-01-02 03:04:05'), "
                    "(2, NULL, NULL, NULL, NULL), (3, 'c,d', -2.00, '2024-12-31', '2024-12-31 23:59:59')")
    yield srv
    srv.stop()


def run(srv: ServerProcess, sql: str) -> list[tuple]:
    with srv.connect("d") as conn, conn.cursor() as cur:
        cur.execute(sql)
        assert [d[0] for d in cur.description] == ["FileNumber", "TotalRows", "FileSize", "URL"]
        return list(cur.fetchall())


def test_csv_and_its_variants(out_server, tmp_path) -> None:
    out = tmp_path / "out"
    [(files, total, size, url)] = run(out_server, f"SELECT * FROM t ORDER BY k INTO OUTFILE 'file://{out}/r_'")
    written = sorted(out.glob("r_*_0.csv"))
    assert (files, total) == ("1", "3") and len(written) == 1 and int(size) == written[0].stat().st_size
    assert url.startswith(f"file:///127.0.0.1{out}/r_")
    assert written[0].read_text() == ("1\ta\t1.50\t2024-01-02\t2024-01-02 03:04:05\n"
                                      "2\t\\N\t\\N\t\\N\t\\N\n"
                                      "3\tc,d\t-2.00\t2024-12-31\t2024-12-31 23:59:59\n")
    run(out_server, f"SELECT k, s FROM t WHERE k < 3 ORDER BY k INTO OUTFILE 'file://{out}/n_' FORMAT AS "
                    "CSV_WITH_NAMES_AND_TYPES PROPERTIES ('column_separator' = ',', 'line_delimiter' = '\\r\\n', "
                    "'success_file_name' = 'SUCCESS')")
    [named] = out.glob("n_*_0.csv")
    assert named.read_bytes() == b"k,s\r\nINT,VARCHAR\r\n1,a\r\n2,\\N\r\n"
    assert (out / "SUCCESS").exists()
    [(files, total, _, _)] = run(out_server, f"SELECT * FROM t WHERE k > 9 INTO OUTFILE 'file://{out}/e_'")
    assert (files, total) == ("1", "0") and [p.stat().st_size for p in out.glob("e_*")] == [0]


def test_parquet_orc_and_splitting(out_server, tmp_path) -> None:
    out = tmp_path / "cols"
    run(out_server, f"SELECT k, s, v FROM t ORDER BY k INTO OUTFILE 'file://{out}/p_' FORMAT AS PARQUET")
    [parquet] = out.glob("p_*_0.parquet")
    table = pq.read_table(parquet)
    assert table.column("k").to_pylist() == [1, 2, 3] and table.column("s").to_pylist() == ["a", None, "c,d"]
    run(out_server, f"SELECT k, day FROM t ORDER BY k INTO OUTFILE 'file://{out}/o_' FORMAT AS ORC")
    [orc_file] = out.glob("o_*_0.orc")
    assert orc.read_table(orc_file).column("k").to_pylist() == [1, 2, 3]
    with out_server.connect("d") as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t SELECT k + 10, repeat('x', 10), v, day, at FROM t")  # rows to split
        for _ in range(15):
            cur.execute("INSERT INTO t SELECT k + (SELECT max(k) FROM t), s, v, day, at FROM t")
    [(files, total, size, _)] = run(out_server, f"SELECT * FROM t INTO OUTFILE 'file://{out}/big_' PROPERTIES "
                                                "('max_file_size' = '5MB')")
    parts = sorted(out.glob("big_*.csv"))
    assert int(files) == len(parts) > 1 and int(total) == 6 * 2 ** 15
    assert sum(p.stat().st_size for p in parts) == int(size)
    assert all(p.stat().st_size <= 5 * 2 ** 20 + 200 for p in parts)
    assert sum(len(p.read_text().splitlines()) for p in parts) == int(total)


def test_refusals(out_server, server, tmp_path) -> None:
    with server.connect() as conn, conn.cursor() as cur, pytest.raises(pymysql.err.OperationalError,
                                                                        match="enable_outfile_to_local=true"):
        cur.execute(f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/x_'")  # the default server keeps Doris's default
    with out_server.connect("d") as conn, conn.cursor() as cur:
        for sql, message in (
            (f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/x_' FORMAT AS xml", "format:xml is not supported"),
            (f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/x_' PROPERTIES ('max_file_size' = '1KB')",
             "between 5MB and 2GB"),
            (f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/x_' PROPERTIES ('broker.name' = 'b')", "Unknown properties"),
            (f"SELECT 1 INTO OUTFILE 'file://{tmp_path}/x_' PROPERTIES ('delete_existing_files' = 'true')",
             "enable_delete_existing_files"),
            ("SELECT 1 INTO OUTFILE 's3://bucket/x_'", "file:///path"),
            ("SELECT * FROM nope INTO OUTFILE 'file:///tmp/x_'", "does not exist"),
        ):
            with pytest.raises(pymysql.err.MySQLError, match=message):
                cur.execute(sql)
        with pytest.raises(pymysql.err.ProgrammingError):
            cur.execute("SELECT 1 INTO OUTFILE")


def _wait_export(cur, label: str) -> dict:
    deadline = time.monotonic() + 60
    while True:
        cur.execute(f"SHOW EXPORT WHERE LABEL = '{label}'")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        if rows and rows[0]["State"] in ("FINISHED", "CANCELLED") or time.monotonic() > deadline:
            return rows[0]
        time.sleep(0.2)


def test_export_table(out_server, tmp_path) -> None:
    """EXPORT TABLE runs as a job: the statement returns at once, SHOW EXPORT follows it to FINISHED with the
    files in OutfileInfo; partitions, WHERE and columns choose the rows; labels are unique; errors are the
    job's ErrorMsg or the statement's."""
    out = tmp_path / "export"
    with out_server.connect("d") as conn, conn.cursor() as cur:
        cur.execute(f"EXPORT TABLE t WHERE k >= 2 TO 'file://{out}/' PROPERTIES ('label' = 'e1', "
                    "'columns' = 'k,s', 'column_separator' = ',')")
        job = _wait_export(cur, "e1")
        assert [d[0] for d in cur.description] == ["JobId", "Label", "State", "Progress", "TaskInfo", "Path",
                                                   "CreateTime", "StartTime", "FinishTime", "Timeout", "ErrorMsg",
                                                   "OutfileInfo"]
        assert (job["State"], job["Progress"], job["Path"]) == ("FINISHED", "100%", f"file://{out}/")
        task = json.loads(job["TaskInfo"])
        assert (task["columns"], task["format"], task["tbl"], task["partitions"]) == ("k,s", "csv", "t", ["*"])
        [[info]] = json.loads(job["OutfileInfo"])
        assert info["totalRows"] == "2"
        [written] = out.glob("*.csv")
        assert sorted(written.read_text().splitlines()) == ["2,\\N", "3,c,d"]
        cur.execute(f"SHOW EXPORT WHERE ID = {job['JobId']}")
        assert len(cur.fetchall()) == 1
        with pytest.raises(pymysql.err.OperationalError, match="has already been used"):
            cur.execute(f"EXPORT TABLE t TO 'file://{out}/' PROPERTIES ('label' = 'e1')")
        cur.execute(f"EXPORT TABLE t TO 'file://{tmp_path}/pq/' PROPERTIES ('label' = 'e2', 'format' = 'parquet')")
        assert _wait_export(cur, "e2")["State"] == "FINISHED"
        [parquet] = (tmp_path / "pq").glob("*.parquet")
        assert pq.read_table(parquet).num_rows == 3
        for sql, message in (
            (f"EXPORT TABLE t PARTITION (nope) TO 'file://{out}/'", "nope"),
            (f"EXPORT TABLE t TO 'file://{out}/' PROPERTIES ('columns' = 'zz')", "Unknown column"),
            (f"EXPORT TABLE t TO 'file://{out}/' PROPERTIES ('format' = 'xml')", "format:xml"),
            (f"EXPORT TABLE t TO 'file://{out}/' PROPERTIES ('bogus' = '1')", "Unknown properties"),
            (f"EXPORT TABLE missing TO 'file://{out}/'", "does not exist"),
        ):
            with pytest.raises(pymysql.err.MySQLError, match=message):
                cur.execute(sql)
        with pytest.raises(pymysql.err.OperationalError, match="no uncompleted job"):
            cur.execute("CANCEL EXPORT WHERE LABEL = 'e1'")
        with pytest.raises(pymysql.err.OperationalError, match="not exist"):
            cur.execute("CANCEL EXPORT WHERE LABEL = 'nope'")


def test_a_large_export_runs_on_spark(tmp_path) -> None:
    """Past export_spark_threshold_mb an EXPORT runs on Spark: `parallelism` tasks each write their own files at
    the job's snapshot, with the same text as the in-process path (OUTFILE of the same SELECT); PARTITION, WHERE
    and columns choose the rows."""
    srv = ServerProcess(free_port(), tmp_path / "data", fe_overrides={
        "spark_prestart": "false", "insert_spark_threshold_mb": "64", "enable_outfile_to_local": "true",
        "export_spark_threshold_mb": "0"}).start()
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE d")
            cur.execute("USE d")
            cur.execute("CREATE TABLE t (k INT, s VARCHAR(10), v DECIMAL(10, 2), day DATE, at DATETIME, f DOUBLE) "
                        "DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN (100), "
                        "PARTITION p2 VALUES LESS THAN (MAXVALUE)) DISTRIBUTED BY HASH(k) BUCKETS 3 "
                        "PROPERTIES ('replication_num' = '1')")
            cur.execute("INSERT INTO t VALUES " + ", ".join(
                f"({i}, {'NULL' if i % 7 == 0 else repr(f's{i}')}, {i}.25, '2024-01-{1 + i % 28:02d}', "
                f"'2024-02-03 04:05:{i % 60:02d}', {i / 8})" for i in range(200)))
            out = tmp_path / "spark_export"
            cur.execute(f"EXPORT TABLE t PARTITION (p1) WHERE k % 2 = 0 TO 'file://{out}/' PROPERTIES ("
                        "'label' = 'big', 'column_separator' = '|', 'parallelism' = '2')")
            job = _wait_export(cur, "big")
            assert job["State"] == "FINISHED", job["ErrorMsg"]
            infos = json.loads(job["OutfileInfo"])
            assert len(infos) == 2 and sum(int(i[0]["totalRows"]) for i in infos) == 50
            exported = sorted(line for f in out.glob("*.csv") for line in f.read_text().splitlines())
            cur.execute(f"SELECT * FROM t PARTITION (p1) WHERE k % 2 = 0 INTO OUTFILE 'file://{tmp_path}/ref/r_' "
                        "PROPERTIES ('column_separator' = '|')")
            reference = sorted(line for f in (tmp_path / "ref").glob("*.csv") for line in f.read_text().splitlines())
            assert exported == reference and len(exported) == 50
            assert "14|\\N|14.25|2024-01-15|2024-02-03 04:05:14|1.75" in exported
            cur.execute(f"EXPORT TABLE t TO 'file://{tmp_path}/pq/' PROPERTIES ('label' = 'pq', 'format' = 'parquet', "
                        "'columns' = 'k,v')")
            assert _wait_export(cur, "pq")["State"] == "FINISHED"
            tables = [pq.read_table(f) for f in (tmp_path / "pq").glob("*.parquet")]
            assert sum(t.num_rows for t in tables) == 200 and tables[0].column_names == ["k", "v"]
        log = srv.log.read_text() if srv.log is not None else ""
        assert "Spark started" in log
    finally:
        srv.stop()

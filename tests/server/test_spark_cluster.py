"""Loads on a real Spark cluster (issue 15): a standalone master and two workers started as separate processes
on this machine (pyspark's own `bin/spark-class`, loopback only), the server's fe.conf `spark_master` pointing
at it. INSERT ... SELECT from tables and files, a Stream Load big enough for Spark, a Spark Load and an EXPORT run
their tasks in the workers' executors (each worker's work folder holds the application's executor), and killing a
worker in the middle of a load still ends all or nothing."""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, free_port

pyspark = pytest.importorskip("pyspark")
SPARK_HOME = Path(pyspark.__file__).parent
PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 4 PROPERTIES ('replication_num' = '1')"


def _spark_env() -> dict[str, str]:
    from storage.spark.java_runtime import ensure_java_home

    return dict(os.environ, JAVA_HOME=str(ensure_java_home()), SPARK_HOME=str(SPARK_HOME),
                SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=_spark_env(),
                            stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)


def _wait_workers(webui: int, n: int, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as r:
                state = json.loads(r.read())
            if sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE") >= n:
                return state
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the Spark workers did not register")
        time.sleep(1)


class Cluster:
    def __init__(self, tmp: Path) -> None:
        self.port, self.webui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.tmp = tmp
        self.master = _start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                              str(self.port), "--webui-port", str(self.webui)], tmp / "master.log")
        self.workers = [self.worker(i) for i in range(2)]
        _wait_workers(self.webui, 2)

    def worker(self, i: int) -> subprocess.Popen:
        work = self.tmp / f"worker{i}"
        work.mkdir(exist_ok=True)
        return _start(["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1", "--cores", "1",
                       "--memory", "1500m", "--webui-port", str(free_port()), "--work-dir", str(work)],
                      self.tmp / f"worker{i}.log")

    def executor_folders(self, i: int) -> list[Path]:
        return [p for p in (self.tmp / f"worker{i}").glob("app-*/*") if p.is_dir()]

    def stop(self) -> None:
        for p in [*self.workers, self.master]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in [*self.workers, self.master]:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, ServerProcess]]:
    tmp = tmp_path_factory.mktemp("spark_cluster")
    spark = Cluster(tmp)
    srv = ServerProcess(free_port(), tmp / "data", fe_overrides={
        "spark_prestart": "false", "insert_spark_threshold_mb": "0", "stream_load_spark_threshold_mb": "0",
        "export_spark_threshold_mb": "0", "enable_outfile_to_local": "true", "spark_master": spark.url, "spark.executor.memory": "1g", "spark.executor.cores": "1",
        "spark.task.maxFailures": "8", "spark.sql.shuffle.partitions": "4"})
    srv.start()
    try:
        yield spark, srv
    finally:
        srv.stop()
        spark.stop()


def _put(port: int, path: str, body: bytes, headers: dict[str, str]) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("PUT", path, body=body, headers={**headers, "Authorization": "Basic " + base64.b64encode(
        b"root:").decode()})
    reply = json.loads(conn.getresponse().read())
    conn.close()
    return reply


def test_loads_run_on_the_cluster(cluster, tmp_path: Path) -> None:
    spark, srv = cluster
    csv = tmp_path / "rows.csv"
    csv.write_text("".join(f"{i},{i % 7}\n" for i in range(20000)))
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE c")
        cur.execute("USE c")
        cur.execute(f"CREATE TABLE src (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
        cur.execute(f"INSERT INTO src SELECT * FROM local('file_path' = '{csv}', 'format' = 'csv', "
                    "'column_separator' = ',')")
        cur.execute(f"CREATE TABLE dst (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
        cur.execute("INSERT INTO dst SELECT k, v * 2 FROM src WHERE k % 2 = 0")
        cur.execute("SELECT count(*), sum(v) FROM dst")
        assert cur.fetchone() == (10000, 2 * sum(i % 7 for i in range(0, 20000, 2)))
        reply = _put(srv.http_port, "/api/c/dst/_stream_load", b"".join(f"{i},1\n".encode() for i in range(
            20000, 25000)), {"column_separator": ","})
        assert (reply["Status"], reply["NumberLoadedRows"]) == ("Success", 5000), reply
        cur.execute(f"CREATE EXTERNAL RESOURCE 'cluster' PROPERTIES ('type' = 'spark', 'spark.master' = "
                    f"'{spark.url}')")
        cur.execute(f'LOAD LABEL sl (DATA INFILE("{csv}") INTO TABLE dst COLUMNS TERMINATED BY ",") '
                    'WITH RESOURCE "cluster"')
        deadline = time.monotonic() + 300
        while True:
            cur.execute("SHOW LOAD WHERE LABEL = 'sl'")
            state = cur.fetchone()[2]
            if state in ("FINISHED", "CANCELLED") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert state == "FINISHED"
        cur.execute("SELECT count(*) FROM dst")
        assert cur.fetchone() == (10000 + 5000 + 20000,)
        out = tmp_path / "export"
        cur.execute(f"EXPORT TABLE dst TO 'file://{out}/' PROPERTIES ('label' = 'ex', 'parallelism' = '2', "
                    "'column_separator' = ',')")
        deadline = time.monotonic() + 300
        while True:
            cur.execute("SHOW EXPORT WHERE LABEL = 'ex'")
            row = cur.fetchone()
            if row[2] in ("FINISHED", "CANCELLED") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert row[2] == "FINISHED", row[10]
        assert len(json.loads(row[11])) == 2  # one OutfileInfo entry per task
        lines = [line for f in out.glob("*.csv") for line in f.read_text().splitlines()]
        assert len(lines) == 35000 and sum(int(line.split(",")[1]) for line in lines) == \
            2 * sum(i % 7 for i in range(0, 20000, 2)) + 5000 + sum(i % 7 for i in range(20000))
    # the tasks ran in the workers' executors (the driver, inside the server, runs none on a spark:// master)
    assert spark.executor_folders(0) or spark.executor_folders(1)
    stderr = [p / "stderr" for i in range(2) for p in spark.executor_folders(i)]
    assert any(f.exists() and f.stat().st_size > 0 for f in stderr)


def test_a_worker_killed_mid_load_leaves_all_or_nothing(cluster, tmp_path: Path) -> None:
    spark, srv = cluster
    csv = tmp_path / "big.csv"
    n = 600_000
    csv.write_text("".join(f"{i},{i % 11}\n" for i in range(n)))
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS c")
        cur.execute("USE c")
        cur.execute(f"CREATE TABLE killed (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
    errors: list[Exception] = []

    def load() -> None:
        try:
            with srv.connect("c", read_timeout=600) as conn, conn.cursor() as cur:
                cur.execute(f"INSERT INTO killed SELECT * FROM local('file_path' = '{csv}', 'format' = 'csv', "
                            "'column_separator' = ',')")
        except Exception as e:  # noqa: BLE001 - the load may fail; it must not half land
            errors.append(e)

    runner = threading.Thread(target=load)
    runner.start()
    deadline = time.monotonic() + 120
    while not (spark.executor_folders(0) and spark.executor_folders(1)) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2)
    victim = spark.workers[1]
    os.killpg(victim.pid, signal.SIGKILL)  # the worker and its executor
    runner.join(600)
    assert not runner.is_alive()
    with srv.connect("c") as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM killed")
        (count,) = cur.fetchone()
    assert count in (0, n), f"half a load landed: {count} of {n} rows ({errors})"
    assert (count == n) == (not errors)
    spark.workers[1] = spark.worker(1)  # back for the other tests

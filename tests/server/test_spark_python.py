"""Spark loads from a server started the way a service is started: the console script in the environment's
`bin/`, not activated, from another folder, with a PATH whose `python3` / `python` are not the server's.

Spark's Python workers must run the server's own interpreter (unless PYSPARK_PYTHON or fe.conf chooses one),
and a worker that cannot run the project must say why, to the client and in SHOW LOAD, in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pymysql
import pytest

from tests.conftest import ServerProcess, free_port

DDL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"
# variables a login shell or an activated virtualenv would set: a service has none of them
_ACTIVATION = ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")


def console_script() -> Path:
    """`dorislite` beside the tests' interpreter: where `pip install -e .` put it (not resolved through
    symlinks, so a virtualenv's bin/ stays the virtualenv's)."""
    script = Path(sys.executable).parent / "dorislite"
    assert script.is_file(), f"{script} missing: install the project (pip install -e .) in this environment"
    return script


def service_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _ACTIVATION}
    env.update(extra)
    return env


def stub_pythons(folder: Path) -> tuple[Path, Path]:
    """A folder of `python3` / `python` that record being run and fail, and the record's path."""
    stubs, marker = folder / "stubs", folder / "stub-ran.txt"
    stubs.mkdir()
    for name in ("python3", "python"):
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\necho "not this python" >&2\nexit 3\n')
        stub.chmod(0o755)
    return stubs, marker


def start_service(tmp_path: Path, env: dict[str, str]) -> ServerProcess:
    workdir = tmp_path / "service"
    workdir.mkdir()
    return ServerProcess(free_port(), tmp_path / "data", command=(str(console_script()),), env=env,
                         cwd=workdir).start()


def show_load(cur, label: str) -> dict:
    cur.execute(f'SHOW LOAD WHERE LABEL = "{label}"')
    names = [d[0] for d in cur.description]
    (row,) = cur.fetchall()
    return dict(zip(names, row, strict=True))


def make_tables(cur) -> None:
    cur.execute("CREATE DATABASE svc")
    cur.execute("USE svc")
    cur.execute(f"CREATE TABLE src (k INT, v VARCHAR(10)) {DDL}")
    cur.execute(f"CREATE TABLE dst (k INT, v VARCHAR(10)) {DDL}")
    cur.execute("INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'c')")


def test_loads_run_the_servers_interpreter_not_the_path_python(tmp_path: Path) -> None:
    stubs, marker = stub_pythons(tmp_path)
    env = service_env(PATH=f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}")
    assert subprocess.run(["python3", "-c", "1"], env=env, capture_output=True).returncode == 3  # the stub
    marker.unlink()
    pq.write_table(pa.table({"k": pa.array([7, 8], pa.int32()), "v": ["x", "y"]}), tmp_path / "more.parquet")
    srv = start_service(tmp_path, env)
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            make_tables(cur)
            cur.execute("INSERT INTO dst WITH LABEL from_table SELECT k, v FROM src WHERE k >= 2")
            assert cur.rowcount == 2
            cur.execute(f"INSERT INTO dst WITH LABEL from_file SELECT * FROM local('file_path' = "
                        f"'{tmp_path / 'more.parquet'}', 'format' = 'parquet')")
            assert cur.rowcount == 2
            cur.execute("SELECT k, v FROM dst ORDER BY k")
            assert cur.fetchall() == ((2, "b"), (3, "c"), (7, "x"), (8, "y"))
            for label in ("from_table", "from_file"):
                job = show_load(cur, label)
                assert (job["State"], job["ErrorMsg"]) == ("FINISHED", None)
    finally:
        srv.stop()
    assert not marker.exists(), f"a python from PATH ran: {marker.read_text()}"
    assert "Python workers " + sys.executable in srv.log.read_text()


def test_a_worker_interpreter_without_the_project_says_why(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    srv = start_service(tmp_path, service_env(PYSPARK_PYTHON=str(bare / "bin" / "python")))
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            make_tables(cur)
            with pytest.raises(pymysql.err.OperationalError) as failure:
                cur.execute("INSERT INTO dst WITH LABEL bare_python SELECT * FROM src")
            code, message = failure.value.args
            assert code == 1105
            assert "No module named 'pyarrow'" in message or "No module named 'storage'" in message, message
            assert message.startswith("errCode = 2, detailMessage = Load failed on Spark: ModuleNotFoundError: ")
            assert str(bare / "bin" / "python") in message  # which interpreter, so the user can fix it
            assert "Traceback" not in message and "\n" not in message and "Py4J" not in message
            job = show_load(cur, "bare_python")
            assert job["State"] == "CANCELLED"
            assert job["ErrorMsg"].startswith("type:LOAD_RUN_FAIL; msg:Load failed on Spark: ModuleNotFoundError: ")
            assert message.removeprefix("errCode = 2, detailMessage = ") in job["ErrorMsg"]
            cur.execute("SELECT count(*) FROM dst")
            assert cur.fetchone() == (0,)
    finally:
        srv.stop()
    assert "Traceback (most recent call last)" in srv.log.read_text()  # the whole story is in the log

"""Fixtures: a real dorislite server in a subprocess (free port, temporary storage root) and clients."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ServerProcess:
    port: int
    storage: Path
    proc: subprocess.Popen | None = None
    log: Path | None = None
    http_port: int = 0  # the HTTP API's port (a free one unless set)
    fe_http_port: int = 0  # the FE HTTP API's port (fe.conf http_port; a free one unless set)
    conf: Path | None = None  # a folder with fe.conf / be.conf (default: the repository's conf/)
    command: tuple[str, ...] = (sys.executable, "-m", "server")  # how the server is started
    env: dict[str, str] | None = None  # the server's whole environment (default: the tests')
    cwd: Path = ROOT
    root_password: str | None = ""
    # fe.conf keys set over `conf`'s: tests start no Spark ahead of need, and their INSERT ... SELECT keeps to
    # the Spark path unless a test asks for the in-process one
    fe_overrides: dict[str, str] = field(default_factory=lambda: {"spark_prestart": "false",
                                                                  "insert_spark_threshold_mb": "0"})

    def _conf_dir(self) -> Path:
        source = self.conf or ROOT / "conf"
        target = self.storage.parent / f"conf-{self.port}"
        target.mkdir(parents=True, exist_ok=True)
        for name in ("fe.conf", "be.conf"):
            text = (source / name).read_text() if (source / name).exists() else ""
            if name == "fe.conf":
                text += "\n" + "".join(f"{k} = {v}\n" for k, v in self.fe_overrides.items())
            (target / name).write_text(text)
        return target

    def start(self, timeout: float = 60.0) -> ServerProcess:
        self.log = self.storage.parent / f"server-{self.port}.log"
        self.http_port = self.http_port or free_port()
        self.fe_http_port = self.fe_http_port or free_port()
        env = dict(self.env if self.env is not None else os.environ, PYTHONUNBUFFERED="1")
        if self.root_password is not None:  # root's password on a fresh storage root (None: one is generated)
            env["DORISLITE_ROOT_PASSWORD"] = self.root_password
        self.proc = subprocess.Popen(
            [*self.command, "serve", "--port", str(self.port), "--storage", str(self.storage),
             "--http-port", str(self.http_port), "--fe-http-port", str(self.fe_http_port), "--conf", str(self._conf_dir())],
            cwd=self.cwd, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def connect(self, db: str | None = None, **kw) -> pymysql.connections.Connection:
        kw.setdefault("user", "root")
        kw.setdefault("password", "")
        return pymysql.connect(host="127.0.0.1", port=self.port, database=db, autocommit=True, **kw)


def own_database(server: ServerProcess) -> Iterator:
    """A cursor on a new database of `server` (USE'd), dropped afterwards: a fixture's body."""
    conn = server.connect()
    with conn.cursor() as c:
        name = f"d{time.monotonic_ns()}"
        c.execute(f"CREATE DATABASE {name}")
        c.execute(f"USE {name}")
        yield c
        c.execute(f"DROP DATABASE {name}")
    conn.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = ServerProcess(free_port(), tmp_path_factory.mktemp("dorislite") / "data").start()
    yield srv
    srv.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of the test's own, for restarts and kills."""
    srv = ServerProcess(free_port(), tmp_path / "data").start()
    yield srv
    srv.stop()


@pytest.fixture
def db(server: ServerProcess) -> Iterator[str]:
    """A new database for one test, dropped afterwards."""
    name = "t_" + uuid.uuid4().hex[:10]
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    yield name
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {name}")


@pytest.fixture
def cur(server: ServerProcess, db: str):
    conn = server.connect(db)
    with conn.cursor() as c:
        yield c
    conn.close()

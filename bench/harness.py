"""What the benchmarks share: best-of timing, a scratch folder, a storage engine with database `db`, and a
dorislite server subprocess."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from storage.engine import StorageEngine


def best_of(fn: Callable[[], Any], repeat: int, budget: float = 0.0) -> tuple[float, Any]:
    """The best wall time (seconds) of at least `repeat` runs of `fn`, and of as many more as fit in `budget`
    seconds (sub-millisecond queries: a handful of runs is at the mercy of one GC pause), with the last
    run's result."""
    best, out, spent, runs = float("inf"), None, 0.0, 0
    while runs < repeat or (spent < budget and runs < 1000):
        t0 = time.perf_counter()
        out = fn()
        took = time.perf_counter() - t0
        best, spent, runs = min(best, took), spent + took, runs + 1
    return best, out


def run_threads(threads: list[threading.Thread]) -> float:
    """Start every thread, wait for all; the seconds they took together."""
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary folder, removed afterwards whatever happens."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_engine(root: Path, conf: Mapping[str, str] | None = None) -> StorageEngine:
    """An opened storage engine under `root` whose catalog holds the database `db`."""
    engine = StorageEngine(root, conf)
    engine.open()
    engine.catalog.create_database("db")
    return engine


ROOT = Path(__file__).resolve().parent.parent


def report(out: Path, lines: list[str]) -> str:
    """Write a bench's markdown to `out` (bench/out/...) and print it."""
    text = "\n".join(lines) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    return text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_spark(log: Path, timeout: float = 300) -> None:
    """Until the server's log says Spark started (spark_prestart), so a timing does not include its start."""
    deadline = time.monotonic() + timeout
    while "Spark started" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.5)


@contextmanager
def dorislite_server(storage: Path, timeout: float = 60.0, fe_overrides: Mapping[str, str] | None = None
                     ) -> Iterator[tuple[int, subprocess.Popen]]:
    """A dorislite server subprocess on a free port; yields (port, process), stops it (SIGTERM) after.
    `fe_overrides`: fe.conf keys set over the repository's conf/."""
    port, http_port, fe_http_port = free_port(), free_port(), free_port()
    log = storage.parent / "server.log"
    conf = storage.parent / f"conf-{port}"
    conf.mkdir(parents=True, exist_ok=True)
    for name in ("fe.conf", "be.conf"):
        text = (ROOT / "conf" / name).read_text()
        if name == "fe.conf":
            text += "\n" + "".join(f"{k} = {v}\n" for k, v in (fe_overrides or {}).items())
        (conf / name).write_text(text)
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--port", str(port), "--storage", str(storage),
         "--http-port", str(http_port), "--fe-http-port", str(fe_http_port), "--conf", str(conf)],
        cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1", DORISLITE_ROOT_PASSWORD=""), stdout=log.open("ab"),
        stderr=subprocess.STDOUT)
    proc.http_port = http_port  # type: ignore[attr-defined]  # the HTTP API (Stream Load, compaction)
    proc.fe_http_port = fe_http_port  # type: ignore[attr-defined]  # the FE HTTP API (the console, /metrics)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not start") from None
                time.sleep(0.1)
        yield port, proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

"""The process-wide SparkSession used by loads: started lazily on first use, then reused.

Settings come from fe.conf: `spark_master` (default `local[*]`; a `spark://host:7077` standalone master or
any other master URL is configuration, not code), `spark_driver_memory` (default `2g`, the JVM heap of the
driver, which in local mode is also where the tasks run), and every key starting with `spark.`, passed to
the builder verbatim (so `spark.executor.memory`, `spark.sql.shuffle.partitions` … work as in Spark).
With a cluster master the storage root must be on a filesystem every executor sees at the same path:
tasks write segments straight into the transaction's staging folder.

Spark's Python workers run this server's own interpreter (`sys.executable`), so a server started from a
virtualenv's `bin/` without activating it loads as it queries; PySpark alone would start whatever `python3`
comes first on PATH. fe.conf `spark.pyspark.python`, else $PYSPARK_PYTHON, chooses another one (on a cluster,
the interpreter must exist at that path on every worker). When the project runs from a source checkout rather
than an installed package, the checkout is added to the workers' PYTHONPATH too.

Cost (measured on the 2-core test machine, local[2]): the first `spark_session()` call takes 4.6–8 s
(JVM start + Spark context; see `last_startup_seconds()`), the first job about 3–4 s more, a warm small job
0.2–0.3 s. The JVM's heap is capped by `spark_driver_memory` (2 GB by default); its resident size is
about 0.5 GB idle and 1.3 GB after a 5M-row load. `stop_spark()` gives it all back.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from storage.spark.java_runtime import ensure_java_home

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
DEFAULT_DRIVER_MEMORY = "2g"
# Writers get large Arrow batches: fewer Python<->JVM round trips and bigger vectorized steps per task.
ARROW_BATCH_ROWS = "100000"

_lock = threading.Lock()
_session: SparkSession | None = None
_startup_seconds: float | None = None


def _local_zone() -> str:
    """The server's time zone name (Spark's session zone must match what the server shows users):
    $TZ, else the zoneinfo name /etc/localtime points to, else the current UTC offset."""
    if os.environ.get("TZ"):
        return os.environ["TZ"].lstrip(":")
    try:
        target = str(Path("/etc/localtime").resolve())
        if "zoneinfo/" in target:
            return target.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    offset = -time.altzone if time.daylight and time.localtime().tm_isdst else -time.timezone
    sign = "+" if offset >= 0 else "-"
    offset = abs(offset)
    return f"{sign}{offset // 3600:02d}:{offset % 3600 // 60:02d}"


def worker_python(settings: Mapping[str, str] | None = None) -> str:
    """The interpreter Spark's Python workers run: fe.conf `spark.pyspark.python` (Spark's own precedence
    puts the setting before the environment), else $PYSPARK_PYTHON, else the server's interpreter."""
    chosen = (settings or {}).get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    return str(chosen or sys.executable or "python3")


def _project_path() -> str | None:
    """The folder holding the project's packages when it is a source checkout (an installed package is on
    the interpreter's own path already, and adding all of site-packages would hide a chosen interpreter's
    missing modules)."""
    root = Path(__file__).resolve().parent.parent.parent
    return None if root.name in ("site-packages", "dist-packages") else str(root)


def spark_conf(settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Spark configuration built from fe.conf settings (exposed for SHOW/testing)."""
    settings = dict(settings or {})
    conf = {
        "spark.master": settings.get("spark_master") or DEFAULT_MASTER,
        "spark.driver.memory": settings.get("spark_driver_memory") or DEFAULT_DRIVER_MEMORY,
        "spark.app.name": "dorislite-load",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": _local_zone(),
        "spark.sql.execution.arrow.maxRecordsPerBatch": ARROW_BATCH_ROWS,
        "spark.sql.python.filterPushdown.enabled": "true",
        "spark.sql.shuffle.partitions": "8",
        "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    }
    conf.update({k: str(v) for k, v in settings.items() if k.startswith("spark.")})
    conf["spark.pyspark.python"] = worker_python(settings)
    project = _project_path()
    if project:
        paths = [p for p in conf.get("spark.executorEnv.PYTHONPATH", "").split(os.pathsep) if p]
        conf["spark.executorEnv.PYTHONPATH"] = os.pathsep.join([*paths, project] if project not in paths else paths)
    return conf


def spark_session(settings: Mapping[str, str] | None = None) -> SparkSession:
    """The lazily started, shared SparkSession (settings apply to the first call only)."""
    global _session, _startup_seconds
    with _lock:
        if _session is not None:
            return _session
        ensure_java_home()
        from pyspark.sql import SparkSession

        from storage.spark.arrow_tasks import ArrowTasksDataSource
        from storage.spark.datasource import DorisLiteDataSource

        started = time.monotonic()
        conf = spark_conf(settings)
        # PySpark (SparkContext.pythonExec, carried by every Python function it ships, the data source
        # included) and the JVM (its own Python helpers) both take the interpreter from $PYSPARK_PYTHON
        # alone, else "python3" on PATH; the JVM inherits this process's environment when it starts
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        for name in ("py4j", "pyspark"):
            logging.getLogger(name).setLevel(logging.WARNING)
        session.dataSource.register(DorisLiteDataSource)
        session.dataSource.register(ArrowTasksDataSource)
        _startup_seconds = time.monotonic() - started
        log.info("Spark started in %.1f s (master %s, Python workers %s)", _startup_seconds,
                 session.sparkContext.master, conf["spark.pyspark.python"])
        _session = session
        return session


def spark_started() -> bool:
    return _session is not None


def last_startup_seconds() -> float | None:
    return _startup_seconds


def stop_spark() -> None:
    """Stop the shared session (server shutdown); the next spark_session() starts a new one."""
    global _session
    with _lock:
        if _session is not None:
            try:
                _session.stop()
            finally:
                _session = None

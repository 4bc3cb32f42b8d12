"""The dorislite process: storage engine, users, global variables, the MySQL endpoint and the HTTP API,
wired together."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from planner.duck.database import use_spill_directory
from planner.loads.convert import convert_column
from planner.loads.pipeline import spark_available
from server.access import AccessControl
from server.audit import AuditLog
from server.config import Config
from server.fe_http import FrontendApi
from server.http_api import CompactionApi, HttpApiServer
from server.loads.stream_load import StreamLoadApi
from server.metrics import backend_metrics
from server.protocol.admission import give_way
from server.protocol.server import MysqlServer
from server.session import Session, SessionContext
from server.tls import self_signed, server_context
from server.variables import GlobalVariables
from sql.types import parse_type
from storage import workers
from storage.engine import StorageEngine

log = logging.getLogger("dorislite")


class DorisLite:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.root = Path(config.get("meta_dir", "data")).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.engine = StorageEngine(self.root, config.be)
        self.engine.arrow_type = lambda text: parse_type(text).arrow_type()  # segments read through schema changes
        self.engine.convert = convert_column  # a schema change's rows converted to their new types
        workers.before_wait = give_way  # a statement about to wait for a worker process gives its turn up
        use_spill_directory(str(self.root / "tmp" / "duckdb"))
        self.engine.catalog.max_buckets_per_partition = config.get_int("max_bucket_num_per_partition", 768)
        self.engine.catalog.max_running_txn_num_per_db = config.get_int("max_running_txn_num_per_db", 1000)
        self.users = AccessControl(self.engine.catalog)
        generated = self.users.bootstrap(_initial_root_password(config), self.root / "users.json")
        if generated is not None:  # the one time it is shown: a fresh server has no open account
            message = (f"first start: the password of 'root' is {generated} (change it with SET PASSWORD; set "
                       "fe.conf root_password or DORISLITE_ROOT_PASSWORD before the first start to choose it)")
            print(f"dorislite: {message}", flush=True)
        self.globals = GlobalVariables()
        self.globals.values["port"] = config.get_int("query_port", 9030)
        self.globals.values["max_connections"] = config.get_int("qe_max_connection", 1024)
        self.context = SessionContext(config=config, engine=self.engine, users=self.users, globals=self.globals)
        audit_dir = config.get("audit_log_dir", "") or str(self.root.parent / "log")
        self.context.audit = AuditLog(Path(audit_dir), config.get_int("audit_log_roll_size_mb", 1024),
                                      config.get_int("audit_log_roll_num", 90))
        self.host = config.get("priority_networks", "127.0.0.1") or "127.0.0.1"
        self.server = MysqlServer(
            handler_factory=lambda info: Session(self.context, info),
            user_store=self.users,
            host=self.host,
            port=config.get_int("query_port", 9030),
            max_connections=config.get_int("qe_max_connection", 1024),
            handshake_timeout=config.get_int("handshake_timeout_second", 10),
            max_allowed_packet=config.get_int("max_allowed_packet", 16 * 1024 * 1024),
        )
        self.context.server = self.server
        if config.get_bool("enable_ssl", False):
            cert, key = config.get("mysql_ssl_default_server_certificate", ""), config.get(
                "mysql_ssl_default_server_key", "")
            paths = (Path(cert), Path(key)) if cert and key else self_signed(self.root / "tls", self.host)
            self.server.ssl_context = server_context(*paths)
            self.server.require_secure_transport = config.get_bool("require_secure_transport", False)
        be_api = CompactionApi(self.context.compaction, self.users, metrics=lambda: backend_metrics(self.context))
        self.http = HttpApiServer(be_api, self.host,
                                  config.get_int("webserver_port", 8040), stream_api=StreamLoadApi(self.context))
        self.fe_http = HttpApiServer(FrontendApi(self.context), self.host, config.get_int("http_port", 8030),
                                     name="http_port")

    @property
    def port(self) -> int:
        return self.server.port

    async def start(self) -> None:
        self.engine.open()
        replayed = self.context.group_commits.replay()  # acknowledged group-commit rows a kill -9 left in the log
        if replayed:
            log.info("group commit: %d logged rows loaded", replayed)
        self.context.group_commits.start()
        await self.http.start()
        await self.fe_http.start()
        self.context.http_base = f"http://{self.host}:{self.http.port or self.http.requested_port}"
        self.context.fe_http_port = self.fe_http.port or self.fe_http.requested_port
        await self.server.start()
        if self.config.get_bool("spark_prestart", True) and spark_available():
            threading.Thread(target=_prestart_spark, args=(dict(self.config.fe),), name="spark-prestart",
                             daemon=True).start()

    async def stop(self) -> None:
        await self.server.stop()
        await self.http.stop()
        await self.fe_http.stop()
        if self.context.audit is not None:
            self.context.audit.close()
        self.context.group_commits.stop()
        self.context.compaction.stop()
        workers.shutdown()
        self.context.console_history.stop()
        self.context.loads.close()
        self.engine.close()
        log.info("dorislite stopped")


def _prestart_spark(settings: dict[str, str]) -> None:
    """Start Spark's JVM and run one tiny job while the server is idle: the first INSERT ... SELECT on Spark
    would otherwise wait for both (5-12 s on two cores)."""
    from storage.spark.session import spark_session

    try:
        spark_session(settings).range(1).count()
    except Exception:  # noqa: BLE001 - no Java, a cluster not up yet: the first load starts it (and says why)
        log.warning("Spark did not start ahead of the first load", exc_info=True)


def _initial_root_password(config: Config) -> str | None:
    """root's password on a fresh storage root: DORISLITE_ROOT_PASSWORD (even empty), else fe.conf
    root_password when set, else None (one is generated)."""
    if "DORISLITE_ROOT_PASSWORD" in os.environ:
        return os.environ["DORISLITE_ROOT_PASSWORD"]
    return config.get("root_password", "") or None

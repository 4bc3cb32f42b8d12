"""The dynamic partition scheduler thread (FE): every `dynamic_partition_check_interval_seconds` it runs
storage.partition_policy.scheduler's pass while `dynamic_partition_enable` is true; both keys, like
`max_dynamic_partition_num` and the debug clock, change at runtime with ADMIN SET FRONTEND CONFIG.

`dynamic_partition_debug_current_time` (fe.conf, 'yyyy-MM-dd HH:mm:ss' in the server's time zone, empty
for the real clock) is the "now" the scheduler plans with, so tests and demos can walk through days.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime

from server.config import Config
from storage.catalog.model import OlapTable
from storage.engine import StorageEngine
from storage.errors import StorageError
from storage.partition_policy.buckets import BucketPolicy
from storage.partition_policy.dynamic_partition import (
    PREFIX,
    SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS,
    parse_dynamic_partition_properties,
    show_dynamic_partition_row,
    stored_properties,
)
from storage.partition_policy.scheduler import DynamicPartitionScheduler, RuntimeInfo, dynamic_property

__all__ = ["SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS", "DynamicPartitions"]

log = logging.getLogger("dorislite.dynamic_partition")

DEBUG_CLOCK_KEY = "dynamic_partition_debug_current_time"


class DynamicPartitions:
    def __init__(self, engine: StorageEngine, config: Config) -> None:
        self.engine = engine
        self.config = config
        self.scheduler = DynamicPartitionScheduler(engine.catalog, self.bucket_policy, self.now)
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pass = threading.Lock()  # one pass at a time: the background loop's or a statement's

    def now(self) -> datetime:
        text = self.config.get(DEBUG_CLOCK_KEY, "").strip()
        if text:
            try:
                return datetime.fromisoformat(text).astimezone()
            except ValueError:
                log.warning("ignoring %s = %r: not yyyy-MM-dd HH:mm:ss", DEBUG_CLOCK_KEY, text)
        return datetime.now(UTC)

    def bucket_policy(self) -> BucketPolicy:
        return BucketPolicy.from_settings(self.config.get, self.engine.root)

    @property
    def max_partitions(self) -> int:
        return self.config.get_int("max_dynamic_partition_num", 500)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="dynamic-partition-scheduler", daemon=True)
            self._thread.start()

    def kick(self) -> None:
        """Run a pass now (a config change, a table switched to dynamic)."""
        self._wake.set()

    def run_pass(self) -> None:
        """One scheduling pass over every dynamic table, now, in the caller's thread (ADMIN SET FRONTEND
        CONFIG of the clock returns after it, so what it changes is visible to the next statement)."""
        if not self.config.get_bool("dynamic_partition_enable", True):
            return
        with self._pass:
            try:
                self.scheduler.run_once()
            except Exception:  # noqa: BLE001 - the scheduler must outlive any one failure
                log.exception("dynamic partition scheduler pass failed")

    def _loop(self) -> None:
        self.engine.opened.wait()
        while True:
            self.run_pass()
            interval = max(1, self.config.get_int("dynamic_partition_check_interval_seconds", 600))
            self._wake.wait(interval)
            self._wake.clear()

    # -- statements ------------------------------------------------------------------------------------
    def after_create(self, table: OlapTable) -> None:
        """The first scheduling pass runs inside CREATE TABLE; when Doris would fail the statement, the table
        goes again (nothing half-created)."""
        prop = dynamic_property(table)
        if prop is None or not prop.enable:
            return
        try:
            self.scheduler.run_table(table.table_id, first_run=True)
        except StorageError:
            db = next((d for d in self.engine.catalog.list_databases() if d.db_id == table.db_id), None)
            if db is not None:
                self.engine.catalog.drop_table(db.name, table.name, if_exists=True)
            raise

    def alter_properties(self, table: OlapTable, db_name: str, given: Mapping[str, str]) -> OlapTable:
        """ALTER TABLE t SET ("dynamic_partition.*" = ...): checked against the table's current property
        with Doris's rules, stored, and scheduled at once (switching dynamic <-> manual included)."""
        column_names = list(table.partition_info.columns)
        column_types = [table.column(n).type for n in column_names]  # type: ignore[union-attr]
        prop = parse_dynamic_partition_properties(
            given, column_types, table.partition_info.type, self.max_partitions, dynamic_property(table),
            partition_column_names=column_names,
            table_buckets=None if table.distribution.auto else table.distribution.buckets,
            table_name=f"{db_name}.{table.name}")
        assert prop is not None
        kept = [(k, v) for k, v in table.properties if not k.startswith(PREFIX)]
        updated = self.engine.catalog.set_table_properties(table.table_id, kept + stored_properties(prop))
        if prop.enable:
            self.scheduler.run_table(table.table_id)
        return updated

    def show_rows(self, db_name: str) -> list[tuple]:
        """SHOW DYNAMIC PARTITION TABLES: every table of `db_name` with dynamic partition properties."""
        rows = []
        for table in self.engine.catalog.list_tables(db_name):
            prop = dynamic_property(table)
            if prop is None:
                continue
            info = self.scheduler.info.get(table.table_id, RuntimeInfo())
            allocation = table.props.get("replication_allocation", "tag.location.default: 1")
            rows.append(show_dynamic_partition_row(
                prop, table.name, allocation, table.distribution.buckets,
                last_update_time=info.last_update_time, last_scheduler_time=info.last_scheduler_time,
                state=info.state, last_create_msg=info.last_create_msg, last_drop_msg=info.last_drop_msg))
        return rows

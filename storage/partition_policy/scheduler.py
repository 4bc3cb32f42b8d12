"""The dynamic partition scheduler's pass (Doris's DynamicPartitionScheduler): for every table whose
`dynamic_partition.enable` is true, add the partitions from the history start to `end` and drop those
entirely before `start` (storage.partition_policy.dynamic_partition plans it), and remember per table what
SHOW DYNAMIC PARTITION TABLES reports. The thread that calls `run_once` lives in the server.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from storage.catalog.model import OlapTable, PartitionItem
from storage.catalog.store import Catalog
from storage.errors import StorageError
from storage.partition_policy.buckets import BucketPolicy
from storage.partition_policy.dynamic_partition import DynamicPartitionProperty, property_from_strings
from storage.partition_policy.dynamic_plan import plan_dynamic_partitions

log = logging.getLogger("dorislite.dynamic_partition")


@dataclass
class RuntimeInfo:
    """The per-table columns of SHOW DYNAMIC PARTITION TABLES that only the scheduler knows."""

    last_update_time: str | None = None
    last_scheduler_time: str | None = None
    state: str = "NORMAL"
    last_create_msg: str | None = None
    last_drop_msg: str | None = None


def dynamic_property(table: OlapTable) -> DynamicPartitionProperty | None:
    return property_from_strings(table.props)


def _fmt(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


class DynamicPartitionScheduler:
    """`clock()` gives the scheduler's now (aware); `policy()` the bucket policy of the moment (fe.conf
    and be.conf may change at runtime)."""

    def __init__(self, catalog: Catalog, policy: Callable[[], BucketPolicy],
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.catalog = catalog
        self.policy = policy
        self.clock = clock
        self.info: dict[int, RuntimeInfo] = {}
        self._lock = threading.Lock()  # one pass at a time (thread, CREATE TABLE, ALTER, tests)

    def run_once(self) -> None:
        for db in self.catalog.list_databases():
            for table in self.catalog.list_tables(db.name):
                prop = dynamic_property(table)
                if prop is None or not prop.enable:
                    continue
                try:
                    self.run_table(table.table_id)
                except Exception:  # noqa: BLE001 - one table's failure must not stop the others
                    log.exception("dynamic partition pass failed for table %s", table.name)

    def run_table(self, table_id: int, first_run: bool = False) -> None:
        """One pass over one table. `first_run` (inside CREATE TABLE): a failure Doris raises there is
        raised as a StorageError instead of being recorded."""
        with self._lock:
            table = self.catalog.get_table_by_id(table_id)
            if table is None:
                return
            prop = dynamic_property(table)
            if prop is None or not prop.enable:
                return
            info = self.info.setdefault(table_id, RuntimeInfo())
            now = self.clock()
            column = table.column(table.partition_info.columns[0]) if table.partition_info.columns else None
            existing = [(p.name, p.item.lower, p.item.upper) for p in table.partitions]
            plan = plan_dynamic_partitions(prop, column.type if column else "", existing, now)
            if first_run and plan.first_run_error:
                raise StorageError(plan.first_run_error)
            started = time.time()
            info.last_scheduler_time = _fmt(started)
            info.state = "NORMAL"
            if plan.to_add:
                self._add(table, prop, plan.to_add, now, info)
            info.last_create_msg = "; ".join(plan.errors) if plan.errors else plan.last_create_msg
            if plan.to_drop:
                try:
                    self.catalog.drop_partitions(table_id, plan.to_drop, if_exists=True)
                    info.last_drop_msg = None
                except StorageError as e:
                    info.state = "ERROR"
                    info.last_drop_msg = e.message
            if plan.drop_errors:
                info.last_drop_msg = "; ".join(plan.drop_errors)
            info.last_update_time = _fmt(time.time())

    def _add(self, table: OlapTable, prop: DynamicPartitionProperty, planned: list, now: datetime,
             info: RuntimeInfo) -> None:
        policy = self.policy()
        # the partition holding `now` is the current one, filling still: not a size sample for auto buckets
        bounds = [(p.name, p.lower, p.upper) for p in planned]
        bounds += [(p.name, p.item.lower[0], p.item.upper[0]) for p in table.partitions
                   if p.item.lower and p.item.upper]
        current = next((name for name, lo, hi in bounds if lo <= _bound_text(now, prop, lo) < hi), None)
        # one partition at a time: each added auto-bucket partition is sized from the ones before it
        for p in planned:
            fresh = self.catalog.get_table_by_id(table.table_id) or table
            buckets = policy.for_new_partition(fresh, current, prop.buckets)
            item = PartitionItem(p.name, lower=(p.lower,), upper=(p.upper,), buckets=buckets)
            try:
                self.catalog.add_partitions(table.table_id, [item], [buckets])
            except StorageError as e:
                info.state = "ERROR"
                info.last_create_msg = e.message


def _bound_text(now: datetime, prop: DynamicPartitionProperty, like: str) -> str:
    """`now` in the table's time zone, formatted like the partition bound `like` so they compare as text."""
    local = now.astimezone(prop.tzinfo)
    if len(like) == 8 and like.isdigit():  # integer partition columns: yyyyMMdd
        return local.strftime("%Y%m%d")
    if len(like) == 10:
        return local.strftime("%Y-%m-%d")
    return local.strftime("%Y-%m-%d %H:%M:%S") + like[19:]

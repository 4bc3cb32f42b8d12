"""The state machine every ALTER job shares (Doris's AlterJobV2): PENDING → WAITING_TXN → RUNNING → FINISHED,
or CANCELLED on timeout, CANCEL or DROP TABLE. Subclasses say what starting, running and cancelling mean for
their kind of job (storage.jobs.rollup, storage.jobs.schema_change); steps are driven from outside
(server.alter_jobs runs them on a thread, tests call `step` by hand)."""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from storage.catalog.model import JOB_PENDING, JOB_RUNNING, JOB_WAITING_TXN, OlapTable, Partition
from storage.catalog.rollup_jobs import JobStateChanged
from storage.catalog.store import Catalog

log = logging.getLogger(__name__)

TIMEOUT_MSG = "Timeout"

J = TypeVar("J", bound=Any)  # a frozen job record with job_id, table_id, state, done, create_time, timeout_second


class AlterJobRunner(ABC, Generic[J]):
    kind = "alter"
    catalog: Catalog

    @abstractmethod
    def _start(self, job: J) -> J:
        """PENDING's work; returns the job in WAITING_TXN."""

    @abstractmethod
    def _set_state(self, job: J, old: str, new: str) -> J:
        ...

    @abstractmethod
    def _get(self, job_id: int) -> J | None:
        ...

    @abstractmethod
    def _run(self, job: J) -> J:
        """RUNNING's work, as far as it can go in one step."""

    @abstractmethod
    def cancel(self, job: J, msg: str) -> J:
        ...

    def step(self, job: J) -> J:
        """One transition; returns the job as the catalog now holds it. A CANCEL or DROP TABLE between two
        steps wins: the next catalog commit of the job finds the state changed (JobStateChanged)."""
        if job.done:
            return job
        try:
            if time.time() > job.create_time + job.timeout_second:
                return self.cancel(job, TIMEOUT_MSG)
            if job.state == JOB_PENDING:
                return self._start(job)
            if job.state == JOB_WAITING_TXN:
                if self.catalog.prepared_txns_below(job.table_id, job.watershed_txn_id):
                    return job
                return self._set_state(job, JOB_WAITING_TXN, JOB_RUNNING)
            if job.state == JOB_RUNNING:
                return self._run(job)
        except JobStateChanged as e:
            log.info("%s job %s stopped: %s", self.kind, job.job_id, e)
            current = self._get(job.job_id)
            if current is not None and not current.done and self.catalog.get_table_by_id(job.table_id) is None:
                return self.cancel(current, "table was dropped")
            return current or job
        return job

    def _backfill_partitions(self, job: J, backfill: Callable[[J, OlapTable, Partition], J],
                             finish: Callable[[int], J]) -> J:
        """RUNNING for a job that builds indexes (a rollup, a rewrite's shadows): back-fill each partition not yet
        done (`job.backfilled`), then `finish` (which leaves the job RUNNING if a partition appeared meanwhile)."""
        table = self.catalog.get_table_by_id(job.table_id)
        if table is None:
            raise JobStateChanged(f"table {job.table_name} was dropped")
        done = {pid for pid, _ in job.backfilled}
        for partition in table.partitions:
            if partition.partition_id not in done:
                job = backfill(job, table, partition)
        return finish(job.job_id)

    def _now(self, partition: Partition) -> tuple[OlapTable, Partition]:
        """The table and the partition as the catalog holds them now (a load may have published since the job
        listed the partitions); JobStateChanged when either is gone."""
        table = self.catalog.get_table_by_id(partition.table_id)
        fresh = next((p for p in table.partitions if p.partition_id == partition.partition_id), None) \
            if table is not None else None
        if table is None or fresh is None:
            raise JobStateChanged(f"partition {partition.name} no longer exists")
        return table, fresh

    def run_to_end(self, job: J, max_steps: int = 100) -> J:
        """Step until the job is done or blocked (WAITING_TXN with loads still running)."""
        for _ in range(max_steps):
            nxt = self.step(job)
            if nxt.done or nxt == job:
                return nxt
            job = nxt
        return job

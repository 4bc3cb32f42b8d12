"""How ALTER jobs are persisted: one SQLite table per job kind (rollups in `alter_jobs`, index schema changes
in `schema_change_jobs`), a row per job holding its dataclass as JSON, with the columns the lookups filter
on (db, table, state) beside it. Every job kind reads and writes through one `JobTable`."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Generic, TypeVar

from storage.catalog.model import (
    JOB_CANCELLED,
    JOB_FINISHED,
    Column,
    RollupJob,
    RollupSpec,
    SchemaChangeJob,
)

J = TypeVar("J")


@dataclass(frozen=True)
class JobTable(Generic[J]):
    name: str
    decode: Callable[[dict[str, Any]], J]  # the JSON record (a dict) -> the job

    @property
    def schema(self) -> str:
        return (f"CREATE TABLE IF NOT EXISTS {self.name} (job_id INTEGER PRIMARY KEY, db_id INTEGER NOT NULL, "
                f"table_id INTEGER NOT NULL, state TEXT NOT NULL, record TEXT NOT NULL);\n"
                f"CREATE INDEX IF NOT EXISTS {self.name}_by_table ON {self.name} (table_id)")

    def save(self, c: sqlite3.Connection, job: Any) -> None:
        c.execute(f"INSERT OR REPLACE INTO {self.name} VALUES (?, ?, ?, ?, ?)",
                  (job.job_id, job.db_id, job.table_id, job.state,
                   json.dumps(asdict(job), ensure_ascii=False, separators=(",", ":"))))

    def get(self, c: sqlite3.Connection, job_id: int) -> J | None:
        row = c.execute(f"SELECT record FROM {self.name} WHERE job_id = ?", (job_id,)).fetchone()
        return None if row is None else self.decode(json.loads(row[0]))

    def jobs(self, c: sqlite3.Connection, db_id: int | None = None, table_id: int | None = None) -> list[J]:
        """In job id order, of one database and / or table if given."""
        sql, args = f"SELECT record FROM {self.name} WHERE 1 = 1", []
        if db_id is not None:
            sql, args = sql + " AND db_id = ?", [*args, db_id]
        if table_id is not None:
            sql, args = sql + " AND table_id = ?", [*args, table_id]
        return [self.decode(json.loads(r[0])) for r in c.execute(sql + " ORDER BY job_id", args).fetchall()]

    def unfinished(self, c: sqlite3.Connection, table_id: int) -> list[J]:
        return [self.decode(json.loads(r[0])) for r in c.execute(
            f"SELECT record FROM {self.name} WHERE table_id = ? AND state NOT IN (?, ?)",
            (table_id, JOB_FINISHED, JOB_CANCELLED)).fetchall()]


def _rollup_job(d: dict[str, Any]) -> RollupJob:
    r = d.pop("rollup")
    spec = RollupSpec(r["name"], tuple(Column(**c) for c in r["columns"]), r["short_key_column_count"])
    return RollupJob(**{**d, "rollup": spec, "backfilled": tuple(tuple(p) for p in d["backfilled"])})


def _schema_change_job(d: dict[str, Any]) -> SchemaChangeJob:
    return SchemaChangeJob(**{**d, "done_tablets": tuple(d["done_tablets"]),
                              "shadows": tuple(tuple(p) for p in d.get("shadows", ())),
                              "backfilled": tuple(tuple(p) for p in d.get("backfilled", ()))})


ROLLUP_JOBS: JobTable[RollupJob] = JobTable("alter_jobs", _rollup_job)
SCHEMA_CHANGE_JOBS: JobTable[SchemaChangeJob] = JobTable("schema_change_jobs", _schema_change_job)
ALTER_JOB_TABLES: tuple[JobTable[Any], ...] = (ROLLUP_JOBS, SCHEMA_CHANGE_JOBS)


def table_busy(c: sqlite3.Connection, table_id: int) -> bool:
    """An unfinished ALTER job (rollup or index schema change) holds the table."""
    return any(t.unfinished(c, table_id) for t in ALTER_JOB_TABLES)


def cancel_table_jobs(c: sqlite3.Connection, table_id: int, msg: str) -> None:
    """Unfinished jobs of a table being dropped end CANCELLED (their index goes with the table)."""
    for t in ALTER_JOB_TABLES:
        for job in t.unfinished(c, table_id):
            t.save(c, replace(job, state=JOB_CANCELLED, msg=msg, finish_time=time.time()))

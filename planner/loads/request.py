"""What a load asks for and what it reports: the request every entry point builds, the job handle it reports to,
and the outcome both runs (in-process, Spark) return."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

import pyarrow as pa
from sqlglot import exp

from storage.catalog.model import OlapTable
from storage.engine import Overwrite, StorageEngine

if TYPE_CHECKING:
    from planner.context import QueryContext
    from planner.loads.spark_sources import ResolveOlap


class LoadCancelled(Exception):
    """The load was cancelled (CANCEL LOAD / KILL QUERY) before it published."""


class LoadHandle(Protocol):
    """The load job the server tracks (SHOW LOAD, CANCEL LOAD); see server.loads.jobs.LoadJob."""

    job_group: str

    def loading(self, txn_id: int) -> None: ...

    def commit_guard(self) -> AbstractContextManager[None]:
        """Held while deciding to publish: a cancel either lands before (the load aborts) or is refused."""
        ...

    @property
    def cancelled(self) -> bool: ...


class QueryRunner(Protocol):
    """What an in-process load needs from the session: its queries run with the session's bounds and privileges."""

    def run_query(self, expression: exp.Expression, key: str | None = None, strict_files: bool = False
                  ) -> pa.Table: ...

    def query_context(self) -> QueryContext: ...


# where a load runs: chosen by size ("auto"), or fixed by its entry point (a small Stream Load, a Spark Load)
LoadPath = Literal["auto", "in_process", "spark"]


@dataclass
class LoadOptions:
    """How the next INSERTs of a session load: set by Stream Load and LOAD LABEL, defaults for a plain INSERT."""

    path: LoadPath = "auto"
    precommit: bool = False  # written and held (engine.hold); published by a second request or the LOAD's end
    job: LoadHandle | None = None  # a LOAD LABEL's job: its INSERTs report to it, not to jobs of their own
    rejects: list[str] | None = None  # set: the rows an in-process load filtered, with their reasons (ErrorURL)
    group_commit: str | None = None  # a Stream Load's group_commit header (None: the session's group_commit)


@dataclass
class LoadRequest:
    """One INSERT into one table: exactly one of `values`, `query` and `rows` is the source."""

    engine: StorageEngine
    table: OlapTable  # for INSERT ... TEMPORARY PARTITION: the table with those partitions
    label: str
    strict: bool
    now: dt.datetime
    target_columns: Sequence[str] | None = None
    values: Sequence[Sequence[exp.Expression]] | None = None  # INSERT ... VALUES
    query: exp.Expression | None = None  # INSERT ... SELECT
    rows: pa.Table | None = None  # rows already computed (UPDATE)
    partitions: Sequence[str] = ()  # INSERT ... PARTITION (p, ...): rows outside them do not fit
    overwrite: Overwrite | None = None  # INSERT OVERWRITE: the partitions the rows replace
    temporary: bool = False
    max_filter_ratio: float = 0.0  # non-strict: the share of rows that may be filtered
    options: LoadOptions = field(default_factory=LoadOptions)
    settings: Mapping[str, str] = field(default_factory=dict)  # fe.conf: Spark's master, memory, ...
    resolve: ResolveOlap | None = None  # the Spark run: a table the query reads -> its snapshot
    runner: QueryRunner | None = None  # the in-process run: the session the query runs in
    generate: Callable[[pa.Table], pa.Table] | None = None  # the rows with their generated columns computed


@dataclass(frozen=True)
class InsertOutcome:
    label: str
    txn_id: int | None  # None: nothing to load (empty SELECT)
    loaded_rows: int
    filtered_rows: int

"""Schema change jobs that rewrite the rows (issue 13), at the storage level with the job stepped by hand: the
origin indexes answer until the swap, the shadows hold the converted rows, loads that land during every phase
are in the new index exactly once, CANCEL leaves the table as it was, and a value that does not convert fails
the job with the value."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from storage_specs import key, spec, value

from planner.bind.bind_schema_change import bind_schema_change
from planner.loads.convert import convert_column
from sql.parse import parse
from sql.types import parse_type
from storage.catalog.model import (
    INDEX_NORMAL,
    INDEX_SHADOW,
    JOB_CANCELLED,
    JOB_FINISHED,
    JOB_RUNNING,
    JOB_WAITING_TXN,
    KEYS_AGG,
    KEYS_DUP,
    OlapTable,
    RollupSpec,
    SchemaChangeJob,
)
from storage.engine import ScanRequest, StorageEngine
from storage.jobs.schema_change import SchemaChangeJobRunner


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[StorageEngine]:
    e = StorageEngine(tmp_path / "root")
    e.arrow_type = lambda text: parse_type(text).arrow_type()
    e.convert = convert_column
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def current(engine: StorageEngine, t: OlapTable) -> OlapTable:
    got = engine.catalog.get_table_by_id(t.table_id)
    assert got is not None
    return got


def rows(engine: StorageEngine, t: OlapTable, index: str | None = None) -> list[tuple]:
    t = current(engine, t)
    meta = t.base_index if index is None else next(i for i in t.indexes if i.name == index)
    names = [c.name for c in meta.columns]
    schema = pa.schema([pa.field(c.name, parse_type(c.type).arrow_type()) for c in meta.columns])
    got = engine.scan(ScanRequest(t, schema, names, index_id=meta.index_id)).table
    return sorted(tuple(r.values()) for r in got.to_pylist())


def load(engine: StorageEngine, t: OlapTable, data: list[tuple]) -> None:
    t = current(engine, t)
    schema = pa.schema([pa.field(c.name, parse_type(c.type).arrow_type()) for c in t.columns])
    engine.load(t, pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in data], schema))


def alter(engine: StorageEngine, t: OlapTable, clauses: str) -> SchemaChangeJob:
    [stmt] = parse(f"ALTER TABLE t {clauses}")
    change = bind_schema_change(current(engine, t), stmt)
    assert change.rewrite, "expected a rewrite"
    return engine.catalog.create_rewrite_job(t.table_id, change.columns, change.indexes, change.partition_info,
                                             change.distribution, change.properties, change.index_defs,
                                             change.renames, change.rewrite, 86400)


def dup_table(engine: StorageEngine) -> OlapTable:
    return engine.catalog.create_table("db", spec("t", KEYS_DUP, (key("k", "INT"), key("s", "VARCHAR(10)"),
                                                                    value("v", "BIGINT")), buckets=2))


def test_varchar_key_becomes_int_and_rows_resort(engine: StorageEngine) -> None:
    t = dup_table(engine)
    load(engine, t, [(1, "10", 1), (1, "9", 2), (2, "100", 3)])
    job = SchemaChangeJobRunner(engine).run_to_end(alter(engine, t, "MODIFY COLUMN s INT KEY"))
    assert job.state == JOB_FINISHED, job.msg
    t = current(engine, t)
    assert [(c.name, c.type) for c in t.columns] == [("k", "INT"), ("s", "INT"), ("v", "BIGINT")]
    assert [i.state for i in t.indexes] == [INDEX_NORMAL]
    assert rows(engine, t) == [(1, 9, 2), (1, 10, 1), (2, 100, 3)]
    # the new segments are sorted by the new key type: 9 before 10
    got = engine.scan(ScanRequest(t, pa.schema([("k", pa.int32()), ("s", pa.int32())]), ["k", "s"])).table
    assert got.num_rows == 3


@pytest.mark.parametrize("phase", ["pending", "waiting_txn", "running", "before_commit", "after_backfill"])
def test_loads_during_each_phase_land_once(engine: StorageEngine, phase: str) -> None:
    t = dup_table(engine)
    load(engine, t, [(1, "10", 1), (2, "20", 2)])
    expected = [(1, 10, 1), (2, 20, 2)]

    def extra(k: int) -> None:
        load(engine, t, [(k, str(k * 10), k)])
        expected.append((k, k * 10, k))

    def on_backfill(job: SchemaChangeJob, partition: object) -> None:
        if phase == "before_commit":
            extra(7)

    runner = SchemaChangeJobRunner(engine, on_backfill=on_backfill)
    job = alter(engine, t, "MODIFY COLUMN s INT KEY")
    if phase == "pending":
        extra(3)
    job = runner.step(job)
    assert job.state == JOB_WAITING_TXN
    assert [i.state for i in current(engine, t).indexes] == [INDEX_NORMAL, INDEX_SHADOW]
    if phase == "waiting_txn":
        extra(4)
    job = runner.step(job)
    assert job.state == JOB_RUNNING
    if phase == "running":
        extra(5)
    if phase == "after_backfill":  # back-filled, not swapped yet
        job = runner._backfill(job, current(engine, t), current(engine, t).partitions[0])
        extra(8)
    # queries read the origin (VARCHAR) until the swap
    assert {r[1] for r in rows(engine, t)} <= {str(k * 10) for k in range(10)}
    job = runner.step(job)
    assert job.state == JOB_FINISHED, job.msg
    assert rows(engine, t) == sorted(expected)
    load(engine, t, [(9, 90, 9)])  # and after the swap, in the new types
    assert rows(engine, t) == sorted([*expected, (9, 90, 9)])


def test_aggregate_key_dropped_merges_rows(engine: StorageEngine) -> None:
    s = spec("t", KEYS_AGG, (key("k", "INT"), key("c", "VARCHAR(10)"), value("v", "BIGINT", "SUM")), buckets=1)
    cols = {c.name: c for c in s.columns}
    t = engine.catalog.create_table("db", replace(s, rollups=(RollupSpec("r", (cols["k"], cols["v"]), 1),)))
    load(engine, t, [(1, "a", 1), (1, "b", 2), (2, "a", 3)])
    job = alter(engine, t, "DROP COLUMN c")
    assert [i for i, _ in job.shadows] == [t.base_index_id]  # the rollup does not hold c: kept as it is
    job = SchemaChangeJobRunner(engine).run_to_end(job)
    assert job.state == JOB_FINISHED, job.msg
    assert rows(engine, t) == [(1, 3), (2, 3)]  # the rows of k = 1 merge under the one key left
    assert [i.name for i in current(engine, t).indexes] == ["t", "r"]
    load(engine, t, [(1, 5)])
    assert rows(engine, t) == [(1, 8), (2, 3)]
    assert rows(engine, t, "r") == [(1, 8), (2, 3)]


def test_rollup_holding_the_column_is_rewritten(engine: StorageEngine) -> None:
    s = spec("t", KEYS_AGG, (key("k", "INT"), key("c", "VARCHAR(10)"), value("v", "BIGINT", "SUM")), buckets=1)
    cols = {c.name: c for c in s.columns}
    t = engine.catalog.create_table("db", replace(s, rollups=(RollupSpec("r", (cols["c"], cols["v"]), 1),)))
    load(engine, t, [(1, "2", 1), (1, "10", 2), (2, "2", 3)])
    job = SchemaChangeJobRunner(engine).run_to_end(alter(engine, t, "MODIFY COLUMN c BIGINT KEY"))
    assert job.state == JOB_FINISHED, job.msg
    t = current(engine, t)
    assert [(i.name, i.state) for i in t.indexes] == [("t", INDEX_NORMAL), ("r", INDEX_NORMAL)]
    assert rows(engine, t, "r") == [(2, 4), (10, 2)]
    load(engine, t, [(3, 10, 1)])
    assert rows(engine, t, "r") == [(2, 4), (10, 3)]


def test_cancel_leaves_the_table_as_it_was(engine: StorageEngine) -> None:
    t = dup_table(engine)
    load(engine, t, [(1, "10", 1)])
    runner = SchemaChangeJobRunner(engine)
    job = runner.step(alter(engine, t, "MODIFY COLUMN s INT KEY"))
    job = runner.cancel(job, "user cancelled")
    assert job.state == JOB_CANCELLED
    t = current(engine, t)
    assert [(i.name, i.state) for i in t.indexes] == [("t", INDEX_NORMAL)]
    assert rows(engine, t) == [(1, "10", 1)]
    load(engine, t, [(2, "x", 2)])
    assert rows(engine, t) == [(1, "10", 1), (2, "x", 2)]


def test_a_value_that_does_not_convert_fails_the_job(engine: StorageEngine) -> None:
    t = dup_table(engine)
    load(engine, t, [(1, "10", 1), (2, "abc", 2)])
    runner = SchemaChangeJobRunner(engine)
    job = alter(engine, t, "MODIFY COLUMN s INT KEY")
    with pytest.raises(Exception, match="Failed to convert column 's' from VARCHAR\\(10\\) to INT: value 'abc'"):
        runner.run_to_end(job)
    job = runner.cancel(engine.catalog.get_schema_change_job(job.job_id), "failed")
    assert rows(engine, t) == [(1, "10", 1), (2, "abc", 2)]

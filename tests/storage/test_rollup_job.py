"""ADD ROLLUP jobs at the storage level: the seed's rollups hold exactly the seed's rows, and loads that
land during each phase of the job are in the rollup exactly once (the job is stepped by hand)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from storage_specs import (
    AGG_EXAMPLE_WITH_TS_COLUMNS,
    AGG_EXAMPLE_WITH_TS_SCHEMA,
    d,
    key,
    rows_table,
    spec,
    table_rows,
    ts,
    value,
)

from storage.catalog.model import (
    INDEX_NORMAL,
    INDEX_SHADOW,
    JOB_CANCELLED,
    JOB_FINISHED,
    JOB_RUNNING,
    JOB_WAITING_TXN,
    KEYS_AGG,
    KEYS_DUP,
    Column,
    OlapTable,
    RollupJob,
    RollupSpec,
)
from storage.engine import ScanRequest, StorageEngine
from storage.jobs.rollup import RollupJobRunner

# seed 004, "Aggregate 和 Uniq 模型中的 ROLLUP": the base table's stored rows
SEED_ROWS = [
    (10000, d("2017-10-01"), ts("2017-10-01 08:00:05"), "北京", 20, 0, ts("2017-10-01 06:00:00"), 20, 10, 10),
    (10000, d("2017-10-01"), ts("2017-10-01 09:00:05"), "北京", 20, 0, ts("2017-10-01 07:00:00"), 15, 2, 2),
    (10001, d("2017-10-01"), ts("2017-10-01 18:12:10"), "北京", 30, 1, ts("2017-10-01 17:05:45"), 2, 22, 22),
    (10002, d("2017-10-02"), ts("2017-10-02 13:10:00"), "上海", 20, 1, ts("2017-10-02 12:59:12"), 200, 5, 5),
    (10003, d("2017-10-02"), ts("2017-10-02 13:15:00"), "广州", 32, 0, ts("2017-10-02 11:20:00"), 30, 11, 11),
    (10004, d("2017-10-01"), ts("2017-10-01 12:12:48"), "深圳", 35, 0, ts("2017-10-01 10:00:15"), 100, 3, 3),
    (10004, d("2017-10-03"), ts("2017-10-03 12:38:20"), "深圳", 35, 0, ts("2017-10-03 10:20:22"), 11, 6, 6),
]
SEED_USER_COST = [(10000, 35), (10001, 2), (10002, 200), (10003, 30), (10004, 111)]
SEED_CITY_AGE = [("上海", 20, 200, 5, 5), ("北京", 20, 35, 10, 2), ("北京", 30, 2, 22, 22),
                 ("广州", 32, 30, 11, 11), ("深圳", 35, 111, 6, 3)]

COLS = {c.name: c for c in AGG_EXAMPLE_WITH_TS_COLUMNS}
USER_COST = RollupSpec("r_user_cost", (COLS["user_id"], COLS["cost"]), 1)
CITY_AGE = RollupSpec("r_city_age", tuple(COLS[n] for n in ("city", "age", "cost", "max_dwell_time",
                                                            "min_dwell_time")), 1)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[StorageEngine]:
    e = StorageEngine(tmp_path / "root")
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def seed_table(engine: StorageEngine, rollups: tuple[RollupSpec, ...] = ()) -> OlapTable:
    s = spec("t", KEYS_AGG, AGG_EXAMPLE_WITH_TS_COLUMNS, buckets=3)
    return engine.catalog.create_table("db", replace(s, rollups=rollups))


def index_rows(engine: StorageEngine, table: OlapTable, name: str) -> list[tuple]:
    table = engine.catalog.get_table_by_id(table.table_id)
    index = next(i for i in table.indexes if i.name == name)
    names = [c.name for c in index.columns]
    schema = pa.schema([AGG_EXAMPLE_WITH_TS_SCHEMA.field(n) for n in names])
    return table_rows(engine.scan(ScanRequest(table, schema, names, index_id=index.index_id)).table)


def load(engine: StorageEngine, table: OlapTable, rows: list[tuple]) -> None:
    engine.load(engine.catalog.get_table_by_id(table.table_id), rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, rows))


def add_job(engine: StorageEngine, table: OlapTable, rollup: RollupSpec) -> RollupJob:
    [job] = engine.catalog.create_rollup_jobs(table.table_id, [(rollup, table.base_index_id, 86400)])
    return job


def row(user: int, cost: int, city: str = "北京", age: int = 20) -> tuple:
    return (user, d("2017-10-05"), ts("2017-10-05 00:00:00"), city, age, 0, ts("2017-10-05 01:00:00"), cost, 1, 1)


def test_create_table_rollups_hold_the_seed_rows(engine: StorageEngine) -> None:
    t = seed_table(engine, (USER_COST, CITY_AGE))
    assert [(i.name, i.state) for i in t.indexes] == [("t", INDEX_NORMAL), ("r_user_cost", INDEX_NORMAL),
                                                      ("r_city_age", INDEX_NORMAL)]
    load(engine, t, SEED_ROWS)
    assert index_rows(engine, t, "r_user_cost") == SEED_USER_COST
    assert index_rows(engine, t, "r_city_age") == SEED_CITY_AGE


def test_add_rollup_backfills_the_seed_rows(engine: StorageEngine) -> None:
    t = seed_table(engine)
    load(engine, t, SEED_ROWS[:3])
    load(engine, t, SEED_ROWS[3:])
    runner = RollupJobRunner(engine)
    for rollup, expected in ((USER_COST, SEED_USER_COST), (CITY_AGE, SEED_CITY_AGE)):
        job = runner.run_to_end(add_job(engine, t, rollup))
        assert job.state == JOB_FINISHED
        assert index_rows(engine, t, rollup.name) == expected
    # the back-fill is one rowset per rollup tablet covering [0, V]
    t = engine.catalog.get_table_by_id(t.table_id)
    rollup = next(i for i in t.indexes if i.name == "r_user_cost")
    ranges = {(r.start_version, r.end_version) for tb in engine.catalog.tablets(t.table_id, index_id=rollup.index_id)
              for r in engine.catalog.all_rowsets(tb.tablet_id)}
    assert ranges == {(0, 3)}


@pytest.mark.parametrize("phase", ["pending", "waiting_txn", "running", "before_commit", "after_backfill"])
def test_loads_during_each_phase_are_counted_once(engine: StorageEngine, phase: str) -> None:
    t = seed_table(engine)
    load(engine, t, SEED_ROWS)
    expected = dict(SEED_USER_COST)

    def extra_load(user: int, cost: int) -> None:
        load(engine, t, [row(user, cost)])
        expected[user] = expected.get(user, 0) + cost

    hook_calls: list[int] = []

    def on_backfill(job: RollupJob, partition: object) -> None:  # after the read at V, before its commit
        if phase == "before_commit" and not hook_calls:
            hook_calls.append(1)
            extra_load(20002, 5)
            extra_load(10000, 1)

    runner = RollupJobRunner(engine, on_backfill=on_backfill)
    job = add_job(engine, t, USER_COST)
    if phase == "pending":
        extra_load(20000, 7)
    early = None
    if phase == "waiting_txn":  # a load that began before the shadow index existed, publishing later
        stale = engine.catalog.get_table_by_id(t.table_id)
        early = engine.catalog.begin_txn(stale.db_id, stale.table_id, "early")
        staged, pids = engine._write_load(early, stale, rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, [row(20001, 9)]),
                                          np.zeros(1, dtype="int64"))
    job = runner.step(job)
    assert job.state == JOB_WAITING_TXN
    if early is not None:
        assert early < job.watershed_txn_id
        assert runner.step(job).state == JOB_WAITING_TXN  # blocked until that load is done
        engine.commit(early, staged, pids)
        expected[20001] = 9
    job = runner.step(job)
    assert job.state == JOB_RUNNING
    if phase == "running":  # two loads that write the shadow index themselves, both inside the back-fill
        extra_load(10004, 4)
        extra_load(20003, 6)
    job = runner.step(job)
    assert job.state == JOB_FINISHED
    if phase == "after_backfill":
        extra_load(10003, 3)
    assert index_rows(engine, t, "r_user_cost") == sorted(expected.items())
    # and the base agrees
    base = index_rows(engine, t, "t")
    totals: dict[int, int] = {}
    for r in base:
        totals[r[0]] = totals.get(r[0], 0) + r[7]
    assert sorted(totals.items()) == sorted(expected.items())


def test_load_with_a_table_snapshot_older_than_the_shadow_index(engine: StorageEngine) -> None:
    """A Spark-style load binds the table, then the shadow index appears, then the load begins and
    commits without writing it: the commit builds the rollup rowsets from the load's own base rowsets."""
    t = seed_table(engine)
    load(engine, t, SEED_ROWS)
    stale = engine.catalog.get_table_by_id(t.table_id)
    runner = RollupJobRunner(engine)
    job = runner.step(add_job(engine, t, USER_COST))  # shadow index exists now
    data = rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, [row(30000, 8), row(10000, 2)])
    engine.load(stale, data)  # writes only the indexes of its stale snapshot
    job = runner.run_to_end(job)
    assert job.state == JOB_FINISHED
    expected = dict(SEED_USER_COST)
    expected[30000] = 8
    expected[10000] += 2
    assert index_rows(engine, t, "r_user_cost") == sorted(expected.items())


def test_cancel_drops_the_shadow_index_and_its_files(engine: StorageEngine) -> None:
    t = seed_table(engine)
    load(engine, t, SEED_ROWS)
    runner = RollupJobRunner(engine)
    job = runner.step(runner.step(add_job(engine, t, USER_COST)))
    assert job.state == JOB_RUNNING
    shadow = next(i for i in engine.catalog.get_table_by_id(t.table_id).indexes if i.name == "r_user_cost")
    assert shadow.state == INDEX_SHADOW
    tablets = engine.catalog.tablets(t.table_id, index_id=shadow.index_id)
    load(engine, t, [row(1, 1)])  # writes shadow files
    assert any(engine.tablet_dir(tb.tablet_id).exists() for tb in tablets)
    cancelled = runner.cancel(job, "user cancelled")
    assert (cancelled.state, cancelled.msg) == (JOB_CANCELLED, "user cancelled")
    assert [i.name for i in engine.catalog.get_table_by_id(t.table_id).indexes] == ["t"]
    assert engine.catalog.tablets(t.table_id, index_id=shadow.index_id) == []
    assert not any(engine.tablet_dir(tb.tablet_id).exists() for tb in tablets)
    assert runner.step(cancelled).state == JOB_CANCELLED  # a later step does nothing
    load(engine, t, [row(2, 2)])  # loads go on without the index


def test_cancel_between_read_and_commit_wins(engine: StorageEngine) -> None:
    t = seed_table(engine)
    load(engine, t, SEED_ROWS)
    holder: list[RollupJobRunner] = []

    def cancel_now(job: RollupJob, partition: object) -> None:
        holder[0].catalog.cancel_rollup_job(job.job_id, "user cancelled")

    runner = RollupJobRunner(engine, on_backfill=cancel_now)
    holder.append(runner)
    job = runner.run_to_end(add_job(engine, t, USER_COST))
    assert job.state == JOB_CANCELLED
    assert [i.name for i in engine.catalog.get_table_by_id(t.table_id).indexes] == ["t"]
    assert not list((engine.root / "staging").glob("rollup_*"))


def test_job_resumes_after_reopen(tmp_path: Path) -> None:
    root = tmp_path / "root"
    e = StorageEngine(root)
    e.open()
    e.catalog.create_database("db")
    t = seed_table(e)
    load(e, t, SEED_ROWS)
    stuck = e.catalog.begin_txn(t.db_id, t.table_id, "dies-with-the-process")
    job = RollupJobRunner(e).step(add_job(e, t, USER_COST))
    assert stuck < job.watershed_txn_id
    assert RollupJobRunner(e).step(job).state == JOB_WAITING_TXN
    e.close()

    e2 = StorageEngine(root)
    e2.open()  # aborts the dead load's transaction, so the job does not wait for it forever
    [job] = e2.catalog.rollup_jobs()
    assert job.state == JOB_WAITING_TXN
    job = RollupJobRunner(e2).run_to_end(job)
    assert job.state == JOB_FINISHED
    assert index_rows(e2, t, "r_user_cost") == SEED_USER_COST
    e2.close()


def test_drop_rollup_while_a_load_is_running(engine: StorageEngine) -> None:
    t = seed_table(engine, (USER_COST,))
    snapshot = engine.catalog.get_table_by_id(t.table_id)
    txn = engine.catalog.begin_txn(t.db_id, t.table_id, "l1")
    staged, pids = engine._write_load(txn, snapshot, rows_table(AGG_EXAMPLE_WITH_TS_SCHEMA, SEED_ROWS),
                                      np.zeros(len(SEED_ROWS), dtype="int64"))
    engine.catalog.drop_rollups(t.table_id, ["r_user_cost"])
    engine.commit(txn, staged, pids)  # the dropped index's rowsets are skipped, the base is published
    assert len(index_rows(engine, t, "t")) == 7


def test_dup_rollup_reorders_columns(engine: StorageEngine) -> None:
    cols = (key("user_id", "BIGINT"), key("age", "INT"), value("message", "VARCHAR(100)"))
    schema = pa.schema([("user_id", pa.int64()), ("age", pa.int32()), ("message", pa.string())])
    t = engine.catalog.create_table("db", spec("dup", KEYS_DUP, cols, buckets=2))
    engine.load(t, rows_table(schema, [(1, 30, "a"), (2, 20, "b"), (1, 30, "a")]))
    rollup = RollupSpec("r_age", (Column("age", "INT", True, None), Column("user_id", "BIGINT", True, None),
                                  Column("message", "VARCHAR(100)", False, "NONE")), 2)
    [job] = engine.catalog.create_rollup_jobs(t.table_id, [(rollup, t.base_index_id, 60)])
    assert RollupJobRunner(engine).run_to_end(job).state == JOB_FINISHED
    t = engine.catalog.get_table_by_id(t.table_id)
    index = t.indexes[1]
    got = engine.scan(ScanRequest(t, schema, ["age", "user_id", "message"], index_id=index.index_id)).table
    assert table_rows(got) == [(20, 2, "b"), (30, 1, "a"), (30, 1, "a")]  # duplicates kept

"""The scheduler pass over a real catalog: partitions added ahead, dropped behind, auto-bucket sizing from
the partitions' real data sizes, overlap messages recorded."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pytest

from storage.catalog.model import KEYS_DUP, Column, DistributionInfo, PartitionInfo, TableSpec
from storage.engine import StorageEngine
from storage.partition_policy.auto_bucket import Disk
from storage.partition_policy.buckets import BucketPolicy
from storage.partition_policy.dynamic_partition import parse_dynamic_partition_properties, stored_properties
from storage.partition_policy.scheduler import DynamicPartitionScheduler

GB = 1024**3


def _spec(name: str, props: dict[str, str], auto: bool = False, buckets: int = 3) -> TableSpec:
    prop = parse_dynamic_partition_properties(props, ["DATE"], "RANGE", 500, table_buckets=buckets)
    assert prop is not None
    return TableSpec(
        name=name, keys_type=KEYS_DUP,
        columns=(Column("dt", "DATE", is_key=True, aggregation=None, nullable=False),
                 Column("v", "BIGINT", is_key=False, aggregation="NONE")),
        short_key_column_count=1, partition_info=PartitionInfo("RANGE", ("dt",)), partition_items=(),
        distribution=DistributionInfo("HASH", ("dt",), buckets, auto),
        properties=tuple(stored_properties(prop)),
    )


@pytest.fixture()
def engine(tmp_path):
    e = StorageEngine(tmp_path / "s")
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


DISKS = (Disk("/d", 100 * GB),)


def _scheduler(engine: StorageEngine, now: list[datetime]) -> DynamicPartitionScheduler:
    return DynamicPartitionScheduler(engine.catalog, lambda: BucketPolicy(DISKS), lambda: now[0])


DAY = {"dynamic_partition.enable": "true", "dynamic_partition.time_unit": "DAY",
       "dynamic_partition.start": "-7", "dynamic_partition.end": "3", "dynamic_partition.prefix": "p",
       "dynamic_partition.buckets": "4"}


def test_seed_day_example_through_the_catalog(engine):
    table = engine.catalog.create_table("db", _spec("t", DAY))
    now = [datetime(2020, 5, 29, 12, tzinfo=UTC)]
    sched = _scheduler(engine, now)
    sched.run_table(table.table_id, first_run=True)
    parts = engine.catalog.get_table_by_id(table.table_id).partitions
    assert [(p.name, p.item.lower, p.item.upper, p.buckets) for p in parts] == [
        ("p20200529", ("2020-05-29",), ("2020-05-30",), 4),
        ("p20200530", ("2020-05-30",), ("2020-05-31",), 4),
        ("p20200531", ("2020-05-31",), ("2020-06-01",), 4),
        ("p20200601", ("2020-06-01",), ("2020-06-02",), 4),
    ]
    now[0] = datetime(2020, 6, 6, 12, tzinfo=UTC)  # eight days on: p20200529 falls out of [-7, 3]
    sched.run_once()
    names = [p.name for p in engine.catalog.get_table_by_id(table.table_id).partitions]
    assert names[0] == "p20200530" and names[-1] == "p20200609"
    assert sched.info[table.table_id].state == "NORMAL"


def test_auto_buckets_follow_the_previous_partitions_sizes(engine):
    props = {k: v for k, v in DAY.items() if k != "dynamic_partition.buckets"} | {"dynamic_partition.end": "1"}
    table = engine.catalog.create_table("db", _spec("t", props, auto=True, buckets=2))
    now = [datetime(2024, 1, 1, tzinfo=UTC)]
    sched = _scheduler(engine, now)
    sizes = {}
    for day in range(1, 5):
        now[0] = datetime(2024, 1, day, tzinfo=UTC)
        sched.run_once()
        table = engine.catalog.get_table_by_id(table.table_id)
        rows = 20_000 * day  # growing days
        engine.load(table, pa.table({"dt": pa.array([datetime(2024, 1, day).date()] * rows),
                                     "v": pa.array(range(rows), pa.int64())}))
    table = engine.catalog.get_table_by_id(table.table_id)
    sizes = [p.data_size for p in table.partitions]
    assert all(s > 0 for s in sizes[:4])
    # the partitions are tiny, so the rule gives its minimum of one bucket once history exists
    assert [p.buckets for p in table.partitions][2:] == [1] * (len(table.partitions) - 2)


def test_overlap_is_recorded_not_raised(engine):
    table = engine.catalog.create_table("db", _spec("t", DAY))
    now = [datetime(2020, 5, 29, tzinfo=UTC)]
    sched = _scheduler(engine, now)
    sched.run_table(table.table_id)
    # switch to MONTH: the month's range overlaps the daily partitions
    month = DAY | {"dynamic_partition.time_unit": "MONTH"}
    prop = parse_dynamic_partition_properties(month, ["DATE"], "RANGE", 500, table_buckets=3)
    engine.catalog.set_table_properties(table.table_id, stored_properties(prop))
    sched.run_table(table.table_id)
    assert "is intersected with range" in (sched.info[table.table_id].last_create_msg or "")

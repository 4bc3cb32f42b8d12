"""The compaction producer and workers (storage/compaction/manager.py) on a real engine, without a server:
rounds pick and merge, both disable_auto_compaction switches, manual runs, tablets that miss versions,
the HTTP API's JSON."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from storage_specs import key, spec, table_rows, value

from storage.catalog.model import KEYS_AGG, OlapTable
from storage.compaction.manager import CompactionManager, NoSuitableVersion, format_bytes, policy_view
from storage.compaction.version_limit import tablet_visible_rowsets
from storage.engine import ScanRequest, StorageEngine

SCHEMA = pa.schema([("k", pa.int32()), ("v", pa.int64())])
CONF = {"cumulative_compaction_skip_window_seconds": "0", "tablet_rowset_stale_sweep_time_sec": "0",
        "min_compaction_failure_interval_sec": "0"}


def make(tmp_path: Path, **conf: str) -> tuple[StorageEngine, CompactionManager]:
    engine = StorageEngine(tmp_path / "s", {**CONF, **conf})
    engine.open()
    engine.catalog.create_database("db")
    return engine, CompactionManager(engine)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[StorageEngine, CompactionManager]]:
    engine, manager = make(tmp_path)
    yield engine, manager
    manager.stop()
    engine.close()


def table_with_loads(engine: StorageEngine, name: str, loads: int, buckets: int = 1, rows: int = 20,
                     **props: str) -> OlapTable:
    s = spec(name, KEYS_AGG, [key("k", "INT"), value("v", "BIGINT", "SUM")], buckets=buckets)
    table = engine.catalog.create_table("db", type(s)(**{**s.__dict__, "properties": tuple(props.items())}))
    rng = np.random.default_rng(len(name))
    for _ in range(loads):
        engine.load(table, pa.table({"k": pa.array(rng.integers(0, 1000, rows).astype(np.int32)),
                                     "v": pa.array(np.ones(rows, np.int64))}))
    return table


def versions(engine: StorageEngine, table: OlapTable) -> list[int]:
    return [len(tablet_visible_rowsets(engine.catalog, t.tablet_id)) for t in engine.catalog.tablets(table.table_id)]


def rows(engine: StorageEngine, table: OlapTable) -> list[tuple]:
    return table_rows(engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=["k", "v"])).table)


def test_a_round_picks_merges_and_moves_the_point(env) -> None:
    engine, manager = env
    table = table_with_loads(engine, "t", 8)
    before = rows(engine, table)
    (tablet,) = engine.catalog.tablets(table.table_id)
    loaded = sum(rs.num_rows for rs in tablet_visible_rowsets(engine.catalog, tablet.tablet_id))
    assert manager.run_once() == [(tablet.tablet_id, "cumulative")]
    assert manager.wait_idle()
    # the base rowset is a singleton: the cumulative point starts at it, and all eight merge into one
    assert versions(engine, table) == [1]
    assert rows(engine, table) == before
    c = manager.counters
    assert c.cumulative_tasks == 1 and c.rowsets_merged == 8 and c.bytes_written > 0
    assert c.rows_merged == loaded and c.rows_written == len(before) < loaded
    shown = manager.show(tablet.tablet_id)
    assert shown["rowsets"][0].startswith("[2-9] 1 DATA NONOVERLAPPING ")
    assert shown["cumulative point"] == 2  # the output is below the promotion size
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}", shown["last cumu success time"])


def test_both_disable_auto_compaction_switches(tmp_path: Path) -> None:
    engine, manager = make(tmp_path)
    off = table_with_loads(engine, "off", 8, disable_auto_compaction="true")
    on = table_with_loads(engine, "on", 8)
    (tablet_on,) = engine.catalog.tablets(on.table_id)
    assert manager.run_once() == [(tablet_on.tablet_id, "cumulative")]
    assert manager.wait_idle()
    assert manager.run_once() == []
    assert versions(engine, off) == [8]
    # a manual run ignores the property
    (tablet_off,) = engine.catalog.tablets(off.table_id)
    manager.trigger(tablet_off.tablet_id, "cumulative")
    assert manager.wait_idle() and versions(engine, off) == [1]
    manager.stop()
    engine.close()

    engine, manager = make(tmp_path / "b", disable_auto_compaction="true")
    table = table_with_loads(engine, "t", 8)
    assert manager.run_once() == []
    (tablet,) = engine.catalog.tablets(table.table_id)
    manager.trigger(tablet.tablet_id, "cumulative")
    assert manager.wait_idle() and versions(engine, table) == [1]
    manager.stop()
    engine.close()


def test_manual_run_with_nothing_to_merge(env) -> None:
    engine, manager = env
    table = table_with_loads(engine, "t", 2)
    (tablet,) = engine.catalog.tablets(table.table_id)
    with pytest.raises(NoSuitableVersion, match="fail to execute compaction, error = -2000"):
        manager.trigger(tablet.tablet_id, "cumulative")
    with pytest.raises(NoSuitableVersion, match="error = -808"):
        manager.trigger(tablet.tablet_id, "base")
    with pytest.raises(KeyError):
        manager.trigger(999999, "base")


def test_tablets_that_miss_versions_still_compact(env) -> None:
    """Small loads into a 4-bucket table leave each tablet without some versions."""
    engine, manager = env
    table = table_with_loads(engine, "t", 12, buckets=4, rows=2)
    holes = [policy_view(tablet_visible_rowsets(engine.catalog, t.tablet_id))
             for t in engine.catalog.tablets(table.table_id)]
    assert any(rs.rowset_id.startswith("virtual:") for view in holes for rs in view)
    before = rows(engine, table)
    counts = versions(engine, table)
    for _ in range(6):
        manager.run_once()
        assert manager.wait_idle()
    assert rows(engine, table) == before
    after = versions(engine, table)
    assert sum(after) < sum(counts) and max(after) <= 2


def test_base_compaction_follows_the_rounds(tmp_path: Path) -> None:
    engine, manager = make(tmp_path, base_compaction_min_rowset_num="1")
    table = table_with_loads(engine, "t", 8)
    (tablet,) = engine.catalog.tablets(table.table_id)
    manager.run_once()
    assert manager.wait_idle() and versions(engine, table) == [1]
    for _ in range(3):
        engine.load(table, pa.table({"k": pa.array([1, 2], pa.int32()), "v": pa.array([5, 6], pa.int64())}))
    before = rows(engine, table)
    manager.state(tablet.tablet_id).cumulative_point = 13  # as if [2-9] .. [12-12] had been promoted
    manager.round_no = 9  # the base round (nine cumulative rounds to one)
    assert manager.run_once() == [(tablet.tablet_id, "base")]
    assert manager.wait_idle()
    assert versions(engine, table) == [1]
    assert rows(engine, table) == before
    assert manager.show(tablet.tablet_id)["rowsets"][0].startswith("[2-12] 1 DATA")
    assert manager.counters.base_tasks == 1
    manager.stop()
    engine.close()


def test_show_json_and_run_status(env) -> None:
    engine, manager = env
    table = table_with_loads(engine, "t", 3)
    (tablet,) = engine.catalog.tablets(table.table_id)
    shown = manager.show(tablet.tablet_id)
    assert list(shown) == ["cumulative policy type", "cumulative point", "last cumulative failure time",
                           "last base failure time", "last cumu success time", "last base success time",
                           "rowsets", "missing_rowsets", "stale version path"]
    assert shown["cumulative policy type"] == "SIZE_BASED"
    assert shown["cumulative point"] == 2
    assert [r.split(" ")[0] for r in shown["rowsets"]] == ["[2-2]", "[3-3]", "[4-4]"]
    assert shown["last base failure time"].startswith("1970-01-01 ")
    assert manager.show(123456) is None
    assert manager.run_status() == {"CumulativeCompaction": {str(engine.root): []},
                                    "BaseCompaction": {str(engine.root): []}}
    assert manager.tablet_run_status(tablet.tablet_id) == {
        "status": "Success", "run_status": False, "msg": "this tablet_id is not running",
        "tablet_id": tablet.tablet_id, "compact_type": ""}
    assert [format_bytes(n) for n in (0, 574, 2048, 574 * 1024 * 1024)] == ["0", "574.00 B", "2.00 KB",
                                                                           "574.00 MB"]


def test_a_load_near_the_version_limit_asks_for_a_compaction(tmp_path: Path) -> None:
    engine, manager = make(tmp_path, max_tablet_version_num="6", disable_auto_compaction="true")
    table = table_with_loads(engine, "t", 6)  # the sixth load finds 5 rowsets: more than 6 - 100
    assert manager.wait_idle()
    assert versions(engine, table) == [2]  # five merged before the sixth was published
    assert manager.counters.cumulative_tasks == 1
    manager.stop()
    engine.close()


def test_cumulative_compaction_does_not_cross_a_delete(env) -> None:
    from storage.catalog.delete_jobs import DeleteInfo
    from storage.jobs.delete import delete_label, publish_predicate_delete
    from storage.predicate import ColumnPredicate, Op

    engine, manager = env
    table = table_with_loads(engine, "t", 6)
    (pid,) = engine.snapshot(table)
    publish_predicate_delete(engine, table, [pid], [ColumnPredicate("k", Op.LT, (500,))], DeleteInfo(
        table.db_id, table.table_id, "t", delete_label(), ("t",), True, ('k LT "500"',), 0.0))
    delete_version = engine.snapshot(table)[pid]
    rng = np.random.default_rng(3)
    for _ in range(6):
        engine.load(table, pa.table({"k": pa.array(rng.integers(0, 1000, 20).astype(np.int32)),
                                     "v": pa.array(np.ones(20, np.int64))}))
    before = rows(engine, table)
    for _ in range(4):
        manager.run_once()
        assert manager.wait_idle()
    (tablet,) = engine.catalog.tablets(table.table_id)
    visible = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    assert any(rs.kind == "DELETE" and rs.start_version == delete_version for rs in visible)
    assert not any(rs.start_version < delete_version < rs.end_version for rs in visible)
    assert manager.counters.cumulative_tasks >= 1
    assert rows(engine, table) == before


def test_rowsets_inside_the_skip_window_do_not_back_the_tablet_off(tmp_path: Path) -> None:
    # a burst of loads meets the skip window: "nothing to merge yet" is no failure, so once the window has
    # passed the next round compacts (min_compaction_failure_interval_sec would otherwise hold it back)
    engine, manager = make(tmp_path, cumulative_compaction_skip_window_seconds="3600",
                           min_compaction_failure_interval_sec="600")
    try:
        table = table_with_loads(engine, "t", 8)
        (tablet,) = engine.catalog.tablets(table.table_id)
        assert manager.run_once() == []
        state = manager.state(tablet.tablet_id)
        assert state.last_cumu_failure is None
        manager.config = type(manager.config)(**{**manager.config.__dict__,
                                                  "cumulative_compaction_skip_window_seconds": 0})
        assert manager.run_once() == [(tablet.tablet_id, "cumulative")]
        assert manager.wait_idle()
        assert versions(engine, table) == [1]
    finally:
        manager.stop()
        engine.close()

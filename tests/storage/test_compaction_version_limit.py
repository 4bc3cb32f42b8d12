"""Doris's -235: a load into a tablet holding more than max_tablet_version_num visible rowsets fails and is
aborted; near the limit it asks for a cumulative compaction; a compaction makes room again."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from storage_specs import key, spec, value

from storage.catalog.model import KEYS_AGG
from storage.catalog.store import TXN_ABORTED
from storage.compaction.merge import compact_rowsets
from storage.compaction.version_limit import tablet_visible_rowsets
from storage.engine import ScanRequest, StorageEngine
from storage.errors import StorageError

SCHEMA = pa.schema([("k", pa.int32()), ("v", pa.int64())])


def test_too_many_versions_fails_the_load_until_compaction(tmp_path: Path) -> None:
    engine = StorageEngine(tmp_path / "s", {"max_tablet_version_num": "3", "tablet_rowset_stale_sweep_time_sec": "0"})
    engine.open()
    asked: list[tuple[int, str]] = []
    engine.compaction_trigger = lambda tablet_id, kind: asked.append((tablet_id, kind))
    engine.catalog.create_database("db")
    table = engine.catalog.create_table("db", spec("t", KEYS_AGG, [key("k", "INT"), value("v", "BIGINT", "SUM")],
                                                   buckets=1))
    (tablet,) = engine.catalog.tablets(table.table_id)
    rows = pa.table({"k": pa.array([1], pa.int32()), "v": pa.array([1], pa.int64())})
    for _ in range(4):  # 0, 1, 2, 3 versions before each load: not more than 3
        engine.load(table, rows)
    assert asked and set(asked) == {(tablet.tablet_id, "cumulative")}  # near the limit: 3 - 100 < count
    with pytest.raises(StorageError) as err:
        engine.load(table, rows, label="too_many")
    assert err.value.code == 1105
    assert err.value.message == (
        f"[E-235]failed to init rowset builder. version count: 4, exceed limit: 3, tablet: {tablet.tablet_id}. "
        "Please reduce the frequency of loading data or adjust the max_tablet_version_num or "
        "time_series_max_tablet_version_num in be.conf to a larger value.")
    assert engine.catalog.get_txn_by_label(table.db_id, "too_many").status == TXN_ABORTED
    assert list(engine.staging_root.iterdir()) == []
    inputs = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    assert len(inputs) == 4
    compact_rowsets(engine, table, table.base_index, tablet, inputs, 2, 5)
    engine.load(table, rows)
    got = engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=["k", "v"])).table
    assert got.to_pylist() == [{"k": 1, "v": 5}]
    engine.close()

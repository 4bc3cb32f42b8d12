"""Loads and scans through StorageEngine: partition routing, strict mode, atomicity and crash recovery,
snapshot isolation, restart, truncate, labels, predicate pruning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from storage_specs import d, key, rows_table, spec, table_rows, value

import storage.engine as engine_module
import storage.segment.reader as segment_reader
from storage.catalog.model import KEYS_AGG, KEYS_DUP, PartitionInfo, PartitionItem
from storage.engine import ScanRequest, StorageEngine
from storage.errors import StorageError
from storage.predicate import ColumnPredicate, Op

SCHEMA = pa.schema([("dt", pa.date32()), ("k", pa.int32()), ("v", pa.int64())])
COLUMNS = [key("dt", "DATE"), key("k", "INT"), value("v", "BIGINT", "SUM")]


def range_spec(name: str = "t", keys_type: str = KEYS_AGG, with_max: bool = True):
    items = [
        PartitionItem("p2016", lower=("0000-01-01",), upper=("2017-01-01",)),
        PartitionItem("p2017", lower=("2017-01-01",), upper=("2018-01-01",), buckets=4),
    ]
    if with_max:
        items.append(PartitionItem("pmax", lower=("2018-01-01",), upper=None))
    cols = COLUMNS if keys_type == KEYS_AGG else [key("dt", "DATE"), key("k", "INT"), value("v", "BIGINT")]
    return spec(name, keys_type, cols, buckets=2, hash_cols=["k"],
                partition=(PartitionInfo("RANGE", ("dt",)), tuple(items)))


def list_spec(name: str = "l"):
    items = (
        PartitionItem("p_bj", values=(("北京",), ("天津",))),
        PartitionItem("p_sh", values=(("上海",),)),
        PartitionItem("p_null", values=((None,),)),
    )
    return spec(name, KEYS_DUP, [key("city", "VARCHAR(20)"), value("n", "INT")], buckets=2, hash_cols=["city"],
                partition=(PartitionInfo("LIST", ("city",)), items))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "storage"


@pytest.fixture(params=["1", "0"], ids=["worker_process", "in_process"])
def engine(root: Path, request: pytest.FixtureRequest) -> Iterator[StorageEngine]:
    e = StorageEngine(root, {"load_worker_processes": request.param})  # small loads: written in a worker or here
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def scan(engine: StorageEngine, table, schema: pa.Schema = SCHEMA, **kw) -> pa.Table:
    columns = kw.pop("columns", schema.names)
    return engine.scan(ScanRequest(table=table, schema=schema, columns=columns, **kw)).table


def data_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "data").rglob("*") if p.is_file())


ROWS = [(d("2016-05-01"), 1, 10), (d("2017-03-01"), 2, 20), (d("2017-12-31"), 3, 30), (d("2018-01-01"), 4, 40),
        (d("2030-01-01"), 5, 50), (d("1900-01-01"), 6, 60)]


def test_range_partition_routing(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("db", range_spec())
    res = engine.load(t, rows_table(SCHEMA, ROWS))
    assert (res.num_rows, res.filtered_rows, res.status) == (6, 0, "VISIBLE")
    assert res.label.startswith("label_") and len(res.label) == len("label_") + 33
    by_name = {p.name: p.partition_id for p in t.partitions}
    per_partition = {name: table_rows(scan(engine, t, partition_ids=[pid])) for name, pid in by_name.items()}
    assert per_partition == {
        "p2016": [(d("1900-01-01"), 6, 60), (d("2016-05-01"), 1, 10)],
        "p2017": [(d("2017-03-01"), 2, 20), (d("2017-12-31"), 3, 30)],
        "pmax": [(d("2018-01-01"), 4, 40), (d("2030-01-01"), 5, 50)],
    }
    t2 = engine.catalog.get_table_by_id(t.table_id)
    assert [p.visible_version for p in t2.partitions] == [2, 2, 2]
    assert [p.row_count for p in t2.partitions] == [2, 2, 2]
    # a load touching one partition only bumps that partition's version
    engine.load(t, rows_table(SCHEMA, [(d("2017-06-01"), 9, 1)]))
    assert [p.visible_version for p in engine.catalog.get_table_by_id(t.table_id).partitions] == [2, 3, 2]


def test_rows_land_in_their_hash_bucket(engine: StorageEngine) -> None:
    from storage.tablet.bucket_hash import hash_buckets

    t = engine.catalog.create_table("db", range_spec())
    rows = [(d("2017-02-01"), k, k) for k in range(200)]
    engine.load(t, rows_table(SCHEMA, rows))
    p2017 = t.partition("p2017")
    for tablet in engine.catalog.tablets(t.table_id, p2017.partition_id):
        got = scan(engine, t, tablet_ids=[tablet.tablet_id])
        assert got.num_rows > 0
        assert set(hash_buckets(got, ["k"], 4).tolist()) == {tablet.bucket}


def test_no_partition_strict_and_non_strict(engine: StorageEngine, root: Path) -> None:
    t = engine.catalog.create_table("db", range_spec(with_max=False))
    with pytest.raises(StorageError) as e:
        engine.load(t, rows_table(SCHEMA, ROWS), label="strict1")
    assert e.value.code == 1105
    assert "Insert has filtered data in strict mode" in e.value.message
    assert "no partition for this tuple" in e.value.message
    assert scan(engine, t).num_rows == 0
    assert data_files(root) == []
    res = engine.load(t, rows_table(SCHEMA, ROWS), label="strict1", strict=False)  # failed label is reusable
    assert (res.num_rows, res.filtered_rows) == (4, 2)
    assert scan(engine, t).num_rows == 4
    with pytest.raises(StorageError) as e:
        engine.load(t, rows_table(SCHEMA, [(d("2030-01-01"), 1, 1)]), strict=False)
    assert "all partitions have no load data" in e.value.message


def test_null_partition_value_goes_to_minimum_partition(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, [(None, 1, 1)]))
    assert table_rows(scan(engine, t, partition_ids=[t.partition("p2016").partition_id])) == [(None, 1, 1)]


def test_list_partition_routing(engine: StorageEngine) -> None:
    schema = pa.schema([("city", pa.string()), ("n", pa.int32())])
    t = engine.catalog.create_table("db", list_spec())
    engine.load(t, rows_table(schema, [("北京", 1), ("上海", 2), ("天津", 3), (None, 4)]))
    parts = {p.name: table_rows(scan(engine, t, schema, partition_ids=[p.partition_id])) for p in t.partitions}
    assert parts == {"p_bj": [("北京", 1), ("天津", 3)], "p_sh": [("上海", 2)], "p_null": [(None, 4)]}
    with pytest.raises(StorageError) as e:
        engine.load(t, rows_table(schema, [("广州", 5)]))
    assert e.value.code == 1105


def test_not_null_violation_is_filtered(engine: StorageEngine) -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.int32())])
    t = engine.catalog.create_table("db", spec("nn", KEYS_DUP, [key("k", "INT"), value("v", "INT", nullable=False)]))
    with pytest.raises(StorageError) as e:
        engine.load(t, rows_table(schema, [(1, 1), (2, None)]))
    assert e.value.code == 1105
    assert engine.load(t, rows_table(schema, [(1, 1), (2, None)]), strict=False).filtered_rows == 1


def test_failure_mid_load_leaves_nothing(engine: StorageEngine, root: Path, monkeypatch) -> None:
    engine.load_processes = 0  # the injected failure is in this process's writer
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, ROWS[:2]), label="first")
    before_files = data_files(root)
    before = table_rows(scan(engine, t))
    real_write = engine_module.write_segments
    calls = {"n": 0}

    def failing_write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full (injected)")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(engine_module, "write_segments", failing_write)
    with pytest.raises(OSError):
        engine.load(t, rows_table(SCHEMA, ROWS), label="second")
    monkeypatch.setattr(engine_module, "write_segments", real_write)
    assert calls["n"] == 3
    assert table_rows(scan(engine, t)) == before
    assert data_files(root) == before_files
    assert [p.visible_version for p in engine.catalog.get_table_by_id(t.table_id).partitions] == [2, 2, 1]
    # the failed label can be used again, and the load then works
    engine.load(t, rows_table(SCHEMA, ROWS), label="second")
    assert scan(engine, t).num_rows == 6


def test_publish_failure_removes_moved_files(engine: StorageEngine, root: Path, monkeypatch) -> None:
    t = engine.catalog.create_table("db", range_spec())

    def broken_publish(*args, **kwargs):
        raise RuntimeError("publish failed (injected)")

    monkeypatch.setattr(engine.catalog, "publish", broken_publish)
    with pytest.raises(RuntimeError):
        engine.load(t, rows_table(SCHEMA, ROWS))
    assert data_files(root) == []
    assert not any((root / "staging").iterdir())


def test_crash_before_publish_is_swept_on_open(engine: StorageEngine, root: Path) -> None:
    """Simulate kill -9 after segments were written and renamed but before the publish commit."""
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, ROWS[:3]))
    committed = data_files(root)
    txn = engine.catalog.begin_txn(t.db_id, t.table_id, "crashing")
    tablet = engine.catalog.tablets(t.table_id, t.partitions[0].partition_id)[0]
    staged = engine.write_rowset(txn, tablet, t.base_index, rows_table(SCHEMA, ROWS[:1]))
    (root / "data" / str(tablet.tablet_id)).mkdir(exist_ok=True)
    for f in (engine.staging_dir(txn) / str(tablet.tablet_id)).iterdir():  # renamed into place, not published
        f.rename(root / "data" / str(tablet.tablet_id) / f.name)
    engine.write_rowset(txn, tablet, t.base_index, rows_table(SCHEMA, ROWS[1:2]))  # still in staging
    (root / "data" / "424242").mkdir()  # a tablet the catalog does not know
    (root / "data" / "424242" / "x_0.dat").write_bytes(b"junk")
    assert staged is not None and len(data_files(root)) > len(committed)
    engine.close()

    reopened = StorageEngine(root)
    reopened.open()
    assert data_files(root) == committed
    assert not any((root / "staging").iterdir())
    t2 = reopened.catalog.get_table("db", "t")
    assert scan(reopened, t2).num_rows == 3
    reopened.close()


def test_restart_keeps_everything(root: Path) -> None:
    e = StorageEngine(root)
    e.open()
    e.catalog.create_database("db")
    t = e.catalog.create_table("db", range_spec())
    e.load(t, rows_table(SCHEMA, ROWS), label="l1")
    e.load(t, rows_table(SCHEMA, [(d("2016-05-01"), 1, 5)]), label="l2")
    expected = table_rows(scan(e, t))
    e.close()
    e2 = StorageEngine(root)
    e2.open()
    t2 = e2.catalog.get_table("db", "t")
    assert table_rows(scan(e2, t2)) == expected
    assert (d("2016-05-01"), 1, 15) in expected
    with pytest.raises(StorageError):
        e2.load(t2, rows_table(SCHEMA, ROWS), label="l1")
    e2.close()


def test_snapshot_isolation(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, [(d("2017-02-01"), 1, 1)]))
    snap = engine.snapshot(t)
    engine.load(t, rows_table(SCHEMA, [(d("2017-02-01"), 1, 10), (d("2017-02-01"), 2, 2)]))
    assert table_rows(scan(engine, t, versions=snap)) == [(d("2017-02-01"), 1, 1)]
    assert table_rows(scan(engine, t)) == [(d("2017-02-01"), 1, 11), (d("2017-02-01"), 2, 2)]
    assert table_rows(scan(engine, t, versions=engine.snapshot(t))) == table_rows(scan(engine, t))


def test_truncate_empties_and_deletes_files(engine: StorageEngine, root: Path) -> None:
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, ROWS))
    assert data_files(root)
    t2 = engine.catalog.truncate_table("db", "t")
    assert scan(engine, t2).num_rows == 0
    assert data_files(root) == []
    assert [p.visible_version for p in t2.partitions] == [1, 1, 1]
    engine.load(t2, rows_table(SCHEMA, ROWS[:2]))
    assert scan(engine, t2).num_rows == 2
    assert [p.visible_version for p in engine.catalog.get_table_by_id(t.table_id).partitions] == [2, 2, 1]


def test_drop_table_deletes_files(engine: StorageEngine, root: Path) -> None:
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, ROWS))
    assert scan(engine, t).num_rows == len(ROWS)  # the scan leaves shared readers of the files behind
    files = [str(p) for p in data_files(root)]
    assert any(f in segment_reader._cache for f in files)
    engine.catalog.drop_table("db", "t")
    assert data_files(root) == []
    assert not any(f in segment_reader._cache for f in files)  # and they go with the files


def test_empty_scan_has_requested_schema(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("db", range_spec())
    got = scan(engine, t, columns=["v", "dt"])
    assert got.num_rows == 0
    assert got.schema == pa.schema([("v", pa.int64()), ("dt", pa.date32())])


def test_key_predicates_prune_and_filter_exactly(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("db", range_spec())
    rows = [(d("2017-02-01"), k, 1) for k in range(5000)]
    engine.load(t, rows_table(SCHEMA, rows))
    engine.load(t, rows_table(SCHEMA, rows[:10]))
    res = engine.scan(ScanRequest(table=t, schema=SCHEMA, columns=["k", "v"],
                                  predicates=[ColumnPredicate("k", Op.LT, (3,))]))
    assert table_rows(res.table) == [(0, 2), (1, 2), (2, 2)]
    # value predicates are never applied before the merge: v = 2 only holds after merging both loads
    res = engine.scan(ScanRequest(table=t, schema=SCHEMA, columns=["k", "v"],
                                  predicates=[ColumnPredicate("v", Op.EQ, (2,))]))
    assert sorted(res.table.column("k").to_pylist()) == list(range(10))
    res = engine.scan(ScanRequest(table=t, schema=SCHEMA, columns=["k"],
                                  predicates=[ColumnPredicate("K", Op.IN, (7, 4999, 6000))]))
    assert sorted(res.table.column("k").to_pylist()) == [7, 4999]
    assert res.stats.raw_rows_read < 2 * 5000  # the short key / zone maps skipped pages


def test_random_distribution_spreads_rows(engine: StorageEngine) -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.int32())])
    t = engine.catalog.create_table("db", spec("rnd", KEYS_DUP, [key("k", "INT"), value("v", "INT")], buckets=4,
                                               distribution="RANDOM"))
    engine.load(t, rows_table(schema, [(i, i) for i in range(100)]))
    counts = [scan(engine, t, schema, tablet_ids=[tb.tablet_id]).num_rows
              for tb in engine.catalog.tablets(t.table_id)]
    assert sum(counts) == 100 and min(counts) == 25


def test_label_reuse_error(engine: StorageEngine) -> None:
    t = engine.catalog.create_table("db", range_spec())
    engine.load(t, rows_table(SCHEMA, ROWS[:1]), label="my_label")
    with pytest.raises(StorageError) as e:
        engine.load(t, rows_table(SCHEMA, ROWS[:1]), label="my_label")
    assert "Label [my_label] has already been used." in e.value.message
    assert table_rows(scan(engine, t)) == [ROWS[0]]


def test_large_load_many_segments(engine: StorageEngine, root: Path) -> None:
    e = StorageEngine(root, {"max_segment_bytes": str(64 * 1024)})
    t = e.catalog.create_table("db", spec("big", KEYS_AGG, COLUMNS[1:], buckets=1))
    schema = pa.schema([("k", pa.int32()), ("v", pa.int64())])
    n = 50_000
    data = pa.table({"k": pa.array(np.arange(n, dtype=np.int32) % 20_000), "v": pa.array(np.ones(n, np.int64))},
                    schema=schema)
    e.load(t, data)
    rowset = e.catalog.rowsets(e.catalog.tablets(t.table_id)[0].tablet_id, 10)[0]
    assert rowset.num_segments > 1 and rowset.num_rows == 20_000
    got = scan(e, t, schema)
    assert got.num_rows == 20_000
    assert sorted(set(got.column("v").to_pylist())) == [2, 3]
    e.close()


def test_a_load_that_a_schema_swap_overtakes_between_table_and_tablets_is_refused_whole(
        engine: StorageEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load read the table before a schema change swapped its index and the tablets after: it is refused with
    the publish's own "load again", its transaction aborted, nothing written (not "tablet ... not found")."""
    t = engine.catalog.create_table("db", range_spec())
    real = engine.tablet_map
    monkeypatch.setattr(engine, "tablet_map", lambda table: {k: v for k, v in real(table).items()
                                                             if k[1] != table.base_index_id})
    with pytest.raises(StorageError) as e:
        engine.load(t, rows_table(SCHEMA, [(d("2017-02-01"), 1, 1)]), label="swapped")
    assert e.value.message.endswith("(a schema change finished); load again")
    assert engine.catalog.get_txn_by_label(t.db_id, "swapped").status == "ABORTED"
    monkeypatch.undo()
    assert scan(engine, t).num_rows == 0

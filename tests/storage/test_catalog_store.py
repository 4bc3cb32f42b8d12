"""The SQLite catalog: DDL, errors with Doris text, ids, tablets, labels, publish, truncate, persistence."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from storage_specs import AGG_EXAMPLE_COLUMNS, key, spec, value

from storage.catalog.model import KEYS_AGG, KEYS_DUP, PartitionInfo, PartitionItem, Rowset
from storage.catalog.store import FIRST_ID, Catalog, visible_rowsets
from storage.errors import StorageError


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    c = Catalog(tmp_path)
    c.create_database("example_db")
    return c


def _range_spec(name: str = "r"):
    items = (
        PartitionItem("p1", lower=("0000-01-01",), upper=("2017-01-01",)),
        PartitionItem("p2", lower=("2017-01-01",), upper=("2018-01-01",), buckets=5),
        PartitionItem("p3", lower=("2018-01-01",), upper=None),
    )
    return spec(name, KEYS_DUP, [key("d", "DATE"), value("v", "INT")], buckets=2,
                partition=(PartitionInfo("RANGE", ("d",)), items))


def _rowset(tablet_id: int, rid: str, start: int = 0, end: int = 0, rows: int = 1) -> Rowset:
    return Rowset(rid, tablet_id, start, end, num_rows=rows, num_segments=1, data_size=100, txn_id=0)


def test_database_lifecycle_and_errors(catalog: Catalog) -> None:
    assert catalog.get_database("example_db").db_id >= FIRST_ID
    with pytest.raises(StorageError) as e:
        catalog.create_database("example_db")
    assert (e.value.code, e.value.sqlstate) == (1007, "HY000")
    assert "Can't create database 'example_db'; database exists" in e.value.message
    assert catalog.create_database("example_db", if_not_exists=True) is None
    assert catalog.get_database("Example_DB") is None  # names are case-sensitive
    catalog.create_database("other")
    assert [d.name for d in catalog.list_databases()] == ["example_db", "other"]
    catalog.drop_database("other")
    catalog.drop_database("other", if_exists=True)
    with pytest.raises(StorageError):
        catalog.drop_database("other")
    with pytest.raises(StorageError) as e:
        catalog.get_table("nope", "t")
    assert (e.value.code, e.value.sqlstate) == (1049, "42000")
    assert "Unknown database 'nope'" in e.value.message


def test_create_table_builds_index_partitions_and_tablets(catalog: Catalog) -> None:
    t = catalog.create_table("example_db", _range_spec())
    assert t is not None and t.table_id >= FIRST_ID
    assert [p.name for p in t.partitions] == ["p1", "p2", "p3"]
    assert [p.buckets for p in t.partitions] == [2, 5, 2]
    assert all(p.visible_version == 1 and p.next_version == 2 for p in t.partitions)
    assert t.base_index.columns[0].name == "d" and t.base_index.short_key_column_count == 1
    tablets = catalog.tablets(t.table_id)
    assert len(tablets) == 9
    assert sorted(tb.bucket for tb in catalog.tablets(t.table_id, t.partitions[1].partition_id)) == [0, 1, 2, 3, 4]
    assert len({tb.tablet_id for tb in tablets}) == 9
    assert catalog.get_table("example_db", "r") == t
    assert catalog.get_table("example_db", "R") is None  # table names are case-sensitive
    with pytest.raises(StorageError) as e:
        catalog.create_table("example_db", _range_spec())
    assert (e.value.code, e.value.sqlstate) == (1050, "42S01")
    assert "Table 'r' already exists" in e.value.message
    assert catalog.create_table("example_db", _range_spec(), if_not_exists=True) is None
    with pytest.raises(StorageError) as e:
        catalog.create_table("missing_db", _range_spec())
    assert e.value.code == 1049


def test_drop_table_and_database(catalog: Catalog) -> None:
    dropped: list[int] = []
    catalog.on_tablets_dropped(dropped.extend)
    t = catalog.create_table("example_db", _range_spec())
    tablet_ids = sorted(tb.tablet_id for tb in catalog.tablets(t.table_id))
    catalog.drop_table("example_db", "r")
    assert catalog.get_table("example_db", "r") is None
    assert sorted(dropped) == tablet_ids
    assert catalog.tablets(t.table_id) == []
    with pytest.raises(StorageError) as e:
        catalog.drop_table("example_db", "r")
    assert (e.value.code, e.value.sqlstate) == (1051, "42S02")
    assert "Unknown table 'r'" in e.value.message
    catalog.drop_table("example_db", "r", if_exists=True)
    catalog.create_table("example_db", _range_spec("a"))
    catalog.drop_database("example_db")
    assert catalog.get_database("example_db") is None
    assert catalog.all_tablet_ids() == set()


def test_labels_and_publish(catalog: Catalog) -> None:
    t = catalog.create_table("example_db", _range_spec())
    p1, p2 = t.partitions[0], t.partitions[1]
    tab1 = catalog.tablets(t.table_id, p1.partition_id)[0]
    tab2 = catalog.tablets(t.table_id, p2.partition_id)[0]
    txn = catalog.begin_txn(t.db_id, t.table_id, "lbl")
    with pytest.raises(StorageError) as e:
        catalog.begin_txn(t.db_id, t.table_id, "lbl")
    assert "Label [lbl] has already been used." in e.value.message
    versions = catalog.publish(txn, [_rowset(tab1.tablet_id, "a", rows=3), _rowset(tab2.tablet_id, "b", rows=4)],
                               [p1.partition_id, p2.partition_id])
    assert versions == {p1.partition_id: 2, p2.partition_id: 2}
    t2 = catalog.get_table_by_id(t.table_id)
    assert [(p.visible_version, p.next_version, p.row_count, p.data_size) for p in t2.partitions[:2]] == \
        [(2, 3, 3, 100), (2, 3, 4, 100)]
    assert catalog.get_txn(txn).status == "VISIBLE"
    with pytest.raises(StorageError):  # a label stays used after success
        catalog.begin_txn(t.db_id, t.table_id, "lbl")
    with pytest.raises(StorageError):  # a transaction publishes once
        catalog.publish(txn, [], [p1.partition_id])
    # an aborted transaction frees its label; a failed publish changes nothing
    txn2 = catalog.begin_txn(t.db_id, t.table_id, "lbl2")
    with pytest.raises(StorageError):
        catalog.publish(txn2, [_rowset(tab1.tablet_id, "c"), _rowset(999999, "d")], [p1.partition_id])
    assert catalog.get_table_by_id(t.table_id).partitions[0].visible_version == 2
    assert [r.rowset_id for r in catalog.rowsets(tab1.tablet_id, 10)] == ["a"]
    catalog.abort_txn(txn2)
    txn3 = catalog.begin_txn(t.db_id, t.table_id, "lbl2")
    assert catalog.publish(txn3, [_rowset(tab1.tablet_id, "e")], [p1.partition_id]) == {p1.partition_id: 3}
    assert [(r.rowset_id, r.start_version) for r in catalog.rowsets(tab1.tablet_id, 3)] == [("a", 2), ("e", 3)]
    assert [r.rowset_id for r in catalog.rowsets(tab1.tablet_id, 2)] == ["a"]


def test_truncate_resets_partitions(catalog: Catalog) -> None:
    t = catalog.create_table("example_db", _range_spec())
    p2 = t.partitions[1]
    tab = catalog.tablets(t.table_id, p2.partition_id)[0]
    txn = catalog.begin_txn(t.db_id, t.table_id, "x")
    catalog.publish(txn, [_rowset(tab.tablet_id, "a")], [p2.partition_id])
    dropped: list[int] = []
    catalog.on_tablets_dropped(dropped.extend)
    t2 = catalog.truncate_table("example_db", "r")
    assert [p.name for p in t2.partitions] == ["p1", "p2", "p3"]
    assert [p.buckets for p in t2.partitions] == [2, 5, 2]
    assert all(p.visible_version == 1 and p.row_count == 0 for p in t2.partitions)
    assert not {p.partition_id for p in t2.partitions} & {p.partition_id for p in t.partitions}
    assert len(catalog.tablets(t.table_id)) == 9 and len(dropped) == 9
    assert catalog.all_rowset_ids() == set()
    t3 = catalog.truncate_table("example_db", "r", ["p1"])
    assert t3.partitions[0].partition_id != t2.partitions[0].partition_id
    assert t3.partitions[1].partition_id == t2.partitions[1].partition_id


def test_catalog_survives_reopen(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    c.create_database("db")
    t = c.create_table("db", spec("agg", KEYS_AGG, AGG_EXAMPLE_COLUMNS, buckets=4))
    txn = c.begin_txn(t.db_id, t.table_id, "persisted")
    tablet = c.tablets(t.table_id)[0]
    c.publish(txn, [_rowset(tablet.tablet_id, "r1", rows=7)], [t.partitions[0].partition_id])
    c.close()
    c2 = Catalog(tmp_path)
    t2 = c2.get_table("db", "agg")
    assert t2.columns == t.columns and t2.distribution == t.distribution
    assert t2.partitions[0].visible_version == 2 and t2.partitions[0].row_count == 7
    assert [r.rowset_id for r in c2.rowsets(tablet.tablet_id, 2)] == ["r1"]
    with pytest.raises(StorageError):
        c2.begin_txn(t.db_id, t.table_id, "persisted")
    new_db = c2.create_database("db2")
    assert new_db.db_id > max(tb.tablet_id for tb in c2.tablets(t.table_id))  # ids never reused


def test_concurrent_ddl_is_serialized(catalog: Catalog) -> None:
    errors: list[Exception] = []

    def worker(i: int) -> None:
        try:
            for j in range(10):
                catalog.create_table("example_db", spec(f"t{i}_{j}", KEYS_DUP, [key("k", "INT")], buckets=2))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(catalog.list_tables("example_db")) == 40
    assert len(catalog.all_tablet_ids()) == 80


def test_add_index_creates_tablets_per_partition(catalog: Catalog) -> None:
    t = catalog.create_table("example_db", _range_spec())
    meta = catalog.add_index(t.table_id, "r1", [t.columns[0]], 1)
    t2 = catalog.get_table_by_id(t.table_id)
    assert [i.name for i in t2.indexes] == ["r", "r1"]
    assert len(catalog.tablets(t.table_id, index_id=meta.index_id)) == 9


def test_visible_rowsets_follows_the_version_path() -> None:
    rs = [_rowset(1, "a", 2, 2), _rowset(1, "b", 3, 3), _rowset(1, "c", 5, 5), _rowset(1, "abc", 2, 5),
          _rowset(1, "f", 6, 6)]
    assert [r.rowset_id for r in visible_rowsets(rs, 6)] == ["abc", "f"]
    assert [r.rowset_id for r in visible_rowsets(rs, 4)] == ["a", "b"]  # an older snapshot reads the inputs
    assert [r.rowset_id for r in visible_rowsets(rs, 5)] == ["abc"]
    assert visible_rowsets(rs, 1) == []


def _reference_path(rowsets: list[Rowset], max_version: int) -> list[Rowset]:
    """The rule as a pass over every candidate (what visible_path's bisecting walk must equal)."""
    candidates = sorted((r for r in rowsets if r.end_version <= max_version),
                        key=lambda r: (r.start_version, -r.end_version))
    path, next_needed = [], -1
    for r in candidates:
        if r.start_version >= next_needed:
            path.append(r)
            next_needed = r.end_version + 1
    return path


@pytest.mark.parametrize("seed", range(40))
def test_visible_path_equals_the_rule_on_random_histories(seed: int) -> None:
    """Loads with gaps (versions a tablet never got), nested and overlapping compaction outputs, stale inputs
    kept beside them, read at every version."""
    import random

    rng = random.Random(seed)
    rowsets = []
    version = 1
    for n in range(rng.randint(0, 60)):
        version += rng.randint(1, 2)
        rowsets.append(_rowset(1, f"l{n}", version, version))
        if rng.random() < 0.2 and version > 3:
            lo = rng.randint(2, version - 1)
            rowsets.append(_rowset(1, f"c{n}", lo, rng.randint(lo, version)))
    for max_version in range(0, version + 2):
        got = visible_rowsets(rowsets, max_version)
        assert [r.rowset_id for r in got] == [r.rowset_id for r in _reference_path(rowsets, max_version)]


def test_version_paths_of_cached_rowsets_follow_every_publish(catalog: Catalog) -> None:
    """A tablet's visible path comes from its cached rowset list, kept in version order as publishes add to it:
    each publish is seen, and a caller changing the list it got changes nothing for the next."""
    t = catalog.create_table("example_db", _range_spec())
    p1 = t.partitions[0]
    tab = catalog.tablets(t.table_id, p1.partition_id)[0]
    seen = []
    for i in range(5):
        txn = catalog.begin_txn(t.db_id, t.table_id, f"m{i}")
        catalog.publish(txn, [_rowset(tab.tablet_id, f"r{i}")], [p1.partition_id])
        got = catalog.rowsets(tab.tablet_id, 1 << 62)
        assert [r.rowset_id for r in got] == [f"r{j}" for j in range(i + 1)]
        got.clear()  # the caller's own list
        seen.append([r.rowset_id for r in catalog.rowsets(tab.tablet_id, 3)])
    assert seen[-1] == ["r0", "r1"] and seen[0] == ["r0"]
    by_tablet = catalog.rowsets_for_tablets([tab], {p1.partition_id: 4})
    assert [r.rowset_id for r in by_tablet[tab.tablet_id]] == ["r0", "r1", "r2"]


def test_a_publish_leaves_its_table_read(catalog: Catalog) -> None:
    """A load's publish reads its table again before it lets go of the lock, so readers find it in memory, with
    the same column tuples as before (what is kept by their identity stays valid)."""
    t = catalog.create_table("example_db", _range_spec())
    p1 = t.partitions[0]
    tab1 = catalog.tablets(t.table_id, p1.partition_id)[0]
    columns = catalog.get_table_by_id(t.table_id).base_index.columns
    txn = catalog.begin_txn(t.db_id, t.table_id, "lbl")
    catalog.publish(txn, [_rowset(tab1.tablet_id, "a", rows=3)], [p1.partition_id])
    assert catalog.table_cached(t.table_id)
    again = catalog.get_table_by_id(t.table_id)
    assert again.partitions[0].visible_version == 2 and again.base_index.columns is columns

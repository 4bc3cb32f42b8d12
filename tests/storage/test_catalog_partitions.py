"""Catalog partition changes: add_partitions (all or nothing, re-checked on commit, concurrent adders, range
order, tablets of every index), drop_partitions, modify_partition_properties, set_table_properties, and the
rules of storage.catalog.partition_items."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from storage_specs import key, spec, value

from storage.catalog import partition_items as pi
from storage.catalog.model import KEYS_DUP, Column, PartitionInfo, PartitionItem
from storage.catalog.store import Catalog
from storage.errors import StorageError

DATE = ["DATE"]


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    c = Catalog(tmp_path)
    c.create_database("db")
    return c


def _table(catalog: Catalog, kind: str = "RANGE"):
    if kind == "RANGE":
        items = (PartitionItem("p1", lower=("0000-01-01",), upper=("2020-02-01",)),
                 PartitionItem("p3", lower=("2020-03-01",), upper=("2020-04-01",)))
        columns = [key("d", "DATE"), value("v", "INT")]
    else:
        items = (PartitionItem("p_bj", values=(("Beijing",),)),)
        columns = [key("city", "VARCHAR(20)"), value("v", "INT")]
    t = catalog.create_table("db", spec("t", KEYS_DUP, columns, buckets=2,
                                        partition=(PartitionInfo(kind, (columns[0].name,)), items)))
    catalog.add_index(t.table_id, "r", (columns[0],), 1)
    return catalog.get_table("db", "t")


def rng(name: str, lo: str, hi: str | None) -> PartitionItem:
    return PartitionItem(name, lower=(lo,), upper=(hi,))


def test_add_partitions_keeps_range_order_and_creates_tablets_for_every_index(catalog: Catalog) -> None:
    t = _table(catalog)
    t2 = catalog.add_partitions(t.table_id, [rng("p4", "2020-04-01", None), rng("p2", "2020-02-01", "2020-03-01")],
                                [3, 1])
    assert [p.name for p in t2.partitions] == ["p1", "p2", "p3", "p4"]
    assert [p.buckets for p in t2.partitions] == [2, 1, 2, 3]
    new_ids = {p.partition_id for p in t2.partitions} - {p.partition_id for p in t.partitions}
    assert len(new_ids) == 2 and min(new_ids) > max(p.partition_id for p in t.partitions)
    p4 = t2.partition("p4")
    assert p4.visible_version == 1 and p4.item.buckets == 3
    for index in t2.indexes:
        assert [tb.bucket for tb in catalog.tablets(t.table_id, p4.partition_id, index.index_id)] == [0, 1, 2]
    # survives reopening
    assert [p.name for p in Catalog(catalog.root).get_table("db", "t").partitions] == ["p1", "p2", "p3", "p4"]


def test_add_partitions_is_all_or_nothing_and_rechecks(catalog: Catalog) -> None:
    t = _table(catalog)
    before = catalog.all_tablet_ids()
    with pytest.raises(StorageError) as e:
        catalog.add_partitions(t.table_id, [rng("p2", "2020-02-01", "2020-03-01"),
                                            rng("p2b", "2020-02-15", "2020-02-20")], [1, 1])
    assert e.value.message.endswith(
        "Range [types: [DATEV2]; keys: [2020-02-15]; ..types: [DATEV2]; keys: [2020-02-20]; ) is intersected "
        "with range: [types: [DATEV2]; keys: [2020-02-01]; ..types: [DATEV2]; keys: [2020-03-01]; )")
    assert [p.name for p in catalog.get_table("db", "t").partitions] == ["p1", "p3"]
    assert catalog.all_tablet_ids() == before
    with pytest.raises(StorageError) as e:
        catalog.add_partitions(t.table_id, [rng("P3", "2021-01-01", "2021-02-01")], [1])
    assert (e.value.code, e.value.message) == (1517, "errCode = 2, detailMessage = Duplicate partition name P3")


def test_concurrent_adders_of_overlapping_partitions_one_wins(catalog: Catalog) -> None:
    t = _table(catalog)
    results: list[object] = []
    start = threading.Barrier(8)

    def add(i: int) -> None:
        start.wait()
        try:
            catalog.add_partitions(t.table_id, [rng(f"q{i}", f"2020-05-0{i + 1}", "2020-06-01")], [1])
            results.append("ok")
        except StorageError as e:
            results.append(e.message)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results.count("ok") == 1
    assert all("is intersected with range" in r for r in results if r != "ok")
    assert len(catalog.get_table("db", "t").partitions) == 3


def test_add_list_partitions_rechecks_values(catalog: Catalog) -> None:
    t = _table(catalog, "LIST")
    catalog.add_partitions(t.table_id, [PartitionItem("p_sh", values=(("Shanghai",), ("Suzhou",)))], [2])
    with pytest.raises(StorageError) as e:
        catalog.add_partitions(t.table_id, [PartitionItem("p_x", values=(("Wuhan",), ("Beijing",)))], [2])
    assert e.value.message == (
        "errCode = 2, detailMessage = Invalid list value format: errCode = 2, detailMessage = The partition "
        "key[(\"Beijing\")] in partition item[('Wuhan','Beijing')] is conflict with current "
        "partitionKeys[(\"Beijing\")]")
    assert [p.name for p in catalog.get_table("db", "t").partitions] == ["p_bj", "p_sh"]


def test_add_partitions_to_unpartitioned_table_is_refused(catalog: Catalog) -> None:
    t = catalog.create_table("db", spec("plain", KEYS_DUP, [key("k", "INT")]))
    with pytest.raises(StorageError) as e:
        catalog.add_partitions(t.table_id, [rng("p", "1", "2")], [1])
    assert "Only support adding partition to range and list partitioned table" in e.value.message


def test_drop_partitions_removes_tablets_and_rowsets(catalog: Catalog) -> None:
    t = _table(catalog)
    dropped: list[list[int]] = []
    catalog.on_tablets_dropped(dropped.append)
    p3 = t.partition("p3")
    tablets = {tb.tablet_id for tb in catalog.tablets(t.table_id, p3.partition_id)}
    assert len(tablets) == 4  # base + rollup, 2 buckets each
    t2 = catalog.drop_partitions(t.table_id, ["P3"])
    assert [p.name for p in t2.partitions] == ["p1"]
    assert set(dropped[0]) == tablets and not tablets & catalog.all_tablet_ids()
    catalog.drop_partitions(t.table_id, ["p3"], if_exists=True)
    with pytest.raises(StorageError) as e:
        catalog.drop_partitions(t.table_id, ["p3"])
    assert (e.value.code, e.value.message) == (1507, "errCode = 2, detailMessage = Error in list of partitions to p3")
    # the freed range can be added again, and truncate still finds positions in order
    catalog.add_partitions(t.table_id, [rng("p3", "2020-03-01", "2020-04-01")], [1])
    catalog.truncate_table("db", "t", ["p3"])
    assert [p.name for p in catalog.get_table("db", "t").partitions] == ["p1", "p3"]


def test_modify_partition_and_table_properties(catalog: Catalog) -> None:
    t = _table(catalog)
    t2 = catalog.modify_partition_properties(t.table_id, ["p1", "P3"], [("storage_medium", "SSD")])
    t2 = catalog.modify_partition_properties(t.table_id, ["p1"], [("replication_allocation", "tag.location.default: 2")])
    assert dict(t2.partition("p1").item.properties) == {"storage_medium": "SSD",
                                                        "replication_allocation": "tag.location.default: 2"}
    assert dict(t2.partition("p3").item.properties) == {"storage_medium": "SSD"}
    with pytest.raises(StorageError) as e:
        catalog.modify_partition_properties(t.table_id, ["nope"], [("storage_medium", "SSD")])
    assert e.value.message.endswith("Partition[nope] does not exist in table[t]")
    t3 = catalog.set_table_properties(t.table_id, [("replication_allocation", "tag.location.default: 1"),
                                                   ("dynamic_partition.enable", "false")])
    assert t3.properties == (("replication_allocation", "tag.location.default: 1"), ("dynamic_partition.enable", "false"))


def test_partition_item_texts_and_order() -> None:
    assert pi.range_text(("0000-01-01",), (None,), DATE) == (
        "[types: [DATEV2]; keys: [0000-01-01]; ..types: [DATEV2]; keys: [MAXVALUE]; )")
    assert pi.list_text([("1", "a"), ("2", "b")], ["INT", "VARCHAR(5)"]) == (
        "[types: [INT, VARCHAR]; keys: [1, a]; , types: [INT, VARCHAR]; keys: [2, b]; ]")
    assert pi.key_sql(("2020-01-01",), DATE) == "('2020-01-01')"
    assert pi.key_sql(("1", "NULL"), ["INT", "INT"]) == '("1", NULL)'
    assert pi.values_in_sql([("1", "a"), ("2", "b")]) == "(('1', 'a'),('2', 'b'))"
    items = [PartitionItem("b", lower=("10",), upper=(None,)), PartitionItem("a", lower=("-5",), upper=("10",)),
             PartitionItem("c", lower=("-2147483648",), upper=("-5",))]
    assert [i.name for i in pi.sort_items(items, "RANGE", ["INT"])] == ["c", "a", "b"]
    lists = [PartitionItem("x", values=(("b",),)), PartitionItem("y", values=(("a",), ("z",)))]
    assert [i.name for i in pi.sort_items(lists, "LIST", ["VARCHAR(3)"])] == ["y", "x"]


def test_catalog_keeps_columns_type_texts() -> None:
    # the rules read the partition columns' Doris type texts, nothing else
    assert pi.internal_type_name(Column("d", "DATETIME(3)", True, None).type) == "DATETIMEV2"

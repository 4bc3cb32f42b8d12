"""Catalog.replace_rowsets: old -> new in one commit, with the old versions; nothing changes if an old
rowset is gone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from storage.catalog.model import (
    KEYS_DUP,
    Column,
    DistributionInfo,
    PartitionInfo,
    PartitionItem,
    Rowset,
    TableSpec,
)
from storage.catalog.rollup_jobs import JobStateChanged
from storage.catalog.store import Catalog


def _catalog(tmp_path):
    cat = Catalog(tmp_path)
    cat.create_database("d")
    spec = TableSpec(name="t", keys_type=KEYS_DUP, columns=(Column("k", "INT", True, None),),
                     short_key_column_count=1, partition_info=PartitionInfo("UNPARTITIONED"),
                     partition_items=(PartitionItem("t"),), distribution=DistributionInfo("HASH", ("k",), 1))
    table = cat.create_table("d", spec)
    tablet = cat.tablets(table.table_id)[0]
    rowsets = []
    for n in range(2):
        txn = cat.begin_txn(table.db_id, table.table_id)
        rs = Rowset(f"r{n}", tablet.tablet_id, 0, 0, 10, 1, 100, txn)
        cat.publish(txn, [rs], [tablet.partition_id])
    rowsets = cat.all_rowsets(tablet.tablet_id)
    return cat, table, tablet, rowsets


def test_replace_rowsets_swaps_in_one_commit(tmp_path):
    cat, table, tablet, rowsets = _catalog(tmp_path)
    assert [(r.rowset_id, r.start_version, r.end_version) for r in rowsets] == [("r0", 2, 2), ("r1", 3, 3)]
    new = [replace(r, rowset_id=r.rowset_id + "x", data_size=150) for r in rowsets]
    cat.replace_rowsets([r.rowset_id for r in rowsets], new)
    now = cat.rowsets(tablet.tablet_id, 3)
    assert [(r.rowset_id, r.start_version, r.end_version, r.num_rows) for r in now] == [
        ("r0x", 2, 2, 10), ("r1x", 3, 3, 10)]
    assert cat.get_table_by_id(table.table_id).partitions[0].data_size == 300
    cat.close()


def test_replace_rowsets_fails_cleanly_when_an_old_one_is_gone(tmp_path):
    cat, table, tablet, rowsets = _catalog(tmp_path)
    new = [replace(r, rowset_id=r.rowset_id + "x") for r in rowsets]
    with pytest.raises(JobStateChanged):
        cat.replace_rowsets(["r0", "nope"], new)
    assert [r.rowset_id for r in cat.all_rowsets(tablet.tablet_id)] == ["r0", "r1"]
    cat.close()

"""CANCEL ALTER TABLE COLUMN puts the table's index definition back to what it was before the ALTER."""

from __future__ import annotations

from storage.catalog.model import (
    KEYS_DUP,
    Column,
    DistributionInfo,
    IndexDef,
    PartitionInfo,
    PartitionItem,
    TableSpec,
)
from storage.catalog.store import Catalog


def test_cancel_restores_the_previous_index_definition(tmp_path):
    catalog = Catalog(tmp_path)
    catalog.create_database("db")
    table = catalog.create_table("db", TableSpec(
        name="t", keys_type=KEYS_DUP,
        columns=(Column("k", "INT", is_key=True, aggregation=None, nullable=False),
                 Column("c", "INT", is_key=False, aggregation="NONE")),
        short_key_column_count=1, partition_info=PartitionInfo("UNPARTITIONED"), partition_items=(PartitionItem("t"),),
        distribution=DistributionInfo("HASH", ("k",), 1), properties=(("bloom_filter_columns", "k"),),
    ))
    job = catalog.alter_table_indexes(table.table_id, (IndexDef("idx_c", ("c",), "BITMAP"),),
                                      (("bloom_filter_columns", "k, c"),), job_timeout=60)
    changed = catalog.get_table_by_id(table.table_id)
    assert [d.name for d in changed.index_defs] == ["idx_c"] and changed.props["bloom_filter_columns"] == "k, c"

    assert catalog.cancel_schema_change_job(job.job_id, "user cancelled").state == "CANCELLED"
    back = catalog.get_table_by_id(table.table_id)
    assert back.index_defs == () and back.props["bloom_filter_columns"] == "k"
    assert catalog.cancel_schema_change_job(job.job_id, "again") is None  # a done job stays as it is

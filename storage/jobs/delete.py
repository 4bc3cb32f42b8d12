"""Running a DELETE against the storage engine: one transaction publishing DELETE rowsets.

    predicate DELETE  (DUPLICATE, AGGREGATE, UNIQUE merge-on-read): on every tablet of the affected
                      partitions (base, rollups, a SHADOW index being built) a rowset of kind DELETE, no
                      segments, holding the predicates; published as one new version of each partition, in
                      the same catalog commit as the job record SHOW DELETE lists.
    key DELETE        (UNIQUE merge-on-write, DELETE ... USING): the keys of the rows the statement's WHERE
                      matched on merged rows, routed to (partition, bucket) with the load's partition router
                      and bucket hash; each tablet of that partition and bucket gets a DELETE rowset holding
                      its share of the keys (storage.tablet.delete_filter's key set).

Reads apply a DELETE rowset to rows of older versions only, so a key loaded again later is visible again;
base compaction applies it physically (storage.tablet.delete_filter.apply_deletes). The tablets are
listed after the transaction began: an ADD ROLLUP whose SHADOW index appears later waits for this
transaction (WAITING_TXN) and back-fills from data the delete already filters.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from storage.catalog.delete_jobs import DeleteInfo
from storage.catalog.model import OlapTable, Rowset, Tablet
from storage.compaction.version_limit import check_version_limit
from storage.engine import StorageEngine
from storage.errors import doris_error
from storage.predicate import ColumnPredicate
from storage.tablet.aggregation import key_column_names
from storage.tablet.bucket_hash import hash_buckets
from storage.tablet.delete_filter import DELETE, encode_key_set, encode_predicates
from storage.tablet.partition_router import NO_PARTITION, route_partitions


@dataclass(frozen=True)
class DeleteResult:
    label: str
    txn_id: int
    versions: dict[int, int]  # partition_id -> the DELETE's version
    rows: int = 0  # key DELETE: rows its WHERE matched


def delete_label() -> str:
    """Doris's DELETE job label: delete_<uuid>."""
    return f"delete_{uuid.uuid4()}"


def _delete_rowset(tablet: Tablet, txn_id: int, predicate: str, now: float) -> Rowset:
    return Rowset(rowset_id=uuid.uuid4().hex, tablet_id=tablet.tablet_id, start_version=0, end_version=0,
                  num_rows=0, num_segments=0, data_size=0, txn_id=txn_id, kind=DELETE,
                  delete_predicate=predicate, overlapping=False, created_at=now)


def _check_versions(engine: StorageEngine, rowsets: Sequence[Rowset]) -> None:
    """A DELETE adds a version to each tablet, so it is refused with -235 as a load would be."""
    check_version_limit(engine.catalog, [r.tablet_id for r in rowsets], engine.compaction_config,
                        engine.compaction_trigger)


def publish_predicate_delete(engine: StorageEngine, table: OlapTable, partition_ids: Sequence[int],
                             predicates: Sequence[ColumnPredicate], info: DeleteInfo) -> DeleteResult:
    """One DELETE version holding `predicates` on every tablet of the partitions, recorded for SHOW DELETE."""
    catalog = engine.catalog
    txn_id = catalog.begin_txn(table.db_id, table.table_id, info.label)
    try:
        text = encode_predicates(predicates)
        now = time.time()
        rowsets = [_delete_rowset(t, txn_id, text, now)
                   for pid in partition_ids for t in catalog.tablets(table.table_id, pid)]
        _check_versions(engine, rowsets)
        versions = catalog.publish_delete(txn_id, rowsets, partition_ids, info)
    except BaseException as e:
        catalog.abort_txn(txn_id, str(e)[:1000])
        raise
    return DeleteResult(info.label, txn_id, versions)


def publish_key_delete(engine: StorageEngine, table: OlapTable, rows: pa.Table, label: str) -> DeleteResult | None:
    """Delete the keys of `rows` (one row per matched row: the key columns, plus the partition and hash
    columns when they are not keys). None when `rows` is empty: nothing to publish."""
    if rows.num_rows == 0:
        return None
    by_lower = {name.lower(): name for name in rows.column_names}
    keys = [c.name for c in table.columns if c.is_key]
    positions = route_partitions(table, rows)
    if (positions == NO_PARTITION).any():
        raise doris_error("no partition for this tuple")
    hash_cols = [by_lower[c.lower()] for c in table.distribution.columns]
    max_buckets = max(p.buckets for p in table.partitions)
    group = positions.astype(np.int64) * max_buckets
    for pos in np.unique(positions):
        sel = positions == pos
        group[sel] += hash_buckets(rows.filter(pa.array(sel)), hash_cols, table.partitions[pos].buckets)
    key_rows = rows.select([by_lower[k.lower()] for k in keys]).rename_columns(keys)
    catalog = engine.catalog
    txn_id = catalog.begin_txn(table.db_id, table.table_id, label)
    try:
        now = time.time()
        by_place = {(t.partition_id, t.bucket): [] for t in catalog.tablets(table.table_id)}
        for t in catalog.tablets(table.table_id):
            by_place[(t.partition_id, t.bucket)].append(t)
        rowsets: list[Rowset] = []
        touched: set[int] = set()
        for g in np.unique(group):
            partition = table.partitions[int(g) // max_buckets]
            share = key_rows.filter(pa.array(group == g))
            distinct = share.group_by(keys, use_threads=False).aggregate([]).select(keys)
            text = encode_key_set(distinct)
            touched.add(partition.partition_id)
            rowsets += [_delete_rowset(t, txn_id, text, now)
                        for t in by_place.get((partition.partition_id, int(g) % max_buckets), [])]
        _check_versions(engine, rowsets)
        versions = catalog.publish(txn_id, rowsets, sorted(touched))
    except BaseException as e:
        catalog.abort_txn(txn_id, str(e)[:1000])
        raise
    return DeleteResult(label, txn_id, versions, rows.num_rows)


def key_delete_columns(table: OlapTable) -> list[str]:
    """The columns a key DELETE needs of each matched row: the keys, then partition and hash columns."""
    names = key_column_names(table.base_index) + list(table.partition_info.columns) + list(table.distribution.columns)
    by_lower = {c.name.lower(): c.name for c in table.columns}
    return list(dict.fromkeys(by_lower.get(n.lower(), n) for n in names))

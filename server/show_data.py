"""SHOW DATA: the data size of a database's tables, of one table's indexes, or of every database (Doris's
ShowDataStmt columns; one replica per tablet here, so ReplicaCount is the tablet count)."""

from __future__ import annotations

from dataclasses import dataclass

from server.show_partitions import readable_size
from storage.catalog.model import OlapTable
from storage.engine import StorageEngine

# RetainedSize (dorislite's): data kept for older versions (time travel's time_travel_retention, running scans)
DB_COLUMNS = ("TableName", "Size", "ReplicaCount", "RemoteSize", "RetainedSize")
TABLE_COLUMNS = ("TableName", "IndexName", "Size", "ReplicaCount", "RowCount", "RemoteSize", "RetainedSize")
ALL_COLUMNS = ("DbId", "DbName", "Size", "RemoteSize", "RecycleSize", "RecycleRemoteSize")
QUOTA_BYTES = 1024 ** 5  # Doris's default data quota: 1024 TB
REPLICA_QUOTA = 1073741824


@dataclass
class IndexData:
    name: str
    size: int
    replicas: int
    rows: int
    retained: int = 0  # bytes of stale rowsets kept for older versions


def index_data(engine: StorageEngine, table: OlapTable) -> list[IndexData]:
    catalog = engine.catalog
    retained = catalog.retained_bytes(table.table_id)
    out = []
    for index in table.indexes:
        size = replicas = rows = 0
        for partition in table.partitions:
            tablets = catalog.tablets(table.table_id, partition.partition_id, index.index_id)
            visible = catalog.rowsets_for_tablets(tablets, {partition.partition_id: partition.visible_version})
            replicas += len(tablets)
            for rowsets in visible.values():
                size += sum(rs.data_size for rs in rowsets)
                rows += sum(rs.num_rows for rs in rowsets)
        out.append(IndexData(index.name, size, replicas, rows, retained.get(index.index_id, 0)))
    return out


def footprint(table: OlapTable) -> tuple[int, int]:
    """(bytes, tablets) of a table from the catalog's per-partition sizes (kept by every publish and compaction),
    without reading its rowsets."""
    return sum(p.data_size for p in table.partitions), sum(p.buckets for p in table.partitions) * len(table.indexes)


def table_rows(engine: StorageEngine, table: OlapTable) -> list[list[str]]:
    data = sorted(index_data(engine, table), key=lambda d: d.name)
    rows = [[table.name if i == 0 else "", d.name, readable_size(d.size), str(d.replicas), str(d.rows), readable_size(0),
             readable_size(d.retained)] for i, d in enumerate(data)]
    rows.append(["", "Total", readable_size(sum(d.size for d in data)), str(sum(d.replicas for d in data)), "",
                 readable_size(0), readable_size(sum(d.retained for d in data))])
    return rows


def database_rows(engine: StorageEngine, db: str) -> list[list[str]]:
    rows = []
    total = replicas = kept = 0
    for table in sorted(engine.catalog.list_tables(db), key=lambda t: t.name):
        size, count = footprint(table)
        retained = sum(engine.catalog.retained_bytes(table.table_id).values())
        total += size
        replicas += count
        kept += retained
        rows.append([table.name, readable_size(size), str(count), readable_size(0), readable_size(retained)])
    rows.append(["Total", readable_size(total), str(replicas), readable_size(0), readable_size(kept)])
    rows.append(["Quota", readable_size(QUOTA_BYTES), str(REPLICA_QUOTA), "", ""])
    rows.append(["Left", readable_size(max(QUOTA_BYTES - total, 0)), str(max(REPLICA_QUOTA - replicas, 0)), "", ""])
    return rows


def all_rows(engine: StorageEngine, visible: set[str] | None = None) -> list[list[str]]:
    rows = []
    for db in sorted(engine.catalog.list_databases(), key=lambda d: d.db_id):
        if visible is not None and db.name not in visible:
            continue
        size = sum(footprint(t)[0] for t in engine.catalog.list_tables(db.name))
        rows.append([str(db.db_id), db.name, str(size), "0", "0", "0"])
    return rows

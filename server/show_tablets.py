"""SHOW TABLETS FROM [db.]t [PARTITION (p, ..)] [WHERE ..] [ORDER BY ..] [LIMIT ..]: Doris 2.1's columns.

One row per replica (a single node keeps one replica per tablet, with the tablet's id), partitions in their
order, then each partition's indexes (base first), then buckets. VersionCount is the tablet's visible
rowset count (the number max_tablet_version_num limits), LocalDataSize / RowCount sum those rowsets, and
CompactionStatus / MetaUrl point at this server's HTTP API (be.conf webserver_port). WHERE takes what
Doris's ShowTabletStmt takes (Version, BackendId, IndexName, State with `=`, joined by AND).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from sqlglot import exp

from server.show import string_table
from server.show_partitions import ordered_partitions
from sql.errors import analysis_error
from storage.catalog.model import OlapTable
from storage.engine import StorageEngine

COLUMNS = (
    "TabletId", "ReplicaId", "BackendId", "SchemaHash", "Version", "LstSuccessVersion", "LstFailedVersion",
    "LstFailedTime", "LocalDataSize", "RemoteDataSize", "RowCount", "State", "LstConsistencyCheckTime",
    "CheckVersion", "VersionCount", "QueryHits", "PathHash", "Path", "MetaUrl", "CompactionStatus",
    "CooldownReplicaId", "CooldownMetaId",
)
BACKEND_ID = 10001  # the one backend of a single node
_WHERE_HELP = ('Where clause should looks like: Version = "version", or state = "NORMAL|ROLLUP|CLONE|DECOMMISSION", '
               'or BackendId = 10000, indexname="rollup_name" or compound predicate with operator AND')
_FILTERS = {"version": "Version", "backendid": "BackendId", "state": "State", "indexname": None}


def path_hash(path: str) -> int:
    """A stable signed 64-bit id of a storage path (Doris hashes the path too)."""
    return int.from_bytes(hashlib.md5(path.encode()).digest()[:8], "big", signed=True)


def _filters(where: exp.Expression | None) -> dict[str, str]:
    out: dict[str, str] = {}

    def walk(e: exp.Expression) -> None:
        if isinstance(e, exp.Paren):
            walk(e.this)
        elif isinstance(e, exp.And):
            walk(e.left)
            walk(e.right)
        elif isinstance(e, exp.EQ) and isinstance(e.left, exp.Column) and isinstance(e.right, exp.Literal) \
                and e.left.name.lower() in _FILTERS:
            out[e.left.name.lower()] = e.right.this
        else:
            raise analysis_error(_WHERE_HELP)

    if where is not None:
        walk(where)
    return out


def _sort_key(value: Any) -> tuple:
    return (value is None, isinstance(value, str), value if value is not None else 0)


def show_tablets(engine: StorageEngine, table: OlapTable, partitions: Sequence[str] = (),
                 where: exp.Expression | None = None, order_by: Sequence[exp.Ordered] = (),
                 limit: int | None = None, offset: int | None = None,
                 http_base: str = "http://127.0.0.1:8040") -> pa.Table:
    filters = _filters(where)
    orders = []
    for o in order_by:
        name = o.this.name if isinstance(o.this, exp.Column) else o.this.sql()
        index = next((i for i, c in enumerate(COLUMNS) if c.lower() == name.lower()), None)
        if index is None:
            raise analysis_error(f"Title name[{name}] does not exist")
        orders.append((index, bool(o.args.get("desc"))))
    chosen = ordered_partitions(table)
    if partitions:
        by_name = {p.name.lower(): p for p in chosen}
        for name in partitions:
            if name.lower() not in by_name:
                raise analysis_error(f"Unknown partition: {name}")
        wanted = {n.lower() for n in partitions}
        chosen = [p for p in chosen if p.name.lower() in wanted]
    catalog = engine.catalog
    path = str(engine.data_dir)
    rows: list[list[Any]] = []
    for partition in chosen:
        for index in table.indexes:
            if "indexname" in filters and index.name.lower() != filters["indexname"].lower():
                continue
            tablets = sorted(catalog.tablets(table.table_id, partition.partition_id, index.index_id),
                             key=lambda t: t.bucket)
            visible = catalog.rowsets_for_tablets(tablets, {partition.partition_id: partition.visible_version})
            for t in tablets:
                rowsets = visible[t.tablet_id]
                rows.append([
                    t.tablet_id, t.tablet_id, BACKEND_ID, index.schema_hash, partition.visible_version,
                    partition.visible_version, -1, None, sum(rs.data_size for rs in rowsets), 0,
                    sum(rs.num_rows for rs in rowsets), "NORMAL", None, -1, len(rowsets), 0, path_hash(path),
                    path, f"{http_base}/api/meta/header/{t.tablet_id}",
                    f"{http_base}/api/compaction/show?tablet_id={t.tablet_id}", -1, "",
                ])
    for name, column in (("version", 4), ("backendid", 2), ("state", 11)):
        if name in filters:
            rows = [r for r in rows if str(r[column]).lower() == str(filters[name]).lower()]
    for i, desc in reversed(orders):  # stable sorts, last key first
        rows.sort(key=lambda r, i=i: _sort_key(r[i]), reverse=desc)
    if limit is not None:
        start = offset or 0
        rows = rows[start:start + limit]
    return string_table(COLUMNS, rows)

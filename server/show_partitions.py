"""SHOW [TEMPORARY] PARTITIONS FROM [db.]t [WHERE ..] [ORDER BY ..] [LIMIT ..]: Doris 2.1's 20 columns.

Rows are built as Doris's PartitionsProcDir builds them: typed values first (ids, versions and bucket counts
are numbers, so ORDER BY sorts them as numbers), in RANGE / LIST order, then filtered by the few predicates
Doris's ShowPartitionsStmt accepts, sorted, limited, and sent as text. Also the BUCKETS AUTO sizer that
ADD PARTITION uses (from the same partitions' data sizes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_alter_partition import AutoBucketSizer
from server.show import string_table
from sql.errors import analysis_error
from storage.catalog import partition_items
from storage.catalog.model import OlapTable, Partition
from storage.partition_policy.buckets import BucketPolicy

COLUMNS = (
    "PartitionId", "PartitionName", "VisibleVersion", "VisibleVersionTime", "State", "PartitionKey", "Range",
    "DistributionKey", "Buckets", "ReplicationNum", "StorageMedium", "CooldownTime", "RemoteStoragePolicy",
    "LastConsistencyCheckTime", "DataSize", "IsInMemory", "ReplicaAllocation", "IsMutable", "SyncWithBaseTables",
    "UnsyncTables",
)
MAX_COOLDOWN_TIME = "9999-12-31 23:59:59"  # DataProperty.MAX_COOLDOWN_TIME_MS
_COLUMN_NAME_REGEX = '^[_a-zA-Z@0-9\\s/][.a-zA-Z0-9_+-/?@#$%^&*"\\s,:]{0,255}$'  # FeNameFormat (2.1)

_KB, _MB, _GB, _TB = 1024, 1024**2, 1024**3, 1024**4


def readable_size(n: int) -> str:
    """DebugUtil.getByteUint + DECIMAL_FORMAT_SCALE_3: `0.000 ` for 0, `512.000 B`, `1.234 KB` ..."""
    for limit, unit in ((_TB, "TB"), (_GB, "GB"), (_MB, "MB"), (_KB, "KB")):
        if n > limit:
            return f"{n / limit:.3f} {unit}"
    return f"{float(n):.3f} {'B' if n else ''}"


def _time(seconds: float) -> str | None:
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S") if seconds > 0 else None


def ordered_partitions(table: OlapTable) -> list[Partition]:
    """Doris's default order: RANGE by range, LIST by the listed keys, otherwise as stored."""
    kind = table.partition_info.type
    types = _partition_types(table)
    order = {id(item): i for i, item in enumerate(partition_items.sort_items(
        [p.item for p in table.partitions], kind, types))}
    return sorted(table.partitions, key=lambda p: order[id(p.item)])


def _partition_types(table: OlapTable) -> list[str]:
    return [table.column(name).type for name in table.partition_info.columns]  # type: ignore[union-attr]


def _replica_total(allocation: str) -> int:
    return sum(int(part.rsplit(":", 1)[1]) for part in allocation.split(",") if ":" in part)


def partition_row(table: OlapTable, p: Partition) -> list[Any]:
    """One partition's 20 values, typed (int / str / bool / None) as Doris's Comparable list is."""
    kind = table.partition_info.type
    partitioned = kind in ("RANGE", "LIST")
    own, props = dict(p.item.properties), table.props
    allocation = own.get("replication_allocation") or props.get("replication_allocation",
                                                                 "tag.location.default: 3")
    dist = table.distribution
    return [
        p.partition_id,
        p.name,
        p.visible_version,
        _time(p.visible_version_time),
        "NORMAL",
        ", ".join(table.partition_info.columns) if partitioned else "",
        partition_items.item_text(p.item, kind, _partition_types(table)) if partitioned else "",
        ", ".join(dist.columns) if dist.type == "HASH" else "RANDOM",
        p.buckets,
        _replica_total(allocation),
        (own.get("storage_medium") or props.get("storage_medium") or "HDD").upper(),
        own.get("storage_cooldown_time") or props.get("storage_cooldown_time") or MAX_COOLDOWN_TIME,
        own.get("storage_policy", props.get("storage_policy", "")),
        None,  # LastConsistencyCheckTime: no consistency checker on a single node
        readable_size(p.data_size),
        own.get("in_memory", "false") == "true",
        allocation,
        own.get("mutable", "true") == "true",
        True,  # SyncWithBaseTables: true for tables that are not async materialized views
        None,  # UnsyncTables
    ]


# -- WHERE (ShowPartitionsStmt.analyzeSubPredicate / PartitionsProcDir.filter) ------------------------

_NAME_COLUMNS = ("partitionname", "state")
_NUMBER_COLUMNS = ("partitionid", "buckets", "replicationnum")
_COMPARISONS: dict[type, Callable[[int, int], bool]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NullSafeEQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
}


def _filters(where: exp.Expression | None) -> dict[str, exp.Expression]:
    """Lower-case column name -> its predicate (the last one wins, as in Doris)."""
    out: dict[str, exp.Expression] = {}
    if where is not None:
        _analyze(where.unnest() if isinstance(where, exp.Paren) else where, out)
    return out


def _analyze(e: exp.Expression, out: dict[str, exp.Expression]) -> None:
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        _analyze(e.this, out)
        _analyze(e.expression, out)
        return
    if isinstance(e, (exp.Or, exp.Not, exp.Xor)):
        raise analysis_error("Only allow compound predicate with operator AND")
    if not isinstance(e, (*_COMPARISONS, exp.Like)):
        raise analysis_error("Only operator =|>=|<=|>|<|!=|like are supported.")
    if not isinstance(e.this, exp.Column):
        raise analysis_error("Show filter by column")
    key = e.this.name
    lowered = key.lower()
    if isinstance(e, exp.Like):
        if lowered not in _NAME_COLUMNS:
            raise analysis_error('Where clause : PartitionName|State like "p20191012|NORMAL"')
    elif lowered in _NAME_COLUMNS:
        if not isinstance(e, exp.EQ):
            raise analysis_error(f"Only operator =|like are supported for {key}")
    elif lowered == "lastconsistencychecktime":
        if not (isinstance(e.expression, exp.Literal) and e.expression.is_string):
            raise analysis_error('Where clause : LastConsistencyCheckTime =|>=|<=|>|<|!= '
                                 '"2019-12-22|2019-12-22 22:22:00"')
    elif lowered not in _NUMBER_COLUMNS:
        raise analysis_error("Only the columns of PartitionId/PartitionName/State/Buckets/ReplicationNum/"
                             "LastConsistencyCheckTime are supported.")
    out[lowered] = e


def _like(value: str, pattern: str) -> bool:
    """PartitionsProcDir.like: case-insensitive, `%` any run, `?` one character, `.` literal, whole value
    (`_` is not a wildcard in Doris's SHOW PARTITIONS)."""
    regex = pattern.lower().replace(".", "\\.").replace("?", ".").replace("%", ".*")
    try:
        return re.fullmatch(regex, value.lower(), re.DOTALL) is not None
    except re.error:
        return False


def _keep(value: Any, e: exp.Expression) -> bool:
    right = e.expression
    if not isinstance(right, exp.Literal):
        raise analysis_error("Not Supported. Use `select * from partitions(...)` instead")
    if isinstance(e, exp.Like):
        return value is not None and _like(str(value), right.name)
    if value is None:
        return False
    if isinstance(e, exp.EQ) and right.is_string:
        return right.name == str(value)
    if isinstance(value, str):  # LastConsistencyCheckTime compares as a datetime
        return _COMPARISONS[type(e)](value, right.name)  # type: ignore[arg-type]
    try:
        number = int(right.name)
    except ValueError:
        raise analysis_error(f"Invalid number format: {right.name}") from None
    return _COMPARISONS[type(e)](int(value), number)


# -- ORDER BY / LIMIT ------------------------------------------------------------------------------------


def _order_index(o: exp.Expression) -> tuple[int, bool]:
    column = o.this if isinstance(o, exp.Ordered) else o
    if not isinstance(column, exp.Column):
        raise analysis_error("Should order by column")
    for i, name in enumerate(COLUMNS):
        if name.lower() == column.name.lower():
            return i, bool(o.args.get("desc"))
    raise analysis_error(f"Incorrect column name '{column.name}'. Column regex is '{_COLUMN_NAME_REGEX}'",
                         1166, "42000")


def _sort_key(value: Any) -> tuple:
    return (0, "") if value is None else (1, value)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def show_partitions(table: OlapTable, where: exp.Expression | None = None,
                    order_by: Sequence[exp.Expression] = (), limit: int | None = None,
                    offset: int | None = None, temporary: bool = False) -> pa.Table:
    filters = _filters(where)
    orders = [_order_index(o) for o in order_by]
    if temporary:  # the temporary partitions, shown as the formal ones are
        table = replace(table, partitions=table.temp_partitions)
    rows = [partition_row(table, p) for p in ordered_partitions(table)]
    if filters:
        index = {name.lower(): i for i, name in enumerate(COLUMNS)}
        rows = [r for r in rows if all(_keep(r[index[col]], e) for col, e in filters.items())]
    for i, desc in reversed(orders):  # stable sorts, last key first
        rows.sort(key=lambda r, i=i: _sort_key(r[i]), reverse=desc)
    if limit is not None:
        start = offset or 0
        rows = rows[start:start + limit]
    return string_table(COLUMNS, [[_text(v) for v in r] for r in rows])


# -- BUCKETS AUTO for ADD PARTITION ----------------------------------------------------------------------


def auto_bucket_sizer(settings: Callable[[str, str], str], default_root: Path) -> AutoBucketSizer:
    """Buckets for a partition added to a BUCKETS AUTO table (storage.partition_policy.buckets); None (the
    table default) without history or with an unreadable storage_root_path."""

    def size(table: OlapTable) -> int | None:
        try:
            return BucketPolicy.from_settings(settings, default_root).from_history(table)
        except ValueError:
            return None

    return size

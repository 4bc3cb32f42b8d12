"""ALTER TABLE ... ADD / DROP / MODIFY PARTITION analysis.

Doris's checks in its order and with its messages (Alter.processAlterOlapTable, InternalCatalog.addPartition /
dropPartition, Alter.modifyPartitionsProperty). The partition clause itself goes through the same analysis
as CREATE TABLE's (planner.bind.partitions.bind_partition_item) against the table's partitions; the catalog
checks names and overlaps once more when it commits. Only analysis: the session commits the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from planner.bind.create_table import DEFAULT_BUCKET_NUM
from planner.bind.partitions import bind_partition_item, partition_types
from planner.bind.table_properties import bind_partition_properties
from sql import statements as st
from sql.errors import SqlError, analysis_error
from sql.types import parse_type
from storage.catalog import partition_items
from storage.catalog.model import Column, DistributionInfo, OlapTable, PartitionItem
from storage.errors import StorageError
from storage.partition_policy.dynamic_partition import property_from_strings

# BUCKETS AUTO sizing of a new partition from the table's existing partitions (their real data sizes):
# returns the bucket number, or None to fall back to the table's default. The server plugs in
# storage.partition_policy.auto_bucket.next_partition_bucket_num with its backends and disks.
AutoBucketSizer = Callable[[OlapTable], int | None]


@dataclass(frozen=True)
class BoundPartition:
    item: PartitionItem
    buckets: int


def dynamic_partition_enabled(table: OlapTable) -> bool:
    """The table has dynamic-partition properties and `dynamic_partition.enable` is not false (its default is
    true)."""
    prop = property_from_strings(table.props)
    return prop is not None and prop.enable


def _check_alter_allowed(table: OlapTable) -> None:
    """DynamicPartitionUtil.checkAlterAllowed: no manual ADD / DROP PARTITION while the scheduler owns them."""
    if dynamic_partition_enabled(table):
        raise analysis_error(
            "Cannot add/drop partition on a Dynamic Partition Table, Use command `ALTER TABLE tbl_name SET "
            '("dynamic_partition.enable" = "false")` firstly.'
        )


def _sql_error(error: StorageError) -> SqlError:
    return SqlError(error.message, error.code, error.sqlstate)


def bind_add_partition(table: OlapTable, stmt: st.AddPartition, auto_buckets: AutoBucketSizer | None = None
                       ) -> BoundPartition | None:
    """The new partition and its bucket number; None when it exists and IF NOT EXISTS was given.

    Buckets: `BUCKETS n` as given; `DISTRIBUTED BY ...` without BUCKETS: 10; nothing given: the table's
    default number, except on a BUCKETS AUTO table (or with `BUCKETS AUTO`), where `auto_buckets` sizes it
    from the existing partitions' data (the table's default when there is no history).
    """
    if not stmt.temporary:  # temporary partitions are the user's own, also on a dynamic partition table
        _check_alter_allowed(table)
    kind = table.partition_info.type
    if kind not in ("RANGE", "LIST"):
        raise _sql_error(partition_items.cannot_add_partition())
    if table.partition(stmt.item.name) is not None or table.temp_partition(stmt.item.name) is not None:
        if stmt.if_not_exists:
            return None
        raise _sql_error(partition_items.duplicate_partition_name(stmt.item.name))
    # a temporary partition may overlap formal ones, not another temporary one
    existing = [p.item for p in (table.temp_partitions if stmt.temporary else table.partitions)]
    [item] = bind_partition_item(kind, partition_types(table), existing, stmt.item, table.props)
    return BoundPartition(item, _buckets(table, stmt.distribution, auto_buckets))


def bind_add_partitions(table: OlapTable, stmt: st.AddPartitions, auto_buckets: AutoBucketSizer | None = None
                        ) -> list[BoundPartition]:
    """`ADD PARTITIONS FROM .. TO .. INTERVAL`: the partitions CREATE TABLE's batch form would make, each checked
    against the table's (a name or range already there is an error, as for ADD PARTITION)."""
    _check_alter_allowed(table)
    if table.partition_info.type != "RANGE":
        raise _sql_error(partition_items.cannot_add_partition()) if table.partition_info.type != "LIST" else \
            analysis_error("Batch partitions (FROM .. TO .. INTERVAL) are only for RANGE partitioned tables")
    existing = [p.item for p in table.partitions]
    items = bind_partition_item("RANGE", partition_types(table), existing, stmt.batch, table.props)
    taken = {p.name.lower() for p in table.partitions}
    for item in items:
        if item.name.lower() in taken:
            raise _sql_error(partition_items.duplicate_partition_name(item.name))
    buckets = _buckets(table, stmt.distribution, auto_buckets)
    return [BoundPartition(item, buckets) for item in items]


def bind_modify_distribution(table: OlapTable, stmt: st.ModifyDistribution) -> DistributionInfo:
    """The table's distribution for partitions created from now on (Doris changes only the bucket number)."""
    new, old = stmt.distribution, table.distribution
    if new.type != old.type:
        raise analysis_error("Cannot change distribution type when modify default distribution bucket num")
    if new.type == "HASH" and [c.lower() for c in new.columns] != [c.lower() for c in old.columns]:
        raise analysis_error(f"Cannot assign hash distribution with different distribution cols. new is: "
                             f"[{', '.join(new.columns)}] default is: [{', '.join(old.columns)}]")
    if new.auto:
        return replace(old, auto=True)
    if new.buckets is None or new.buckets <= 0:
        raise analysis_error(f"Cannot assign {new.type.lower()} distribution buckets less than 1")
    return replace(old, buckets=new.buckets, auto=False)


def _column_text(column: Column) -> str:
    """Column.toString as Doris prints it in distribution messages: `k1` INT NOT NULL."""
    return f"`{column.name}` {parse_type(column.type).internal()} {'NULL' if column.nullable else 'NOT NULL'}"


def _buckets(table: OlapTable, desc: st.DistributionDesc | None, auto_buckets: AutoBucketSizer | None) -> int:
    default = table.distribution
    if desc is not None:
        # only the bucket number may differ from the table's distribution
        columns = []
        for name in desc.columns:
            column = table.column(name)
            if column is None:
                raise analysis_error(f"Distribution column({name}) doesn't exist")
            columns.append(column)
        if desc.type != default.type:
            raise analysis_error(f"Cannot assign different distribution type. default is: {default.type}")
        if desc.buckets is not None and desc.buckets <= 0:
            kind = "hash" if desc.type == "HASH" else "random"
            raise analysis_error(f"Cannot assign {kind} distribution buckets less than 1")
        if desc.type == "HASH" and [c.name.lower() for c in columns] != [c.lower() for c in default.columns]:
            defaults = [table.column(c) for c in default.columns]
            new_text = ", ".join(_column_text(c) for c in columns)
            default_text = ", ".join(_column_text(c) for c in defaults if c is not None)
            raise analysis_error(
                f"Cannot assign hash distribution with different distribution cols. new is: [{new_text}] "
                f"default is: [{default_text}]"
            )
        if desc.buckets is not None:
            return desc.buckets
        if not desc.auto:
            return DEFAULT_BUCKET_NUM
    elif not default.auto:
        return default.buckets
    sized = auto_buckets(table) if auto_buckets is not None else None
    return sized if sized is not None else default.buckets


def bind_drop_partition(table: OlapTable, stmt: st.DropPartition) -> tuple[str, ...]:
    """The partition to drop (its stored name), or nothing when it is missing and IF EXISTS was given."""
    if not stmt.temporary:
        _check_alter_allowed(table)
    partition = table.temp_partition(stmt.name) if stmt.temporary else table.partition(stmt.name)
    if partition is None:
        if stmt.if_exists:
            return ()
        raise analysis_error(f"Error in list of partitions to {stmt.name}", 1507, "HY000")
    if table.partition_info.type not in ("RANGE", "LIST"):
        raise analysis_error(f"Alter table [{table.name}] failed. Not a partitioned table")
    return (partition.name,)


def bind_modify_partition(table: OlapTable, stmt: st.ModifyPartition
                          ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(partition names, validated properties) of MODIFY PARTITION p | (p1, ..) | (*) SET (..)."""
    names = tuple(p.name for p in table.partitions) if stmt.names is None else stmt.names
    if stmt.names is not None and (not names or any(not n for n in names)):
        raise analysis_error("Partition names is not set or empty")
    if not stmt.properties:
        raise analysis_error("Properties is not set")
    props = bind_partition_properties(stmt.properties)
    out = []
    for name in names:
        partition = None if stmt.temporary else table.partition(name)
        if partition is None:
            raise analysis_error(f"Partition[{name}] does not exist in table[{table.name}]")
        out.append(partition.name)
    return tuple(out), props


def bind_replace_partition(table: OlapTable, stmt: st.ReplacePartition) -> tuple[bool, bool]:
    """(strict_range, use_temp_partition_name) of REPLACE PARTITION, checked as Doris checks them."""
    if table.partition_info.type not in ("RANGE", "LIST"):
        raise analysis_error(f"Table[{table.name}] is not a range or list partitioned table")
    if not stmt.names or not stmt.temp_names:
        raise analysis_error("No partition specified in partition lists")
    props = {k.lower(): v for k, v in stmt.properties}
    unknown = set(props) - {"strict_range", "use_temp_partition_name"}
    if unknown:
        raise analysis_error(f"Unknown properties: {sorted(unknown)}")
    flags = []
    for key, default in (("strict_range", True), ("use_temp_partition_name", False)):
        value = props.get(key)
        if value is not None and value.lower() not in ("true", "false"):
            raise analysis_error(f"Invalid {key} property value: {value}")
        flags.append(default if value is None else value.lower() == "true")
    return flags[0], flags[1]

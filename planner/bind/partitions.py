"""PARTITION BY analysis: column checks, bound normalisation, LESS THAN lower bounds, overlap checks,
and the expansion of batch `FROM .. TO .. INTERVAL` items (Doris RangePartitionInfo / MultiPartitionDesc).

`bind_partition_item` is the one analysis of a partition clause, used by CREATE TABLE (each clause against
the ones before it) and by ALTER TABLE ADD PARTITION (against the table's partitions); the rules between
items themselves live in storage.catalog.partition_items, which the catalog re-checks on commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from planner.bind import values as v
from planner.bind.table_properties import bind_partition_properties
from sql import statements as st
from sql.errors import SqlError, analysis_error
from sql.types import DorisType, parse_type
from storage.catalog import partition_items
from storage.catalog.model import Column, OlapTable, PartitionInfo, PartitionItem
from storage.errors import StorageError

MAX_MULTI_PARTITION_NUM = 4096  # FE config max_multi_partition_num
MULTI_PARTITION_NAME_PREFIX = "p_"  # FE config multi_partition_name_prefix
FORBIDDEN_PARTITION_NAME = "placeholder_"  # FeNameFormat.FORBIDDEN_PARTITION_NAME
COMMON_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9\-_]{0,63}$")  # FeNameFormat.COMMON_NAME_REGEX (tables, partitions)

_RANGE_TYPES = {"DATE", "DATETIME", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"}
_LIST_TYPES = _RANGE_TYPES | {"CHAR", "VARCHAR", "BOOLEAN"}


def bind_partitions(
    desc: st.PartitionDesc | None,
    table_name: str,
    columns: dict[str, tuple[Column, DorisType]],
    properties: dict[str, str],
) -> tuple[PartitionInfo, tuple[PartitionItem, ...]]:
    """`columns` maps lower-case name -> (bound Column, its type)."""
    if desc is None:
        return PartitionInfo("UNPARTITIONED"), (PartitionItem(name=table_name),)
    part_cols: list[tuple[Column, DorisType]] = []
    for name in desc.columns:
        if name.lower() not in columns:
            raise analysis_error(f"partition key {name} is not exists")
        _check_partition_column(*columns[name.lower()], desc.type)
        part_cols.append(columns[name.lower()])
    if not _types_consistent(desc.type, desc.items):
        raise _invalid_item_types()
    seen: set[str] = set()
    for item in desc.items:
        if isinstance(item, st.RangeBatch):
            continue
        if item.name in seen:
            raise analysis_error(f"Duplicated named partition: {item.name}")
        seen.add(item.name)
    names_seen: set[str] = set()
    for name in desc.columns:
        if name in names_seen:
            raise analysis_error(f"Duplicated partition column {name}")
        names_seen.add(name)
    types = tuple(t for _, t in part_cols)
    info = PartitionInfo(desc.type, tuple(c.name for c, _ in part_cols))
    items: list[PartitionItem] = []  # in creation order, each checked against the ones before it
    index = partition_items.RangeIndex([str(t) for t in types]) if desc.type == "RANGE" else None
    for item in desc.items:
        bound = bind_partition_item(desc.type, types, items, item, properties, index)
        items += bound
        for b in bound if index is not None else ():
            index.add(b)  # type: ignore[union-attr]
    if desc.type == "RANGE":
        return info, tuple(partition_items.sort_items(items, "RANGE", [str(t) for t in types]))
    return info, tuple(items)


def partition_types(table: OlapTable) -> tuple[DorisType, ...]:
    """The types of a table's partition columns."""
    return tuple(parse_type(table.column(name).type) for name in table.partition_info.columns)  # type: ignore[union-attr]


def bind_partition_item(
    kind: str,
    types: tuple[DorisType, ...],
    existing: Sequence[PartitionItem],
    item: st.PartitionItemDesc,
    properties: dict[str, str],
    index: partition_items.RangeIndex | None = None,
) -> list[PartitionItem]:
    """One partition clause of a `kind` (RANGE / LIST) table, checked against `existing` partitions: its
    name, values, the LESS THAN lower bound, overlaps and LIST conflicts; a batch clause gives several."""
    if not _types_consistent(kind, (item,)):
        raise _invalid_item_types()
    type_texts = [str(t) for t in types]
    if isinstance(item, st.RangeBatch):
        out: list[PartitionItem] = []
        batch = partition_items.RangeIndex(type_texts)
        for done in existing:
            batch.add(done)
        for generated in _expand_batch(item, types, properties):
            _check(partition_items.check_range, generated, batch, type_texts)
            batch.add(generated)
            out.append(generated)
        return out
    check_partition_name(item.name)
    props = bind_partition_properties(item.properties)
    if isinstance(item, st.ListValues):
        if not item.values and any(not e.values for e in existing):
            raise analysis_error("A LIST partitioned table can have only one default partition")
        bound = PartitionItem(item.name, values=_list_values(item, types), properties=props)
        _check(partition_items.check_list, bound, existing, type_texts)
        return [bound]
    if isinstance(item, st.RangeLessThan):
        upper = (
            tuple(None for _ in types) if item.upper is None
            else _bound(item.upper, types, _values_text(item.upper))
        )
        if all(x == v.TYPE_MIN[t.name] for x, t in zip(upper, types, strict=True)):
            raise analysis_error(f"Partition's upper value should not be MIN VALUE: {_values_text(item.upper or ())}")
        if index is not None:
            found = index.max_upper_below(partition_items.key_order(upper, type_texts))
            lower = found if found is not None else tuple(v.TYPE_MIN[t.name] for t in types)
        else:
            key: Callable[[v_Bound], tuple] = lambda b: v.sort_key(b, types)  # noqa: E731
            below = [r.upper for r in existing if r.upper is not None and key(r.upper) < key(upper)]
            lower = max(below, key=key) if below else tuple(v.TYPE_MIN[t.name] for t in types)
    else:
        lower = _bound(item.lower, types, _values_text(item.lower))
        upper = _bound(item.upper, types, _values_text(item.upper))
    bound = PartitionItem(item.name, lower=lower, upper=upper, properties=props)
    _check(partition_items.check_range, bound, index if index is not None else existing, type_texts)
    return [bound]


def _check(rule: Callable[..., None], *args: object) -> None:
    """A catalog rule (storage.catalog.partition_items) raised as an analysis error, same text and code."""
    try:
        rule(*args)
    except StorageError as e:
        raise SqlError(e.message, e.code, e.sqlstate) from None


def check_partition_name(name: str) -> None:
    """FeNameFormat.checkPartitionName."""
    if not COMMON_NAME.match(name) or name.startswith(FORBIDDEN_PARTITION_NAME):
        raise analysis_error(f"Incorrect partition name '{name}'", 1567, "HY000")


def _invalid_item_types() -> Exception:
    return analysis_error(
        "partitions types is invalid, expected FIXED or LESS in range partitions and IN in list partitions"
    )


def _check_partition_column(column: Column, t: DorisType, kind: str) -> None:
    if not column.is_key and column.aggregation not in (None, "NONE"):
        raise analysis_error("The partition column could not be aggregated column")
    if t.is_float:
        raise analysis_error("Floating point type column can not be partition column")
    if t.name == "STRING":
        raise analysis_error(f"String Type should not be used in partition column[{column.name}].")
    allowed = _RANGE_TYPES if kind == "RANGE" else _LIST_TYPES
    if t.name not in allowed:
        raise analysis_error(f"Column[{column.name}] type[{t}] cannot be a {kind.lower()} partition key.")


def _types_consistent(kind: str, items: Sequence[st.PartitionItemDesc]) -> bool:
    if kind == "LIST":
        return all(isinstance(i, st.ListValues) for i in items)
    if all(isinstance(i, st.RangeBatch) for i in items):
        return True
    # batch items may be mixed only with fixed ranges
    if any(isinstance(i, st.RangeBatch) for i in items):
        return all(isinstance(i, (st.RangeBatch, st.RangeFixed)) for i in items)
    return all(isinstance(i, (st.RangeLessThan, st.RangeFixed)) for i in items)


# -- values ---------------------------------------------------------------------------------------------


def _bound(values: st.Bound, types: tuple[DorisType, ...], text: str, pad_min: bool = True) -> v_Bound:
    if len(values) > len(types):
        raise analysis_error(f"Partition values number is more than partition column number: {text}")
    out = [None if x is None else v.normalize(x, t) for x, t in zip(values, types, strict=False)]
    if pad_min:  # missing trailing values are the type minimum, as Doris pads PartitionKeys
        out += [v.TYPE_MIN[t.name] for t in types[len(values):]]
    return tuple(out)


v_Bound = tuple[str | None, ...]


def range_text(lower: v_Bound, upper: v_Bound, types: tuple[DorisType, ...]) -> str:
    """Guava Range.toString of two PartitionKeys, as Doris prints ranges in messages and SHOW PARTITIONS."""
    return partition_items.range_text(lower, upper, [str(t) for t in types])


def _values_text(values: st.Bound) -> str:
    return "(" + ", ".join("MAXVALUE" if x is None else f"'{x}'" for x in values) + ")"


# -- RANGE batches -------------------------------------------------------------------------------------


def _add_months(value: datetime, months: int) -> datetime:
    month0 = value.month - 1 + months
    year, month = value.year + month0 // 12, month0 % 12 + 1
    return value.replace(year=year, month=month, day=min(value.day, 28) if value.day > 28 else value.day)


_STEPS: dict[str, Callable[[datetime, int], datetime]] = {
    "HOUR": lambda d, n: d + timedelta(hours=n),
    "DAY": lambda d, n: d + timedelta(days=n),
    "WEEK": lambda d, n: d + timedelta(weeks=n),
    "MONTH": _add_months,
    "YEAR": lambda d, n: _add_months(d, 12 * n),
}

_NAME_FORMATS: dict[str, Callable[[datetime], str]] = {
    "HOUR": lambda d: d.strftime("%Y%m%d%H"),
    "DAY": lambda d: d.strftime("%Y%m%d"),
    "WEEK": lambda d: f"{d.year:04d}_{d.isocalendar()[1]:02d}",
    "MONTH": lambda d: d.strftime("%Y%m"),
    "YEAR": lambda d: d.strftime("%Y"),
}


def _expand_batch(
    item: st.RangeBatch, types: tuple[DorisType, ...], properties: dict[str, str]
) -> list[PartitionItem]:
    if len(types) != 1 or len(item.start) != 1 or len(item.end) != 1:
        raise analysis_error("Multi build partition only supports one partition column")
    t = types[0]
    if item.start[0] is None or item.end[0] is None:
        raise analysis_error("Multi build partition does not support MAXVALUE")
    start, end = v.normalize(item.start[0], t), v.normalize(item.end[0], t)
    if v.sort_key((start,), types) >= v.sort_key((end,), types):
        raise analysis_error("Multi build partition start time should less than end time.")
    if item.interval <= 0:
        raise analysis_error("Multi partition time interval must be larger than zero.")
    prefix = properties.get("dynamic_partition.prefix", MULTI_PARTITION_NAME_PREFIX)
    bounds: list[tuple[str, str, str]] = []  # (name, lower, upper)
    if t.is_integer:
        if item.unit is not None:
            raise analysis_error(f"Multi partition by integer column does not support time unit {item.unit}")
        lo, stop = int(start), int(end)
        while lo < stop:
            hi = min(lo + item.interval, stop)
            bounds.append((f"{prefix}{lo}_{hi}", str(lo), str(hi)))
            lo = hi
            _check_count(len(bounds))
    else:
        unit = item.unit or "DAY"
        if unit not in _STEPS or (unit == "HOUR" and t.name == "DATE"):
            raise analysis_error(f"Multi build partition got an unsupported time unit: {unit}")
        lo_dt, stop_dt, i = v.to_datetime(start), v.to_datetime(end), 0
        while True:
            cur = _STEPS[unit](v.to_datetime(start), i * item.interval) if i else lo_dt
            if cur >= stop_dt:
                break
            nxt = min(_STEPS[unit](v.to_datetime(start), (i + 1) * item.interval), stop_dt)
            name = prefix + _NAME_FORMATS[unit](cur)
            bounds.append((name, v.format_datetime(cur, t), v.format_datetime(nxt, t)))
            i += 1
            _check_count(len(bounds))
    return [PartitionItem(name, lower=(lo,), upper=(hi,)) for name, lo, hi in bounds]


def _check_count(n: int) -> None:
    if n > MAX_MULTI_PARTITION_NUM:
        raise analysis_error(
            f"The number of Multi partitions too much, should not exceed:{MAX_MULTI_PARTITION_NUM}"
        )


# -- LIST -----------------------------------------------------------------------------------------------


def _list_values(item: st.ListValues, types: tuple[DorisType, ...]) -> tuple[tuple[str, ...], ...]:
    out = []
    for value in item.values:
        if len(value) != len(types):
            raise analysis_error(
                f"partition key desc list size[{len(value)}] is not equal to partition column size[{len(types)}]"
            )
        out.append(tuple("NULL" if x is None else v.normalize(x, t) for x, t in zip(value, types, strict=True)))
    return tuple(out)

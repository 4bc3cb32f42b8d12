"""Partition pruning: keep the partitions whose RANGE or LIST definition can hold a row satisfying the
scan's pushed-down predicates on the partition columns.

Works on partition metadata only (a handful of bounds per partition), never on table data. RANGE on
several columns prunes on the first column alone (rows of [(a1, b1), (a2, b2)) have a in [a1, a2]).
NULL lives in the partition whose lower bound is the type minimum (storage.tablet.partition_router).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from planner.context import QueryContext
from planner.logical import LogicalScan, evolve
from planner.olap_source import OlapTableSource
from planner.rules.olap_scans import AggregateAbove, OlapScanRule
from storage.catalog.model import Partition
from storage.predicate import ColumnPredicate, Op
from storage.tablet.partition_router import _is_minimum, cast_bound

_UNBOUNDED = object()


def _prune_partitions(scan: LogicalScan, source: OlapTableSource, above: AggregateAbove | None,
                      required: frozenset[str], ctx: QueryContext) -> LogicalScan:
    kept = select_partitions(source, scan.predicates)
    if kept == source.selected_partition_ids and source.partition_ids is None:
        return scan
    return evolve(scan, source=evolve(source, partition_ids=kept))


prune_partitions = OlapScanRule(_prune_partitions)


def select_partitions(source: OlapTableSource, predicates: Sequence[ColumnPredicate]) -> tuple[int, ...]:
    info = source.table.partition_info
    selected = set(source.selected_partition_ids)
    candidates = [p for p in source.table.partitions if p.partition_id in selected]
    kind = info.type.upper()
    if kind not in ("RANGE", "LIST") or not info.columns:
        return tuple(p.partition_id for p in candidates)
    lowered = [c.lower() for c in info.columns]
    by_column: dict[int, list[ColumnPredicate]] = {}
    for p in predicates:
        if p.column.lower() in lowered:
            by_column.setdefault(lowered.index(p.column.lower()), []).append(p)
    if not by_column:
        return tuple(p.partition_id for p in candidates)
    types = [source.schema.field(source.table.column(c).name).type for c in info.columns]  # type: ignore[union-attr]
    keep = _list_keeps if kind == "LIST" else _range_keeps
    return tuple(p.partition_id for p in candidates if keep(p, by_column, types))


@functools.lru_cache(maxsize=65536)
def _bound(text: str | None, t: pa.DataType) -> tuple[Any, bool]:
    """A bound as a Python value (None, unbounded, when Python cannot hold it: DATE '0000-01-01') and
    whether it is the type's minimum; memoised, as every query casts the same bounds of every partition."""
    scalar = cast_bound(text, t)
    try:
        value = None if scalar is None else scalar.as_py()
    except (OverflowError, ValueError):
        value = None
    return value, _is_minimum(text, scalar)


def _value(text: str | None, t: pa.DataType) -> Any:
    return _bound(text, t)[0]


def _satisfies(value: Any, p: ColumnPredicate) -> bool:
    """One partition-definition value against one predicate (NULL satisfies only IS NULL)."""
    if p.op is Op.IS_NULL:
        return value is None
    if value is None:
        return False
    if p.op is Op.IS_NOT_NULL:
        return True
    try:
        match p.op:
            case Op.EQ:
                return value == p.value
            case Op.NE:
                return value != p.value
            case Op.LT:
                return value < p.value
            case Op.LE:
                return value <= p.value
            case Op.GT:
                return value > p.value
            case Op.GE:
                return value >= p.value
            case Op.IN:
                return value in p.values
            case Op.NOT_IN:
                return value not in p.values
    except TypeError:
        return True  # values that do not compare: keep the partition
    return True


def _list_keeps(part: Partition, by_column: dict[int, list[ColumnPredicate]], types: list[pa.DataType]) -> bool:
    if not part.item.values:
        return True  # the default partition holds values no listing names
    for item in part.item.values:
        values = [None if text is None else _value(text, t) for text, t in zip(item, types, strict=False)]
        if all(_satisfies(values[i], p) for i, preds in by_column.items() if i < len(values) for p in preds):
            return True
    return False


def _range_keeps(part: Partition, by_column: dict[int, list[ColumnPredicate]], types: list[pa.DataType]) -> bool:
    preds = by_column.get(0)
    if not preds:
        return True
    lower_text = part.item.lower[0] if part.item.lower else None
    upper_text = part.item.upper[0] if part.item.upper else None
    t = types[0]
    lo, is_min = _bound(lower_text, t) if lower_text is not None else (None, True)
    holds_min = lower_text is None or is_min
    hi = _value(upper_text, t) if upper_text is not None else None
    # a single-column range is [lo, hi); with more columns the first column may equal hi
    hi_inclusive = part.item.upper is not None and len(part.item.upper) > 1
    return all(_range_may_match(lo, hi, hi_inclusive, holds_min, p) for p in preds)


def _range_may_match(lo: Any, hi: Any, hi_inclusive: bool, holds_min: bool, p: ColumnPredicate) -> bool:
    if p.op is Op.IS_NULL:
        return holds_min
    if p.op in (Op.IS_NOT_NULL, Op.NE, Op.NOT_IN):
        return True

    def inside(v: Any) -> bool:
        above_lo = lo is None or v >= lo
        below_hi = hi is None or (v <= hi if hi_inclusive else v < hi)
        return above_lo and below_hi

    try:
        match p.op:
            case Op.EQ:
                return inside(p.value)
            case Op.IN:
                return any(inside(v) for v in p.values)
            case Op.LT:
                return lo is None or lo < p.value
            case Op.LE:
                return lo is None or lo <= p.value
            case Op.GT:
                return hi is None or (hi > p.value)
            case Op.GE:
                return hi is None or (hi >= p.value if hi_inclusive else hi > p.value)
    except TypeError:
        return True
    return True

"""Bucket pruning: when every hash column of `DISTRIBUTED BY HASH(...)` has an equality or IN
predicate (or IS NULL), only the buckets of those value tuples can hold matching rows. The bucket of a
tuple is the load path's own function (storage.tablet.bucket_hash), computed vectorized over all tuples.
"""

from __future__ import annotations

import itertools
import math

from planner.context import QueryContext
from planner.logical import LogicalScan, evolve
from planner.olap_source import OlapTableSource
from planner.rules.olap_scans import AggregateAbove, OlapScanRule
from storage.predicate import ColumnPredicate, Op
from storage.tablet.bucket_hash import spark_hash_values

MAX_TUPLES = 1024  # like Doris's partition-pruner limit: beyond it, scan every bucket


def _prune_buckets(scan: LogicalScan, source: OlapTableSource, above: AggregateAbove | None,
                   required: frozenset[str], ctx: QueryContext) -> LogicalScan:
    buckets = select_buckets(source, scan.predicates)
    return scan if buckets is None else evolve(scan, source=evolve(source, buckets=buckets))


prune_buckets = OlapScanRule(_prune_buckets)


def _values(column: str, predicates: tuple[ColumnPredicate, ...] | list[ColumnPredicate]) -> set | None:
    """The values `column` may take under the conjunction of predicates, or None if unrestricted."""
    allowed: set | None = None
    for p in predicates:
        if p.column.lower() != column.lower():
            continue
        if p.op is Op.EQ:
            vals = {p.value}
        elif p.op is Op.IN:
            vals = set(p.values)
        elif p.op is Op.IS_NULL:
            vals = {None}
        else:
            continue
        allowed = vals if allowed is None else allowed & vals
    return allowed


def select_buckets(source: OlapTableSource, predicates: tuple[ColumnPredicate, ...] | list[ColumnPredicate]
                   ) -> dict[int, tuple[int, ...]] | None:
    dist = source.table.distribution
    if dist.type.upper() != "HASH" or not dist.columns:
        return None
    per_column = []
    for name in dist.columns:
        vals = _values(name, predicates)
        if vals is None:
            return None
        per_column.append(sorted(vals, key=lambda v: (v is not None, v)))
    n = math.prod(len(v) for v in per_column)
    if n > MAX_TUPLES:
        return None
    out: dict[int, tuple[int, ...]] = {}
    if n == 0:  # contradictory equalities: no bucket can match
        return {pid: () for pid in source.selected_partition_ids}
    tuples = list(itertools.product(*per_column))
    types = [source.schema.field(source.table.column(c).name).type for c in dist.columns]  # type: ignore[union-attr]
    hashes = spark_hash_values(tuples, types)
    by_id = {p.partition_id: p for p in source.table.partitions}
    hashed = hashes.tolist()  # at most MAX_TUPLES: Python's % of a positive divisor is Spark's pmod
    for pid in source.selected_partition_ids:
        out[pid] = tuple(sorted({h % by_id[pid].buckets for h in hashed}))
    return out

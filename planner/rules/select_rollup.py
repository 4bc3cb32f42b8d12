"""Rollup (materialized index) selection, as doris-reference.md §5 describes Doris's Nereids rules.

Candidates: visible indexes holding every column the query really reads from the scan.
- DUPLICATE: every such index.
- AGGREGATE / UNIQUE without an aggregate above the scan: only indexes with all the base's key columns
  (a rollup with fewer keys would show merged-away rows).
- AGGREGATE / UNIQUE with an aggregate: the preaggregation verdict (decided against the base index)
  OFF -> the base index and nothing else; ON -> every such index.
Choice: longest prefix of the index's columns matched by the scan's predicates (equality continues,
range stops), then fewest rows over the selected partitions, then fewest columns, then smallest index id.

The pass also fixes what the choice implies: the tablets to read (selected partitions x pruned buckets
of the chosen index). EXPLAIN's cardinality estimate is the index's rows in the selected partitions, counted
from rowset metadata before merging (IndexStats), so approximate like Doris's tablet-reported counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from sqlglot import exp

from planner.context import QueryContext
from planner.logical import LogicalScan, evolve
from planner.olap_source import OlapTableSource
from planner.rules.olap_scans import AggregateAbove, OlapScanRule, aggregate_text, resolve
from planner.scan_log import ScanShape
from storage.catalog.model import KEYS_DUP, MaterializedIndexMeta, Tablet
from storage.predicate import ColumnPredicate, Op

EQUALITY = (Op.EQ, Op.IN)
RANGE = (Op.LT, Op.LE, Op.GT, Op.GE)


def rollup_selection_enabled(ctx: QueryContext) -> bool:
    """Session variable `enable_rollup_selection` (dorislite's; default true): false reads the base index."""
    try:
        value = ctx.variables("session", "enable_rollup_selection")
    except Exception:  # noqa: BLE001 - a context without the variable keeps the default
        return True
    return value is None or str(value).lower() in ("1", "true", "on")


def _select_rollup(scan: LogicalScan, source: OlapTableSource, above: AggregateAbove | None,
                   required: frozenset[str], ctx: QueryContext) -> LogicalScan:
    # every column the scan produces is needed (a dead Project expression still evaluates it), except
    # the lone placeholder column a scan keeps when nothing is read (count(*), SELECT 1)
    placeholder = not required and len(scan.columns) == 1
    needed = set() if placeholder else {name.lower() for name, _ in scan.columns}
    stats = IndexStats.of(source)
    index = choose_index(source, above is not None, needed, scan.predicates, stats) \
        if rollup_selection_enabled(ctx) else source.table.base_index
    chosen = None if index.index_id == source.table.base_index_id else index.index_id
    tablets = stats.selected_tablets(index.index_id, source.buckets)
    decided = evolve(source, index_id=chosen, tablet_ids=tuple(t.tablet_id for t in tablets),
                     shape=None if above is None else scan_shape(above, scan))
    columns = scan.columns
    if placeholder and scan.columns[0][0].lower() not in {c.name.lower() for c in index.columns}:
        columns = ((_placeholder(source, index, scan.columns[0][0]), scan.columns[0][1]),)
    return evolve(scan, source=decided, columns=columns)


select_rollup = OlapScanRule(_select_rollup)


def scan_shape(above: AggregateAbove, scan: LogicalScan) -> ScanShape:
    """The GROUP BY columns and the aggregate calls of the aggregate above `scan`, by column name (the rollup
    advisor's scan log)."""
    names = {cid: name for name, cid in scan.columns}
    resolved = resolve(above, scan)

    def columns(e: exp.Expression) -> list[str]:
        return sorted({names[c.name] for c in e.find_all(exp.Column) if c.name in names})

    group_by = tuple(dict.fromkeys(n for k in resolved.keys for n in columns(k)))
    aggregates = tuple(dict.fromkeys(aggregate_text(func, distinct, args, names) for func, distinct, args in
                                     resolved.calls))
    return ScanShape(group_by, aggregates)


def _placeholder(source: OlapTableSource, index: MaterializedIndexMeta, name: str) -> str:
    """A column of `index` to stand in for the unread `name`: one of the same type if any."""
    wanted = source.schema.field(name).type
    same = [c.name for c in index.columns if source.schema.field(c.name).type == wanted]
    return same[0] if same else index.columns[0].name


@dataclass(frozen=True)
class IndexStats:
    """Tablets and row counts per index over the scan's selected partitions (catalog metadata only). The row
    counts are summed over every tablet's rowsets when first asked: a table with one index never asks while
    planning (a point lookup's plan template decides its rollup on every run)."""

    tablets: dict[int, list[Tablet]]  # index_id -> tablets of the selected partitions
    source: OlapTableSource

    @staticmethod
    def of(source: OlapTableSource) -> IndexStats:
        selected = set(source.selected_partition_ids)
        order = {pid: i for i, pid in enumerate(sorted(selected))}
        all_tablets = [t for t in source.engine.catalog.tablets(source.table.table_id) if t.partition_id in selected]
        all_tablets.sort(key=lambda t: (order[t.partition_id], t.bucket, t.tablet_id))
        by_index: dict[int, list[Tablet]] = {}
        for t in all_tablets:
            by_index.setdefault(t.index_id, []).append(t)
        return IndexStats(by_index, source)

    @cached_property
    def row_counts(self) -> dict[int, int]:
        """index_id -> rows over the selected partitions."""
        table = self.source.table
        all_tablets = [t for ts in self.tablets.values() for t in ts]
        versions = {p.partition_id: p.visible_version for p in table.partitions}
        if self.source.as_of is not None:  # a time travel counts the rows of the version it reads
            versions.update(self.source.versions or {})
        rowsets = self.source.engine.catalog.rowsets_for_tablets(all_tablets, versions) if all_tablets else {}
        rows = {i.index_id: 0 for i in table.indexes}
        for t in all_tablets:
            rows[t.index_id] = rows.get(t.index_id, 0) + sum(r.num_rows for r in rowsets.get(t.tablet_id, ())
                                                             if r.kind == "DATA")
        return rows

    def rows(self, index_id: int) -> int:
        return self.row_counts.get(index_id, 0)

    def selected_tablets(self, index_id: int, buckets: dict[int, tuple[int, ...]] | None) -> list[Tablet]:
        tablets = self.tablets.get(index_id, [])
        if buckets is None:
            return tablets
        return [t for t in tablets if t.bucket in set(buckets.get(t.partition_id, ()))]


def prefix_match(index: MaterializedIndexMeta, predicates: Sequence[ColumnPredicate]) -> int:
    """Columns of the index, in schema order, matched by predicates: equality continues, range stops."""
    ops: dict[str, set[Op]] = {}
    for p in predicates:
        ops.setdefault(p.column.lower(), set()).add(p.op)
    matched = 0
    for col in index.columns:
        have = ops.get(col.name.lower(), set())
        if have & set(EQUALITY):
            matched += 1
            continue
        if have & set(RANGE):
            matched += 1
        break
    return matched


def candidates(source: OlapTableSource, aggregated: bool, needed: set[str]) -> list[MaterializedIndexMeta]:
    table = source.table
    base = table.base_index
    if table.keys_type != KEYS_DUP:
        if aggregated and not source.preaggregation:
            return [base]  # PREAGGREGATION OFF under an aggregate: Doris returns the base index at once
    base_keys = sum(c.is_key for c in base.columns)
    out = []
    for index in table.visible_indexes():
        if not needed <= {c.name.lower() for c in index.columns}:
            continue
        if source.readable_indexes is not None and index.index_id not in source.readable_indexes:
            continue  # built after the table version a time travel reads
        if table.keys_type != KEYS_DUP and not aggregated and sum(c.is_key for c in index.columns) != base_keys:
            continue
        out.append(index)
    return out or [base]


def choose_index(source: OlapTableSource, aggregated: bool, needed: set[str],
                 predicates: Sequence[ColumnPredicate], stats: IndexStats) -> MaterializedIndexMeta:
    table = source.table
    if len(table.indexes) == 1 or not source.selected_partition_ids or stats.rows(table.base_index_id) == 0:
        return table.base_index  # no rollup, or nothing to read: Doris still names the base index
    found = candidates(source, aggregated, needed)
    scores = {i.index_id: prefix_match(i, predicates) for i in found}
    best = max(scores.values())
    if best > 0:
        found = [i for i in found if scores[i.index_id] == best]
    return min(found, key=lambda i: (stats.rows(i.index_id), len(i.columns), i.index_id))

"""drop_exact_filters: a WHERE an OLAP scan evaluates exactly needs no Filter above it, nor its columns.

Runs after rollup selection (which needs the Filter's columns to pick an index holding them). A conjunct
whose translation into ColumnPredicates is entirely among the scan's pushed predicates is evaluated by the
tablet scan itself (storage.engine evaluates every pushed predicate), so it is removed from the Filter;
the columns only such conjuncts referenced are no longer read. A predicate a bitmap index answers then
decodes no data page at all (`SELECT count(*) ... WHERE lc = 3` reads the index only), and late
materialisation reads predicate columns only where the indexes left rows.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from planner.bind.bind_select import conjoin, split_conjuncts
from planner.context import QueryContext
from planner.logical import (
    LogicalFilter,
    LogicalPlan,
    LogicalProject,
    LogicalScan,
    referenced_ids,
    with_children,
)
from planner.olap_source import OlapTableSource
from planner.rules.olap_scans import required_ids
from planner.rules.scan_predicates import to_column_predicates


def _exact(conjunct: exp.Expression, scan: LogicalScan, ctx: QueryContext, indexed: set[str]) -> bool:
    preds = to_column_predicates([conjunct], scan, ctx)
    return bool(preds) and all(p in scan.predicates and p.column.lower() in indexed for p in preds)


def drop_exact_filters(plan: LogicalPlan, ctx: QueryContext) -> LogicalPlan:
    from planner.rewrite import transform_up  # rewrite imports this module

    changed: set[int] = set()

    def fn(p: LogicalPlan) -> LogicalPlan:
        if not (isinstance(p, LogicalFilter) and isinstance(p.input, LogicalScan)
                and isinstance(p.input.source, OlapTableSource)):
            return p
        scan = p.input
        indexed = {c.name.lower() for c in scan.source.index.columns}
        conjuncts = split_conjuncts(p.condition)
        rest = [c for c in conjuncts if not _exact(c, scan, ctx, indexed)]
        if len(rest) == len(conjuncts):
            return p
        scan = replace(scan, where=p.condition)
        changed.add(id(scan))
        return LogicalFilter(scan, conjoin(rest)) if rest else scan

    plan = transform_up(plan, fn)
    if not changed:
        return plan
    required = required_ids(plan)

    def narrowed(scan: LogicalScan) -> LogicalScan:
        # no column at all is fine for an OLAP scan: it returns the row count (COUNT(*))
        live = required.get(id(scan), set())
        return replace(scan, columns=tuple(c for c in scan.columns if c[1] in live))

    def visit(p: LogicalPlan) -> LogicalPlan:
        if isinstance(p, LogicalScan) and id(p) in changed:
            return narrowed(p)
        if isinstance(p, LogicalProject) and isinstance(p.input, LogicalScan) and id(p.input) in changed:
            scan = narrowed(p.input)
            # expressions over a column no longer read computed outputs nothing consumes
            have = set(scan.output)
            exprs = tuple((i, e) for i, e in p.exprs if referenced_ids(e) <= have)
            return replace(p, input=scan, exprs=exprs) if exprs else scan
        kids = [visit(c) for c in p.children()]
        if kids and any(k is not c for k, c in zip(kids, p.children(), strict=True)):
            if isinstance(p, LogicalProject):
                # a column the narrowed scan no longer reads was dead above it (count(*)'s placeholder
                # column over a Filter that keeps a conjunct): so are the expressions reading it
                have = set(kids[0].output)
                exprs = tuple((i, e) for i, e in p.exprs if referenced_ids(e) <= have)
                return replace(p, input=kids[0], exprs=exprs) if exprs else kids[0]
            return with_children(p, kids)
        return p

    return visit(plan)

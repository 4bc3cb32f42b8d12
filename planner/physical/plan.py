"""Logical -> physical: one choice per logical node."""

from __future__ import annotations

import weakref

import pyarrow as pa

from planner.context import QueryContext
from planner.duck.expressions import Untranslatable
from planner.duck.plan import DuckRegion, RegionBuilder, filter_in_duckdb, has_subquery, needs_duckdb
from planner.logical import (
    LogicalAggregate,
    LogicalFilter,
    LogicalJoin,
    LogicalLimit,
    LogicalPlan,
    LogicalProject,
    LogicalScan,
    LogicalSetOperation,
    LogicalSort,
    LogicalUnion,
    LogicalValues,
    LogicalWindow,
)
from planner.physical.aggregate import AceroHashAggregate
from planner.physical.join import AceroHashJoin
from planner.physical.operators import (
    ArrowFilter,
    ArrowLimit,
    ArrowProject,
    ArrowTableScan,
    ArrowUnionAll,
    ArrowValues,
    PhysicalOperator,
)
from planner.physical.sort import ArrowSort
from sql.errors import analysis_error


def to_physical(plan: LogicalPlan, ctx: QueryContext, probes: dict[int, pa.Schema] | None = None
                ) -> PhysicalOperator:
    """A plan with a join, a window, a set operation, grouping sets or a correlated subquery runs in DuckDB,
    with everything above it (planner/duck/plan.py); a scan's own filter, projection, aggregation and sort,
    and whatever DuckDB cannot run the same way, on the Arrow operators."""
    probes = {} if probes is None else probes

    def physical(p: LogicalPlan) -> PhysicalOperator:
        return to_physical(p, ctx, probes)

    if needs_duckdb(plan):
        reused = _REGIONS.get(plan)
        if reused is not None:  # the same plan again (the plan cache's): its SQL, new inputs
            sql, schema, inputs, value_sets = reused
            return DuckRegion(sql, schema, [(name, _input(p, physical(p), narrow)) for name, p, narrow in inputs],
                              list(value_sets), ctx.guard)
        builder = RegionBuilder(ctx, lambda p, kids: arrow_operator(p, kids, ctx), physical, probes)
        try:
            region = builder.region(plan)
            if region is not None and not region.functions:
                # evaluator functions hold the context of the run that made them: such regions are rebuilt
                _REGIONS[plan] = (region.sql, region.schema, tuple(builder.input_plans), tuple(region.value_sets))
        except Untranslatable as e:
            if isinstance(plan, LogicalWindow):  # DuckDB is the only executor of window functions
                raise analysis_error(f"Unsupported expression in a window function: {e}", 1235, "42000") from e
            if isinstance(plan, LogicalAggregate) and plan.grouping_sets is not None:  # and of grouping sets
                raise analysis_error(f"Unsupported aggregate with ROLLUP / CUBE / GROUPING SETS: {e}", 1235,
                                     "42000") from e
            if isinstance(plan, LogicalSetOperation):  # and of INTERSECT / EXCEPT
                raise analysis_error(f"Unsupported {plan.kind.upper()}: {e}", 1235, "42000") from e
            if has_subquery(plan):  # and of correlated subqueries
                raise analysis_error(f"Unsupported correlated subquery: {e}", 1235, "42000") from e
            region = None
        if region is not None:
            return region
    return arrow_operator(plan, [physical(c) for c in plan.children()], ctx)


def _input(plan: LogicalPlan, op: PhysicalOperator, narrow: bool) -> PhysicalOperator:
    if narrow:  # the region's SQL filters this scan's rows
        filter_in_duckdb(plan, op)
    return op


# a translated region per plan node: a cached plan (planner/plan_cache.py) runs again without translating
_REGIONS: weakref.WeakKeyDictionary[LogicalPlan, tuple] = weakref.WeakKeyDictionary()


def arrow_operator(plan: LogicalPlan, children: list[PhysicalOperator], ctx: QueryContext) -> PhysicalOperator:
    """The Arrow operator of one node over the given child operators."""
    match plan:
        case LogicalScan():
            source = plan.source if ctx.source_override is None else ctx.source_override(plan.source)
            return ArrowTableScan(source, plan.columns, plan.predicates)
        case LogicalValues():
            return ArrowValues(plan.table)
        case LogicalFilter():
            return ArrowFilter(children[0], plan.condition, ctx)
        case LogicalProject():
            return ArrowProject(children[0], plan.exprs, ctx, plan.plain_columns)
        case LogicalAggregate():
            return AceroHashAggregate(children[0], plan.keys, plan.aggregates)
        case LogicalJoin():
            return AceroHashJoin(children[0], children[1], plan.kind, plan.left_keys, plan.right_keys, plan.residual,
                                 ctx)
        case LogicalSort():
            return ArrowSort(children[0], plan.keys)
        case LogicalLimit():
            return ArrowLimit(children[0], plan.limit, plan.offset)
        case LogicalUnion():
            return ArrowUnionAll(tuple(children), plan.output_ids)
    raise TypeError(f"no physical operator for {type(plan).__name__}")

"""Logical -> physical: one choice per logical node."""

from __future__ import annotations

from planner.context import QueryContext
from planner.logical import (
    LogicalAggregate,
    LogicalFilter,
    LogicalJoin,
    LogicalLimit,
    LogicalPlan,
    LogicalProject,
    LogicalScan,
    LogicalSort,
    LogicalUnion,
    LogicalValues,
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


def to_physical(plan: LogicalPlan, ctx: QueryContext) -> PhysicalOperator:
    match plan:
        case LogicalScan():
            source = plan.source if ctx.source_override is None else ctx.source_override(plan.source)
            return ArrowTableScan(source, plan.columns, plan.predicates)
        case LogicalValues():
            return ArrowValues(plan.table)
        case LogicalFilter():
            return ArrowFilter(to_physical(plan.input, ctx), plan.condition, ctx)
        case LogicalProject():
            return ArrowProject(to_physical(plan.input, ctx), plan.exprs, ctx)
        case LogicalAggregate():
            return AceroHashAggregate(to_physical(plan.input, ctx), plan.keys, plan.aggregates)
        case LogicalJoin():
            return AceroHashJoin(to_physical(plan.left, ctx), to_physical(plan.right, ctx), plan.kind,
                                 plan.left_keys, plan.right_keys, plan.residual, ctx)
        case LogicalSort():
            return ArrowSort(to_physical(plan.input, ctx), plan.keys)
        case LogicalLimit():
            return ArrowLimit(to_physical(plan.input, ctx), plan.limit, plan.offset)
        case LogicalUnion():
            return ArrowUnionAll(tuple(to_physical(i, ctx) for i in plan.inputs), plan.output_ids)
    raise TypeError(f"no physical operator for {type(plan).__name__}")

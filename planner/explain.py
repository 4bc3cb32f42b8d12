"""EXPLAIN text in Doris's layout (fragments, operators parent-first, OlapScanNode details)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

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
from planner.olap_source import OlapTableSource
from planner.query import plan_query
from storage.catalog.model import KEYS_DUP


@dataclass
class _Node:
    label: str
    details: list[str]
    children: list[_Node] = field(default_factory=list)
    node_id: int = 0


def _predicate_text(scan: LogicalScan) -> str:
    parts = []
    for p in scan.predicates:
        if p.values:
            values = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in p.values)
            rhs = f"({values})" if p.op.value in ("in", "not in") else values
            parts.append(f"({p.column} {p.op.value.upper()} {rhs})")
        else:
            parts.append(f"({p.column} {p.op.value.upper()})")
    return " AND ".join(parts)


def _scan_node(scan: LogicalScan, aggregated: bool) -> _Node:
    source = scan.source
    if not isinstance(source, OlapTableSource):
        return _Node("VSCAN", [f"TABLE: {source.name}", f"cardinality={source.schema and -1}"])
    table = source.table
    if table.keys_type == KEYS_DUP or aggregated:
        preagg = "PREAGGREGATION: ON"
    else:
        preagg = "PREAGGREGATION: OFF. Reason: No aggregate on scan."
    tablets = source.engine.catalog.tablets(table.table_id, index_id=table.base_index_id)
    ids = [str(t.tablet_id) for t in tablets]
    shown = ",".join(ids[:3]) + (" ..." if len(ids) > 3 else "")
    rows = sum(p.row_count for p in table.partitions)
    details = [f"TABLE: {source.db_name}.{table.name}({table.name}), {preagg}"]
    if scan.predicates:
        details.append(f"PREDICATES: {_predicate_text(scan)}")
    names = ",".join(p.name for p in table.partitions)
    details += [
        f"partitions={len(table.partitions)}/{len(table.partitions)} ({names})",
        f"tablets={len(ids)}/{len(ids)}, tabletList={shown}",
        f"cardinality={rows}, avgRowSize=0.0, numNodes=1",
        "pushAggOp=NONE",
    ]
    return _Node("VOlapScanNode", details)


def _sql(e: exp.Expression) -> str:
    return e.sql(dialect="mysql")


def _build(plan: LogicalPlan, aggregated: bool = False) -> _Node:
    if isinstance(plan, LogicalScan):
        return _scan_node(plan, aggregated)
    if isinstance(plan, LogicalValues):
        return _Node("VUNION", [f"constant exprs: {plan.table.num_rows} rows"])
    if isinstance(plan, LogicalFilter):
        child = _build(plan.input, aggregated)
        if not (isinstance(plan.input, LogicalScan) and plan.input.predicates):  # else PREDICATES shows it
            child.details.insert(1, f"predicates: {_sql(plan.condition)}")
        return child
    if isinstance(plan, LogicalProject):
        return _build(plan.input, aggregated)
    if isinstance(plan, LogicalAggregate):
        calls = ", ".join(f"{a.func}({', '.join(a.args)})" for a in plan.aggregates)
        return _Node("VAGGREGATE (update finalize)",
                     [f"output: {calls}", f"group by: {', '.join(plan.keys)}"],
                     [_build(plan.input, True)])
    if isinstance(plan, LogicalSort):
        keys = ", ".join(f"{k.column} {'ASC' if k.ascending else 'DESC'}" for k in plan.keys)
        return _Node("VSORT", [f"order by: {keys}"], [_build(plan.input, aggregated)])
    if isinstance(plan, LogicalLimit):
        child = _build(plan.input, aggregated)
        if child.label == "VSORT":
            child.label = "VTOP-N"
            child.details += [f"offset: {plan.offset}", f"limit: {plan.limit}"]
            return child
        child.details.append(f"limit: {plan.limit}")
        return child
    if isinstance(plan, LogicalJoin):
        conjuncts = ", ".join(f"({_sql(a)} = {_sql(b)})" for a, b in zip(plan.left_keys, plan.right_keys,
                                                                          strict=True))
        return _Node("VHASH JOIN", [f"join op: {plan.kind.upper()} JOIN(BROADCAST)[]",
                                    f"equal join conjunct: {conjuncts}"],
                     [_build(plan.left, aggregated), _build(plan.right, aggregated)])
    if isinstance(plan, LogicalUnion):
        return _Node("VUNION", [], [_build(p, aggregated) for p in plan.inputs])
    return _Node(type(plan).__name__, [])


def _number(node: _Node, counter: list[int]) -> None:
    for child in node.children:
        _number(child, counter)
    node.node_id = counter[0]
    counter[0] += 1


def _render(node: _Node, lines: list[str], indent: str) -> None:
    suffix = f"({node.node_id})" if node.label == "VOlapScanNode" else ""
    lines.append(f"{indent}{node.node_id}:{node.label}{suffix}")
    for d in node.details:
        lines.append(f"{indent}   {d}")
    for i, child in enumerate(node.children):
        if i > 0:
            lines.append(f"{indent}|")
            _render(child, lines, indent + "|----")
        else:
            lines.append(f"{indent}|")
            _render(child, lines, indent)


def explain_query(query: exp.Expression, ctx: QueryContext, level: str | None = None) -> list[str]:
    bound = plan_query(query, ctx)
    root = _build(bound.plan)
    _number(root, [0])
    lines = ["PLAN FRAGMENT 0", "  OUTPUT EXPRS:"]
    lines += [f"    {name}" for name in bound.names]
    lines += ["  PARTITION: UNPARTITIONED", "", "  HAS_COLO_PLAN_NODE: false", "",
              "  VRESULT SINK", "     MYSQL_PROTOCAL", ""]
    _render(root, lines, "  ")
    return lines

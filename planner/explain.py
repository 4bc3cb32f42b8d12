"""EXPLAIN text in Doris's layout (doris-reference.md §4): one fragment on a single node, operators parent
first (PlanNode.getExplainString: details under `|  ` when a node has children, the right child of a
join under `|----`), slots as `name[#id]`, and OlapScanNode's lines read from the decisions the rewrite
rules recorded on the scan's source (the same object the physical scan reads).

Levels: plain and VERBOSE print the fragment (VERBOSE adds `tuple ids` and the `Tuples:` section); the
`... PLAN` levels print the rewritten logical plan as a tree; GRAPH / MEMO / TREE / DUMP are refused.
"""

from __future__ import annotations

import datetime as dt
from contextvars import ContextVar
from dataclasses import dataclass, field

from sqlglot import exp

from planner.bind.subquery import SubqueryExpr
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
    LogicalWindow,
    explain_tree,
)
from planner.olap_source import OlapTableSource
from planner.query import plan_query
from planner.rules.olap_scans import aggregate_text, doris_sql, slot_text
from planner.rules.select_rollup import IndexStats
from sql.errors import analysis_error
from sql.types import parse_type

PLAN_LEVELS = {"PLAN", "PARSED PLAN", "ANALYZED PLAN", "REWRITTEN PLAN", "LOGICAL PLAN", "OPTIMIZED PLAN",
               "PHYSICAL PLAN", "SHAPE PLAN", "ALL PLAN", "DISTRIBUTED PLAN"}
UNSUPPORTED_LEVELS = {"GRAPH", "MEMO PLAN", "TREE", "DUMP"}
MAX_TABLETS_SHOWN = 3


@dataclass
class _Node:
    label: str
    details: list[str]
    children: list[_Node] = field(default_factory=list)
    node_id: int = 0
    scans: list[LogicalScan] = field(default_factory=list)  # for the VERBOSE Tuples section


# the correlated subqueries met while printing one EXPLAIN (they are printed after the main plan)
_SUBQUERIES: ContextVar[list[SubqueryExpr] | None] = ContextVar("explain_subqueries", default=None)


def _sql(e: exp.Expression) -> str:
    return doris_sql(e, subquery=_subquery_name)


def _subquery_name(node: SubqueryExpr) -> str:
    found = _SUBQUERIES.get()
    if found is None:
        return "(subquery)"
    if not any(s.plan is node.plan for s in found):
        found.append(node)
    number = next(i for i, s in enumerate(found) if s.plan is node.plan) + 1
    return f"(correlated subquery {number})"


def _partition_text(source: OlapTableSource) -> str:
    table = source.table
    selected = sorted(source.selected_partition_ids)
    by_id = {p.partition_id: p.name for p in table.partitions}
    names = ",".join(by_id[pid] for pid in selected if pid in by_id)
    return f"partitions={len(selected)}/{len(table.partitions)} ({names})"


def _tablet_text(source: OlapTableSource, stats: IndexStats) -> str:
    index_id = source.index.index_id
    total = [t.tablet_id for t in stats.tablets.get(index_id, [])]
    chosen = list(source.tablet_ids) if source.tablet_ids is not None else total
    shown = ",".join(str(t) for t in chosen[:MAX_TABLETS_SHOWN])
    more = " ..." if len(chosen) > MAX_TABLETS_SHOWN else ""
    return f"tablets={len(chosen)}/{len(total)}, tabletList={shown}{more}"


def _version_text(source: OlapTableSource) -> str:
    """dorislite: the table version a FOR VERSION / TIME AS OF read reads, and its partitions' versions."""
    version = source.as_of
    assert version is not None
    names = {p.partition_id: p.name for p in source.table.partitions}
    parts = ", ".join(f"{names.get(pid, pid)}={v}" for pid, v in sorted((source.versions or {}).items()))
    when = dt.datetime.fromtimestamp(version.published_at).strftime("%Y-%m-%d %H:%M:%S")
    return f"TABLE VERSION: {version.version} ({version.kind}, {when}), partition versions: {parts}"


def preaggregation_text(source: OlapTableSource) -> str:
    if source.preaggregation_on:
        return "PREAGGREGATION: ON"
    reason = source.preaggregation_reason or "Pre-aggregation was not decided (rule preaggregation disabled)."
    return f"PREAGGREGATION: OFF. Reason: {reason}"


def _olap_scan(scan: LogicalScan, source: OlapTableSource, condition: exp.Expression | None) -> _Node:
    table = source.table
    stats = IndexStats.of(source)
    details = [f"TABLE: {source.db_name}.{table.name}({source.index.name}), {preaggregation_text(source)}"]
    for rewrite in source.rewrites:  # dorislite: exact aggregate rewrites beyond Doris's check
        details.append(f"PREAGGREGATION REWRITE: {rewrite}")
    if condition is not None:
        details.append(f"PREDICATES: {_sql(condition)}")
    if source.as_of is not None:
        details.append(_version_text(source))
    cardinality = stats.rows(source.index.index_id)
    details += [
        _partition_text(source),
        _tablet_text(source, stats),
        f"cardinality={cardinality}, avgRowSize=0.0, numNodes=1",
        "pushAggOp=NONE",
    ]
    return _Node("VOlapScanNode", details, scans=[scan])


def _scan_node(scan: LogicalScan, condition: exp.Expression | None = None) -> _Node:
    source = scan.source
    if isinstance(source, OlapTableSource):
        return _olap_scan(scan, source, condition)
    details = [f"TABLE: {source.name}"]
    if condition is not None:
        details.append(f"PREDICATES: {_sql(condition)}")
    return _Node("VSCAN", details, scans=[scan])


def _build(plan: LogicalPlan) -> _Node:
    if isinstance(plan, LogicalScan):
        return _scan_node(plan, plan.where)
    if isinstance(plan, LogicalValues):
        return _Node("VUNION", [f"constant exprs: {plan.table.num_rows} rows"])
    if isinstance(plan, LogicalFilter):
        if isinstance(plan.input, LogicalScan):  # the scan evaluates the whole WHERE as its conjuncts
            return _scan_node(plan.input, plan.input.where or plan.condition)
        child = _build(plan.input)
        child.details.insert(0, f"predicates: {_sql(plan.condition)}")
        return child
    if isinstance(plan, LogicalProject):
        child = _build(plan.input)
        if any(not isinstance(e, exp.Column) for _, e in plan.exprs):  # not a mere renaming
            projections = ", ".join(_sql(e) for _, e in plan.exprs)
            child.details.append(f"final projections: {projections}")
        return child
    if isinstance(plan, LogicalAggregate):
        calls = ", ".join(f"{aggregate_text(a.func, a.distinct, tuple(exp.column(x) for x in a.args), with_ids=True)}"
                          f"[#{a.out.rsplit('#', 1)[-1]}]" for a in plan.aggregates)
        keys = ", ".join(slot_text(k) for k in plan.keys)
        child = _build(plan.input)
        if plan.grouping_sets is not None:  # Doris repeats each row once per grouping set below the aggregate
            sets = ", ".join("[" + ", ".join(str(plan.keys.index(k)) for k in s) + "]" for s in plan.grouping_sets)
            child = _Node("VREPEAT_NODE", [f"repeat: repeat {len(plan.grouping_sets)} lines [{sets}]"], [child])
        return _Node("VAGGREGATE (update finalize)", [f"output: {calls}", f"group by: {keys}", "sortByGroupKey:false"],
                     [child])
    if isinstance(plan, LogicalWindow):
        child = _build(plan.input)
        for call in plan.calls:
            args = ", ".join(_sql(a) for a in call.args) if call.func != "count_star" else "*"
            name = "count" if call.func == "count_star" else call.func
            details = [f"functions: [{name}({args})]"]
            if call.partition:
                details.append("partition by: " + ", ".join(_sql(e) for e in call.partition))
            if call.order:
                details.append("order by: " + ", ".join(f"{_sql(e)} {'ASC' if asc else 'DESC'}"
                                                        for e, asc, _ in call.order))
            if call.frame:
                details.append(f"window: {call.frame}")
            child = _Node("VANALYTIC EVAL", details, [child])
        return child
    if isinstance(plan, LogicalSort):
        keys = ", ".join(f"{slot_text(k.column)} {'ASC' if k.ascending else 'DESC'}" for k in plan.keys)
        return _Node("VSORT", [f"order by: {keys}", "algorithm: full sort"], [_build(plan.input)])
    if isinstance(plan, LogicalLimit):
        child = _build(plan.input)
        if child.label == "VSORT":
            child.label = "VTOP-N"
            child.details = [child.details[0], f"offset: {plan.offset}", f"limit: {plan.limit}"]
            return child
        if plan.offset:
            child.details.append(f"offset: {plan.offset}")
        if plan.limit is not None:
            child.details.append(f"limit: {plan.limit}")
        return child
    if isinstance(plan, LogicalJoin):
        conjuncts = ", ".join(f"({_sql(a)} = {_sql(b)})" for a, b in zip(plan.left_keys, plan.right_keys,
                                                                          strict=True))
        details = [f"join op: {_JOIN_OP[plan.kind]} JOIN(BROADCAST)[]"]
        if conjuncts:
            details.append(f"equal join conjunct: {conjuncts}")
        if plan.residual is not None:
            details.append(f"other join predicates: {_sql(plan.residual)}")
        return _Node("VHASH JOIN", details, [_build(plan.left), _build(plan.right)])
    if isinstance(plan, LogicalUnion):
        return _Node("VUNION", [], [_build(p) for p in plan.inputs])
    return _Node(type(plan).__name__, [])


_JOIN_OP = {"inner": "INNER", "cross": "CROSS", "left": "LEFT OUTER", "right": "RIGHT OUTER", "full": "FULL OUTER",
            "semi": "LEFT SEMI", "anti": "LEFT ANTI", "right_semi": "RIGHT SEMI", "right_anti": "RIGHT ANTI"}


def _number(node: _Node, counter: list[int]) -> None:
    for child in node.children:
        _number(child, counter)
    node.node_id = counter[0]
    counter[0] += 1


def _render(node: _Node, lines: list[str], root_prefix: str, prefix: str, verbose: bool) -> None:
    """Doris's PlanNode.getExplainString: header at root_prefix, details at prefix + `|  ` (or three
    spaces for a leaf), then children: the later ones under `|----`, the first one last at `prefix`."""
    detail_prefix = prefix + ("|  " if node.children else "   ")
    lines.append(f"{root_prefix}{node.node_id}:{node.label}({node.node_id})")
    lines += [f"{detail_prefix}{d}" for d in node.details]
    if verbose:
        lines.append(f"{detail_prefix}tuple ids: {node.node_id} ")
    if not node.children:
        return
    lines.append(detail_prefix)
    for child in node.children[1:]:
        _render(child, lines, prefix + "|----", prefix + "|    ", verbose)
        lines.append(prefix + "|    ")
    _render(node.children[0], lines, prefix, prefix, verbose)


def _tuples(root: _Node) -> list[str]:
    """VERBOSE's trailing section: one TupleDescriptor per scan with its slots."""
    lines = ["", "Tuples:"]

    def visit(node: _Node) -> None:
        for child in node.children:
            visit(child)
        for scan in node.scans:
            lines.append(f"TupleDescriptor{{id={node.node_id}, tbl={scan.source.name}}}")
            schema = scan.source.schema
            for name, cid in scan.columns:
                f = schema.field(name)
                slot = cid.rsplit("#", 1)[-1]
                lines.append(f"  SlotDescriptor{{id={slot}, col={name}, colUniqueId={schema.get_field_index(name)}, "
                             f"type={_type_text(scan, name)}, nullable={str(f.nullable).lower()}, "
                             "isAutoIncrement=false, subColPath=null}")

    visit(root)
    return lines


def _type_text(scan: LogicalScan, name: str) -> str:
    source = scan.source
    if isinstance(source, OlapTableSource):
        col = source.table.column(name)
        if col is not None:
            return parse_type(col.type).name.lower()
    return str(source.schema.field(name).type)


def explain_query(query: exp.Expression, ctx: QueryContext, level: str | None = None) -> list[str]:
    level = (level or "").upper() or None
    if level in UNSUPPORTED_LEVELS:
        raise analysis_error(f"EXPLAIN {level} is not supported; use EXPLAIN, EXPLAIN VERBOSE or "
                             "EXPLAIN <PARSED|ANALYZED|REWRITTEN|OPTIMIZED|PHYSICAL|SHAPE|ALL> PLAN", 1235, "42000")
    if level is not None and level != "VERBOSE" and level not in PLAN_LEVELS:
        raise analysis_error(f"Unknown EXPLAIN level: {level}", 1235, "42000")
    bound = plan_query(query, ctx)
    if level in PLAN_LEVELS:
        return [f"========== {level} ==========", *explain_tree(bound.plan).splitlines()]
    verbose = level == "VERBOSE"
    subqueries: list[SubqueryExpr] = []
    token = _SUBQUERIES.set(subqueries)
    try:
        root = _build(bound.plan)
        counter = [0]
        _number(root, counter)
        lines = ["PLAN FRAGMENT 0", "  OUTPUT EXPRS:"]
        lines += [f"    {slot_text(i, {i: n})}" for i, n in zip(bound.plan.output, bound.names, strict=True)]
        lines += ["  PARTITION: UNPARTITIONED", "", "  HAS_COLO_PLAN_NODE: false", "",
                  "  VRESULT SINK", "     MYSQL_PROTOCAL", ""]
        _render(root, lines, "  ", "  ", verbose)
        roots = [root]
        done = 0
        while done < len(subqueries):  # a subquery's plan may hold correlated subqueries of its own
            node = subqueries[done]
            done += 1
            sub = _build(node.plan)
            _number(sub, counter)
            kind = {"exists": "EXISTS", "in": "IN"}.get(node.kind, "SCALAR")
            lines += ["", f"CORRELATED SUBQUERY {done} ({kind}, evaluated per row of its enclosing operator):"]
            _render(sub, lines, "  ", "  ", verbose)
            roots.append(sub)
    finally:
        _SUBQUERIES.reset(token)
    if verbose:
        for r in roots:
            lines += _tuples(r)
    return lines

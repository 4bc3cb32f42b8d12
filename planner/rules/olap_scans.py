"""What the OLAP-scan rules share: finding each OLAP scan with the aggregate directly above it (through
Project / Filter only, as Doris's rollup rules match `Aggregate -> [Project] -> [Filter] -> OlapScan`),
resolving expressions above the scan down to the scan's own columns, the columns a scan must really
produce (liveness, so a `count(*)` placeholder column does not count as required), and Doris-style
expression text for reasons and EXPLAIN.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import pyarrow as pa
from sqlglot import exp

from planner.bind.subquery import OuterColumn, SubqueryExpr
from planner.context import QueryContext
from planner.expressions import ArrowConst
from planner.logical import (
    LogicalAggregate,
    LogicalFilter,
    LogicalPlan,
    LogicalProject,
    LogicalScan,
    LogicalSetOperation,
    LogicalSort,
    LogicalUnion,
    referenced_ids,
    with_children,
)
from planner.olap_source import OlapTableSource


@dataclass(frozen=True)
class AggregateAbove:
    """The aggregate over a scan and the nodes between them, top-down (only Project and Filter)."""

    aggregate: LogicalAggregate
    between: tuple[LogicalPlan, ...]


ScanFn = Callable[[LogicalScan, OlapTableSource, "AggregateAbove | None", frozenset[str]], LogicalScan]
# a rule's decision for one scan: (scan, its source, the aggregate above, required ids, the statement's context)
ScanDecision = Callable[[LogicalScan, OlapTableSource, "AggregateAbove | None", frozenset[str], QueryContext],
                        LogicalScan]


@dataclass(frozen=True)
class OlapScanRule:
    """A rewrite rule that decides something for every OLAP scan of a plan; `decide` alone re-decides one
    scan whose surroundings are known (a plan template's, planner/plan_template.py)."""

    decide: ScanDecision

    def __call__(self, plan: LogicalPlan, ctx: QueryContext) -> LogicalPlan:
        return map_olap_scans(plan, lambda scan, source, above, required: self.decide(scan, source, above,
                                                                                       required, ctx))


def map_olap_scans(plan: LogicalPlan, fn: ScanFn) -> LogicalPlan:
    """Rebuild `plan` with every OLAP scan replaced by fn(scan, source, aggregate above, required ids)."""
    required = required_ids(plan)

    def visit(node: LogicalPlan, above: AggregateAbove | None) -> LogicalPlan:
        if isinstance(node, LogicalScan):
            if isinstance(node.source, OlapTableSource):
                return fn(node, node.source, above, frozenset(required.get(id(node), set())))
            return node
        if isinstance(node, LogicalAggregate):
            child_above: AggregateAbove | None = AggregateAbove(node, ())
        elif isinstance(node, LogicalProject | LogicalFilter) and above is not None:
            child_above = replace(above, between=above.between + (node,))
        else:
            child_above = None
        kids = [visit(c, child_above) for c in node.children()]
        if kids and any(k is not c for k, c in zip(kids, node.children(), strict=True)):
            return with_children(node, kids)
        return node

    return visit(plan, None)


def required_ids(plan: LogicalPlan) -> dict[int, set[str]]:
    """id(scan) -> the scan output ids something above really consumes (top-down liveness)."""
    out: dict[int, set[str]] = {}

    def visit(node: LogicalPlan, needed: set[str]) -> None:
        if isinstance(node, LogicalScan):
            out[id(node)] = needed & set(node.output)
            return
        if isinstance(node, LogicalProject):
            child: set[str] = set()
            for i, e in node.exprs:
                if i in needed:
                    child |= referenced_ids(e)
            visit(node.input, child)
        elif isinstance(node, LogicalFilter):
            visit(node.input, needed | referenced_ids(node.condition))
        elif isinstance(node, LogicalAggregate):
            visit(node.input, set(node.keys) | {a for call in node.aggregates for a in call.inputs})
        elif isinstance(node, LogicalSort):
            visit(node.input, needed | {k.column for k in node.keys})
        elif isinstance(node, LogicalUnion | LogicalSetOperation):
            for c in node.children():  # positional: every column of every input
                visit(c, set(c.output))
        else:
            extra: set[str] = set()
            for e in node.expressions():
                extra |= referenced_ids(e)
            for c in node.children():
                visit(c, (needed | extra) & set(c.output))

    visit(plan, set(plan.output))
    return out


def substitute(e: exp.Expression, mapping: Mapping[str, exp.Expression]) -> exp.Expression:
    def fn(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.name in mapping:
            return mapping[node.name].copy()
        return node

    return e.copy().transform(fn, copy=False)


@dataclass(frozen=True)
class ResolvedAggregate:
    """The aggregate above a scan with every id resolved to an expression over the scan's output ids."""

    keys: tuple[exp.Expression, ...]
    calls: tuple[tuple[str, bool, tuple[exp.Expression, ...]], ...]  # (func, distinct, args)
    predicates: tuple[exp.Expression, ...]  # Filter conditions between the aggregate and the scan


def resolve(above: AggregateAbove, scan: LogicalScan) -> ResolvedAggregate:
    mapping: dict[str, exp.Expression] = {i: exp.column(i) for i in scan.output}
    predicates: list[exp.Expression] = []
    for node in reversed(above.between):  # bottom-up: each level is expressed over the scan's ids
        if isinstance(node, LogicalProject):
            mapping = {i: substitute(e, mapping) for i, e in node.exprs}
        elif isinstance(node, LogicalFilter):
            predicates.append(substitute(node.condition, mapping))
    agg = above.aggregate

    def at(i: str) -> exp.Expression:
        return mapping[i].copy() if i in mapping else exp.column(i)

    keys = tuple(at(k) for k in agg.keys)
    calls = tuple((c.func, c.distinct, tuple(at(a) for a in c.args)) for c in agg.aggregates)
    return ResolvedAggregate(keys, calls, tuple(predicates))


# -- Doris-style expression text ------------------------------------------------------------------

_BINARY = {
    exp.EQ: "=", exp.NEQ: "!=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.NullSafeEQ: "<=>",
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.And: "AND", exp.Or: "OR",
    exp.IntDiv: "DIV",
}
_ID = re.compile(r"^(.*)#(\d+)$")


def slot_text(cid: str, names: Mapping[str, str] | None = None, with_ids: bool = True) -> str:
    """`k1#3` -> `k1[#3]` (Nereids prints slots with their expression id), or plain `k1` for reasons."""
    m = _ID.match(cid)
    name = names.get(cid, m.group(1) if m else cid) if names is not None else (m.group(1) if m else cid)
    if not with_ids or m is None:
        return name
    return f"{name}[#{m.group(2)}]"


def doris_sql(e: exp.Expression, names: Mapping[str, str] | None = None, with_ids: bool = True,
              subquery: Callable[[SubqueryExpr], str] | None = None) -> str:
    """Render a bound expression as Doris's Expr.toSql does: comparisons and arithmetic parenthesized,
    functions lower-case, slots named (with `[#id]` in EXPLAIN, without in PREAGGREGATION reasons);
    `subquery` names a correlated subquery's plan (EXPLAIN prints it apart)."""

    def r(x: exp.Expression) -> str:
        if isinstance(x, exp.Column):
            return slot_text(x.name, names, with_ids)
        if isinstance(x, OuterColumn):
            return slot_text(x.id, names, with_ids)
        if isinstance(x, SubqueryExpr):
            text = subquery(x) if subquery is not None else "(subquery)"
            return {"exists": f"EXISTS {text}", "in": f"{r(x.this) if x.this is not None else ''} IN {text}"
                    }.get(x.kind, text)
        if isinstance(x, exp.Paren):
            return r(x.this)
        op = _BINARY.get(type(x))
        if op is not None:
            return f"({r(x.this)} {op} {r(x.expression)})"
        if isinstance(x, exp.Neg):
            return f"(-{r(x.this)})"
        if isinstance(x, exp.Not):
            if isinstance(x.this, exp.In):
                return r(x.this).replace(" IN (", " NOT IN (", 1)
            if isinstance(x.this, exp.Is):
                return r(x.this).replace(" IS NULL", " IS NOT NULL", 1)
            return f"( NOT {r(x.this)})"
        if isinstance(x, exp.In):
            return f"{r(x.this)} IN ({', '.join(r(v) for v in x.expressions)})"
        if isinstance(x, exp.Match):
            return f"({r(x.this)} MATCH_{str(x.args.get('kind') or 'ANY').upper()} {r(x.expression)})"
        if isinstance(x, exp.Is):
            return f"{r(x.this)} IS NULL"
        if isinstance(x, exp.Between):
            return f"({r(x.this)} >= {r(x.args['low'])}) AND ({r(x.this)} <= {r(x.args['high'])})"
        if isinstance(x, exp.Cast):
            return f"CAST({r(x.this)} AS {x.to.sql('mysql').lower()})"
        if isinstance(x, exp.Literal):
            return f"'{x.this}'" if x.is_string else str(x.this)
        if isinstance(x, ArrowConst):  # a value folded while binding: a long IN list, a subquery's result
            values = x.value.to_pylist() if isinstance(x.value, pa.Array) else [x.value.as_py()]
            return ", ".join("NULL" if v is None else f"'{v}'" if isinstance(v, str) else str(v) for v in values)
        if isinstance(x, exp.Func) and not isinstance(x, exp.Anonymous) and not any(
                isinstance(v, exp.Star) for v in x.args.values()):
            args = [r(v) for v in x.args.values() if isinstance(v, exp.Expression)]
            for v in x.args.values():
                if isinstance(v, list):
                    args += [r(i) for i in v if isinstance(i, exp.Expression)]
            return f"{x.sql_name().lower()}({', '.join(args)})"
        # anything else: sqlglot's MySQL text with slot names substituted
        return x.transform(lambda n: exp.to_identifier(slot_text(n.name, names, with_ids))
                           if isinstance(n, exp.Column) else n).sql("mysql")

    return r(e)


def aggregate_text(func: str, distinct: bool, args: tuple[exp.Expression, ...],
                   names: Mapping[str, str] | None = None, with_ids: bool = False) -> str:
    """`count(*)`, `count(DISTINCT k1)`, `sum((v1 + v2))` as Doris prints aggregate calls."""
    if func == "count_star":
        return "count(*)"
    name = {"count_distinct_approx": "approx_count_distinct", "variance_samp": "variance_samp"}.get(func, func)
    inner = ", ".join(doris_sql(a, names, with_ids) for a in args)
    return f"{name}({'DISTINCT ' if distinct else ''}{inner})"

"""Logical rewrites, run in order by `rewrite()`: each rule is plan in, plan out, and can be switched
off by name (EXPLAIN / bench A-B); each run is timed into `RewriteStats`.

Constant folding reuses sqlglot's optimizer pass `simplify` on filter conditions; the rest work on the
logical plan because they need what sqlglot does not know (which scan a column id comes from, the
storage predicate type).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from planner.bind.bind_select import conjoin, split_conjuncts, split_equi_keys
from planner.bind.subquery import SubqueryExpr
from planner.context import QueryContext
from planner.expressions import ArrowConst
from planner.logical import (
    LogicalFilter,
    LogicalJoin,
    LogicalPlan,
    LogicalScan,
    referenced_ids,
    used_ids,
    with_children,
)
from planner.rules.exact_filters import drop_exact_filters
from planner.rules.preaggregation import preaggregation
from planner.rules.prune_buckets import prune_buckets
from planner.rules.prune_partitions import prune_partitions
from planner.rules.scan_predicates import to_column_predicates
from planner.rules.select_rollup import select_rollup

Rule = Callable[[LogicalPlan, QueryContext], LogicalPlan]


@dataclass
class RewriteStats:
    timings_ms: dict[str, float] = field(default_factory=dict)


def transform_up(plan: LogicalPlan, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
    kids = [transform_up(c, fn) for c in plan.children()]
    if kids and any(k is not c for k, c in zip(kids, plan.children(), strict=True)):
        plan = with_children(plan, kids)
    return fn(plan)


# -- rules -------------------------------------------------------------------------------------------


def simplify_filters(plan: LogicalPlan, ctx: QueryContext) -> LogicalPlan:
    """sqlglot's simplify on WHERE / HAVING conditions: `1 = 0` -> FALSE, `NOT NOT x` -> x ..."""

    def fn(p: LogicalPlan) -> LogicalPlan:
        if isinstance(p, LogicalFilter) and _small(p.condition) and not any(p.condition.find_all(ArrowConst)):
            try:
                cond = simplify(p.condition.copy(), dialect="mysql")
            except Exception:  # a pass that cannot handle a node leaves the condition as it was
                return p
            if isinstance(cond, exp.Boolean) and cond.this:
                return p.input
            return replace(p, condition=cond)
        return p

    return transform_up(plan, fn)


SIMPLIFY_MAX_NODES = 500  # sqlglot's simplify is quadratic in a long OR / AND chain: larger conditions skip it


def _small(condition: exp.Expression) -> bool:
    for count, _ in enumerate(condition.walk()):
        if count >= SIMPLIFY_MAX_NODES:
            return False
    return True


def pushdown_filters(plan: LogicalPlan, ctx: QueryContext) -> LogicalPlan:
    """Move WHERE conjuncts into the join sides they reference; cross-side equalities become hash keys
    (turning comma joins into hash joins)."""
    if isinstance(plan, LogicalFilter):
        child = plan.input
        if isinstance(child, LogicalJoin):
            parts = [f for c in split_conjuncts(plan.condition) for f in split_conjuncts(factor_common(c))]
            joined, rest = _push_into_join(child, parts)
            out = pushdown_filters(joined, ctx)
            cond = conjoin(rest)
            return LogicalFilter(out, cond) if cond is not None else out
        if isinstance(child, LogicalFilter):
            merged = LogicalFilter(child.input, exp.And(this=child.condition, expression=plan.condition))
            return pushdown_filters(merged, ctx)
    if isinstance(plan, LogicalJoin) and plan.kind in ("inner", "cross") and plan.residual is not None:
        base = replace(plan, residual=None)
        joined, rest = _push_into_join(base, split_conjuncts(plan.residual))
        # an inner join keeps every conjunct it could not push as its own residual: what is left are
        # correlated subqueries, which stay in the residual too
        if rest:
            residual = conjoin([*split_conjuncts(joined.residual), *rest] if joined.residual is not None else rest)
            joined = replace(joined, residual=residual)
        plan = joined
    kids = [pushdown_filters(c, ctx) for c in plan.children()]
    return with_children(plan, kids) if kids else plan


def _disjuncts(e: exp.Expression) -> list[exp.Expression]:
    out, stack = [], [e]
    while stack:  # iterative: a long OR chain is balanced, but may still be wide
        node = stack.pop()
        if isinstance(node, exp.Or):
            stack += [node.expression, node.this]
        elif isinstance(node, exp.Paren):
            stack.append(node.this)
        else:
            out.append(node)
    return out


def factor_common(condition: exp.Expression) -> exp.Expression:
    """`(a AND b) OR (a AND c)` -> `a AND (b OR c)`: a conjunct every branch of an OR shares (TPC-H Q19's
    join key) becomes a conjunct of its own, so it can be a hash-join key instead of a filter over a cross
    product."""
    if not isinstance(condition, exp.Or | exp.Paren):
        return condition
    branches = [split_conjuncts(b) for b in _disjuncts(condition)]
    if len(branches) < 2:
        return condition
    common = [c for c in branches[0] if all(any(c == d for d in b) for b in branches[1:])]
    if not common:
        return condition
    rests = [[c for c in b if not any(c == x for x in common)] for b in branches]
    if any(not r for r in rests):  # one branch is just the common part: the OR adds nothing
        return conjoin(common)
    alternatives = [conjoin(r) for r in rests]
    ored = alternatives[0]
    for a in alternatives[1:]:
        ored = exp.Or(this=ored, expression=a)
    return conjoin([*common, exp.Paren(this=ored)])


def _correlated(c: exp.Expression) -> bool:
    return any(isinstance(n, SubqueryExpr) for n in c.walk())


def _push_into_join(join: LogicalJoin, parts: list[exp.Expression]) -> tuple[LogicalPlan, list[exp.Expression]]:
    """Conjuncts into the join sides they read. A correlated subquery stays above the join: evaluated after
    the joins have cut the rows down (TPC-H Q21's EXISTS over lineitem would otherwise run for every row of
    one side before the joins with orders and nation select 1 in 50)."""
    correlated = [c for c in parts if _correlated(c)]
    if correlated:
        joined, rest = _push_into_join(join, [c for c in parts if not _correlated(c)])
        return joined, rest + correlated
    left_ids, right_ids = set(join.left.output), set(join.right.output)
    to_left: list[exp.Expression] = []
    to_right: list[exp.Expression] = []
    keep: list[exp.Expression] = []
    inner = join.kind in ("inner", "cross")
    for c in parts:
        ids = referenced_ids(c)
        if ids and ids <= left_ids and join.kind in ("inner", "cross", "left", "semi", "anti"):
            to_left.append(c)
        elif ids and ids <= right_ids and join.kind in ("inner", "cross", "right", "right_semi", "right_anti"):
            to_right.append(c)
        else:
            keep.append(c)
    lk, rk = list(join.left_keys), list(join.right_keys)
    rest = keep
    residual = join.residual
    if inner and keep:
        new_lk, new_rk, rest = split_equi_keys(conjoin(keep), left_ids, right_ids)
        lk += new_lk
        rk += new_rk
    left = LogicalFilter(join.left, conjoin(to_left)) if to_left else join.left
    right = LogicalFilter(join.right, conjoin(to_right)) if to_right else join.right
    kind = "inner" if join.kind == "cross" and lk else join.kind
    if inner and rest:
        # inner join: the remaining cross-side conditions are the join's residual filter
        all_rest = rest + ([residual] if residual is not None else [])
        return LogicalJoin(left, right, kind, tuple(lk), tuple(rk), conjoin(all_rest)), []
    return LogicalJoin(left, right, kind, tuple(lk), tuple(rk), residual), rest


def push_scan_predicates(plan: LogicalPlan, ctx: QueryContext) -> LogicalPlan:
    """`col op literal` conjuncts right above a scan are handed to the scan as ColumnPredicates; the
    Filter stays (a source may return more rows than asked)."""

    def fn(p: LogicalPlan) -> LogicalPlan:
        if isinstance(p, LogicalFilter) and isinstance(p.input, LogicalScan):
            scan = p.input
            preds = to_column_predicates(split_conjuncts(p.condition), scan, ctx)
            if preds:
                return replace(p, input=replace(scan, predicates=scan.predicates + tuple(preds)))
        return p

    return transform_up(plan, fn)


def prune_scan_columns(plan: LogicalPlan, ctx: QueryContext) -> LogicalPlan:
    """Scans read only the columns some expression of the plan references (ids are query-unique)."""
    used = used_ids(plan)

    def fn(p: LogicalPlan) -> LogicalPlan:
        if isinstance(p, LogicalScan):
            cols = tuple(c for c in p.columns if c[1] in used) or p.columns[:1]
            return replace(p, columns=cols)
        return p

    return transform_up(plan, fn)


RULES: tuple[tuple[str, Rule], ...] = (
    ("simplify_filters", simplify_filters),
    ("pushdown_filters", pushdown_filters),
    ("push_scan_predicates", push_scan_predicates),
    ("prune_scan_columns", prune_scan_columns),
    # OLAP scans: partitions, then buckets, then the preaggregation verdict the rollup choice needs
    ("prune_partitions", prune_partitions),
    ("prune_buckets", prune_buckets),
    ("preaggregation", preaggregation),
    ("select_rollup", select_rollup),
    ("drop_exact_filters", drop_exact_filters),
)


def session_disabled_rules(ctx: QueryContext) -> frozenset[str]:
    """Rule names listed in the session variable `disable_nereids_rules` (comma separated, any case)."""
    try:
        value = ctx.variables("session", "disable_nereids_rules")
    except Exception:  # noqa: BLE001 - a context without the variable disables nothing
        return frozenset()
    return frozenset(n.strip().lower() for n in str(value or "").split(",") if n.strip())


def run_rule(name: str, rule: Rule, plan: LogicalPlan, ctx: QueryContext, stats: RewriteStats,
             disabled: frozenset[str] = frozenset()) -> LogicalPlan:
    if name in disabled:
        return plan
    start = time.perf_counter()
    out = rule(plan, ctx)
    stats.timings_ms[name] = (time.perf_counter() - start) * 1000
    return out


def rewrite(plan: LogicalPlan, ctx: QueryContext, disabled: frozenset[str] = frozenset(),
            stats: RewriteStats | None = None) -> LogicalPlan:
    stats = stats or RewriteStats()
    disabled = disabled | session_disabled_rules(ctx)
    for name, rule in RULES:
        plan = run_rule(name, rule, plan, ctx, stats, disabled)
    return plan

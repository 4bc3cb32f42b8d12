"""One plan for the point queries that differ only in their literals (`SELECT cols FROM t WHERE k = 5`,
`... k = 6`): the plan made for one of them, with the values put in place of the other's.

A template is kept only when the rewritten plan is a projection of plain columns over one OLAP scan whose
pushed predicates are `column = literal`, one per literal of the text, with distinct values, each exactly the
literal as written (an integer against an integer column, a string against a VARCHAR / STRING column: no
cast, no folding, nothing else in the plan made from a literal). Then a value's only part in the plan is
that predicate: binding, the other rewrites and the output are the same for any value of the same type
(sql/parameterize.py keys templates by the literals' types), and what depends on the values - the
partitions, the buckets and the rollup they lead to - is decided again by the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_select import BoundQuery
from planner.context import QueryContext
from planner.duck.plan import needs_duckdb_as
from planner.logical import LogicalPlan, LogicalProject, LogicalScan, evolve, with_children
from planner.olap_source import OlapTableSource
from planner.rewrite import RULES, session_disabled_rules
from planner.rules.olap_scans import OlapScanRule
from storage.predicate import ColumnPredicate, Op

# the per-scan decisions (partitions, buckets, preaggregation, rollup: what predicate values may change), in the
# order rewrite() runs them
_VALUE_RULES = tuple((name, rule) for name, rule in RULES if isinstance(rule, OlapScanRule))


@dataclass(frozen=True)
class PlanTemplate:
    bound: BoundQuery  # the plan of the text the template was made from
    values: tuple[int | str, ...]  # that text's literals
    partition_ids: tuple[int, ...] | None  # the scan's partitions before pruning (a PARTITION clause's)

    def instantiate(self, values: tuple[int | str, ...], ctx: QueryContext) -> BoundQuery:
        """The plan for the same text with `values` as its literals."""
        project = self.bound.plan
        assert isinstance(project, LogicalProject) and isinstance(project.input, LogicalScan)
        scan = project.input
        new = dict(zip(self.values, values, strict=True))
        predicates = tuple(evolve(p, values=(new[p.values[0]],)) for p in scan.predicates)
        source = evolve(scan.source, partition_ids=self.partition_ids, buckets=None, index_id=None,
                         tablet_ids=None)
        # the predicates are the whole filter; the text's WHERE is not rebuilt with the new values (a third of
        # an instance's cost): only EXPLAIN and a DuckDB region read it, and an instance is never explained
        # (EXPLAIN plans afresh) and runs on the Arrow operators (a projection of plain columns over one scan)
        scan = evolve(scan, source=source, predicates=predicates, where=None)
        disabled = session_disabled_rules(ctx)
        required = frozenset(scan.output)  # the projection reads every column (plain columns only)
        for name, rule in _VALUE_RULES:
            if name not in disabled:
                assert isinstance(scan.source, OlapTableSource)
                scan = rule.decide(scan, scan.source, None, required, ctx)  # no aggregate above: a projection
        plan = with_children(project, [scan])
        needs_duckdb_as(plan, self.bound.plan)
        return BoundQuery(plan, self.bound.names)


def make_template(bound: BoundQuery, unpruned: LogicalPlan, values: tuple[int | str, ...]) -> PlanTemplate | None:
    """A template from the rewritten plan `bound` of a text whose literals are `values` (`unpruned`: its plan
    before the rewrites), or None when a value may have any other part in the plan."""
    plan = bound.plan
    if not (isinstance(plan, LogicalProject) and isinstance(plan.input, LogicalScan)
            and isinstance(plan.input.source, OlapTableSource)
            and all(type(e) is exp.Column for _, e in plan.exprs)):
        return None
    scan, source = plan.input, plan.input.source
    wanted = sorted(map(_literal_key, values))
    if len(set(values)) != len(values) or len(scan.predicates) != len(values):
        return None
    pushed = [_predicate_key(p, source) for p in scan.predicates]
    if None in pushed or sorted(pushed) != wanted:  # type: ignore[type-var]
        return None
    if scan.where is not None:
        written = [_literal_key(_node_value(n)) for n in scan.where.find_all(exp.Literal)]
        if sorted(written) != wanted:
            return None
    scans = [n for n in unpruned.walk() if isinstance(n, LogicalScan)]
    if len(scans) != 1 or not isinstance(scans[0].source, OlapTableSource):
        return None
    return PlanTemplate(bound, values, scans[0].source.partition_ids)


def _literal_key(value: object) -> tuple[str, object]:
    return (type(value).__name__, value)


def _node_value(n: exp.Literal) -> object:
    """A WHERE literal's value as the text's literal would be: an int or a str (anything else: itself)."""
    if n.is_string:
        return str(n.this)
    if type(n.this) is int:
        return n.this
    text = str(n.this)
    return int(text) if text.isdigit() else n.this


def _predicate_key(p: ColumnPredicate, source: OlapTableSource) -> tuple[str, object] | None:
    """The predicate's value when it is `column = value` as written: an int against an integer column, a
    str against a VARCHAR / STRING one (CHAR compares padded)."""
    if p.op is not Op.EQ or len(p.values) != 1:
        return None
    value = p.values[0]
    column = source.table.column(p.column)
    if column is None:
        return None
    t = source.schema.field(column.name).type
    if type(value) is int and pa.types.is_integer(t):
        return _literal_key(value)
    if type(value) is str and (pa.types.is_string(t) or pa.types.is_large_string(t)) \
            and not column.type.upper().startswith("CHAR"):
        return _literal_key(value)
    return None
